"""Building from Python: the committed checksums, reports per level,
resuming, and a build stopped by the caller."""

import hashlib
import logging
import os
import signal
from pathlib import Path

import pytest

import mancaladb
from conftest import ROOT, in_forked_child


def committed(rules):
    """(level -> file sha256) from db/CHECKSUMS."""
    out = {}
    for line in (ROOT / "db" / "CHECKSUMS").read_text().splitlines():
        f = line.split()
        if f and not line.startswith("#") and f[0] == rules:
            out[int(f[1])] = f[4]
    return out


class FakeBar:
    """A tqdm bar that keeps what it is told."""

    def __init__(self, total, desc, **kw):
        self.desc, self.total, self.updates, self.closed = desc, total, [], False
        self.late = False  # updated after it was closed

    @property
    def done(self):
        return sum(self.updates)

    def update(self, n):
        self.late |= self.closed
        self.updates.append(n)

    def set_postfix(self, **kw):
        pass

    def close(self):
        self.closed = True


@pytest.fixture
def notebook(monkeypatch):
    """A notebook with tqdm, off a terminal: the bars made, in order."""
    import sys
    import types

    bars = []

    def make(total, desc, **kw):
        bars.append(FakeBar(total, desc, **kw))
        return bars[-1]

    tqdm = types.ModuleType("tqdm")
    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = make
    tqdm.auto = auto
    monkeypatch.setitem(sys.modules, "tqdm", tqdm)
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setattr(mancaladb, "_stderr_is_terminal", lambda: False)
    return bars


@pytest.mark.parametrize("rules", ["awari", "abapa"])
def test_built_tables_match_the_committed_checksums(tmp_path, rules):
    seen = []
    reports = mancaladb.build(tmp_path, 10, rules, progress=False, on_level=seen.append)
    assert [r["seeds"] for r in reports] == list(range(11)) == [r["seeds"] for r in seen]
    assert reports[10]["positions"] == mancaladb.level_size(10)
    want = committed(rules)
    for n in range(11):
        got = hashlib.sha256((tmp_path / f"{rules}-{n:02d}.mdb").read_bytes()).hexdigest()
        assert got == want[n], n
    again = mancaladb.build(tmp_path, 10, rules, progress=False)
    assert all(r["skipped"] for r in again)


def test_an_on_level_that_is_no_function_is_refused_before_anything_is_built(tmp_path, db_dir):
    # It was called first after level 0 was built and written.
    with pytest.raises(TypeError, match="on_level must be a function or None, got int"):
        mancaladb.build(tmp_path / "db", 3, progress=False, on_level=5)
    assert not (tmp_path / "db").exists()
    with mancaladb.open(db_dir) as db:
        with pytest.raises(TypeError, match="on_level must be a function or None, got str"):
            db.verify(3, on_level="print")


def test_a_progress_that_is_no_flag_is_refused_naming_none_too(tmp_path):
    # None (the default) is one of its values: the message left it out.
    with pytest.raises(TypeError, match="progress must be True, False, None or an integer, got str"):
        mancaladb.build(tmp_path / "db", 3, progress="yes")
    assert not (tmp_path / "db").exists()


def test_an_exception_in_on_level_stops_after_that_level(tmp_path):
    def stop_at_4(report):
        if report["seeds"] == 4:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough") as stopped:
        mancaladb.build(tmp_path, 9, progress=False, on_level=stop_at_4)
    assert [r["seeds"] for r in stopped.value.results] == [0, 1, 2, 3, 4]
    with mancaladb.open(tmp_path) as db:
        assert db.levels() == [0, 1, 2, 3, 4]
    rest = mancaladb.build(tmp_path, 6, progress=False)
    assert [r["skipped"] for r in rest] == [True] * 5 + [False] * 2


