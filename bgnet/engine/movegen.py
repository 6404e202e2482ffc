"""Legal move generation: a compiled (numba) kernel that turns positions and dice into afterstates.

The kernel works on many positions at once and writes every distinct afterstate of every position
into one flat array, with per-position offsets, so that self-play can encode them all and call the
network once. Nothing here loops in Python per move.

Rules applied (see ``README.md``): each die is a separate step; doubles are four steps; the
maximum number of dice must be used; if only one of two different dice can be used, the higher one
must be when it can; checkers on the bar enter before anything else moves; bearing off only with
all checkers home, a higher die bearing off from the highest point when the named point is empty.

An afterstate is written in the mover's orientation, ``[opponent_after, mover_after]``, exactly as
``gnubg_nn.moves`` keys it. Each also carries the steps that produced it as up to four
``(from, to)`` pairs in GNU Backgammon's numbering from the mover's side (25 = bar, 0 = off), padded
with -1.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# Zobrist keys: a 64-bit key per (side, index, count) so two candidate afterstates can be compared
# by one integer; equal hashes are then confirmed array by array, so a collision cannot merge moves.
_rng = np.random.default_rng(0x5EED)
ZOBRIST = _rng.integers(0, 2**63 - 1, size=(2, 25, 16), dtype=np.int64)

RAW_CAPACITY = 1 << 15  # raw (pre-dedupe) sequences for one position; far above any real count
_TABLE_BITS = 13
_TABLE_SIZE = 1 << _TABLE_BITS


@njit(cache=True, inline="always")
def _dest(me, opp, src, die, outside):
    """Destination index of moving a checker from ``src`` by ``die``; -1 bears off; -2 illegal.

    ``outside`` is how many of my checkers are outside my home board (indices 6..24).
    """
    if me[src] == 0:
        return -2
    if me[24] > 0 and src != 24:
        return -2
    d = src - die
    if d >= 0:
        if opp[23 - d] >= 2:
            return -2
        return d
    # Bearing off.
    if outside > 0:
        return -2
    if d == -1:
        return -1
    for k in range(src + 1, 6):
        if me[k] > 0:
            return -2
    return -1


@njit(cache=True)
def _generate_one(board, d1, d2, raw_boards, raw_moves, raw_depth, raw_die, raw_hash,
                  out_boards, out_moves, out_n, table_key, table_idx, table_stamp, stamp):
    """Append the distinct legal afterstates of one position to ``out_*``; return the new count."""
    me = board[1].copy()
    opp = board[0].copy()
    outside = 0
    for k in range(6, 25):
        outside += me[k]
    h = np.int64(0)
    for k in range(25):
        h ^= ZOBRIST[1, k, me[k]]
        h ^= ZOBRIST[0, k, opp[k]]

    doubles = d1 == d2
    nsteps = 4 if doubles else 2
    norders = 1 if doubles else 2
    dice = np.empty(4, np.int64)
    src_at = np.empty(4, np.int64)
    dst_at = np.empty(4, np.int64)
    hit_at = np.empty(4, np.int64)
    child = np.zeros(5, np.bool_)
    n_raw = 0
    max_depth = 0

    for order in range(norders):
        if doubles:
            dice[0] = dice[1] = dice[2] = dice[3] = d1
        elif order == 0:
            dice[0], dice[1] = d1, d2
        else:
            dice[0], dice[1] = d2, d1
        depth = 0
        src_at[0] = 25  # next source to try at this depth is src_at[depth] - 1
        child[0] = False
        while True:
            # Find the next legal step at this depth.
            found = False
            s = src_at[depth] - 1
            while s >= 0:
                dd = _dest(me, opp, s, dice[depth], outside)
                if dd != -2:
                    found = True
                    break
                s -= 1
            if found:
                child[depth] = True
                # Apply the step, keeping the hash current.
                src_at[depth] = s
                dst_at[depth] = dd
                h ^= ZOBRIST[1, s, me[s]]
                me[s] -= 1
                h ^= ZOBRIST[1, s, me[s]]
                if s >= 6:
                    outside -= 1
                hit_at[depth] = 0
                if dd >= 0:
                    h ^= ZOBRIST[1, dd, me[dd]]
                    me[dd] += 1
                    h ^= ZOBRIST[1, dd, me[dd]]
                    if dd >= 6:
                        outside += 1
                    j = 23 - dd
                    if opp[j] == 1:
                        hit_at[depth] = 1
                        h ^= ZOBRIST[0, j, 1] ^ ZOBRIST[0, j, 0]
                        opp[j] = 0
                        h ^= ZOBRIST[0, 24, opp[24]]
                        opp[24] += 1
                        h ^= ZOBRIST[0, 24, opp[24]]
                depth += 1
                if depth < nsteps:
                    # Doubles: canonical non-increasing source order; other rolls: any checker.
                    src_at[depth] = s + 1 if doubles else 25
                    child[depth] = False
                    continue
                # A full-length sequence: record it, then undo its last step below.
                _record(me, opp, h, depth, dice[0], src_at, dst_at, raw_boards, raw_moves,
                        raw_depth, raw_die, raw_hash, n_raw)
                n_raw += 1
                max_depth = depth
            else:
                # No step at this depth: the sequence so far is terminal.
                if not child[depth]:
                    if depth >= max_depth:
                        _record(me, opp, h, depth, dice[0], src_at, dst_at, raw_boards, raw_moves,
                                raw_depth, raw_die, raw_hash, n_raw)
                        n_raw += 1
                        max_depth = depth
                if depth == 0:
                    break
            # Undo the step at depth - 1 and continue scanning that depth.
            depth -= 1
            s = src_at[depth]
            dd = dst_at[depth]
            if dd >= 0:
                if hit_at[depth] == 1:
                    j = 23 - dd
                    h ^= ZOBRIST[0, 24, opp[24]]
                    opp[24] -= 1
                    h ^= ZOBRIST[0, 24, opp[24]]
                    opp[j] = 1
                    h ^= ZOBRIST[0, j, 1] ^ ZOBRIST[0, j, 0]
                h ^= ZOBRIST[1, dd, me[dd]]
                me[dd] -= 1
                h ^= ZOBRIST[1, dd, me[dd]]
                if dd >= 6:
                    outside -= 1
            h ^= ZOBRIST[1, s, me[s]]
            me[s] += 1
            h ^= ZOBRIST[1, s, me[s]]
            if s >= 6:
                outside += 1
            if n_raw >= raw_boards.shape[0] - 1:
                raise RuntimeError("move generation overflowed its scratch buffer")

    # Keep only sequences using the most dice; with one die of two, the higher one if possible.
    need_die = 0
    if not doubles and max_depth == 1:
        hi = max(d1, d2)
        for r in range(n_raw):
            if raw_depth[r] == 1 and raw_die[r] == hi:
                need_die = hi
                break

    for r in range(n_raw):
        if raw_depth[r] != max_depth:
            continue
        if need_die != 0 and raw_die[r] != need_die:
            continue
        # Deduplicate through an open-addressing table stamped per position (no clearing).
        key = raw_hash[r]
        slot = (key ^ (key >> 29)) & (_TABLE_SIZE - 1)
        dup = False
        while table_stamp[slot] == stamp:
            if table_key[slot] == key:
                other = table_idx[slot]
                same = True
                for a in range(2):
                    for b in range(25):
                        if out_boards[other, a, b] != raw_boards[r, a, b]:
                            same = False
                if same:
                    dup = True
                    break
            slot = (slot + 1) & (_TABLE_SIZE - 1)
        if dup:
            continue
        table_stamp[slot] = stamp
        table_key[slot] = key
        table_idx[slot] = out_n
        out_boards[out_n] = raw_boards[r]
        out_moves[out_n] = raw_moves[r]
        out_n += 1
    return out_n


@njit(cache=True, inline="always")
def _record(me, opp, h, depth, first_die, src_at, dst_at, raw_boards, raw_moves, raw_depth,
            raw_die, raw_hash, r):
    raw_boards[r, 0] = opp
    raw_boards[r, 1] = me
    for k in range(4):
        if k < depth:
            raw_moves[r, k, 0] = src_at[k] + 1
            raw_moves[r, k, 1] = dst_at[k] + 1 if dst_at[k] >= 0 else 0
        else:
            raw_moves[r, k, 0] = -1
            raw_moves[r, k, 1] = -1
    raw_depth[r] = depth
    raw_die[r] = first_die
    raw_hash[r] = h


@njit(cache=True)
def generate_batch(boards, dice):
    """All legal afterstates of ``boards[n]`` (int8[N, 2, 25]) with ``dice[n]`` (int[N, 2]).

    Returns ``(afterstates int8[M, 2, 25], moves int8[M, 4, 2], offsets int64[N + 1])``: the
    afterstates of position ``n`` are rows ``offsets[n]:offsets[n + 1]``. A position with no legal
    move gets exactly one afterstate, itself, with an empty move (all -1): the turn passes.
    """
    n = boards.shape[0]
    cap = max(64, n * 24)
    out_boards = np.empty((cap, 2, 25), np.int8)
    out_moves = np.empty((cap, 4, 2), np.int8)
    offsets = np.zeros(n + 1, np.int64)
    raw_boards = np.empty((RAW_CAPACITY, 2, 25), np.int8)
    raw_moves = np.empty((RAW_CAPACITY, 4, 2), np.int8)
    raw_depth = np.empty(RAW_CAPACITY, np.int64)
    raw_die = np.empty(RAW_CAPACITY, np.int64)
    raw_hash = np.empty(RAW_CAPACITY, np.int64)
    table_key = np.zeros(_TABLE_SIZE, np.int64)
    table_idx = np.zeros(_TABLE_SIZE, np.int64)
    table_stamp = np.full(_TABLE_SIZE, -1, np.int64)
    m = 0
    for i in range(n):
        # Grow the output so one more position (at most RAW_CAPACITY moves) always fits.
        if m + 4096 > out_boards.shape[0]:
            new_cap = max(out_boards.shape[0] * 2, m + 8192)
            nb = np.empty((new_cap, 2, 25), np.int8)
            nb[:m] = out_boards[:m]
            nm = np.empty((new_cap, 4, 2), np.int8)
            nm[:m] = out_moves[:m]
            out_boards, out_moves = nb, nm
        m = _generate_one(boards[i], dice[i, 0], dice[i, 1], raw_boards, raw_moves, raw_depth,
                          raw_die, raw_hash, out_boards, out_moves, m, table_key, table_idx,
                          table_stamp, i)
        offsets[i + 1] = m
    return out_boards[:m], out_moves[:m], offsets


def generate(board: np.ndarray, d1: int, d2: int) -> tuple[np.ndarray, np.ndarray]:
    """Afterstates and step lists of one position (a thin wrapper over :func:`generate_batch`).

    When no move is legal, both arrays are empty (unlike the batch kernel, which passes the turn
    by returning the position itself).
    """
    b = np.ascontiguousarray(board, dtype=np.int8).reshape(1, 2, 25)
    dice = np.array([[d1, d2]], dtype=np.int64)
    after, moves, _ = generate_batch(b, dice)
    if len(after) == 1 and moves[0, 0, 0] == -1:
        return after[:0], moves[:0]
    return after, moves
