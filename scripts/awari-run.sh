#!/bin/sh
# The long awari run of issue 11 (levels 0..36 on one machine), resumable.
# Run it in a directory outside the checkout, detached so that it outlives the
# shell (BENCHMARKS.md, "Levels 25..36: the run"):
#
#   setsid nohup sh scripts/awari-run.sh all    DIR BIN > /dev/null 2>&1 &
#   setsid nohup sh scripts/awari-run.sh build  DIR BIN > /dev/null 2>&1 &
#   setsid nohup sh scripts/awari-run.sh verify DIR BIN FROM TO [CHECKS] > /dev/null 2>&1 &
#   sh scripts/awari-run.sh check DIR
#
# all:    the whole run, each top level verified as soon as it is built, since
#         a machine may be replaced between sessions: build levels 0..31 and
#         verify 31 (all three checks; the levels below 31 were verified before
#         with the same bytes, BENCHMARKS), then build and verify 32, 33, 34,
#         36 (level 36 never reads 35) and 35, then verify levels 0..30 here.
# build:  levels 0..34 and 36 first (level N never reads level N-1), then 35;
#         finished levels are skipped and the level in progress resumes from its
#         last checkpoint. Reports go to DIR/log, `time -v` to DIR/stderr.log, and
#         the directory's and the work files' bytes every minute to DIR/disk.tsv.
# verify: levels FROM..TO not yet in DIR/verified.tsv, one process per level
#         (log in DIR/verify.log, `time -v` in DIR/verify-N.time); checks 2 and 3
#         resume from their checkpoints. CHECKS 2: checks 1 and 2 only (`verify
#         --checks 2`, logged to DIR/verify-checks2.log, recorded nowhere else).
# check:  each table's sha256 against the file-sha256 column of db/CHECKSUMS.
# AUTOGROUP_NICE=N gives the run's scheduling group a lower weight (0..19), so
# that it yields to interactive work; plain `nice` does not (autogroups).
set -u
mode=${1:?usage: awari-run.sh all|build|verify|check DIR [BIN [FROM TO [CHECKS]]]}
dir=${2:?DIR}
sums=$(cd "$(dirname "$0")/.." && pwd)/db/CHECKSUMS
cd "$dir" || exit 2
[ -n "${AUTOGROUP_NICE:-}" ] && echo "$AUTOGROUP_NICE" > /proc/self/autogroup

# Builds the levels of `build --levels $1` (all of them if $1 is empty),
# logging the directory's bytes every minute while it runs.
build() {
  ( while :; do
      printf '%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$(du -sb . | cut -f1)" \
        "$(du -scb raw/*/*.work 2>/dev/null | tail -n 1 | cut -f1)" >> disk.tsv
      sleep 60
    done ) &
  logger=$!
  trap 'kill $logger' EXIT
  # --wait: a process just killed may hold the directory lock while it exits.
  if [ -n "$1" ]; then
    /usr/bin/time -v "$bin" build --wait --levels "$1" --db . >> log 2>> stderr.log
  else
    /usr/bin/time -v "$bin" build --wait --max-seeds 36 --db . >> log 2>> stderr.log
  fi
  status=$?
  kill $logger
  trap - EXIT
  return $status
}

# Verifies the levels $1..$2 not yet in verified.tsv, one process per level;
# checks 1 and 2 only if $3 is 2. Fails if a level's verify did.
verify() {
  failed=0
  for n in $(seq "$1" "$2"); do
    [ -e "awari-$(printf %02d "$n").mdb" ] || continue
    grep -q "^$(printf 'awari\t%s\t' "$n")" verified.tsv 2>/dev/null && continue
    if [ "${3:-3}" = 2 ]; then
      /usr/bin/time -v "$bin" verify --checks 2 --seeds "$n" --db . \
        >> verify-checks2.log 2>> "verify-checks2-$n.time" || failed=1
    else
      /usr/bin/time -v "$bin" verify --seeds "$n" --db . >> verify.log 2>> "verify-$n.time" ||
        failed=1
    fi
  done
  return $failed
}

case $mode in
all)
  bin=$(realpath "${3:?BIN}")
  # Each top level is verified as soon as it is built, so that a machine lost
  # part way keeps every check it finished (the results are tied to bytes).
  # A level that fails verify does not stop the others' checks.
  failed=0
  for step in 0..31:31 0..32:32 0..33:33 0..34:34 0..34,36:36 0..36:35; do
    build "${step%:*}" || exit
    verify "${step#*:}" "${step#*:}" || failed=1
  done
  verify 0 30 || failed=1
  exit $failed
  ;;
build)
  bin=$(realpath "${3:?BIN}")
  build 0..34,36 && build ""
  ;;
verify)
  bin=$(realpath "${3:?BIN}")
  verify "${4:?FROM}" "${5:?TO}" "${6:-3}"
  ;;
check)
  for f in awari-*.mdb; do
    n=$(basename "$f" .mdb); n=${n#awari-}; n=${n#0}
    want=$(awk -v n="$n" '$1 == "awari" && $2 == n { print $5 }' "$sums")
    got=$(sha256sum < "$f" | cut -d' ' -f1)
    if [ -z "$want" ] || [ "$want" = - ]; then echo "level $n: new, $got"
    elif [ "$want" = "$got" ]; then echo "level $n: as db/CHECKSUMS"
    else echo "level $n: DIFFERS from db/CHECKSUMS"; status=1
    fi
  done
  exit "${status:-0}"
  ;;
*) echo "awari-run.sh: unknown mode $mode" >&2; exit 2 ;;
esac
