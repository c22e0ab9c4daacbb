#!/usr/bin/env python3
"""How long principal lines get: the lines of COUNT random positions of
each level asked for, followed up to 10,000 plies, by the Python package
(`pip install ./python`). One line per level: median, 99th percentile and
longest line in plies, how many are longer than 200, how they end.

    scripts/line-lengths.py DB LEVELS COUNT     # e.g. db 12,14,16 1500
"""
import random
import sys
import time

import mancaladb

db = mancaladb.open(sys.argv[1])
random.seed(36)
for n in map(int, sys.argv[2].split(",")):
    size = mancaladb.level_size(n)
    lengths, ends, start = [], {}, time.time()
    for _ in range(int(sys.argv[3])):
        line = db.line(mancaladb.unrank(n, random.randrange(size)), max_plies=10_000)
        lengths.append(len(line.plies))
        ends[line.end] = ends.get(line.end, 0) + 1
    lengths.sort()
    print(f"{n}\tmedian {lengths[len(lengths) // 2]}\tp99 {lengths[int(0.99 * len(lengths))]}"
          f"\tmax {lengths[-1]}\tover 200: {sum(x > 200 for x in lengths)}\t{ends}"
          f"\t{time.time() - start:.1f} s", flush=True)
