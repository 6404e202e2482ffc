"""The stable public entry point: the legal moves of a position given by its Position ID.

Convention: a Position ID always describes a position with the player ON ROLL in ``board[1]``
(GNU Backgammon's convention). The position given has the mover on roll; every next Position ID
has the OPPONENT on roll, so it can be passed straight back to :func:`legal_moves` for the
opponent's turn, or pasted into GNU Backgammon. In board terms the next position is
:func:`bgnet.engine.board.swap` of the mover's afterstate.

Speed: one call is one compiled kernel (decode the ID, generate, write every notation and next
ID as text) and one split of that text in Python, with buffers kept between calls; the checked
Python readers only run to say what is wrong with a bad ID.

>>> moves = legal_moves("4HPwATDgc/ABMA", 3, 1)
>>> len(moves)
16
>>> moves[0]
('24/23 24/21', '4HPwARLgc/ABMA')
>>> dict(moves)["8/5 6/5"]
'sGfwATDgc/ABMA'
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from bgnet.engine.board import check_die
from bgnet.engine.movegen import (
    LARGE_TABLE,
    MANY_CANDIDATES,
    SCRATCH_ROWS,
    generate_positions,
    new_tables,
)
from bgnet.engine.notation import write_move
from bgnet.engine.position_id import board_from_position_id, read_position_id, write_position_id

ROWS = 4096  # afterstates the kept buffers hold (a power of two: also their dedup table's size)
_TEXT_PER_MOVE = 80  # notation (at most 60 bytes), separators and the 14-character next ID
_SEP = 10  # "\n" separates notations and IDs in the kernel's text

# Codes the kernel returns instead of a length.
_GAME_OVER, _BAD_ID, _NO_ROOM = -1, -2, -3


class _Workspace:
    """Buffers the kernel reuses from call to call; each thread has its own (:func:`workspace`)."""

    def __init__(self):
        self.boards = np.empty((ROWS, 2, 25), np.int8)
        self.moves = np.empty((ROWS, 4, 2), np.int8)
        # Rows: depth, die, key of each afterstate; rows 3 to 5, the dedup table (ROWS entries
        # of key, row and stamp, the stamps starting at -1: no entry); row 6 holds the stamp of
        # the next position; row 7, the generator's scratch, its dice and offsets.
        self.ints = np.zeros((8, ROWS), np.int64)
        self.ints[3:6].reshape(ROWS, 3)[:, 2] = -1
        self.board = np.empty((2, 25), np.int8)
        self.text = np.empty(ROWS * _TEXT_PER_MOVE, np.uint8)
        self.kernel_args = (self.board, self.boards, self.moves, self.ints, self.text)
        self.text_view = memoryview(self.text)


_local = threading.local()


def workspace() -> _Workspace:
    """This thread's kept buffers (made on its first call)."""
    try:
        return _local.ws
    except AttributeError:
        _local.ws = _Workspace()
        return _local.ws


def own_workspace() -> _Workspace:
    """Kept buffers of its own, for an object that calls the kernels many times from one thread
    (an environment): no thread-local lookup on each call."""
    return _Workspace()


@njit(cache=True)
def generate_kept(board, d1, d2, boards, moves, ints):
    """Legal afterstates of one position into the kept buffers: their count (a position with no
    legal move has one, itself), -1 when the buffers are too small."""
    kept = ints[7]  # scratch kept too: allocating it costs as much as a quarter of a small call
    scratch = kept[:SCRATCH_ROWS * 25].reshape(SCRATCH_ROWS, 25)
    scratch[:] = 0
    dice = kept[SCRATCH_ROWS * 25:SCRATCH_ROWS * 25 + 2].reshape(1, 2)
    dice[0, 0], dice[0, 1] = d1, d2
    offsets = kept[SCRATCH_ROWS * 25 + 2:SCRATCH_ROWS * 25 + 4]
    offsets[:] = 0
    _, n, stamp, status = generate_positions(board.reshape(1, 2, 25), dice, 0, boards, moves, ints[0], ints[1],
                                             ints[2], 0, offsets, ints[3:6].reshape(ROWS, 3), ints[6, 0], scratch)
    ints[6, 0] = stamp
    if status == MANY_CANDIDATES:
        _, n, _, status = generate_positions(board.reshape(1, 2, 25), dice, 0, boards, moves, ints[0], ints[1],
                                             ints[2], 0, offsets, new_tables(LARGE_TABLE), 0, scratch)
    return -1 if status != 0 else n


@njit(cache=True)
def _game_over(board) -> bool:
    a = 0
    b = 0
    for i in range(25):
        a += board[0, i]
        b += board[1, i]
    return a == 0 or b == 0