def test_progress_lines_off_a_terminal_and_a_bar_in_a_notebook(tmp_path, capfd, notebook):
    # progress=True off a terminal: a line per finished stage on stderr.
    mancaladb.build(tmp_path / "a", 5, progress=True)
    err = capfd.readouterr().err
    assert f"level 5: values: {mancaladb.level_size(5)} done in" in err, err
    # The default in a notebook: a tqdm bar advanced by each level's positions.
    bars = notebook
    mancaladb.build(tmp_path / "b", 5)
    sizes = [mancaladb.level_size(n) for n in range(6)]
    # One bar for the build, advanced by each level's positions...
    whole = bars[0]
    assert (whole.desc, whole.total, whole.done, whole.closed) == ("awari levels", sum(sizes), sum(sizes), True)
    # ... and one for each stage of each level, filled and closed.
    stages = [(b.desc, b.total, b.done, b.closed) for b in bars[1:]]
    for n in range(6):
        for stage in ["moves", "values"]:
            assert (f"level {n}: {stage}", sizes[n], sizes[n], True) in stages, stages
    assert all(done == total and closed for _, total, done, closed in stages)
    assert not any(b.late for b in bars), "a bar updated after it was closed"
    assert len(stages) == 18
    assert capfd.readouterr().err == ""
    # A level past the game is refused before the bar is made, as without
    # one (the bar's total used to ask for level 49 first).
    with pytest.raises(ValueError, match="max_seeds 49: an Oware game has 0 to 48 seeds"):
        mancaladb.build(tmp_path / "c", 49)


def test_ctrl_c_stops_after_the_level(tmp_path):
    import os
    import signal

    def interrupt_at_2(report):
        if report["seeds"] == 2:
            os.kill(os.getpid(), signal.SIGINT)

    # Python leaves SIGINT ignored when it starts with it ignored (as in a
    # background job of a script): Ctrl-C's handler, as in a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            mancaladb.build(tmp_path, 9, progress=False, on_level=interrupt_at_2)
    finally:
        signal.signal(signal.SIGINT, previous)
    # The levels built, the last one included, ride on the exception.
    assert [r["seeds"] for r in stopped.value.results] == [0, 1, 2]
    with mancaladb.open(tmp_path) as db:
        assert db.levels() == [0, 1, 2]


