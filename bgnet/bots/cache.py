"""Afterstates valued once: a table of the mover's 0-ply probabilities of every afterstate an
evaluator has been asked about, so that a search that meets an afterstate again reads it back.

A search two plies deep meets the same afterstates many times. Two candidate moves that differ in
one checker lead, after the same reply and another roll, to many of the same afterstates (the
moves of a roll commute); a cube decision at a ply values the position before the roll as the
last checker play's search valued the move that led to it; the next decisions' replies were
valued as leaves of this one's. Over the analysis of a game at 2-ply about four afterstates in
ten are ones already valued.

:class:`CachedEvaluator` wraps an evaluator (:mod:`bgnet.bots.evaluator`) and keeps its answers
for afterstates in an :class:`AfterstateTable`: an open-addressing hash table, compiled, keyed by
the board's 80-bit position key (GNU Backgammon's, :mod:`bgnet.engine.position_id`: each side's
slots in board order, a count as that many 1 bits and a 0), which identifies a board exactly.
Each batch is looked up in one compiled call: rows found are read back, the first row of each
board not found is handed to the evaluator (with its position, where the batch came with them,
so a compiled pass still starts it from its position's first layer), and repeats inside the
batch take that row's answer. The evaluator's answer for an afterstate depends on the
afterstate alone up to float32 rounding (its first layer may be made from its position's), so a
value read back equals the one the evaluator would give now to that rounding.

Positions before the roll (``positions``) are not kept: a search asks for afterstates. The
table grows by doubling up to ``max_entries`` and is emptied when full, and by :meth:`clear`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.bots.evaluator import afterstates_of

MAX_ENTRIES = 1 << 18  # afterstates kept at most (a table of 18 MB at most); then it is emptied
_FIRST_SIZE = 1 << 16  # slots of a new table
_EMPTY = np.uint64(1 << 63)  # the high word of an empty slot (a key's uses 16 bits at most)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _mix(z):
    """SplitMix64's finalizer: every input bit moves about half the output bits."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _key(boards, k):
    """The 80-bit position key of ``boards[k]`` as (low 64 bits, high 16 bits)."""
    lo = np.uint64(0)
    hi = np.uint64(0)
    bit = 0
    for side in range(2):
        for slot in range(25):
            n = boards[k, side, slot]
            if n > 0:
                ones = (np.uint64(1) << np.uint64(n)) - np.uint64(1)
                if bit >= 64:
                    hi |= ones << np.uint64(bit - 64)
                else:
                    lo |= ones << np.uint64(bit)
                    if bit + n > 64:  # the run crosses into the high word
                        hi |= ones >> np.uint64(64 - bit)
            bit += n + 1  # the count's ones, then a 0
    return lo, hi


@njit(cache=True, inline="always")
def _slot(keys, lo, hi):
    """The slot that holds the key (lo, hi), or the empty slot where it would go."""
    mask = np.uint64(keys.shape[0] - 1)
    j = np.int64(_mix(lo ^ _mix(hi)) & mask)
    while True:
        if keys[j, 1] == _EMPTY or (keys[j, 0] == lo and keys[j, 1] == hi):
            return j
        j = np.int64((np.uint64(j) + np.uint64(1)) & mask)


@njit(cache=True)
def _find(keys, values, boards, out, slot_of, state):
    """Looks up every board. Found: its values go to ``out[k]`` (``state[k]`` 0), or, when its
    values are still to come (a repeat of a row of this batch), ``state[k]`` is 2. Not found:
    it is entered, its values NaN until :func:`_fill`, and ``state[k]`` is 1. ``slot_of[k]`` is
    its slot. Returns how many boards were entered."""
    added = 0
    for k in range(boards.shape[0]):
        lo, hi = _key(boards, k)
        j = _slot(keys, lo, hi)
        slot_of[k] = j
        if keys[j, 1] == _EMPTY:
            keys[j, 0] = lo
            keys[j, 1] = hi
            values[j, 0] = np.nan
            state[k] = 1
            added += 1
        elif np.isnan(values[j, 0]):
            state[k] = 2
        else:
            state[k] = 0
            for i in range(5):
                out[k, i] = values[j, i]
    return added


@njit(cache=True)
def _fill(values, slot_of, state, new, probs, out):
    """The values ``probs`` of the rows ``new`` (those :func:`_find` entered) into the table and
    ``out``, then the repeats' from the table."""
    for t in range(new.shape[0]):
        k = new[t]
        for i in range(5):
            values[slot_of[k], i] = probs[t, i]
            out[k, i] = probs[t, i]
    for k in range(state.shape[0]):
        if state[k] == 2:
            for i in range(5):
                out[k, i] = values[slot_of[k], i]


