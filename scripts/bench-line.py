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
script with the binary's error.
"""

import argparse
import json
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True)
    p.add_argument("--levels", required=True, help="comma-separated seed counts")
    p.add_argument("--boards", type=int, default=20)
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("bins", nargs="+")
    a = p.parse_args()
    levels = [int(n) for n in a.levels.split(",")]
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
                    sys.exit(f"bench-line.py: {b}: {out.stderr.strip()}")
                j = json.loads(out.stdout)
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
