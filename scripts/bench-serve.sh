#!/usr/bin/env bash
# Bounded load test of `mancaladb serve` on localhost (issue 13): starts the
# server on DB (default db, levels 0..16 as the README's first command
# builds them), sends REQUESTS requests (default 100000) of
# GET /api/awari?board=... for random positions of LEVELS (default 12..16)
# from each CLIENTS count in turn (default "1 2 8 32"), prints throughput
# and p50/p99 latency, and stops the server. BIN=... serves with another
# binary (an older revision, side by side: run the script for each in turn).
# A relative DB or BIN is taken from the directory the script is run from;
# the default DB is the repository's db/. Bad settings (a level not in DB,
# a count that is not a number) stop it with one line and exit status 2,
# before anything is built.
set -euo pipefail
# Before the cd below: DB=../x or BIN=./mancaladb-old name the caller's
# files (a bare BIN, with no slash, is looked up in PATH).
[[ -z ${DB:-} || $DB == /* ]] || DB=$PWD/${DB#./}
[[ ${BIN:-} != */* || $BIN == /* ]] || BIN=$PWD/${BIN#./}
cd "$(dirname "$0")/.."
DB=${DB:-db}
REQUESTS=${REQUESTS:-100000}
LEVELS=${LEVELS:-12,13,14,15,16}
CLIENTS=${CLIENTS:-1 2 8 32}
die() { echo "bench-serve.sh: $*" >&2; exit 2; }
[[ $REQUESTS =~ ^[1-9][0-9]*$ ]] || die "REQUESTS must be a number of requests, not '$REQUESTS'"
[[ $LEVELS =~ ^[0-9]+(,[0-9]+)*$ ]] || die "LEVELS must be levels such as 12,16, not '$LEVELS'"
[[ $CLIENTS =~ ^\ *[1-9][0-9]*(\ +[1-9][0-9]*)*\ *$ ]] || die "CLIENTS must be client counts such as \"1 8\", not '$CLIENTS'"
for n in ${LEVELS//,/ }; do
  [[ -e $DB/awari-$(printf %02d "$n").mdb ]] ||
    die "no level $n in $DB (mancaladb build --max-seeds 16 --db $DB)"
done
# The binary too: cargo builds an example without it.
cargo build --release --quiet --bin mancaladb --example load_test
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Where cargo put them: under CARGO_TARGET_DIR when that is set.
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${BIN:-$TARGET/release/mancaladb}
source scripts/start-server.sh
start_server bench-serve.sh "$BIN" "$DB" "$OUT"
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$OUT"' EXIT
ADDR=${URL#http://}
ADDR=${ADDR%/}
echo "# $BIN serve --db $DB; $REQUESTS requests, levels $LEVELS; $(nproc) cores; $(date -u +%F)"
header=cat
for c in $CLIENTS; do
  "$TARGET/release/examples/load_test" "$ADDR" "$REQUESTS" "$c" "$LEVELS" | $header
  header="tail -1"
done
