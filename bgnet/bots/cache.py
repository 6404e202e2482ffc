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
80 bits that identify a board exactly (each side's slots in board order, a count as that many 1
bits and a 0, as GNU Backgammon's position key writes them: at most 40 bits a side).
Each batch is looked up in one compiled call: rows found are read back, the first row of each
board not found is handed to the evaluator (with its position, where the batch came with them,
so a compiled pass still starts it from its position's first layer), and repeats inside the
batch take that row's answer. The evaluator's answer for an afterstate depends on the
afterstate alone up to float32 rounding (its first layer may be made from its position's), so a
value read back equals the one the evaluator would give now to that rounding.

Positions before the roll (``positions``) are not kept: a search asks for afterstates. The
table grows by doubling, stays at most half full, and is emptied before a batch once it holds
``max_entries`` (the analysis empties it at each game too, :meth:`clear`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.bots.evaluator import afterstates_of
from bgnet.engine.board import mix64

MAX_ENTRIES = 1 << 18  # afterstates kept before the table is emptied (16 to 32 MB of table)
_FIRST_SIZE = 1 << 16  # slots of a new table
_EMPTY = np.uint32(0xFFFFFFFF)  # the third key word of an empty slot (a key's uses 16 bits)
_LOW32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _side_code(boards, k, side):
    """One side of ``boards[k]`` in at most 40 bits: each of its 25 slots' count as that many 1
    bits, then a 0 (the side's half of GNU Backgammon's position key)."""
    code = np.uint64(0)
    bit = np.uint64(0)
    for slot in range(25):
        n = np.uint64(boards[k, side, slot])
        code |= ((np.uint64(1) << n) - np.uint64(1)) << bit
        bit += n + np.uint64(1)
    return code


@njit(cache=True, inline="always")
def _key(boards, k):
    """The key of ``boards[k]``: its two sides' codes (40 bits each) in three 32-bit words."""
    a = _side_code(boards, k, 0)
    b = _side_code(boards, k, 1)
    return (np.uint32(a & _LOW32), np.uint32((a >> np.uint64(32)) | ((b & np.uint64(0xFFFFFF)) << np.uint64(8))),
            np.uint32(b >> np.uint64(24)))


@njit(cache=True, inline="always")
def _home(slots, w0, w1, w2):
    """The first slot a key's probe looks at."""
    h = mix64((np.uint64(w1) << np.uint64(32)) | np.uint64(w0)) ^ mix64(np.uint64(w2))
    return np.int64(h & np.uint64(slots.shape[0] - 1))


@njit(cache=True, inline="always")
def _slot(slots, w0, w1, w2, j):
    """The slot that holds the key (w0, w1, w2), or the empty slot where it would go, probing
    from its home slot ``j``."""
    mask = np.uint64(slots.shape[0] - 1)
    while True:
        if slots[j, 2] == _EMPTY or (slots[j, 0] == w0 and slots[j, 1] == w1 and slots[j, 2] == w2):
            return j
        j = np.int64((np.uint64(j) + np.uint64(1)) & mask)


_GROUP = 32  # rows keyed together before their probes (see _find)


@njit(cache=True)
def _find(slots, values, boards, out, slot_of, state):
    """Looks up every board. Found: its values go to ``out[k]`` (``state[k]`` 0), or, when its
    values are still to come (a repeat of a row of this batch), ``state[k]`` is 2. Not found:
    it is entered, its values NaN until :func:`_fill`, and ``state[k]`` is 1. ``slot_of[k]`` is
    its slot. Returns how many boards were entered.

    Rows go in groups: first the keys and home slots of a group, then its probes. With nothing
    but memory reads in the probes' loop the processor runs ahead to the next rows' reads while
    one waits: 70 ns a row on a table larger than the cache, where computing each key beside
    its probe took 190 (reading the home slots ahead as well took 170)."""
    added = 0
    n = boards.shape[0]
    keys = np.empty((_GROUP, 3), np.uint32)
    home = np.empty(_GROUP, np.int64)
    for lo in range(0, n, _GROUP):
        m = min(n - lo, _GROUP)
        for g in range(m):
            w0, w1, w2 = _key(boards, lo + g)
            keys[g, 0] = w0
            keys[g, 1] = w1
            keys[g, 2] = w2
            home[g] = _home(slots, w0, w1, w2)
        for g in range(m):
            k = lo + g
            w0, w1, w2 = keys[g, 0], keys[g, 1], keys[g, 2]
            j = _slot(slots, w0, w1, w2, home[g])
            slot_of[k] = j
            if slots[j, 2] == _EMPTY:
                slots[j, 0] = w0
                slots[j, 1] = w1
                slots[j, 2] = w2
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
def _rehash(slots, new_slots):
    for j in range(slots.shape[0]):
        if slots[j, 2] != _EMPTY:
            w0, w1, w2 = slots[j, 0], slots[j, 1], slots[j, 2]
            t = _slot(new_slots, w0, w1, w2, _home(new_slots, w0, w1, w2))
            new_slots[t] = slots[j]


class AfterstateTable:
    """Boards to float32[5], the table at most half full; emptied when it holds ``max_entries``
    before a batch. A slot is 32 bytes, its key's three words then its five values, so that a
    lookup reads one place of memory.

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
        self.slots = np.zeros((size, 8), np.uint32)
        self.slots[:, 2] = _EMPTY
        self.values = self.slots.view(np.float32)[:, 3:]  # the same memory, seen as the values
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def keys(self) -> np.ndarray:
        """The keys held, uint32[len, 3] (in slot order)."""
        return self.slots[self.slots[:, 2] != _EMPTY, :3]

    def clear(self) -> None:
        """Forget every entry (the table keeps its size)."""
        self.slots[:, 2] = _EMPTY
        self.count = 0

    def _room_for(self, n: int) -> None:
        """Make the table able to take ``n`` more entries: emptied once it holds
        ``max_entries`` (so it may pass them by one batch), then doubled while it would be more
        than half full."""
        if self.count >= self.max_entries:
            self.clear()
        size = len(self.slots)
        while 2 * (self.count + n) > size:
            size *= 2
        if size != len(self.slots):
            slots, count = self.slots, self.count
            self._allocate(size)
            _rehash(slots, self.slots)
            self.count = count

    def find(self, boards: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Looks up int8[N, 2, 25] boards, the values of those found written to ``out``
        (float32[N, 5]): returns ``(slots, state)``, each board's slot and its state, 0 found,
        1 the first row of a board that was not there (the caller values it and calls
        :meth:`fill`), 2 a repeat of such a row. Valid until the next call."""
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
        self._room_for(len(boards))
        slots = np.empty(len(boards), np.int64)
        state = np.empty(len(boards), np.int8)
        self.count += _find(self.slots, self.values, boards, out, slots, state)
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
    keeps_values = True  # and values a board once, however often a batch holds it

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
