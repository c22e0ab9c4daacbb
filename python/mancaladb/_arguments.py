"""Arguments checked alike everywhere in the package."""

import operator
from typing import Any


def integer(value: Any, name: str) -> int:
    """``value`` as an ``int``: an integer or anything with ``__index__``,
    but not a ``bool`` (``True`` is no seed count or pit), else
    ``TypeError`` naming the argument."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
