#!/usr/bin/env python3
"""How long principal lines get: the lines of COUNT random positions of
each level asked for, followed up to 10,000 plies, by the Python package
(`pip install ./python`). One line per level: median, 99th percentile and
longest line in plies, how many are longer than 200, how they end; and
what a call costs (`Database.line`, which is `query::principal_line`):
median, 90th percentile and largest time of the first move alone
(`max_plies=1`, what an engine plays) and of the whole line.

    scripts/line-lengths.py DB LEVELS COUNT     # e.g. db 12,14,16 1500

Exit status: 0 done, 2 bad arguments, or a directory or level that is not
there (one line on standard error).
"""
import random
import sys
import time


def fail(message):
    """Stops with a one-line error and exit status 2."""
    print(f"line-lengths.py: {message}", file=sys.stderr)
    sys.exit(2)


USAGE = "usage: line-lengths.py DB LEVELS COUNT (e.g. db 12,14,16 1500)"
if len(sys.argv) != 4:
    fail(USAGE)
try:
    levels = [int(n) for n in sys.argv[2].split(",")]
    count = int(sys.argv[3])
except ValueError:
    fail(f"LEVELS must be seed counts separated by commas and COUNT a number; {USAGE}")
if not all(0 <= n <= 48 for n in levels) or count < 1:
    fail(f"LEVELS must be seed counts 0..48 and COUNT 1 or more; {USAGE}")

# After the arguments: a usage error needs no package.
import mancaladb  # noqa: E402

try:
    db = mancaladb.open(sys.argv[1])
except OSError as e:
    fail(f"cannot open {sys.argv[1]}: {e.strerror}")


def spread(times):
    """Median, 90th percentile and largest of `times`, in µs: `a/b/c`."""
    times.sort()
    picks = (times[len(times) // 2], times[int(0.9 * len(times))], times[-1])
    return "/".join(f"{t * 1e6:.0f}" for t in picks)


random.seed(36)
for n in levels:
    size = mancaladb.level_size(n)
    lengths, ends, first, whole, start = [], {}, [], [], time.time()
    for _ in range(count):
        board = mancaladb.unrank(n, random.randrange(size))
        try:
            t0 = time.perf_counter()
            db.line(board, max_plies=1)
            t1 = time.perf_counter()
            line = db.line(board, max_plies=10_000)
            t2 = time.perf_counter()
        except mancaladb.MancalaDbError as e:
            fail(str(e))
        first.append(t1 - t0)
        whole.append(t2 - t1)
        lengths.append(len(line.plies))
        ends[line.end] = ends.get(line.end, 0) + 1

    lengths.sort()
    print(f"{n}\tmedian {lengths[len(lengths) // 2]}\tp99 {lengths[int(0.99 * len(lengths))]}"
          f"\tmax {lengths[-1]}\tover 200: {sum(x > 200 for x in lengths)}\t{ends}"
          f"\tfirst move {spread(first)} µs\tline {spread(whole)} µs"
          f"\t{time.time() - start:.1f} s", flush=True)
