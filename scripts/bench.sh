#!/usr/bin/env bash
# Re-measures the headline figures of BENCHMARKS.md and checks the speed
# targets (they live here, not in unit tests).
#
#   scripts/bench.sh
#       levels 0..20 and 0..24, census 2..20, each against its time limit.
#       About 4 minutes on the 2-core machine; about 2.5 GB of disk under $WORK.
#
#   scripts/bench.sh --compare REV [--max-seeds N] [--runs R] [--from L]
#       builds revision REV (from `git archive`, its own target dir, cached in
#       $BENCH_CACHE) and the working tree, then builds awari levels 0..N
#       (default 20) R times (default 3) with each binary, alternating old and
#       new so that the noise of a shared machine falls on both. Prints, for
#       levels L..N (default 12), the median per-core rate of each (positions
#       per second per worker thread, from each run's build-log.tsv), their
#       ratio, and the new build's median peak RssAnon per position when its
#       build log records one. PASS if the ratio is at least $TARGET (default
#       2.0) at levels 20 and 24 when they are in range. Levels L..N are built
#       one process per level (old level L, new level L, old level L+1, ...),
#       each timed on the CPU (user + system seconds, bash's `time`), so the
#       table also gives positions per CPU second: the figure that other work
#       on a shared machine disturbs least (each process also checks the
#       lower levels' tables and raw copies as it starts: both binaries pay
#       that, a few percent at level 20). With BENCH_LOGS=DIR, each run's
#       build report (peak RSS per level) and log are kept there.
#
# WORK=DIR: where the scratch directory (a new mancaladb-bench.* inside it,
# removed at the end) is made; default TMPDIR. A command that fails stops
# the script with its last lines of output and exit status 2.
set -euo pipefail
cd "$(dirname "$0")/.."
# Where cargo puts the binary: under CARGO_TARGET_DIR when that is set.
cargo_out=${CARGO_TARGET_DIR:-target}
mkdir -p "${WORK:-${TMPDIR:-/tmp}}"
WORK=$(mktemp -d "${WORK:-${TMPDIR:-/tmp}}/mancaladb-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
exec 3>&2 # the script's own standard error, also where a command's is sent elsewhere

# fails LOG COMMAND...: runs COMMAND, its output appended to LOG; if it
# fails, says so with the end of LOG and stops the script.
fails() {
  local log=$1
  shift
  "$@" >>"$log" 2>&1 && return
  local s=$?
  echo "bench.sh: exit $s from: $*" >&3
  tail -n 5 "$log" >&3
  exit 2
}

usage() {
  echo "bench.sh: $1; usage: scripts/bench.sh [--compare REV [--max-seeds N] [--runs R] [--from L]]" >&2
  exit 2
}

if (($#)) && [[ $1 != --compare ]]; then
  usage "unknown option $1"
fi
if [[ ${1:-} == --compare ]]; then
  (($# >= 2)) || usage "--compare needs a revision"
  rev=$2
  shift 2
  max=20 runs=3 from=12
  while (($#)); do
    case $1 in
      --max-seeds | --runs | --from)
        [[ ${2:-} =~ ^[0-9]+$ ]] || usage "$1 needs a number, not '${2:-}'"
        case $1 in --max-seeds) max=$2 ;; --runs) runs=$2 ;; --from) from=$2 ;; esac
        ;;
      *) usage "unknown option $1" ;;
    esac
    shift 2
  done
  ((runs >= 1)) || usage "--runs must be at least 1"
  ((from <= max)) || usage "--from ($from) is above --max-seeds ($max)"
  target=${TARGET:-2.0}
  [[ $target =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage "TARGET must be a ratio such as 2.0, not '$target'"
  sha=$(git rev-parse --quiet --verify "$rev^{commit}") || usage "no revision $rev"
  cache=${BENCH_CACHE:-$HOME/.cache/mancaladb-bench}
  src=$cache/src-${sha:0:12}
  if [[ ! -x $src/target/release/mancaladb ]]; then
    rm -rf "$src" && mkdir -p "$src"
    git archive "$sha" | tar -x -C "$src"
    # In its own tree's target, also when CARGO_TARGET_DIR names a shared
    # one (where the new build would replace it).
    (cd "$src" && CARGO_TARGET_DIR="$src/target" cargo build --release --quiet)
  fi
  cargo build --release --quiet
  # Copies, so that rebuilding either tree meanwhile changes nothing here.
  cp "$src/target/release/mancaladb" "$WORK/old-bin"
  cp "$cargo_out/release/mancaladb" "$WORK/new-bin"
  old=$WORK/old-bin new=$WORK/new-bin
  echo "old: $rev (${sha:0:12}); new: working tree of $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + changes')"
  echo "awari levels 0..$max, $runs runs each, alternating; $(nproc) cores; $(date -u +%F)"
  TIMEFORMAT='%U %S' LC_ALL=C # seconds with a decimal point, for awk
  for ((r = 1; r <= runs; r++)); do
    for which in old new; do
      rm -rf "$WORK/$which-$r" "$WORK/$which-$r.out" "$WORK/$which-$r.cpu"
      if ((from > 0)); then # the levels below the table, in one process
        fails "$WORK/$which-$r.out" "${!which}" build --max-seeds $((from - 1)) --db "$WORK/$which-$r"
      fi
    done
    for ((l = from; l <= max; l++)); do
      for which in old new; do
        dir=$WORK/$which-$r
        # `time` reports this level's process alone: "level user system".
        { time fails "$dir.out" "${!which}" build --max-seeds "$l" --db "$dir"; } 2>"$dir.time"
        echo "$l $(cat "$dir.time")" >>"$dir.cpu"
      done
    done
    for which in old new; do
      dir=$WORK/$which-$r
      rm -rf "$dir/raw" "$dir"/*.mdb # keep only the build log
      if [[ -n ${BENCH_LOGS:-} ]]; then # keep each run's report, log and CPU times
        mkdir -p "$BENCH_LOGS"
        cp "$dir.out" "$BENCH_LOGS/$which-$r.out"
        cp "$dir.cpu" "$BENCH_LOGS/$which-$r.cpu"
        cp "$dir/build-log.tsv" "$BENCH_LOGS/$which-$r.tsv"
      fi
    done
    echo "run $r: done" >&2
  done
  # Each build-log.tsv line: rules level positions seconds threads ranks
  # exchanged rounds [peak-anon-bytes]. Median over runs per level.
  status=0
  awk -v from="$from" -v max="$max" -v target="$target" -f scripts/compare.awk \
    "$WORK"/old-*/build-log.tsv "$WORK"/new-*/build-log.tsv "$WORK"/*.cpu || status=$?
  exit $status
fi

cargo build --release --quiet
bin=$cargo_out/release/mancaladb
status=0

# run LABEL LIMIT_SECONDS COMMAND...: times a command, checks the limit.
run() {
  local label=$1 limit=$2
  shift 2
  local start ms
  start=$(date +%s%N)
  fails "$WORK/$label.out" "$@"
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
exit $status
