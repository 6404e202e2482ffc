"""The stable public entry point: the legal moves of a position given by its Position ID.

Convention: a Position ID always describes a position with the player ON ROLL in ``board[1]``
(GNU Backgammon's convention). The position given has the mover on roll; every next Position ID
has the OPPONENT on roll, so it can be passed straight back to :func:`legal_moves` for the
opponent's turn, or pasted into GNU Backgammon. In board terms the next position is
:func:`bgnet.engine.board.swap` of the mover's afterstate.

>>> moves = legal_moves("4HPwATDgc/ABMA", 3, 1)
>>> len(moves)
16
>>> moves[0]
('24/23 24/21', '4HPwARLgc/ABMA')
>>> dict(moves)["8/5 6/5"]
'sGfwATDgc/ABMA'
"""
from __future__ import annotations

from bgnet.engine.board import check_die, swap
from bgnet.engine.movegen import generate
from bgnet.engine.notation import format_move
from bgnet.engine.position_id import board_from_position_id, position_id


def legal_moves(position_id_: str, d1: int, d2: int) -> list[tuple[str, str]]:
    """Every distinct legal move of the position, as ``(notation, next Position ID)`` pairs.

    ``position_id_`` is a GNU Backgammon Position ID with the side to move on roll; each next
    Position ID is the position after the move with the OPPONENT on roll. The order is the move
    generator's, the same for ``(3, 1)`` and ``(1, 3)``. When no move is legal the list holds one
    pair, ``("", next ID)``: the same checkers with the opponent on roll (the turn passes). The
    list is empty only when the game is over (a side has borne off all its checkers). Raises
    ValueError for a bad ID or dice outside 1..6.
    """
    a = check_die(d1, "the first die")
    b = check_die(d2, "the second die")
    board = board_from_position_id(position_id_)
    if game_over(board):
        return []
    after, steps = generate(board, max(a, b), min(a, b))
    if len(after) == 0:
        return [("", position_id(swap(board)))]
    return [(format_move(s, board), position_id(x[::-1])) for x, s in zip(after, steps)]


def game_over(board) -> bool:
    """Whether a side of ``board`` has borne off all 15 checkers (nobody moves any more)."""
    return not board[0].any() or not board[1].any()
