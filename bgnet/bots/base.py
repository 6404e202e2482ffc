"""The one interface every player implements: nets, pubeval, GNU Backgammon, random, a person.

A bot picks moves for positions in bgnet's board layout (see :mod:`bgnet.engine.board`): the side
on roll is ``board[1]``. The batch method is what matches and self-play call; it has a simple
default that loops over :meth:`Bot.choose_move`, and fast bots override it.
"""
from __future__ import annotations

import numpy as np

from bgnet.engine.movegen import generate


class Bot:
    """Base class. Subclasses implement ``choose_move`` or ``choose_moves`` (or both)."""

    name = "bot"

    def choose_move(self, board: np.ndarray, d1: int, d2: int) -> np.ndarray:
        """The afterstate (``[opponent, mover_after]``) this bot plays; the board itself if no move."""
        after, _ = self.choose_moves(board[None], np.array([[d1, d2]]))
        return after[0]

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray):
        """Chosen afterstates for many positions at once: ``(int8[N, 2, 25], steps int8[N, 4, 2])``.

        The steps are the (from, to) pairs of the chosen move, as :mod:`bgnet.engine.movegen` gives.
        """
        if type(self).choose_move is Bot.choose_move:
            raise NotImplementedError(f"{type(self).__name__} implements neither choose_move nor choose_moves")
        out = np.empty_like(boards)
        steps = np.full((len(boards), 4, 2), -1, np.int8)
        for i, (b, (d1, d2)) in enumerate(zip(boards, dice)):
            out[i] = self.choose_move(b, int(d1), int(d2))
            after, moves = generate(b, int(d1), int(d2))
            for a, m in zip(after, moves):
                if np.array_equal(a, out[i]):
                    steps[i] = m
                    break
        return out, steps

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """Cubeless probabilities float[N, 5] for the side on roll, before it rolls (gnubg order:
        win, win gammon, win backgammon, lose gammon, lose backgammon). Optional."""
        raise NotImplementedError(f"{self.name} cannot evaluate positions")

    def close(self) -> None:
        """Release resources (processes, sessions)."""
