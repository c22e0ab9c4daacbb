#!/usr/bin/env python3
"""Measures the Python package's figures for BENCHMARKS.md: probes per
second (one board per call, and a (k, 12) array per call), boards walked
per second, and the time to load a whole level with `level(n)`.

    python scripts/python-bench.py --db DIR [--seeds 16] [--load-db DIR2 --load 24]

DIR holds levels 0..seeds (`mancaladb build --max-seeds 16 --db DIR`);
probes go to random stored positions of level `seeds`. `--load` times
`level(n)` in a fresh handle, from the raw copy under DIR2/raw (mapped) and,
with `--packed DIR3` (tables only), decompressed. Run with the package
installed: `VENV=/tmp/pv bash scripts/python-test.sh` keeps the environment
it makes (without VENV it is removed), then `/tmp/pv/bin/python
scripts/python-bench.py ...`."""

import argparse
import sys
import time

import numpy as np

import mancaladb


def timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--seeds", type=int, default=16)
    p.add_argument("--probes", type=int, default=100_000)
    p.add_argument("--single", type=int, default=20_000)
    p.add_argument("--load-db")
    p.add_argument("--packed")
    p.add_argument("--load", type=int)
    a = p.parse_args()
    # Each without the other would be left out without a word.
    if (a.load is None) != (a.load_db is None and a.packed is None):
        print("python-bench.py: --load N needs --load-db DIR2 or --packed DIR3, "
              "and they need --load", file=sys.stderr)
        sys.exit(2)

    n = a.seeds
    size = mancaladb.level_size(n)
    walked, t = timed(lambda: mancaladb.boards(n, 0, min(size, 1_000_000)))
    print(f"boards({n}, 0, {len(walked)}): {t:.3f} s ({len(walked) / t:,.0f} boards/s)")
    rng = np.random.default_rng(2026)
    index = rng.integers(0, size, a.probes)
    all_boards, t = timed(lambda: mancaladb.boards(n))
    print(f"boards({n}) (whole level, {size} boards): {t:.3f} s ({size / t:,.0f} boards/s)")
    sample = all_boards[index]
    del all_boards
    with mancaladb.open(a.db) as db:
        db.value(sample[0])  # open the level
        rows = [tuple(r) for r in sample[: a.single].tolist()]
        _, t = timed(lambda: [db.value(r) for r in rows])
        print(f"value(), one board per call, {len(rows)} random level-{n} boards: "
              f"{t:.3f} s ({len(rows) / t:,.0f} probes/s)")
        # The first pass also maps in the pages of the level it touches.
        # Per CPU second too: on a shared machine the wall time wanders.
        for what in ("first", "second"):
            cpu = time.process_time()
            vals, t = timed(lambda: db.values(sample))
            cpu = time.process_time() - cpu
            print(f"values(), one (k, 12) array, k = {len(sample)}, {what} call: "
                  f"{t:.3f} s ({len(sample) / t:,.0f} probes/s; "
                  f"{len(sample) / cpu:,.0f} per CPU second)")
        level, t = timed(lambda: db.level(n))
        print(f"level({n}) (for the check below): {t:.3f} s")
        assert np.array_equal(vals, level[index]), "values() disagrees with level()"
        got, t = timed(lambda: level[mancaladb.ranks(sample)])
        assert np.array_equal(got, vals)
        print(f"level({n})[ranks(boards)], k = {len(index)}: {t:.3f} s ({len(index) / t:,.0f} probes/s)")
    if a.load is not None:
        for label, where in (("raw copy, mapped", a.load_db), ("tables only, decompressed", a.packed)):
            if where is None:
                continue
            with mancaladb.open(where) as db:
                level, t = timed(lambda: db.level(a.load))
                total, t2 = timed(lambda: int(level.sum(dtype=np.int64)))
                print(f"level({a.load}) from {label}: {t:.2f} s for {len(level):,} values; "
                      f"first pass over it (sum {total}): {t2:.2f} s")


if __name__ == "__main__":
    try:
        main()
    except mancaladb.MancalaDbError as e:  # a level not built, a damaged table
        print(f"python-bench.py: {e}", file=sys.stderr)
        sys.exit(2)
