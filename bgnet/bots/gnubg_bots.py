"""The reference opponent through GNU Backgammon's Python module ``gnubg_nn``: GNU Backgammon's
own network at a chosen search depth.

``gnubg_nn`` is an optional dependency (``pip install 'bgnet[ref]'``) and is imported only when
this bot is made. The program reports its move as (from, to) steps; the afterstate is obtained by
playing those steps on the board (compiled, for the whole batch at once). Tesauro's pubeval, the
other classic yardstick, needs no package: :mod:`bgnet.bots.pubeval`.
"""
from __future__ import annotations

import numpy as np

from bgnet.bots.base import Bot, board_batch
from bgnet.engine.sampling import play_steps  # noqa: F401  (re-exported)
from bgnet.nn.probs import equity

MISSING_REFERENCE = (
    "the gnubg opponents need GNU Backgammon's Python packages: pip install 'bgnet[ref]'"
)
MAX_GNUBG_PLY = 3  # deeper searches take seconds per move through gnubg_nn
_PAD = (-1,) * 8  # four (from, to) steps at most, -1 where there is none


def import_gnubg_nn():
    """The ``gnubg_nn`` module, or an ImportError saying how to install it."""
    try:
        import gnubg_nn
    except ImportError as e:
        raise ImportError(MISSING_REFERENCE) from e
    return gnubg_nn


def _check_batch(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.asarray(dice)
    if boards.ndim != 3 or boards.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (N, 2, 25); got {boards.shape}")
    if dice.shape != (len(boards), 2):
        raise ValueError(f"dice must have shape ({len(boards)}, 2) to match the boards; got {dice.shape}")
    return boards, dice


class GnubgBot(Bot):
    """GNU Backgammon's network through ``gnubg_nn.best_move`` at ``ply`` (0 = the raw net).

    It evaluates positions, and chooses moves, at any depth up to :data:`MAX_GNUBG_PLY` when
    asked (``ply=``); its moves are GNU Backgammon's own choice, not bgnet's search."""

    plies = tuple(range(MAX_GNUBG_PLY + 1))

    def __init__(self, ply: int = 0):
        if not isinstance(ply, (int, np.integer)) or not 0 <= ply <= MAX_GNUBG_PLY:
            raise ValueError(f"gnubg ply must be a whole number from 0 to {MAX_GNUBG_PLY}; got {ply!r}")
        self.ply = int(ply)
        self.name = f"gnubg:{self.ply}"
        self._g = import_gnubg_nn()

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, contexts=None,
                     ply: int | None = None):
        """GNU Backgammon's moves at ``ply`` (None: this bot's); cubeless, whatever the
        ``contexts``."""
        boards, dice = _check_batch(boards, dice)
        best = self._g.best_move
        ply = self._depth(ply)
        rows = []
        for b, (d1, d2) in zip(boards.tolist(), dice.tolist()):
            flat = sum(best(b, d1, d2, ply), ())  # ((from, to), ...) -> (from, to, ...)
            rows.append(flat + _PAD[len(flat):])
        steps = np.array(rows, np.int8).reshape(-1, 4, 2)
        return play_steps(boards, steps), steps

    def evaluate(self, boards: np.ndarray, ply: int | None = None) -> np.ndarray:
        """Cubeless probabilities for the side on roll at ``ply`` (None: this bot's; gnubg
        order)."""
        boards = board_batch(boards)
        probs = self._g.probabilities
        ply = self._depth(ply)
        return np.array([probs(b, ply) for b in boards.tolist()], dtype=np.float64).reshape(-1, 5)

    def _depth(self, ply: int | None) -> int:
        if ply is None:
            return int(self.ply or 0)
        if ply not in self.plies:
            raise ValueError(f"gnubg ply must be a whole number from 0 to {MAX_GNUBG_PLY}; got {ply!r}")
        return int(ply)


def money_equity(probs) -> np.ndarray:
    """Cubeless money equity of gnubg-ordered probabilities (see :func:`bgnet.nn.probs.equity`)."""
    return equity(np.asarray(probs, dtype=np.float64))
