"""eXtreme Gammon's position ID (XGID): a position with its cube, dice and score on one line.

An XGID is ``XGID=`` followed by ten fields separated by colons::

    XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10

XG draws one player at the bottom of the board (its checkers are upper case) and one at the top
(lower case). bgnet reads the bottom player as GNU Backgammon's player 1 and the top player as
player 0, which is how GNU Backgammon itself imports an XGID; the position with the player on
roll in ``board[1]`` (bgnet's convention) is built from the ``turn`` field.

=====  ===================  ===============================================================
field  XG meaning           bgnet (``board``, :class:`~bgnet.engine.state.MatchContext`)
=====  ===================  ===============================================================
1      position, 26 chars   char 0: player 0's bar; chars 1..24: points 1..24 counted from
                            player 1's side; char 25: player 1's bar. ``-`` is empty,
                            ``A``..``O`` are 1..15 of player 1's checkers, ``a``..``o``
                            player 0's. Always written from player 1's side, whoever is on
                            roll. Borne-off checkers are the ones missing from 15.
2      log2 of the cube     ``cube_value = 2 ** field``
3      cube position        ``cube_owner``: 0 centred (-1), 1 player 1, -1 player 0
4      turn                 1 player 1, -1 player 0: ``player_on_roll`` (and ``board[1]``);
                            with a double offered it names the doubler
5      dice                 ``00`` not rolled, ``D`` a double offered (the cube field holds
                            the value before the double; ``turn`` in the context is then
                            the player who must answer), or two dice such as ``52``.
                            ``B``/``R`` (beaver, raccoon) are not supported.
6      score, player 1      ``score[1]``
7      score, player 0      ``score[0]``
8      Crawford / Jacoby    match play: 1 in the Crawford game (``crawford``); money: bit 0
                            the Jacoby rule (``jacoby``), bit 1 beavers allowed (not kept)
9      match length         ``match_length`` (0 = money)
10     log2 of the max cube not kept in the context; written as ``max_cube_log2``
=====  ===================  ===============================================================

An XGID has no game state or resignation; they are not written, and a context read from an XGID
has a game in play and no resignation.

>>> from bgnet.engine.board import start_position
>>> from bgnet.engine.state import MatchContext
>>> xgid(start_position(), MatchContext(player_on_roll=1, turn=1))
'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10'
>>> board, ctx = board_and_context_from_xgid('XGID=-b----E-C---eE---c-e----B-:1:-1:-1:52:3:2:0:7:10')
>>> ctx.cube_value, ctx.cube_owner, ctx.player_on_roll, ctx.dice, ctx.score
(2, 0, 0, (5, 2), (2, 3))
"""
from __future__ import annotations

import re

import numpy as np

from bgnet.engine.board import as_board
from bgnet.engine.state import CENTERED, GAME_PLAYING, MAX_SCORE, MatchContext, read_match_length
from bgnet.errors import quoted

PREFIX = "XGID="
DEFAULT_MAX_CUBE_LOG2 = 10
_FIELD_NAMES = ("position", "cube value", "cube position", "turn", "dice", "score of player 1",
                "score of player 0", "Crawford/Jacoby", "match length", "maximum cube")
_INT_RE = re.compile(r"^-?[0-9]{1,9}$")  # ASCII digits only: int() would read '١' too


# ---------------------------------------------------------------------------------------------
# writing


def xgid(board, ctx: MatchContext, *, max_cube_log2: int | None = None) -> str:
    """The XGID of ``board`` (``[opponent, player on roll]``; the player on roll is
    ``ctx.player_on_roll``) in the context ``ctx``, its last field ``max_cube_log2`` (by default
    XG's 10, or the cube's own log2 where the cube is larger, so that any cube read can be written).

    Dice are written in the order ``ctx.dice`` holds them. Raises ValueError for a board or
    context an XGID cannot hold (shape, checker counts, a cube that is not a power of two, ...).

    >>> from bgnet.engine.board import start_position
    >>> xgid(start_position(), MatchContext(cube_value=2, cube_owner=0, dice=(3, 1)))
    'XGID=-b----E-C---eE---c-e----B-:1:-1:-1:31:0:0:0:0:10'
    """
    b = as_board(board)
    if max_cube_log2 is None:
        cube = ctx.cube_value if isinstance(ctx, MatchContext) else 1
        bits = int(cube).bit_length() - 1 if isinstance(cube, (int, np.integer)) and cube > 0 else 0
        max_cube_log2 = max(DEFAULT_MAX_CUBE_LOG2, bits)
    _check_context(ctx, max_cube_log2)
    on_roll = ctx.player_on_roll
    sides = {on_roll: b[1], 1 - on_roll: b[0]}
    fields = [
        _position_text(sides[0], sides[1]),
        str(ctx.cube_value.bit_length() - 1),
        {CENTERED: "0", 1: "1", 0: "-1"}[ctx.cube_owner],
        "1" if on_roll == 1 else "-1",
        "D" if ctx.double_offered else f"{ctx.dice[0]}{ctx.dice[1]}",
        str(ctx.score[1]),
        str(ctx.score[0]),
        str(int(ctx.crawford) if ctx.match_length else int(ctx.jacoby)),
        str(ctx.match_length),
        str(max_cube_log2),
    ]
    return PREFIX + ":".join(fields)


