"""Oware/Awari endgame databases from Python.

Probe positions (``open(...).value(pits)``), list move values and principal
lines, load whole levels as NumPy arrays in the published (Romein & Bal /
VU) index order, map boards to indices and back, build and verify tables
(progress as bars, notices to the ``mancaladb`` logger), and decide Omweso
loops (:mod:`mancaladb.omweso`). Everything is answered by the
mancaladb Rust library; this package converts and names the results.

A board is twelve pit counts, the player to move's pits 0..5 first (from
their left, counter-clockwise), then the opponent's 6..11: a sequence of
integers or a string such as ``"1 1 1 1 1 2 4 2 3 0 0 0"``.
"""

from __future__ import annotations

import collections.abc
import itertools
import json
import logging
import operator
import os
import sys
import weakref
from typing import (Any, Callable, Iterable, List, NamedTuple, Optional, Sequence,
                    Tuple, Union)

import numpy as np
import numpy.typing as npt

try:
    from . import _native
except ImportError as _not_built:
    # Python started in python/ of the repository finds the sources there
    # first, without the built module ("circular import" otherwise). A
    # module there that fails to load says so itself.
    if any(n.startswith("_native.") and not n.endswith(".pyi")
           for n in os.listdir(os.path.dirname(__file__))):
        raise
    raise ImportError(f"mancaladb's native module is not in {os.path.dirname(__file__)}: "
                      f"that is the package's source, not the installed package; install "
                      f"it (pip install ./python) and run Python from another directory") from _not_built
from . import omweso
from ._arguments import flag, integer
from ._errors import CorruptTableError, MancalaDbError, MissingLevelError

__version__: str = _native.__version__

__all__ = [
    "open",
    "NO_MOVE",
    "Database",
    "Move",
    "Analysis",
    "Ply",
    "Line",
    "rank",
    "ranks",
    "unrank",
    "boards",
    "level_size",
    "build",
    "omweso",
    "MancalaDbError",
    "MissingLevelError",
    "CorruptTableError",
]

for _error in (MancalaDbError, MissingLevelError, CorruptTableError):
    _error.__module__ = __name__  # mancaladb.MissingLevelError in tracebacks
del _error

PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
"""A directory: text, bytes or a path object."""

Pits = Union[str, Sequence[int], np.ndarray]
"""One board: twelve counts as a sequence of integers or one string."""

Board = Tuple[int, ...]
"""A board as returned: a tuple of twelve counts."""

Boards = Union[np.ndarray, Iterable[Sequence[int]]]
"""Many boards: a ``(k, 12)`` integer array, or rows of twelve counts (a
list, or an iterator of them)."""

NO_MOVE: int = _native.NO_MOVE
"""What :meth:`Database.move_values` gives for a pit with no legal move:
-128, below every value, so a row's maximum is its best move's value."""


class Move(NamedTuple):
    """A legal move and what it is worth to the mover."""

    pit: int
    """The pit sown, 0..5."""
    captures: int
    """Seeds the move takes."""
    value: int
    """``captures - value(child)``: the mover's stone difference after it."""
    child: Board
    """The position after the move, seen by the opponent (now to move)."""


class Analysis(NamedTuple):
    """A position's value, where it came from, and each legal move: what
    ``mancaladb query --json`` and the server's ``/api/awari`` answer."""

    seeds: int
    """Seeds on the board."""
    value: int
    """The best stone difference the player to move can still get."""
    category: str
    """``"win"``, ``"draw"`` or ``"loss"`` for the player to move."""
    valued_by: str
    """``"level"`` (read from its level), ``"moves"`` (not stored: every
    opponent pit is filled, so valued from its moves) or ``"rules"`` (the
    player to move has no seeds: ``-seeds``)."""
    moves: List[Move]
    """The legal moves in pit order (none when the player to move has no
    seeds)."""
    best: List[int]
    """The pits of the moves worth ``value``."""
    final: Optional[Tuple[float, float]]
    """With ``captured``: the seeds the player to move and the opponent end
    the game with under best play (a half when endless play splits an odd
    count); ``None`` without."""


