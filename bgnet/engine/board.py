"""The board and its one convention, shared by every part of bgnet.

A position is a numpy ``int8`` array of shape ``(2, 25)``, the layout GNU Backgammon's
``gnubg_nn`` module uses:

* ``board[1]`` is the side ON ROLL ("me"), ``board[0]`` the opponent.
* ``side[i]`` for ``i`` in 0..23 is that side's checkers on its OWN point ``i + 1``; every side
  counts from its own 1-point (deepest point of its home board) and moves from high index to low.
* ``side[24]`` is that side's bar. Borne off = 15 - sum(side).
* My point ``p`` is the opponent's point ``25 - p``: my index ``i`` is the opponent's ``23 - i``.

After a move, the mover's afterstate is still written ``[opponent, mover]``; the position with the
opponent on roll is :func:`swap` of it.

>>> b = start_position()
>>> pip_counts(b)
(167, 167)
>>> int(b[1, 5]), int(b[1, 23])
(5, 2)
"""
from __future__ import annotations

import numpy as np
from numba import njit

NUM_POINTS = 24
BAR = 24
NUM_CHECKERS = 15
OPP, ME = 0, 1

BoardArray = np.ndarray  # int8[2, 25]


def start_position() -> np.ndarray:
    """The standard starting position, either side on roll (it is symmetric)."""
    side = np.zeros(25, dtype=np.int8)
    side[5], side[7], side[12], side[23] = 5, 3, 5, 2
    return np.stack([side, side.copy()])


