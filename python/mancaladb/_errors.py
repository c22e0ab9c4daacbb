"""The exceptions the package raises (the native module raises them too)."""

from pathlib import Path
from typing import Optional


class MancalaDbError(Exception):
    """Base of the package's own exceptions."""


class MissingLevelError(MancalaDbError, KeyError):
    """A level needed to answer is not in the directory (a ``KeyError``, as
    python-chess's ``MissingTableError``). ``seeds`` is the level (the
    highest, when several are missing; ``None`` when no level at all is
    there) and ``dir`` the directory (a ``Path``); the message says how to
    build it."""

    seeds: Optional[int] = None
    dir: Optional[Path] = None

    def __str__(self) -> str:
        # KeyError quotes its argument; this is a sentence.
        return str(self.args[0]) if self.args else ""


class CorruptTableError(MancalaDbError):
    """A table (or ``scores.N`` file) is there but cannot be trusted:
    damaged, truncated, of another level, or inconsistent. ``path`` is
    the file (a ``Path``)."""

    path: Optional[Path] = None
