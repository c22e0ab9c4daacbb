#!/usr/bin/env python3
"""The Omweso census data file and its plot (standard library only).

  census-data.py collect --into docs/omweso-census.jsonl RUN_DIR...
      Merges into the data file the rows found in RUN_DIR/omweso-census.jsonl
      (budget 10^9), each with the cost of computing it read from
      RUN_DIR/time-K.txt (`/usr/bin/time -v`, one process per row, as
      scripts/census-run.sh writes them; a row stopped and resumed has one
      block per run, and its cost is their sum): seconds (wall), user and
      system CPU seconds, max_rss_kb (the largest), and when the row first
      started and the load average then (from RUN_DIR/log). A row present
      in several directories is taken from the first. The data file's rows
      not found in the directories are kept as they are; a row found there
      replaces the file's (or, with the same counts and no time-K.txt,
      leaves it as it is), keeping its hand-written "note" (often the only
      record that the cost covers part of the row) unless the counts differ.
      Standard error names each row whose counts changed (its note, if any,
      dropped and quoted) and each note kept beside a cost that changed
      (read it again). The file is replaced at once (a new file
      renamed over it), and only once everything was read. Without --into,
      the directories' rows alone go to standard output.
      A RUN_DIR without omweso-census.jsonl, a line there that fails the
      census's own checks (a checksum that does not match, two lines of a
      row that disagree: run the row's census again, which computes it
      again), no row at all, or a data file that is missing or has a line
      that is not a JSON row is an error (exit 2, the data file untouched).

  census-data.py plot docs/omweso-census.jsonl docs/omweso-census.svg
      A hand-written SVG: looping pairs, looping configurations and cycles
      by seed count on a log scale (each series with its own marker), and
      below it their ratio loop_pairs / cfg_any on a linear scale, since
      the first two nearly coincide on the log scale.

  census-data.py cycles CYCLES.jsonl...
      Reads cycle files, one seed count each (the run directory's
      omweso-cycles.kK.bB.jsonl, or an atlas written by `census --seeds K
      --cycles`; an atlas of several rows is refused), walks every cycle again
      from its stored side (an independent relay in Python) and checks its
      period (fact 5: n laps to come back rotated by r pits, period
      n * 16 / gcd(r, 16)) and that the stored side is the least of its
      states brought to start 0. Prints one JSON line per seed count with
      what the atlas section of docs/omweso-loops.md reports: cycles,
      loop_pairs, cfg_any and cfg_all recounted from the cycles' states
      (and the states, brought to start 0, whose every legal start loops),
      shortest and longest period with their sides, cycles by period /
      states, seeds sown per lap, and whether the family h 1 0 1 0 ... 1
      (pit 0 holding k - 8, the odd pits 1) loops.

Exit status: 0 done, 2 bad usage or data that fails a check (a one-line
error names it on standard error).
"""

import hashlib
import json
import math
import os
import re
import sys
from pathlib import Path

BUDGET = 1_000_000_000


def parse_time(path):
    """Wall, user and system seconds (summed over the runs of a resumed
    row, one `time -v` block each) and max RSS (the largest) from `time -v`
    output. (Whether the row finished is the results file's word: `time
    -v` says exit status 0 for a process killed by a signal.)"""
    text = path.read_text(errors="replace")
    out = {}
    walls = re.findall(r"Elapsed \(wall clock\) time.*?: (?:(\d+):)?(\d+):([\d.]+)", text)
    if walls:
        out["seconds"] = round(
            sum(int(h or 0) * 3600 + int(mnt) * 60 + float(s) for h, mnt, s in walls), 2
        )
    for key, name in [("user", "User time"), ("system", "System time")]:
        found = re.findall(name + r" \(seconds\): ([\d.]+)", text)
        if found:
            out[key + "_seconds"] = round(sum(map(float, found)), 2)
    found = re.findall(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if found:
        out["max_rss_kb"] = max(map(int, found))
    return out


def fail(message):
    """Stops with a one-line error and exit status 2."""
    print(f"census-data.py: {message}", file=sys.stderr)
    sys.exit(2)


# The fields that say what a row cost, not what it counts: a new run of a
# row may change these and keep the row's note.
COST = {"seconds", "user_seconds", "system_seconds", "max_rss_kb", "started", "load_at_start"}


def json_rows(path, text, what):
    """(line number, row) for each line of `text` (read from `path`) that
    is not blank; a line that is not a JSON object with an integer seed
    count fails, saying that it is `what`."""
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("seeds"), int):
            fail(f"{path}:{i}: {what}")
        yield i, row


