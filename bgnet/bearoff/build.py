"""Building the bear-off tables from bgnet's own move generator.

Every move is produced by :func:`bgnet.engine.movegen.generate_batch` on a full board: the side
bearing off has its checkers on its points 1..6 and the opponent's 15 checkers all sit on the
opponent's own 1-point, far behind, where they can neither block nor be hit. The bear-off rules
(the most dice must be played, the higher die when only one can, a die larger than the highest
point bearing off from the highest point) are therefore the engine's, which is checked against
GNU Backgammon.

A move always lowers the pip count, so a position's value only depends on positions with fewer
pips: the tables are filled one pip count at a time, all positions of a pip count in one batch.

* :func:`build_one_sided`: for every one-sided position, the distribution of the number of turns
  needed to bear everything off when each move minimises the expected number of turns; and, for
  the positions with all 15 checkers on the board, the distribution of the number of turns until
  the first checker is off when each move minimises that expectation (it decides gammons).
* :func:`build_two_sided`: the exact probability that the side on roll wins, with both sides
  playing to win, for every pair of positions of at most ``k`` checkers each.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.bearoff.index import BINOM, MAX_CHECKERS, all_positions, num_positions, rank
from bgnet.engine.movegen import ROLL_WEIGHTS, ROLLS, generate_batch

# Turn-count distributions hold P[n] for n = 0..TURNS-1. Fifteen checkers on the 6-point need 18
# turns at most under the minimising policy; the slack is checked when the table is built.
TURNS = 32

# The 21 distinct rolls and their probabilities.

# Index of the first position with all 15 checkers on the board: the first-off table starts there.
FULL_START = num_positions(MAX_CHECKERS - 1)
PIP_WEIGHTS = np.arange(1, 7, dtype=np.int64)


def boards_for(counts: np.ndarray) -> np.ndarray:
    """Full boards (side on roll = ``counts`` on its points 1..6; the opponent's 15 checkers on
    the opponent's own 1-point, out of reach), one per row of ``counts`` (int[N, 6])."""
    b = np.zeros((len(counts), 2, 25), np.int8)
    b[:, 1, :6] = counts
    b[:, 0, 0] = MAX_CHECKERS
    return b


def successor_batch(idx: np.ndarray, positions: np.ndarray):
    """The legal moves of positions ``idx`` under each of the 21 rolls, from the engine.

    Returns ``(succ int64[M], offsets int64[len(idx) * 21 + 1])``: the one-sided indices of the
    mover's positions after each move of (position ``idx[k]``, roll ``r``) are
    ``succ[offsets[21 k + r]:offsets[21 k + r + 1]]``.
    """
    boards = np.repeat(boards_for(positions[idx]), len(ROLLS), axis=0)
    dice = np.tile(ROLLS, (len(idx), 1))
    after, _, offsets = generate_batch(boards, dice)
    return _rank_movers(after, BINOM), offsets


@njit(cache=True)
def _rank_movers(after, binom):
    out = np.empty(after.shape[0], np.int64)
    counts = np.empty(6, np.int64)
    for j in range(after.shape[0]):
        for i in range(6):
            counts[i] = after[j, 1, i]
        out[j] = rank(counts, binom)
    return out


def pip_levels(positions: np.ndarray):
    """Positions sorted by pip count, and where each pip count starts in that order."""
    pips = positions.astype(np.int64) @ PIP_WEIGHTS
    order = np.argsort(pips, kind="stable")
    starts = np.searchsorted(pips[order], np.arange(int(pips.max()) + 2))
    return order, starts


# ---------------------------------------------------------------------------------------------
# One-sided


@njit(cache=True)
def _one_sided_level(idx, succ, offsets, weights, full_start, dist, mean, fdist, fmean):
    """Fill the tables for the positions ``idx`` (all of one pip count) from their moves.

    ``dist[p, n]``: P(position p needs exactly n turns), moves minimising ``mean``; ``fdist``,
    ``fmean``: the same for the first checker off, rows ``p - full_start``. Returns the
    probability mass pushed past the last turn (zero unless TURNS is too small).
    """
    turns = dist.shape[1]
    lost = 0.0
    nrolls = weights.shape[0]
    for k in range(idx.shape[0]):
        p = idx[k]
        full = p >= full_start
        m = 0.0
        fm = 0.0
        for r in range(nrolls):
            w = weights[r]
            lo = offsets[k * nrolls + r]
            hi = offsets[k * nrolls + r + 1]
            # Move that minimises the expected number of turns still needed (first one on ties).
            best = succ[lo]
            for j in range(lo + 1, hi):
                if mean[succ[j]] < mean[best]:
                    best = succ[j]
            m += w * mean[best]
            for n in range(turns - 1):
                dist[p, n + 1] += w * dist[best, n]
            lost += w * dist[best, turns - 1]
            if full:
                # A move that bears a checker off finishes this count (value 0); otherwise the
                # position after it still has 15 checkers and a first-off expectation.
                fbest = -1
                fval = np.inf
                for j in range(lo, hi):
                    s = succ[j]
                    v = 0.0 if s < full_start else fmean[s - full_start]
                    if v < fval:
                        fval = v
                        fbest = s
                fm += w * fval
                if fbest < full_start:
                    fdist[p - full_start, 1] += w
                else:
                    q = fbest - full_start
                    for n in range(turns - 1):
                        fdist[p - full_start, n + 1] += w * fdist[q, n]
                    lost += w * fdist[q, turns - 1]
        mean[p] = 1.0 + m
        if full:
            fmean[p - full_start] = 1.0 + fm
    return lost


def build_one_sided(progress=None) -> dict:
    """The one-sided tables (float64), built with the engine's moves.

    Returns ``{"dist": [54264, TURNS], "mean": [54264], "first": [15504, TURNS],
    "first_mean": [15504]}``; ``first`` row ``i`` belongs to position ``FULL_START + i``.
    ``progress``, if given, is called with the fraction done.
    """
    positions = all_positions()
    n = len(positions)
    dist = np.zeros((n, TURNS))
    mean = np.zeros(n)
    fdist = np.zeros((n - FULL_START, TURNS))
    fmean = np.zeros(n - FULL_START)
    dist[0, 0] = 1.0  # nothing left: zero turns
    order, starts = pip_levels(positions)
    for pip in range(1, len(starts) - 1):
        idx = order[starts[pip]:starts[pip + 1]]
        if len(idx) == 0:
            continue
        succ, offsets = successor_batch(idx, positions)
        lost = _one_sided_level(idx, succ, offsets, ROLL_WEIGHTS, FULL_START, dist, mean, fdist, fmean)
        if lost > 1e-12:
            raise RuntimeError(f"bear-off turn distributions need more than {TURNS} entries")
        if progress is not None:
            progress(pip / (len(starts) - 2))
    return {"dist": dist, "mean": mean, "first": fdist, "first_mean": fmean}


# ---------------------------------------------------------------------------------------------
# Two-sided


@njit(cache=True)
def _two_sided(order, starts, succ, offsets, weights, table):
    """Exact P(side on roll wins) for every pair (a, b) of small positions, a on roll.

    ``table[a, b] = 1 - sum_r w_r min_{a'} table[b, a']`` over the moves a -> a' of roll r, filled
    in order of a's pips + b's pips (every term on the right has fewer). ``table[a, 0] = 0``: the
    side not on roll has already borne off; ``table[0, b] = 1`` is never read by a real position.
    """
    nrolls = weights.shape[0]
    maxpip = starts.shape[0] - 2
    for a in range(table.shape[0]):
        table[a, 0] = 0.0
    for b in range(1, table.shape[0]):
        table[0, b] = 1.0
    for total in range(2, 2 * maxpip + 1):
        for pa in range(max(1, total - maxpip), min(maxpip, total - 1) + 1):
            pb = total - pa
            for ia in range(starts[pa], starts[pa + 1]):
                a = order[ia]
                for ib in range(starts[pb], starts[pb + 1]):
                    b = order[ib]
                    acc = 0.0
                    for r in range(nrolls):
                        lo = offsets[a * nrolls + r]
                        hi = offsets[a * nrolls + r + 1]
                        best = table[b, succ[lo]]
                        for j in range(lo + 1, hi):
                            v = table[b, succ[j]]
                            if v < best:
                                best = v
                        acc += weights[r] * best
                    # The roll weights sum to 1 only up to rounding: keep values inside [0, 1].
                    table[a, b] = min(1.0, max(0.0, 1.0 - acc))


def build_two_sided(k: int) -> np.ndarray:
    """float64[C(k+6, 6), C(k+6, 6)]: exact cubeless P(win) of the side on roll (row) against the
    side not on roll (column), both with at most ``k`` checkers, both playing to win."""
    n = num_positions(k)
    positions = all_positions()[:n]
    succ, offsets = successor_batch(np.arange(n), positions)
    order, starts = pip_levels(positions)
    table = np.empty((n, n))
    if n > 1:
        _two_sided(order, starts, succ, offsets, ROLL_WEIGHTS, table)
    else:
        table[0, 0] = 0.0
    return table