class Ply(NamedTuple):
    """One ply of a principal line."""

    board: Board
    """The position before the move, seen by the player making it."""
    pit: int
    """The pit played: a best move. Where the value is not 0 the side ahead
    plays toward its next capture, the other side the lowest pit among its
    best moves; at value 0 both take the lowest."""
    captures: int
    """Seeds taken."""
    value: int
    """The position's value for the player making the move."""


class Line(NamedTuple):
    """A principal line and how it ends."""

    plies: List[Ply]
    """The plies, best move first."""
    end: str
    """``"game-over"``, ``"cycle"`` (a position of value 0 repeats: play
    goes round forever, worth 0), ``"no-progress"`` (a position of another
    value repeats: the search for how the side ahead makes progress gave up
    at that level, so the line does not show it) or ``"limit"`` (cut at
    ``max_plies``)."""
    cycle_ply: Optional[int]
    """For ``"cycle"`` and ``"no-progress"``, the index of the ply whose
    position repeats."""


def _document_fields(*classes: type) -> None:
    """Gives the fields of the named tuples ``classes`` the docstrings
    written under them in this file (Python drops those at run time, and
    ``help()`` would say "Alias for field number 0"), and their signatures
    the resolved types (``ForwardRef('int')`` otherwise)."""
    import ast
    import inspect
    import typing
    try:
        tree = ast.parse(inspect.getsource(sys.modules[__name__]))
    except (OSError, TypeError):
        return  # no source at hand: the plain docs
    bodies = {node.name: node.body for node in tree.body if isinstance(node, ast.ClassDef)}
    for cls in classes:
        body = bodies.get(cls.__name__, [])
        for field, doc in zip(body, body[1:]):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                    and isinstance(doc.value.value, str)):
                getattr(cls, field.target.id).__doc__ = inspect.cleandoc(doc.value.value)
        cls.__new__.__annotations__.update(typing.get_type_hints(cls))


_document_fields(Move, Analysis, Ply, Line)


# Every Database made in this process, for the child of a fork.
_OPEN: "weakref.WeakSet[Database]" = weakref.WeakSet()
# The native handles a fork's child inherited: never dropped (see below).
_INHERITED: List[Any] = []


def _reopen_in_child() -> None:
    """In the child of a ``fork``, each open Database opens its directory
    afresh. The parent's threads are not in the child: a lock or a level
    being opened that one of them held at the fork would stay held there
    for good, and the child would wait on it for ever. The inherited
    handles are kept, not closed (closing could wait on such a lock), so
    that arrays of theirs stay valid."""
    for database in list(_OPEN):
        if database._closed:
            continue  # asked only of Python: the native handle's own lock may be held
        try:
            fresh = _native.Database(*database._opened)
        except Exception:
            continue  # the directory went: the inherited handle says so when used
        _INHERITED.append(database._db)
        database._db = fresh


os.register_at_fork(after_in_child=_reopen_in_child)


