"""Fixtures: the command-line binary and a table set built by it once per
run (Awari levels 0..16, as the README's first command builds), with its
VU export. The tests compare the package with what the command line says
and with facts that do not come from the package."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP = 16


def cli_path() -> Path:
    # Where cargo puts it: under CARGO_TARGET_DIR (from the root when
    # relative) when that is set.
    target = ROOT / os.environ.get("CARGO_TARGET_DIR", "target")
    path = Path(os.environ.get("MANCALADB_BIN", target / "release" / "mancaladb"))
    if not path.exists():
        pytest.fail(f"{path} not found: run `cargo build --release` at the root first")
    return path


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the command line; with `check`, it must succeed."""
    out = subprocess.run([str(cli_path()), *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError(f"mancaladb {' '.join(args)}: {out.stderr}")
    return out


def cli_json(*args: str):
    return json.loads(cli(*args).stdout)


def in_forked_child(child, seconds: float) -> bool:
    """Runs ``child()`` in a child made by ``os.fork``; whether it returned
    true within ``seconds`` (a child that is still running then, hung, is
    killed). The child's verdict is its exit status, never pytest's."""
    import signal
    import time
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            status = 0 if child() else 1
        finally:
            os._exit(status)
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return False
        time.sleep(0.01)


@pytest.fixture(scope="session")
def db_dir(tmp_path_factory) -> Path:
    """Awari levels 0..16 built by the command line (or MANCALADB_TEST_DB)."""
    given = os.environ.get("MANCALADB_TEST_DB")
    if given:
        return Path(given)
    d = tmp_path_factory.mktemp("tables") / "db"
    cli("build", "--max-seeds", str(TOP), "--db", str(d))
    return d


@pytest.fixture(scope="session")
def vu_dir(db_dir, tmp_path_factory) -> Path:
    """`mancaladb export --format vu` of the tables."""
    d = tmp_path_factory.mktemp("vu")
    cli("export", "--format", "vu", "--db", str(db_dir), "--out", str(d))
    return d


@pytest.fixture(scope="session")
def tables_only(db_dir, tmp_path_factory) -> Path:
    """The tables without their raw copies: levels must be decompressed."""
    d = tmp_path_factory.mktemp("tables-only")
    for f in db_dir.glob("awari-*.mdb"):
        shutil.copy(f, d / f.name)
    return d
