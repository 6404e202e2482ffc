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
# The 21 distinct rolls (smaller die first) and each one's chance out of 36: what every
# expectation over the next roll (search, rollouts' luck, the bear-off tables) sums over.
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int64)
ROLL_WEIGHTS = np.array([1.0 if a == b else 2.0 for a, b in ROLLS]) / 36.0

# Sizes of the deduplication hash tables: a small one that stays in the fastest cache for
# ordinary positions (fewer than 256 candidates), and larger ones for a position with many
# candidates (open boards with doubles: 1 in 500 in random games), done again with them.
TABLE_SIZES = (1 << 9, 1 << 12, 1 << 16)
LARGE_TABLE = TABLE_SIZES[-1]
# What generate_positions says when it stops before the end.
NO_ROOM = 1  # the output buffers are full
MANY_CANDIDATES = 2  # the position needs the large table


# The highest set bit of a number below 2**26, from a table of the numbers below 2**13 (-1 for 0).
_TOP_BIT = np.array([m.bit_length() - 1 for m in range(1 << 13)], dtype=np.int8)

# Rows of the int64[SCRATCH_ROWS, 25] scratch that callers of generate_positions keep.
SCRATCH_ROWS = 12


@njit(cache=True, inline="always")
def _top_bit(m):
    if m >= 8192:
        return 13 + _TOP_BIT[m >> 13]
    return _TOP_BIT[m]


@njit(cache=True, inline="always")
def _sources(on_bar, occupied, blocked, die, outside):
    """Bit mask of the points (bit ``k``: index ``k``, 24 = the bar) a checker may leave with ``die``.

    ``occupied`` has bit ``k`` set when ``me[k] > 0``; ``blocked`` bit ``d`` when the opponent holds
    the mover's index ``d`` (two or more checkers); ``outside`` is how many of the mover's checkers
    are outside its home board (indices 6..24). A checker on the bar must enter first.
    """
    if on_bar:
        return np.int64(0) if (blocked >> (24 - die)) & 1 else np.int64(1 << 24)
    # Inside the board: from index die or higher to an index the opponent does not hold.
    legal = occupied & ~(blocked << die) & ~((np.int64(1) << die) - 1)
    if outside == 0:
        # Bearing off: with the exact number, or from the highest point with a higher one.
        legal |= occupied & (np.int64(1) << (die - 1))
        top = _top_bit(occupied)
        if 0 <= top < die - 1:
            legal |= np.int64(1) << top
    return legal