class Database:
    """An open table directory (or directory of published ``scores.N``
    files). Use :func:`open`. Thread-safe: probes from several threads run
    in parallel (the GIL is released inside the library). Usable in
    ``with``; :meth:`close` drops the maps (arrays from :meth:`level` keep
    their data)."""

    def __init__(self, db: Optional[PathArg] = None, rules: str = "awari",
                 vu: Optional[PathArg] = None) -> None:
        if db is not None and vu is not None:
            raise ValueError("give db (tables) or vu (published files), not both")
        db = "db" if db is None else db
        # Made absolute now: a handle that changing the working directory
        # (a notebook's os.chdir, Hydra) moved would read from two places.
        here = os.getcwd()
        self._opened = (os.path.join(here, _path(db, "db")), rules,
                        None if vu is None else os.path.join(here, _path(vu, "vu")))
        self._db = _native.Database(*self._opened)
        self._closed = False
        _OPEN.add(self)

    def __reduce__(self) -> Any:
        """Pickled as what it reads (its directory, absolute, and its
        rules): unpickled, in a worker process say, it opens the same
        directory afresh. A closed handle is not pickled (``ValueError``)."""
        where, vu = self._db.location
        return (Database, (None, self.rules, where) if vu else (where, self.rules, None))

    def __enter__(self) -> "Database":
        # As a closed file does: a `with` on a closed handle is a mistake.
        if self._db.closed:
            raise ValueError("the database is closed")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._db.closed:
            return "<mancaladb.Database closed>"
        where, vu = self._db.location
        kind = "vu" if vu else "db"
        return f"<mancaladb.Database {kind}={os.fspath(where)!r} rules={self.rules!r}>"

    def close(self) -> None:
        """Drop this handle's open tables and maps; later calls raise
        ``ValueError``."""
        self._closed = True
        self._db.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._db.closed

    @property
    def rules(self) -> str:
        """The rule set moves are generated by: ``"awari"`` or ``"abapa"``."""
        return self._db.rules

    def value(self, pits: Pits) -> int:
        """The value of a position for the player to move: the best stone
        difference they can still get (``-seeds..seeds``; 0 is a draw).
        Stored positions take one probe; a board with every opponent pit
        filled (like the starting positions) is valued from its moves.

        Raises ``ValueError`` for a bad board (the command line's message),
        ``TypeError`` for counts that are not integers (as :meth:`values`),
        :class:`MissingLevelError` when a level it needs is absent,
        :class:`CorruptTableError` for a damaged table."""
        return self._db.value(pits)

    def get_value(self, pits: Pits, default: Optional[int] = None) -> Optional[int]:
        """:meth:`value`, or ``default`` when a level it needs is missing."""
        try:
            return self._db.value(pits)
        except MissingLevelError:
            return default

    def values(self, boards: Boards) -> npt.NDArray[np.int8]:
        """The values of many boards at once: a ``(k, 12)`` integer array in,
        a ``(k,)`` ``int8`` array out (the GIL is held while the array is
        copied, and released while the rows are checked and the values
        read). A bad row raises
        ``ValueError`` naming the row; counts that are not integers,
        ``TypeError``."""
        return self._db.values(_board_array(boards))

    def move_values(self, boards: Boards) -> npt.NDArray[np.int8]:
        """The value of every move of many boards at once: a ``(k, 12)``
        integer array in (as :meth:`values` takes it), a ``(k, 6)`` ``int8``
        array out, column ``p`` what sowing pit ``p`` is worth to the mover
        (``captures - value(child)``, as :meth:`moves` gives it) and
        :data:`NO_MOVE` where pit ``p`` has no legal move: the labels of a
        policy. A row's maximum is the board's value, except where no pit
        can move: that row is all :data:`NO_MOVE`, and the value is
        ``-seeds``. A stored board whose best move is not worth its stored
        value raises ``CorruptTableError``, as :meth:`moves` does. The GIL
        is released while the values are read."""
        return self._db.move_values(_board_array(boards))

    def moves(self, pits: Pits) -> List[Move]:
        """Each legal move in pit order: pit, captures, value, child board.
        Empty when the player to move has no seeds."""
        return [Move(pit, captures, value, tuple(child))
                for pit, captures, value, child in self._db.moves(pits)]

    def analyze(self, pits: Pits, captured: Optional[Tuple[int, int]] = None) -> Analysis:
        """The value of a position, what it means, where it came from, each
        legal move and the best ones, in one call (:class:`Analysis`). With
        ``captured``, the seeds the player to move and the opponent took
        before, which with the board's must make the game's 48, also what
        each ends with (``final``). Raises as :meth:`value` does; a bad
        ``captured``, ``ValueError`` (``TypeError`` for counts that are not
        integers)."""
        taken: Optional[Tuple[int, int]] = None
        if captured is not None:
            # Any pair with a length (a tuple, a list, a NumPy row), but not
            # text, a set (which count is the mover's?), a mapping or an
            # iterator.
            unordered = (str, bytes, collections.abc.Set, collections.abc.Mapping,
                         collections.abc.Iterator)
            if (isinstance(captured, unordered) or not hasattr(captured, "__len__")
                    or len(captured) != 2):
                raise ValueError(f"captured {captured!r}: give two seed counts, (mover, opponent)")
            mover, opponent = (integer(c, "captured") for c in captured)
            if min(mover, opponent) < 0:
                raise ValueError(f"captured {mover},{opponent}: a seed count cannot be negative")
            if max(mover, opponent) > 48:
                raise ValueError(f"captured {mover},{opponent}: a side takes at most the game's 48 seeds")
            taken = (mover, opponent)
        seeds, value, category, valued_by, moves, best, final = self._db.analyze(pits, taken)
        return Analysis(seeds, value, category, valued_by,
                        [Move(pit, captures, value, tuple(child)) for pit, captures, value, child in moves],
                        best, final)

    def line(self, pits: Pits, max_plies: int = _native.LINE_PLIES) -> Line:
        """The principal line: best moves (see :class:`Ply`) until the game
        ends, a position repeats (``"cycle"`` at value 0, ``"no-progress"``
        otherwise), or ``max_plies`` plies. Raises
        :class:`MissingLevelError` when it reaches a level not present;
        ``max_plies`` not an integer, ``TypeError``; negative,
        ``ValueError``."""
        max_plies = integer(max_plies, "max_plies")
        if max_plies < 0:
            raise ValueError(f"max_plies {max_plies}: a number of plies is at least 0")
        # A line ends at the first repeat, long before 2**63 plies: no limit
        # above that is any different.
        plies, end, cycle_ply = self._db.line(pits, min(max_plies, 2**63 - 1))
        return Line([Ply(tuple(b), pit, captures, value) for b, pit, captures, value in plies],
                    end, cycle_ply)

    def levels(self) -> List[int]:
        """The levels (seed counts) present, in order."""
        return self._db.levels()

    def verified(self, seeds: int) -> bool:
        """Whether level ``seeds`` passed every check of ``mancaladb verify``
        with the content it has now, as its header's content checksum says
        (always ``False`` for VU files; ``False`` for a level not built).
        A level whose file is there but cannot be opened as that level
        raises ``CorruptTableError`` (damaged) or ``OSError`` (not a file),
        as reading it would. Damage inside a block since the check is caught
        when that block is read."""
        return self._db.verified(_level_number(seeds))

    def verify(self, seeds: Union[None, int, Iterable[int]] = None, checks: int = 3, *,
               progress: Optional[bool] = None,
               on_level: Optional[Callable[[dict], Any]] = None) -> List[dict]:
        """Check levels as ``mancaladb verify`` does: ``seeds`` is a level, an
        iterable of levels (``range(10, 17)``) or ``None`` for every level
        present; ``checks`` runs checks 1 (integrity) to 3 (independent
        re-derivation). Returns one dict per level (``seeds``, ``passed``,
        ``integrity``, ``consistency``, ``rederivation``, ``seconds``; a
        check is ``"pass"``, ``None`` when not run, ``{"error": ...}``,
        ``{"differ": n, "first": [...]}`` or ``{"blocked_by": level}``). A
        failed check is a result, not an exception: look at ``passed``.

        The levels of a table directory that pass all three checks are
        recorded as verified (:meth:`verified`). Checks 2 and 3 of a table
        directory save checkpoints and resume from them, as on the command
        line. Levels are checked in ascending order, each once.

        ``progress``: ``None`` (default) shows bars when standard error is a
        terminal and tqdm bars in a notebook, ``True`` the command line's
        bars always (a line per finished stage off a terminal), ``False``
        none; notices go to the ``mancaladb`` logger as for :func:`build`.
        ``on_level(result)`` is called after each level (before the level
        is recorded: ``verified(n)`` is still ``False`` there). Ctrl-C, or
        an exception in ``on_level``, stops the run after the level it is on
        (a check of a large level takes hours); the exception raised holds
        the results so far, that level's included, in its ``results``
        attribute."""
        _callback(on_level, "on_level")
        if integer(checks, "checks") not in (1, 2, 3):
            raise ValueError(f"checks is 1 (integrity), 2 (and consistency) or 3 (and "
                             f"re-derivation), got {checks!r}")
        if seeds is None:
            levels = None
        elif isinstance(seeds, Iterable):
            levels = [_level_number(n) for n in seeds]
        else:
            levels = [_level_number(seeds)]

        def level_done(text: str) -> None:
            if on_level is not None:
                on_level(json.loads(text))

        return _results_so_far(
            lambda: self._db.verify(levels, checks, _stages(progress), level_done, _log_notice))

    def level(self, seeds: int) -> npt.NDArray[np.int8]:
        """All values of level ``seeds`` as a read-only ``int8`` array in index
        order (``level(n)[rank(b)]`` is the value of ``b``), equal byte for
        byte to ``scores.N`` of the published layout. Mapped from the raw
        copy or VU file without copying when there is one, else the table is
        decompressed once; while an array of the level is alive, later calls
        share it (calls from other threads meanwhile wait for that one
        decompression)."""
        return self._db.level(_level_number(seeds))


