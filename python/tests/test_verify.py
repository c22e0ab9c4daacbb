"""Verifying from Python: the command line's results as dicts, what is
recorded, a planted wrong value found, bad arguments refused, and a run
stopped by the caller or by Ctrl-C."""

import json
import os
import signal

import numpy as np
import pytest

import mancaladb
from conftest import cli


def small_db(tmp_path, top=9):
    mancaladb.build(tmp_path, top, progress=False)
    return tmp_path


def test_results_are_the_command_lines_and_all_three_checks_are_recorded(tmp_path):
    d = small_db(tmp_path)
    with mancaladb.open(d) as db:
        partial = db.verify(range(7, 10), checks=2, progress=False)
        assert [r["seeds"] for r in partial] == [7, 8, 9]
        assert all(r["passed"] and r["consistency"] == "pass" for r in partial)
        assert all(r["rederivation"] is None for r in partial)
        assert not any(db.verified(n) for n in range(10))
        heard = []
        results = db.verify(progress=False, on_level=heard.append)
        assert results == heard
        assert [r["seeds"] for r in results] == list(range(10))
        assert all(db.verified(n) for n in range(10))
    # The same checks as the command line's --json, bar the timings.
    ours = [{k: v for k, v in r.items() if k != "seconds"} for r in results]
    cli_out = json.loads(cli("verify", "--db", str(d), "--json").stdout)
    assert ours == [{k: v for k, v in r.items() if k != "seconds"} for r in cli_out]


def test_a_planted_wrong_value_fails_check_2_naming_the_position(tmp_path):
    d = small_db(tmp_path, 8)
    with mancaladb.open(d) as db:
        values = np.array(db.level(8))
    index = 1234
    values[index] = values[index] + 1 if values[index] < 8 else 7
    # A sound file holding one wrong value: the published layout, imported.
    vu = tmp_path / "vu"
    cli("export", "--format", "vu", "--db", str(d), "--out", str(vu))
    (vu / "scores.8").write_bytes(values.astype(np.int8).tobytes())
    with mancaladb.open(vu=vu) as db:
        (r,) = db.verify(8, checks=2, progress=False)
    assert not r["passed"] and r["integrity"] == "pass"
    differ = r["consistency"]["differ"]
    first = r["consistency"]["first"]
    assert 1 <= len(first) <= differ
    # The planted position is named (here the only one that differs: no
    # position of level 8 took its value from that child alone).
    assert index in [m["index"] for m in first], first
    # As the command line finds it.
    out = cli("verify", "--vu", str(vu), "--seeds", "8", "--checks", "2", "--json", check=False)
    assert out.returncode == 1
    (want,) = json.loads(out.stdout)
    assert {k: v for k, v in r.items() if k != "seconds"} == {
        k: v for k, v in want.items() if k != "seconds"
    }


def test_bad_arguments_are_python_exceptions(db_dir):
    with mancaladb.open(db_dir) as db:
        with pytest.raises(TypeError, match="checks must be an integer, got bool"):
            db.verify(checks=True)
        for checks in (0, 4):
            with pytest.raises(ValueError, match="checks is 1"):
                db.verify(3, checks=checks)
        with pytest.raises(TypeError, match="checks must be an integer, got float"):
            db.verify(3, checks=2.0)
        with pytest.raises(ValueError, match="level 49: levels go up to 48"):
            db.verify([3, 49])
        with pytest.raises(ValueError, match=f"level {2**64}: levels go up to 48"):
            db.verify(2**64)
        with pytest.raises(ValueError, match="level -1"):
            db.verify(-1)
        with pytest.raises(TypeError, match="a level must be an integer, got float"):
            db.verify(2.5)
        absent = max(db.levels()) + 1
        with pytest.raises(mancaladb.MissingLevelError):
            db.verify(absent, checks=1)


def test_an_exception_in_on_level_stops_after_that_level(tmp_path):
    d = small_db(tmp_path, 6)

    def stop_at_3(result):
        if result["seeds"] == 3:
            raise RuntimeError("enough")

    with mancaladb.open(d) as db:
        with pytest.raises(RuntimeError, match="enough"):
            db.verify(progress=False, on_level=stop_at_3)
        assert [db.verified(n) for n in range(7)] == [True] * 4 + [False] * 3


def test_levels_are_checked_in_order_once_each(tmp_path):
    d = small_db(tmp_path, 5)
    with mancaladb.open(d) as db:
        results = db.verify([5, 3, 5], checks=1, progress=False)
    assert [r["seeds"] for r in results] == [3, 5]


def test_ctrl_c_stops_after_the_level_and_keeps_its_results(tmp_path):
    d = small_db(tmp_path, 6)

    def interrupt_at_2(result):
        if result["seeds"] == 2:
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with mancaladb.open(d) as db:
            with pytest.raises(KeyboardInterrupt) as e:
                db.verify(progress=False, on_level=interrupt_at_2)
            # Level 2 passed: it is recorded, and its result rides on the
            # exception with those before it.
            assert [db.verified(n) for n in range(7)] == [True] * 3 + [False] * 4
    finally:
        signal.signal(signal.SIGINT, previous)
    assert [(r["seeds"], r["passed"]) for r in e.value.results] == [(0, True), (1, True), (2, True)]


def test_ctrl_c_ends_a_wait_for_another_verify_of_the_level(tmp_path, caplog):
    """A second verify of a level waits for the first (they would write the
    same checkpoints); Ctrl-C must end that wait, however long."""
    import fcntl
    import logging
    import threading
    import time

    d = small_db(tmp_path, 6)
    caplog.set_level(logging.INFO, logger="mancaladb")
    with (d / "raw" / "awari" / "verify.6.lock").open("w") as first:
        fcntl.flock(first, fcntl.LOCK_EX)  # as a first verify holds it
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        try:
            with mancaladb.open(d) as db:
                start = time.monotonic()
                timer.start()
                with pytest.raises(KeyboardInterrupt):
                    db.verify(6, progress=False)
                assert time.monotonic() - start < 10
                assert not db.verified(6)
        finally:
            timer.cancel()
            signal.signal(signal.SIGINT, previous)
    waited = [r for r in caplog.records if r.name == "mancaladb"
              and r.notice["kind"] == "waiting_for_checker"]
    assert [r.notice["seeds"] for r in waited] == [6]
