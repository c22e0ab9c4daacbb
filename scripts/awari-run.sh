#!/bin/sh
# The long awari run of issue 11 (levels 0..36 on one machine), resumable.
# Run it in a directory outside the checkout, detached so that it outlives the
# shell (BENCHMARKS.md, "Levels 25..36: the run"):
#
#   mkdir -p DIR
#   setsid nohup sh scripts/awari-run.sh all    DIR BIN >> DIR/run.out 2>&1 &
#   setsid nohup sh scripts/awari-run.sh build  DIR BIN >> DIR/run.out 2>&1 &
#   setsid nohup sh scripts/awari-run.sh verify DIR BIN FROM TO [CHECKS] >> DIR/run.out 2>&1 &
#   sh scripts/awari-run.sh check DIR
#   sh scripts/awari-run.sh status DIR
#   kill -- -"$(cat DIR/run.pid)"       # stops a run started with setsid, and all it started
#
# all:    the whole run, the checks never done before first, since a machine
#         may be replaced between sessions: build levels 0..34 and 36 (level 36
#         never reads 35) and verify 36, then build and verify 35, then verify
#         levels 0..34 here (all of them passed all three checks before, on
#         earlier machines, with the same bytes: BENCHMARKS).
# build:  levels 0..34 and 36 first (level N never reads level N-1), then 35;
#         finished levels are skipped and the level in progress resumes from its
#         last checkpoint. Reports go to DIR/log, `time -v` to DIR/stderr.log.
# verify: levels FROM..TO whose table, as it is now, is not in DIR/verified.tsv,
#         one process per level (log in DIR/verify.log, `time -v` in
#         DIR/verify-N.time); checks 2 and 3 resume from their checkpoints.
#         A level recorded there has its bytes read again by check 1
#         (`verify --quick`, DIR/verify-quick.log, DIR/verify-quick-N.time). A
#         level without a table is a failure, and so is one that passed but
#         could not be recorded in verified.tsv. CHECKS 2: checks 1 and 2 only
#         (`verify --checks 2`, logged to DIR/verify-checks2.log, recorded
#         nowhere else); 3, the default: all three.
# check:  each table against db/CHECKSUMS: its file sha256, and if that differs,
#         the content sha256 its header names, to tell other values from the
#         same values compressed otherwise (the header's claim: `mancaladb
#         verify --seeds N` reads the values). A table whose level is not in
#         db/CHECKSUMS is a failure too.
# status: where the run stands: the levels built and verified here, the
#         levels under way (their process holds the level's lock) or stopped
#         part-way, with their newest work file and the last line the binary
#         wrote of them, whether a run holds the directory, the binary of the
#         last run started (run.bin), and the last report line.
# The first three modes hold DIR/run.lock (a second run in DIR stops at once),
# write the script's process group to DIR/run.pid and BIN's absolute path to
# DIR/run.bin (`status` prints it: resume a stopped run with that binary,
# since one built from another commit may restart the level under way), log the directory's and the
# work files' bytes every minute to DIR/disk.tsv while they run, and need GNU
# time (/usr/bin/time, Debian package `time`) and procps (ps, pgrep, pkill).
# Exit status: 0 all done and passed,
# 1 a check failed, 2 an error (a build or a verify that could not run; it is
# named on standard error, with the last line the binary wrote).
# AUTOGROUP_NICE=N gives the run's scheduling group a lower weight (0..19), so
# that it yields to interactive work; plain `nice` does not (autogroups). The
# group is the session's, so the script must lead its own (started with
# `setsid`, as above); otherwise it refuses, since it would lower the
# caller's whole session (a terminal's), and that would outlast the run.
# Extra arguments to any mode are refused (exit 2).
# BUILD_FLAGS adds options to every `build` (e.g. `--raw-cache all` where the
# disk has room for every raw copy).
set -u
usage='usage: awari-run.sh all|build|verify|check|status DIR [BIN [FROM TO [CHECKS]]]'
die() { echo "awari-run.sh: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "$usage"
mode=$1
dir=$2
sums=$(cd "$(dirname "$0")/.." && pwd)/db/CHECKSUMS
case $mode in
all|build|verify)
  [ $# -ge 3 ] || die "$usage"
  # BIN is resolved before the `cd`, so that a relative path means what it says.
  bin=$(realpath -e "$3" 2>/dev/null) || die "no binary $3"
  [ -f "$bin" ] && [ -x "$bin" ] || die "BIN $3 is not an executable file"
  if [ "$mode" = verify ]; then
    # Checked here, before the run takes the directory: each number on
    # its own (an empty FROM beside a TO is no level).
    [ $# -ge 5 ] && [ $# -le 6 ] || die "$usage"
    # At most two digits first: the shell's `-le` fails on numbers past
    # its integers.
    for n in "$4" "$5"; do
      case $n in *[!0-9]*|'' | ???*) die "FROM and TO must be levels 0..36, not '$4' and '$5'" ;; esac
      [ "$n" -le 36 ] || die "FROM and TO must be levels 0..36, not '$4' and '$5'"
    done
    case ${6-3} in 2|3) ;; *) die "CHECKS must be 2 or 3, not '$6'" ;; esac
    [ "$4" -le "$5" ] || die "FROM ($4) is above TO ($5)"
  else
    [ $# = 3 ] || die "$mode takes DIR and BIN only; $usage"
  fi
  # The autogroup is the session's: one the script does not lead is its
  # caller's (a terminal's), whose weight would stay lowered after the run.
  if [ -n "${AUTOGROUP_NICE:-}" ]; then
    case $AUTOGROUP_NICE in
    *[!0-9]*) die "AUTOGROUP_NICE must be 0..19, not $AUTOGROUP_NICE" ;;
    esac
    [ "$AUTOGROUP_NICE" -le 19 ] || die "AUTOGROUP_NICE must be 0..19, not $AUTOGROUP_NICE"
    [ "$(ps -o sid= $$ | tr -d ' ')" = "$$" ] ||
      die "AUTOGROUP_NICE needs a session of the script's own (it would lower the caller's whole session, and stay so after the run): start it with setsid, e.g. setsid nohup sh scripts/awari-run.sh ..."
  fi
  [ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time, Debian package time)"
  for tool in ps pgrep pkill flock; do
    command -v "$tool" > /dev/null || die "needs $tool (Debian packages procps and util-linux)"
  done
  ;;