def open(db: Optional[PathArg] = None, rules: str = "awari", *,
         vu: Optional[PathArg] = None) -> Database:
    """Open the tables of ``rules`` in directory ``db`` (default ``"db"``, as
    built by ``mancaladb build`` or :func:`build`), or with ``vu=DIR`` the
    published ``scores.N`` files in ``DIR``, read in place (``db`` and
    ``vu`` together are a ``ValueError``). A directory that does not exist
    raises ``FileNotFoundError``; a missing level is only an error when a
    probe needs it."""
    return Database(db, rules, vu)


def rank(pits: Pits) -> int:
    """The index of a stored board within its level (its seed count): the
    published numbering. ``ValueError`` for a board outside the stored
    domain (every opponent pit filled)."""
    return _native.rank(pits)


def ranks(boards: Boards) -> npt.NDArray[np.uint64]:
    """:func:`rank` of each row of a ``(k, 12)`` integer array, as a ``uint64``
    array: with :meth:`Database.level`, ``level(n)[ranks(b)]`` values many
    boards of level ``n`` at memory speed. A bad row raises ``ValueError``
    naming the row."""
    return _native.ranks(_board_array(boards))


def unrank(seeds: int, index: int) -> Board:
    """The board at ``index`` of level ``seeds``."""
    return tuple(_native.unrank(_level_number(seeds), _index(index, "index")))


