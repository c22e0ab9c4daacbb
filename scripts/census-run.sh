#!/bin/sh
# The Omweso census rows FROM..TO (default 32) with the default budget of
# 10^9 laps, one process per row, resumable: how the rows of
# docs/omweso-census.jsonl were computed (BENCHMARKS.md, "Census rate and
# memory" and "k = 25..32"). From the repository's root:
#
#   mkdir -p DIR
#   setsid nohup sh scripts/census-run.sh DIR BIN FROM [TO] [--cycles] >> DIR/run.out 2>&1 &
#   kill -- -"$(cat DIR/run.pid)"     # stops the run and the census it started
#   python3 scripts/census-data.py collect --into docs/omweso-census.jsonl DIR
#
# Row k runs `BIN census --seeds k --db . $CENSUS_FLAGS` in DIR at `nice -n
# $NICE` (default 19) under `/usr/bin/time -v`, whose statistics are appended
# to DIR/time-k.txt (the cost that census-data.py collects: summed over the
# runs of a row stopped and resumed; a row walked whole by one run (stopped
# before its first checkpoint, or its checkpoint or saved line found
# damaged) keeps that run's block alone), its report to DIR/log after a line
# `=== k=K start TIME load L` (the load average when it started); with
# --cycles, also the row's cycle atlas to DIR/atlas-k.jsonl. A row stopped
# part-way resumes from its checkpoint in DIR. A run that did not walk the
# row (no `census: ... to walk` line) adds nothing to its cost: its `=== k=`
# line, report and `time -v` block are taken out again. Either the row was
# in the results file (DIR/omweso-census.jsonl, budget 10^9) and passed the
# census's checks (a damaged line is computed again, not trusted), and the
# run goes on; or the binary refused it (its estimate over a day, another
# census holding DIR, a bad flag), a line `# k=K refused ...` is left in
# DIR/log, and the run stops.
# CENSUS_FLAGS adds options to every `census` (e.g. `--force`: `census`
# refuses a row estimated at more than a day, and the estimate, sampled at
# nice 19 on a loaded machine, can be several times the real time).
# The script holds DIR/run.lock (a second run in DIR stops at once) and
# writes its process group to DIR/run.pid; stop it, and the census it
# started, with
#   kill -- -"$(cat DIR/run.pid)"
# (killing the script's PID alone leaves the row's census running). It
# needs GNU time (/usr/bin/time, Debian package `time`), procps (ps),
# util-linux (flock) and coreutils 8.31 or later (`env --default-signal`).
# Exit status: 0 every row done, 2 a row that failed or was refused (named
# on standard error; the run stops there) or bad arguments.
set -u
usage='usage: census-run.sh DIR BIN FROM [TO] [--cycles]'
die() { echo "census-run.sh: $*" >&2; exit 2; }
[ $# -ge 3 ] || die "$usage"
dir=$1
bin=$(realpath -e "$2" 2>/dev/null) || die "no binary $2"
[ -f "$bin" ] && [ -x "$bin" ] || die "BIN $2 is not an executable file"
from=$3
to=32
cycles=
shift 3
given_to=
for arg in "$@"; do
  case $arg in
  --cycles) cycles=yes ;;
  *[!0-9]*|'') die "unknown argument $arg; $usage" ;;
  ???*) die "TO must be a seed count 0..64, not $arg" ;;
  *) [ -z "$given_to" ] || die "one TO only; $usage"; to=$arg given_to=yes ;;
  esac
done
# At most two digits (the census counts 0..64 seeds) before `-le`, which
# fails on numbers past the shell's integers.
case $from in *[!0-9]*|'' | ???*) die "FROM must be a seed count 0..64, not $from" ;; esac
[ "$from" -le "$to" ] || die "FROM ($from) is above TO ($to)"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time, Debian package time)"
env --default-signal=TERM true 2> /dev/null || die "needs env --default-signal (coreutils 8.31 or later)"
for tool in ps flock truncate; do
  command -v "$tool" > /dev/null || die "needs $tool (Debian packages procps, util-linux and coreutils)"
done
cd "$dir" 2>/dev/null || die "no directory $dir"
exec 9> run.lock
flock -n 9 || die "another census-run.sh is running in $dir (run.lock)"
ps -o pgid= $$ | tr -d ' ' > run.pid   # the process group, whoever leads it

# The size of file $1 in bytes (0 if there is none).
size() {
  if [ -e "$1" ]; then wc -c < "$1"; else echo 0; fi
}

for k in $(seq "$from" "$to"); do
  log_from=$(size log)
  time_from=$(size "time-$k.txt")
  echo "=== k=$k start $(date -u +%FT%TZ) load $(cut -d' ' -f1 /proc/loadavg)" >> log
  set -- census --seeds "$k" --db .
  [ -z "$cycles" ] || set -- "$@" --cycles "atlas-$k.jsonl"
  # time ignores SIGTERM and env gives the census its default back: a run
  # stopped with `kill -- -PGID` still has the row's `time -v` block.
  # shellcheck disable=SC2086 # CENSUS_FLAGS is a list of words
  (
    trap '' TERM
    exec /usr/bin/time -v env --default-signal=TERM nice -n "${NICE:-19}" "$bin" "$@" ${CENSUS_FLAGS:-}
  ) >> log 2>> "time-$k.txt"
  s=$?
  said=$(tail -c +"$((time_from + 1))" "time-$k.txt" | tr '\r' '\n' |
    grep -E '^mancaladb: |^error: |panicked at' | tail -n 1)
  if ! tail -c +"$((time_from + 1))" "time-$k.txt" | tr '\r' '\n' | grep -q '^census: .* to walk'; then
    # Not a run of the row: the census read it from the results file
    # (checked, as every run checks it), or refused it. Its warnings (a
    # damaged line of another row, say) go on to standard error.
    tail -c +"$((time_from + 1))" "time-$k.txt" | tr '\r' '\n' | grep '^mancaladb: warning' >&2
    if [ "$time_from" = 0 ]; then rm -f "time-$k.txt"; else truncate -s "$time_from" "time-$k.txt"; fi
    truncate -s "$log_from" log
    [ $s = 0 ] && continue
    echo "# k=$k refused $(date -u +%FT%TZ) (not counted in its cost): ${said:-exit $s}" >> log
    case $said in *--force*) said="$said (CENSUS_FLAGS=--force passes it)" ;; esac
    die "row $k refused (exit $s)${said:+: $said}"
  fi
  if [ $s = 0 ]; then
    # A row this run walked whole (not resumed: stopped before its first
    # checkpoint, its checkpoint dropped as damaged, or its saved line)
    # owes nothing to the runs before.
    if ! tail -c +"$((time_from + 1))" "time-$k.txt" | grep -q 'before a resume)'; then
      tail -c +"$((time_from + 1))" "time-$k.txt" > "time-$k.txt.new" && mv "time-$k.txt.new" "time-$k.txt"
    fi
    continue
  fi
  die "row $k failed (exit $s)${said:+: $said}; see $dir/time-$k.txt"
done
