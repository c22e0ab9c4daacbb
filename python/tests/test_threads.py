"""Thread safety: probes, vectorised probes and level loads from a thread
pool agree with one thread's answers, and long calls release the GIL."""

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import mancaladb
from conftest import in_forked_child


def test_concurrent_probes_agree(db_dir, tables_only):
    boards = mancaladb.boards(13)
    chunks = [boards[i:i + 20_000] for i in range(0, len(boards), 20_000)]
    for where in (db_dir, tables_only):
        with mancaladb.open(where) as db:
            want = db.level(13)

            def single(chunk_index):
                rows = chunks[chunk_index][::97]
                return [db.value(r) for r in rows]

            def vector(chunk_index):
                return db.values(chunks[chunk_index])

            with ThreadPoolExecutor(max_workers=8) as pool:
                singles = list(pool.map(single, range(len(chunks))))
                vectors = list(pool.map(vector, range(len(chunks))))
                levels = list(pool.map(db.level, [11, 12, 11, 12, 10, 10, 9, 9]))
            for i, chunk in enumerate(chunks):
                lo = i * 20_000
                assert singles[i] == want[lo:lo + len(chunk):97].tolist()
                assert np.array_equal(vectors[i], want[lo:lo + len(chunk)])
            for n, a in zip([11, 12, 11, 12, 10, 10, 9, 9], levels):
                assert np.array_equal(a, db.level(n))


def test_a_level_asked_for_by_several_threads_is_decompressed_once(tables_only):
    # Without raw copies, level() decompresses the table; threads asking
    # together wait for that one copy rather than each make their own.
    with mancaladb.open(tables_only) as db:
        with ThreadPoolExecutor(max_workers=4) as pool:
            arrays = list(pool.map(db.level, [16] * 4))
        assert all(np.shares_memory(arrays[0], a) for a in arrays[1:])


def test_concurrent_index_mappings_agree():
    def walk(start):
        return mancaladb.boards(14, start, start + 50_000)

    starts = list(range(0, 1_000_000, 50_000))
    with ThreadPoolExecutor(max_workers=4) as pool:
        parts = list(pool.map(walk, starts))
    assert np.array_equal(np.concatenate(parts), mancaladb.boards(14, 0, 1_000_000))


def test_long_calls_let_other_threads_run(db_dir, tables_only):
    # Another thread counts, sleeping a millisecond between counts (which
    # releases the GIL). With a switch interval of 100 s the interpreter
    # never takes the GIL from this thread, so the count moves during a
    # call only if the call itself lets the GIL go. A call of a few
    # milliseconds may end before a busy machine runs the counting thread:
    # each is made up to 20 times.
    boards = mancaladb.boards(14)
    state = {"count": 0, "stop": False}

    def count():
        while not state["stop"]:
            state["count"] += 1
            time.sleep(0.001)

    interval = sys.getswitchinterval()
    counter = threading.Thread(target=count)
    counter.start()
    sys.setswitchinterval(100)
    try:
        with mancaladb.open(db_dir) as db, mancaladb.open(tables_only) as packed:
            for name, call in [
                ("values", lambda: db.values(boards)),
                ("move_values", lambda: db.move_values(boards[:200_000])),
                ("ranks", lambda: mancaladb.ranks(boards)),
                ("boards", lambda: mancaladb.boards(14)),
                ("level", lambda: packed.level(16)),
            ]:
                before = state["count"]
                for _ in range(20):
                    call()  # (the level is not kept: loaded each time)
                    if state["count"] > before:
                        break
                assert state["count"] > before, f"{name}() held the GIL throughout"
    finally:
        sys.setswitchinterval(interval)
        state["stop"] = True
        counter.join()


def test_a_child_forked_while_a_thread_loads_a_level_uses_what_it_inherits(tables_only):
    # A level being decompressed by another thread at the fork was held
    # for good in the child (that thread is not there), and the child's
    # first use of the level waited for ever; so could a lock a probe
    # held. The child opens its handles afresh now. Each try forks at
    # another moment of a level's load; every child must answer.
    want = mancaladb.open(tables_only).level(16)[::1000].copy()
    boards = mancaladb.boards(16)[::1000]
    for attempt in range(12):
        db = mancaladb.open(tables_only)
        loading = threading.Thread(target=db.level, args=(16,))
        loading.start()
        time.sleep(attempt * 0.002)

        def child():
            return (np.array_equal(db.level(16)[::1000], want)
                    and np.array_equal(db.values(boards), want))

        assert in_forked_child(child, 30), f"try {attempt}: the child hung or answered wrong"
        loading.join()
        db.close()
