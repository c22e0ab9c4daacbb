#!/usr/bin/env python3
"""Times one principal-line call (`query::principal_line`, through the
Python package's `Database.line`) by `max_plies`: 1, the first move an
engine plays (the search for progress at the first position), and 400
(`LINE_PLIES`, a whole line), for BENCHMARKS.md ("Principal lines").

    python scripts/bench-line-call.py DIR LEVELS BOARDS    # e.g. db 14,16,20 1000

DIR holds the levels (`mancaladb build --max-seeds 20 --db DIR`); BOARDS
random stored boards of each level, seed 29. Prints the median, the 90th
percentile and the largest time of a call. Run with the package
installed (see scripts/python-bench.py)."""

import random
import statistics
import sys
import time

import mancaladb

LINE_PLIES = 400  # the default of Database.line, as of query::LINE_PLIES

def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    db_dir, levels, n = sys.argv[1], [int(x) for x in sys.argv[2].split(",")], int(sys.argv[3])
    rng = random.Random(29)
    with mancaladb.open(db_dir) as db:
        for level in levels:
            size = len(db.level(level))
            boards = [mancaladb.unrank(level, rng.randrange(size)) for _ in range(n)]
            for plies in (1, LINE_PLIES):
                db.line(boards[0], max_plies=plies)  # the level's first read
                times = []
                for b in boards:
                    t = time.perf_counter()
                    db.line(b, max_plies=plies)
                    times.append(time.perf_counter() - t)
                times.sort()
                print(
                    f"level {level} max_plies {plies}: median {statistics.median(times) * 1e6:.0f} us, "
                    f"90th percentile {times[int(0.9 * n)] * 1e6:.0f} us, "
                    f"largest {times[-1] * 1e6:.0f} us ({n} boards)"
                )


if __name__ == "__main__":
    main()
