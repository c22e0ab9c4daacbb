#!/usr/bin/env bash
# Prints db/CHECKSUMS with the lines of the tables built in a directory
# (default db/) put in:
#   rules level positions content-sha256 file-sha256
# content-sha256 is the sha256 of the level's VU export (scores.N); the file
# sha256 is that of the .mdb table. Each level is exported alone, hashed and
# removed, so the temporary directory (TMPDIR) needs room for the largest
# level only (14.3 GB for level 36). The lines of levels not in the
# directory, and the comments, are kept as they are in the current file
# (CHECKSUMS=FILE to read another; none there: only the directory's lines).
# Write to another file first, so that a failed run leaves db/CHECKSUMS as
# it was:
#   scripts/checksums.sh [DIR] > CHECKSUMS.new && mv CHECKSUMS.new db/CHECKSUMS
set -euo pipefail
dir=${1:-db}
bin=${BIN:-target/release/mancaladb}
old=${CHECKSUMS:-$(cd "$(dirname "$0")/.." && pwd)/db/CHECKSUMS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/new"
for rules in awari abapa; do
  compgen -G "$dir/$rules-*.mdb" >/dev/null || continue
  for f in "$dir/$rules"-*.mdb; do
    name=$(basename "$f" .mdb)
    n=$((10#${name#*-}))
    "$bin" export --format vu --rules "$rules" --db "$dir" --seeds "$n" --out "$tmp/$rules" >/dev/null
    raw="$tmp/$rules/scores.$n"
    echo "$rules $n $(stat -c %s "$raw") $(sha256sum <"$raw" | cut -d' ' -f1) $(sha256sum <"$f" | cut -d' ' -f1)" >> "$tmp/new"
    rm -f "$raw"
  done
done
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
