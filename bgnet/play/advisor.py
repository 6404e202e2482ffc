"""A bot at the table: its moves, its ranking of every move, and its cube and resignation answers.

:class:`Advisor` wraps any :class:`~bgnet.bots.base.Bot`. Moves are always the bot's own;
:meth:`Advisor.moves` is the one place that tells a bot that ranks its moves itself (it searches)
from one that only chooses, for every front end (the web answers, UBGI), and gives them as
:class:`~bgnet.bots.search.RankedMove` objects, whose figures are worked out in one place. Hints,
cube decisions and answers to resignations need probabilities: they come from the bot itself
when it can evaluate positions (net bots, ``gnubg:N``), otherwise from a *judge*, GNU
Backgammon's 0-ply net when ``gnubg_nn`` is installed (pubeval and the random bot only choose
moves). With no judge at all the bot never doubles, always takes, accepts only resignations of
the most the game can still give, and hints list moves without equities.

Cube decisions are the judge's own (:meth:`bgnet.bots.base.Bot.cube_decisions`, as in ``bgnet
eval``): :func:`bgnet.cube.decide_context` on its cubeless probabilities with its cube settings
(match equity table, cube efficiency), a 0-ply net bot making its close decisions again at 1-ply.

Where the cube and score are known (a context: the mover on roll), moves are chosen and ranked by
the match's own measure (:mod:`bgnet.cube.checker`): cubeful equity at the score in a match (EMG,
with the match winning chances beside it), cubeful money equity with the cube. ``cubeless_play``
keeps the cubeless choice and ranking, as without a context.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from bgnet.bots.base import Bot
from bgnet.bots.search import RankedMove, rank_moves, steps_of
from bgnet.engine.movegen import generate
from bgnet.engine.notation import format_move
from bgnet.engine.state import MatchContext
from bgnet.nn.probs import equity as money_equity
from bgnet.nn.probs import flip


class MatchStateError(ValueError):
    """Moves cannot be ranked in this match state (a score or cube no measure can value)."""


class Advisor:
    """``bot`` plays; ``judge`` (default: the bot if it can evaluate, else GNU Backgammon's
    0-ply net if installed, else none) gives probabilities. ``note`` says in words where the
    judge came from, for the person at the table."""

    def __init__(self, bot: Bot, judge: Bot | None | Literal["auto"] = "auto", *,
                 cubeless_play: bool = False):
        self.bot = bot
        self.note = ""
        self.judge = self._default_judge() if isinstance(judge, str) else judge
        self.cubeless_play = bool(cubeless_play)

    def _default_judge(self) -> Bot | None:
        if self.bot.can_evaluate:
            return self.bot
        try:
            from bgnet.bots.gnubg_bots import GnubgBot

            judge = GnubgBot(0)
        except ImportError:
            self.note = (f"{self.bot.name} cannot evaluate positions and GNU Backgammon's net "
                         "(gnubg_nn) is not installed: no hints with equities; it never doubles "
                         "and always takes")
            return None
        self.note = (f"{self.bot.name} only chooses moves: hints, its cube decisions and its answers "
                     "to resignations use GNU Backgammon's 0-ply net")
        return judge

    # -- moves ---------------------------------------------------------------------------------

    def context(self, ctx: MatchContext | None) -> MatchContext | None:
        """The context moves are chosen and ranked in: ``ctx``, or None (cubeless) when this
        advisor keeps the cubeless choice."""
        return None if self.cubeless_play else ctx

    def measure(self, ctx: MatchContext | None):
        """The :class:`bgnet.cube.checker.MoveMeasure` of moves played in ``ctx`` (the mover on
        roll; None: cubeless), with the judge's cube settings; :class:`MatchStateError` where
        no measure can value them."""
        from bgnet.cube.checker import measure_for

        met, efficiency = (self.judge or self.bot).cube_settings()
        try:
            return measure_for(self.context(ctx), met, efficiency)
        except ValueError as e:
            raise MatchStateError(str(e)) from None

    def choose(self, board: np.ndarray, d1: int, d2: int,
               ctx: MatchContext | None = None) -> tuple[np.ndarray, tuple] | None:
        """The bot's move: (afterstate, steps), or None when no move is legal. With ``ctx`` (the
        mover on roll) the bot chooses by the match's own measure."""
        if len(generate(board, d1, d2)[0]) == 0:
            return None
        boards = np.ascontiguousarray(board, np.int8)[None]
        dice = np.array([[d1, d2]], np.int64)
        after, steps = self.bot.choose_moves(boards, dice, self.context(ctx))
        return after[0], steps_of(steps[0])

    def moves(self, board: np.ndarray, d1: int, d2: int, ctx: MatchContext | None = None, *,
              ply: int | None = None, limit: int | None = None,
              best_only: bool = False) -> list[RankedMove]:
        """The bot's moves, its own choice first; empty when no move is legal. With ``ctx`` (the
        mover on roll) moves are chosen and ranked by the match's own measure.

        A bot that searches ranks every move itself, at ``ply`` (None: its own depth), by the
        one search (:func:`bgnet.bots.search.rank_moves`; ``limit``: its best ``limit`` are all
        valued at ``ply``). Another bot only chooses its move: it comes first, and the judge
        (:meth:`ranked_moves`) gives every move its figures and the others their order; with
        ``best_only`` the bot's move alone is given, without figures (nothing is ranked). A match
        state no measure can value is refused (:class:`MatchStateError`) before the bot is
        asked."""
        measure = self.measure(ctx) if self.bot.searches or not best_only else None
        if self.bot.searches:
            return rank_moves(self.bot, board, d1, d2, ply, self.context(ctx),
                              measure=measure, limit=limit)
        choice = self.choose(board, d1, d2, ctx)
        if choice is None:
            return []
        chosen, steps = choice
        if best_only:
            return [RankedMove(format_move(steps, board), steps, chosen)]
        moves = self.ranked_moves(board, d1, d2, ctx)
        moves.sort(key=lambda m: not np.array_equal(m.after, chosen))  # stable: keeps the rest
        return moves

    def ranked_moves(self, board: np.ndarray, d1: int, d2: int,
                     ctx: MatchContext | None = None) -> list[RankedMove]:
        """Every legal move, best first by the judge's measure in ``ctx`` (cubeless equity
        without one; the generator's order without a judge); empty when no move is legal. The
        judge ranks them by the one search (:func:`bgnet.bots.search.rank_moves`), at its own
        depth."""
        if self.judge is not None:
            return rank_moves(self.judge, board, d1, d2, context=self.context(ctx),
                              measure=self.measure(ctx))
        after, steps = generate(board, d1, d2)
        return [RankedMove(format_move(s, board), steps_of(s), a) for a, s in zip(after, steps)]

    def afterstate_probabilities(self, after: np.ndarray) -> np.ndarray:
        """The mover's probabilities after each afterstate ``[opponent, mover]``: finished games
        by the rules, the rest by the judge with the opponent on roll, seen from the mover
        (:meth:`bgnet.bots.base.Bot.afterstate_probabilities`, at the judge's own depth)."""
        assert self.judge is not None, "afterstate probabilities are asked for only with a judge"
        return np.asarray(self.judge.afterstate_probabilities(after), np.float64)

    # -- probabilities and the cube ------------------------------------------------------------

    def probabilities(self, board: np.ndarray) -> np.ndarray | None:
        """Cubeless probabilities of the side on roll in ``board``, before it rolls."""
        if self.judge is None:
            return None
        return np.asarray(self.judge.evaluate(np.ascontiguousarray(board, np.int8)[None]),
                          np.float64).reshape(5)

    def cube_decision(self, board: np.ndarray, ctx: MatchContext):
        """:class:`bgnet.cube.CubeDecision` for the player on roll of ``ctx``, whose view
        ``board`` is; None without a judge."""
        if self.judge is None:
            return None
        ctx = ctx.replace(double_offered=False, turn=ctx.player_on_roll)
        return self.judge.cube_decisions(np.ascontiguousarray(board, np.int8)[None], [ctx])[0]

    def wants_double(self, board: np.ndarray, ctx: MatchContext) -> bool:
        """Whether the bot, on roll in ``board``, doubles (proper double, not too good)."""
        if not ctx.may_double(ctx.player_on_roll):
            return False
        d = self.cube_decision(board, ctx)
        return d is not None and d.double

    def wants_take(self, doubler_board: np.ndarray, ctx: MatchContext) -> bool:
        """Whether the bot takes the double of the player on roll of ``ctx`` (whose view
        ``doubler_board`` is); always without a judge."""
        d = self.cube_decision(doubler_board, ctx)
        return True if d is None else bool(d.take)

    def accepts_resignation(self, resigner_board: np.ndarray, kind: int, value_of) -> bool:
        """Whether the bot accepts a resignation of ``kind`` (1, 2, 3) from the side whose view
        ``resigner_board`` is. ``value_of(kind)`` is the points it is worth (cube, Jacoby): the
        bot accepts when that is at least its cubeless expectation of playing on."""
        probs = self.probabilities(resigner_board)
        if probs is None:
            return kind >= most_possible(resigner_board)
        unit = value_of(1)
        expected = float(money_equity(flip(probs))) * unit
        return value_of(kind) >= expected - 1e-9


def most_possible(loser_board: np.ndarray) -> int:
    """The most the opponent of the side ``loser_board[1]`` can still win: 1 once that side has
    borne off a checker, 3 while it has one on the bar or in the opponent's home board (its own
    points 19-24), else 2."""
    side = loser_board[1]
    if int(side.sum()) < 15:
        return 1
    return 3 if int(side[18:25].sum()) else 2


__all__ = ["Advisor", "MatchStateError", "most_possible"]
