"""The one search: every ranking of moves in bgnet (a net bot's choice and hints, the advisor, the
web answers, UBGI, the analysis judge and its candidates, the candidates of a rollout and of
distillation) comes from here, and a ranked move's figures (:meth:`RankedMove.figures`) are
worked out here alone.

Layers, each built on the one below it, in the manner of an evaluator trait with the search
wrapped around it:

* a bot's ``evaluate`` -- probabilities of positions before the roll (:mod:`bgnet.bots.base`),
  and :meth:`~bgnet.bots.base.Bot.afterstate_probabilities` built on it (the mover's
  probabilities after each move; net bots have batched ones, looking ``ply`` rolls ahead);
* :func:`rank_afterstates` -- the afterstates of one position, valued at the shallowest depth,
  best first; for a bot that :attr:`~bgnet.bots.base.Bot.searches`, the best few (the move
  filter, :class:`SearchSettings`: at most :data:`KEEP` within :data:`MARGIN` of the best) are
  valued again at deeper plies;
* :func:`rank_moves` -- every legal move of a position and roll as a :class:`RankedMove`, with
  its probabilities, cubeless equity, and its value by the match's own measure
  (:mod:`bgnet.cube.checker`);
* :func:`choose_afterstates` -- a searching bot's move in many positions at once (one evaluator
  call at 0-ply, a compiled argmax per position, :func:`segment_argmax`; deeper,
  :func:`rank_afterstates` each);
* :func:`filtered_candidates` -- the move filter's candidates of many positions at 0-ply (what
  distillation values deeper); :func:`best_first` -- values in the order every ranking uses.

Moves are ranked by cubeless money equity without a context (cube and score), by the match's
own measure with one.

The 21 rolls of a position about to roll, each answered by its best 0-ply move, are what every
deeper ply looks at: :func:`roll_afterstates` generates them, :func:`best_of_rolls` and
:func:`best_of_rolls_by_position` choose the best move of each, :func:`mean_over_rolls` weighs
the rolls by their chances.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numba import njit

from bgnet.bots.evaluator import afterstates_of, parent_rows
from bgnet.engine.board import unique_boards
from bgnet.engine.movegen import ROLL_WEIGHTS, ROLLS, generate, generate_batch
from bgnet.engine.notation import format_move
from bgnet.nn.probs import equity as money_equity

if TYPE_CHECKING:
    from bgnet.bots.evaluator import PositionEvaluator
    from bgnet.engine.state import MatchContext

KEEP, MARGIN = 8, 0.16  # the move filter: at most 8 moves within 0.16 of the best go deeper
KEEP_1PLY, MARGIN_1PLY = 4, 0.12  # at 2-ply, of those ranked again at 1-ply: 4 within 0.12

# score(probs, rows): the values of the afterstates ``rows`` whose probabilities ``probs`` are
Score = Callable[[np.ndarray, Sequence[int] | np.ndarray], np.ndarray]


@dataclass
class SearchSettings:
    """Move filters for deeper plies (GNU Backgammon's default filters are alike).

    Of the moves ranked at 0-ply, at most ``keep`` go deeper, and only those within ``margin``
    equity of the best. At 2-ply the survivors are ranked again at 1-ply and at most ``keep_1ply``
    within ``margin_1ply`` of the best of them are searched at 2-ply. Measured on the first 600
    decisions of ``bgnet bench er`` with the shipped bot (error rate, time per decision): no
    1-ply filter 2.96 and 106 ms; 4 within 0.12 (the default) 3.13 and 69 ms; 3 within 0.08
    3.43 and 52 ms; 2 within 0.04 3.85 and 29 ms.
    """
    keep: int = KEEP
    margin: float = MARGIN
    keep_1ply: int = KEEP_1PLY
    margin_1ply: float = MARGIN_1PLY
    # Cube decisions of a 0-ply bot: where the 0-ply one is close (doubling within
    # ``cube_window`` of playing on, or the take within it of the pass; normalised equities),
    # it is made again at ``cube_ply`` (see NetBot.cube_decisions). Measured first with the hand
    # path's net on the 4,331 positions of ``bgnet bench cube``, judged by GNU Backgammon at
    # 2-ply (agreement, cost per decision), gnubg's efficiencies: 0-ply alone 93.2 % and 2.99;
    # close ones at 1-ply within 0.05 93.8 % and 2.38; within 0.1 (the default) 93.9 % and
    # 2.24, as with every decision at 1-ply, in half its time there.
    cube_ply: int = 1
    cube_window: float = 0.1
    # At 1-ply, search the cube as GNU Backgammon does (cubeful after each roll, the opponent's
    # cube action included: bgnet.cube.lookahead) rather than apply Janowski's model once to the
    # probabilities averaged over the rolls. bgnet-deep (its fitted efficiencies) on the same
    # positions: 95.4 % and 1.27 searched, 94.9 % and 1.88 averaged; window 0.2 no better.
    cube_lookahead: bool = True


DEFAULT_SETTINGS = SearchSettings()

# Pruning: of the moves of a roll ranked by the pruning net, the bot's own net values the best 3
# within 0.12 of its best (measured: the table of bgnet.bots.search.Pruning).
PRUNE_KEEP, PRUNE_MARGIN = 3, 0.12


@dataclass(frozen=True, eq=False)
class Pruning:
    """A cheap first look at each roll's moves in a deeper ply, as GNU Backgammon prunes at its
    inner plies: ``evaluator`` (a cheaper net's :class:`~bgnet.bots.evaluator.PositionEvaluator`)
    ranks every move of a roll by cubeless money equity, and only its best ``keep`` within
    ``margin`` of its best are valued by the bot's own net, whose best of them answers the roll
    (:func:`best_of_rolls`). ``name`` says which net it is (a shipped bot's name or a file's
    path). The root's moves and the move filter's first ranking are never pruned: they are the
    bot's own net's.

    The default was measured with bgnet-deep pruned by bgnet-default on the 31,500 rolls of
    1,500 self-play positions: how often the roll is answered by the move bgnet-deep's own best
    of all would answer it, the mean equity the answer loses by bgnet-deep's values, and the
    rows bgnet-deep values (of 711,972 without pruning):

    ==================  =========  ==============  =========
    keep, margin        same move  loss a roll     rows
    ==================  =========  ==============  =========
    1                   84.7 %     0.0045          31,500
    2                   94.5 %     0.0014          57,464
    3                   97.2 %     0.0007          82,362
    3 within 0.12       97.0 %     0.0007          64,833
    4 within 0.12       98.0 %     0.0005          74,966
    5                   98.9 %     0.0003          128,922
    ==================  =========  ==============  =========

    ``bgnet bench er`` could not tell any of them from the unpruned search (docs/RESULTS.md)."""

    evaluator: PositionEvaluator
    keep: int = PRUNE_KEEP
    margin: float = PRUNE_MARGIN
    name: str = ""

    def __post_init__(self):
        if isinstance(self.keep, bool) or not isinstance(self.keep, (int, np.integer)) \
                or self.keep < 1:
            raise ValueError(f"pruning keeps at least one move a roll; got keep={self.keep!r}")
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float, np.floating)) \
                or not self.margin >= 0:
            raise ValueError(f"pruning's margin is an equity of 0 or more; got {self.margin!r}")


class Ranker(Protocol):
    """What the search asks of a bot (every :class:`bgnet.bots.base.Bot` that can evaluate has
    it): its capabilities, its probabilities after moves and its measure of moves."""

    @property
    def searches(self) -> bool: ...

    @property
    def ply(self) -> int | None: ...

    @property
    def search(self) -> SearchSettings: ...

    def afterstate_probabilities(self, after: np.ndarray, ply: int | None = None,
                                 parents: np.ndarray | None = None,
                                 parent_of: np.ndarray | None = None) -> np.ndarray: ...

    def move_measure(self, contexts): ...

    def cube_settings(self): ...


@dataclass(frozen=True)
class Figure:
    """One figure of a ranked move: ``key`` (``mwc``, ``emg``, ``cubeful`` or ``equity``, the
    words of UBGI's ``info`` line), ``label`` (as GNU Backgammon and XG label it) and ``value``
    (match winning chances as a fraction, equities per unit of the cube)."""

    key: str
    label: str
    value: float

    def text(self, places: int = 3) -> str:
        """The label and the value: ``MWC 55.10%``, ``EMG +0.123``.

        >>> Figure("mwc", "MWC", 0.551).text(), Figure("emg", "EMG", 0.1234).text()
        ('MWC 55.10%', 'EMG +0.123')
        """
        if self.key == "mwc":
            return f"{self.label} {100 * self.value:.{places - 1}f}%"
        return f"{self.label} {self.value:+.{places}f}"


@dataclass(frozen=True)
class RankedMove:
    """One legal move: its notation, (from, to) steps, afterstate ``[opponent, mover]``, the
    mover's cubeless probabilities and cubeless money equity after it, and its ``value`` by the
    measure the moves are ranked by (:func:`bgnet.cube.checker.describe` names it; the cubeless
    equity again without a cube, ``cubeless``), with the match winning chances it leaves in a
    match (``mwc``). The figures are None where nothing values the moves.

    It is what every front end shows (the terminal's hints, the web answers and the page's
    hints, UBGI's ``info`` line): :meth:`figures` is the one place that says which figures a
    move has and how they are labelled."""

    notation: str
    steps: tuple[tuple[int, int], ...]
    after: np.ndarray
    probabilities: tuple[float, ...] | None = None
    equity: float | None = None
    value: float | None = None
    mwc: float | None = None
    cubeless: bool = True

    @property
    def cubeful(self) -> float | None:
        """The value by a measure with the cube (cubeful money equity, or EMG in a match);
        None where the moves are valued cubelessly or not at all."""
        return None if self.cubeless else self.value

    def figures(self) -> tuple[Figure, ...]:
        """The move's figures, labelled as GNU Backgammon and XG label them: in a match its match
        winning chances (MWC) and their equity at the score (EMG), with the cubeless money
        equity beside them; in money play with the cube its cubeful equity, the cubeless one
        beside it; in cubeless play its equity (cubeless). None without values.

        >>> m = RankedMove("8/5 6/5", ((8, 5), (6, 5)), np.zeros((2, 25)), None, 0.1, 0.2, 0.6,
        ...                cubeless=False)
        >>> "  ".join(f.text() for f in m.figures())
        'MWC 60.00%  EMG +0.200  cubeless equity +0.100'
        """
        if self.value is None or self.equity is None:
            return ()
        if self.cubeless:
            return (Figure("equity", "equity (cubeless)", self.equity),)
        if self.mwc is not None:
            return (Figure("mwc", "MWC", self.mwc), Figure("emg", "EMG", self.value),
                    Figure("equity", "cubeless equity", self.equity))
        return (Figure("cubeful", "cubeful equity", self.value),
                Figure("equity", "cubeless equity", self.equity))

    def ranked_by(self) -> str:
        """What moves valued as this one are ranked by, in the words its figures are labelled
        with ("" without values)."""
        if self.value is None:
            return ""
        if self.cubeless:
            return "equity (cubeless)"
        if self.mwc is not None:
            return "MWC (match winning chances) and EMG (equity at the score)"
        return "cubeful equity"


@njit(cache=True)
def segment_argmax(values, offsets):
    """Row index of the largest value inside each segment ``offsets[n]:offsets[n + 1]``.

    Ties go to the first row, so the choice is reproducible. Every segment must be non-empty
    (``generate_batch`` guarantees it: a position with no legal move has one row, itself).
    """
    n = offsets.shape[0] - 1
    out = np.empty(n, np.int64)
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        best = lo
        for r in range(lo + 1, hi):
            if values[r] > values[best]:
                best = r
        out[i] = best
    return out


@njit(cache=True)
def segment_top_k(values, offsets, keep, margin=np.inf):
    """The rows of the ``keep`` largest values inside each segment ``offsets[n]:offsets[n + 1]``
    that are within ``margin`` of the segment's largest (the largest always), and the offsets
    of the segments in those rows: ``(rows int64[M], offsets int64[len(offsets)])``. Rows stay
    in their order, and of equal values the first rows are kept, so :func:`segment_argmax` over
    the rows kept picks the row it picks over them all whenever that row is kept.

    >>> rows, off = segment_top_k(np.array([0.1, 0.5, 0.3, 0.5, 0.2, 0.9]), np.array([0, 4, 4, 6]), 2)
    >>> rows.tolist(), off.tolist()
    ([1, 3, 4, 5], [0, 2, 2, 4])
    >>> segment_top_k(np.array([0.1, 0.5, 0.3, 0.45]), np.array([0, 4]), 3, 0.1)[0].tolist()
    [1, 3]
    """
    n = offsets.shape[0] - 1
    most = 0
    for i in range(n):
        most += min(keep, offsets[i + 1] - offsets[i])
    rows = np.empty(most, np.int64)
    out_off = np.empty(n + 1, np.int64)
    out_off[0] = 0
    top = np.empty(max(keep, 1), np.int64)
    at = 0
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        # The best ``keep`` so far, best first (earlier rows before equal later ones).
        m = 0
        for r in range(lo, hi):
            if m == keep and values[r] <= values[top[m - 1]]:
                continue
            j = m if m < keep else keep - 1
            while j > 0 and values[r] > values[top[j - 1]]:
                top[j] = top[j - 1]
                j -= 1
            top[j] = r
            if m < keep:
                m += 1
        while m > 1 and values[top[m - 1]] < values[top[0]] - margin:
            m -= 1
        # back in row order
        for a in range(1, m):
            r = top[a]
            j = a
            while j > 0 and top[j - 1] > r:
                top[j] = top[j - 1]
                j -= 1
            top[j] = r
        for a in range(m):
            rows[at + a] = top[a]
        at += m
        out_off[i + 1] = at
    return rows[:at], out_off


def best_first(values) -> list[int]:
    """The rows of ``values``, best (highest) first; equal values keep their order.

    >>> best_first(np.array([0.1, 0.5, 0.3, 0.5]))
    [1, 3, 2, 0]
    """
    return [int(j) for j in np.argsort(-np.asarray(values), kind="stable")]


def keep_best(values: np.ndarray, order: Sequence[int], keep: int, margin: float) -> list[int]:
    """The move filter: the best ``keep`` of ``order`` (best first) within ``margin`` of the best.

    >>> keep_best(np.array([0.1, 0.5, 0.3, 0.45]), [1, 3, 2, 0], 3, 0.16)
    [1, 3]
    """
    top = values[order[0]]
    return [int(j) for j in order[:keep] if values[j] >= top - margin]


def money_score(probs: np.ndarray, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    """A :data:`Score` by cubeless money equity."""
    return money_equity(probs)


def measure_score(measure, after: np.ndarray, position: int = 0) -> Score:
    """A :data:`Score` by ``measure`` (a :class:`bgnet.cube.checker.MoveMeasure`) of the
    afterstates ``after[rows]``, all played from position ``position`` of its contexts."""
    def score(probs, rows):
        return measure.values(probs, after[rows], np.full(len(rows), position, np.int64))
    return score


def rank_afterstates(bot: Ranker, after: np.ndarray, probs: np.ndarray, ply: int, *,
                     values: np.ndarray | None = None, score: Score = money_score,
                     settings: SearchSettings = DEFAULT_SETTINGS, also: Sequence[int] = (),
                     filter_1ply: bool = True, value_lone: bool = True) -> list[int]:
    """The rows of ``after`` (the afterstates of one position), best first by ``score``.

    ``probs`` are their mover's probabilities at 0-ply (``values`` their scores, when known);
    at ``ply`` > 0 the move filter's candidates (:func:`keep_best` of ``settings``) and the rows
    ``also`` are valued again by ``bot.afterstate_probabilities`` -- at 1-ply, then, at 2-ply,
    only those the 1-ply filter keeps (all at ``ply`` at once unless ``filter_1ply``) -- and
    ``probs`` is updated in place; they come first, best first, the rest after them in their
    0-ply order. A lone candidate is valued deeper only if ``value_lone``.
    """
    if values is None:
        values = score(probs, np.arange(len(after)))
    order = best_first(values)
    if ply == 0 or not order:
        return order
    cand = keep_best(values, order, settings.keep, settings.margin)
    cand += [int(j) for j in also if j not in cand]
    if len(cand) == 1:
        if value_lone:
            probs[cand] = bot.afterstate_probabilities(after[cand], ply)
        return order
    first = 1 if filter_1ply else ply
    deep_probs = bot.afterstate_probabilities(after[cand], first)
    v = score(deep_probs, cand)
    ranked = best_first(v)
    if ply > first:
        deep = keep_best(v, ranked, settings.keep_1ply, settings.margin_1ply)
        if len(deep) > 1:
            deep_probs[deep] = bot.afterstate_probabilities(after[[cand[k] for k in deep]], ply)
            v = score(deep_probs, cand)
            deep = sorted(deep, key=lambda k: -v[k])
        ranked = deep + [k for k in ranked if k not in deep]
    probs[cand] = deep_probs
    return [cand[k] for k in ranked] + [j for j in order if j not in cand]


def rank_moves(bot: Ranker, board: np.ndarray, d1: int, d2: int, ply: int | None = None,
               context: MatchContext | None = None, *, measure=None,
               limit: int | None = None) -> list[RankedMove]:
    """Every legal move of ``board`` with dice ``d1, d2``, best first by ``bot``'s probabilities
    at ``ply`` (None: its own depth); empty when no move is legal. ``bot`` must be able to
    evaluate (:attr:`~bgnet.bots.base.Bot.can_evaluate`).

    A bot that :attr:`~bgnet.bots.base.Bot.searches` values every move at 0-ply and the best
    few deeper (:func:`rank_afterstates`, with its move filter), ranking them by its own
    :meth:`~bgnet.bots.base.Bot.move_measure` of ``context`` (the mover on roll; cubeless money
    equity without one); other bots value every move at ``ply`` and rank them by ``measure``.
    Each move's ``value`` is by ``measure`` (a :class:`bgnet.cube.checker.MoveMeasure` of this
    position; default: that of ``context`` with the bot's cube settings). ``limit``: the best
    ``limit`` moves of a searching bot are all valued at ``ply`` and put in the order of those
    values (a search values only its few best that deep).
    """
    from bgnet.cube.checker import measure_for

    board = np.ascontiguousarray(board, np.int8).reshape(2, 25)
    after, steps = generate(board, d1, d2)
    if len(after) == 0:
        return []
    if measure is None:
        measure = measure_for(context, *bot.cube_settings())
    if bot.searches:
        depth = bot.ply if ply is None else ply
        probs = bot.afterstate_probabilities(after, 0, parents=board)
        rank = bot.move_measure(context)
        score = money_score if rank is None else measure_score(rank, after)
        order = rank_afterstates(bot, after, probs, depth or 0, score=score,
                                 settings=bot.search)
    else:
        depth = ply
        probs = bot.afterstate_probabilities(after, ply)
        order = rank_afterstates(bot, after, probs, 0, score=measure_score(measure, after))
    probs = np.asarray(probs, np.float64)
    if limit is not None and bot.searches and depth:
        top = order[:limit]
        probs[top] = bot.afterstate_probabilities(after[top], depth)
        v = measure.values(probs[top], after[top])
        order = [top[i] for i in best_first(v)] + order[limit:]
    values = measure.values(probs, after)
    return [RankedMove(format_move(steps[j], board), steps_of(steps[j]), after[j],
                       tuple(float(x) for x in probs[j]), float(money_equity(probs[j])),
                       float(values[j]), measure.to_mwc(float(values[j])), measure.cubeless)
            for j in order]


def steps_of(raw) -> tuple[tuple[int, int], ...]:
    """The (from, to) steps of a move as :mod:`bgnet.engine.movegen` writes them (int8[4, 2],
    -1 where there is none), as a tuple of pairs."""
    return tuple((int(a), int(b)) for a, b in np.asarray(raw).reshape(-1, 2) if a >= 0)


def choose_afterstates(bot: Ranker, boards: np.ndarray, dice: np.ndarray, ply: int,
                       contexts=None) -> tuple[np.ndarray, np.ndarray]:
    """The move ``bot`` (a bot that :attr:`~bgnet.bots.base.Bot.searches`) plays in each of many
    positions at ``ply``: ``(afterstates int8[N, 2, 25], steps int8[N, 4, 2])``.

    Every afterstate of every position is valued at 0-ply in one call; at 0-ply a compiled argmax
    per position picks the best, deeper each position's moves go through
    :func:`rank_afterstates` and its move filter. Moves are ranked by the bot's
    :meth:`~bgnet.bots.base.Bot.move_measure` of ``contexts`` (cubeless money equity where it
    gives none)."""
    boards = np.ascontiguousarray(boards, np.int8)
    dice = np.ascontiguousarray(dice, np.int64)
    after, steps, off = generate_batch(boards, dice)
    parent_of = parent_rows(off)
    probs = bot.afterstate_probabilities(after, 0, parents=boards, parent_of=parent_of)
    measure = bot.move_measure(contexts)
    eq = money_equity(probs) if measure is None else measure.values(probs, after, parent_of)
    if ply == 0:
        best = segment_argmax(eq, off)
        return after[best], steps[best]
    best = np.empty(len(boards), np.int64)
    for i in range(len(boards)):
        rows = slice(off[i], off[i + 1])
        score = money_score if measure is None else measure_score(measure, after[rows], i)
        order = rank_afterstates(bot, after[rows], probs[rows].copy(), ply, values=eq[rows],
                                 score=score, settings=bot.search, value_lone=False)
        best[i] = off[i] + order[0]
    return after[best], steps[best]


def filtered_candidates(bot: Ranker, boards: np.ndarray, dice: np.ndarray, keep: int,
                        margin: float) -> tuple[np.ndarray, list[list[int]]]:
    """The move filter at 0-ply over many positions: every afterstate (``after``, as
    :func:`bgnet.engine.movegen.generate_batch` writes them) and, per position, the rows of its
    best ``keep`` moves within ``margin`` cubeless equity of the best, best first."""
    boards = np.ascontiguousarray(boards, np.int8)
    after, _, off = generate_batch(boards, np.ascontiguousarray(dice, np.int64))
    probs = bot.afterstate_probabilities(after, 0, parents=boards, parent_of=parent_rows(off))
    eq = money_equity(probs)
    return after, [keep_best(eq, [off[i] + j for j in best_first(eq[off[i]:off[i + 1]])],
                             keep, margin) for i in range(len(boards))]


# ---------------------------------------------------------------------------------------------
# the 21 rolls


def roll_afterstates(boards: np.ndarray):
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
    # The chances sum to 1 only within float32 rounding: a sure win would come out 1.0000002.
    return np.minimum((per_roll * w).reshape(n, len(ROLLS), 5).sum(axis=1), np.float32(1.0))


def _afterstate_values(ev: PositionEvaluator, after: np.ndarray, boards: np.ndarray,
                       parent_of: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``ev``'s mover probabilities of ``after`` (``after[k]`` a move from
    ``boards[parent_of[k]]``), each distinct afterstate of a group ``groups[i]:groups[i + 1]``
    (one position's rows) valued once, unless ``ev`` keeps its values and finds repeats itself."""
    if getattr(ev, "keeps_values", False):
        return afterstates_of(ev, after, boards, parent_of)
    once, back = unique_boards(after, groups)
    return afterstates_of(ev, after[once], boards, parent_of[once])[back]


def best_of_rolls(ev: PositionEvaluator, boards: np.ndarray, pruning: Pruning | None = None):
    """Every roll of every position about to roll, each side playing its best 0-ply move by the
    evaluator ``ev``: ``(chosen, probs)``, where ``chosen[21 * n + r]`` is position ``n``'s best
    afterstate for ``ROLLS[r]`` and ``probs[21 * n + r]`` the mover's probabilities of it by ``ev``.

    With ``pruning`` (:class:`Pruning`), its cheap evaluator ranks every move of a roll and only
    its best :attr:`Pruning.keep` (within :attr:`Pruning.margin` of its best) are valued by
    ``ev``, whose best of them answers the roll (GNU Backgammon's pruning at its inner plies);
    without, ``ev`` values every move.

    Afterstates that several rolls reach (a checker moved 7 pips by 6-1, 5-2 or 4-3) are
    evaluated once, and each from its position's first layer where the evaluator can
    (:func:`bgnet.bots.evaluator.afterstates_of`); an evaluator that keeps its values
    (:class:`bgnet.bots.cache.CachedEvaluator`, ``keeps_values``) finds the repeats itself."""
    _, after, off = roll_afterstates(boards)
    parent_of = parent_rows(off, len(ROLLS))
    if pruning is not None:
        cheap = _afterstate_values(pruning.evaluator, after, boards, parent_of, off[::len(ROLLS)])
        rows, off = segment_top_k(money_equity(cheap), off, pruning.keep, pruning.margin)
        after, parent_of = after[rows], parent_of[rows]
    probs = _afterstate_values(ev, after, boards, parent_of, off[::len(ROLLS)])
    best = segment_argmax(money_equity(probs), off)
    return after[best], probs[best]


def best_of_rolls_by_position(ev: PositionEvaluator, boards: np.ndarray, chunk: int = 512,
                              pruning: Pruning | None = None):
    """:func:`best_of_rolls` shaped by position: the mover's probabilities float64[N, 21, 5] of
    its best 0-ply move for each of the 21 rolls, and those afterstates int8[N, 21, 2, 25].
    Positions that repeat (the trials of a rollout standing on the same position) share their
    21 rolls; ``chunk`` distinct positions are generated and evaluated in one call. ``pruning``
    as :func:`best_of_rolls` takes it."""
    n = len(boards)
    probs = np.empty((n, 21, 5), np.float64)
    chosen = np.empty((n, 21, 2, 25), np.int8)
    first, inverse = unique_boards(boards)
    distinct = boards[first]
    for lo in range(0, len(distinct), chunk):
        part = distinct[lo:lo + chunk]
        m = len(part)
        after, p = best_of_rolls(ev, part, pruning)
        rows = np.flatnonzero((inverse >= lo) & (inverse < lo + m))
        probs[rows] = p.reshape(m, 21, 5)[inverse[rows] - lo]
        chosen[rows] = after.reshape(m, 21, 2, 25)[inverse[rows] - lo]
    return probs, chosen
