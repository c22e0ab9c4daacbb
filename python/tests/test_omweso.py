"""Omweso loops: the same report as `mancaladb loops --json`."""

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
    assert report == {"starts": [{"pit": 0, "direction": "ccw", "verdict": "infinite",
                                  "laps": 128, "period": 128}]}


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