def read_rows(path):
    """The rows of data file `path` by seed count; any line that is not a
    JSON row with a seed count, or a seed count twice, is an error."""
    rows = {}
    try:
        text = Path(path).read_text()
    except OSError as e:
        fail(f"cannot read the data file {path}: {e.strerror}")
    for i, row in json_rows(path, text, "not a JSON row with a seed count"):
        if row["seeds"] in rows:
            fail(f"{path}:{i}: a second row k={row['seeds']}")
        rows[row["seeds"]] = row
    return rows


def results_rows(path):
    """The rows of a run directory's results file, each line checked as
    the census checks it before it trusts a row (src/omweso/census/store.rs):
    a JSON object whose checksum, the first 16 hex digits of the sha256 of
    the row's JSON without it, matches. Any other line of a row collected
    (budget 10^9) is an error: the census would have computed its row
    again, not kept it; one of another budget (a quick run with
    --max-laps) is a warning, and left out."""
    rows = []
    for i, row in json_rows(path, path.read_text(errors="replace"), "not a census row"):
        given = row.pop("checksum", None)
        want = hashlib.sha256(json.dumps(row, separators=(",", ":")).encode()).hexdigest()[:16]
        if given != want:
            what = (f"{path}:{i}: row k={row['seeds']}, budget {row.get('budget')}, does not "
                    f"match its checksum (edited or damaged)")
            if row.get("budget") != BUDGET:
                # Not a row collected: said, and left to the census.
                print(f"census-data.py: warning: {what}; not collected", file=sys.stderr)
                continue
            fail(f"{what}: run its census again, which computes it again")
        rows.append(row)
    return rows


def merge(old, new):
    """Row `new` (from a run directory) in place of the data file's row
    `old`: with the old row's note if the counts are the same, and with
    its cost if the directory had none (no time-K.txt); each change that
    touches a note or the counts named on standard error."""
    k = new["seeds"]
    counts = lambda r: {f: v for f, v in r.items() if f not in COST and f != "note"}
    if counts(old) != counts(new):
        changed = sorted(f for f in counts(old).keys() | counts(new).keys()
                         if old.get(f) != new.get(f))
        dropped = f"; its note is dropped: {old['note']}" if "note" in old else ""
        print(f"census-data.py: row k={k}: its counts changed ({', '.join(changed)})"
              f"{dropped}", file=sys.stderr)
        return new
    if not COST.intersection(new):
        return old  # the same counts, and no cost measured there
    if "note" not in old:
        return new
    if any(old.get(f) != new.get(f) for f in COST):
        print(f"census-data.py: row k={k}: its note is kept, but its cost changed; "
              f"check the note still holds: {old['note']}", file=sys.stderr)
    return {**new, "note": old["note"]}


def collect(dirs, into=None):
    # Read first, so that a bad data file stops before any work.
    kept = read_rows(into) if into is not None else {}
    rows = {}
    for d in map(Path, dirs):
        loads = {}
        log = d / "log"
        if log.exists():
            for line in log.read_text(errors="replace").splitlines():
                m = re.match(r"=== k=(\d+) start (\S+)(?: load (\S+))?", line)
                if m:  # the first start of a row resumed later
                    loads.setdefault(int(m.group(1)), (m.group(2), m.group(3)))
        results = d / "omweso-census.jsonl"
        if not results.is_file():
            fail(f"no census results {results} (is {d} a run directory?)")
        here = {}
        for row in results_rows(results):
            k = row["seeds"]
            if row.get("budget") != BUDGET:
                continue
            if here.setdefault(k, dict(row)) != row:
                fail(f"{results}: two lines of row k={k} disagree: run the census of "
                     f"row {k} in {d} again, which computes it again")
            if k in rows:
                continue
            t = d / f"time-{k}.txt"
            cost = parse_time(t) if t.exists() else None
            if cost:
                row.update(cost)
                started, load = loads.get(k, (None, None))
                row["started"] = started
                if load is not None:
                    row["load_at_start"] = float(load)
            rows[k] = row
    if not rows:
        fail(f"no rows with the budget {BUDGET} in {', '.join(dirs)}")
    for k, row in rows.items():
        if k in kept:
            kept[k] = merge(kept[k], row)
        else:
            kept[k] = row
    text = "".join(json.dumps(kept[k], separators=(",", ":")) + "\n" for k in sorted(kept))
    if into is None:
        sys.stdout.write(text)
        return
    # A new file renamed over the old one: an interrupted write leaves the
    # data file as it was.
    tmp = Path(f"{into}.new")
    try:
        tmp.write_text(text)
        os.replace(tmp, into)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        fail(f"cannot write the data file {into}: {e.strerror}")
    print(f"census-data.py: {into}: {len(kept)} rows, {len(rows)} of them from "
          f"{', '.join(dirs)}", file=sys.stderr)


