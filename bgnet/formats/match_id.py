"""GNU Backgammon's Match ID: the cube, score and turn of a moment of a match in 12 characters.

The Match ID is 9 bytes written in base64 (12 characters, no padding). Read as one
little-endian number, bit ``k`` of it holds (bits counted from 0; GNU Backgammon's manual counts
from 1):

======  =====  ============================================================================
bits    width  field (:class:`~bgnet.engine.state.MatchContext` attribute)
======  =====  ============================================================================
0-3     4      log2 of the cube value (``cube_value``)
4-5     2      cube owner: 0 or 1, 3 = centred (``cube_owner``, -1 when centred)
6       1      the player on roll, or who did roll (``player_on_roll``, the "dice owner")
7       1      this game is the Crawford game (``crawford``)
8-10    3      game state: 0 none, 1 playing, 2 over, 3 resigned, 4 ended by a drop
                 (``game_state``)
11      1      whose decision it is (``turn``; the opponent of the doubler while a double
                 waits for an answer, the opponent of the resigner during a resignation)
12      1      a double is offered (``double_offered``)
13-14   2      resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon (``resignation``)
15-17   3      the higher die, 0 before rolling (``dice``)
18-20   3      the lower die
21-35   15     match length, 0 for money play (``match_length``)
36-50   15     score of player 0 (``score[0]``)
51-65   15     score of player 1 (``score[1]``)
66      1      GNU Backgammon 1.07 and later: set when the Jacoby rule is NOT in force (match
                 play always sets it; ``jacoby``)
======  =====  ============================================================================

The last bit is beyond the 66 the manual documents; a reader accepts IDs with or without it. The
length field holds up to 32,767 points, but a reader refuses a match longer than
:data:`bgnet.engine.state.MAX_MATCH_LENGTH` (64, GNU Backgammon's own limit), as every other
way into bgnet does; the writer writes whatever the fields hold.
GNU Backgammon writes the higher die first whatever order they were rolled or set in; so does
:func:`match_id`, and a reader keeps the order it finds.

>>> from bgnet.engine.state import MatchContext
>>> match_id(MatchContext(cube_value=4, cube_owner=1, player_on_roll=1, turn=1, dice=(3, 1),
...                       match_length=7, score=(3, 5)))
'UonlADAAKAAE'
>>> ctx = match_context_from_id('UonlADAAKAAE')
>>> ctx.cube_value, ctx.cube_owner, ctx.dice, ctx.match_length, ctx.score
(4, 1, (3, 1), 7, (3, 5))
"""
from __future__ import annotations

import numpy as np

from bgnet.engine.state import (
    CENTERED,
    GAME_DROPPED,
    GAME_NONE,
    GAME_OVER,
    GAME_PLAYING,
    GAME_RESIGNED,
    MatchContext,
    check_match_length,
)

ID_LENGTH = 12
_NBYTES = 9
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_INDEX = {c: i for i, c in enumerate(_B64)}
_MAX15 = (1 << 15) - 1
_JACOBY_OFF_BIT = 66
_GAME_STATES = (GAME_NONE, GAME_PLAYING, GAME_OVER, GAME_RESIGNED, GAME_DROPPED)

