#!/usr/bin/env bash
# Real-browser test of `mancaladb serve`'s web board (issue 13).
#
# Needs Debian's chromium and chromium-driver (apt-get install -y chromium
# chromium-driver; no browser is downloaded at run time) and python3-venv.
# Builds levels 0..16 into target/browser-db, makes a venv with Selenium in
# target/browser-venv (VENV=... to reuse another), starts the server on a
# free port, runs tests/browser/test_board.py and stops the server.
# Screenshots: target/browser/{board,levels,omweso}.png.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-target/browser-venv}
cargo build --release --quiet
BIN=target/release/mancaladb
mkdir -p target/browser
$BIN build --max-seeds 16 --db target/browser-db > target/browser/build.log 2>&1
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'selenium>=4.20,<5'
fi
OUT=target/browser
mkdir -p "$OUT"
$BIN serve --db target/browser-db --addr 127.0.0.1:0 > "$OUT/server.out" 2> "$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q 'http://' "$OUT/server.out" && break
  sleep 0.1
done
URL=$(grep -o 'http://[0-9.:]*/' "$OUT/server.out") ||
  { echo "browser-test.sh: the server did not start within 10 s" >&2; exit 2; }
"$VENV/bin/python" tests/browser/test_board.py "$URL" "$OUT"
