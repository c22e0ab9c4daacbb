#!/bin/sh
# Bytes read from disk by the build of one level when the page cache cannot
# hold its lower levels beside its state: the top levels' situation on a
# small machine, reproduced at a small level inside a memory cgroup.
#
#   scripts/lower-reads.sh TABLES LEVEL LIMIT_MB BIN [BIN...]   (as root)
#
# Hard-links the tables of levels 0..LEVEL-2 from TABLES into a scratch
# directory (WORK, default /root/mancaladb-runs/lower-reads), then builds
# LEVEL there with each BIN in turn, twice over (BIN1 BIN2 BIN1 BIN2 ...),
# each run inside a memory cgroup of LIMIT_MB (page cache included) emptied
# first, and prints each run's report line (its "GB read from disk").
# The first run also writes the raw copies (the default 8 GiB budget keeps
# those of every level read); the runs after it find them there. Each line
# names its binary as given (two binaries are often both `mancaladb`, in
# two directories). Exit status 2, with one line, for bad arguments or a
# run that failed; the cgroup is removed at the end.
set -eu
tables=$(realpath -e "${1:?TABLES}" 2>/dev/null) || { echo "lower-reads.sh: no directory $1" >&2; exit 2; }
level=${2:?LEVEL}
limit=${3:?LIMIT_MB}
shift 3
[ $# -ge 1 ] || { echo "lower-reads.sh: no BIN" >&2; exit 2; }
case $level in *[!0-9]*|'') echo "lower-reads.sh: LEVEL must be a seed count, not $level" >&2; exit 2 ;; esac
case $limit in *[!0-9]*|'') echo "lower-reads.sh: LIMIT_MB must be a number of MB, not $limit" >&2; exit 2 ;; esac
work=${WORK:-/root/mancaladb-runs/lower-reads}
mkdir -p "$work"
for n in $(seq 0 $((level - 2))); do
  f=awari-$(printf %02d "$n").mdb
  [ -e "$work/$f" ] || cp -l "$tables/$f" "$work/$f" 2>/dev/null ||
    { echo "lower-reads.sh: cannot link $tables/$f into $work (no such table, or another file system)" >&2; exit 2; }
done
if [ -d /sys/fs/cgroup/memory ]; then          # cgroup v1
  cg=/sys/fs/cgroup/memory/mancaladb-lower-reads
  mkdir -p "$cg"
  echo $((limit * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
  empty() { echo 0 > "$cg/memory.force_empty" 2>/dev/null || true; }
else                                           # cgroup v2
  cg=/sys/fs/cgroup/mancaladb-lower-reads
  mkdir -p "$cg"
  echo $((limit * 1024 * 1024)) > "$cg/memory.max"
  # (not tried here: this machine has cgroup v1)
  empty() { echo $((limit * 1024 * 1024)) > "$cg/memory.reclaim" 2>/dev/null || true; }
fi
# Removed at the end, when its processes are gone (also after a failure).
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
for round in 1 2; do
  for bin in "$@"; do
    # The level afresh: its table and any work files a failed run left
    # (a resumed level would read less from disk).
    rm -rf "$work/awari-$(printf %02d "$level").mdb" "$work/raw/awari/scores.$level.work"
    empty
    name="$bin run $round"
    if ! sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$cg" \
      "$bin" build --levels "$level" --db "$work" > "$work/out" 2> "$work/err"; then
      echo "lower-reads.sh: $name failed (killed in the cgroup?): $(tail -n 1 "$work/err")" >&2
      exit 2
    fi
    line=$(grep "^level $level:" "$work/out") ||
      { echo "lower-reads.sh: $name printed no report of level $level" >&2; exit 2; }
    echo "$name: $line"
  done
done