# (name, first bit, width) in the order of the table above.
_FIELDS = (
    ("cube_log2", 0, 4),
    ("cube_owner", 4, 2),
    ("dice_owner", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resignation", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("match_length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
)


# ---------------------------------------------------------------------------------------------
# writing


def match_id(ctx: MatchContext, *, jacoby_bit: bool = True) -> str:
    """The 12-character Match ID of ``ctx``.

    With ``jacoby_bit`` (the default) bit 66 is set as GNU Backgammon 1.07 sets it, when the
    Jacoby rule is off (so always in match play), and the string is the one gnubg shows.
    ``jacoby_bit=False`` writes only the 66 documented bits, as older versions did.

    Raises ValueError naming the field that cannot be written (a cube that is not a power of
    two, dice out of range, a score or length beyond 15 bits, ...).

    >>> match_id(MatchContext())
    'MAEAAAAAAAAE'
    >>> match_id(MatchContext(jacoby=True))
    'MAEAAAAAAAAA'
    >>> match_id(MatchContext(), jacoby_bit=False)
    'MAEAAAAAAAAA'
    """
    values = _fields_of(ctx)
    value = 0
    for name, shift, _width in _FIELDS:
        value |= values[name] << shift
    if jacoby_bit and (not ctx.is_money or not ctx.jacoby):
        value |= 1 << _JACOBY_OFF_BIT
    return _encode(value.to_bytes(_NBYTES, "little"))


def _fields_of(ctx: MatchContext) -> dict[str, int]:
    """The raw field values of a context, checked."""
    if not isinstance(ctx, MatchContext):
        raise ValueError(f"match_id takes a MatchContext; got {type(ctx).__name__}")
    cube = ctx.cube_value
    if not _is_int(cube) or cube < 1 or cube & (cube - 1) or cube > 1 << 15:
        raise ValueError(f"the cube value must be a power of two from 1 to 32768; got {cube!r}")
    if ctx.cube_owner not in (CENTERED, 0, 1):
        raise ValueError(f"the cube owner must be -1 (centred), 0 or 1; got {ctx.cube_owner!r}")
    for name in ("player_on_roll", "turn"):
        if getattr(ctx, name) not in (0, 1):
            raise ValueError(f"{name} must be player 0 or 1; got {getattr(ctx, name)!r}")
    if ctx.game_state not in _GAME_STATES:
        raise ValueError(f"the game state must be one of 0..4 (none, playing, over, resigned, "
                         f"dropped); got {ctx.game_state!r}")
    if ctx.resignation not in (0, 1, 2, 3):
        raise ValueError(f"the resignation must be 0 (none), 1, 2 or 3 (single, gammon, "
                         f"backgammon); got {ctx.resignation!r}")
    d1, d2 = _check_dice(ctx.dice)
    length = ctx.match_length
    if not _is_int(length) or not 0 <= length <= _MAX15:
        raise ValueError(f"the match length must be 0 (money) to {_MAX15}; got {length!r}")
    if len(ctx.score) != 2 or not all(_is_int(s) and 0 <= s <= _MAX15 for s in ctx.score):
        raise ValueError(f"the score must be two numbers from 0 to {_MAX15}; got {ctx.score!r}")
    return {
        "cube_log2": cube.bit_length() - 1,
        "cube_owner": 3 if ctx.cube_owner == CENTERED else ctx.cube_owner,
        "dice_owner": ctx.player_on_roll,
        "crawford": int(bool(ctx.crawford)),
        "game_state": ctx.game_state,
        "turn": ctx.turn,
        "double_offered": int(bool(ctx.double_offered)),
        "resignation": ctx.resignation,
        "die1": max(d1, d2),
        "die2": min(d1, d2),
        "match_length": length,
        "score0": int(ctx.score[0]),
        "score1": int(ctx.score[1]),
    }


def _check_dice(dice) -> tuple[int, int]:
    if len(dice) != 2 or not all(_is_int(d) and 0 <= d <= 6 for d in dice):
        raise ValueError(f"dice must be two numbers from 1 to 6, or (0, 0) before rolling; got {dice!r}")
    if (dice[0] == 0) != (dice[1] == 0):
        raise ValueError(f"either both dice are rolled or neither is; got {tuple(dice)!r}")
    return int(dice[0]), int(dice[1])


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _encode(data: bytes) -> str:
    """Base64 of 9 bytes (exactly 12 characters, no padding)."""
    value = int.from_bytes(data, "big")
    return "".join(_B64[(value >> (6 * (ID_LENGTH - 1 - i))) & 63] for i in range(ID_LENGTH))


# ---------------------------------------------------------------------------------------------
# reading


def match_context_from_id(mid: str, jacoby: bool | None = None) -> MatchContext:
    """The :class:`MatchContext` a Match ID describes.

    ``jacoby``: whether the Jacoby rule is in force. ``None`` (the default) takes it from bit 66
    for money play (clear = Jacoby on, as GNU Backgammon 1.07 writes it; an ID from an older
    version, which never sets the bit, then reads as Jacoby on) and is False in match play.

    Raises ValueError naming what is wrong with a bad ID: length, characters, or a field value
    no Match ID can hold (cube owner 2, a die of 7, game state 5, one die rolled, ...).

    >>> match_context_from_id('MAEAAAAAAAAE').jacoby, match_context_from_id('MAEAAAAAAAAA').jacoby
    (False, True)
    >>> match_context_from_id('cAkAAAAAAAAE').player_on_roll
    1
    """
    value = _decode(mid)
    f = {name: (value >> shift) & ((1 << width) - 1) for name, shift, width in _FIELDS}
    what = f"Match ID {mid!r}"
    if f["cube_owner"] == 2:
        raise ValueError(f"{what}: cube owner code 2 does not exist (0 and 1 are players, 3 is centred)")
    if f["game_state"] not in _GAME_STATES:
        raise ValueError(f"{what}: game state {f['game_state']} does not exist (0..4: none, playing, "
                         "over, resigned, dropped)")
    for k in ("die1", "die2"):
        if f[k] == 7:
            raise ValueError(f"{what}: a die shows 7")
    if (f["die1"] == 0) != (f["die2"] == 0):
        raise ValueError(f"{what}: one die is rolled ({f['die1']}, {f['die2']}); either both are or neither")
    try:
        check_match_length(f["match_length"])
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    extra = value >> (_JACOBY_OFF_BIT + 1)
    if extra:
        raise ValueError(f"{what}: bits beyond 66 are set; the ID is corrupt")
    money = f["match_length"] == 0
    if jacoby is None:
        jacoby = money and not (value >> _JACOBY_OFF_BIT) & 1
    return MatchContext(
        cube_value=1 << f["cube_log2"],
        cube_owner=CENTERED if f["cube_owner"] == 3 else f["cube_owner"],
        player_on_roll=f["dice_owner"],
        crawford=bool(f["crawford"]),
        game_state=f["game_state"],
        turn=f["turn"],
        double_offered=bool(f["double_offered"]),
        resignation=f["resignation"],
        dice=(f["die1"], f["die2"]),
        match_length=f["match_length"],
        score=(f["score0"], f["score1"]),
        jacoby=bool(jacoby),
    )


def _decode(mid: str) -> int:
    """The 72-bit little-endian value of a Match ID, after checking its text."""
    if not isinstance(mid, str):
        raise ValueError(f"a Match ID is a string of 12 characters; got {type(mid).__name__}")
    text = mid.strip()
    if len(text) != ID_LENGTH:
        raise ValueError(f"a Match ID has 12 characters; {mid!r} has {len(text)}")
    bad = [c for c in text if c not in _B64_INDEX]
    if bad:
        raise ValueError(f"Match ID {mid!r} has character {bad[0]!r}, which is not base64 "
                         "(only A-Z, a-z, 0-9, + and / are used)")
    big = 0
    for c in text:
        big = (big << 6) | _B64_INDEX[c]
    return int.from_bytes(big.to_bytes(_NBYTES, "big"), "little")
