"""The bear-off database: race probabilities of positions where both sides are bearing off.

A *bear-off position* has every checker of both sides on its own home points 1..6 (nobody on the
bar, so no contact is possible) and at least one checker of each side left (the game is not over).

* Small positions (both sides at most ``k`` checkers): the exact cubeless probability that the
  side on roll wins, from the two-sided table (no gammon is possible: each side has borne off).
* Others: the one-sided approximation. The side on roll needing ``n`` turns wins if the opponent
  needs at least ``n``; it wins a gammon if the opponent still has all 15 checkers and cannot take
  the first one off in fewer than ``n`` turns (the first-off distribution), and loses one if it
  has 15 and cannot take one off before the opponent finishes. The two sides' turn counts are
  treated as independent, each side playing its own table's policy; no backgammon is possible.

Probabilities are in bgnet's order (win, win gammon, win backgammon, lose gammon, lose
backgammon), gammons included in wins, for the side on roll (``board[1]``).
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from bgnet.bearoff.build import FULL_START, TURNS, build_one_sided, build_two_sided
from bgnet.bearoff.cache import CacheError, load_or_build
from bgnet.bearoff.index import BINOM, index_of, num_positions, rank
from bgnet.nn.probs import equity, flip  # torch-free

DEFAULT_K = 7  # two-sided table: 1716 x 1716 positions, about 1 s to build, 12 MB in memory
MAX_K = 10  # 8008 x 8008 positions (256 MB): beyond that the table is not worth its size


# ---------------------------------------------------------------------------------------------
# Which boards are bear-off positions


@njit(cache=True)
def side_ok(board, s) -> bool:
    total = 0
    for i in range(25):
        c = board[s, i]
        if c < 0 or (i >= 6 and c != 0):
            return False
        total += c
    return 1 <= total <= 15


@njit(cache=True)
def _is_bearoff(boards):
    out = np.empty(boards.shape[0], np.bool_)
    for n in range(boards.shape[0]):
        out[n] = side_ok(boards[n], 0) and side_ok(boards[n], 1)
    return out


def _boards(boards) -> np.ndarray:
    b = np.asarray(boards)
    if b.ndim < 2 or b.shape[-2:] != (2, 25):
        raise ValueError(f"boards have shape [N, 2, 25] (or (2, 25) for one); got {b.shape}")
    return np.ascontiguousarray(b, np.int8).reshape(-1, 2, 25)


def is_bearoff(boards) -> np.ndarray:
    """bool[N]: which boards are bear-off positions (both sides' checkers all on their own points
    1..6, none on the bar, each side with 1 to 15 checkers).

    >>> from bgnet.engine.board import start_position
    >>> b = np.zeros((2, 2, 25), np.int8); b[:, :, 0] = 1
    >>> is_bearoff(np.concatenate([b, start_position()[None]])).tolist()
    [True, True, False]
    """
    return _is_bearoff(_boards(boards))


# ---------------------------------------------------------------------------------------------
# Probabilities


@njit(cache=True)
def _rank_side(board, s, scratch, binom):
    for i in range(6):
        scratch[i] = board[s, i]
    return rank(scratch, binom)


@njit(cache=True)
def _one_sided_row(me, opp, dist, first, full_start, out):
    """One-sided race probabilities of the side on roll with position ``me`` against ``opp``."""
    turns = dist.shape[1]
    pm = dist[me]
    po = dist[opp]
    # win = sum_n P_me[n] P(opp needs >= n); the opponent's tail is summed from the top down.
    win = 0.0
    tail = 0.0
    for n in range(turns - 1, 0, -1):
        tail += po[n]
        win += pm[n] * tail
    wg = 0.0
    if opp >= full_start:  # opponent has all 15 checkers: gammoned if it cannot get one off first
        fo = first[opp - full_start]
        tail = 0.0
        for n in range(turns - 1, 0, -1):
            tail += fo[n]
            wg += pm[n] * tail
    lg = 0.0
    if me >= full_start:  # I am gammoned if my first checker comes off after the opponent ends
        fm = first[me - full_start]
        tail = 0.0
        for m in range(turns - 2, 0, -1):
            tail += fm[m + 1]
            lg += po[m] * tail
    win = min(win, 1.0)  # a sum of float32 products can pass 1 by a few 1e-8: 1 - win must not go negative
    out[0] = win
    out[1] = min(wg, win)
    out[2] = 0.0
    out[3] = min(lg, 1.0 - win)
    out[4] = 0.0


@njit(cache=True)
def probabilities_kernel(boards, dist, first, table, binom, full_start, exact, out):
    scratch = np.empty(6, np.int64)
    nk = table.shape[0]
    for n in range(boards.shape[0]):
        me = _rank_side(boards[n], 1, scratch, binom)
        opp = _rank_side(boards[n], 0, scratch, binom)
        if exact and me < nk and opp < nk:
            out[n, 0] = table[me, opp]
            for j in range(1, 5):
                out[n, j] = 0.0
        else:
            _one_sided_row(me, opp, dist, first, full_start, out[n])


# ---------------------------------------------------------------------------------------------
# The database


def _check_one_sided(a: dict) -> None:
    n, nf = num_positions(), num_positions() - FULL_START
    shapes = {"dist": (n, TURNS), "first": (nf, TURNS), "mean": (n,), "first_mean": (nf,)}
    for key, shape in shapes.items():
        if key not in a:
            raise CacheError(f"array '{key}' is missing")
        if a[key].shape != shape or a[key].dtype.kind != "f":
            raise CacheError(f"array '{key}' has shape {a[key].shape} {a[key].dtype}; expected {shape} floats")
        if not np.all(np.isfinite(a[key])):
            raise CacheError(f"array '{key}' holds non-finite values")
    for key in ("dist", "first"):
        d = a[key]
        if d.min() < 0 or np.abs(d.sum(axis=1) - 1.0).max() > 1e-4:
            raise CacheError(f"rows of '{key}' are not probability distributions")


def _two_sided_checker(k: int):
    def check(a: dict) -> None:
        n = num_positions(k)
        t = a.get("table")
        if t is None or t.shape != (n, n) or t.dtype.kind != "f":
            raise CacheError(f"array 'table' is missing or not float[{n}, {n}]")
        if not np.all(np.isfinite(t)) or t.min() < 0 or t.max() > 1:
            raise CacheError("array 'table' holds values outside [0, 1]")
    return check


def _build_one_sided_arrays() -> dict:
    t = build_one_sided()
    return {"dist": t["dist"].astype(np.float32), "first": t["first"].astype(np.float32),
            "mean": t["mean"], "first_mean": t["first_mean"]}


def _equity(p) -> float:
    """Cubeless money equity of probabilities ``p`` (win, wg, wbg, lg, lbg)."""
    return float(equity(np.asarray(p, np.float64)))


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= MAX_K:
        raise ValueError(f"the two-sided table covers 0 to {MAX_K} checkers a side; got k={k!r}")
    return int(k)


class BearoffDatabase:
    """One-sided tables for every bear-off position, and the exact two-sided table for positions
    of at most ``k`` checkers a side (``k = 0``: none). Loaded from the cache or built on
    construction (see :mod:`bgnet.bearoff.cache`).

    >>> db = get_database()  # the shared instance, k = DEFAULT_K
    >>> b = np.zeros((2, 25), np.int8); b[1, 0] = 1; b[0, 5] = 1
    >>> db.probabilities(b[None]).round(3).tolist()  # one checker on my 1-point: I win at once
    [[1.0, 0.0, 0.0, 0.0, 0.0]]
    >>> float(db.expected_turns([0, 0, 0, 0, 0, 1]))  # one on the 6-point: 27 rolls of 36 take it off
    1.25
    """

    def __init__(self, k: int = DEFAULT_K):
        self.k = _check_k(k)
        one = load_or_build("bearoff-onesided", _build_one_sided_arrays, _check_one_sided)
        self.dist = np.ascontiguousarray(one["dist"], np.float32)
        self.first = np.ascontiguousarray(one["first"], np.float32)
        self.mean = np.ascontiguousarray(one["mean"], np.float64)
        self.first_mean = np.ascontiguousarray(one["first_mean"], np.float64)
        if self.k > 0:
            two = load_or_build(f"bearoff-twosided-k{self.k}",
                                lambda: {"table": build_two_sided(self.k).astype(np.float32)},
                                _two_sided_checker(self.k))
            self.table = np.ascontiguousarray(two["table"], np.float32)
        else:
            self.table = np.zeros((0, 0), np.float32)

    # -- one side ------------------------------------------------------------------------------
    def turn_distribution(self, side_home_counts) -> np.ndarray:
        """float32[32]: P(exactly n turns to bear off everything), n = 0..31, under the policy
        that minimises the expected number of turns."""
        return self.dist[index_of(side_home_counts)].copy()

    def expected_turns(self, side_home_counts) -> float | np.ndarray:
        """Expected number of turns to bear off everything (each move minimising it)."""
        return self.mean[index_of(side_home_counts)]

    def first_off_distribution(self, side_home_counts) -> np.ndarray:
        """float32[32]: P(the first checker comes off on turn n) for a position with all 15
        checkers on the board, each move minimising the expected turns to get one off."""
        i = np.asarray(index_of(side_home_counts))
        if np.any(i < FULL_START):
            raise ValueError("the first-off distribution is kept for positions with all 15 checkers on the board")
        return self.first[i - FULL_START].copy()

    # -- two sides -----------------------------------------------------------------------------
    def probabilities(self, boards, exact: bool = True) -> np.ndarray:
        """float32[N, 5] for the side on roll of each bear-off position (see the module docstring).

        ``exact=False`` uses the one-sided approximation even where the two-sided table applies.
        Raises ValueError if a board is not a bear-off position (check with :func:`is_bearoff`).
        """
        b = _boards(boards)
        ok = _is_bearoff(b)
        if not ok.all():
            bad = int(np.argmin(ok))
            raise ValueError(f"board {bad} is not a bear-off position (every checker of both sides "
                             f"on its own points 1..6, 1 to 15 a side): {b[bad].tolist()}")
        out64 = np.empty((len(b), 5), np.float64)
        probabilities_kernel(b, self.dist, self.first, self.table, BINOM, FULL_START, bool(exact), out64)
        return out64.astype(np.float32)

    def mover_probabilities(self, after) -> np.ndarray:
        """float32[N, 5] for the MOVER of bear-off afterstates ``[opponent, mover_after]`` (as
        :func:`bgnet.engine.movegen.generate_batch` writes them)."""
        return flip(self.probabilities(_boards(after)[:, ::-1]))

    def best_move(self, board, d1: int, d2: int):
        """The legal move of ``board`` (a bear-off position, side on roll in ``board[1]``) with
        dice ``d1, d2`` that the database likes best (highest cubeless money equity):
        ``(afterstate int8[2, 25], steps int8[4, 2])`` as :func:`bgnet.engine.movegen.generate`
        gives them."""
        from bgnet.engine.board import game_result
        from bgnet.engine.movegen import generate

        b = _boards(board)[0]
        if not _is_bearoff(b[None])[0]:
            raise ValueError(f"not a bear-off position: {b.tolist()}")
        after, steps = generate(b, int(d1), int(d2))
        eq = np.empty(len(after))
        for j, a in enumerate(after):
            r = game_result(a)
            eq[j] = r if r else _equity(self.mover_probabilities(a[None])[0])
        j = int(np.argmax(eq))
        return after[j], steps[j]


# ---------------------------------------------------------------------------------------------
# The shared instance


_DEFAULT: dict[int, BearoffDatabase] = {}
_LOCK = threading.Lock()


def get_database(k: int = DEFAULT_K) -> BearoffDatabase:
    """The process's database with a ``k``-checker two-sided table, loaded (or built) on first use."""
    k = _check_k(k)
    with _LOCK:
        db = _DEFAULT.get(k)
        if db is None:
            db = _DEFAULT[k] = BearoffDatabase(k)
    return db


def loaded_database(k: int = DEFAULT_K) -> BearoffDatabase | None:
    """The process's database with a ``k``-checker table if it is loaded already, else None
    (nothing is loaded or built)."""
    return _DEFAULT.get(k)


def bearoff_probabilities(boards) -> np.ndarray:
    """float32[N, 5] for the side on roll of each bear-off position, from the shared database:
    exact for small positions, the one-sided approximation otherwise.

    >>> b = np.zeros((1, 2, 25), np.int8); b[0, 1, 5] = 2; b[0, 0, 0] = 1
    >>> p = bearoff_probabilities(b)[0]   # two on my 6-point against one on the 1-point:
    >>> round(float(p[0]), 4)             # I need a double of 3s or more
    0.1111
    """
    return get_database().probabilities(boards)


def one_sided_probabilities(boards) -> np.ndarray:
    """Like :func:`bearoff_probabilities`, always from the one-sided approximation."""
    return get_database().probabilities(boards, exact=False)
