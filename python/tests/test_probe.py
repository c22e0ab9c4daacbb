"""Probing: known values, moves and lines equal to the command line's."""

import numpy as np
import pytest

import mancaladb
from conftest import cli_json


def test_known_positions(db_dir):
    with mancaladb.open(db_dir) as db:
        # README: a 16-seed position, a draw, whose best move is pit 5.
        b = "1 1 1 1 1 2 4 2 3 0 0 0"
        assert db.value(b) == 0
        moves = db.moves(b)
        assert [m.pit for m in moves if m.value == 0] == [5]
        assert [m.pit for m in moves] == [0, 1, 2, 3, 4, 5]
        # README: pit 5 takes all four seeds.
        assert db.value([0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0]) == 4
        # The 12-seed game (1 seed per pit, not stored) is a draw.
        assert db.value([1] * 12) == 0
        # No seeds to move: the opponent takes the rest.
        assert db.value("0 0 0 0 0 0 3 2 0 0 0 0") == -5


@pytest.mark.parametrize("pits", [
    "1 1 1 1 1 2 4 2 3 0 0 0",
    "0 0 0 0 0 2 1 1 0 0 0 0",
    "1 0 0 0 0 1 1 0 0 0 0 0",
    "3 0 1 2 0 4 0 6 0 0 0 0",
    "1 1 1 1 1 1 1 1 1 1 1 1",
    "0 0 0 0 0 0 3 2 0 0 0 0",
    "0 0 4 1 0 1 0 7 0 0 0 1",  # a line of 208 plies: both follow it whole
])
def test_moves_and_line_are_the_command_lines(db_dir, pits):
    want = cli_json("query", "--db", str(db_dir), "--json", "--line", pits)
    with mancaladb.open(db_dir) as db:
        assert db.value(pits) == want["value"]
        moves = db.moves(pits)
        category = lambda v: "win" if v > 0 else "loss" if v < 0 else "draw"
        assert [{"pit": m.pit, "value": m.value, "captures": m.captures, "category": category(m.value)}
                for m in moves] == want["moves"]
        # The whole answer in one call: the command line's, key for key.
        a = db.analyze(pits)
        assert a.moves == moves
        assert {"seeds": a.seeds, "value": a.value, "category": a.category, "best": a.best,
                "valued_by": a.valued_by} == {k: want[k] for k in ("seeds", "value", "category", "best", "valued_by")}
        assert a.final is None
        line = db.line(pits)
        assert [{"board": list(p.board), "pit": p.pit, "captures": p.captures, "value": p.value}
                for p in line.plies] == want["line"]
        assert line.end == want["line_end"]
        assert line.cycle_ply == want.get("cycle_ply")
        if pits == "0 0 4 1 0 1 0 7 0 0 0 1":
            assert (len(line.plies), line.end) == (208, "cycle")


def test_analyze_with_the_seeds_taken_gives_the_final_score(db_dir):
    with mancaladb.open(db_dir) as db:
        # README: the 16-seed draw, 32 seeds taken evenly: 24 each.
        a = db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=(16, 16))
        assert (a.value, a.category, a.valued_by, a.best, a.final) == (0, "draw", "level", [5], (24.0, 24.0))
        # Pit 5 takes all four: the mover ends with 22 + 4.
        assert db.analyze("0 0 0 0 0 2 1 1 0 0 0 0", captured=(22, 22)).final == (26.0, 22.0)
        assert db.analyze([1] * 12).valued_by == "moves"
        assert db.analyze("0 0 0 0 0 0 3 2 0 0 0 0")[:4] == (5, -5, "loss", "rules")
        with pytest.raises(ValueError, match="make 49, not the game's 48"):
            db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=(16, 17))
        with pytest.raises(ValueError, match="cannot be negative"):
            db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=(-1, 33))
        with pytest.raises(ValueError, match="at most the game's 48 seeds"):
            db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=(2**64, 0))
        with pytest.raises(ValueError, match="two seed counts"):
            db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=(16, 16, 0))
        # A set has no order (which count is the mover's?), an iterator no
        # length: neither is a pair of counts.
        for pair in [{16, 17}, iter((16, 16)), {16: 16}]:
            with pytest.raises(ValueError, match="two seed counts"):
                db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=pair)
        # A row of a NumPy array of the seeds taken is a pair.
        taken = np.array([[16, 16]])
        assert db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=taken[0]).final == (24.0, 24.0)
        with pytest.raises(TypeError, match="captured must be an integer"):
            db.analyze("1 1 1 1 1 2 4 2 3 0 0 0", captured=(16.0, 16))


def test_children_are_the_boards_after_each_move(db_dir):
    with mancaladb.open(db_dir) as db:
        for m in db.moves("1 1 1 1 1 2 4 2 3 0 0 0"):
            # The child's value, for the opponent, gives the move's value.
            assert m.value == m.captures - db.value(m.child)
            assert sum(m.child) == 16 - m.captures
        # Pit 5 sows 2 seeds into 6 and 7 (4 -> 5, 2 -> 3) and takes the 3;
        # the child is seen by the opponent, their pits first.
        pit5 = db.moves("1 1 1 1 1 2 4 2 3 0 0 0")[5]
        assert pit5.captures == 3
        assert pit5.child == (5, 0, 3, 0, 0, 0, 1, 1, 1, 1, 1, 0)