@njit(cache=True)
def _rehash(keys, values, new_keys, new_values):
    for j in range(keys.shape[0]):
        if keys[j, 1] != _EMPTY:
            t = _slot(new_keys, keys[j, 0], keys[j, 1])
            new_keys[t, 0] = keys[j, 0]
            new_keys[t, 1] = keys[j, 1]
            new_values[t] = values[j]


class AfterstateTable:
    """Boards to float32[5], the table at most half full; emptied when it holds ``max_entries``
    before a batch.

    >>> from bgnet.engine.board import start_position
    >>> t = AfterstateTable()
    >>> boards = np.stack([start_position()] * 2)
    >>> out = np.zeros((2, 5), np.float32)
    >>> slots, state = t.find(boards, out)
    >>> state.tolist(), bool(slots[0] == slots[1])
    ([1, 2], True)
    >>> t.fill(slots, state, np.full((1, 5), 0.5, np.float32), out)
    >>> out[:, 0].tolist(), t.find(boards, out)[1].tolist(), len(t)
    ([0.5, 0.5], [0, 0], 1)
    """

    def __init__(self, max_entries: int = MAX_ENTRIES):
        if int(max_entries) < 1:
            raise ValueError(f"a table keeps at least one entry; got max_entries={max_entries}")
        self.max_entries = int(max_entries)
        self._allocate(_FIRST_SIZE)

    def _allocate(self, size: int) -> None:
        self.keys = np.zeros((size, 2), np.uint64)
        self.keys[:, 1] = _EMPTY
        self.values = np.zeros((size, 5), np.float32)
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def clear(self) -> None:
        """Forget every entry (the table keeps its size)."""
        self.keys[:, 1] = _EMPTY
        self.count = 0

    def _room_for(self, n: int) -> None:
        """Make the table able to take ``n`` more entries: emptied once it holds
        ``max_entries`` (so it may pass them by one batch), then doubled while it would be more
        than half full."""
        if self.count >= self.max_entries:
            self.clear()
        size = len(self.keys)
        while 2 * (self.count + n) > size:
            size *= 2
        if size != len(self.keys):
            keys, values = self.keys, self.values
            self._allocate(size)
            _rehash(keys, values, self.keys, self.values)
            self.count = int((keys[:, 1] != _EMPTY).sum())

    def find(self, boards: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Looks up int8[N, 2, 25] boards, the values of those found written to ``out``
        (float32[N, 5]): returns ``(slots, state)``, each board's slot and its state, 0 found,
        1 the first row of a board that was not there (the caller values it and calls
        :meth:`fill`), 2 a repeat of such a row. Valid until the next call."""
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
        self._room_for(len(boards))
        slots = np.empty(len(boards), np.int64)
        state = np.empty(len(boards), np.int8)
        self.count += _find(self.keys, self.values, boards, out, slots, state)
        return slots, state

    def fill(self, slots: np.ndarray, state: np.ndarray, probs: np.ndarray, out: np.ndarray) -> None:
        """After :meth:`find`: the values ``probs`` of its new rows (state 1, in order) into the
        table and ``out``, and the repeats' (state 2) into ``out``."""
        new = np.flatnonzero(state == 1)
        _fill(self.values, slots, state, new, np.ascontiguousarray(probs, np.float32), out)

class CachedEvaluator:
    """An evaluator (``positions``, ``afterstates``) whose answers for afterstates are kept in an
    :class:`AfterstateTable` and read back when asked again (see the module docstring)."""

    knows_parents = True  # afterstates() takes the positions the afterstates were played from

    def __init__(self, inner, max_entries: int = MAX_ENTRIES):
        self.inner = inner
        self.table = AfterstateTable(max_entries)
        self.asked = 0  # afterstates asked for, and how many the inner evaluator valued
        self.valued = 0

    def positions(self, boards: np.ndarray) -> np.ndarray:
        return self.inner.positions(boards)

    def afterstates(self, after: np.ndarray, parents: np.ndarray | None = None,
                    parent_of: np.ndarray | None = None) -> np.ndarray:
        """The mover's probabilities float32[N, 5] of each afterstate, from the table where it
        is there, else from the inner evaluator (told ``parents`` and ``parent_of`` where
        given, as :func:`bgnet.bots.evaluator.afterstates_of` tells it)."""
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)
        out = np.empty((len(after), 5), np.float32)
        slots, state = self.table.find(after, out)
        new = np.flatnonzero(state == 1)
        probs = np.zeros((0, 5), np.float32)
        if len(new):
            try:
                if parents is not None and parent_of is not None:
                    probs = afterstates_of(self.inner, after[new], parents,
                                           np.asarray(parent_of, np.int64)[new])
                else:
                    probs = self.inner.afterstates(after[new])
            except BaseException:
                self.table.clear()  # the boards just entered have no values: forget them all
                raise
        self.table.fill(slots, state, probs, out)
        self.asked += len(after)
        self.valued += len(new)
        return out

    def clear(self) -> None:
        """Forget every afterstate kept."""
        self.table.clear()
