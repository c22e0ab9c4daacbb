"""Errors: the command line's messages as ValueError, MissingLevelError
(a KeyError), CorruptTableError, OSError; never a crash."""

import itertools
import os
import shutil

import numpy as np
import pytest

import mancaladb
from conftest import cli

BAD_BOARDS = [
    "1 2 3",
    "1 1 1 1 1 1 1 1 1 1 1 -1",
    "1 1 1 1 1 1 1 1 1 1 1 x",
    "1 1 1 1 1 1 1 1 1 1 1 49",
    "9 9 9 9 9 9 0 0 0 0 0 0",
]


@pytest.mark.parametrize("pits", BAD_BOARDS)
def test_bad_boards_get_the_command_lines_message(db_dir, pits):
    out = cli("query", "--db", str(db_dir), *pits.split(), check=False)
    assert out.returncode == 2
    line = out.stderr.strip()
    assert line.startswith("mancaladb: ")
    want = line[len("mancaladb: "):]
    words = pits.split()
    as_numbers = [int(w) if w.lstrip("-").isdigit() else w for w in words]
    with mancaladb.open(db_dir) as db:
        forms = [pits]
        if all(isinstance(w, int) for w in as_numbers):
            forms += [as_numbers, tuple(as_numbers), np.array(as_numbers)]
        for form in forms:
            with pytest.raises(ValueError) as e:
                db.value(form)
            assert str(e.value) == want


@pytest.mark.parametrize("item", [1.5, "3", None, b"3"])
def test_counts_that_are_not_integers_are_type_errors_for_one_board_and_many(db_dir, item):
    with mancaladb.open(db_dir) as db:
        board = [1] * 11 + [item]
        with pytest.raises(TypeError, match=f"pit counts must be integers, got {type(item).__name__} "):
            db.value(board)
        # Rows holding None are an object array, read item by item.
        many = "row 0: pit counts must be integers" if item is None else "boards must hold integers"
        with pytest.raises(TypeError, match=many):
            db.values([board])
        # NumPy integers are integers.
        assert db.value([np.int16(1)] * 11 + [np.uint8(1)]) == db.value("1 " * 12)


