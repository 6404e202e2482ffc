"""Game, cube and match context: what GNU Backgammon's Match ID carries, as a plain dataclass.

Players are numbered 0 and 1 as in GNU Backgammon's Match ID. ``cube_owner`` is -1 while the cube
is centred. ``match_length`` 0 means money play.

One bound on a match's length holds everywhere a length comes in (a Match ID, an XGID, a ``.mat``
or ``.sgf`` header, UBGI, the HTTP API, the command line): :data:`MAX_MATCH_LENGTH`, 64 points,
GNU Backgammon's own limit (``new match 65`` there answers that it supports "only matches of
length 64 and below"). bgnet's match equity table is extended to the length of the match at
hand, at a cost that grows with the square of the length; within the bound that is milliseconds.
:func:`check_match_length` says so in one sentence that every surface quotes in its own words.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

CENTERED = -1

MAX_MATCH_LENGTH = 64  # points: GNU Backgammon's limit (MAXSCORE), and so bgnet's
MAX_SCORE = (1 << 15) - 1  # points a player's score may reach: what a Match ID can hold

# Game states of the Match ID.
GAME_NONE, GAME_PLAYING, GAME_OVER, GAME_RESIGNED, GAME_DROPPED = 0, 1, 2, 3, 4


def check_match_length(length) -> int:
    """``length`` as an int when it is a match length bgnet plays (0 for money play, else 1 to
    :data:`MAX_MATCH_LENGTH`); a ValueError that says the rule otherwise.

    >>> check_match_length(7)
    7
    >>> check_match_length(8000)
    Traceback (most recent call last):
    ...
    ValueError: a match is 1 to 64 points long (GNU Backgammon's limit), or 0 for money play; got 8000
    """
    if isinstance(length, bool) or not hasattr(length, "__index__"):
        raise ValueError(f"a match length is a whole number of points; got {length!r}")
    n = length.__index__()
    if not 0 <= n <= MAX_MATCH_LENGTH:
        raise ValueError(_length_rule(n if abs(n) < 10 ** 12 else
                                      f"a number of about {int(n.bit_length() * 0.30103) + 1} digits"))
    return n


def read_match_length(text: str) -> int:
    """A match length written as text (a header, an XGID field, a command's word): ASCII digits
    only (``str.isdigit`` and ``int`` would read other scripts' digits too), within
    :func:`check_match_length`'s bound; a ValueError otherwise.

    >>> read_match_length(" 7 ")
    7
    >>> read_match_length("9" * 30)
    Traceback (most recent call last):
    ...
    ValueError: a match is 1 to 64 points long (GNU Backgammon's limit), or 0 for money play; got a number of 30 digits
    """
    body = str(text).strip()
    if not (body.isascii() and body.isdigit()):
        shown = repr(body[:40]) + ("..." if len(body) > 40 else "")
        raise ValueError(f"a match length is a whole number of points written in the digits 0-9; "
                         f"got {shown}")
    if len(body.lstrip("0")) > 12:  # not worth converting: far past the bound
        raise ValueError(_length_rule(f"a number of {len(body.lstrip('0'))} digits"))
    return check_match_length(int(body))


def _length_rule(shown) -> str:
    return (f"a match is 1 to {MAX_MATCH_LENGTH} points long (GNU Backgammon's limit), or 0 for "
            f"money play; got {shown}")


@dataclass(frozen=True)
class MatchContext:
    """Cube, score and turn information (everything a Match ID holds, and the Jacoby flag)."""

    cube_value: int = 1
    cube_owner: int = CENTERED  # -1 centred, else 0 or 1
    player_on_roll: int = 0  # the "dice owner": whose roll or move it is
    crawford: bool = False  # this game is the Crawford game
    game_state: int = GAME_PLAYING
    turn: int = 0  # who must act now (differs from player_on_roll while a double is answered)
    double_offered: bool = False
    resignation: int = 0  # 0 none, 1 single, 2 gammon, 3 backgammon
    dice: tuple[int, int] = (0, 0)  # (0, 0) before rolling
    match_length: int = 0  # 0 = money game
    score: tuple[int, int] = field(default=(0, 0))
    jacoby: bool = False  # money play only: gammons count single with the cube centred

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    def away(self, player: int) -> int:
        """Points player still needs to win the match (match play only)."""
        return self.match_length - self.score[player]

    @property
    def post_crawford(self) -> bool:
        """True in games after the Crawford game: a player is 1-away and it is not Crawford."""
        if self.is_money or self.crawford:
            return False
        return min(self.away(0), self.away(1)) == 1 and max(self.away(0), self.away(1)) > 1

    def may_double(self, player: int) -> bool:
        """Whether ``player`` may offer the cube now (cube access, Crawford, dead cube)."""
        if self.crawford:
            return False
        if self.cube_owner not in (CENTERED, player):
            return False
        if not self.is_money and self.away(player) <= self.cube_value:
            return False  # already wins the match with the current cube: doubling is pointless
        return self.cube_value < 64

    def replace(self, **kw) -> MatchContext:
        return replace(self, **kw)
