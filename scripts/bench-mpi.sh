#!/usr/bin/env bash
# Measures the distributed build for BENCHMARKS.md: levels 0..MAX (default
# 22) from scratch with P = 1, 2 and 4 ranks under mpirun on this machine,
# one line per level (time, peak RSS of the largest rank, bytes the ranks
# exchanged), and checks every table against db/CHECKSUMS.
#   scripts/bench-mpi.sh [MAX]
# Beyond 2 ranks on 2 cores the ranks are oversubscribed; each rank gets
# max(1, cores / P) worker threads. Needs scripts/install-mpi.sh first.
# WORK=DIR: where the scratch directory (a new one inside, removed on exit)
# is made; default TMPDIR. The binary is built in the mpi/ directory of
# cargo's target dir (CARGO_TARGET_DIR when that is set). A MAX that is not
# a level stops the script with one line and exit status 2, before anything
# is built.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=${1:-22}
if (($# > 1)) || ! [[ $MAX =~ ^[0-9]+$ ]] || ((MAX > 48)); then
  echo "bench-mpi.sh: usage: scripts/bench-mpi.sh [MAX] (the top level, 0..48, default 22)" >&2
  exit 2
fi
mkdir -p "${WORK:-${TMPDIR:-/tmp}}"
WORK=$(mktemp -d "${WORK:-${TMPDIR:-/tmp}}/mancaladb-bench-mpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# Its own target dir, so that other builds do not swap the binary mid-run:
# inside the one cargo uses, which CARGO_TARGET_DIR may put elsewhere.
mpi_target=${CARGO_TARGET_DIR:-target}/mpi
CARGO_TARGET_DIR=$mpi_target cargo build --release --quiet --features mpi
bin=$mpi_target/release/mancaladb
cores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
for ranks in 1 2 4; do
  threads=$((cores / ranks)); ((threads >= 1)) || threads=1
  db="$WORK/p$ranks"
  echo "== P=$ranks ranks x $threads threads, levels 0..$MAX"
  start=$(date +%s%N)
  # The reports of levels 16 and up; a failed job stops the script with the
  # end of its error output.
  if ! mpirun --oversubscribe --bind-to none -np "$ranks" \
    "$bin" build --distributed --threads "$threads" --max-seeds "$MAX" --db "$db" \
    >"$WORK/out" 2>"$WORK/err"; then
    echo "bench-mpi.sh: the P=$ranks build failed:" >&2
    tail -n 5 "$WORK/err" >&2
    exit 2
  fi
  grep -E "^level (1[6-9]|[2-4][0-9])" "$WORK/out" || true
  ms=$((($(date +%s%N) - start) / 1000000))
  echo "   total $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"
  for n in $(seq 0 "$MAX"); do
    f=$(printf '%s/awari-%02d.mdb' "$db" "$n")
    want=$(awk -v n="$n" '$1 == "awari" && $2 == n { print $5 }' db/CHECKSUMS)
    if [[ ! -f "$f" ]]; then
      echo "FAIL P=$ranks level $n: no table $f"
      status=1
      continue
    fi
    got=$(sha256sum "$f" | cut -d' ' -f1)
    if [[ "$got" != "$want" ]]; then
      echo "FAIL P=$ranks level $n: $got, db/CHECKSUMS has $want"
      status=1
    fi
  done
  rm -rf "$db"
done
[[ $status == 0 ]] && echo "PASS every table matches db/CHECKSUMS"
exit $status