@pytest.mark.parametrize("dtype", ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", ">i4", ">u8"])
def test_every_integer_type_gives_the_same_values_and_errors(db_dir, dtype):
    # Each is read in place (no int64 copy: 2.8 GB more for 29.8 M int32
    # boards), another byte order converted; the answers are int64's.
    boards = mancaladb.boards(12, 0, 500)
    with mancaladb.open(db_dir) as db:
        want = db.values(boards.astype(np.int64))
        assert np.array_equal(db.values(boards.astype(dtype)), want)
        assert np.array_equal(mancaladb.ranks(boards.astype(dtype)), np.arange(500))
        assert np.array_equal(db.move_values(boards.astype(dtype)),
                              db.move_values(boards.astype(np.int64)))
        too_many = boards.astype(dtype)
        too_many[3, 4] = 100
        with pytest.raises(ValueError, match="row 3: an Oware board: pit count 100 exceeds the 48"):
            db.values(too_many)
        if np.dtype(dtype).kind == "i":
            negative = boards.astype(dtype)
            negative[7, 0] = -1
            with pytest.raises(ValueError, match="row 7: an Oware board: pit count -1 is negative"):
                mancaladb.ranks(negative)
        if np.dtype(dtype).itemsize > 1:
            wide = boards.astype(dtype)
            wide[2, 11] = 300  # past a byte: refused, not wrapped to 44
            with pytest.raises(ValueError, match="row 2: an Oware board: pit count 300 exceeds"):
                db.values(wide)
            # The first bad row is named, also when a later one is past a
            # byte (that one was named).
            wide[1, 0] = 49
            with pytest.raises(ValueError, match="row 1: an Oware board: pit count 49 exceeds"):
                db.move_values(wide)
        # No boards at all, of every type: no values (not "row 0").
        for none in (np.empty((0, 12), dtype), boards.astype(dtype)[:0]):
            assert db.values(none).shape == (0,)
            assert db.move_values(none).shape == (0, 6)
            assert mancaladb.ranks(none).shape == (0,)


def test_unaligned_arrays_are_converted_not_read_in_place(db_dir):
    # NumPy can place int32 counts at an odd address (a buffer read at an
    # offset): read in place, that was undefined behaviour.
    boards = mancaladb.boards(12, 0, 300)
    buf = bytes(1) + boards.astype("<i4").tobytes()
    odd = np.frombuffer(buf, "<i4", offset=1).reshape(300, 12)
    assert not odd.flags.aligned
    with mancaladb.open(db_dir) as db:
        assert np.array_equal(db.values(odd), db.values(boards))
        assert np.array_equal(mancaladb.ranks(odd), np.arange(300))


def test_bad_rows_name_the_row(db_dir):
    with mancaladb.open(db_dir) as db:
        rows = np.zeros((3, 12), dtype=np.int64)
        rows[2, 0] = -1
        with pytest.raises(ValueError, match="row 2: an Oware board: pit count -1 is negative"):
            db.values(rows)
        with pytest.raises(ValueError, match=r"\(k, 12\)"):
            db.values(np.zeros((3, 11), dtype=np.uint8))
        with pytest.raises(TypeError, match="boards must hold integers, got float32"):
            db.values(np.zeros((3, 12), dtype=np.float32))
        # NumPy counts timedelta64 among its integers; counts they are not.
        with pytest.raises(TypeError, match="boards must hold integers, got timedelta64"):
            db.values(np.ones((1, 12), dtype="m8[D]"))
        # A row that is text, None or a number is no row of counts (text was
        # counted in characters, None named no row); empty rows are short.
        good = [1] * 12
        for row in ["1 1 1 1 1 2 4 2 3 0 0 0", None, 5]:
            with pytest.raises(TypeError, match=f"row 1: a board in a batch is a row of twelve "
                                                f"integer counts, got {type(row).__name__}"):
                db.values([good, row])
        with pytest.raises(ValueError, match="row 0: an Oware board has 12 pits, got 0 numbers"):
            db.values([[]])
        # The first bad row, whatever is wrong with it.
        with pytest.raises(ValueError, match="row 0: an Oware board has 12 pits, got 11 numbers"):
            db.values([[1] * 11, None])
        assert mancaladb.boards(3, 5, 5).shape == (0, 12)
        with pytest.raises(TypeError, match="a board is a string or twelve counts, got int"):
            db.value(5)
        # Bytes are no board, not even as their character codes.
        for text in [b"1 1 1 1 1 2 4 2 3 0 0 0", bytes(12), bytearray(12)]:
            with pytest.raises(TypeError, match="a board is a string or twelve counts"):
                db.value(text)
        # Rows of any integer type get the same shape check, uint8 too.
        with pytest.raises(ValueError, match=r"\(k, 12\) array, got shape \(12,\)"):
            db.values(np.zeros(12, dtype=np.uint8))
        # Counts past int64 are too large, not wrapped to negative ones.
        huge = np.zeros((2, 12), dtype=np.uint64)
        huge[1, 0] = 2**63 + 7
        with pytest.raises(ValueError, match=f"row 1: an Oware board: pit count {2**63 + 7} exceeds"):
            db.values(huge)
        with pytest.raises(ValueError, match=f"pit count {2**64 - 1} exceeds the 48 seeds"):
            db.value([2**64 - 1] + [0] * 11)
        # So are they in lists of Python integers, which NumPy makes into an
        # object or float64 array: the single board's message, with its row,
        # never a TypeError naming that dtype.
        for row, want in [
            ([2**64] + [0] * 11, f"pit count {2**64} exceeds the 48 seeds"),
            ([-1, 2**63] + [0] * 10, "pit count -1 is negative"),
            ([-2**70] + [0] * 11, f"pit count {-2**70} is negative"),
        ]:
            with pytest.raises(ValueError, match=f"row 1: an Oware board: {want}"):
                db.values([[0] * 12, row])
            with pytest.raises(ValueError, match=f"row 1: an Oware board: {want}"):
                mancaladb.ranks([[0] * 12, row])
        with pytest.raises(TypeError, match="got float64"):
            db.values([[0.5] * 12])
        # Rows of different lengths: the one that is no board is named.
        for ragged in [[[1] * 12, [1] * 11], ([1] * 13, np.ones(12, dtype=np.uint8))]:
            n = len(ragged[0]) if len(ragged[0]) != 12 else len(ragged[1])
            row = 0 if len(ragged[0]) != 12 else 1
            want = f"row {row}: an Oware board has 12 pits, got {n} numbers"
            with pytest.raises(ValueError, match=want):
                db.values(ragged)
            with pytest.raises(ValueError, match=want):
                mancaladb.ranks(ragged)
        # A sequence far too long is refused by its length, not read
        # (range(2**61) asked for 16 EiB); an iterator is read no further
        # than one count too many.
        for many in [range(2**61), list(range(13))]:
            with pytest.raises(ValueError, match=f"an Oware board has 12 pits, got {len(many)} numbers"):
                db.value(many)
        # No len() (past sys.maxsize) or none at all.
        for endless in [range(2**64), iter(range(10**12))]:
            with pytest.raises(ValueError, match="an Oware board has 12 pits, got more than 12 numbers"):
                db.value(endless)
        # So is a row of many boards: NumPy read itertools.count() until
        # memory ran out. A row that is an iterator of 12 counts is a board.
        for row, got in [(lambda: range(2**61), str(2**61)), (lambda: range(2**64), "more than 12"),
                         (itertools.count, "more than 12"), (lambda: iter(range(11)), "11")]:
            for many in (db.values, mancaladb.ranks):
                with pytest.raises(ValueError, match=f"row 1: an Oware board has 12 pits, got {got} numbers"):
                    many([[0] * 12, row()])
        board = [1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]
        assert db.values([iter(board), board]).tolist() == [db.value(board)] * 2
        # Many boards where one is wanted, however many.
        for boards in [[[1] * 12] * 13, np.zeros((13, 12), dtype=np.int64)]:
            with pytest.raises(ValueError, match="a board is twelve counts, got a sequence of sequences"):
                db.value(boards)
        with pytest.raises(ValueError, match=f"pit count {2**64 - 1} exceeds the 48 seeds"):
            db.values(np.array([[2**64 - 1] + [0] * 11], dtype=">u8"))
        with pytest.raises(TypeError, match="max_plies must be an integer, got bool"):
            db.line("1 1 1 1 1 2 4 2 3 0 0 0", max_plies=True)
        with pytest.raises(ValueError, match="max_plies -1: a number of plies is at least 0"):
            db.line("1 1 1 1 1 2 4 2 3 0 0 0", max_plies=-1)
        # One board wanted, a row of boards given.
        with pytest.raises(ValueError, match="a board is twelve counts"):
            db.value([[1] * 12])
        with pytest.raises(ValueError, match="a board is twelve counts"):
            db.value(np.ones((2, 12), dtype=np.int64))
        # Rows too many to copy (a view of one row, 1.2 TB as boards) are a
        # MemoryError, refused against the memory available (as boards(48)
        # is, in test_index.py), never an abort.
        many = np.broadcast_to(np.array([1] + [0] * 11, np.uint8), (10**11, 12))
        for call in [db.values, mancaladb.ranks]:
            with pytest.raises(MemoryError,
                               match="100000000000 boards: 1200000000000 bytes asked for"):
                call(many)
        # No boards, no values.
        assert db.values([]).dtype == np.int8 and db.values([]).shape == (0,)
        assert mancaladb.ranks([]).dtype == np.uint64 and mancaladb.ranks([]).shape == (0,)


def test_a_level_built_after_it_was_missing_is_found_at_once(tmp_path):
    # The handle remembers a level it could not open for a second; a
    # build in this process ends that at once.
    with mancaladb.open(tmp_path) as db:
        with pytest.raises(mancaladb.MissingLevelError):
            db.value("0 0 0 0 0 2 1 1 0 0 0 0")
        mancaladb.build(tmp_path, 4, progress=False)
        assert db.value("0 0 0 0 0 2 1 1 0 0 0 0") == 4


def test_missing_levels_are_key_errors(db_dir, vu_dir, tmp_path):
    with mancaladb.open(db_dir) as db:
        with pytest.raises(KeyError) as e:
            db.value("1 0 0 0 0 0 0 0 0 0 0 16")
        assert isinstance(e.value, mancaladb.MissingLevelError)
        assert isinstance(e.value, mancaladb.MancalaDbError)
        assert e.value.seeds == 17
        assert os.fspath(e.value.dir) == os.fspath(db_dir)
        assert str(e.value).startswith(f"level 17 (awari) not found in {db_dir}: build it: mancaladb.build(")
        with pytest.raises(mancaladb.MissingLevelError):
            db.level(20)
        # Several missing: all named, the highest as `seeds`.
        with pytest.raises(mancaladb.MissingLevelError, match="levels 17..18 .awari. not found") as e:
            db.verify([17, 18])
        assert e.value.seeds == 18
        assert "mancaladb.build(" in str(e.value) and "max_seeds=18" in str(e.value)
        with pytest.raises(mancaladb.MissingLevelError):
            db.moves("1 0 0 0 0 0 0 0 0 0 0 16")
        # A principal line that reaches a level not present: that level's
        # error, for tables as for VU files. Only level 8 is copied; the
        # line of this board captures 5 seeds first (its value, 8, is all
        # seeds taken), into a level 3 board with moves.
        board = mancaladb.unrank(8, 8973)
        assert db.value(board) == 8
        # This one captures all 8 at once: the empty board it leaves is
        # valued by the rules (no seeds to move), no level read.
        sweep = mancaladb.unrank(8, 100)
        assert db.line(sweep).plies[0].captures == 8
    gap = tmp_path / "gap"
    gap.mkdir()
    shutil.copy(db_dir / "awari-08.mdb", gap)
    with mancaladb.open(gap) as only8:
        assert only8.value(board) == 8
        with pytest.raises(mancaladb.MissingLevelError, match="level [0-7] .awari. not found") as e:
            only8.line(board)
        assert e.value.seeds < 8 and os.fspath(e.value.dir) == os.fspath(gap)
        line = only8.line(sweep)
        assert [p.value for p in line.plies] == [8] and line.end == "game-over"
    with mancaladb.open(tmp_path, rules="abapa") as empty:
        assert empty.levels() == []
        with pytest.raises(mancaladb.MissingLevelError, match="level 3 .abapa. not found"):
            empty.value("1 1 1 0 0 0 0 0 0 0 0 0")
    with mancaladb.open(vu=tmp_path) as vu:
        with pytest.raises(mancaladb.MissingLevelError, match="scores.3 not found"):
            vu.value("1 1 1 0 0 0 0 0 0 0 0 0")
    vu_gap = tmp_path / "vu-gap"
    vu_gap.mkdir()
    shutil.copy(vu_dir / "scores.8", vu_gap)
    with mancaladb.open(vu=vu_gap) as only8:
        with pytest.raises(mancaladb.MissingLevelError, match=r"scores\.[0-7] not found") as e:
            only8.line(board)
        assert e.value.seeds < 8 and os.fspath(e.value.dir) == os.fspath(vu_gap)
    # The command suggested can be pasted into a shell: a directory with a
    # space in its name is quoted (it was not).
    spaced = tmp_path / "vu files"
    spaced.mkdir()
    with mancaladb.open(vu=spaced) as vu:
        with pytest.raises(mancaladb.MissingLevelError) as e:
            vu.value("1 1 1 0 0 0 0 0 0 0 0 0")
        assert f"--seeds 3 --out '{spaced}'" in str(e.value), str(e.value)


def test_damaged_tables_are_corrupt_table_errors(tables_only, tmp_path):
    d = tmp_path / "db"
    shutil.copytree(tables_only, d)
    path = d / "awari-09.mdb"
    data = bytearray(path.read_bytes())
    data[-40] ^= 0x55  # inside the last block
    path.write_bytes(bytes(data))
    with mancaladb.open(d) as db:
        with pytest.raises(mancaladb.CorruptTableError) as e:
            db.level(9)
        assert e.value.path == path
        assert isinstance(e.value, mancaladb.MancalaDbError)
        assert "corrupt table" in str(e.value) and "replaced it since" not in str(e.value)
        # Rebuilt under the open handle: it still holds the damaged file,
        # and says that another has replaced it.
        rebuilt = d / "rebuilt.tmp"
        shutil.copy(tables_only / "awari-09.mdb", rebuilt)
        os.replace(rebuilt, path)
        with pytest.raises(mancaladb.CorruptTableError,
                           match="replaced it since: open the Database again to read the new file"):
            db.level(9)
        # Verified by a fresh handle, the new file is recorded; the old
        # handle's verify() checks the file it holds, which is no verdict on
        # the new one: an error, and the record stays (it was dropped).
        with mancaladb.open(d) as fresh:
            assert fresh.verify(9, progress=False)[0]["passed"] and fresh.verified(9)
        with pytest.raises(mancaladb.CorruptTableError, match="replaced it since"):
            db.verify(9, progress=False)
    with mancaladb.open(d) as db:
        assert db.verified(9)
        assert db.level(9).shape == (mancaladb.level_size(9),)
    # A truncated one cannot be opened at all: verified() says so, never
    # False as if it were a sound level not checked yet.
    short = d / "awari-05.mdb"
    short.write_bytes(short.read_bytes()[:-10])
    with mancaladb.open(d) as db:
        with pytest.raises(mancaladb.CorruptTableError, match="awari-05.mdb"):
            db.verified(5)
    # A VU file of the wrong length.
    (tmp_path / "vu").mkdir()
    (tmp_path / "vu" / "scores.4").write_bytes(b"\0" * 10)
    with mancaladb.open(vu=tmp_path / "vu") as vu:
        with pytest.raises(mancaladb.CorruptTableError, match="10 bytes; level 4 has 1365 positions"):
            vu.value("4 0 0 0 0 0 0 0 0 0 0 0")
        with pytest.raises(mancaladb.CorruptTableError, match="10 bytes; level 4 has 1365 positions"):
            vu.verified(4)
    # A VU file holding a value no 3-seed position can have, read whole.
    values = bytearray(364)
    values[100] = 127
    (tmp_path / "vu" / "scores.3").write_bytes(bytes(values))
    with mancaladb.open(vu=tmp_path / "vu") as vu:
        with pytest.raises(mancaladb.CorruptTableError, match="value 127 at index 100 is outside -3..=3"):
            vu.level(3)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown rule set 'oware' .use awari or abapa."):
        mancaladb.open(tmp_path, rules="oware")
    with pytest.raises(FileNotFoundError):
        mancaladb.open(tmp_path / "absent")
    (tmp_path / "a-file").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        mancaladb.open(tmp_path / "a-file")
    with pytest.raises(NotADirectoryError):
        mancaladb.open(vu=tmp_path / "a-file")
    # Tables or published files, not both: one would be ignored.
    with pytest.raises(ValueError, match="not both"):
        mancaladb.open(tmp_path, vu=tmp_path)
    # VU files hold awari values: abapa moves must not be valued by them.
    with pytest.raises(ValueError, match="the VU files hold awari values only: no abapa values are read from them or written to them"):
        mancaladb.open(vu=tmp_path, rules="abapa")
    db = mancaladb.open(tmp_path)
    db.close()
    with pytest.raises(ValueError, match="closed"):
        db.value("1 0 0 0 0 0 0 0 0 0 0 0")
    # Refused as given (not as the level 49 it was not asked for), and not
    # after collecting a trillion levels.
    for seeds in [49, 2**40, -1]:
        with pytest.raises(ValueError, match=f"max_seeds {seeds}: an Oware game has 0 to 48 seeds"):
            mancaladb.build(tmp_path, seeds, progress=False)
    # True is no seed count; flags take integers, as Python's own do
    # (sorted's reverse), but no text: "false" would be true.
    for true in [True, np.True_]:
        with pytest.raises(TypeError, match="max_seeds must be an integer, got bool"):
            mancaladb.build(tmp_path, true, progress=False)
    with pytest.raises(TypeError, match="wait must be True, False or an integer, got str"):
        mancaladb.build(tmp_path, 1, progress=False, wait="no")
    with pytest.raises(TypeError, match="progress must be True, False, None or an integer, got str"):
        mancaladb.build(tmp_path, 1, progress="no")
    assert [r["seeds"] for r in mancaladb.build(tmp_path, 1, progress=False, wait=1)] == [0, 1]


def test_an_empty_path_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    # Made absolute, "" would be the working directory, which was not asked
    # for; the command line refuses --db '' too.
    monkeypatch.chdir(tmp_path)
    want = r"an empty path names no directory \('\.' names this one\)"
    for call in [lambda: mancaladb.open(""), lambda: mancaladb.open(vu=b""),
                 lambda: mancaladb.build("", 1, progress=False)]:
        with pytest.raises(ValueError, match=want):
            call()
    assert list(tmp_path.iterdir()) == []


def test_levels_beyond_the_game_are_value_errors(db_dir):
    with mancaladb.open(db_dir) as db:
        with pytest.raises(ValueError, match="level 49: levels go up to 48"):
            db.level(49)
        # Not False, as if level 49 were a level not yet verified.
        with pytest.raises(ValueError, match="level 49: levels go up to 48"):
            db.verified(49)


def test_a_directory_being_written_is_refused_or_waited_for(tmp_path, caplog):
    import fcntl
    import logging
    import threading
    import time

    caplog.set_level(logging.INFO, logger="mancaladb")

    d = tmp_path / "db"
    d.mkdir()
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(mancaladb.MancalaDbError, match="locked by another writer.*wait=True"):
            mancaladb.build(d, 3, progress=False)
        # With wait=True the build starts once the other writer is done.
        done = []
        t = threading.Thread(target=lambda: done.append(mancaladb.build(d, 3, progress=False, wait=True)))
        t.start()
        time.sleep(0.5)
        assert not done
        fcntl.flock(lock, fcntl.LOCK_UN)
    t.join(60)
    assert [r["seeds"] for r in done[0]] == [0, 1, 2, 3]
    waited = [r.notice for r in caplog.records if r.name == "mancaladb"
              and r.notice["kind"] == "waiting_for_writer"]
    assert len(waited) == 1 and waited[0]["dir"] == str(d), waited


def test_signals_while_waiting_for_a_writer_run_their_handlers(tmp_path):
    # PEP 475: a handler that returns lets the wait go on; one that raises
    # ends it with its own exception (Ctrl-C: KeyboardInterrupt).
    import fcntl
    import os
    import signal
    import threading

    class Stop(Exception):
        pass

    d = tmp_path / "db"
    d.mkdir()
    lock = open(d / ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    seen = []
    timers = []

    def after(seconds, action):
        t = threading.Timer(seconds, action)
        timers.append(t)
        t.start()

    old = signal.signal(signal.SIGUSR1, lambda *_: seen.append("usr1"))
    try:
        def later():
            os.kill(os.getpid(), signal.SIGUSR1)
            after(0.3, lambda: fcntl.flock(lock, fcntl.LOCK_UN))

        after(0.3, later)
        reports = mancaladb.build(d, 2, progress=False, wait=True)
        assert seen == ["usr1"]
        assert [r["seeds"] for r in reports] == [0, 1, 2]

        fcntl.flock(lock, fcntl.LOCK_EX)

        def stop(*_):
            raise Stop()

        signal.signal(signal.SIGUSR1, stop)
        after(0.3, lambda: os.kill(os.getpid(), signal.SIGUSR1))
        with pytest.raises(Stop):
            mancaladb.build(d, 3, progress=False, wait=True)
    finally:
        # No timer may fire once the handler is gone (SIGUSR1's default
        # ends the process) or the lock file is closed.
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        for t in timers:
            t.cancel()
            t.join()
        signal.signal(signal.SIGUSR1, old)
        lock.close()


def test_true_is_no_seed_count_or_level_anywhere(db_dir):
    # `value([True] * 12)` was the all-ones board and `level(True)` level 1,
    # while values() and verify() refused bools.
    with mancaladb.open(db_dir) as db:
        for call in [lambda: db.value([True] * 12), lambda: db.moves([True] + [0] * 11)]:
            with pytest.raises(TypeError, match="pit counts must be integers, got bool True"):
                call()
        for call in [lambda: db.level(True), lambda: db.verified(True),
                     lambda: mancaladb.level_size(True), lambda: mancaladb.unrank(True, 0),
                     lambda: mancaladb.boards(True)]:
            with pytest.raises(TypeError, match="a level must be an integer, got bool"):
                call()
    with pytest.raises(TypeError, match="pit counts must be integers, got bool"):
        mancaladb.omweso.loops([True] + [2] * 15)
    # Nor in a list of boards, where NumPy would read it as 1.
    with mancaladb.open(db_dir) as db:
        for rows in [[[True] + [1] * 11], ([1] * 12, (np.True_,) + (0,) * 11)]:
            with pytest.raises(TypeError, match="boards must hold integers, got bool"):
                db.values(rows)


def test_levels_and_indices_out_of_range_are_value_errors():
    # Past 2**64 they were an unnamed OverflowError ("int too big to convert").
    for call in [lambda: mancaladb.level_size(2**70), lambda: mancaladb.unrank(2**64, 0),
                 lambda: mancaladb.boards(-1)]:
        with pytest.raises(ValueError, match="level"):
            call()
    with pytest.raises(ValueError, match=f"index {2**64}: past the positions of every level"):
        mancaladb.unrank(3, 2**64)
    with pytest.raises(ValueError, match="start -1: an index is 0 or more"):
        mancaladb.boards(3, -1, 2)


def test_rows_as_objects_or_from_a_generator_are_boards(db_dir):
    rows = [[1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0], [0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0]]
    with mancaladb.open(db_dir) as db:
        want = db.values(rows).tolist()
        assert want == [0, 4]
        # pandas' to_numpy() of mixed columns gives object arrays.
        assert db.values(np.array(rows, dtype=object)).tolist() == want
        assert db.values(row for row in rows).tolist() == want
        # A data frame (anything with __array__) is read through __array__,
        # not iterated (pandas iterates column labels, polars columns).
        class Frame:
            def __init__(self, rows):
                self.rows = rows

            def __array__(self, dtype=None, copy=None):
                return np.array(self.rows, dtype=dtype)

            def __iter__(self):
                return iter(range(12))

        assert db.values(Frame(rows)).tolist() == want
        assert mancaladb.ranks(np.array(rows, dtype=object)).tolist() == mancaladb.ranks(rows).tolist()
        with pytest.raises(TypeError, match="row 1: pit counts must be integers, got NoneType None"):
            db.values(np.array([rows[0], [None] * 12], dtype=object))
        with pytest.raises(TypeError, match="row 0: pit counts must be integers, got float 1.0"):
            db.values(np.array([[1.0] + rows[0][1:], rows[1]], dtype=object))
        with pytest.raises(TypeError, match="row 1: pit counts must be integers, got bool True"):
            db.values(np.array([rows[0], [True] + rows[1][1:]], dtype=object))
        # NumPy counts timedelta64 among its integers; a count it is not.
        with pytest.raises(TypeError, match="row 1: pit counts must be integers, got timedelta64"):
            db.values(np.array([rows[0], [np.timedelta64(1, "ns")] + rows[1][1:]], dtype=object))
        with pytest.raises(ValueError, match="row 1: an Oware board: pit count 1180591620717411303424 exceeds"):
            db.values(np.array([rows[0], [2**70] + rows[1][1:]], dtype=object))
        # An empty array of floats is no boards of integers (an empty list is
        # no boards).
        with pytest.raises(TypeError, match="boards must hold integers, got float64"):
            db.values(np.empty((0,)))
        assert db.values([]).shape == (0,)
        with pytest.raises(TypeError, match="one board given as text is valued by value"):
            db.values("1 1 1 1 1 2 4 2 3 0 0 0")
        # A huge max_plies is no limit, not an OverflowError.
        assert db.line(rows[0], max_plies=2**70).end == "cycle"


def test_arrays_converted_for_the_library_take_little_memory_beside_them(db_dir):
    """An object array of integers (a pandas frame of nullable ``Int64``
    columns) and an array of another byte order are converted in one NumPy
    cast each, to ``int64`` and to the same width: they once went through
    two lists of lists (about 350 bytes a row, and a process killed for
    memory at 14 M rows) and through ``int64`` whatever the width (4.5 times
    a ``'>i2'`` array)."""
    import tracemalloc
    rows = mancaladb.boards(16, 0, 200_000)
    with mancaladb.open(db_dir) as db:
        want = db.values(rows)
        for given, most in [(rows.astype(object), 150), (rows.astype(">i2"), 48)]:
            tracemalloc.start()
            got = db.values(given)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert (got == want).all(), given.dtype
            assert peak < most * len(rows), (given.dtype, peak / len(rows))


def stops_soon_after_a_signal(run, at):
    """Whether ``run()``, sent a SIGUSR1 whose handler raises a fraction
    ``at`` of its whole time into it, ends with the handler's exception
    within half the time it had left then (a call that looks at signals
    only at its end takes all of it).

    Its whole time is the shortest run seen, and a run on a noisy machine
    can still be faster: a try whose run ends before the signal comes
    proves nothing but a shorter whole time, which the next try takes.
    Three such tries in a row fail. (Sending the signal earlier instead
    let a call that never looks at signals pass, stopped by the handler
    as it returned, close to the signal.)"""
    import signal
    import threading
    import time

    class Stop(Exception):
        pass

    whole = None
    for _ in range(2):
        t0 = time.monotonic()
        run()
        whole = min(whole or float("inf"), time.monotonic() - t0)

    running = [False]

    def stop(*_):
        if running[0]:
            raise Stop()

    old = signal.signal(signal.SIGUSR1, stop)
    try:
        for _ in range(3):
            sent = []

            def send():
                sent.append(time.monotonic())
                os.kill(os.getpid(), signal.SIGUSR1)

            timer = threading.Timer(whole * at, send)
            t0 = time.monotonic()
            timer.start()
            try:
                running[0] = True
                run()
            except Stop:
                stopped = time.monotonic()
                break
            finally:
                running[0] = False
                timer.cancel()
                timer.join()
            whole = min(whole, time.monotonic() - t0)
        else:
            pytest.fail(f"three runs ended before the signal came (whole {whole:.2f} s)")
    finally:
        signal.signal(signal.SIGUSR1, old)
    left = whole - (sent[0] - t0)
    assert stopped - sent[0] < left / 2, (whole, sent[0] - t0, stopped - t0)


@pytest.mark.parametrize("call, copies, at", [("values", 4, 0.8), ("move_values", 2, 0.5),
                                              ("ranks", 4, 0.8)])
def test_a_signal_stops_a_call_over_many_boards_with_its_handlers_exception(db_dir, call, copies, at):
    # values(), move_values() and ranks() look at pending signals every
    # 2**20 boards, as boards() does: a handler that raises ends the call
    # with its exception, well before its end. They once ran to their end
    # (half a minute for move_values() of a level of 80 M positions), the
    # handler after it. The signal is sent once the rows are copied and
    # checked (more than half of values() and ranks(), a tenth of
    # move_values()), while the calls answer them.
    rows = np.concatenate([mancaladb.boards(16)] * copies)  # 25 or 50 M boards
    with mancaladb.open(db_dir) as db:
        run = {"values": db.values, "move_values": db.move_values, "ranks": mancaladb.ranks}[call]
        stops_soon_after_a_signal(lambda: run(rows), at)


def test_a_signal_stops_a_long_boards_walk_with_its_handlers_exception():
    # boards() looks at pending signals every 2**20 boards: a handler that
    # raises ends the walk with its exception, well before the walk's end
    # (it once ran to its end, the handler after it).
    stops_soon_after_a_signal(lambda: mancaladb.boards(20), 0.1)  # 80 M boards, about 1 GB


def test_a_database_pickles_as_what_it_reads(db_dir, vu_dir):
    import pickle
    for db in [mancaladb.open(db_dir), mancaladb.open(vu=vu_dir), mancaladb.open(os.fsencode(db_dir))]:
        with db:
            again = pickle.loads(pickle.dumps(db))
            assert again.value("1 1 1 1 1 2 4 2 3 0 0 0") == 0
            assert repr(again) == repr(db)
            again.close()
    db.close()
    with pytest.raises(ValueError, match="closed"):
        pickle.dumps(db)
    with pytest.raises(ValueError, match="the database is closed"):
        with db:
            pass
    with pytest.raises(TypeError, match="db must be a path"):
        mancaladb.open(3)


def test_ctrl_c_in_a_fresh_interpreters_first_array_call_is_a_keyboard_interrupt():
    # A process's first call that hands out an array, interrupted while
    # it runs without the GIL: a KeyboardInterrupt. It was a panic: the
    # numpy crate loaded NumPy's C API after the walk, running Python code
    # where the pending Ctrl-C was raised. The API is now loaded on import
    # (for every such call, level() too), and the walk looks at signals.
    import subprocess
    import sys
    # Python leaves SIGINT ignored when it starts with it ignored (as in a
    # job started in the background, which CI may be): Ctrl-C's handler
    # is set as a terminal's Python has it.
    code = ("import os, signal, threading, mancaladb\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
            "mancaladb.boards(21)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0
    assert "KeyboardInterrupt" in run.stderr, run.stderr
    assert "panic" not in run.stderr.lower(), run.stderr