check|status) [ $# = 2 ] || die "$mode takes DIR only; $usage" ;;
*) die "unknown mode $mode; $usage" ;;
esac
cd "$dir" 2>/dev/null || die "no directory $dir"
if [ "$mode" != check ] && [ "$mode" != status ]; then
  exec 9> run.lock
  flock -n 9 || die "another awari-run.sh is running in $dir (run.lock)"
  ps -o pgid= $$ | tr -d ' ' > run.pid   # the process group, whoever leads it
  echo "$bin" > run.bin   # the binary, so that a stopped run resumes with the same one
  if [ -n "${AUTOGROUP_NICE:-}" ]; then
    echo "$AUTOGROUP_NICE" > /proc/self/autogroup || die "cannot set the autogroup's nice value"
  fi
  # The disk logger, for as long as this script runs: stopped on its exit,
  # also by a signal (a background subshell of `sh` ignores Ctrl-C).
  ( while :; do
      printf '%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$(du -sb . | cut -f1)" \
        "$(du -scb raw/*/*.work 2>/dev/null | tail -n 1 | cut -f1)" >> disk.tsv
      sleep 60
    done ) 9>&- > /dev/null 2>&1 &
  logger=$!
  trap stop_logger EXIT
  # A signal that stops the run is named too: every exit 2 says why.
  stopped() { echo "awari-run.sh: stopped by SIG$1" >&2; exit 2; }
  trap 'stopped HUP' HUP
  trap 'stopped INT' INT
  trap 'stopped TERM' TERM
fi

