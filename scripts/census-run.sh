#!/bin/sh
# The Omweso census rows FROM..TO (default 32) with the default budget of
# 10^9 laps, one process per row, resumable: how the rows of
# docs/omweso-census.jsonl were computed (BENCHMARKS.md, "Census rate and
# memory" and "k = 25..32"). From the repository's root:
#
#   mkdir -p DIR
#   setsid nohup sh scripts/census-run.sh DIR BIN FROM [TO] [--cycles] >> DIR/run.out 2>&1 &
#   python3 scripts/census-data.py collect --into docs/omweso-census.jsonl DIR
#
# Row k runs `BIN census --seeds k --db .` in DIR at `nice -n $NICE`
# (default 19) under `/usr/bin/time -v`, whose statistics are appended to
# DIR/time-k.txt (the cost that census-data.py collects: summed over the
# runs of a row stopped and resumed), its report to DIR/log after a line
# `=== k=K start TIME load L` (the load average when it started); with
# --cycles, also the row's cycle atlas to DIR/atlas-k.jsonl. A row in the
# results file (DIR/omweso-census.jsonl, budget 10^9) is done and skipped
# (running it again would only read its result, and add to its cost); a row
# stopped part-way resumes from its checkpoint in DIR. (Not `time -v`'s
# exit status: it says 0 for a process killed by a signal.)
# Exit status: 0 every row done, 2 a row that failed (named on standard
# error; the run stops there) or bad arguments.
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
  *) [ -z "$given_to" ] || die "one TO only; $usage"; to=$arg given_to=yes ;;
  esac
done
case $from in *[!0-9]*|'') die "FROM must be a seed count, not $from" ;; esac
[ "$from" -le "$to" ] || die "FROM ($from) is above TO ($to)"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time, Debian package time)"
cd "$dir" 2>/dev/null || die "no directory $dir"
for k in $(seq "$from" "$to"); do
  grep -q "^{\"seeds\":$k,.*\"budget\":1000000000[,}]" omweso-census.jsonl 2>/dev/null && continue
  echo "=== k=$k start $(date -u +%FT%TZ) load $(cut -d' ' -f1 /proc/loadavg)" >> log
  if [ -n "$cycles" ]; then
    /usr/bin/time -v nice -n "${NICE:-19}" "$bin" census --seeds "$k" --db . \
      --cycles "atlas-$k.jsonl" >> log 2>> "time-$k.txt"
  else
    /usr/bin/time -v nice -n "${NICE:-19}" "$bin" census --seeds "$k" --db . >> log 2>> "time-$k.txt"
  fi
  s=$?
  if [ $s != 0 ]; then
    said=$(grep -E '^mancaladb: |^error: |panicked at' "time-$k.txt" | tail -n 1)
    die "row $k failed (exit $s)${said:+: $said}; see $dir/time-$k.txt"
  fi
done
