#!/usr/bin/env bash
# Re-measures the headline figures of BENCHMARKS.md and checks the speed
# targets (they live here, not in unit tests). Takes about 4 minutes on the
# 2-core machine; needs about 2.5 GB of disk under $WORK.
#   scripts/bench.sh            # levels 0..20 and 0..24, census 2..20
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-$(mktemp -d)}
cargo build --release --quiet
bin=target/release/mancaladb
status=0

# run LABEL LIMIT_SECONDS COMMAND...: times a command, checks the limit.
run() {
  local label=$1 limit=$2
  shift 2
  local start ms
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1
  ms=$((($(date +%s%N) - start) / 1000000))
  local shown="$((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"
  if ((ms < limit * 1000)); then
    echo "PASS $label: $shown (target < $limit s)"
  else
    echo "FAIL $label: $shown (target < $limit s)"
    status=1
  fi
}

run "awari levels 0..20" 30 "$bin" build --max-seeds 20 --db "$WORK/t20"
run "awari levels 0..24" 300 "$bin" build --max-seeds 24 --db "$WORK/t24"
run "omweso census 2..20" 60 "$bin" census --seeds 2..20 --db "$WORK/census"
rm -rf "$WORK"
exit $status
