"""A bot driven by a value net: 0-ply (the net's best afterstate) and deeper search.

0-ply: all afterstates of all positions come from one call to the batched move generator, are
encoded and evaluated in one network call, and the best per position is found by a compiled
segment argmax: no per-game Python.

n-ply (n >= 1): the candidates that survive 0-ply filtering are scored by the average, over the
21 distinct rolls, of the opponent's best reply at (n-1)-ply, seen from our side. Like GNU
Backgammon's move filters, only the best few candidates (and those close to the best) go deeper:
at 2-ply the 0-ply survivors are first scored at 1-ply, and only the best few of those (at most
4, within 0.12) are searched at 2-ply. A move that is alone after a filter needs no deeper look.

The net is reached through an *evaluator* (:mod:`bgnet.bots.evaluator`): a torch net gets a
:class:`~bgnet.bots.torch_eval.NetEvaluator`, an exported bot an
:class:`~bgnet.bots.onnx_eval.OnnxEvaluator`. This module does not import torch itself, so an
exported bot plays without it; ``NetEvaluator`` is still importable from here. Bots are made from
files by :mod:`bgnet.bots.load`.
"""
from __future__ import annotations

import copy

import numpy as np

from bgnet.bots.base import Bot, board_batch, mover_probabilities
from bgnet.bots.evaluator import afterstates_of, parent_rows
from bgnet.bots.search import SearchSettings, measure_score, money_score, rank_afterstates
from bgnet.bots.simple import segment_argmax  # noqa: F401  (re-exported for self-play)
from bgnet.engine.board import unique_boards
from bgnet.engine.movegen import ROLL_WEIGHTS, ROLLS, generate_batch
from bgnet.engine.state import MatchContext
from bgnet.errors import BadArgument
from bgnet.nn.probs import equity as money_equity  # noqa: F401  (re-exported)


def __getattr__(name):
    # NetEvaluator needs torch: import it only when somebody asks for it.
    if name == "NetEvaluator":
        from bgnet.bots.torch_eval import NetEvaluator

        return NetEvaluator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")




def all_rolls(boards: np.ndarray):
    """Every roll of every position: ``(parents, afterstates, offsets)``, the rows of position
    ``n``'s roll ``ROLLS[r]`` at ``off[21 * n + r]:off[21 * n + r + 1]`` and ``parents`` each
    position repeated once a roll (the position each segment's moves start from)."""
    parents = np.repeat(np.ascontiguousarray(boards, np.int8), len(ROLLS), axis=0)
    after, _, off = generate_batch(parents, np.tile(ROLLS, (len(boards), 1)))
    return parents, after, off


def mean_over_rolls(per_roll: np.ndarray) -> np.ndarray:
    """Probabilities of each position's 21 rolls (rows ``21 * n + r``) averaged with the rolls'
    chances: one row a position."""
    n = len(per_roll) // len(ROLLS)
    w = np.tile(ROLL_WEIGHTS, n).astype(np.float32)[:, None]
    return (per_roll * w).reshape(n, len(ROLLS), 5).sum(axis=1)


def best_of_all_rolls(ev, boards: np.ndarray):
    """Every roll of every position about to roll, each side playing its best 0-ply move by
    ``ev``: ``(afterstates, the mover's probabilities of each, best)``, where
    ``best[21 * n + r]`` is the row of position ``n``'s best afterstate for ``ROLLS[r]``.

    Afterstates that several rolls reach (a checker moved 7 pips by 6-1, 5-2 or 4-3) are
    evaluated once, and each from its position's first layer where ``ev`` can
    (:func:`bgnet.bots.evaluator.afterstates_of`); an evaluator that keeps its values
    (:class:`bgnet.bots.cache.CachedEvaluator`, ``keeps_values``) finds the repeats itself."""
    _, after, off = all_rolls(boards)
    parent_of = parent_rows(off, len(ROLLS))
    if getattr(ev, "keeps_values", False):
        probs = afterstates_of(ev, after, boards, parent_of)
    else:
        once, back = unique_boards(after, off[::len(ROLLS)])  # repeats occur within a position
        probs = afterstates_of(ev, after[once], boards, parent_of[once])[back]
    return after, probs, segment_argmax(money_equity(probs), off)


def _is_evaluator(obj) -> bool:
    return callable(getattr(obj, "positions", None)) and callable(getattr(obj, "afterstates", None))


def check_ply(ply) -> int:
    """``ply`` as an int when it is a search depth a net bot has (0, 1 or 2); BadArgument otherwise."""
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or ply not in (0, 1, 2):
        raise BadArgument(f"search depth must be 0, 1 or 2 ply; got {ply!r}")
    return int(ply)