def boards(seeds: int, start: int = 0, stop: Optional[int] = None) -> npt.NDArray[np.uint8]:
    """The boards at indices ``start..stop`` of level ``seeds`` (``stop``
    defaults to the level's end) as a ``(stop - start, 12)`` ``uint8`` array,
    row ``i`` being the board of index ``start + i``: walked in index order,
    not unranked one by one."""
    seeds = _level_number(seeds)
    if stop is None:
        stop = level_size(seeds)
    return _native.boards(seeds, _index(start, "start"), _index(stop, "stop"))


def level_size(seeds: int) -> int:
    """The number of positions in level ``seeds``:
    ``C(seeds+11, 11) - C(seeds+5, 11)``."""
    return _native.level_size(_level_number(seeds))


def build(db: PathArg = "db", max_seeds: int = 16, rules: str = "awari", *,
          progress: Optional[bool] = None, wait: bool = False,
          on_level: Optional[Callable[[dict], Any]] = None) -> List[dict]:
    """Build levels ``0..max_seeds`` of ``rules`` into ``db``, as ``mancaladb
    build`` does; levels already built and sound are skipped, so a build
    resumes. Returns one report per level (``seeds``, ``positions``,
    ``skipped``, ``seconds``, ``peak_rss``, ``file_bytes``, ...).

    ``progress``: ``None`` (default) shows progress bars on a terminal and
    ``tqdm`` bars in a notebook (when tqdm is installed: one for the whole
    build, one for each stage of a level); ``True`` always
    shows the command line's bars, or a line per finished stage off a
    terminal, on standard error; ``False`` nothing. What happens besides
    (the build starts, a checkpoint is saved or resumed, a damaged table is
    rebuilt) is logged to the ``mancaladb`` logger, as warnings when work
    or data is thrown away, as info otherwise; each record carries the
    notice's fields as a dict in its ``notice`` attribute (``kind``,
    ``seeds``, ...). ``on_level(report)`` is called after each level. One writer at
    a time: if another process is building in ``db``, this raises
    :class:`MancalaDbError` at once, or with ``wait=True`` waits for it. The GIL is
    released while building; Ctrl-C (or an exception in ``on_level``) stops
    the build after the level it is on, finished levels kept; the exception
    raised holds their reports, that level's included, in its ``results``
    attribute."""
    _callback(on_level, "on_level")
    max_seeds = integer(max_seeds, "max_seeds")
    if not 0 <= max_seeds <= 48:
        # The number given, as the command line's --max-seeds says it (the
        # build would name level 49, which was not asked for).
        raise ValueError(f"max_seeds {max_seeds}: an Oware game has 0 to 48 seeds")
    wait = flag(wait, "wait")
    bar = None
    stages = _stages(progress)
    if isinstance(stages, tuple):
        bar = _tqdm_bar(sum(level_size(n) for n in range(max_seeds + 1)), rules)

    def level_done(text: str) -> None:
        report = json.loads(text)
        if bar is not None:
            bar.update(report["positions"])
            bar.set_postfix(level=report["seeds"])
        if on_level is not None:
            on_level(report)

    try:
        return _results_so_far(
            lambda: _native.build(_path(db, "db"), max_seeds, rules, stages, wait, level_done,
                                  _log_notice))
    finally:
        if bar is not None:
            bar.close()


