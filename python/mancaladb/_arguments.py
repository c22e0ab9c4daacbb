"""Arguments checked alike everywhere in the package."""

import operator
from typing import Any

import numpy as np


def integer(value: Any, name: str) -> int:
    """``value`` as an ``int``: an integer or anything with ``__index__``,
    but not a ``bool``, NumPy's included (``True`` is no seed count or
    pit), else ``TypeError`` naming the argument."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None


def flag(value: Any, name: str, *, or_none: bool = False) -> bool:
    """``value`` as a ``bool``: a ``bool`` (NumPy's too) or an integer, as
    Python's own flags take them (``sorted``'s ``reverse``), else
    ``TypeError`` naming the argument: ``bool("false")`` is ``True``, which
    would answer another question than the one asked. ``or_none``: the
    argument also takes ``None`` (which the caller handles before), and the
    message says so."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    try:
        return bool(operator.index(value))
    except TypeError:
        values = "True, False, None or an integer" if or_none else "True, False or an integer"
        raise TypeError(f"{name} must be {values}, got {type(value).__name__}") from None