class NetBot(Bot):
    """Plays the move a value net likes best, at 0, 1 or 2 ply.

    ``net``: a torch value net (run on ``device``) or any evaluator with ``positions(boards)`` and
    ``afterstates(after)`` (see :mod:`bgnet.bots.evaluator`). ``meta`` describes where the net came
    from; its ``"cube"`` entry, when present, holds the cube settings of :meth:`cube_decision`
    (``{"met": name, "efficiency": {...CubeEfficiency fields}}``).
    """

    plies = (0, 1, 2)
    searches = True
    ply: int

    def __init__(self, net, ply: int = 0, device: str = "cpu", name: str = "net",
                 search: SearchSettings | None = None, meta: dict | None = None,
                 cubeful_play: bool = True):
        ply = check_ply(ply)
        if _is_evaluator(net):
            self.eval = net
        else:
            from bgnet.bots.torch_eval import NetEvaluator

            self.eval = NetEvaluator(net, device)
        self.ply = ply
        self.name = name if ply == 0 else f"{name}@{ply}"
        self.search = search or SearchSettings()
        self.meta = meta or {}
        self.cubeful_play = bool(cubeful_play)

    def with_cache(self, max_entries: int | None = None) -> NetBot:
        """This bot with its afterstates' 0-ply values kept and read back when its searches meet
        them again (:class:`bgnet.bots.cache.CachedEvaluator`; ``max_entries`` of them at most,
        by default :data:`bgnet.bots.cache.MAX_ENTRIES`): the same choices and values, to
        float32 rounding, in less time where searches overlap, as the decisions of one game
        do. The net is shared; ``clear_cache`` forgets what was kept."""
        from bgnet.bots.cache import MAX_ENTRIES, CachedEvaluator

        twin = copy.copy(self)
        twin.eval = CachedEvaluator(self.eval, MAX_ENTRIES if max_entries is None else max_entries)
        return twin

    def clear_cache(self) -> None:
        """Forget the afterstates kept by a bot made by :meth:`with_cache` (nothing otherwise)."""
        clear = getattr(self.eval, "clear", None)
        if clear is not None:
            clear()

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
        return self._probabilities(boards, ply)

    def _probabilities(self, boards: np.ndarray, ply) -> np.ndarray:
        ply = self.ply if ply is None else check_ply(ply)
        boards = board_batch(boards)
        if ply == 0:
            return self.eval.positions(boards)
        return self._expected_over_rolls(boards, ply - 1)

    def afterstate_probabilities(self, after: np.ndarray, ply: int | None = None,
                                 parents: np.ndarray | None = None) -> np.ndarray:
        """:meth:`Bot.afterstate_probabilities` (float32): at 0-ply the evaluator's, each
        afterstate started from its position's first layer where ``parents`` are given (one for
        all, or one each); deeper, the average over the opponent's 21 rolls of its best reply."""
        ply = self.ply if ply is None else check_ply(ply)
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)
        if ply > 0:
            return self._afterstate_value(after, ply)
        if parents is None:
            return self.eval.afterstates(after)
        parents = np.ascontiguousarray(parents, np.int8).reshape(-1, 2, 25)
        parent_of = (np.zeros(len(after), np.int64) if len(parents) == 1
                     else np.arange(len(after), dtype=np.int64))
        return afterstates_of(self.eval, after, parents, parent_of)

    def _afterstate_value(self, after: np.ndarray, depth: int) -> np.ndarray:
        """Mover's probabilities for afterstates, looking ``depth`` plies further."""
        if depth == 0:
            return self.eval.afterstates(after)
        # The opponent is on roll in swap(after): its expected probabilities, flipped to us.
        return mover_probabilities(after, lambda swapped: self._expected_over_rolls(swapped, depth - 1),
                                   np.float32)

    def _expected_over_rolls(self, boards: np.ndarray, depth: int) -> np.ndarray:
        """For positions with the side on roll about to roll: probabilities averaged over the 21
        rolls, the side playing its best move (0-ply choice, valued at ``depth``)."""
        after, p0, best = best_of_all_rolls(self.eval, boards)
        chosen = after[best]
        return mean_over_rolls(p0[best] if depth == 0 else self._afterstate_value(chosen, depth))

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
        after, probs, best = best_of_all_rolls(self.eval, boards)
        chosen = probs[best]
        averaged = mean_over_rolls(chosen)  # as at 1-ply (_expected_over_rolls)
        per_roll = np.asarray(chosen, np.float64)
        n = len(ROLLS)
        out = []
        for k, (ctx, board) in enumerate(zip(contexts, boards)):
            base = decide_context(averaged[k], ctx, board, met=met, efficiency=efficiency)
            rows = slice(n * k, n * (k + 1))
            out.append(decide_after_rolls(per_roll[rows], ROLL_WEIGHTS, after[best[rows]], ctx,
                                          base, met=met, efficiency=efficiency))
        return out

    # -- move choice -----------------------------------------------------------------------
    def move_measure(self, contexts):
        """The :class:`bgnet.cube.checker.MoveMeasure` this bot ranks moves by where the cube is
        known (``contexts``: one :class:`~bgnet.engine.state.MatchContext` per position, or one
        for all), with its cube settings; None where moves are ranked by cubeless money equity
        (no contexts, or ``cubeful_play`` off)."""
        if contexts is None or not self.cubeful_play:
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

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, ply: int | None = None,
                     contexts=None):
        """Chosen afterstates and steps for many positions, at ``ply`` (default: this bot's).
        With ``contexts`` (a :class:`~bgnet.engine.state.MatchContext` per position, the mover on
        roll, or one for all) moves are ranked by the match's own measure
        (:mod:`bgnet.cube.checker`) unless ``cubeful_play`` is off; without, by cubeless money
        equity."""
        ply = self.ply if ply is None else check_ply(ply)
        boards = np.ascontiguousarray(boards, np.int8)
        dice = np.ascontiguousarray(dice, np.int64)
        after, steps, off = generate_batch(boards, dice)
        parent_of = parent_rows(off)
        probs = afterstates_of(self.eval, after, boards, parent_of)
        measure = self.move_measure(contexts)
        eq = money_equity(probs) if measure is None else measure.values(probs, after, parent_of)
        if ply == 0:
            best = segment_argmax(eq, off)
            return after[best], steps[best]
        best = np.empty(len(boards), np.int64)
        for i in range(len(boards)):
            lo, hi = off[i], off[i + 1]
            score = None if measure is None else measure_score(measure, after[lo:hi], i)
            best[i] = self._deeper_choice(after, probs, eq, lo, hi, ply, score)
        return after[best], steps[best]

    def choose_moves_with_cube(self, boards: np.ndarray, dice: np.ndarray, contexts):
        return self.choose_moves(boards, dice, contexts=contexts)

    def _quick_choice(self, board: np.ndarray, d1: int, d2: int, ply, ctx=None):
        if (self.ply if ply is None else ply) == 0 and getattr(self.eval, "fast", None) is not None:
            from bgnet.bots.zero_ply import choose_zero_ply  # one compiled call (exported bots)

            return choose_zero_ply(self.eval, np.ascontiguousarray(board, np.int8), d1, d2,
                                   self.move_measure(ctx))
        return None

    def _choose_one(self, board: np.ndarray, d1: int, d2: int, ply, ctx=None):
        after, steps = self.choose_moves(np.ascontiguousarray(board, np.int8)[None],
                                         np.array([[d1, d2]], np.int64), ply, ctx)
        return after[0], steps[0]

    def _deeper_choice(self, after, probs, eq, lo, hi, ply: int, score=None) -> int:
        """Row of the move chosen at ``ply`` among the afterstates ``lo:hi`` of one position."""
        rows = slice(lo, hi)
        order = rank_afterstates(self, after[rows], probs[rows].copy(), ply, values=eq[rows],
                                 score=score or money_score, settings=self.search,
                                 value_lone=False)
        return lo + order[0]

    def ranked_moves(self, board: np.ndarray, d1: int, d2: int, ply: int | None = None,
                     context: MatchContext | None = None):
        """All legal moves of one position with the bot's probabilities, best first:
        a list of (afterstate, steps, probabilities), by the one search
        (:func:`bgnet.bots.search.rank_afterstates`; :func:`bgnet.bots.search.rank_moves` gives
        them with their notation and values). Deeper plies apply to the filtered best. With a
        ``context`` (the mover on roll) the order is the match's own measure's
        (:meth:`move_measure`), else cubeless money equity's."""
        ply = self.ply if ply is None else check_ply(ply)
        after, steps, off = generate_batch(np.ascontiguousarray(board, np.int8)[None],
                                           np.array([[d1, d2]], np.int64))
        if len(after) == 1 and steps[0, 0, 0] == -1:
            return []
        probs = self.afterstate_probabilities(after, 0, parents=board)
        measure = self.move_measure(context)
        score = money_score if measure is None else measure_score(measure, after)
        order = rank_afterstates(self, after, probs, ply, score=score, settings=self.search)
        return [(after[j], steps[j], probs[j]) for j in order]


def close_decision(d, window: float) -> bool:
    """Whether a cube decision is close: the cube is the player's to turn, and doubling is
    within ``window`` of playing on or the take within ``window`` of the pass."""
    if not d.cube_available:
        return False
    doubled = min(d.double_take, d.double_pass)
    return abs(doubled - d.no_double) < window or abs(d.double_take - d.double_pass) < window
