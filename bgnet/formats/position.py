"""One reader for a position however it is written, and one writer for each way of writing it.

Every verb and endpoint that takes a position takes any of three spellings, told apart by their
shape:

=================  ====================================  =========================================
format name        example                               holds
=================  ====================================  =========================================
``position-id``    ``4HPwATDgc/ABMA``                    the board only (GNU Backgammon Position
                                                         ID, the player on roll to move)
``gnubg-id``       ``4HPwATDgc/ABMA:cAkAAAAAAAAE``       the board and a Match ID: cube, score,
                                                         match length, dice, who is on roll
``xgid``           ``XGID=-b----E-C---eE---c-e----B-:``  the same as an eXtreme Gammon ID (the
                   ``0:0:1:00:0:0:0:0:10``               ``XGID=`` prefix is optional)
=================  ====================================  =========================================

GNU Backgammon's own copy of the two IDs, ``Position ID: ... Match ID: ...``, and the two IDs
separated by a space are read as ``gnubg-id``. In all three the board is bgnet's
``[opponent, player on roll]`` (see :mod:`bgnet.engine.board`); while a double waits for its
answer the player on roll is the doubler, as GNU Backgammon and XG write it.

A board without a context (a bare Position ID) is written in the other formats with
:data:`DEFAULT_CONTEXT`: money play, the cube centred, player 1 on roll, which XG draws at the
bottom.

>>> p = read_position("4HPwATDgc/ABMA:cAkAAAAAAAAE")
>>> p.written, p.context.player_on_roll, p.context.match_length
('gnubg-id', 1, 0)
>>> write_position(p.board, p.context, "xgid")
'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10'
>>> read_position(write_position(p.board, p.context, "xgid")).context == p.context
True
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from bgnet.engine.api import game_over
from bgnet.engine.position_id import board_from_position_id, position_id
from bgnet.engine.state import GAME_PLAYING, MatchContext
from bgnet.formats.match_id import match_context_from_id, match_id
from bgnet.formats.xgid import PREFIX as XGID_PREFIX
from bgnet.formats.xgid import board_and_context_from_xgid, xgid

FORMATS = ("position-id", "gnubg-id", "xgid")
DEFAULT_CONTEXT = MatchContext(player_on_roll=1, turn=1, game_state=GAME_PLAYING)
ACCEPTED = "a Position ID, POSITIONID:MATCHID or an XGID"

_GNUBG_COPY_RE = re.compile(r"Position\s*ID\s*:\s*(\S+)\s+Match\s*ID\s*:\s*(\S+)", re.IGNORECASE)


class PositionFormatError(ValueError):
    """Text that is none of the accepted spellings of a position; the message says which one it
    looked like and what is wrong with it."""


@dataclass(frozen=True)
class Position:
    """A position read from text: the board (``[opponent, player on roll]``), its context
    (None for a bare Position ID) and which format it was written in."""

    board: np.ndarray
    context: MatchContext | None
    written: str

    def context_or_default(self) -> MatchContext:
        """The context, or :data:`DEFAULT_CONTEXT` for a bare Position ID."""
        return self.context if self.context is not None else DEFAULT_CONTEXT

    def dice(self) -> tuple[int, int] | None:
        """The dice the context says were rolled, or None."""
        ctx = self.context
        return (int(ctx.dice[0]), int(ctx.dice[1])) if ctx is not None and ctx.dice[0] else None


DICE_RE = re.compile(r"^\s*([1-6])\s*[-, ]?\s*([1-6])\s*$")


def read_dice(text: str) -> tuple[int, int]:
    """A roll as a person types it: ``"31"``, ``"3-1"``, ``"3,1"`` or ``"3 1"`` -> (3, 1); a
    ValueError that says what a roll looks like otherwise.

    >>> read_dice("3-1"), read_dice(" 6 6 ")
    ((3, 1), (6, 6))
    >>> read_dice("71")
    Traceback (most recent call last):
    ...
    ValueError: dice must be two numbers from 1 to 6, e.g. 31, 3-1 or 3 1; got '71'
    """
    m = DICE_RE.match(text or "")
    if not m:
        raise ValueError(f"dice must be two numbers from 1 to 6, e.g. 31, 3-1 or 3 1; got {text!r}")
    return int(m[1]), int(m[2])


def format_of(text: str) -> str:
    """Which format ``text`` is written in, by its shape alone (no checks of its content).

    >>> format_of("4HPwATDgc/ABMA"), format_of("4HPwATDgc/ABMA:cAkAAAAAAAAE")
    ('position-id', 'gnubg-id')
    >>> format_of("-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    'xgid'
    """
    body = text.strip()
    if body.upper().startswith(XGID_PREFIX) or body.count(":") >= 9:
        return "xgid"
    if ":" in body or len(body.split()) > 1:
        return "gnubg-id"
    return "position-id"


def check_in_play(board) -> None:
    """A :class:`PositionFormatError` for a position whose game is over (a side has no checker
    left on the board), where only a game in play can be valued, rolled out or moved from.

    >>> import numpy as np
    >>> check_in_play(np.zeros((2, 25), np.int8))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bgnet.formats.position.PositionFormatError: the game of this position is over: both sides ...
    """
    if game_over(board):
        gone = [who for who, side in zip(("the opponent", "the side on roll"), board) if not side.any()]
        who = "both sides have" if len(gone) == 2 else f"{gone[0]} has"
        raise PositionFormatError(f"the game of this position is over: {who} borne off every "
                                  "checker; give a position of a game in play")


def read_position(text: str, match_id_text: str | None = None) -> Position:
    """The :class:`Position` that ``text`` spells, in any of the three formats.

    ``match_id_text`` is a Match ID given apart (a ``--match-id`` option, a ``match_id``
    parameter): it joins a bare Position ID, agrees with the one in ``text``, and is refused
    beside an XGID, which carries its own. Raises :class:`PositionFormatError` naming the format
    it read and what is wrong.

    >>> read_position("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:52:3:2:0:7:10").dice()
    (5, 2)
    >>> read_position("4HPwATDgc/ABMA", "cAkAAAAAAAAE").written
    'gnubg-id'
    >>> read_position("4HPwATDgc/ABM")
    Traceback (most recent call last):
    ...
    bgnet.formats.position.PositionFormatError: a Position ID has 14 characters; '4HPwATDgc/ABM' has 13
    """
    if not isinstance(text, str):
        raise PositionFormatError(f"a position is text ({ACCEPTED}); got {type(text).__name__}")
    body = text.strip()
    if not body:
        raise PositionFormatError(f"no position given; expected {ACCEPTED}")
    kind = format_of(body)
    try:
        if kind == "xgid":
            if match_id_text:
                raise PositionFormatError("an XGID carries its own cube and score: give no Match ID "
                                          "with it")
            board, ctx = board_and_context_from_xgid(body)
            return Position(board, ctx, "xgid")
        pid, mid = _split_gnubg_id(body) if kind == "gnubg-id" else (body, None)
        if match_id_text and mid and match_id_text.strip() != mid:
            raise PositionFormatError(f"two different Match IDs given: {mid!r} and "
                                      f"{match_id_text.strip()!r}")
        mid = mid or (match_id_text.strip() if match_id_text else None)
        board = board_from_position_id(pid)
        if mid is None:
            return Position(board, None, "position-id")
        return Position(board, match_context_from_id(mid), "gnubg-id")
    except PositionFormatError:
        raise
    except ValueError as e:
        raise PositionFormatError(str(e)) from None


def _split_gnubg_id(body: str) -> tuple[str, str]:
    """(Position ID, Match ID) of ``PID:MID``, ``PID MID`` or GNU Backgammon's labelled copy."""
    m = _GNUBG_COPY_RE.search(body)
    if m:
        return m.group(1), m.group(2)
    parts = [p for p in re.split(r"[:\s]+", body) if p]
    if len(parts) != 2:
        raise PositionFormatError(f"expected POSITIONID:MATCHID (14 and 12 characters), a Position "
                                  f"ID alone or an XGID; got {body!r}")
    return parts[0], parts[1]


def write_position(board, context: MatchContext | None, fmt: str) -> str:
    """``board`` (``[opponent, player on roll]``) in the context ``context`` (None: the
    :data:`DEFAULT_CONTEXT`) written in format ``fmt`` (one of :data:`FORMATS`).

    >>> from bgnet.engine.board import start_position
    >>> write_position(start_position(), None, "gnubg-id")
    '4HPwATDgc/ABMA:cAkAAAAAAAAE'
    """
    if fmt not in FORMATS:
        raise ValueError(f"a position format is one of {', '.join(FORMATS)}; got {fmt!r}")
    pid = position_id(board)
    if fmt == "position-id":
        return pid
    ctx = context if context is not None else DEFAULT_CONTEXT
    if fmt == "gnubg-id":
        return f"{pid}:{match_id(ctx)}"
    return xgid(board, ctx)


def after_move_context(context: MatchContext | None) -> MatchContext | None:
    """The context after the player on roll has moved: the opponent on roll, no dice (None
    stays None)."""
    if context is None:
        return None
    other = 1 - context.player_on_roll
    return context.replace(player_on_roll=other, turn=other, dice=(0, 0), double_offered=False)
