#!/usr/bin/env bash
# Real-browser test of `mancaladb serve`'s web board (issue 13).
#
# Needs Debian's chromium and chromium-driver (apt-get install -y chromium
# chromium-driver; no browser is downloaded at run time) and python3-venv.
# Builds levels 0..16 into target/browser-db, makes a venv with Selenium in
# target/browser-venv (VENV=... to reuse another), starts the server on a
# free port, runs tests/browser/test_board.py and stops the server.
# Screenshots: target/browser/{board,levels,omweso}.png. The binary is
# looked for where cargo puts it: under $CARGO_TARGET_DIR when that is set.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-target/browser-venv}
cargo build --release --quiet
BIN=${CARGO_TARGET_DIR:-target}/release/mancaladb
OUT=target/browser
mkdir -p "$OUT"
$BIN build --max-seeds 16 --db target/browser-db > "$OUT/build.log" 2>&1 || {
  echo "browser-test.sh: building the tables failed ($OUT/build.log ends:)" >&2
  tail -n 3 "$OUT/build.log" >&2
  exit 2
}
# Also a venv left without Selenium by an install that failed.
if ! "$VENV/bin/python" -c 'import selenium' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'selenium>=4.20,<5'
fi
source scripts/start-server.sh
start_server browser-test.sh "$BIN" target/browser-db "$OUT"
trap 'kill $SERVER 2>/dev/null || true' EXIT
"$VENV/bin/python" tests/browser/test_board.py "$URL" "$OUT" || {
  status=$?
  # What the server was doing, for a failure that is the server's.
  kill -0 "$SERVER" 2>/dev/null && state="still running" || state="not running"
  echo "browser-test.sh: the test failed; the server at $URL is $state; its log ends:" >&2
  tail -n 5 "$OUT/server.log" >&2
  exit $status
}
