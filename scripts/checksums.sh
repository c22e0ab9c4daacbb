#!/usr/bin/env bash
# Prints db/CHECKSUMS for the tables built in a directory (default db/):
#   rules level positions content-sha256 file-sha256
# content-sha256 is the sha256 of the level's VU export (scores.N); the file
# sha256 is that of the .mdb table. Usage: scripts/checksums.sh [DIR] > db/CHECKSUMS
set -euo pipefail
dir=${1:-db}
bin=${BIN:-target/release/mancaladb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# rules level positions content-sha256 file-sha256 (scripts/checksums.sh)"
for rules in awari abapa; do
  compgen -G "$dir/$rules-*.mdb" >/dev/null || continue
  "$bin" export --format vu --rules "$rules" --db "$dir" --out "$tmp/$rules" >/dev/null
  for f in "$dir/$rules"-*.mdb; do
    name=$(basename "$f" .mdb)
    n=$((10#${name#*-}))
    raw="$tmp/$rules/scores.$n"
    echo "$rules $n $(stat -c %s "$raw") $(sha256sum <"$raw" | cut -d' ' -f1) $(sha256sum <"$f" | cut -d' ' -f1)"
  done
done
