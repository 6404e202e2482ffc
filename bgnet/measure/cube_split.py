"""Where a bot loses money games with the cube: its checker plays or its cube decisions
(``bgnet bench cube-split``).

Two money sessions with the cube against an opponent, on duplicate dice, each with a player made
of two halves (:class:`Halves`):

* **cube decisions alone**: the opponent's checker plays, the bot's cube decisions (doubles and
  takes). Both sides then move alike, so the games part only where the cube actions differ: the
  result is what the bot's cube decisions gain or lose against the opponent's, with a narrow
  interval;
* **checker plays alone**: the bot's checker plays (by cubeful equity where it ranks moves so),
  the opponent's cube decisions.

Set beside the bot itself against the same opponent (``bgnet eval BOT OPP --cube``) and its
cubeless result (``bgnet eval BOT OPP``) on the same seed, the two say which half a deficit comes
from. Both bots must value positions: their cube decisions come from their probabilities.
"""
from __future__ import annotations

from bgnet.bots.base import Bot
from bgnet.errors import BadArgument

SESSIONS = ("cube decisions alone", "checker plays alone")


class Halves(Bot):
    """A player whose checker plays are one bot's and whose cube decisions are another's."""

    can_evaluate = True

    def __init__(self, mover: Bot, cuber: Bot):
        self.mover, self.cuber = mover, cuber
        self.name = f"{mover.name} moves, {cuber.name} cube"

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        return self.mover.choose_moves(boards, dice, contexts, ply)

    def evaluate(self, boards, ply=None):
        return self.cuber.evaluate(boards)

    def cube_settings(self):
        return self.cuber.cube_settings()

    def cube_decisions(self, boards, contexts, ply=None, *, met=None, efficiency=None):
        return self.cuber.cube_decisions(boards, contexts, ply, met=met, efficiency=efficiency)


class NoCubeToLend(BadArgument):
    """A bot that values no positions, so it has no cube decisions to split off."""


def split_players(bot: Bot, opponent: Bot) -> dict[str, Halves]:
    """The two players of :data:`SESSIONS`, each to play money games with the cube against
    ``opponent`` (:func:`bgnet.measure.cube_play.play_money_cube`, duplicate dice)."""
    for who in (bot, opponent):
        if not who.can_evaluate:
            raise NoCubeToLend(f"{who.name} does not value positions, so it has no cube decisions "
                               "to split: both bots must (a net bot or gnubg:N)")
    return {SESSIONS[0]: Halves(opponent, bot), SESSIONS[1]: Halves(bot, opponent)}