# The size of file $1 in bytes (0 if there is none).
size() {
  if [ -e "$1" ]; then wc -c < "$1"; else echo 0; fi
}

# The last line the binary wrote to log $1 from byte $2 on (a stage, a
# checkpoint, an error, a panic), not `time -v`'s statistics nor the shell's
# word for a signal; progress lines end in carriage returns on a terminal
# only.
last_said() {
  tail -c +"$(($2 + 1))" "$1" 2>/dev/null | tr '\r' '\n' |
    grep -E '^[[:space:]]*level |^mancaladb: |^error: |panicked at' | tail -n 1
}

# Says on standard error that step $1 ended with status $2 (from `time
# -v`: 128 + N for signal N), with what the binary last wrote to log $3
# from byte $4 on.
failed() {
  said=$(last_said "$3" "$4")
  echo "awari-run.sh: $1 failed (exit $2)${said:+; it last said: $said}; see $dir/$3" >&2
}

# Builds the levels of `build --levels $1` (all of them if $1 is empty).
# Stopping the script alone leaves the build running: stop the process group
# (above).
build() {
  from=$(size stderr.log)
  # --wait: a process just killed may hold the directory lock while it exits.
  # shellcheck disable=SC2086 # BUILD_FLAGS is a list of words
  if [ -n "$1" ]; then
    /usr/bin/time -v "$bin" build --wait ${BUILD_FLAGS:-} --levels "$1" --db . >> log 2>> stderr.log
  else
    /usr/bin/time -v "$bin" build --wait ${BUILD_FLAGS:-} --max-seeds 36 --db . >> log 2>> stderr.log
  fi
  s=$?
  # A build that did not finish is an error (2), never a failed check.
  [ $s = 0 ] && return 0
  failed "build ${1:+--levels $1}" $s stderr.log "$from"
  return 2
}

# Stops the disk logger with whatever it is running (its `sleep`): stopped
# first, so that it cannot start another child meanwhile.
stop_logger() {
  kill -STOP "$logger" 2>/dev/null
  pkill -KILL -P "$logger"
  kill -KILL "$logger" 2>/dev/null
}

# An exit status as this script reports it: 0 passed, 1 a check failed, 2
# anything else (an error, a binary killed by a signal, a panic).
at_most_2() {
  if [ "$1" -gt 2 ]; then echo 2; else echo "$1"; fi
}

# Keeps in `worst` the worst status seen (2 above 1 above 0): its own and $1.
keep_worst() {
  clamped=$(at_most_2 "$1")
  [ "$clamped" -gt "$worst" ] && worst=$clamped
  return 0
}

# The content sha256 of table $1 (hex): bytes 40..72 of its header.
content_sha() {
  od -An -tx1 -j40 -N32 "$1" 2>/dev/null | tr -d ' \n'
}

# Whether verified.tsv records level $1's table as it is now, over the
# lower levels as they are now: its content sha256, and the sha256 of the
# content sha256s (hex, a line each) of the levels it reads, 0 and those
# below $1 - 1 (src/db.rs, verified_record). A table missing gives an empty
# sha256, which no record holds.
verified_here() {
  content=$(content_sha "awari-$(printf %02d "$1").mdb")
  lower=$(k=0
    while [ "$k" -lt "$1" ]; do
      if [ "$k" = 0 ] || [ $((k + 1)) -lt "$1" ]; then
        content_sha "awari-$(printf %02d "$k").mdb"
        echo
      fi
      k=$((k + 1))
    done | sha256sum | cut -c1-64)
  grep -qxF "$(printf 'awari\t%s\t%s\t%s' "$1" "$content" "$lower")" verified.tsv 2>/dev/null
}

# Whether a process holds a lock (flock) on file $1: read from /proc/locks,
# since taking the lock here, even for a moment, could turn a run or a
# level's process away. Its lines name a file as MAJOR:MINOR:INODE; the
# inode alone is matched, as the device there is the file system's, which
# on overlayfs or btrfs is not the one `stat` gives.
held() {
  [ -e "$1" ] && grep -q ":$(stat -c %i "$1") " /proc/locks
}

