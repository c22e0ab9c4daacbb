# The verdict of `scripts/bench.sh --compare`: reads the runs' build logs
# (WORK/old-R/build-log.tsv, WORK/new-R/build-log.tsv) and CPU times
# (WORK/old-R.cpu, WORK/new-R.cpu), prints the table of levels from..max
# (medians over the runs) and exits 1 unless the new binary's per-core
# rate is at least `target` times the old one's at levels 20 and 24 (when
# they are in range).
#
#   awk -v from=L -v max=N -v target=X -f scripts/compare.awk \
#     WORK/old-*/build-log.tsv WORK/new-*/build-log.tsv WORK/*.cpu
#
# Each build-log.tsv line: rules level positions seconds threads ranks
# exchanged rounds [peak-anon-bytes]; each .cpu line: level user system.
function median(a, n,   i, j, t) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
FNR == 1 { split(FILENAME, p, "/"); which = p[length(p) - 1]; sub(/-[0-9]+$/, "", which) }
FILENAME ~ /\.cpu$/ { # level user system, from `time`
  w = FILENAME; sub(/.*\//, "", w); sub(/-[0-9]+\.cpu$/, "", w)
  k = w SUBSEP $1; nc[k]++; cpu[k, nc[k]] = $2 + $3
  next
}
{
  lvl = $2; pos[lvl] = $3
  k = which SUBSEP lvl; n[k]++
  rate[k, n[k]] = $3 / ($4 > 0 ? $4 : 1e-9) / $5
  if (which == "new" && NF >= 9) { na[lvl]++; anon[lvl, na[lvl]] = $9 / $3 }
}
END {
  printf "%5s %14s %14s %14s %7s %14s %14s %14s %9s\n", "level", "positions", "old /core", "new /core", "ratio", "new anon B/pos", "old /cpu s", "new /cpu s", "cpu ratio"
  status = 0
  for (l = from; l <= max; l++) {
    if (!((("old" SUBSEP l) in n) && (("new" SUBSEP l) in n))) continue
    for (i = 1; i <= n["old", l]; i++) a[i] = rate["old", l, i]; o = median(a, n["old", l])
    for (i = 1; i <= n["new", l]; i++) a[i] = rate["new", l, i]; w = median(a, n["new", l])
    an = "-"
    if (l in na) { for (i = 1; i <= na[l]; i++) a[i] = anon[l, i]; an = sprintf("%.3f", median(a, na[l])) }
    for (i = 1; i <= nc["old", l]; i++) a[i] = cpu["old", l, i]; c = median(a, nc["old", l]); oc = pos[l] / (c > 0 ? c : 1e-9)
    for (i = 1; i <= nc["new", l]; i++) a[i] = cpu["new", l, i]; c = median(a, nc["new", l]); wc = pos[l] / (c > 0 ? c : 1e-9)
    printf "%5d %14d %12.2f M %12.2f M %6.2fx %14s %12.2f M %12.2f M %8.2fx\n", l, pos[l], o / 1e6, w / 1e6, w / o, an, oc / 1e6, wc / 1e6, wc / oc
    if ((l == 20 || l == 24) && w / o < target + 0) { status = 1; printf "FAIL level %d: %.2fx (target %.1fx)\n", l, w / o, target }
    else if (l == 20 || l == 24) printf "PASS level %d: %.2fx (target %.1fx)\n", l, w / o, target
  }
  exit status
}
