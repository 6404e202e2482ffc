"""Self-play's move choice with most contact moves ruled out by a cheap readout of the net's own
first hidden layer (``train.move_filter``).

A deepened net spends most of an evaluation after its first hidden layer (stage 8's 256 x 256
layer is about two thirds of it), and most of a position's legal moves are plainly worse than
its best few. So, for the contact afterstates of each position, the filter computes the first
hidden layer and a linear readout of it, and runs the rest of the net only on the ``keep``
best-scored ones (:meth:`bgnet.nn.fast.FastForward.filtered_children`); races (the race net is
small), bear-off positions and finished games are valued as always. The move played is the best
of those valued, by the net itself: the filter changes the choice only when the net's best move
was not among the ``keep``.

The readout is the least-squares fit (ridge) of the net's equity on its hidden layer, refitted
every :data:`REFIT_EVERY` steps on a full evaluation of that step's contact afterstates, so it
follows the net as it trains. What it costs in play, on the error-rate benchmark's contact
decisions with stage 8's net (``python3 benchmarks/bench_move_filter.py``): keeping 8 moves, the
choice differs from the net's own in 0.74 % of decisions, +0.066 millipoints a decision (of
5.79); 10 moves 0.55 % and +0.026; 6 moves 1.39 % and +0.089; 4 moves 3.2 % and +0.38.

:class:`FilteredOnePly` puts the same filter under a 1-ply search (the search targets of
``train.search_target`` when ``train.move_filter`` is on): for each of the 21 rolls the side on
roll plays the best of the moves the filter keeps.
"""
from __future__ import annotations

import numpy as np

from bgnet.bots.evaluator import afterstates_of, parent_rows
from bgnet.bots.gnubg_bots import money_equity
from bgnet.bots.search import mean_over_rolls, roll_afterstates, segment_argmax
from bgnet.nn.encode import race_mask
from bgnet.nn.probs import flip

REFIT_EVERY = 16  # steps between fits of the readout: the net moves little in 16 plies
FIT_ROWS = 2048  # contact afterstates a fit uses at most (evenly spaced over the step's)
RIDGE = 1e-3  # per row: keeps the fit well posed when hidden units saturate


class MoveFilter:
    """Values of a step's afterstates for the mover, most contact moves left unvalued.

    ``evaluator`` must have the compiled pass (``evaluator.fast``: a CPU net that
    :class:`bgnet.nn.fast.FastForward` runs); ``keep`` is the number of contact moves of each
    position the net values in full.
    """

    def __init__(self, evaluator, keep: int):
        if evaluator.fast is None:
            raise ValueError("train.move_filter needs the compiled forward pass (a CPU net with "
                             "sigmoid, tanh or relu hidden layers); set train.move_filter=0")
        if int(keep) < 1:
            raise ValueError(f"the move filter keeps at least one move; got {keep}")
        self.ev = evaluator
        self.fast = evaluator.fast
        self.keep = int(keep)
        self.coef: np.ndarray | None = None  # readout: hidden @ coef[:-1] + coef[-1]
        self.steps = 0

    def state(self) -> dict:
        """The readout and the step count (when the next refit falls), for a checkpoint."""
        return {"coef": None if self.coef is None else self.coef.copy(), "steps": int(self.steps)}

    def restore(self, state: dict) -> None:
        coef = state.get("coef")
        self.coef = None if coef is None else np.asarray(coef, np.float32)
        self.steps = int(state["steps"])

    def values(self, after: np.ndarray, parents: np.ndarray, off: np.ndarray) -> np.ndarray:
        """Probabilities for the mover of every afterstate (rows of position ``i`` at
        ``off[i]:off[i + 1]``, as :func:`bgnet.engine.movegen.generate_batch` writes them), NaN
        for the moves the filter ruled out."""
        parent_of = parent_rows(off)
        is_race = race_mask(after)
        contact = np.flatnonzero(~is_race)
        refit = self.steps % REFIT_EVERY == 0
        self.steps += 1
        coef = self.coef
        if coef is None or refit or len(contact) == 0:
            probs = afterstates_of(self.ev, after, parents, parent_of)
            if len(contact):
                self.coef = self._fit(after, parents, parent_of, contact, probs)
            return probs
        # The readout values the side on roll of the afterstate: the mover wants it low (the
        # intercept coef[-1] ranks nothing).
        probs, _ = self.fast.filtered_children(parents, parent_of, after, contact, off,
                                               -coef[:-1], self.keep)
        probs = flip(probs)
        races = np.flatnonzero(is_race)
        if len(races):  # the race net, the bear-off database and finished games, as always
            probs[races] = afterstates_of(self.ev, after[races], parents, parent_of[races])
        return probs

    def _fit(self, after, parents, parent_of, contact, probs) -> np.ndarray:
        """The readout fitted on (a sample of) this step's contact afterstates, fully valued."""
        rows = contact[np.linspace(0, len(contact) - 1, min(len(contact), FIT_ROWS)).astype(np.int64)]
        hidden = self.fast.hidden_children(parents, parent_of, after, rows).astype(np.float64)
        x = np.column_stack([hidden, np.ones(len(rows))])
        y = -money_equity(probs[rows]).astype(np.float64)  # the side on roll's equity
        gram = x.T @ x
        gram[np.diag_indices_from(gram)] += RIDGE * len(rows)
        return np.linalg.solve(gram, x.T @ y).astype(np.float32)


def valued_equity(values: np.ndarray) -> np.ndarray:
    """The money equity of each valued afterstate, -inf for the ones ruled out (so that
    :func:`bgnet.bots.simple.segment_argmax` never picks them)."""
    eq = money_equity(np.nan_to_num(values, nan=0.0))
    eq[np.isnan(values[:, 0])] = -np.inf
    return eq


class FilteredOnePly:
    """1-ply values with the move filter under them: for each position about to roll, the 21
    rolls averaged, the side on roll playing the best (by the net) of the ``keep`` contact moves
    of each roll that the readout ranks best. With ``keep`` at least the most legal moves a roll
    has, these are :class:`bgnet.bots.net.NetBot`'s 1-ply values.

    It has its own :class:`MoveFilter` (its own readout, refitted every :data:`REFIT_EVERY`
    calls on a full evaluation), so a search never moves the readout of the self-play beside it.
    """

    def __init__(self, evaluator, keep: int):
        self.filter = MoveFilter(evaluator, keep)

    def evaluate(self, boards: np.ndarray, ply: int = 1) -> np.ndarray:
        """Probabilities for the side on roll of each of ``boards``, at 1-ply (the only depth)."""
        if ply != 1:
            raise ValueError(f"the filtered search looks 1 ply ahead; got ply={ply}")
        parents, after, off = roll_afterstates(boards)
        probs = self.filter.values(after, parents, off)
        return mean_over_rolls(probs[segment_argmax(valued_equity(probs), off)])