def _results_so_far(run: Callable[[], str]) -> Any:
    """The JSON text ``run`` returns, parsed; an exception that stopped it
    (Ctrl-C, or one raised by ``on_level``) gets the results of the levels
    done so far in its ``results`` attribute."""
    try:
        return json.loads(run())
    except BaseException as e:
        done = getattr(e, "_mancaladb_results", None)
        if done is not None:
            e.results = json.loads(done)  # type: ignore[attr-defined]
        raise


_log = logging.getLogger("mancaladb")


def _log_notice(warning: bool, text: str, fields: str) -> None:
    """One of the library's notices, to the ``mancaladb`` logger."""
    level = logging.WARNING if warning else logging.INFO
    if _log.isEnabledFor(level):
        _log.log(level, "%s", text, extra={"notice": json.loads(fields)})


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty() and os.isatty(2)
    except (AttributeError, ValueError, OSError):
        return False


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules


def _tqdm() -> Any:
    try:
        from tqdm.auto import tqdm  # type: ignore  # optional, untyped
    except ImportError:
        return None
    return tqdm


def _tqdm_bar(total: int, rules: str) -> Any:
    return _tqdm()(total=total, unit="pos", unit_scale=True, desc=f"{rules} levels")


def _tqdm_stage(label: str, total: int) -> Any:
    """A bar for one stage of a level (positions, or tiles of captures)."""
    return _tqdm()(total=total, unit_scale=True, desc=label, leave=False)


_BAR_SECONDS = 0.25
"""Least time between two updates of a stage's tqdm bar."""


def _stages(progress: Optional[bool]) -> Any:
    """Where the library's stages are shown, for ``progress``: ``True`` the
    command line's bars (lines off a terminal), ``False`` nowhere, ``None``
    the command line's on a terminal, else tqdm bars in a notebook (a bar
    factory and the least time between updates)."""
    if progress is not None:
        return flag(progress, "progress", or_none=True)
    if _stderr_is_terminal():
        return True
    if _in_notebook() and _tqdm() is not None:
        return (_tqdm_stage, _BAR_SECONDS)
    return False


def _callback(f: Any, name: str) -> None:
    """Refuses ``f`` unless it is ``None`` or callable (``TypeError``),
    before any work that it would hear of."""
    if f is not None and not callable(f):
        raise TypeError(f"{name} must be a function or None, got {type(f).__name__}")


def _level_number(n: Any) -> int:
    """A level's seed count: an integer (``TypeError`` otherwise) in 0..48
    (``ValueError``)."""
    seeds = integer(n, "a level")
    if seeds < 0:
        raise ValueError(f"level {seeds}: a level is a seed count, 0 or more")
    if seeds > 48:
        # As the library words it (level_size(49)), for any size of int.
        raise ValueError(f"level {seeds}: levels go up to 48")
    return seeds


def _index(i: Any, name: str) -> int:
    """A position's index (or a bound of a range of them): an integer
    (``TypeError`` otherwise) of 0 or more and below 2**64 (``ValueError``;
    the library checks it against its level)."""
    index = integer(i, name)
    if index < 0:
        raise ValueError(f"{name} {index}: an index is 0 or more")
    if index >= 2**64:
        raise ValueError(f"{name} {index}: past the positions of every level")
    return index


