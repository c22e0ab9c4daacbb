"""What the installed package says of itself."""

import importlib.metadata
import re

import pytest

import mancaladb
from conftest import ROOT


def test_the_version_has_one_source():
    # pyproject.toml leaves the version to maturin, which takes
    # python/Cargo.toml's: the workspace's, in the root Cargo.toml, which the
    # crate takes too. The native module reports the same one.
    member = (ROOT / "python" / "Cargo.toml").read_text()
    assert re.search(r"^version\.workspace = true$", member, re.M), member
    root = (ROOT / "Cargo.toml").read_text()
    workspace = root[root.index("[workspace.package]"):]
    declared = re.search(r'^version = "([^"]+)"$', workspace, re.M).group(1)
    assert mancaladb.__version__ == declared
    assert importlib.metadata.version("mancaladb") == declared


def test_help_shows_each_fields_doc_and_type():
    # Python drops the docstrings under a named tuple's fields: help() said
    # "Alias for field number 0" and "pit: ForwardRef('int')".
    import inspect
    assert mancaladb.Move.pit.__doc__ == "The pit sown, 0..5."
    assert mancaladb.Line.end.__doc__.startswith('``"game-over"``, ``"cycle"``')
    for cls in (mancaladb.Move, mancaladb.Analysis, mancaladb.Ply, mancaladb.Line):
        for name in cls._fields:
            assert not getattr(cls, name).__doc__.startswith("Alias for field"), (cls, name)
        assert "ForwardRef" not in str(inspect.signature(cls)), cls
    assert str(inspect.signature(mancaladb.Move)) == \
        "(pit: int, captures: int, value: int, child: Tuple[int, ...])"


def test_dir_lists_the_public_names():
    # Not the modules and helpers the package imports (np, os, json, ...).
    names = dir(mancaladb)
    assert set(mancaladb.__all__) | {"__version__", "Boards", "Pits"} <= set(names)
    assert not {"np", "os", "json", "integer", "flag", "Any"} & set(names)
    assert mancaladb.NO_MOVE == -128


def test_the_type_stubs_match_the_modules():
    # mypy's stubtest: the package's annotations and _native.pyi against
    # what the modules hold at run time (a stub declared __init__ for a
    # class made by __new__, and missed names).
    import subprocess
    import sys
    pytest.importorskip("mypy.stubtest")  # scripts/python-test.sh installs it
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "mancaladb"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