def test_get_value_and_levels(db_dir):
    with mancaladb.open(db_dir) as db:
        assert db.levels() == list(range(17))
        assert db.get_value("1 0 0 0 0 0 0 0 0 0 0 16") is None
        assert db.get_value("1 0 0 0 0 0 0 0 0 0 0 16", default=99) == 99
        # A player to move without seeds has lost the rest: no level read.
        assert db.get_value("0 0 0 0 0 0 0 0 0 0 0 17") == -17
        assert db.get_value("0 0 0 0 0 2 1 1 0 0 0 0", default=99) == 4
        assert db.verified(16) is False
        assert db.rules == "awari"
        assert "db=" in repr(db)
    assert "closed" in repr(db)


def test_a_directory_given_relative_stays_where_it_was_opened(db_dir, tmp_path, monkeypatch):
    # A notebook's os.chdir (or Hydra's) used to move an open handle: levels
    # not read yet came from the new place, or were missing.
    monkeypatch.chdir(db_dir.parent)
    with mancaladb.open(db_dir.name) as db:
        monkeypatch.chdir(tmp_path)
        assert db.levels() == list(range(17))
        assert db.value("1 1 1 1 1 2 4 2 3 0 0 0") == 0
        assert repr(db) == f"<mancaladb.Database db={str(db_dir)!r} rules='awari'>"


def test_vectorised_values_equal_single_probes_and_the_level(db_dir):
    with mancaladb.open(db_dir) as db:
        boards = mancaladb.boards(11, 1000, 3000)
        values = db.values(boards)
        assert values.dtype == np.int8 and values.shape == (2000,)
        assert np.array_equal(values, db.level(11)[1000:3000])
        assert [db.value(b) for b in boards[:50]] == values[:50].tolist()
        # Any integer type and boards of several levels, stored or not.
        mixed = np.array([[1] * 12, [0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0]], dtype=np.int32)
        assert db.values(mixed).tolist() == [0, 4]


def test_verified_levels_are_reported(db_dir, tmp_path):
    # verify records level 8 in verified.tsv of a copy of the tables.
    import shutil
    from conftest import cli
    d = tmp_path / "db"
    shutil.copytree(db_dir, d)
    cli("verify", "--db", str(d), "--seeds", "8")
    with mancaladb.open(d) as db:
        assert db.verified(8) and not db.verified(9)


def test_move_values_of_many_boards_are_each_boards_moves(db_dir):
    with mancaladb.open(db_dir) as db:
        # Boards of several levels, stored and not, one without seeds to move.
        rows = [mancaladb.boards(n, 0, 300)[::7] for n in (3, 9, 16)]
        rows.append(np.array([[1] * 12, [0, 0, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0]], dtype=np.uint8))
        boards = np.concatenate(rows)
        table = db.move_values(boards)
        assert table.dtype == np.int8 and table.shape == (len(boards), 6)
        for board, row in zip(boards, table):
            want = [mancaladb.NO_MOVE] * 6
            for m in db.moves(board):
                want[m.pit] = m.value
            assert row.tolist() == want, board
        # A row's maximum is the board's value (-seeds without a move).
        best = np.where(table.max(axis=1) == mancaladb.NO_MOVE,
                        -boards.sum(axis=1).astype(np.int64), table.max(axis=1))
        assert best.tolist() == db.values(boards).tolist()
        assert table[-1].tolist() == [mancaladb.NO_MOVE] * 6
        assert db.move_values([]).shape == (0, 6)


def test_move_values_check_the_stored_value_as_moves_does(vu_dir, tmp_path):
    # A value of level 3 changed in a copy of the published layout (which
    # carries no checksum): the moves' values disagree with the stored one.
    import shutil
    d = tmp_path / "vu"
    shutil.copytree(vu_dir, d)
    board = "1 0 0 0 0 1 1 0 0 0 0 0"
    with mancaladb.open(vu=d) as db:
        index, value = mancaladb.rank(board), db.value(board)
    data = bytearray((d / "scores.3").read_bytes())
    data[index] = (-value) & 0xFF if value != 0 else 1
    (d / "scores.3").write_bytes(bytes(data))
    with mancaladb.open(vu=d) as db:
        with pytest.raises(mancaladb.CorruptTableError) as moves_error:
            db.moves(board)
        with pytest.raises(mancaladb.CorruptTableError) as batch_error:
            db.move_values([mancaladb.unrank(3, 0), [int(c) for c in board.split()]])
        assert str(batch_error.value) == str(moves_error.value)


def test_boards_in_any_memory_layout_read_as_their_rows(db_dir):
    # Column-major (a uint8 pandas frame's to_numpy()), transposed,
    # reversed and strided arrays hold the same rows as the C-ordered one:
    # the answers are the rows', whatever the layout. Column-major uint8
    # was once read as a block of rows, giving other boards' values.
    boards = mancaladb.boards(12)[[1000, 200000, 7, 123456]]
    with mancaladb.open(db_dir) as db:
        want = (mancaladb.ranks(boards).tolist(), db.values(boards).tolist(),
                db.move_values(boards).tolist())
        assert want[0] == [1000, 200000, 7, 123456]
        layouts = [
            np.asfortranarray(boards),
            np.ascontiguousarray(boards.T).T,
            np.ascontiguousarray(boards[::-1])[::-1],
            np.repeat(boards, 2, axis=0)[::2],
        ]
        for dtype in (np.uint8, np.int8, np.int32, np.int64):
            for layout in layouts:
                rows = layout.astype(dtype, order="K")
                assert np.array_equal(rows, boards)
                got = (mancaladb.ranks(rows).tolist(), db.values(rows).tolist(),
                       db.move_values(rows).tolist())
                assert got == want, (dtype, rows.flags)