def _path(p: Any, name: str) -> str:
    """A directory given as ``str``, ``bytes`` or ``os.PathLike``, as the
    ``str`` the library takes; anything else is a ``TypeError`` naming the
    argument."""
    try:
        path = os.fsdecode(p)
    except TypeError:
        raise TypeError(f"{name} must be a path (str, bytes or os.PathLike), "
                        f"got {type(p).__name__}") from None
    if not path:
        # Made absolute, it would be the working directory, unasked.
        raise ValueError(f"{name}: an empty path names no directory ('.' names this one)")
    return path


def _refuse_counts_past_int64(boards: Any) -> None:
    """Rows of Python integers, one past int64, become an ``object`` or
    ``float64`` array, which is no integer array: raises the library's
    ``ValueError`` for the first such row, as for one board (:func:`rank`
    reads its counts), rather than a ``TypeError`` naming that dtype.
    Anything else (an array, a float, text) is left to the dtype check."""
    if isinstance(boards, np.ndarray):
        return
    try:
        rows = [[operator.index(c) for c in row] for row in boards]
    except TypeError:
        return
    for i, row in enumerate(rows):
        if any(not -2**63 <= c < 2**63 for c in row):
            try:
                _native.rank(row)
            except ValueError as e:
                raise ValueError(f"row {i}: {e}") from None


def _bounded_rows(rows: Sequence[Any]) -> Sequence[Any]:
    """``rows``, with each row that NumPy would read without bound read no
    further than one count past a board: a row with no ``len()`` (an
    iterator, ``range(2**64)``) is read up to 13 counts and kept as a list
    when it holds 12, and a row of any other length (``range(2**61)``;
    ``itertools.count()``, which NumPy read until memory ran out) raises
    the library's ``ValueError`` naming it. Lists, tuples and arrays, which
    hold their counts already, are left to NumPy (their types are gathered
    in C); so are text and scalars, which its checks refuse."""
    if set(map(type, rows)) <= {list, tuple, np.ndarray}:
        return rows
    bounded = list(rows)
    for k, row in enumerate(bounded):
        if isinstance(row, (list, tuple, np.ndarray, str, bytes)) or not hasattr(row, "__iter__"):
            continue
        try:
            n = len(row)
        except (TypeError, OverflowError):
            bounded[k] = head = list(itertools.islice(iter(row), 13))
            n = len(head)
            if n > 12:
                raise ValueError(f"row {k}: an Oware board has 12 pits, "
                                 "got more than 12 numbers") from None
        if n != 12:
            raise ValueError(f"row {k}: an Oware board has 12 pits, got {n} numbers")
    return bounded


def _holds_bool(rows: Sequence[Any]) -> bool:
    """Whether a row of ``rows`` given as a list or tuple (of at most a
    board's counts: others are refused by their shape) holds a ``bool``.
    The types are gathered in C, about 0.4 s per million rows."""
    short = (r for r in rows if isinstance(r, (list, tuple)) and len(r) <= 12)
    types = set(map(type, itertools.chain.from_iterable(short)))
    return bool in types or np.bool_ in types


def _is_count(c: Any) -> bool:
    """Whether ``c`` is an integer as :func:`integer` takes one (not a
    ``bool``, not a float)."""
    try:
        integer(c, "a pit count")
    except TypeError:
        return False
    return True


def _object_counts(a: np.ndarray) -> np.ndarray:
    """A 2-D ``object`` array (a pandas frame of nullable ``Int64`` columns,
    ``astype(object)``) as ``int64`` when every item is an integer: its
    types gathered in C, then one NumPy cast to a copy of 8 bytes a count
    (two lists of lists, about 350 bytes a row, got a process killed for
    memory at 14 M rows). An item that is no integer (``pd.NA``, ``None``, a
    float, a ``bool``) raises ``TypeError`` naming its row and what it is;
    a count past ``int64`` the library's ``ValueError`` naming its row."""
    # As _is_count takes them: not a bool, nor a timedelta64 (which NumPy
    # counts among its integers).
    if not all(issubclass(t, (int, np.integer))
               and not issubclass(t, (bool, np.bool_, np.timedelta64))
               for t in set(map(type, a.flat))):
        for k, row in enumerate(a):
            for c in row:
                if not _is_count(c):
                    raise TypeError(f"row {k}: pit counts must be integers, "
                                    f"got {type(c).__name__} {c!r}")
    try:
        return a.astype(np.int64)
    except OverflowError:
        _refuse_counts_past_int64(a.tolist())
        raise


