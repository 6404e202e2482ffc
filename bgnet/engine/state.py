"""Game, cube and match context: what GNU Backgammon's Match ID carries, as a plain dataclass.

Players are numbered 0 and 1 as in GNU Backgammon's Match ID. ``cube_owner`` is -1 while the cube
is centred. ``match_length`` 0 means money play.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

CENTERED = -1

# Game states of the Match ID.
GAME_NONE, GAME_PLAYING, GAME_OVER, GAME_RESIGNED, GAME_DROPPED = 0, 1, 2, 3, 4


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
