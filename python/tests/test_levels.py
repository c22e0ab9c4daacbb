"""Whole levels: equal byte for byte to `mancaladb export --format vu`,
from raw maps, decompressed tables and VU files alike."""

import numpy as np
import pytest

import mancaladb


def test_levels_equal_the_vu_export(db_dir, vu_dir, tables_only):
    with mancaladb.open(db_dir) as mapped, mancaladb.open(tables_only) as packed, \
            mancaladb.open(vu=vu_dir) as vu:
        assert vu.levels() == mapped.levels() == packed.levels() == list(range(17))
        for n in range(17):
            want = (vu_dir / f"scores.{n}").read_bytes()
            for db in (mapped, packed, vu):
                a = db.level(n)
                assert a.dtype == np.int8 and a.shape == (mancaladb.level_size(n),)
                assert a.tobytes() == want, (db, n)


def test_a_level_is_read_only_shared_and_outlives_its_database(db_dir):
    db = mancaladb.open(db_dir)
    a = db.level(14)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1
    b = db.level(14)
    assert np.shares_memory(a, b)
    db.close()
    # The array keeps its data after the database is closed.
    pits = "10 0 0 0 0 2 1 1 0 0 0 0"
    with mancaladb.open(db_dir) as other:
        assert a[mancaladb.rank(pits)] == other.value(pits)
    with pytest.raises(ValueError, match="closed"):
        db.level(14)


def test_values_index_the_level_by_rank(db_dir):
    with mancaladb.open(db_dir) as db:
        level = db.level(16)
        for pits in ["1 1 1 1 1 2 4 2 3 0 0 0", "3 0 1 2 0 4 0 6 0 0 0 0", "0 0 0 0 0 0 0 0 0 0 0 16"]:
            assert level[mancaladb.rank(pits)] == db.value(pits)
        # A training set: boards and values of a whole level, aligned.
        boards = mancaladb.boards(10)
        values = db.level(10)
        assert len(boards) == len(values)
        assert np.array_equal(db.values(boards), values)