def relay_cycle(side):
    """Walk the capture-free relay from pit 0 of `side` until the state
    brought to start 0 comes back (fact 5). Returns (states, r, seeds sown):
    the n distinct states of the first n laps brought to start 0 (as bytes),
    the rotation r of the return, and the seeds sown in those n laps; None
    if the move ends."""
    start = bytes(side)
    c, q = list(side), 0
    states, sown = [start], 0
    while True:
        h = c[q]
        c[q] = 0
        a, r = divmod(h, 16)
        if a:
            c = [v + a for v in c]
        for i in range(1, r + 1):
            c[(q + i) % 16] += 1
        sown += h
        q = (q + h) % 16
        if c[q] < 2:
            return None
        norm = bytes(c[q:] + c[:q])
        if norm == start:
            return states, q, sown
        states.append(norm)


def cycles(path):
    try:
        rows = [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except ValueError:
        fail(f"{path}: a line that is not JSON")
    if not all(isinstance(r, dict) and isinstance(r.get("period"), int)
               and isinstance(r.get("side"), list) and len(r["side"]) == 16
               and all(isinstance(v, int) and v >= 0 for v in r["side"]) for r in rows):
        fail(f"{path}: a line that is not a cycle (side of 16 seed counts, period)")
    ks = {r.get("seeds", sum(r["side"])) for r in rows}
    if not rows:
        return {"file": str(path), "cycles": 0}
    if len(ks) != 1:
        fail(f"{path}: cycles of several seed counts {sorted(ks)}")
    (k,) = ks
    every = set()  # every looping start-0 state of the row
    per_cycle = []
    turns = {}
    unrotated = 0
    for r in rows:
        walked = relay_cycle(r["side"])
        if walked is None:
            fail(f"{path}: {r['side']} does not loop")
        states, rot, sown = walked
        turn = 16 // math.gcd(rot, 16)
        period = len(states) * turn
        if period != r["period"]:
            fail(f"{path}: {r['side']} has period {period}, the file says {r['period']}")
        if "sown" in r and sown * turn != r["sown"]:
            fail(f"{path}: {r['side']} sows {sown * turn} per period, the file says {r['sown']}")
        if min(states) != bytes(r["side"]):
            fail(f"{path}: {r['side']} is not the least of its states")
        if "states" in r and r["states"] != len(states):
            fail(f"{path}: {r['side']} has {len(states)} states, the file says {r['states']}")
        if every.intersection(states):
            fail(f"{path}: {r['side']} shares a state with an earlier cycle")
        every.update(states)
        turns[turn] = turns.get(turn, 0) + 1
        unrotated += rot == 0
        per_cycle.append((period, r["side"], sown * turn))
    # cfg_any and cfg_all from the states, as docs/omweso-loops.md counts
    # them: M(s) the rotations of s that loop from pit 0, L(s) its legal
    # starts; a configuration is counted at its smallest looping start.
    cfg_any = cfg_all = 0
    all_looping = []  # states whose every legal start loops
    for st in every:
        m = [d for d in range(16) if st[d:] + st[:d] in every]
        cfg_any += 16 - max(m)
        if m == [d for d in range(16) if st[d] >= 2]:
            cfg_all += 16 - max(m)
            all_looping.append(list(st))
    shortest = min(p for p, _, _ in per_cycle)
    longest = max(p for p, _, _ in per_cycle)
    family = [k - 8] + [i % 2 for i in range(1, 16)] if k >= 10 else None
    fam = relay_cycle(family) if family else None
    return {
        "seeds": k,
        "cycles": len(rows),
        "loop_pairs": 16 * len(every),
        "cfg_any": cfg_any,
        "cfg_all": cfg_all,
        "cfg_all_states": sorted(all_looping),
        "period_min": shortest,
        "period_min_cycles": sum(p == shortest for p, _, _ in per_cycle),
        "period_min_side": min(s for p, s, _ in per_cycle if p == shortest),
        "period_max": longest,
        "period_max_cycles": sum(p == longest for p, _, _ in per_cycle),
        "period_max_side": min(s for p, s, _ in per_cycle if p == longest),
        "period_over_states": {str(t): turns[t] for t in sorted(turns)},
        "unrotated": unrotated,
        "sown_per_lap": round(sum(w for _, _, w in per_cycle) / sum(p for p, _, _ in per_cycle), 3),
        "family_loops": fam is not None,
        "family_period": len(fam[0]) * (16 // math.gcd(fam[1], 16)) if fam else None,
    }


def plot(data, svg):
    rows = [json.loads(l) for l in Path(data).read_text().splitlines() if l.strip()]
    # (key, legend label, colour, marker). Looping pairs and looping
    # configurations differ by about 1 % (a looping configuration rarely has
    # a second looping start), so on the log scale their lines coincide: the
    # pairs are drawn as a wide pale band under the configurations' line,
    # with hollow rings round its filled squares, and the lower panel shows
    # their ratio on a linear scale.
    series = [
        ("loop_pairs", "looping (configuration, start) pairs", "#1f77b4", "ring"),
        ("cfg_any", "configurations with a looping start", "#d62728", "square"),
        ("cycles", "distinct cycles (up to rotation)", "#2ca02c", "triangle"),
    ]
    pts = {key: [(r["seeds"], r[key]) for r in rows if r.get(key, 0) > 0] for key, *_ in series}
    values = [v for p in pts.values() for _, v in p]
    if not values:
        fail("no positive values to plot")
    ratio = [
        (r["seeds"], r["loop_pairs"] / r["cfg_any"]) for r in rows if r.get("cfg_any", 0) > 0
    ]
    # From the first k with a loop to the last row.
    kmin = min(k for p in pts.values() for k, _ in p)
    kmax = max(r["seeds"] for r in rows)
    lo, hi = 0, math.ceil(math.log10(max(values)))
    # Top panel (log counts) from T to T + PH; ratio panel from RT to RT + RH.
    W, L, R, T, PH = 760, 80, 20, 40, 300
    RT, RH = T + PH + 56, 130
    LEG = RT + RH + 50
    H = LEG + 3 * 18 + 40
    x = lambda k: L + (k - kmin) / max(1, kmax - kmin) * (W - L - R)
    y = lambda v: T + (hi - math.log10(v)) / (hi - lo) * PH
    # Ratio axis: 1 at the bottom, the top rounded up to a step of 0.005.
    step = 0.005
    rtop = max(1 + step, math.ceil(max(v for _, v in ratio) / step - 1e-9) * step)
    ry = lambda v: RT + (rtop - v) / (rtop - 1) * RH

    def marker(kind, cx, cy, colour):
        if kind == "ring":
            return (
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6" fill="none" '
                f'stroke="{colour}" stroke-width="1.5"/>'
            )
        if kind == "square":
            return (
                f'<rect x="{cx - 3:.1f}" y="{cy - 3:.1f}" width="6" height="6" fill="{colour}"/>'
            )
        if kind == "triangle":
            return (
                f'<polygon points="{cx:.1f},{cy - 4.5:.1f} {cx + 4:.1f},{cy + 3:.1f} '
                f'{cx - 4:.1f},{cy + 3:.1f}" fill="{colour}"/>'
            )
        return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3" fill="{colour}"/>'

    def lines(p, fx, fy, colour, extra=""):
        # Odd k solid, even k dashed: the two parities lie on two curves.
        out = []
        for parity, dash in [(1, ""), (0, ' stroke-dasharray="5,3"')]:
            line = [(k, v) for k, v in p if k % 2 == parity]
            if len(line) > 1:
                path = " ".join(f"{fx(k):.1f},{fy(v):.1f}" for k, v in line)
                out.append(
                    f'<polyline points="{path}" fill="none" stroke="{colour}"{dash}{extra}/>'
                )
        return out

    def k_axis(y0, title=True):
        out = [f'<line x1="{L}" y1="{y0}" x2="{W - R}" y2="{y0}" stroke="black"/>']
        for k in range(kmin, kmax + 1):
            xx = x(k)
            out.append(f'<line x1="{xx:.1f}" y1="{y0}" x2="{xx:.1f}" y2="{y0 + 4}" stroke="black"/>')
            out.append(f'<text x="{xx:.1f}" y="{y0 + 17}" text-anchor="middle">{k}</text>')
        if title:
            out.append(f'<text x="{(L + W - R) / 2}" y="{y0 + 32}" text-anchor="middle">seeds k</text>')
        return out

    def y_title(y0, y1, text):
        mid = (y0 + y1) / 2
        return (
            f'<text x="16" y="{mid:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 16 {mid:.1f})">{text}</text>'
        )

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">'
        f"Omweso relay loops on one side of k seeds (opponent empty), k = {kmin}..{kmax}</text>",
    ]
    # Top panel: counts, log scale.
    for e in range(lo, hi + 1):
        yy = y(10**e)
        out.append(f'<line x1="{L}" y1="{yy:.1f}" x2="{W - R}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{yy + 4:.1f}" text-anchor="end">1e{e}</text>')
    out += k_axis(T + PH, title=False)
    out.append(f'<line x1="{L}" y1="{T}" x2="{L}" y2="{T + PH}" stroke="black"/>')
    out.append(y_title(T, T + PH, "count (log scale)"))
    for key, _, colour, kind in series:
        extra = ' stroke-width="7" stroke-opacity="0.3"' if kind == "ring" else ""
        out += lines(pts[key], x, y, colour, extra)
    for key, _, colour, kind in series:
        out += [marker(kind, x(k), y(v), colour) for k, v in pts[key]]
    # Ratio panel: looping pairs per looping configuration, linear scale.
    v = 1.0
    while v <= rtop + 1e-9:
        yy = ry(v)
        out.append(f'<line x1="{L}" y1="{yy:.1f}" x2="{W - R}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{yy + 4:.1f}" text-anchor="end">{v:.3f}</text>')
        v += step
    out += k_axis(RT + RH)
    out.append(f'<line x1="{L}" y1="{RT}" x2="{L}" y2="{RT + RH}" stroke="black"/>')
    out.append(y_title(RT, RT + RH, "pairs / configs"))
    out.append(
        f'<text x="{L + 8}" y="{RT - 8}">looping pairs per configuration with a looping '
        f"start (loop_pairs / cfg_any), linear scale</text>"
    )
    out += lines(ratio, x, ry, "#9467bd")
    out += [marker("circle", x(k), ry(v), "#9467bd") for k, v in ratio]
    # Legend: marker and line style of each series.
    for i, (key, label, colour, kind) in enumerate(series + [
        (None, "loop_pairs / cfg_any (lower panel)", "#9467bd", "circle")
    ]):
        ly = LEG + 18 * i
        extra = ' stroke-width="7" stroke-opacity="0.3"' if kind == "ring" else ""
        out.append(f'<line x1="{L}" y1="{ly - 4}" x2="{L + 28}" y2="{ly - 4}" stroke="{colour}"{extra}/>')
        out.append(marker(kind, L + 14, ly - 4, colour))
        out.append(f'<text x="{L + 36}" y="{ly}">{label}</text>')
    out.append(f'<text x="{W - R}" y="{LEG}" text-anchor="end">solid: odd k, dashed: even k</text>')
    out.append(
        f'<text x="{W - R}" y="{LEG + 18}" text-anchor="end">'
        f"k with no loop are not drawn (log scale)</text>"
    )
    out.append(
        f'<text x="{W - R}" y="{LEG + 36}" text-anchor="end">'
        f"looping pairs exceed looping configurations by at most "
        f"{(max(v for _, v in ratio) - 1) * 100:.1f} %:</text>"
    )
    out.append(
        f'<text x="{W - R}" y="{LEG + 54}" text-anchor="end">'
        f"on the log scale the rings sit round the squares</text>"
    )
    out.append("</svg>")
    Path(svg).write_text("\n".join(out) + "\n")


USAGE = ("usage: census-data.py collect [--into DATA.jsonl] RUN_DIR... | "
         "plot JSONL SVG | cycles CYCLES.jsonl...")

if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "collect":
        dirs, into = args[1:], None
        if dirs[0] == "--into":
            if len(dirs) < 3 or not dirs[1]:
                fail(USAGE)
            into, dirs = dirs[1], dirs[2:]
        if any(d.startswith("-") for d in dirs):
            fail(f"unknown option {next(d for d in dirs if d.startswith('-'))}; {USAGE}")
        collect(dirs, into)
    elif len(args) >= 2 and args[0] == "cycles":
        for f in args[1:]:
            print(json.dumps(cycles(f), separators=(",", ":")))
    elif len(args) == 3 and args[0] == "plot":
        plot(args[1], args[2])
    else:
        fail(USAGE)
