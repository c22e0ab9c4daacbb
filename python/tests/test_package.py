"""What the installed package says of itself."""

import importlib.metadata
import re

import mancaladb
from conftest import ROOT


def test_the_version_has_one_source():
    # pyproject.toml leaves the version to maturin, which takes
    # python/Cargo.toml's; the native module reports the same one.
    cargo = (ROOT / "python" / "Cargo.toml").read_text()
    declared = re.search(r'^version = "([^"]+)"$', cargo, re.M).group(1)
    assert mancaladb.__version__ == declared
    assert importlib.metadata.version("mancaladb") == declared