def test_notices_go_to_the_mancaladb_logger(tmp_path, caplog, capfd):
    caplog.set_level(logging.INFO, logger="mancaladb")
    mancaladb.build(tmp_path, 6, progress=False)
    ours = lambda: [r for r in caplog.records if r.name == "mancaladb"]  # noqa: E731
    start = [r for r in ours() if r.notice["kind"] == "building"]
    assert len(start) == 1 and start[0].levelno == logging.INFO
    fields = start[0].notice
    assert fields == {
        "kind": "building",
        "rules": "awari",
        "levels": "0..6",
        "dir": str(tmp_path),
        "ranks": 1,
        "threads": fields["threads"],
    }
    threads = fields["threads"]
    assert threads >= 1
    assert start[0].getMessage() == f"building awari levels 0..6 in {tmp_path} with {threads} threads"
    # A damaged level is rebuilt: a warning, with the level and the damage.
    path = tmp_path / "awari-04.mdb"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    caplog.clear()
    reports = mancaladb.build(tmp_path, 6, progress=False)
    rebuilt = [r for r in ours() if r.notice["kind"] == "rebuilding"]
    assert [(r.levelno, r.notice["seeds"]) for r in rebuilt] == [(logging.WARNING, 4)]
    assert str(path) in rebuilt[0].notice["why"]
    assert [r["seeds"] for r in reports if not r["skipped"]] == [4]
    assert reports[4]["replaced"] == rebuilt[0].notice["why"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == committed("awari")[4]
    # progress=False: nothing on stderr; the logger holds the notices.
    assert capfd.readouterr().err == ""


def test_notebook_stage_bars_move_while_a_stage_runs(tmp_path, monkeypatch, notebook):
    """A stage's bar is updated while the stage runs (here at every advance
    the library reports, the least interval set to 0), not only at its
    end."""
    monkeypatch.setattr(mancaladb, "_BAR_SECONDS", 0.0)
    mancaladb.build(tmp_path, 10)
    bars = {b.desc: b for b in notebook}
    values = bars["level 10: values"]
    assert values.closed and values.done == values.total == mancaladb.level_size(10)
    assert len(values.updates) > 1, values.updates
    # A verify in a notebook shows its stages the same way.
    notebook.clear()
    with mancaladb.open(tmp_path) as db:
        db.verify(10)
    bars = {b.desc: b for b in notebook}
    check3 = bars["level 10: re-derivation (thresholds x positions)"]
    assert check3.closed and check3.done == check3.total == 10 * mancaladb.level_size(10)


def test_ctrl_c_seen_first_by_a_log_handler_stops_after_the_level(tmp_path):
    """Python runs a pending SIGINT's handler in the first Python code it
    runs: here a log handler of the `building` notice. The interrupt must
    still stop the build, after level 0."""

    class InterruptOnce(logging.Handler):
        sent = False

        def emit(self, record):
            if not self.sent:
                self.sent = True
                os.kill(os.getpid(), signal.SIGINT)

    log = logging.getLogger("mancaladb")
    handler = InterruptOnce()
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.INFO)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            mancaladb.build(tmp_path, 9, progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
        log.removeHandler(handler)
        log.setLevel(level)
    assert handler.sent
    with mancaladb.open(tmp_path) as db:
        assert db.levels() == [0]


def test_a_build_beyond_the_machines_memory_is_refused_in_python_terms(tmp_path):
    # As the command line's test: only where level 48 (1.25 bytes a
    # position) does not fit, which is every machine this runs on.
    need = 1.25 * mancaladb.level_size(48)
    if need <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"):
        pytest.skip("level 48 would fit: the build would run for days")
    with pytest.raises(ValueError, match="level 48 needs about 254.6 GB") as caught:
        mancaladb.build(tmp_path / "db", max_seeds=48, progress=False)
    # No command of the command line is offered to a Python caller.
    assert "mancaladb known" not in str(caught.value)
    assert not (tmp_path / "db" / "awari-00.mdb").exists()


def test_the_checkpoint_interval_comes_from_the_environment(tmp_path, caplog, monkeypatch):
    # As documented: read when build is called. 0: after every threshold.
    caplog.set_level(logging.INFO, logger="mancaladb")
    monkeypatch.setenv("MANCALADB_CHECKPOINT_SECS", "0")
    mancaladb.build(tmp_path / "every", 6, progress=False)
    saved = [r.notice["seeds"] for r in caplog.records
             if r.name == "mancaladb" and r.notice["kind"] == "solve_checkpoint"]
    assert 6 in saved
    caplog.clear()
    monkeypatch.setenv("MANCALADB_CHECKPOINT_SECS", "off")
    mancaladb.build(tmp_path / "none", 6, progress=False)
    assert not [r for r in caplog.records
                if r.name == "mancaladb" and r.notice["kind"] == "solve_checkpoint"]
    monkeypatch.setenv("MANCALADB_CHECKPOINT_SECS", "soon")
    with pytest.raises(ValueError, match="MANCALADB_CHECKPOINT_SECS=soon"):
        mancaladb.build(tmp_path / "bad", 6, progress=False)


def test_a_child_made_by_fork_builds_and_verifies_after_its_parent_did(tmp_path):
    # multiprocessing's default start method on Linux, and PyTorch's
    # DataLoader workers: the child inherits the parent's worker pool but
    # not its threads, and its first build used to wait for them for ever.
    committed_awari = committed("awari")
    mancaladb.build(tmp_path / "parent", 6, progress=False)

    def child():
        mancaladb.build(tmp_path / "child", 9, progress=False)
        with mancaladb.open(tmp_path / "child") as db:
            return all(r["passed"] for r in db.verify(range(7, 10), progress=False))

    assert in_forked_child(child, 120), "the forked child's build hung or failed"
    for n in range(10):
        path = tmp_path / "child" / f"awari-{n:02}.mdb"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == committed_awari[n]


def test_a_process_that_cannot_start_threads_gets_an_os_error(tmp_path):
    # A stack no machine has, as a limit on the process's threads would:
    # an OSError, where rayon starting its threads on first use panicked.
    import subprocess
    import sys
    code = ("import mancaladb, sys\n"
            "try:\n"
            f"    mancaladb.build({str(tmp_path)!r}, 3, progress=False)\n"
            "except OSError as e:\n"
            "    print(e)\n"
            "    sys.exit(0)\n"
            "sys.exit(1)\n")
    env = dict(os.environ, RUST_MIN_STACK="100000000000000")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("cannot start the worker threads: "), out.stdout