@njit(cache=True)
def generate_positions(boards, dice, start, out_boards, out_moves, out_depth, out_die, out_key, out_n,
                       offsets, tables, stamp, scratch):
    """Append the distinct legal afterstates of ``boards[start:]`` with ``dice`` to ``out_*`` from
    row ``out_n``, setting ``offsets[i + 1]`` to the end of position ``i``'s rows.

    Returns ``(i, out_n, stamp, status)``: ``status`` is 0 when every position is done, or
    :data:`NO_ROOM` (the ``out_*`` buffers are full) or :data:`MANY_CANDIDATES` (the position needs a
    larger table) for position ``i``, whose rows are not written (``out_n`` ends position ``i - 1``).
    ``tables`` is int64[T, 3] (T a power of two): the deduplication hash table, an entry a key, a
    row and a stamp, live when its stamp is the position's; each position takes the next
    ``stamp``, so the table is never cleared. ``scratch`` is int64[SCRATCH_ROWS, 25].

    Candidates are deduplicated as they are found, keyed by (afterstate, dice used, first die),
    so that the "most dice" and "higher die" filters can still be applied afterwards. The legal
    sources of each step are a bit mask (:func:`_sources`), tried from the bar down. Everything is
    written out in this one loop over positions, no helper taking arrays: numba counts references
    to an array passed to a function with atomic instructions, which cost more than a position's
    candidates.
    """
    me = scratch[0]
    opp = scratch[1]
    steps_dice = scratch[2]
    src_at = scratch[3]
    dst_at = scratch[4]
    hit_at = scratch[5]
    has_step = scratch[6]  # whether any step was legal at this depth (0: the sequence may end here)
    orig_me = scratch[7]
    orig_opp = scratch[8]
    untried = scratch[9]  # the legal sources at this depth not tried yet, a bit mask
    occupied_at = scratch[10]  # the mover's occupied points before the step at this depth
    tmask = tables.shape[0] - 1
    most_candidates = tables.shape[0] // 2
    cap = min(out_boards.shape[0], out_moves.shape[0], out_depth.shape[0], out_die.shape[0],
              out_key.shape[0])

    for i in range(start, boards.shape[0]):
        d1, d2 = dice[i, 0], dice[i, 1]
        outside = 0
        occupied = np.int64(0)
        blocked = np.int64(0)  # constant: a hit takes a blot, never a point made of two checkers
        h = np.int64(0)
        for k in range(25):
            me[k] = orig_me[k] = boards[i, 1, k]
            opp[k] = orig_opp[k] = boards[i, 0, k]
            h ^= ZOBRIST[1, k, me[k]]
            h ^= ZOBRIST[0, k, opp[k]]
            if k >= 6:
                outside += me[k]
            if me[k] > 0:
                occupied |= np.int64(1) << k
            if k < 24 and boards[i, 0, 23 - k] >= 2:
                blocked |= np.int64(1) << k
        orig_outside = outside
        orig_occupied = occupied

        doubles = d1 == d2
        nsteps = 4 if doubles else 2
        norders = 1 if doubles else 2
        first_n = out_n
        max_depth = 0

        for order in range(norders):
            if doubles:
                steps_dice[0] = steps_dice[1] = steps_dice[2] = steps_dice[3] = d1
            elif order == 0:
                steps_dice[0], steps_dice[1] = d1, d2
            else:
                steps_dice[0], steps_dice[1] = d2, d1
            # The second order of a non-double repeats the first order's move when its two steps
            # are by different checkers and its second step was already legal before the first:
            # such second steps are skipped (the move is there, from order one).
            repeats = np.int64(0)
            if order == 1:
                repeats = _sources(orig_me[24] > 0, orig_occupied, blocked, steps_dice[1], orig_outside)
            depth = 0
            untried[0] = _sources(me[24] > 0, occupied, blocked, steps_dice[0], outside)
            has_step[0] = untried[0] != 0
            while True:
                found = untried[depth] != 0
                if found:
                    s = _top_bit(untried[depth])
                    untried[depth] &= ~(np.int64(1) << s)
                    die = steps_dice[depth]
                    dd = s - die if s >= die else -1
                    # Apply the step, keeping the hash current.
                    occupied_at[depth] = occupied
                    src_at[depth] = s
                    dst_at[depth] = dd
                    h ^= ZOBRIST[1, s, me[s]]
                    me[s] -= 1
                    h ^= ZOBRIST[1, s, me[s]]
                    if me[s] == 0:
                        occupied &= ~(np.int64(1) << s)
                    if s >= 6:
                        outside -= 1
                    hit_at[depth] = 0
                    if dd >= 0:
                        h ^= ZOBRIST[1, dd, me[dd]]
                        me[dd] += 1
                        h ^= ZOBRIST[1, dd, me[dd]]
                        occupied |= np.int64(1) << dd
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
                        legal = _sources(me[24] > 0, occupied, blocked, steps_dice[depth], outside)
                        if doubles:  # canonical non-increasing source order
                            legal &= (np.int64(2) << s) - 1
                        has_step[depth] = legal != 0
                        if order == 1 and depth == 1:
                            legal &= ~(repeats & ~(np.int64(1) << dd)) if dd >= 0 else ~repeats
                        untried[depth] = legal
                        continue
                    # A full-length sequence: record it, then undo its last step below.
                    record, die_used = True, 0
                else:
                    # No step at this depth: the sequence so far is terminal. Only one-die plays
                    # of a non-double need to remember which die they used.
                    record = has_step[depth] == 0 and depth >= max_depth
                    die_used = steps_dice[0] if (depth == 1 and not doubles) else 0
                if record:
                    # Write the afterstate unless the same (afterstate, depth, first die) is there.
                    key = h ^ DEPTH_SALT[depth] ^ DIE_SALT[die_used]
                    slot = (key ^ (key >> 29)) & tmask
                    seen = False
                    while tables[slot, 2] == stamp:
                        if tables[slot, 0] == key:
                            other = tables[slot, 1]
                            seen = True
                            for b in range(25):
                                if out_boards[other, 1, b] != me[b] or out_boards[other, 0, b] != opp[b]:
                                    seen = False
                                    break
                            if seen:
                                break
                        slot = (slot + 1) & tmask
                    if not seen:
                        if out_n >= cap:
                            return i, first_n, stamp + 1, NO_ROOM
                        if out_n - first_n == most_candidates:
                            return i, first_n, stamp + 1, MANY_CANDIDATES
                        tables[slot, 0] = key
                        tables[slot, 1] = out_n
                        tables[slot, 2] = stamp
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
                        out_die[out_n] = die_used
                        out_key[out_n] = key
                        out_n += 1
                    max_depth = depth
                if not found and depth == 0:
                    break
                # Undo the step at depth - 1 and continue with the untried sources of that depth.
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
                occupied = occupied_at[depth]
        stamp += 1

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
                for b in range(25):
                    out_boards[keep, 0, b] = out_boards[r, 0, b]
                    out_boards[keep, 1, b] = out_boards[r, 1, b]
                for k in range(4):
                    out_moves[keep, k, 0] = out_moves[r, k, 0]
                    out_moves[keep, k, 1] = out_moves[r, k, 1]
            keep += 1
        if need_die == 0 and not doubles and max_depth == 1:
            # Neither order distinguishes the die now: the same afterstate may appear for each
            # die (e.g. bearing off the last checker with either number); keep one.
            keep = _dedupe_boards(out_boards, out_moves, first_n, keep)
        out_n = keep
        offsets[i + 1] = out_n
    return boards.shape[0], out_n, stamp, 0