def as_board(board) -> np.ndarray:
    """Coerce a 2x25 nested list / array to a fresh int8 board, checking it is a legal position."""
    arr = np.asarray(board)
    if arr.shape != (2, 25):
        raise ValueError(f"a board has shape (2, 25) (opponent, player on roll); got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise ValueError("checker counts must be whole numbers")
    out = arr.astype(np.int8)
    check_board(out)
    return out


def check_board(board: np.ndarray) -> None:
    """Raise ValueError naming what is wrong with a position (counts, overlaps)."""
    names = ("opponent", "player on roll")
    for s in (OPP, ME):
        side = board[s]
        if np.any(side < 0):
            raise ValueError(f"{names[s]} has a negative checker count at index {int(np.argmin(side))}")
        total = int(side.sum())
        if total > NUM_CHECKERS:
            raise ValueError(f"{names[s]} has {total} checkers on the board; at most 15 are allowed")
    both = [i for i in range(24) if board[ME, i] > 0 and board[OPP, 23 - i] > 0]
    if both:
        raise ValueError(
            "both colours on one point: player on roll's point(s) "
            + ", ".join(str(i + 1) for i in both)
        )


def swap(board: np.ndarray) -> np.ndarray:
    """The same position seen by the other side (the opponent on roll)."""
    return board[::-1].copy()


def borne_off(board: np.ndarray) -> tuple[int, int]:
    """Checkers borne off by (opponent, player on roll)."""
    return NUM_CHECKERS - int(board[OPP].sum()), NUM_CHECKERS - int(board[ME].sum())


def pip_counts(board: np.ndarray) -> tuple[int, int]:
    """Pip counts of (player on roll, opponent); the bar counts 25 pips."""
    w = np.arange(1, 26)
    return int((board[ME].astype(np.int64) * w).sum()), int((board[OPP].astype(np.int64) * w).sum())


@njit(cache=True)
def game_result(board) -> int:
    """Points won by the side in ``board[1]`` if it has borne off all checkers, else 0.

    1 single, 2 gammon (loser bore off none), 3 backgammon (loser bore off none and has a checker
    on the bar or in the winner's home board, i.e. its own points 19-24).
    """
    for i in range(25):
        if board[1, i] != 0:
            return 0
    opp_total = 0
    for i in range(25):
        opp_total += board[0, i]
    if opp_total < 15:
        return 1
    for i in range(18, 25):
        if board[0, i] > 0:
            return 3
    return 2


def check_die(d, name: str = "a die") -> int:
    """``d`` as an int when it is a whole number from 1 to 6; a ValueError naming ``name`` else.

    The one dice check of bgnet's public calls (numpy integers are accepted; bools and floats
    are not).

    >>> check_die(7, "the second die")
    Traceback (most recent call last):
    ...
    ValueError: the second die must be from 1 to 6; got 7
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number from 1 to 6; got {d!r}")
    if not 1 <= d <= 6:
        raise ValueError(f"{name} must be from 1 to 6; got {d}")
    return int(d)


def is_race(board: np.ndarray) -> bool:
    """True when contact is over: no checker of mine is behind an opposing checker."""
    return bool(race_of_sides(board[1], board[0]))


@njit(cache=True, inline="always")
def race_of_sides(me, opp) -> bool:
    """Whether contact is over between the sides ``me`` and ``opp`` (25-long rows, each in its own
    numbering): my rearmost checker is ahead of the opponent's rearmost one. Contact is
    symmetric, so the order of the two sides does not matter."""
    my_back = -1
    for i in range(24, -1, -1):
        if me[i] > 0:
            my_back = i
            break
    opp_back_on_my_index = 25  # opponent index j is my index 23 - j; its bar is "my -1"
    for j in range(24, -1, -1):
        if opp[j] > 0:
            opp_back_on_my_index = 23 - j
            break
    if my_back < 0 or opp_back_on_my_index == 25:
        return True
    return my_back < opp_back_on_my_index


def _as_boards(boards) -> np.ndarray:
    arr = np.asarray(boards)
    if arr.ndim != 3 or arr.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (N, 2, 25); got {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.int8)


def race_mask(boards: np.ndarray) -> np.ndarray:
    """bool[N]: True where contact is over (a batched :func:`is_race`; one board of shape (2, 25)
    is taken as a batch of one). Contact is symmetric, so this works on positions and afterstates
    alike.

    >>> race_mask(start_position()[None]).tolist()
    [False]
    """
    arr = np.asarray(boards)
    return _race_mask(_as_boards(arr[None] if arr.ndim == 2 else arr))


def game_results(boards: np.ndarray) -> np.ndarray:
    """int8[N]: points won by ``board[1]`` when it has borne off everything (1, 2 or 3), else 0.

    A batched :func:`game_result`; on afterstates it scores the mover.
    """
    return _game_results(_as_boards(boards))


def unique_boards(boards: np.ndarray, groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` for a batch of boards: ``first`` the index of each distinct board's
    first occurrence, in order, and ``inverse`` such that ``boards[first][inverse]`` equals
    ``boards``. Boards are compared whole (a hash only finds candidates), so the result is exact.
    Evaluating ``boards[first]`` instead of ``boards`` skips the repeats: the afterstates of
    different rolls of one position coincide when the dice move the same checkers as far.

    ``groups`` (offsets ``0 = g[0] < g[1] < ... = N``): look for repeats only inside each group
    ``g[i]:g[i + 1]`` (a board in two groups is kept twice). Small groups keep the lookup table
    in the processor's cache, which makes this several times faster where repeats can only occur
    inside a group, as among the afterstates of one position.

    >>> moved = start_position()
    >>> moved[1, 5] -= 1; moved[1, 4] += 1  # one checker from the 6-point to the 5-point
    >>> first, inverse = unique_boards(np.stack([start_position(), moved, start_position()]))
    >>> first.tolist(), inverse.tolist()
    ([0, 1], [0, 1, 0])
    >>> unique_boards(np.stack([start_position(), moved, start_position()]), np.array([0, 2, 3]))[0].tolist()
    [0, 1, 2]
    """
    b = _as_boards(boards)
    if groups is None:
        groups = np.array([0, len(b)], np.int64)
    groups = np.asarray(groups, np.int64)
    if len(groups) < 2 or groups[0] != 0 or groups[-1] != len(b) or (np.diff(groups) < 0).any():
        raise ValueError(f"groups must rise from 0 to {len(b)}; got {groups.tolist()}")
    return _unique_boards(b, groups)


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def mix64(z):
    """A 64-bit finalizer (SplitMix64's): every input bit moves about half the output bits (the
    hash of bgnet's compiled tables: unique boards here, the search's afterstate cache)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _pack(boards):
    """Each count (0..15) is 4 bits, so a board packs exactly into 200 bits: four words, equal
    exactly when the boards are, and quick to hash."""
    n = boards.shape[0]
    keys = np.empty((n, 4), np.uint64)
    for k in range(n):
        for w in range(4):
            acc = np.uint64(0)
            for q in range(16):
                i = 16 * w + q
                if i < 50:
                    acc |= np.uint64(boards[k, i // 25, i % 25] & 15) << np.uint64(4 * q)
            keys[k, w] = acc
    return keys


@njit(cache=True)
def _unique_boards(boards, groups):
    n = boards.shape[0]
    keys = _pack(boards)
    largest = 0
    for g in range(len(groups) - 1):
        largest = max(largest, groups[g + 1] - groups[g])
    size = 1
    while size < 2 * largest:
        size *= 2
    mask = np.uint64(size - 1)
    slots = np.empty(size, np.int64)  # open addressing: slot -> index into ``first``
    first = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    n_first = 0
    for g in range(len(groups) - 1):
        slots[:] = -1
        for k in range(groups[g], groups[g + 1]):
            h = mix64(keys[k, 0] ^ mix64(keys[k, 1] ^ mix64(keys[k, 2] ^ mix64(keys[k, 3]))))
            j = np.int64(h & mask)
            while True:
                u = slots[j]
                if u < 0:
                    slots[j] = n_first
                    first[n_first] = k
                    inverse[k] = n_first
                    n_first += 1
                    break
                f = first[u]
                if keys[f, 0] == keys[k, 0] and keys[f, 1] == keys[k, 1] and \
                        keys[f, 2] == keys[k, 2] and keys[f, 3] == keys[k, 3]:
                    inverse[k] = u
                    break
                j = (j + 1) & (size - 1)
    return first[:n_first].copy(), inverse


@njit(cache=True)
def _race_mask(boards):
    out = np.empty(boards.shape[0], np.bool_)
    for k in range(boards.shape[0]):
        out[k] = race_of_sides(boards[k, 1], boards[k, 0])
    return out


@njit(cache=True)
def _game_results(boards):
    out = np.empty(boards.shape[0], np.int8)
    for k in range(boards.shape[0]):
        out[k] = game_result(boards[k])
    return out
