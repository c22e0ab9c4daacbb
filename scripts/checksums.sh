#!/usr/bin/env bash
# Prints db/CHECKSUMS with the lines of the tables built in a directory
# (default db/) put in:
#   rules level positions content-sha256 file-sha256
# content-sha256 is the sha256 of the level's values in the VU layout
# (scores.N), as `stats --json` computes it while it reads every block of
# the table (and checks it against the table's header); the file sha256 is
# that of the .mdb table. Both rule sets are covered (abapa tables cannot be
# exported as VU files, which hold awari values). The lines of levels not in
# the directory, and the comments, are kept as they are in the current file
# (CHECKSUMS=FILE to read another; none there: only the directory's lines).
# Every table passes check 1 of `verify` first (else exit 2, nothing
# printed), and a level whose values differ from the current file's line is
# named in a warning on standard error.
# Write to another file first, so that a failed run leaves db/CHECKSUMS as
# it was:
#   scripts/checksums.sh [DIR] > CHECKSUMS.new && mv CHECKSUMS.new db/CHECKSUMS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-db}
# Where cargo puts it: under CARGO_TARGET_DIR (from the root when relative)
# when that is set.
target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$root/$target
bin=${BIN:-$target/release/mancaladb}
command -v "$bin" >/dev/null || { echo "checksums.sh: no binary $bin (cargo build --release, or BIN=...)" >&2; exit 2; }
old=${CHECKSUMS:-$root/db/CHECKSUMS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/new"
for rules in awari abapa; do
  compgen -G "$dir/$rules-*.mdb" >/dev/null || continue
  # One object per level; each key once in it, in this order.
  # Check 1 of every table first (its whole-file sha256 among them): the
  # file sha256 put in below must be that of a sound table, and `stats`
  # reads the blocks only, not the trailer.
  "$bin" verify --quick --rules "$rules" --db "$dir" > /dev/null ||
    { echo "checksums.sh: $dir: a table of $rules fails check 1 (mancaladb verify --quick --rules $rules --db $dir says which)" >&2; exit 2; }
  json=$("$bin" stats --json --rules "$rules" --db "$dir")
  field() { grep -o "\"$1\":\"\{0,1\}[0-9a-f]*" <<<"$json" | sed 's/.*[:"]//'; }
  paste -d' ' <(field seeds) <(field positions) <(field content_sha256) > "$tmp/levels"
  while read -r n positions content; do
    f=$(printf '%s/%s-%02d.mdb' "$dir" "$rules" "$n")
    was=
    [[ -e $old ]] && was=$(awk -v r="$rules" -v n="$n" '$1 == r && $2 == n { print $4; exit }' "$old")
    if [[ -n $was && $was != "$content" ]]; then
      echo "checksums.sh: warning: $rules level $n holds other values than $old records ($content against $was)" >&2
    fi
    echo "$rules $n $positions $content $(sha256sum <"$f" | cut -d' ' -f1)" >> "$tmp/new"
  done < "$tmp/levels"
done
# Nothing found is an error (a typo, or the default db/ of another working
# directory), never a file of comments only.
if [[ ! -s $tmp/new ]]; then
  echo "checksums.sh: no tables (awari-NN.mdb, abapa-NN.mdb) in $dir" >&2
  exit 2
fi
if [[ -e $old ]]; then
  grep '^#' "$old" || true
else
  echo "# rules level positions content-sha256 file-sha256 (scripts/checksums.sh)"
fi
# The directory's lines, and the current file's for every other level;
# awari before abapa, each by level.
{
  cat "$tmp/new"
  if [[ -e $old ]]; then
    awk 'FNR == NR { built[$1 " " $2] = 1; next }
      !/^#/ && !(($1 " " $2) in built)' "$tmp/new" "$old"
  fi
} | sort -s -k1,1r -k2,2n
