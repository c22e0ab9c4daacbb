#!/usr/bin/env bash
# Random probes per second through Source (rank + value; src/probe.rs), one
# thread and all threads, at LEVELS (default 12,20,24) of DIR (default
# /root/mancaladb-runs/bench24, built by
# `nice -n 19 mancaladb build --max-seeds 24 --db DIR`):
#   mutex       the old Table::get (one block behind one mutex), side by side;
#   compressed  the block cache (a directory of links to the tables only, so
#               no raw copy is used); `compressed-cold` is the first pass;
#   raw         the raw copies DIR/raw/awari/scores.N, checked first.
# Targets (issue 13): >= 1 M/s per thread compressed, >= 20 M/s raw.
# A relative DIR is taken from the directory the script is run from. Bad
# settings (a level without its table or raw copy in DIR, a count that is
# not a number) stop it with one line and exit status 2, before anything
# is built.
set -euo pipefail
# Before the cd below: DIR=../x names the caller's directory.
[[ -z ${DIR:-} || $DIR == /* ]] || DIR=$PWD/${DIR#./}
cd "$(dirname "$0")/.."
DIR=${DIR:-/root/mancaladb-runs/bench24}
LEVELS=${LEVELS:-12,20,24}
PROBES=${PROBES:-4000000}
die() { echo "bench-probe.sh: $*" >&2; exit 2; }
[[ $PROBES =~ ^[1-9][0-9]*$ ]] || die "PROBES must be a number of probes, not '$PROBES'"
[[ $LEVELS =~ ^[0-9]+(,[0-9]+)*$ ]] || die "LEVELS must be levels such as 12,20, not '$LEVELS'"
for n in ${LEVELS//,/ }; do
  [[ -e $DIR/awari-$(printf %02d "$n").mdb ]] ||
    die "no level $n in $DIR (mancaladb build --max-seeds 24 --db $DIR)"
  [[ -e $DIR/raw/awari/scores.$n ]] ||
    die "no raw copy of level $n in $DIR (raw/awari/scores.$n, which the raw probes read)"
done
cargo build --release --quiet --example probe_bench
TABLES_ONLY=$(mktemp -d)
trap 'rm -rf "$TABLES_ONLY"' EXIT
ln -s "$(realpath "$DIR")"/*.mdb "$TABLES_ONLY"/
echo "# $DIR levels $LEVELS; $(nproc) cores; $(date -u +%F); $(git rev-parse --short HEAD)"
# Where cargo put it: under CARGO_TARGET_DIR when that is set.
bench=${CARGO_TARGET_DIR:-target}/release/examples/probe_bench
"$bench" "$DIR" mutex "$LEVELS" "$PROBES"
"$bench" "$TABLES_ONLY" compressed "$LEVELS" "$PROBES" | tail -n +2
"$bench" "$DIR" raw "$LEVELS" "$PROBES" | tail -n +2
