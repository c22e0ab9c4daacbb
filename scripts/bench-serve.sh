#!/usr/bin/env bash
# Bounded load test of `mancaladb serve` on localhost (issue 13): starts the
# server on DB (default db, levels 0..16 as the README's first command
# builds them), sends REQUESTS requests (default 100000) of
# GET /api/awari?board=... for random positions of LEVELS (default 12..16)
# from each CLIENTS count in turn (default "1 2 8 32"), prints throughput
# and p50/p99 latency, and stops the server. BIN=... serves with another
# binary (an older revision, side by side: run the script for each in turn).
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-db}
REQUESTS=${REQUESTS:-100000}
LEVELS=${LEVELS:-12,13,14,15,16}
# The binary too: cargo builds an example without it.
cargo build --release --quiet --bin mancaladb --example load_test
OUT=$(mktemp -d)
BIN=${BIN:-target/release/mancaladb}
"$BIN" serve --db "$DB" --addr 127.0.0.1:0 > "$OUT/out" 2> /dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$OUT"' EXIT
for _ in $(seq 100); do grep -q 'http://' "$OUT/out" && break; sleep 0.1; done
ADDR=$(grep -o 'http://[0-9.:]*' "$OUT/out" | sed 's|http://||') ||
  { echo "bench-serve.sh: the server did not start within 10 s" >&2; exit 2; }
echo "# $BIN serve --db $DB; $REQUESTS requests, levels $LEVELS; $(nproc) cores; $(date -u +%F)"
header=cat
for c in ${CLIENTS:-1 2 8 32}; do
  target/release/examples/load_test "$ADDR" "$REQUESTS" "$c" "$LEVELS" | $header
  header="tail -1"
done
