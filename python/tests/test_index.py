"""The numbering: rank, unrank and boards against an independent
enumeration of whole levels, and index vectors."""

import itertools

import numpy as np
import pytest

import mancaladb


def stored_boards(seeds):
    """Every board of `seeds` seeds with an empty opponent pit, in the
    published order: lexicographic by (x11, ..., x0), by brute force."""
    out = []
    # Stars and bars: 11 bars among seeds + 11 places.
    for bars in itertools.combinations(range(seeds + 11), 11):
        edges = (-1,) + bars + (seeds + 11,)
        b = tuple(edges[i + 1] - edges[i] - 1 for i in range(12))
        if 0 in b[6:]:
            out.append(b)
    out.sort(key=lambda b: b[::-1])
    return out


@pytest.mark.parametrize("seeds", range(0, 8))
def test_whole_levels_round_trip(seeds):
    want = stored_boards(seeds)
    assert mancaladb.level_size(seeds) == len(want)
    walked = mancaladb.boards(seeds)
    assert walked.dtype == np.uint8 and walked.shape == (len(want), 12)
    assert [tuple(r) for r in walked.tolist()] == want
    for i, b in enumerate(want):
        assert mancaladb.rank(b) == i
        assert mancaladb.unrank(seeds, i) == b


def test_index_vectors():
    # The specification's test vectors (issue 2), which tests/it/encoder.rs
    # also counts from the numbering's definition.
    for pits, index in [
        ("1 1 1 1 1 2 4 2 3 0 0 0", 588_953),
        ("5 0 0 0 0 0 0 0 0 0 0 0", 0),
        ("0 0 0 0 0 0 0 0 0 0 0 5", 4367),
        ("2 2 2 2 2 2 2 2 2 0 0 0", 979_664),
        ("3 0 1 2 0 4 0 6 0 1 2 1", 42_131_429),
        ("4 4 4 4 4 4 4 4 4 4 4 0", 14_936_534_957),
    ]:
        b = tuple(int(x) for x in pits.split())
        assert mancaladb.rank(pits) == index
        assert mancaladb.unrank(sum(b), index) == b
        # A range starting there walks from it.
        assert tuple(mancaladb.boards(sum(b), index, index + 1)[0]) == b
    assert mancaladb.level_size(16) == 12_685_179
    assert mancaladb.level_size(48) == 203_648_015_935


def test_ranges_walk_across_a_level():
    # Slices of a level agree with the whole walk and with unrank.
    whole = mancaladb.boards(9)
    for start, stop in [(0, 0), (0, 1), (5, 17), (100_000, 100_500), (167_590, 167_596)]:
        part = mancaladb.boards(9, start, stop)
        assert np.array_equal(part, whole[start:stop])
        if stop > start:
            assert tuple(part[-1]) == mancaladb.unrank(9, stop - 1)


def test_bad_indices_are_value_errors():
    with pytest.raises(ValueError, match="index 4368 outside level 5, which has 4368 positions"):
        mancaladb.unrank(5, 4368)
    with pytest.raises(ValueError, match="outside level 5"):
        mancaladb.boards(5, 10, 4369)
    with pytest.raises(ValueError, match="indices 10..9: the start is past the end"):
        mancaladb.boards(5, 10, 9)
    # A start past the level with the end left out: the start is named, not
    # an end that was not given ("indices 4369..4368: the start is past
    # the end").
    with pytest.raises(ValueError, match=r"^start 4369 outside level 5, which has 4368 positions"):
        mancaladb.boards(5, 4369)
    with pytest.raises(ValueError, match="levels go up to 48"):
        mancaladb.level_size(49)
    # Level 48 as boards is 2.4 TB: no memory has it, and that is an
    # exception, not an abort.
    # Refused against the memory available now (MemAvailable), before any
    # allocation: Linux would grant much more than it has and then kill a
    # process as the pages fill. (Not tested just above what is available:
    # memory freed meanwhile would let that test fill the machine.)
    with pytest.raises(MemoryError,
                       match="203648015935 boards: 2443776191220 bytes asked for; .* of memory are available"):
        mancaladb.boards(48)
    with pytest.raises(ValueError, match="not stored"):
        mancaladb.rank([1] * 12)
    with pytest.raises(ValueError, match="level -1: a level is a seed count, 0 or more"):
        mancaladb.unrank(-1, 0)


def test_vectorised_ranks_invert_boards():
    rows = mancaladb.boards(12, 5000, 9000)
    assert mancaladb.ranks(rows).tolist() == list(range(5000, 9000))
    assert mancaladb.ranks(rows.astype(np.int16)).dtype == np.uint64
    bad = rows.copy()
    bad[7, 6:] = 1
    with pytest.raises(ValueError, match="row 7: .* is not stored"):
        mancaladb.ranks(bad)
