"""Omweso loops: the same report as `mancaladb loops --json`."""

import numpy as np
import pytest

import mancaladb
from conftest import cli, cli_json

CASES = [
    ("3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1", {"pit": 0}),
    ("3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1", {}),
    ("2 2 0 0 0 0 0 0 0 0 2 2 0 0 0 0", {"opponent": "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"}),
    ("2 2 0 0 0 0 0 0 0 0 2 2 0 0 0 0", {"opponent": "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "first_turn": True}),
]


@pytest.mark.parametrize("side,options", CASES)
def test_loops_equal_the_command_line(side, options):
    args = ["loops", "--json"]
    if "opponent" in options:
        args += ["--opponent", options["opponent"]]
    if "pit" in options:
        args += ["--pit", str(options["pit"])]
    if options.get("first_turn"):
        args += ["--first-turn"]
    want = cli_json(*args, side)
    assert mancaladb.omweso.loops(side, **options) == want
    # A list of counts is the same side.
    assert mancaladb.omweso.loops([int(x) for x in side.split()], **options) == want


def test_the_readme_loop():
    report = mancaladb.omweso.loops("3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1", pit=0)
    (start,) = report["starts"]
    assert (start["pit"], start["direction"], start["verdict"]) == (0, "ccw", "infinite")


def test_bad_sides_get_the_command_lines_message():
    out = cli("loops", "1 2 3", check=False)
    assert out.returncode == 2
    with pytest.raises(ValueError) as e:
        mancaladb.omweso.loops("1 2 3")
    assert out.stderr.strip() == f"mancaladb: {e.value}"
    with pytest.raises(ValueError, match="a move starts from 2 or more"):
        mancaladb.omweso.loops("3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1", pit=1)
    with pytest.raises(ValueError, match="the player has no move"):
        mancaladb.omweso.loops([1] * 16)
    with pytest.raises(ValueError, match="numbered 0..15"):
        mancaladb.omweso.loops([2] * 16, pit=16)
    # Negative numbers are bad input too, not an unsigned overflow.
    with pytest.raises(ValueError, match="pit -1: pits are numbered 0..15"):
        mancaladb.omweso.loops([2] * 16, pit=-1)
    with pytest.raises(ValueError, match="pit 18446744073709551616: pits are numbered 0..15"):
        mancaladb.omweso.loops([2] * 16, pit=2**64)
    # True is no pit; the flags take integers, but no text ("false" would
    # be true, and first_turn another game).
    with pytest.raises(TypeError, match="pit must be an integer, got bool"):
        mancaladb.omweso.loops([2] * 16, pit=True)
    assert (mancaladb.omweso.loops([2] * 16, pit=0, first_turn=1, any_seeds=0)
            == mancaladb.omweso.loops([2] * 16, pit=0, first_turn=np.True_)
            == mancaladb.omweso.loops([2] * 16, pit=0, first_turn=True))
    with pytest.raises(ValueError, match="a side is sixteen counts, got a sequence of sequences"):
        mancaladb.omweso.loops([[2] * 16] * 17)
    for flag in ["first_turn", "any_seeds"]:
        with pytest.raises(TypeError, match=f"{flag} must be True, False or an integer, got str"):
            mancaladb.omweso.loops([2] * 16, **{flag: "false"})
    # A side far too long is refused by its length, or after one count too
    # many, never read to its end.
    with pytest.raises(ValueError, match="the player's side has 16 pits, got 1000000000000 numbers"):
        mancaladb.omweso.loops(range(10**12))
    with pytest.raises(ValueError, match="opponent has 16 pits, got more than 16 numbers"):
        mancaladb.omweso.loops([2] * 16, opponent=iter(range(10**12)))
    for laps in [-1, 0, 2**64]:
        with pytest.raises(ValueError, match=f"max_laps {laps}: a lap budget must be at least 1"):
            mancaladb.omweso.loops([2] * 16, max_laps=laps)
    # Counts that are not integers are type errors, as for a board.
    for item in [1.5, None, "3", b"3"]:
        with pytest.raises(TypeError, match="pit counts must be integers"):
            mancaladb.omweso.loops([2] * 15 + [item])
    with pytest.raises(TypeError, match="a side is a string or sixteen counts"):
        mancaladb.omweso.loops(bytes(16))


def test_more_seeds_than_a_game_need_any_seeds():
    side, opponent = [4] * 16, [1] * 16
    with pytest.raises(ValueError, match="80 seeds in play, more than the 64 of an Omweso game"):
        mancaladb.omweso.loops(side, opponent, pit=0, max_laps=1000)
    report = mancaladb.omweso.loops(side, opponent, pit=0, max_laps=1000, any_seeds=True)
    assert report == cli_json("loops", "--json", "--any-seeds", "--pit", "0", "--max-laps", "1000",
                              "--opponent", " ".join(map(str, opponent)), " ".join(map(str, side)))


def test_ctrl_c_stops_a_long_analysis():
    # Pit 0 of this side loops with a period of 4,241,058,608 laps, proven
    # at lap 265,066,163: most of a second of walking, asked every 4 M laps.
    import _thread
    import threading
    import time

    side = "51 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"
    start = time.perf_counter()
    whole = mancaladb.omweso.loops(side, pit=0)
    full = time.perf_counter() - start
    assert whole["starts"][0]["verdict"] == "infinite"
    assert whole["starts"][0]["walked"] == 265_066_163

    # The interrupt lands in one of the calls below (on a loaded machine
    # the timer's thread may run late); that call must end soon after it.
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        _thread.interrupt_main()

    # A process started in the background by a shell without job control
    # (as CI may be) inherits SIGINT ignored, and then interrupt_main does
    # nothing: Python's own handler for the test's length.
    import signal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(full / 20, interrupt)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in range(100):
                mancaladb.omweso.loops(side, pit=0)
        stopped = time.perf_counter() - sent[0]
        timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stopped < full / 3, (stopped, full)