def _board_array(boards: Any) -> np.ndarray:
    """``boards`` as an array of an integer type in native byte order and
    aligned (which the library reads in place, negative and large counts
    checked, never wrapped); any other is copied at its width in native
    order, an ``object`` array of integers to ``int64``;
    non-integer data raises ``TypeError``, another shape ``ValueError``;
    an empty list is no boards."""
    if isinstance(boards, (str, bytes)):
        raise TypeError("boards must be a (k, 12) integer array; one board given as text "
                        "is valued by value()")
    if isinstance(boards, collections.abc.Iterator):
        boards = list(boards)  # rows from a generator (not a data frame: its
        # rows come through __array__ below)
    if isinstance(boards, (list, tuple)):
        boards = _bounded_rows(boards)
    if isinstance(boards, (list, tuple)) and _holds_bool(boards):
        # NumPy would read True as 1 in a row of integers.
        raise TypeError("boards must hold integers, got bool")
    try:
        a = np.asarray(boards)
    except ValueError:
        # Rows of different lengths (NumPy's "inhomogeneous shape" names no
        # row): the first that is no board, in the library's words (text
        # and scalars are no rows of counts at all).
        for k, r in enumerate(boards):
            if isinstance(r, (str, bytes)) or not hasattr(r, "__len__"):
                raise TypeError(f"row {k}: a board in a batch is a row of twelve integer "
                                f"counts, got {type(r).__name__}") from None
            if len(r) != 12:
                raise ValueError(f"row {k}: an Oware board has 12 pits, got {len(r)} numbers") from None
        raise
    if a.shape == (0,) and (not isinstance(boards, np.ndarray) or a.dtype.kind in "iu"):
        return np.empty((0, 12), np.uint8)  # an empty list (NumPy makes it float64): no boards
    if a.ndim == 2 and a.shape[0] > 0 and a.shape[1] == 0:  # empty rows (NumPy makes them float64)
        raise ValueError(f"row 0: an Oware board has 12 pits, got {a.shape[1]} numbers")
    if a.dtype == object and a.ndim == 2:
        a = _object_counts(a)
    if a.dtype == object or np.issubdtype(a.dtype, np.floating):
        _refuse_counts_past_int64(boards)
    # Signed or unsigned integers only: NumPy counts timedelta64 among its
    # integers too.
    if a.dtype.kind not in "iu":
        raise TypeError(f"boards must hold integers, got {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"boards must be a (k, 12) array, got shape {a.shape}")
    if a.dtype == np.uint8:
        return a
    # As a uint64 scalar: NumPy before 2.0 compares uint64 with a Python int
    # through float64, which lets 2**63 + 7 pass.
    past_int64 = np.uint64(np.iinfo(np.int64).max)
    # Either byte order: dtype('>u8') == np.uint64 is False.
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > past_int64:
        # Past int64 (which the library would name as the largest int64):
        # its message for a count too large, with the count itself.
        row = int(np.argmax(a.max(axis=1) > past_int64))
        raise ValueError(f"row {row}: an Oware board: pit count {a[row].max()} "
                         "exceeds the 48 seeds of a game")
    if a.dtype.isnative and a.flags.aligned:
        return a  # read in place, whatever its integer type, without a copy
    # Another byte order, or unaligned: a copy of the same width.
    return a.astype(a.dtype.newbyteorder("="))


def __dir__() -> List[str]:
    """The public names (``dir(mancaladb)``, tab completion): the API, its
    type aliases and the module's own attributes, not the modules and
    helpers the package imports."""
    own = [n for n in globals() if n.startswith("__") and n.endswith("__")]
    return sorted(set(__all__ + own + ["Board", "Boards", "Pits", "PathArg"]))
