"""Ranking of one side's bear-off positions: up to 15 checkers on its six home points.

A position is six counts ``(c1, ..., c6)``, checkers on the side's own points 1..6 (board indices
0..5), with ``c1 + ... + c6 <= 15``. There are C(21, 6) = 54,264 of them. They are numbered so
that positions with fewer checkers come first: every position with ``t`` checkers has a smaller
index than every position with ``t + 1``. The first C(k + 6, 6) indices are therefore exactly the
positions of at most ``k`` checkers, so a table over small positions is a prefix of the full one.

Within one checker count ``t``, a position is a way of cutting ``t`` checkers into six runs: write
the checkers as ``t`` stars and put five bars between the runs; the five bar places among the
``t + 5`` symbols are a 5-subset, ranked by the combinatorial number system
(rank = sum over the bars of C(place_j, j)).

>>> index_of([0, 0, 0, 0, 0, 0]), index_of([0, 0, 0, 0, 0, 1]), index_of([1, 0, 0, 0, 0, 0])
(0, 1, 6)
>>> position_of(index_of([3, 0, 2, 0, 0, 1])).tolist()
[3, 0, 2, 0, 0, 1]
>>> num_positions(15), num_positions(6)
(54264, 924)
"""
from __future__ import annotations

import numpy as np
from numba import njit

POINTS = 6
MAX_CHECKERS = 15


def _binomials(n: int) -> np.ndarray:
    c = np.zeros((n + 1, n + 1), np.int64)
    for i in range(n + 1):
        c[i, 0] = 1
        for j in range(1, i + 1):
            c[i, j] = c[i - 1, j - 1] + c[i - 1, j]
    return c


# C[n, k] for n, k <= 21 + 6: enough for every count used here.
BINOM = _binomials(MAX_CHECKERS + 2 * POINTS)


def num_positions(checkers: int = MAX_CHECKERS) -> int:
    """How many positions have at most ``checkers`` checkers on the six home points."""
    if isinstance(checkers, bool) or not isinstance(checkers, (int, np.integer)) or not 0 <= checkers <= MAX_CHECKERS:
        raise ValueError(f"checkers must be a whole number from 0 to 15; got {checkers!r}")
    return int(BINOM[checkers + POINTS, POINTS])


@njit(cache=True)
def rank(counts, binom) -> int:
    """Index of one position ``counts`` (int[6], already checked). See the module docstring."""
    t = 0
    for j in range(6):
        t += counts[j]
    r = binom[t - 1 + 6, 6] if t > 0 else 0  # positions with fewer checkers
    place = -1
    for j in range(5):  # the bar after run j sits counts[j] + 1 places after the previous bar
        place += counts[j] + 1
        r += binom[place, j + 1]
    return r


@njit(cache=True)
def rank_many(counts, binom):
    """Indices of ``counts`` (int[N, 6])."""
    out = np.empty(counts.shape[0], np.int64)
    for i in range(counts.shape[0]):
        out[i] = rank(counts[i], binom)
    return out


@njit(cache=True)
def unrank_all(checkers, binom):
    """int8[C(checkers + 6, 6), 6]: the position of every index, in index order."""
    n = binom[checkers + 6, 6]
    out = np.zeros((n, 6), np.int8)
    # Enumerate every composition and place it at its rank: simpler than inverting the ranking.
    c = np.zeros(6, np.int64)
    while True:
        out[rank(c, binom)] = c
        # Next composition with total <= checkers: an odometer over c, limited by the total.
        j = 0
        while j < 6:
            c[j] += 1
            if c.sum() <= checkers:
                break
            c[j] = 0
            j += 1
        if j == 6:
            break
    return out


_ALL: np.ndarray | None = None


def all_positions() -> np.ndarray:
    """int8[54264, 6]: every one-sided position, row ``i`` being ``position_of(i)``."""
    global _ALL
    if _ALL is None:
        _ALL = unrank_all(MAX_CHECKERS, BINOM)
        _ALL.setflags(write=False)
    return _ALL


def index_of(side_home_counts) -> int | np.ndarray:
    """Index of a side's home-board counts (checkers on its points 1..6), or of each row of an
    ``[N, 6]`` array (then an int64 array).

    >>> index_of([[0, 0, 0, 0, 0, 0], [15, 0, 0, 0, 0, 0]]).tolist()
    [0, 54263]
    """
    a = np.asarray(side_home_counts)
    if a.ndim not in (1, 2) or a.shape[-1] != POINTS:
        raise ValueError(f"home-board counts have 6 entries (points 1..6), or shape [N, 6]; got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        if not np.all(np.mod(a, 1) == 0):
            raise ValueError("checker counts must be whole numbers")
    a = a.astype(np.int64).reshape(-1, POINTS)
    if a.size and a.min() < 0:
        raise ValueError(f"checker counts cannot be negative; got {a[np.argmin(a.min(axis=1))].tolist()}")
    totals = a.sum(axis=1)
    if a.size and totals.max() > MAX_CHECKERS:
        bad = int(np.argmax(totals))
        raise ValueError(f"a side has at most 15 checkers; got {int(totals[bad])} in {a[bad].tolist()}")
    out = rank_many(np.ascontiguousarray(a), BINOM)
    return int(out[0]) if np.ndim(side_home_counts) == 1 else out


def position_of(index) -> np.ndarray:
    """int8[6] counts of the position at ``index`` (or int8[N, 6] for an array of indices).

    >>> position_of(54263).tolist()
    [15, 0, 0, 0, 0, 0]
    """
    i = np.asarray(index)
    if not np.issubdtype(i.dtype, np.integer):
        raise ValueError(f"an index is a whole number; got {index!r}")
    n = num_positions()
    if i.size and (i.min() < 0 or i.max() >= n):
        raise ValueError(f"bear-off indices run from 0 to {n - 1}; got {index!r}")
    return all_positions()[i].copy()
