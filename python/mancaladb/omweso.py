"""Omweso (Uganda; 4 rows of 8 pits, relay sowing): does each move of a
configuration end, loop forever, or can it be made to loop? See
``docs/omweso-loops.md`` for the rules and the proofs."""

from __future__ import annotations

import json
from typing import Optional, Sequence, Union

from . import _native
from ._arguments import flag, integer

Side = Union[str, Sequence[int]]
"""A side: 16 pit counts, 0..7 the row nearest the player from their left,
8..15 the inner row from right to left; a sequence or one string."""


def loops(side: Side, opponent: Optional[Side] = None, pit: Optional[int] = None,
          first_turn: bool = False, max_laps: int = 1_000_000_000,
          any_seeds: bool = False) -> dict:
    """Decide every start of the player's side (the opponent's side empty
    unless given, in their own numbering), or only the start(s) from
    ``pit``. Returns the report of ``mancaladb loops --json`` as a dict:
    ``{"starts": [...]}``, one entry per start with its ``pit``,
    ``direction`` (``"ccw"``/``"cw"``), ``verdict`` (``"terminates"``,
    ``"infinite"``, ``"can-loop"``, ``"must-loop"``, ``"undecided"``), the
    deciding criterion, ``lines`` (its choice tree's lines by outcome:
    ``ending``, ``looping``, ``undecided``) and the line shown (laps, seeds
    sown, captures, the end or the proven cycle). ``first_turn``: a match's first turn, without
    captures. ``max_laps``: laps followed per start before answering
    ``"undecided"``. ``any_seeds``: allow more than the 64 seeds of a game in
    play, both sides together (each side still holds at most 64).
    Bad input raises ``ValueError`` with the command line's message (a
    ``pit`` or ``max_laps`` out of range too); counts, a ``pit`` or a
    ``max_laps`` that are not integers, or flags that are not ``True``,
    ``False`` or an integer, ``TypeError``. Ctrl-C stops the
    analysis within about 10 to 40 ms (``KeyboardInterrupt``, or whatever a
    signal handler raises); ``max_laps`` bounds its time."""
    if pit is not None and not 0 <= integer(pit, "pit") <= 15:
        raise ValueError(f"pit {pit}: pits are numbered 0..15")
    if not 1 <= integer(max_laps, "max_laps") < 2**64:
        raise ValueError(f"max_laps {max_laps}: a lap budget must be at least 1 (and below 2**64)")
    return json.loads(_native.loops(side, opponent, pit, flag(first_turn, "first_turn"),
                                    max_laps, flag(any_seeds, "any_seeds")))