# The numbers read (one per line) as ranges: `0..5,7`, or `none`.
ranges() {
  sort -n | awk 'NR == 1 { s = p = $1; next }
    $1 == p + 1 { p = $1; next }
    { printf "%s%s,", s, (p > s ? ".." p : ""); s = p = $1 }
    END { if (NR) print s (p > s ? ".." p : ""); else print "none" }'
}

# Verifies the levels $1..$2 whose table, as it is now, is not recorded in
# verified.tsv (verified_here), one process per level;
# checks 1 and 2 only if $3 is 2. Returns the worst verify status (1: a check
# failed; 2: a verify could not run, or a table is missing), and names each
# level whose verify could not run.
verify() {
  worst=0
  for n in $(seq "$1" "$2"); do
    table=awari-$(printf %02d "$n").mdb
    if [ ! -e "$table" ]; then
      echo "awari-run.sh: level $n: no table $table in $dir" >&2
      keep_worst 2
      continue
    fi
    if verified_here "$n"; then
      # The record names the table's content checksum, which damage since
      # need not change: check 1 reads its bytes again (and a table it
      # finds damaged loses the record).
      times=verify-quick-$n.time
      from=$(size "$times")
      /usr/bin/time -v "$bin" verify --quick --seeds "$n" --db . \
        >> verify-quick.log 2>> "$times"
      s=$?
      [ $s -gt 1 ] && failed "verify --quick --seeds $n" $s "$times" "$from"
      keep_worst $s
      continue
    fi
    if [ "${3:-3}" = 2 ]; then
      times=verify-checks2-$n.time
      from=$(size "$times")
      /usr/bin/time -v "$bin" verify --checks 2 --seeds "$n" --db . \
        >> verify-checks2.log 2>> "$times"
      s=$?
    else
      times=verify-$n.time
      from=$(size "$times")
      /usr/bin/time -v "$bin" verify --seeds "$n" --db . >> verify.log 2>> "$times"
      s=$?
      # A pass not recorded is not done: the next run would check it again.
      if [ $s = 0 ] && ! verified_here "$n"; then
        echo "awari-run.sh: level $n passed but is not recorded in verified.tsv (verify.log)" >&2
        s=2
      fi
    fi
    # 1 is a verdict (in the verify log); anything above, a verify that
    # could not run.
    [ $s -gt 1 ] && failed "verify --seeds $n" $s "$times" "$from"
    keep_worst $s
  done
  return $worst
}

case $mode in
all)
  # What was never checked comes first (level 36, then 35), and each is
  # verified as soon as it is built, so that a machine lost part way keeps
  # every check it finished (the results are tied to bytes). Lower levels need
  # only be there: building `35` after the others does not hash them again.
  # A failed verify does not stop the others.
  failures=0
  for step in 0..34,36:36 35:35 :0..34; do
    if [ -n "${step%:*}" ]; then build "${step%:*}" || exit; fi
    levels=${step#*:}
    verify "${levels%..*}" "${levels#*..}"
    s=$?; [ $s -gt $failures ] && failures=$s
  done
  exit $failures
  ;;
build)
  # Each mode exits here: a shell reads its script as it goes, so an edit
  # of this file during a run of hours must not reach the lines below.
  build 0..34,36 && build ""
  exit
  ;;
verify)
  verify "$4" "$5" "${6:-3}"
  exit
  ;;
