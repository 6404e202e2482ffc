"""A bot driven by a value net: 0-ply (the net's best afterstate) and deeper search.

0-ply: all afterstates of all positions come from one call to the batched move generator, are
encoded and evaluated in one network call, and the best per position is found by a compiled
segment argmax: no per-game Python.

n-ply (n >= 1): the candidates that survive 0-ply filtering are scored by the average, over the
21 distinct rolls, of the opponent's best reply at (n-1)-ply, seen from our side. Like GNU
Backgammon's move filters, only the best few candidates (and those close to the best) go deeper:
at 2-ply the 0-ply survivors are first scored at 1-ply, and only the best few of those (at most
4, within 0.12) are searched at 2-ply. A move that is alone after a filter needs no deeper look.
Each roll inside the search is answered by its best 0-ply move; a bot with a pruning net
(:class:`~bgnet.bots.search.Pruning`, as GNU Backgammon prunes) ranks each roll's moves with that
cheaper net and values only its best few with its own.

The net is reached through an *evaluator* (:mod:`bgnet.bots.evaluator`, the bot's
:attr:`~bgnet.bots.base.Bot.evaluator`): a torch net gets a
:class:`~bgnet.bots.torch_eval.NetEvaluator`, an exported bot an
:class:`~bgnet.bots.onnx_eval.OnnxEvaluator`. The moves are ranked by :mod:`bgnet.bots.search`
(:func:`~bgnet.bots.search.choose_afterstates`, the rolls' helpers); this module gives it the
net's probabilities. This module does not import torch itself, so an
exported bot plays without it; ``NetEvaluator`` is still importable from here. Bots are made from
files by :mod:`bgnet.bots.load`.
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

from bgnet.bots.base import Bot, board_batch, mover_probabilities
from bgnet.bots.cache import CachedEvaluator
from bgnet.bots.evaluator import Evaluator, PositionEvaluator, afterstates_of
from bgnet.bots.search import (
    Pruning,
    SearchSettings,
    best_of_rolls,
    choose_afterstates,
    mean_over_rolls,
)
from bgnet.engine.movegen import ROLL_WEIGHTS, ROLLS
from bgnet.engine.state import MatchContext
from bgnet.errors import BadArgument


def __getattr__(name):
    # NetEvaluator needs torch: import it only when somebody asks for it.
    if name == "NetEvaluator":
        from bgnet.bots.torch_eval import NetEvaluator

        return NetEvaluator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")




def check_ply(ply) -> int:
    """``ply`` as an int when it is a search depth a net bot has (0, 1 or 2); BadArgument otherwise."""
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or ply not in (0, 1, 2):
        raise BadArgument(f"search depth must be 0, 1 or 2 ply; got {ply!r}")
    return int(ply)


class NetBot(Bot):
    """Plays the move a value net likes best, at 0, 1 or 2 ply.

    ``net``: an evaluator bgnet made (an :class:`~bgnet.bots.evaluator.Evaluator`, as the
    loader builds, or a :class:`~bgnet.bots.cache.CachedEvaluator`), or a torch value net, run on
    ``device`` by a :class:`~bgnet.bots.torch_eval.NetEvaluator`. ``meta`` describes where the net
    came from; its ``"cube"`` entry, when present, holds the cube settings of
    :meth:`cube_decision` (``{"met": name, "efficiency": {...CubeEfficiency fields}}``).
    ``cubeless_play``: rank moves by cubeless money equity even where the cube and score are
    known (:meth:`move_measure`). ``pruning``: a cheaper net that ranks each roll's moves in
    the deeper plies, the bot's own net valuing only its best few
    (:class:`~bgnet.bots.search.Pruning`); None (the default) values every move with the bot's
    own net.
    """

    plies = (0, 1, 2)
    searches = True
    ply: int
    evaluator: PositionEvaluator
    pruning: Pruning | None

    def __init__(self, net, ply: int = 0, device: str = "cpu", name: str = "net",
                 search: SearchSettings | None = None, meta: dict | None = None,
                 cubeless_play: bool = False, pruning: Pruning | None = None):
        ply = check_ply(ply)
        if isinstance(net, (Evaluator, CachedEvaluator)):
            self.evaluator = net
        else:  # a torch value net
            from bgnet.bots.torch_eval import NetEvaluator

            self.evaluator = NetEvaluator(net, device)
        self.ply = ply
        self.name = name if ply == 0 else f"{name}@{ply}"
        self.search = search or SearchSettings()
        self.meta = meta or {}
        self.cubeless_play = bool(cubeless_play)
        self.pruning = pruning

    def with_cache(self, max_entries: int | None = None) -> NetBot:
        """This bot with its afterstates' 0-ply values kept and read back when its searches meet
        them again (:class:`bgnet.bots.cache.CachedEvaluator`; ``max_entries`` of them at most,
        by default :data:`bgnet.bots.cache.MAX_ENTRIES`): the same choices and values, to
        float32 rounding, in less time where searches overlap, as the decisions of one game
        do. A pruning net's values are kept too, in a table of their own. The nets are shared;
        ``clear_cache`` forgets what was kept."""
        from bgnet.bots.cache import MAX_ENTRIES

        entries = MAX_ENTRIES if max_entries is None else max_entries
        twin = copy.copy(self)
        twin.evaluator = CachedEvaluator(self.evaluator, entries)
        if self.pruning is not None:
            twin.pruning = dataclasses.replace(
                self.pruning, evaluator=CachedEvaluator(self.pruning.evaluator, entries))
        return twin

    def clear_cache(self) -> None:
        """Forget the afterstates kept by a bot made by :meth:`with_cache` (nothing otherwise)."""
        for ev in (self.evaluator, self.pruning and self.pruning.evaluator):
            if isinstance(ev, CachedEvaluator):
                ev.clear()

    def cube_settings(self):
        cube = self.meta.get("cube") or {}
        eff = cube.get("efficiency")
        if isinstance(eff, dict):
            from bgnet.cube import CubeEfficiency

            eff = CubeEfficiency(**eff)
        return cube.get("met"), eff

    # -- evaluation ------------------------------------------------------------------------
    def evaluate(self, boards: np.ndarray, ply: int | None = None) -> np.ndarray:
        """Cubeless probabilities for the side on roll, before rolling, at ``ply`` (default: this
        bot's depth)."""
        return self.probabilities_at(boards, ply)

    def probabilities_at(self, boards: np.ndarray, ply) -> np.ndarray:
        ply = self.ply if ply is None else check_ply(ply)
        boards = board_batch(boards)
        if ply == 0:
            return self.evaluator.positions(boards)
        return self._expected_over_rolls(boards, ply - 1)

    def afterstate_probabilities(self, after: np.ndarray, ply: int | None = None,
                                 parents: np.ndarray | None = None,
                                 parent_of: np.ndarray | None = None) -> np.ndarray:
        """:meth:`Bot.afterstate_probabilities` (float32): at 0-ply the evaluator's, each
        afterstate started from its position's first layer where ``parents`` are given (one for
        all, one each, or ``parents[parent_of[k]]`` for ``after[k]``); deeper, the average over
        the opponent's 21 rolls of its best reply."""
        ply = self.ply if ply is None else check_ply(ply)
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)
        if ply > 0:
            return self._afterstate_value(after, ply)
        if parents is None:
            return self.evaluator.afterstates(after)
        parents = np.ascontiguousarray(parents, np.int8).reshape(-1, 2, 25)
        if parent_of is None:
            parent_of = (np.zeros(len(after), np.int64) if len(parents) == 1
                         else np.arange(len(after), dtype=np.int64))
        return afterstates_of(self.evaluator, after, parents, parent_of)

    def _afterstate_value(self, after: np.ndarray, depth: int) -> np.ndarray:
        """Mover's probabilities for afterstates, looking ``depth`` plies further."""
        if depth == 0:
            return self.evaluator.afterstates(after)
        # The opponent is on roll in swap(after): its expected probabilities, flipped to us.
        return mover_probabilities(after, lambda swapped: self._expected_over_rolls(swapped, depth - 1),
                                   np.float32)

    def _expected_over_rolls(self, boards: np.ndarray, depth: int) -> np.ndarray:
        """For positions with the side on roll about to roll: probabilities averaged over the 21
        rolls, the side playing its best move (0-ply choice, pruned where the bot has a pruning
        net; valued at ``depth``)."""
        chosen, p0 = best_of_rolls(self.evaluator, boards, self.pruning)
        return mean_over_rolls(p0 if depth == 0 else self._afterstate_value(chosen, depth))

    def cube_decisions(self, boards: np.ndarray, contexts, ply: int | None = None, *, met=None,
                       efficiency=None) -> list:
        """:meth:`Bot.cube_decisions`; a bot searching less deeply than ``search.cube_ply`` and
        asked for no particular depth makes its close decisions again at that depth, as GNU
        Backgammon's move filters look deeper only at the close candidates. At 1-ply a decision
        is searched one roll ahead, cubeful after each roll (``search.cube_lookahead``:
        :mod:`bgnet.cube.lookahead`), else made from the probabilities averaged over the rolls."""
        depth = self.ply if ply is None else check_ply(ply)
        if depth == 1 and self.search.cube_lookahead:
            return self._cubeful_ahead(np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25),
                                       list(contexts), met, efficiency)
        decisions = super().cube_decisions(boards, contexts, ply, met=met, efficiency=efficiency)
        deeper, window = self.search.cube_ply, self.search.cube_window
        if ply is not None or self.ply >= deeper:
            return decisions
        close = [i for i, d in enumerate(decisions) if close_decision(d, window)]
        if close:
            boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
            some = [contexts[i] for i in close]
            again = self.cube_decisions(boards[close], some, deeper, met=met,
                                        efficiency=efficiency)
            for i, d in zip(close, again):
                decisions[i] = d
        return decisions

    def _cubeful_ahead(self, boards, contexts, met, efficiency) -> list:
        """Decisions one roll ahead, cubeful after every roll (:mod:`bgnet.cube.lookahead`);
        their take points from the probabilities averaged over the rolls, as at 1-ply."""
        from bgnet.cube import decide_context
        from bgnet.cube.lookahead import decide_after_rolls

        met, efficiency = self._cube_settings_or(met, efficiency)
        after, chosen = best_of_rolls(self.evaluator, boards, self.pruning)
        averaged = mean_over_rolls(chosen)  # as at 1-ply (_expected_over_rolls)
        per_roll = np.asarray(chosen, np.float64)
        n = len(ROLLS)
        out = []
        for k, (ctx, board) in enumerate(zip(contexts, boards)):
            base = decide_context(averaged[k], ctx, board, met=met, efficiency=efficiency)
            rows = slice(n * k, n * (k + 1))
            out.append(decide_after_rolls(per_roll[rows], ROLL_WEIGHTS, after[rows], ctx,
                                          base, met=met, efficiency=efficiency))
        return out

    # -- move choice -----------------------------------------------------------------------
    def move_measure(self, contexts):
        """The :class:`bgnet.cube.checker.MoveMeasure` this bot ranks moves by where the cube is
        known (``contexts``: one :class:`~bgnet.engine.state.MatchContext` per position, or one
        for all), with its cube settings; None where moves are ranked by cubeless money equity
        (no contexts, or ``cubeless_play``)."""
        if contexts is None or self.cubeless_play:
            return None
        if isinstance(contexts, MatchContext):
            kept = self.__dict__.setdefault("_measures", {})  # per context: a decision's hot path
            measure = kept.get(contexts)
            if measure is None:
                from bgnet.cube.checker import measure_for

                if len(kept) >= 1024:
                    kept.clear()
                met, efficiency = self.cube_settings()
                measure = kept[contexts] = measure_for(contexts, met, efficiency)
        else:
            from bgnet.cube.checker import MoveMeasure

            met, efficiency = self.cube_settings()
            measure = MoveMeasure(list(contexts), met, efficiency)
        return None if measure.cubeless else measure

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, contexts=None,
                     ply: int | None = None):
        """Chosen afterstates and steps for many positions, at ``ply`` (default: this bot's), by
        the one search (:func:`bgnet.bots.search.choose_afterstates`). With ``contexts`` (a
        :class:`~bgnet.engine.state.MatchContext` per position, the mover on roll, or one for
        all) moves are ranked by the match's own measure (:mod:`bgnet.cube.checker`) unless
        ``cubeless_play``; without, by cubeless money equity."""
        ply = self.ply if ply is None else check_ply(ply)
        return choose_afterstates(self, boards, dice, ply, contexts)

    def quick_choice(self, board: np.ndarray, d1: int, d2: int, ply, ctx=None):
        """At 0-ply, an exported bot's decision in one compiled call
        (:func:`bgnet.bots.zero_ply.choose_zero_ply`)."""
        ev = self.evaluator
        if (self.ply if ply is None else ply) == 0 and isinstance(ev, Evaluator) \
                and ev.fast is not None:
            from bgnet.bots.zero_ply import choose_zero_ply

            return choose_zero_ply(ev, np.ascontiguousarray(board, np.int8), d1, d2,
                                   self.move_measure(ctx))
        return None

    def choose_one(self, board: np.ndarray, d1: int, d2: int, ply, ctx=None):
        after, steps = self.choose_moves(np.ascontiguousarray(board, np.int8)[None],
                                         np.array([[d1, d2]], np.int64), ctx, ply)
        return after[0], steps[0]


def close_decision(d, window: float) -> bool:
    """Whether a cube decision is close: the cube is the player's to turn, and doubling is
    within ``window`` of playing on or the take within ``window`` of the pass."""
    if not d.cube_available:
        return False
    doubled = min(d.double_take, d.double_pass)
    return abs(doubled - d.no_double) < window or abs(d.double_take - d.double_pass) < window