@njit(cache=True)
def _legal_moves_text(pid, d1, d2, board, boards, moves, ints, text):
    """Every legal move of the position ``pid`` (ASCII codes) as text, "notation\nnext ID" per
    move joined by "\n"; returns the text's length or one of the negative codes above."""
    if not read_position_id(pid, board):
        return _BAD_ID
    if _game_over(board):
        return _GAME_OVER
    n = generate_kept(board, d1, d2, boards, moves, ints)
    if n < 0:
        return _NO_ROOM
    if n == 0:  # the turn passes: no notation, the same checkers with the opponent on roll
        text[0] = _SEP
        return write_position_id(board[1], board[0], text, 1)
    pos = 0
    scratch = np.empty(40, np.int64)
    for r in range(n):
        if r > 0:
            text[pos] = _SEP
            pos += 1
        pos = write_move(moves[r], board[0], text, pos, scratch)
        text[pos] = _SEP
        pos = write_position_id(boards[r, 1], boards[r, 0], text, pos + 1)
    return pos


@njit(cache=True)
def _count_moves(board, d1, d2, boards, moves, ints):
    """The number of legal moves of ``board`` (0: the turn passes); -1 when the game is over, -3
    when the kept buffers are too small to tell."""
    if _game_over(board):
        return _GAME_OVER
    n = generate_kept(board, d1, d2, boards, moves, ints)
    return _NO_ROOM if n < 0 else n


@njit(cache=True)
def _move_text(board, steps, after, text):
    """"notation\nnext ID" of one move: ``steps`` played on ``board`` gave ``after``."""
    scratch = np.empty(40, np.int64)
    pos = write_move(steps, board[0], text, 0, scratch)
    text[pos] = _SEP
    return write_position_id(after[1], after[0], text, pos + 1)


def count_moves(board: np.ndarray, d1: int, d2: int) -> int:
    """How many legal moves ``board`` (int8[2, 25], the mover on roll; checked dice) has: 0 when
    the turn passes, -1 when the game is over."""
    ws = workspace()
    n = _count_moves(board, d1, d2, ws.boards, ws.moves, ws.ints)
    if n == _NO_ROOM:
        from bgnet.engine.movegen import generate

        n = len(generate(board, d1, d2)[0])
    return n


def move_text(board: np.ndarray, steps, after: np.ndarray) -> tuple[str, str]:
    """``(notation, next Position ID)`` of a move: ``steps`` (int[4, 2], -1 padded) played on
    ``board`` gave the afterstate ``after`` (``[opponent, mover]``); the next ID has the
    opponent on roll. Empty steps with ``after`` equal to ``board`` are a pass."""
    text = workspace().text
    n = _move_text(board, np.asarray(steps, np.int8), after, text)
    note, nxt = text[:n].tobytes().decode("ascii").split("\n")
    return note, nxt


def legal_moves(position_id_: str, d1: int, d2: int) -> list[tuple[str, str]]:
    """Every distinct legal move of the position, as ``(notation, next Position ID)`` pairs.

    ``position_id_`` is a GNU Backgammon Position ID with the side to move on roll; each next
    Position ID is the position after the move with the OPPONENT on roll. The order is the move
    generator's, the same for ``(3, 1)`` and ``(1, 3)``. When no move is legal the list holds one
    pair, ``("", next ID)``: the same checkers with the opponent on roll (the turn passes). The
    list is empty only when the game is over (a side has borne off all its checkers). Raises
    ValueError for a bad ID or dice outside 1..6.
    """
    # Plain ints from 1 to 6 need no further look; anything else goes through the full check.
    a = d1 if type(d1) is int and 0 < d1 < 7 else check_die(d1, "the first die")
    b = d2 if type(d2) is int and 0 < d2 < 7 else check_die(d2, "the second die")
    if a < b:
        a, b = b, a
    try:
        text = position_id_.encode("ascii")
    except (AttributeError, UnicodeEncodeError):
        text = None
    ws = workspace()
    code = _BAD_ID if text is None else _legal_moves_text(text, a, b, *ws.kernel_args)
    if code >= 0:
        it = iter(str(ws.text_view[:code], "ascii").split("\n"))
        return list(zip(it, it))
    if code == _GAME_OVER:
        return []
    return _legal_moves_checked(position_id_, a, b)


def _legal_moves_checked(position_id_, d1: int, d2: int) -> list[tuple[str, str]]:
    """The plain path: an ID in another spelling (padding, spaces), a bad one (the checked reader
    says what is wrong) or a position with more afterstates than the kept buffers hold."""
    from bgnet.engine.board import swap
    from bgnet.engine.movegen import generate
    from bgnet.engine.notation import format_move
    from bgnet.engine.position_id import position_id

    board = board_from_position_id(position_id_)
    if game_over(board):
        return []
    after, steps = generate(board, d1, d2)
    if len(after) == 0:
        return [("", position_id(swap(board)))]
    return [(format_move(s, board), position_id(x[::-1])) for x, s in zip(after, steps)]


def game_over(board) -> bool:
    """Whether a side of ``board`` has borne off all 15 checkers (nobody moves any more)."""
    return not board[0].any() or not board[1].any()