def _position_text(side0: np.ndarray, side1: np.ndarray) -> str:
    """The 26 position characters: player 0's bar, points 1..24 from player 1's side, player 1's bar."""
    chars = [_letter(side0[24], lower=True)]
    for k in range(1, 25):
        mine, theirs = int(side1[k - 1]), int(side0[24 - k])  # my point k is player 0's point 25-k
        chars.append(_letter(mine, lower=False) if mine else _letter(theirs, lower=True))
    chars.append(_letter(side1[24], lower=False))
    return "".join(chars)


def _letter(n: int, lower: bool) -> str:
    if n == 0:
        return "-"
    c = chr(ord("A") + int(n) - 1)
    return c.lower() if lower else c


def _check_context(ctx: MatchContext, max_cube_log2: int) -> None:
    if not isinstance(ctx, MatchContext):
        raise ValueError(f"xgid takes a MatchContext; got {type(ctx).__name__}")
    cube = ctx.cube_value
    if not isinstance(cube, (int, np.integer)) or cube < 1 or cube & (cube - 1):
        raise ValueError(f"the cube value must be a power of two; got {cube!r}")
    if not isinstance(max_cube_log2, (int, np.integer)) or max_cube_log2 < cube.bit_length() - 1:
        raise ValueError(f"max_cube_log2 ({max_cube_log2!r}) must be a whole number at least log2 "
                         f"of the cube ({cube.bit_length() - 1})")
    if ctx.cube_owner not in (CENTERED, 0, 1):
        raise ValueError(f"the cube owner must be -1 (centred), 0 or 1; got {ctx.cube_owner!r}")
    if ctx.player_on_roll not in (0, 1):
        raise ValueError(f"player_on_roll must be 0 or 1; got {ctx.player_on_roll!r}")
    d = ctx.dice
    if not ctx.double_offered and not (tuple(d) == (0, 0) or all(1 <= int(x) <= 6 for x in d)):
        raise ValueError(f"dice must be two numbers from 1 to 6, or (0, 0) before rolling; got {d!r}")
    if ctx.match_length < 0 or min(ctx.score) < 0:
        raise ValueError(f"match length and scores cannot be negative; got {ctx.match_length}, {ctx.score}")


# ---------------------------------------------------------------------------------------------
# reading


def board_and_context_from_xgid(text: str) -> tuple[np.ndarray, MatchContext]:
    """The board (``[opponent, player on roll]``) and context an XGID describes.

    The ``XGID=`` prefix is optional. Raises ValueError naming the field that is wrong.

    >>> board, ctx = board_and_context_from_xgid('-b----E-C---eE---c-e----B-:0:0:1:D:0:0:1:0:10')
    >>> ctx.double_offered, ctx.player_on_roll, ctx.turn, ctx.jacoby
    (True, 1, 0, True)
    """
    fields = _split(text)
    side0, side1 = _read_position(fields[0])
    cube_log2 = _int_field(fields, 1, 0, 15)
    owner = {0: CENTERED, 1: 1, -1: 0}[_int_field(fields, 2, -1, 1)]
    turn = _int_field(fields, 3, -1, 1)
    if turn == 0:
        raise ValueError("XGID field 4 (turn) must be 1 (player 1, the bottom player) or -1; got 0")
    on_roll = 1 if turn == 1 else 0
    doubled, dice = _read_dice(fields[4])
    score1 = _int_field(fields, 5, 0, MAX_SCORE)
    score0 = _int_field(fields, 6, 0, MAX_SCORE)
    flags = _int_field(fields, 7, 0, 3)
    length = _match_length(fields)
    max_log2 = _int_field(fields, 9, 0, None)
    if cube_log2 > max_log2:
        raise ValueError(f"XGID field 2 (cube value): cube {2 ** cube_log2} is above the maximum cube "
                         f"{2 ** max_log2} of field 10")
    crawford = _read_crawford(flags, length, (score0, score1), cube_log2)
    board = as_board(np.stack([side1, side0]) if on_roll == 0 else np.stack([side0, side1]))
    ctx = MatchContext(
        cube_value=1 << cube_log2, cube_owner=owner, player_on_roll=on_roll, crawford=crawford,
        game_state=GAME_PLAYING, turn=1 - on_roll if doubled else on_roll,
        double_offered=doubled, dice=dice, match_length=length, score=(score0, score1),
        jacoby=bool(length == 0 and flags & 1),
    )
    return board, ctx


