"""Positions from self-play, for tests, verification and benchmarks.

A *chooser* picks one of the legal afterstates; the default picks uniformly at random. Other
choosers (pubeval, GNU Backgammon) live with the code that has those programs, so the engine
stays free of them.

>>> boards, dice = sample_positions(50, seed=1)
>>> boards.shape, dice.shape
((50, 2, 25), (50, 2))
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from bgnet.engine.board import game_result, start_position
from bgnet.engine.movegen import generate

# chooser(board, d1, d2, afterstates, steps, rng) -> index into afterstates
Chooser = Callable[[np.ndarray, int, int, np.ndarray, np.ndarray, np.random.Generator], int]


def random_chooser(board, d1, d2, after, steps, rng) -> int:
    return int(rng.integers(len(after)))


def apply_steps(board: np.ndarray, steps) -> np.ndarray:
    """The afterstate ``[opponent, mover_after]`` of playing (from, to) steps, gnubg numbering
    from the mover's view (25 = bar, 0 = off). Only the points are checked, not the dice: use it
    for moves that a rules engine or a reference program produced."""
    pairs = np.full((1, 4, 2), -1, np.int64)
    for k, (frm, to) in enumerate(steps):
        if frm < 0:
            break
        pairs[0, k] = frm, to
    return play_steps(np.ascontiguousarray(board, np.int8)[None], pairs)[0]


@njit(cache=True)
def play_steps(boards, steps):
    """Afterstates ``[opponent, mover_after]`` of playing ``steps[n]`` on ``boards[n]``.

    Steps are (from, to) pairs in GNU Backgammon's numbering from the mover's view (25 = bar,
    0 = off), padded with -1, one pair per die, as the reference programs report them. A blot on
    the landing point is hit (sent to the opponent's bar).
    """
    n = boards.shape[0]
    out = boards.copy()
    for r in range(n):
        for k in range(steps.shape[1]):
            frm = steps[r, k, 0]
            to = steps[r, k, 1]
            if frm < 0:
                break
            if frm < 1 or frm > 25 or to < 0 or to > 24 or out[r, 1, frm - 1] <= 0:
                raise ValueError("a reference program reported a step from an empty or unknown point")
            out[r, 1, frm - 1] -= 1
            if to > 0:
                out[r, 1, to - 1] += 1
                j = 24 - to  # my index to - 1 is the opponent's index 23 - (to - 1)
                if out[r, 0, j] == 1:
                    out[r, 0, j] = 0
                    out[r, 0, 24] += 1
    return out


def sample_positions(n: int, seed: int = 0, chooser: Chooser = random_chooser,
                     every: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``n`` positions (side on roll in ``board[1]``) with their dice, from self-play games.

    ``every`` keeps one position in that many plies, to spread samples over more games.
    """
    rng = np.random.default_rng(seed)
    boards = np.empty((n, 2, 25), np.int8)
    dice = np.empty((n, 2), np.int64)
    k = 0
    ply = 0
    board = start_position()
    while k < n:
        d1, d2 = (int(x) for x in rng.integers(1, 7, 2))
        if ply % every == 0:
            boards[k], dice[k] = board, (d1, d2)
            k += 1
        ply += 1
        after, steps = generate(board, d1, d2)
        if len(after) == 0:
            board = board[::-1].copy()
            continue
        nxt = after[chooser(board, d1, d2, after, steps, rng)]
        if game_result(nxt):
            board = start_position()
        else:
            board = nxt[::-1].copy()
    return boards, dice
