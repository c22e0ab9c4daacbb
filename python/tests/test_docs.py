"""The worked example of docs/python.md runs as written."""

import contextlib
import io
import os
import re

from conftest import ROOT


def test_the_worked_example_runs_as_written(db_dir, tmp_path):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python block"
    # Its `db` is the tables built for the tests (its build then only
    # checks them).
    os.symlink(db_dir, tmp_path / "db")
    here = os.getcwd()
    out = io.StringIO()
    try:
        os.chdir(tmp_path)
        with contextlib.redirect_stdout(out):
            for code in blocks:
                exec(compile(code, "docs/python.md", "exec"), {})
    finally:
        os.chdir(here)
    printed = out.getvalue().splitlines()
    # What the comments of the example say it prints.
    assert printed[0] == "0"
    assert printed[6].startswith("Move(pit=5, captures=3, value=0, child=(5, 0, 3,")
    assert printed[7] == "119 cycle"
    assert printed[8] == "7193246 of 12685179"
