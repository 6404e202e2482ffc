"""The stable public entry point: the legal moves of a position given by its Position ID.

>>> moves = legal_moves("4HPwATDgc/ABMA", 3, 1)
>>> len(moves)
16
>>> moves[0]
('24/23 24/21', '4HPwATDgc/ABEg')
>>> dict(moves)["8/5 6/5"]
'4HPwATCwZ/ABMA'
"""
from __future__ import annotations

import numpy as np

from bgnet.engine.movegen import generate
from bgnet.engine.notation import format_move
from bgnet.engine.position_id import board_from_position_id, position_id


def _check_die(d, name: str) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number from 1 to 6; got {d!r}")
    if not 1 <= d <= 6:
        raise ValueError(f"{name} must be from 1 to 6; got {d}")
    return int(d)


def legal_moves(position_id_: str, d1: int, d2: int) -> list[tuple[str, str]]:
    """Every distinct legal move of the position, as ``(notation, next Position ID)`` pairs.

    ``position_id_`` is a GNU Backgammon Position ID with the side to move on roll. The next
    Position ID describes the position right after the move in the mover's orientation,
    ``[opponent, mover]``, exactly as ``gnubg_nn.position_id`` writes the keys of
    ``gnubg_nn.moves``: the same side is still "on roll" in it (swap the sides for the
    opponent's turn). The list follows the move generator's order; it is empty when no move is
    legal (the turn passes). Raises ValueError for a bad ID or dice outside 1..6.
    """
    a = _check_die(d1, "the first die")
    b = _check_die(d2, "the second die")
    board = board_from_position_id(position_id_)
    after, steps = generate(board, a, b)
    return [(format_move(s, board), position_id(x)) for x, s in zip(after, steps)]
