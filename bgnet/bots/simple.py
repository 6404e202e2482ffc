"""Bots that need no reference program: a uniform random player, and a greedy player built on any
function that values afterstates (the shape every net bot takes).

Both work on whole batches: one call to the compiled move generator for every position, one call
to the value function for every legal afterstate of every position, and a compiled per-position
argmax over the flat result (:func:`bgnet.bots.search.segment_argmax`).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from bgnet.bots.base import Bot
from bgnet.bots.search import segment_argmax
from bgnet.engine.board import game_result
from bgnet.engine.movegen import generate_batch


@njit(cache=True)
def terminal_points(after):
    """Points the mover (``after[:, 1]``) has won for each afterstate: 0 while the game goes on,
    1 / 2 / 3 for a single game, gammon or backgammon."""
    out = np.zeros(after.shape[0], np.int8)
    for r in range(after.shape[0]):
        out[r] = game_result(after[r])
    return out


def as_batch(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    if boards.ndim != 3 or boards.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (N, 2, 25); got {boards.shape}")
    if dice.shape != (len(boards), 2):
        raise ValueError(f"dice must have shape ({len(boards)}, 2) to match the boards; got {dice.shape}")
    return boards, dice


class RandomBot(Bot):
    """Plays a legal move chosen uniformly at random among the distinct afterstates."""

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.name = "random" if seed is None else f"random:{seed}"

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, contexts=None,
                     ply: int | None = None):
        self.check_fixed_ply(ply)
        boards, dice = as_batch(boards, dice)
        after, steps, offsets = generate_batch(boards, dice)
        counts = np.diff(offsets)
        pick = offsets[:-1] + (self.rng.random(len(counts)) * counts).astype(np.int64)
        return after[pick], steps[pick]


# value_fn(afterstates int8[M, 2, 25]) -> float[M]: the mover's cubeless equity (or any score that
# orders moves the same way) for afterstates written [opponent, mover_after].
ValueFn = Callable[[np.ndarray], np.ndarray]


class GreedyBot(Bot):
    """Plays the afterstate a value function likes best: the 1-ply search of a TD-Gammon-style net.

    Finished games are scored by the rules (1, 2 or 3 points for the mover), not by the value
    function, so a net never has to value a position with no checkers of the mover left.
    """

    def __init__(self, value_fn: ValueFn, name: str = "greedy"):
        self.value_fn = value_fn
        self.name = name

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, contexts=None,
                     ply: int | None = None):
        self.check_fixed_ply(ply)
        boards, dice = as_batch(boards, dice)
        after, steps, offsets = generate_batch(boards, dice)
        values = np.asarray(self.value_fn(after), dtype=np.float64).reshape(-1)
        if len(values) != len(after):
            raise ValueError(
                f"{self.name}: the value function returned {len(values)} values for {len(after)} afterstates"
            )
        won = terminal_points(after)
        values = np.where(won > 0, won.astype(np.float64), values)
        pick = segment_argmax(values, offsets)
        return after[pick], steps[pick]
