#!/usr/bin/env bash
# Prints db/CHECKSUMS for the tables built in a directory (default db/):
#   rules level positions content-sha256 file-sha256
# content-sha256 is the sha256 of the level's VU export (scores.N); the file
# sha256 is that of the .mdb table. Each level is exported alone, hashed and
# removed, so the temporary directory (TMPDIR) needs room for the largest
# level only (14.3 GB for level 36). Write to another file first, so that a
# failed run leaves db/CHECKSUMS as it was:
#   scripts/checksums.sh [DIR] > CHECKSUMS.new && mv CHECKSUMS.new db/CHECKSUMS
set -euo pipefail
dir=${1:-db}
bin=${BIN:-target/release/mancaladb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# rules level positions content-sha256 file-sha256 (scripts/checksums.sh)"
for rules in awari abapa; do
  compgen -G "$dir/$rules-*.mdb" >/dev/null || continue
  for f in "$dir/$rules"-*.mdb; do
    name=$(basename "$f" .mdb)
    n=$((10#${name#*-}))
    "$bin" export --format vu --rules "$rules" --db "$dir" --seeds "$n" --out "$tmp/$rules" >/dev/null
    raw="$tmp/$rules/scores.$n"
    echo "$rules $n $(stat -c %s "$raw") $(sha256sum <"$raw" | cut -d' ' -f1) $(sha256sum <"$f" | cut -d' ' -f1)"
    rm -f "$raw"
  done
done
