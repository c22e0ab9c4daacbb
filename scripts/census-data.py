#!/usr/bin/env python3
"""The Omweso census data file and its plot (standard library only).

  census-data.py collect RUN_DIR... > docs/omweso-census.jsonl
      One JSON line per row found in RUN_DIR/omweso-census.jsonl (budget
      10^9), with the cost of computing it read from RUN_DIR/time-K.txt
      (`/usr/bin/time -v`, one process per row, as the run scripts under
      /root/mancaladb-runs/census* write them): seconds (wall), user and
      system CPU seconds, max_rss_kb, and the load average when the row
      started (from RUN_DIR/log). A row present in several directories is
      taken from the first.

  census-data.py plot docs/omweso-census.jsonl docs/omweso-census.svg
      A hand-written SVG: looping pairs, looping configurations and cycles
      by seed count, on a log scale.
"""

import json
import math
import re
import sys
from pathlib import Path

BUDGET = 1_000_000_000


def parse_time(path):
    """Wall, user and system seconds and max RSS from `time -v` output."""
    text = path.read_text(errors="replace")
    out = {}
    m = re.search(r"Elapsed \(wall clock\) time.*?: (?:(\d+):)?(\d+):([\d.]+)", text)
    if m:
        h, mnt, s = m.groups()
        out["seconds"] = round(int(h or 0) * 3600 + int(mnt) * 60 + float(s), 2)
    for key, name in [("user", "User time"), ("system", "System time")]:
        m = re.search(name + r" \(seconds\): ([\d.]+)", text)
        if m:
            out[key + "_seconds"] = float(m.group(1))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        out["max_rss_kb"] = int(m.group(1))
    m = re.search(r"Exit status: (\d+)", text)
    if m and m.group(1) != "0":
        return None
    return out


def collect(dirs):
    rows = {}
    for d in map(Path, dirs):
        loads = {}
        log = d / "log"
        if log.exists():
            for line in log.read_text(errors="replace").splitlines():
                m = re.match(r"=== k=(\d+) start (\S+)(?: load (\S+))?", line)
                if m:
                    loads[int(m.group(1))] = (m.group(2), m.group(3))
        results = d / "omweso-census.jsonl"
        if not results.exists():
            continue
        for line in results.read_text(errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            k = row.get("seeds")
            if row.get("budget") != BUDGET or k in rows:
                continue
            row.pop("checksum", None)
            t = d / f"time-{k}.txt"
            cost = parse_time(t) if t.exists() else None
            if cost:
                row.update(cost)
                started, load = loads.get(k, (None, None))
                row["started"] = started
                if load is not None:
                    row["load_at_start"] = float(load)
            rows[k] = row
    for k in sorted(rows):
        print(json.dumps(rows[k], separators=(",", ":")))


def plot(data, svg):
    rows = [json.loads(l) for l in Path(data).read_text().splitlines() if l.strip()]
    series = [
        ("loop_pairs", "looping (configuration, start) pairs", "#1f77b4"),
        ("cfg_any", "configurations with a looping start", "#d62728"),
        ("cycles", "distinct cycles (up to rotation)", "#2ca02c"),
    ]
    pts = {key: [(r["seeds"], r[key]) for r in rows if r.get(key, 0) > 0] for key, _, _ in series}
    ks = [r["seeds"] for r in rows]
    values = [v for p in pts.values() for _, v in p]
    if not values:
        sys.exit("no positive values to plot")
    kmin, kmax = min(ks), max(ks)
    lo, hi = 0, math.ceil(math.log10(max(values)))
    W, H, L, R, T, B = 760, 460, 70, 20, 40, 110
    x = lambda k: L + (k - kmin) / max(1, kmax - kmin) * (W - L - R)
    y = lambda v: T + (hi - math.log10(v)) / (hi - lo) * (H - T - B)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">'
        f"Omweso relay loops on one side of k seeds (opponent empty)</text>",
    ]
    for e in range(lo, hi + 1):
        yy = y(10**e)
        out.append(f'<line x1="{L}" y1="{yy:.1f}" x2="{W - R}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{yy + 4:.1f}" text-anchor="end">1e{e}</text>')
    for k in range(kmin, kmax + 1):
        xx = x(k)
        out.append(f'<line x1="{xx:.1f}" y1="{H - B}" x2="{xx:.1f}" y2="{H - B + 4}" stroke="black"/>')
        out.append(f'<text x="{xx:.1f}" y="{H - B + 17}" text-anchor="middle">{k}</text>')
    out.append(f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>')
    out.append(f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - B + 34}" text-anchor="middle">seeds k</text>')
    for i, (key, label, colour) in enumerate(series):
        p = pts[key]
        for parity, dash in [(1, ""), (0, ' stroke-dasharray="5,3"')]:
            line = [(k, v) for k, v in p if k % 2 == parity]
            if len(line) > 1:
                path = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in line)
                out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"{dash}/>')
        for k, v in p:
            out.append(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
        ly = H - B + 52 + 16 * i
        out.append(f'<line x1="{L}" y1="{ly - 4}" x2="{L + 24}" y2="{ly - 4}" stroke="{colour}"/>')
        out.append(f'<text x="{L + 30}" y="{ly}">{label}</text>')
    out.append(
        f'<text x="{W - R}" y="{H - B + 52}" text-anchor="end">solid: odd k, dashed: even k;</text>'
    )
    out.append(
        f'<text x="{W - R}" y="{H - B + 68}" text-anchor="end">k with none are not drawn (log scale)</text>'
    )
    out.append("</svg>")
    Path(svg).write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "collect":
        collect(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "plot":
        plot(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
