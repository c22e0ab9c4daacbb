#!/usr/bin/env python3
"""Latency of `query --line` (the principal line), side by side.

Runs `BIN query --db DB --json --line BOARD` for BOARDS random positions of
each level in LEVELS, with each binary given in turn per board (old and new
revisions alternate, so that the machine's noise falls on both), and prints
per binary and level: median and largest wall time per call, the median
line length, and how the lines end (a "cycle" whose repeated position is
not worth 0, which binaries before 2657d5d printed as endless play, is
counted apart).

    scripts/bench-line.py --db DIR --levels 20,30,36 --boards 20 OLD_BIN NEW_BIN

The boards come from a fixed seed (--seed), so two runs time the same
positions. A board the tables cannot answer (a level not there) stops the
script with the binary's error. A binary given twice is refused (its
timings would be one row): to time a binary against itself, give a copy.
Exit status: 0 done, 2 bad arguments or a binary that failed (one line on
standard error).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter


def board(rng, seeds):
    """A random board of `seeds` seeds in 12 pits (stars and bars)."""
    bars = sorted(rng.sample(range(seeds + 11), 11))
    edges = [-1] + bars + [seeds + 11]
    return [edges[i + 1] - edges[i] - 1 for i in range(12)]


def fail(message):
    """Stops with a one-line error and exit status 2."""
    print(f"bench-line.py: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True)
    p.add_argument("--levels", required=True, help="comma-separated seed counts")
    p.add_argument("--boards", type=int, default=20)
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("bins", nargs="+")
    a = p.parse_args()
    try:
        levels = [int(n) for n in a.levels.split(",")]
    except ValueError:
        levels = []
    if not levels or not all(0 <= n <= 48 for n in levels):
        fail(f"--levels must be seed counts 0..48 separated by commas, not {a.levels!r}")
    if a.boards < 1:
        fail(f"--boards must be 1 or more, not {a.boards}")
    seen = {}
    for b in a.bins:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            fail(f"{b} is not an executable file")
        real = os.path.realpath(b)
        if real in seen:
            fail(f"{b} is the binary {seen[real]} again (its timings would be merged); "
                 f"to time a binary against itself, give a copy")
        seen[real] = b
    rng = random.Random(a.seed)
    print(f"# query --line on {a.db}; {a.boards} boards per level, seed {a.seed}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| binary | level | median (s) | largest (s) | median plies | ends |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in levels:
        boards = [board(rng, n) for _ in range(a.boards)]
        times = {b: [] for b in a.bins}
        plies = {b: [] for b in a.bins}
        ends = {b: Counter() for b in a.bins}
        for pits in boards:
            for b in a.bins:
                start = time.perf_counter()
                out = subprocess.run(
                    [b, "query", "--db", a.db, "--json", "--line", *map(str, pits)],
                    capture_output=True, text=True)
                took = time.perf_counter() - start
                if out.returncode != 0:
                    fail(f"{b}: {out.stderr.strip()}")
                try:
                    j = json.loads(out.stdout)
                except ValueError:
                    fail(f"{b}: its answer is not JSON: {out.stdout[:200]!r}")
                times[b].append(took)
                plies[b].append(len(j["line"]))
                end = j["line_end"]
                # A repeat at a value other than 0 was called endless play
                # before 2657d5d: counted apart.
                if end == "cycle" and j["line"][j["cycle_ply"]]["value"] != 0:
                    end = "cycle at a value other than 0"
                ends[b][end] += 1
        for b in a.bins:
            e = ", ".join(f"{k} {v}" for k, v in sorted(ends[b].items()))
            print(f"| {b} | {n} | {statistics.median(times[b]):.3f} | {max(times[b]):.3f} "
                  f"| {statistics.median(plies[b]):.0f} | {e} |")


if __name__ == "__main__":
    main()
