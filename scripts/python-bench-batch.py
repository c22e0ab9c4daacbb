#!/usr/bin/env python3
"""Measures the Python package's whole-level batch calls for BENCHMARKS.md:
`values()` and `move_values()` over every board of a level, the longest
time another Python thread waited for the GIL during each call, and the
memory a call costs for boards given as `int32`.

    python scripts/python-bench-batch.py --db DIR [--seeds 16] [--sample 20000]

DIR holds levels 0..seeds (`mancaladb build --max-seeds 16 --db DIR`). A
package without `move_values` (an older commit, for a side-by-side run) is
measured without it. The GIL: a thread appends the time every 0.5 ms
(sleeping releases the GIL) while the switch interval is 100 s, so the
interpreter never takes the GIL from the caller: the longest gap between
two ticks during a call is the longest the call held the GIL. Memory: the
growth of this process's peak RSS (`ru_maxrss`) over the call, run first
for `int32`, so that the peak is that call's."""

import argparse
import resource
import sys
import threading
import time

import numpy as np

import mancaladb


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--seeds", type=int, default=16)
    p.add_argument("--sample", type=int, default=20_000)
    a = p.parse_args()

    with mancaladb.open(a.db) as db:
        level = mancaladb.boards(a.seeds)
        k = len(level)
        wide = level.astype(np.int32)
        db.values(level[:1000])  # open the levels
        before = peak_mib()
        t = time.perf_counter()
        db.values(wide)
        print(f"values(int32 ({k}, 12)): {time.perf_counter() - t:.2f} s, "
              f"peak RSS +{peak_mib() - before:.0f} MiB (the boards take {wide.nbytes >> 20} MiB)")
        del wide

        ticks = []
        stop = threading.Event()

        def tick():
            while not stop.is_set():
                ticks.append(time.perf_counter())
                time.sleep(0.0005)

        ticker = threading.Thread(target=tick)
        ticker.start()
        interval = sys.getswitchinterval()
        sys.setswitchinterval(100)
        calls = [("values", db.values)]
        if hasattr(db, "move_values"):
            calls.append(("move_values", db.move_values))
        try:
            for name, call in calls:
                for dtype in (np.uint8, np.int64):
                    boards = level.astype(dtype)
                    start = time.perf_counter()
                    call(boards)
                    end = time.perf_counter()
                    inside = [x for x in ticks if start <= x <= end]
                    held = np.diff([start] + inside + [end]).max()
                    print(f"{name}({np.dtype(dtype).name} ({k}, 12)): {end - start:.2f} s "
                          f"({(end - start) / k * 1e9:.0f} ns a board), GIL held at most "
                          f"{held:.3f} s at a time")
        finally:
            sys.setswitchinterval(interval)
            stop.set()
            ticker.join()

        sample = level[:: max(1, k // a.sample)][: a.sample]
        t = time.perf_counter()
        for b in sample:
            db.moves(b)
        per = (time.perf_counter() - t) / len(sample)
        print(f"moves(), one board per call, {len(sample)} boards: {per * 1e6:.1f} us a board")


if __name__ == "__main__":
    try:
        main()
    except mancaladb.MancalaDbError as e:  # a level not built, a damaged table
        print(f"python-bench-batch.py: {e}", file=sys.stderr)
        sys.exit(2)