check)
  [ -r "$sums" ] || die "cannot read $sums"
  for f in awari-*.mdb; do
    [ -e "$f" ] || die "no tables (awari-*.mdb) in $dir"
    n=$(basename "$f" .mdb); n=${n#awari-}; n=${n#0}
    # The level's first line (a line given twice says the same once).
    line=$(awk -v n="$n" '$1 == "awari" && $2 == n { print; exit }' "$sums")
    want=$(echo "$line" | awk '{ print $5 }')
    got=$(sha256sum < "$f" | cut -d' ' -f1)
    if [ -z "$want" ]; then
      echo "level $n: not in db/CHECKSUMS (file sha256 $got)"; status=1
    elif [ "$want" = "$got" ]; then echo "level $n: as db/CHECKSUMS"
    elif [ "$want" = - ] && [ "$(echo "$line" | awk '{ print $4 }')" = "$(content_sha "$f")" ]; then
      # '-': no file sha256 recorded, the content sha256 stands.
      echo "level $n: as db/CHECKSUMS (its content sha256: no file sha256 recorded)"
    elif [ "$(echo "$line" | awk '{ print $4 }')" = "$(content_sha "$f")" ]; then
      echo "level $n: other file bytes; its header names db/CHECKSUMS's values (check them: mancaladb verify --seeds $n)"
      status=1
    else echo "level $n: DIFFERS from db/CHECKSUMS"; status=1
    fi
  done
  exit "${status:-0}"
  ;;
status)
  levels=$(for f in awari-*.mdb; do [ -e "$f" ] && echo "${f#awari-}"; done |
    sed 's/\.mdb$//' | awk '{ print $1 + 0 }')
  echo "tables:        $(echo "$levels" | grep . | ranges)"
  echo "verified here: $(for n in $levels; do verified_here "$n" && echo "$n"; done | ranges)"
  for work in raw/awari/scores.*.work raw/awari/verify.*.work; do
    [ -d "$work" ] || continue
    n=${work##*/}; n=${n#*.}; n=${n%.work}
    # A build holds the directory's lock (.lock), a verify its level's.
    what=build lock=.lock
    case $work in *verify.*) what=verify lock=raw/awari/verify.$n.lock ;; esac
    newest=$(TZ=UTC find "$work" -type f -printf '%T@ %P (%TY-%Tm-%Td %TH:%TM:%.2TS UTC)\n' |
      sort -n | tail -n 1 | cut -d' ' -f2-)
    # Work files outlive their process: a stopped build, a verify stopped
    # or asked for checks 1 and 2 only (check 3 removes them). The next
    # build or verify of the level resumes from them.
    if ! held "$lock"; then
      echo "level $n: $what stopped or unfinished; it resumes from its newest work file ${newest:-none}"
    elif [ $what = build ]; then
      echo "building level $n: newest work file ${newest:-none}"
    else
      echo "verifying level $n: newest work file ${newest:-none}"
    fi
    # What the process last said of it (a checkpoint, a stage), from its
    # log. A verify logs to verify-N.time, one of checks 1 and 2 only to
    # verify-checks2-N.time: the newer of the two.
    said=stderr.log
    [ "$what" = verify ] &&
      said=$(ls -t "verify-$n.time" "verify-checks2-$n.time" 2>/dev/null | head -n 1)
    said=$(last_said "$said" 0)
    [ -n "$said" ] && echo "  last said:   $said"
  done
  # A run holds run.lock while it lasts.
  running=
  held run.lock && running=yes
  if [ -n "$running" ]; then
    echo "running:       process group $(cat run.pid 2>/dev/null) holds run.lock"
    # The working memory of its processes, and how much of it is on huge
    # pages (README, "Huge pages"): on small pages a level runs slower.
    for pid in $(pgrep -g "$(cat run.pid 2>/dev/null)" 2>/dev/null); do
      awk -v pid="$pid" '/^Anonymous:/ { a = $2 } /^AnonHugePages:/ { h = $2 }
        END { if (a > 1048576) printf "  pid %s:   %.1f GB working memory, %.0f %% on huge pages\n", pid, a * 1024 / 1e9, 100 * h / a }' \
        "/proc/$pid/smaps_rollup" 2>/dev/null
    done
  else
    echo "running:       no run holds $dir"
  fi
  [ -s run.bin ] && echo "binary:        $(cat run.bin) (of the last run started: run.bin)"
  [ -s log ] && echo "last report:   $(tail -n 1 log)"
  exit 0
  ;;
esac
