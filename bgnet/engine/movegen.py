"""Legal move generation: a compiled (numba) kernel that turns positions and dice into afterstates.

The kernel works on many positions at once and writes every distinct afterstate of every position
into one flat array, with per-position offsets, so that self-play can encode them all and call the
network once. Nothing here loops in Python per move.

Rules applied (see ``README.md``): each die is a separate step; doubles are four steps; the
maximum number of dice must be used; if only one of two different dice can be used, the higher one
must be when it can; checkers on the bar enter before anything else moves; bearing off only with
all checkers home, a higher die bearing off from the highest point when the named point is empty.

An afterstate is written in the mover's orientation, ``[opponent_after, mover_after]``, exactly as
``gnubg_nn.moves`` keys it; the position the opponent then faces is its
:func:`~bgnet.engine.board.swap` (what :func:`bgnet.engine.legal_moves` gives as the next Position
ID). Each also carries the steps that produced it as up to four ``(from, to)`` pairs in GNU
Backgammon's numbering from the mover's side (25 = bar, 0 = off), padded
with -1.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# Zobrist keys: a 64-bit key per (side, index, count) so two candidate afterstates can be compared
# by one integer; equal hashes are then confirmed array by array, so a collision cannot merge moves.
_rng = np.random.default_rng(0x5EED)
ZOBRIST = _rng.integers(0, 2**63 - 1, size=(2, 25, 16), dtype=np.int64)

DEPTH_SALT = _rng.integers(0, 2**63 - 1, size=5, dtype=np.int64)
DIE_SALT = _rng.integers(0, 2**63 - 1, size=7, dtype=np.int64)
# Deduplication hash tables: a small one that stays in cache for ordinary positions, and a
# large one that a position switches to when it has very many candidates (open doubles).
# The 21 distinct rolls (smaller die first) and each one's chance out of 36: what every
# expectation over the next roll (search, rollouts' luck, the bear-off tables) sums over.
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int64)
ROLL_WEIGHTS = np.array([1.0 if a == b else 2.0 for a, b in ROLLS]) / 36.0

SMALL_TABLE = 1 << 12
_LARGE_TABLE = 1 << 16


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
def generate_one(board, d1, d2, out_boards, out_moves, out_depth, out_die, out_key, out_n,
                  tables, stamp, scratch):
    """Append the distinct legal afterstates of one position to ``out_*``; return the new count.

    Candidates are deduplicated as they are found, keyed by (afterstate, dice used, first die),
    so that the "most dice" and "higher die" filters can still be applied afterwards.
    """
    me = scratch[0]
    opp = scratch[1]
    dice = scratch[2]
    src_at = scratch[3]
    dst_at = scratch[4]
    hit_at = scratch[5]
    child = scratch[6]
    orig_me = scratch[7]
    orig_opp = scratch[8]
    outside = 0
    h = np.int64(0)
    for k in range(25):
        me[k] = orig_me[k] = board[1, k]
        opp[k] = orig_opp[k] = board[0, k]
        h ^= ZOBRIST[1, k, me[k]]
        h ^= ZOBRIST[0, k, opp[k]]
        if k >= 6:
            outside += me[k]
    orig_outside = outside

    doubles = d1 == d2
    nsteps = 4 if doubles else 2
    norders = 1 if doubles else 2
    first_n = out_n
    max_depth = 0
    tkey, tidx, tstamp = tables

    for order in range(norders):
        if doubles:
            dice[0] = dice[1] = dice[2] = dice[3] = d1
        elif order == 0:
            dice[0], dice[1] = d1, d2
        else:
            dice[0], dice[1] = d2, d1
        depth = 0
        src_at[0] = 25  # next source to try at this depth is src_at[depth] - 1
        child[0] = 0
        while True:
            # Find the next legal step at this depth.
            found = False
            s = src_at[depth] - 1
            while s >= 0:
                dd = _dest(me, opp, s, dice[depth], outside)
                if dd != -2:
                    if (order == 1 and depth == 1 and s != dst_at[0]
                            and _dest(orig_me, orig_opp, s, dice[1], orig_outside) != -2):
                        # The second order of a non-double repeats the first order's move when
                        # the two steps are by different checkers and this step was already
                        # legal before the other: skip it (it is there, from order one).
                        child[depth] = 1
                        s -= 1
                        continue
                    found = True
                    break
                s -= 1
            if found:
                child[depth] = 1
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
                    child[depth] = 0
                    continue
                # A full-length sequence: record it, then undo its last step below.
                record, die_used = True, 0
            else:
                # No step at this depth: the sequence so far is terminal. Only one-die plays of
                # a non-double need to remember which die they used.
                record = child[depth] == 0 and depth >= max_depth
                die_used = dice[0] if (depth == 1 and not doubles) else 0
            if record:
                out_n = _record(me, opp, h, depth, die_used, src_at, dst_at, out_boards, out_moves,
                                out_depth, out_die, out_key, out_n, tkey, tidx, tstamp, stamp)
                if out_n < 0:
                    return -1
                max_depth = depth
                if out_n - first_n == SMALL_TABLE // 2 and tkey.shape[0] == SMALL_TABLE:
                    tkey, tidx, tstamp = _large_tables()
                    _rehash(out_key, first_n, out_n, tkey, tidx, tstamp, stamp)
            if not found and depth == 0:
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

    # Keep only moves using the most dice; with one die of two, the higher one if possible.
    need_die = 0
    if not doubles and max_depth == 1:
        hi = max(d1, d2)
        for r in range(first_n, out_n):
            if out_die[r] == hi:
                need_die = hi
                break
    keep = first_n
    for r in range(first_n, out_n):
        if out_depth[r] != max_depth or (need_die != 0 and out_die[r] != need_die):
            continue
        if keep != r:
            out_boards[keep] = out_boards[r]
            out_moves[keep] = out_moves[r]
        keep += 1
    if need_die == 0 and not doubles and max_depth == 1:
        # Neither order distinguishes the die now: the same afterstate may appear for each die
        # (e.g. bearing off the last checker with either number); keep one.
        keep = _dedupe_boards(out_boards, out_moves, first_n, keep)
    return keep


@njit(cache=True)
def _large_tables():
    # Only positions with thousands of candidates (open boards with doubles) need these.
    return (np.zeros(_LARGE_TABLE, np.int64), np.zeros(_LARGE_TABLE, np.int64),
            np.full(_LARGE_TABLE, -1, np.int64))


@njit(cache=True)
def _rehash(out_key, lo, hi, tkey, tidx, tstamp, stamp):
    mask = tkey.shape[0] - 1
    for r in range(lo, hi):
        key = out_key[r]
        slot = (key ^ (key >> 29)) & mask
        while tstamp[slot] == stamp:
            slot = (slot + 1) & mask
        tstamp[slot] = stamp
        tkey[slot] = key
        tidx[slot] = r


@njit(cache=True)
def _dedupe_boards(out_boards, out_moves, lo, hi):
    """Remove repeated boards among rows lo..hi (few rows: only in one-die positions)."""
    keep = lo
    for r in range(lo, hi):
        dup = False
        for q in range(lo, keep):
            same = True
            for a in range(2):
                for b in range(25):
                    if out_boards[q, a, b] != out_boards[r, a, b]:
                        same = False
                        break
                if not same:
                    break
            if same:
                dup = True
                break
        if not dup:
            if keep != r:
                out_boards[keep] = out_boards[r]
                out_moves[keep] = out_moves[r]
            keep += 1
    return keep


@njit(cache=True, inline="always")
def _record(me, opp, h, depth, first_die, src_at, dst_at, out_boards, out_moves, out_depth,
            out_die, out_key, out_n, table_key, table_idx, table_stamp, stamp):
    """Write the current afterstate unless the same (afterstate, depth, first die) is there."""
    key = h ^ DEPTH_SALT[depth] ^ DIE_SALT[first_die]
    mask = table_key.shape[0] - 1
    slot = (key ^ (key >> 29)) & mask
    while table_stamp[slot] == stamp:
        if table_key[slot] == key:
            other = table_idx[slot]
            same = True
            for b in range(25):
                if out_boards[other, 1, b] != me[b] or out_boards[other, 0, b] != opp[b]:
                    same = False
                    break
            if same:
                return out_n
        slot = (slot + 1) & mask
    if out_n >= out_boards.shape[0] or out_n >= out_depth.shape[0]:
        return -1  # out of room: the caller grows the buffers and generates this position again
    table_stamp[slot] = stamp
    table_key[slot] = key
    table_idx[slot] = out_n
    for b in range(25):
        out_boards[out_n, 0, b] = opp[b]
        out_boards[out_n, 1, b] = me[b]
    for k in range(4):
        if k < depth:
            out_moves[out_n, k, 0] = src_at[k] + 1
            out_moves[out_n, k, 1] = dst_at[k] + 1 if dst_at[k] >= 0 else 0
        else:
            out_moves[out_n, k, 0] = -1
            out_moves[out_n, k, 1] = -1
    out_depth[out_n] = depth
    out_die[out_n] = first_die
    out_key[out_n] = key
    return out_n + 1


@njit(cache=True)
def generate_batch(boards, dice):
    """All legal afterstates of ``boards[n]`` (int8[N, 2, 25]) with ``dice[n]`` (int[N, 2]).

    Returns ``(afterstates int8[M, 2, 25], moves int8[M, 4, 2], offsets int64[N + 1])``: the
    afterstates of position ``n`` are rows ``offsets[n]:offsets[n + 1]``. A position with no legal
    move gets exactly one afterstate, itself, with an empty move (all -1): the turn passes.
    """
    n = boards.shape[0]
    cap = 64 + n * 24  # about 15 moves a position on average; grown when a position needs more
    out_boards = np.empty((cap, 2, 25), np.int8)
    out_moves = np.empty((cap, 4, 2), np.int8)
    out_depth = np.empty(cap, np.int64)
    out_die = np.empty(cap, np.int64)
    out_key = np.empty(cap, np.int64)
    offsets = np.zeros(n + 1, np.int64)
    tables = (np.zeros(SMALL_TABLE, np.int64), np.zeros(SMALL_TABLE, np.int64),
              np.full(SMALL_TABLE, -1, np.int64))
    scratch = np.zeros((9, 25), np.int64)
    m = 0
    i = 0
    stamp = 0
    while i < n:
        got = generate_one(boards[i], dice[i, 0], dice[i, 1], out_boards, out_moves, out_depth,
                            out_die, out_key, m, tables, stamp, scratch)
        stamp += 1  # a fresh stamp also for a retried position: its half-filled entries are stale
        if got < 0:
            # Out of room: double the buffers (keeping finished positions) and redo this one.
            new_cap = 2 * out_boards.shape[0]
            nb = np.empty((new_cap, 2, 25), np.int8)
            nb[:m] = out_boards[:m]
            nm = np.empty((new_cap, 4, 2), np.int8)
            nm[:m] = out_moves[:m]
            out_boards, out_moves = nb, nm
            out_depth = np.empty(new_cap, np.int64)
            out_die = np.empty(new_cap, np.int64)
            out_key = np.empty(new_cap, np.int64)
            continue
        m = got
        offsets[i + 1] = m
        i += 1
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