@njit(cache=True)
def new_tables(size):
    """Empty deduplication tables for :func:`generate_positions` (``size`` a power of two)."""
    tables = np.zeros((size, 3), np.int64)
    tables[:, 2] = -1
    return tables


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
    tables = new_tables(TABLE_SIZES[0])
    larger = new_tables(1)  # made when a position needs it
    scratch = np.zeros((SCRATCH_ROWS, 25), np.int64)
    m = 0
    i = 0
    stamp = 0
    level = 0  # 1, 2: position i needs a larger table
    while i < n:
        if level == 0:
            i, m, stamp, status = generate_positions(boards, dice, i, out_boards, out_moves, out_depth,
                                                     out_die, out_key, m, offsets, tables, stamp, scratch)
        else:
            # One position with hundreds of candidates (an open board with doubles), alone.
            if larger.shape[0] != TABLE_SIZES[level]:
                larger = new_tables(TABLE_SIZES[level])
            _, got, _, status = generate_positions(boards[i:i + 1], dice[i:i + 1], 0, out_boards, out_moves,
                                                   out_depth, out_die, out_key, m, offsets[i:i + 2], larger,
                                                   stamp, scratch)
            stamp += 1
            if status == 0:
                i, m, level = i + 1, got, 0
        if status == MANY_CANDIDATES:
            if level == len(TABLE_SIZES) - 1:
                raise RuntimeError("a position has more candidate moves than the largest table holds")
            level += 1
        if status == NO_ROOM:
            # Out of room: double the buffers (keeping finished positions) and redo position i.
            new_cap = 2 * out_boards.shape[0]
            nb = np.empty((new_cap, 2, 25), np.int8)
            nb[:m] = out_boards[:m]
            nm = np.empty((new_cap, 4, 2), np.int8)
            nm[:m] = out_moves[:m]
            out_boards, out_moves = nb, nm
            out_depth = np.empty(new_cap, np.int64)
            out_die = np.empty(new_cap, np.int64)
            out_key = np.empty(new_cap, np.int64)
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
