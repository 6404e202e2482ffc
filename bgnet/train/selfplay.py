"""Vectorized self-play: many games advance together, one network call per ply for all of them.

Every game in the pool keeps its history of positions (side on roll first) and the net's value of
each, so that when it ends its λ-returns can be computed in one compiled pass. Finished games are
replaced by fresh ones at once, so the pool stays full and every network call is large.

With ``bearoff=True`` a game ends for training as soon as a move reaches a bear-off position
(both sides with all their checkers home, :func:`bgnet.bearoff.is_bearoff`): the bear-off
database's probabilities for that afterstate are the exact value of the rest of the game, so they
are its λ-return terminal instead of one played-out result, and the pool starts a fresh game.

With ``race_starts`` above 0 some fresh games begin where an earlier game of the pool broke
contact instead of at the opening (see :class:`SelfPlayPool`), so that a split net's race half
learns from many more races than play from the opening gives it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit

from bgnet.bearoff import is_bearoff
from bgnet.bots.evaluator import afterstates_of, parent_rows
from bgnet.bots.simple import segment_argmax
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.board import race_mask, start_position
from bgnet.engine.movegen import generate_batch
from bgnet.nn.encode import game_results
from bgnet.nn.probs import equity as money_equity
from bgnet.nn.probs import flip
from bgnet.train.config import TrainConfig
from bgnet.train.move_filter import MoveFilter, valued_equity

RACE_STARTS_KEPT = 16384  # race positions a pool keeps to start games from (with race_starts > 0)


class InProcessSource:
    """What a game source playing in this process has nothing of (the defaults of
    :class:`bgnet.train.sources.GameSource` for it): no CPU time spent elsewhere, no extra
    scalars or summary entries, nothing to stop at the end."""

    def cpu_seconds(self) -> float:
        return 0.0  # its CPU time is the process's own

    def scalars(self) -> dict[str, float]:
        return {}

    def summary(self) -> dict:
        return {}

    def close(self) -> None:
        pass


@dataclass
class FinishedGames:
    """Training samples from the games that ended in one step: positions, their λ-return targets,
    and per-game statistics.

    A game ended by the bear-off database counts, in ``results``, its most likely outcome under
    the database's probabilities, and in ``lengths`` the plies played up to the bear-off position.

    Games that were learned from while they were played (online TD(λ),
    :class:`bgnet.train.online.OnlineSource`) hold no positions: ``learned`` has the loss of each.
    """
    boards: np.ndarray  # int8[S, 2, 25], side on roll in board[1]
    targets: np.ndarray  # float32[S, 5], λ-returns from the view of the side on roll
    results: np.ndarray  # int[G]: points won by the player who moved first (+/- 1, 2, 3)
    lengths: np.ndarray  # int[G]: plies
    learned: np.ndarray = dataclasses.field(default_factory=lambda: np.empty(0, np.float32))  # float[G] or empty


@njit(cache=True)
def _flip(p, out):
    out[0] = 1.0 - p[0]
    out[1] = p[3]
    out[2] = p[4]
    out[3] = p[1]
    out[4] = p[2]


@njit(cache=True)
def lambda_returns(values, length, final, lam, out, explored=None):
    """λ-returns of one game, written into ``out[:length]``.

    ``values[t]`` is the net's estimate of position t for the side on roll at t; ``final`` is the
    outcome from the view of the side that made the last move (position ``length - 1``).
    G_{T-1} = final;  G_t = flip((1 - λ) V_{t+1} + λ G_{t+1}): flipping is affine, so mixing
    before flipping equals mixing the flipped values.

    ``explored[t]`` (optional) marks a move at ply t that was not the greedy one: there the trace
    is cut, G_t = flip(V_{t+1}) (Watkins' rule), so that no return of the line an exploring move
    started flows back past it; the caller stores the greedy move's value as ``values[t + 1]``.
    """
    tmp = np.empty(5, np.float32)
    for k in range(5):
        out[length - 1, k] = final[k]
    for t in range(length - 2, -1, -1):
        trace = 0.0 if explored is not None and explored[t] else lam
        for k in range(5):
            tmp[k] = (1.0 - trace) * values[t + 1, k] + trace * out[t + 1, k]
        _flip(tmp, out[t])


@njit(cache=True)
def ranked_pick(equity, off, explore, top, u):
    """For each position i with ``explore[i]``: the row of a move drawn uniformly (by ``u[i]`` in
    [0, 1)) from its 2nd to ``top``-th best by ``equity`` (rows ``off[i]:off[i + 1]``; -inf rows,
    the moves a filter ruled out, never drawn); -1 where it is not exploring or has no second
    valued move. Ties keep the generator's order.

    >>> eq = np.array([0.1, 0.5, 0.3, -np.inf, 0.2]); off = np.array([0, 5])
    >>> int(ranked_pick(eq, off, np.array([True]), 3, np.array([0.0]))[0])  # 2nd best
    2
    >>> int(ranked_pick(eq, off, np.array([True]), 3, np.array([0.99]))[0])  # 3rd best
    4
    """
    n = off.shape[0] - 1
    out = np.full(n, -1, np.int64)
    for i in range(n):
        if not explore[i]:
            continue
        a, b = off[i], off[i + 1]
        order = np.argsort(-equity[a:b], kind="mergesort")
        valued = 0
        for j in range(b - a):
            if equity[a + order[j]] > -np.inf:
                valued += 1
        k = min(top, valued) - 1  # how many moves below the best can be drawn
        if k > 0:
            out[i] = a + order[1 + min(int(u[i] * k), k - 1)]
    return out


@dataclass(frozen=True)
class SelfPlaySettings:
    """How self-play plays: the one bundle of settings a pool, a local source and a Ray worker
    take whole, checked once when it is made (ValueError). :meth:`of` reads it from a run's (or
    a phase's) ``train`` section; built in code, its defaults are a plain pool's. What each
    setting does is told in :class:`SelfPlayPool` and :class:`bgnet.train.config.TrainConfig`.

    >>> SelfPlaySettings(explore_top=1)
    Traceback (most recent call last):
    ...
    ValueError: explore_top must be 0 (any move) or at least 2; got 1
    """
    parallel_games: int = 512  # games in flight in one pool
    lam: float = 0.7
    max_plies: int = 1000
    epsilon: float = 0.0
    explore_top: int = 0
    bearoff: bool = False
    move_filter: int = 0
    race_starts: float = 0.0
    search_target: float = 0.0  # read by the sources, which mix the 1-ply value into the targets

    def __post_init__(self) -> None:
        if self.parallel_games < 1 or self.max_plies < 1:
            raise ValueError(f"a self-play pool needs at least one game of at least one ply; got "
                             f"{self.parallel_games} games of up to {self.max_plies} plies")
        if self.explore_top == 1 or self.explore_top < 0:
            raise ValueError(f"explore_top must be 0 (any move) or at least 2; got {self.explore_top}")
        if not 0.0 <= self.race_starts < 1.0:
            raise ValueError(f"race_starts is a chance below 1 (games from the opening supply the race "
                             f"positions); got {self.race_starts}")
        if self.move_filter < 0:
            raise ValueError(f"move_filter is a number of moves (0: every move); got {self.move_filter}")
        for name, chance in (("lam", self.lam), ("epsilon", self.epsilon), ("search_target", self.search_target)):
            if not 0.0 <= chance <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1; got {chance}")
        # One type for each number, whatever the caller gave: the compiled passes see one signature.
        typed = {"parallel_games": int(self.parallel_games), "lam": float(self.lam),
                 "max_plies": int(self.max_plies), "epsilon": float(self.epsilon),
                 "explore_top": int(self.explore_top), "bearoff": bool(self.bearoff),
                 "move_filter": int(self.move_filter), "race_starts": float(self.race_starts),
                 "search_target": float(self.search_target)}
        for name, value in typed.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, train: TrainConfig) -> SelfPlaySettings:
        """The self-play settings of a run's (or a phase's) checked ``train`` section."""
        return cls(parallel_games=train.parallel_games, lam=train.lam, max_plies=train.max_plies,
                   epsilon=train.epsilon, explore_top=train.explore_top, bearoff=train.bearoff,
                   move_filter=train.move_filter, race_starts=train.race_starts,
                   search_target=train.search_target)


def likely_points(probs: np.ndarray) -> int:
    """The most likely result, in points for the side whose probabilities ``probs`` (win, wg, wbg,
    lg, lbg; gammons included in wins) are: +1/+2/+3 won, -1/-2/-3 lost.

    >>> likely_points(np.array([0.7, 0.6, 0.0, 0.0, 0.0])), likely_points(np.array([0.3, 0, 0, 0.1, 0]))
    (2, -1)
    """
    w, wg, wbg, lg, lbg = (float(x) for x in probs)
    outcomes = (w - wg, wg - wbg, wbg, (1.0 - w) - lg, lg - lbg, lbg)
    k = int(np.argmax(outcomes))
    return (1, 2, 3, -1, -2, -3)[k]


class SelfPlayPool:
    """``settings.parallel_games`` games in parallel (``n``), played by one value net (with
    optional ε-greedy exploration), each of up to ``settings.max_plies`` plies. What the other
    :class:`SelfPlaySettings` do:

    ``lam``: the λ of the games' λ-returns.

    ``epsilon``: the chance that a move explores instead of playing the net's best:
    ``explore_top`` 0 draws any legal move, ``explore_top`` K > 1 one of the 2nd to K-th best
    (the moves the net values; under the move filter, its valued ones). An exploring move is
    played, but the position before it learns the greedy move's value (Q-learning's target:
    :func:`lambda_returns` cuts the trace there), so exploration widens the positions seen
    without teaching the net the value of a worse move.

    ``bearoff``: end games at their first bear-off position, with the database's probabilities as
    the terminal target (see the module docstring). The evaluator's own ``bearoff`` switch, when
    it has one, is set to the same value, so that moves are chosen with the values learned from.
    ``self.bearoff_games`` counts the games ended that way.

    ``move_filter``: when above 0, the net values in full only that many contact moves of each
    position, the ones a linear readout of its first hidden layer ranks best
    (:class:`bgnet.train.move_filter.MoveFilter`); 0 values every move.

    ``race_starts``: the chance that a fresh game begins at a race position instead of the
    opening. The pool keeps the position at which each game from the opening broke contact (the
    last :data:`RACE_STARTS_KEPT` of them, an older one replaced at random once full) and draws
    the race starts from those (once it has kept ``n`` of them), so they are the races the net's
    own play leads to. Their games are counted like any other (in a run's game count, results
    and lengths).
    """

    def __init__(self, evaluator: NetEvaluator, settings: SelfPlaySettings, rng: np.random.Generator):
        self.settings = settings
        n, max_plies = settings.parallel_games, settings.max_plies
        self.races = np.empty((RACE_STARTS_KEPT, 2, 25), np.int8)
        self.races_seen = 0  # race positions met since the pool began (the first ones kept in order)
        self.ev = evaluator
        self.filter = MoveFilter(evaluator, settings.move_filter) if settings.move_filter else None
        evaluator.bearoff = settings.bearoff  # the evaluator answers bear-offs as the pool asks
        self.bearoff_games = 0
        self.n = n
        self.rng = rng
        self.max_plies = max_plies
        self.boards = np.empty((n, 2, 25), np.int8)
        self.ply = np.zeros(n, np.int64)
        self.hist = np.empty((n, max_plies + 1, 2, 25), np.int8)
        self.values = np.empty((n, max_plies + 1, 5), np.float32)
        self.explored = np.zeros((n, max_plies + 1), np.bool_)
        self.opening = np.ones(n, np.bool_)  # the game began at the opening (no double first)
        self.raced = np.zeros(n, np.bool_)  # the game has reached a race (or began as one)
        for i in range(n):
            self._reset(i)
        self._need_value = True

    def _reset(self, i: int) -> None:
        kept = min(self.races_seen, RACE_STARTS_KEPT)
        # No draw at all without race starts, so that such runs keep the dice they always had;
        # none either until the pool has met as many races as it plays games, so that the first
        # few are not started from again and again.
        if self.settings.race_starts and kept >= self.n and self.rng.random() < self.settings.race_starts:
            self.boards[i] = self.races[self.rng.integers(kept)]
            self.opening[i] = False
            self.raced[i] = True
        else:
            self.boards[i] = start_position()
            self.opening[i] = True
            self.raced[i] = False
        self.ply[i] = 0

    def _keep_races(self, boards: np.ndarray, live: np.ndarray) -> None:
        """Keep the positions where games from the opening have just broken contact."""
        new = np.flatnonzero(live & ~self.raced)
        new = new[race_mask(boards[new])]
        for i in new:
            slot = self.races_seen if self.races_seen < RACE_STARTS_KEPT else self.rng.integers(RACE_STARTS_KEPT)
            self.races[slot] = boards[i]
            self.races_seen += 1
        self.raced[new] = True

    def configure(self, settings: SelfPlaySettings) -> None:
        """New settings for the moves still to play (a recipe's next phase): λ, exploration, the
        move filter and race starts; the games in flight go on. Their λ-returns use the new λ
        from here on, as every return is made at a game's end. The pool's size, ply limit and
        bear-off rule are the pool's own (a phase cannot change them)."""
        if settings.race_starts and not self.settings.race_starts:
            self.raced |= race_mask(self.boards)  # games already racing are no contact break
        if settings.move_filter != self.settings.move_filter:
            self.filter = MoveFilter(self.ev, settings.move_filter) if settings.move_filter else None
        self.settings = dataclasses.replace(settings, parallel_games=self.n, max_plies=self.max_plies,
                                            bearoff=self.settings.bearoff)

    def state(self) -> dict:
        """The games in flight, as plain arrays (no generator: its owner saves it), so that a run
        resumed from a checkpoint plays on exactly as it would have without stopping."""
        plies = self.ply.astype(np.int64)
        in_game = np.arange(self.hist.shape[1])[None, :] < plies[:, None]
        with_value = np.arange(self.values.shape[1])[None, :] <= plies[:, None]
        out = {"boards": self.boards.copy(), "ply": plies, "hist": self.hist[in_game],
               "values": self.values[with_value], "explored": self.explored[in_game],
               "need_value": bool(self._need_value), "bearoff_games": int(self.bearoff_games)}
        if self.settings.race_starts or self.races_seen:
            out.update(opening=self.opening.copy(), raced=self.raced.copy(), races_seen=self.races_seen,
                       races=self.races[:min(self.races_seen, RACE_STARTS_KEPT)].copy())
        if self.filter is not None:
            out["filter"] = self.filter.state()
        return out

    def restore(self, state: dict) -> None:
        """Put back the games of :meth:`state` (a pool of the same size and ``max_plies``)."""
        ply = np.asarray(state["ply"], np.int64)
        if ply.shape != (self.n,) or (ply > self.max_plies).any():
            raise ValueError(f"the saved self-play pool holds {len(ply)} games (of up to {ply.max()} "
                             f"plies); this pool holds {self.n} of up to {self.max_plies}")
        self.boards[:] = np.asarray(state["boards"], np.int8)
        self.ply[:] = ply
        in_game = np.arange(self.hist.shape[1])[None, :] < ply[:, None]
        with_value = np.arange(self.values.shape[1])[None, :] <= ply[:, None]
        self.hist[in_game] = np.asarray(state["hist"], np.int8)
        self.values[with_value] = np.asarray(state["values"], np.float32)
        self.explored[in_game] = np.asarray(state["explored"], np.bool_)
        self._need_value = bool(state["need_value"])
        self.bearoff_games = int(state.get("bearoff_games", 0))
        # Saved without race starts: every game began at the opening and those already in a
        # race count as kept (no race position to draw from yet).
        self.opening[:] = np.asarray(state.get("opening", np.ones(self.n, np.bool_)), np.bool_)
        self.raced[:] = np.asarray(state["raced"], np.bool_) if "raced" in state else race_mask(self.boards)
        races = np.asarray(state.get("races", np.empty((0, 2, 25), np.int8)), np.int8)
        self.races[:len(races)] = races
        self.races_seen = int(state.get("races_seen", 0))
        if self.filter is not None and state.get("filter"):
            self.filter.restore(state["filter"])

    def _dice(self) -> np.ndarray:
        dice = self.rng.integers(1, 7, size=(self.n, 2))
        # The opening roll is never a double: each side rolls one die and ties are rolled again.
        first = (self.ply == 0) & self.opening
        while True:
            tie = first & (dice[:, 0] == dice[:, 1])
            if not tie.any():
                break
            dice[tie] = self.rng.integers(1, 7, size=(int(tie.sum()), 2))
        return dice

    def step(self) -> FinishedGames:
        """Every game plays one move; returns the samples of the games that ended."""
        n = self.n
        idx = np.arange(n)
        if self._need_value:
            # Values of the current positions (only needed for fresh games' first positions).
            self.values[idx, self.ply] = self.ev.positions(self.boards)
            self._need_value = False
        self.hist[idx, self.ply] = self.boards
        after, _, off = generate_batch(self.boards, self._dice())
        if self.filter is None:
            probs = afterstates_of(self.ev, after, self.boards, parent_rows(off))  # for the mover
            equity = money_equity(probs)
        else:  # NaN rows: moves the filter ruled out
            probs = self.filter.values(after, self.boards, off)
            equity = valued_equity(probs)
        best = segment_argmax(equity, off)
        played, explored = self._explore(best, equity, off)
        self.explored[idx, self.ply] = explored
        chosen = after[played]
        chosen_probs = probs[played]
        if self.filter is not None:
            unvalued = np.isnan(chosen_probs[:, 0])  # an exploring move the filter ruled out
            if unvalued.any():
                chosen_probs[unvalued] = self.ev.afterstates(chosen[unvalued])
        results = game_results(chosen)
        self.ply += 1
        # The next position is the opponent on roll. Its value, as the λ-returns read it, is the
        # flip of the mover's view of the greedy move (the one played, unless it explored).
        nxt = np.ascontiguousarray(chosen[:, ::-1])
        greedy_probs = probs[best]
        nv = flip(greedy_probs)
        # The evaluator already values a finished game by its exact outcome and, with bear-off
        # on, a bear-off afterstate by the database: the mover's terminal target where there is
        # one (the greedy move's value when the game ended on an exploring move).
        finals = np.where(explored[:, None], greedy_probs, chosen_probs)
        if self.settings.bearoff:
            cut = (results == 0) & is_bearoff(chosen)
            if cut.any():
                results = results.copy()
                results[cut] = -1  # marks "ended by the database" for _collect
                self.bearoff_games += int(cut.sum())
        done = (results != 0) | (self.ply >= self.max_plies)
        finished = self._collect(np.flatnonzero(done), results, finals, chosen_probs)
        live = ~done
        if self.settings.race_starts:
            self._keep_races(nxt, live)
        self.boards[live] = nxt[live]
        self.values[idx[live], self.ply[live]] = nv[live]
        for i in np.flatnonzero(done):
            self._reset(int(i))
        fresh = idx[done]
        if len(fresh):
            # Fresh games need the value of their first position: one value when all begin at
            # the opening, each its own where some begin at a race.
            from_opening = self.opening[fresh].all()
            firsts = self.boards[fresh[:1]] if from_opening else self.boards[fresh]
            self.values[fresh, 0] = self.ev.positions(firsts)
        return finished

    def _explore(self, best: np.ndarray, equity: np.ndarray, off: np.ndarray):
        """The row each game plays (``best`` unless it explores, see the class docstring) and
        whether it explored (played a move other than ``best``)."""
        if self.settings.epsilon <= 0:
            return best, np.zeros(self.n, np.bool_)
        explore = self.rng.random(self.n) < self.settings.epsilon
        u = self.rng.random(self.n)
        if self.settings.explore_top:
            pick = ranked_pick(equity, off, explore, self.settings.explore_top, u)
        else:
            pick = off[:-1] + (u * (off[1:] - off[:-1])).astype(np.int64)
        played = np.where(explore & (pick >= 0), pick, best)
        return played, played != best

    def _collect(self, games: np.ndarray, results: np.ndarray, finals: np.ndarray,
                 played: np.ndarray) -> FinishedGames:
        """Samples of ``games``: ``results[g]`` is the points the last mover won, -1 for a game
        ended by the bear-off database, 0 for one stopped at max_plies (dropped); ``finals[g]``
        the last mover's terminal target, ``played[g]`` the probabilities of the move it played
        (what a database-ended game counts as its result)."""
        boards, targets, res, lens = [], [], [], []
        for g in games:
            length = int(self.ply[g])
            points = int(results[g])
            if points == 0:  # stopped at max_plies: no outcome to learn from
                continue
            if points < 0:
                points = likely_points(played[g])  # may be negative: the last mover likely loses
            out = np.empty((length, 5), np.float32)
            lambda_returns(self.values[g], length, finals[g], self.settings.lam, out, self.explored[g])
            boards.append(self.hist[g, :length].copy())
            targets.append(out)
            # The last mover made ply length-1; the first player moved at even plies.
            res.append(points if (length - 1) % 2 == 0 else -points)
            lens.append(length)
        if not boards:
            return FinishedGames(np.empty((0, 2, 25), np.int8), np.empty((0, 5), np.float32),
                                 np.empty(0, np.int64), np.empty(0, np.int64))
        return FinishedGames(np.concatenate(boards), np.concatenate(targets),
                             np.array(res), np.array(lens))