def _split(text: str) -> list[str]:
    if not isinstance(text, str):
        raise ValueError(f"an XGID is a string; got {type(text).__name__}")
    body = text.strip()
    if body.upper().startswith(PREFIX):
        body = body[len(PREFIX):]
    fields = body.split(":")
    if len(fields) != 10:
        raise ValueError(f"an XGID has 10 fields separated by ':' (position, cube, cube position, "
                         f"turn, dice, two scores, Crawford/Jacoby, match length, max cube); "
                         f"{quoted(text)} has {len(fields)}")
    return [f.strip() for f in fields]


def _read_position(pos: str) -> tuple[np.ndarray, np.ndarray]:
    """Player 0's and player 1's sides (each counted from its own 1-point) from field 1."""
    if len(pos) != 26:
        raise ValueError(f"XGID field 1 (position) has 26 characters; {quoted(pos)} has {len(pos)}")
    side0 = np.zeros(25, np.int8)
    side1 = np.zeros(25, np.int8)
    for k, c in enumerate(pos):
        if c == "-":
            continue
        if not ("A" <= c <= "O" or "a" <= c <= "o"):
            raise ValueError(f"XGID field 1 (position): character {k + 1} is {c!r}; use '-' for an "
                             "empty point, A-O for 1-15 of the bottom player's checkers, a-o for the top's")
        n = ord(c.upper()) - ord("A") + 1
        if c.isupper():
            if k == 0:
                raise ValueError("XGID field 1 (position): character 1 is the top player's bar, but "
                                 f"it holds {c!r} (bottom player's checkers)")
            side1[24 if k == 25 else k - 1] = n
        else:
            if k == 25:
                raise ValueError("XGID field 1 (position): character 26 is the bottom player's bar, but "
                                 f"it holds {c!r} (top player's checkers)")
            side0[24 if k == 0 else 24 - k] = n
    for name, side in (("top player (0)", side0), ("bottom player (1)", side1)):
        if int(side.sum()) > 15:
            raise ValueError(f"XGID field 1 (position): the {name} has {int(side.sum())} checkers; "
                             "at most 15 are allowed")
    return side0, side1


def _int_field(fields: list[str], i: int, lo: int, hi: int | None) -> int:
    text = fields[i]
    name = f"XGID field {i + 1} ({_FIELD_NAMES[i]})"
    span = f"{lo} to {hi}" if hi is not None else f"at least {lo}"
    if not _INT_RE.match(text):
        if re.match(r"^-?[0-9]+$", text):  # too many digits to be any XGID's
            raise ValueError(f"{name} must be {span}; got {quoted(text, 20)}")
        raise ValueError(f"{name} must be a whole number written in the digits 0-9; got {quoted(text)}")
    v = int(text)
    if v < lo or (hi is not None and v > hi):
        raise ValueError(f"{name} must be {span}; got {v}")
    return v


def _match_length(fields: list[str]) -> int:
    """Field 9, within the one bound on a match's length (:func:`~bgnet.engine.state.read_match_length`)."""
    try:
        return read_match_length(fields[8])
    except ValueError as e:
        raise ValueError(f"XGID field 9 (match length): {e}") from None


def _read_dice(text: str) -> tuple[bool, tuple[int, int]]:
    """(double offered, dice) from field 5."""
    if text == "D":
        return True, (0, 0)
    if text in ("B", "R"):
        raise ValueError(f"XGID field 5 (dice) is {text!r}, a "
                         f"{'beaver' if text == 'B' else 'raccoon'}: bgnet plays without beavers")
    if text == "00":
        return False, (0, 0)
    if len(text) == 2 and all("1" <= c <= "6" for c in text):
        return False, (int(text[0]), int(text[1]))
    raise ValueError(f"XGID field 5 (dice) must be '00' (not rolled), 'D' (double offered) or two "
                     f"dice from 1 to 6 such as '52'; got {quoted(text)}")


def _read_crawford(flags: int, length: int, score: tuple[int, int], cube_log2: int) -> bool:
    """The Crawford flag of field 8, checked against the score (match play only)."""
    if length == 0:
        return False
    if max(score) >= length:
        raise ValueError(f"XGID fields 6-7 (scores): score {score[1]}-{score[0]} is not below the "
                         f"match length {length}")
    if flags > 1:
        raise ValueError(f"XGID field 8 (Crawford/Jacoby) must be 0 or 1 in match play; got {flags}")
    if flags and length - max(score) != 1:
        raise ValueError("XGID field 8 (Crawford/Jacoby) marks the Crawford game, but neither player "
                         f"is 1-away at {score[1]}-{score[0]} to {length}")
    if flags and cube_log2:
        raise ValueError("XGID field 2 (cube value): the cube cannot be turned in the Crawford game")
    return bool(flags)
