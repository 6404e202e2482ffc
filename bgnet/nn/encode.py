"""Input encodings of positions for the value network (compiled with numba, batched).

Every encoding describes a position FROM THE VIEW OF THE SIDE ON ROLL, before it rolls: the
features of ``board[1]`` come first, then those of ``board[0]`` (see :mod:`bgnet.engine.board`).
Afterstates (``[opponent, mover_after]``, as the move generator writes them) are encoded by
:func:`encode_afterstates` as the position with the opponent on roll, without copying the swap.

Encodings (name -> feature count in :data:`ENCODINGS`):

``"tesauro"`` (198)
    Tesauro's raw inputs. For each side (on-roll side at 0..97, opponent at 98..195), for each of
    its own points 1..24 (index ``4 * i`` within the block) four truncated-unary units:
    ``n >= 1``, ``n >= 2``, ``n >= 3`` and ``(n - 3) / 2`` when ``n > 3``; then the bar as
    ``n / 2`` (unit 96 of the block) and checkers borne off as ``n / 15`` (unit 97).
    In TD-Gammon the last two units said whose turn it was. In the on-roll view that is always the
    first block, so a turn unit would be a constant; they carry two facts a shallow net finds hard
    to read off the raw counts instead:
    unit 196 = 1 when contact is over (a race), unit 197 = 1 when the side on roll has all its
    checkers home (it may bear off).

``"extended"`` (221)
    The 198 ``"tesauro"`` inputs, then :data:`EXTRA_PER_SIDE` hand-made features for the side on
    roll (198..208), the same for the opponent (209..219) and one shared feature (220), in the
    spirit of GNU Backgammon's contact inputs. Per side S (O is the other side):

    ====  =================================================================================
    +0    pip count / 167 (167 = the starting count)
    +1    blots of S (single checkers on points 1..24) / 5
    +2    shots: rolls out of 36 with which O, were it to roll now, could hit a blot of S
          (direct and indirect, through open intermediate points, entering from the bar
          first) / 36
    +3    length of S's longest prime (run of consecutive made points) / 6, capped at 1
    +4    where that prime is: its rearmost point (1..24) / 24; 0 with no made point
    +5    home-board points made (points 1..6 with two or more checkers) / 6
    +6    anchors: points made in O's home board (S's points 19..24) / 3
    +7    checkers back: S's checkers in O's home board or on the bar / 5
    +8    escapes: rolls out of 36 letting S's rearmost checker pass every point O holds in
          the 12 points in front of it / 36 (36 when nothing there blocks it)
    +9    checkers home or borne off / 15 (bear-off progress)
    +10   crossovers still needed to bring every checker home / 30 (a checker on point p
          outside home needs ``(p - 1) // 6`` crossings; the bar counts 4)
    ====  =================================================================================

    The shared feature at 220 is the pip lead of the side on roll, (O pips - S pips) / 100. The
    race indicator is unit 196, the number borne off units 97 and 195.

``"contact"`` (227)
    The 221 ``"extended"`` inputs, then :data:`CONTACT_PER_SIDE` more contact features for the
    side on roll (221..223) and the same for the opponent (224..226). Per side S:

    ====  =================================================================================
    +0    pip loss: over O's 36 rolls, the mean of the most pips one hit of a blot of S can
          cost it (a checker on S's point p sent to the bar loses 25 - p pips; 0 for a roll
          that hits nothing), / 24 (the rolls counted as for the shots, +2 above)
    +1    containment: 1 - (the fewest escapes, as +8 counts them, of a lone checker of S on
          any of its points 13..24, O's points in S's home board left out) / 36: how well O's
          points hold a checker of S back, wherever S's checkers are
    +2    contact left: the pips S must move until every checker of S is past O's rearmost
          checker (on the bar, O's rearmost is behind all of S) / 167; 0 in a race
    ====  =================================================================================

    A net trained on ``"extended"`` grows into ``"contact"`` with the new inputs' weights at
    zero (:func:`bgnet.nn.widen.grow_inputs`): the same function, to train on.

The shot count applies the dice rules a hitter meets in practice (bar entry first, blocked
landing points, doubles as four steps); it ignores the rare cases where a hitting play would break
the rule that as many dice as possible must be played.

>>> from bgnet.engine.board import start_position
>>> x = encode(start_position()[None], "tesauro")
>>> x.shape, float(x[0, 4 * 5]), float(x[0, 4 * 5 + 3])  # my 6-point: 5 checkers
((1, 198), 1.0, 1.0)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.engine.board import game_results, race_mask  # noqa: F401  (re-exported)
from bgnet.engine.board import race_of_sides as _race

ENCODINGS = {"tesauro": 198, "extended": 221, "contact": 227}
_KIND = {"tesauro": 0, "extended": 1, "contact": 2}

TESAURO_SIDE = 98  # units per side in the raw block
RACE_UNIT = 196
CAN_BEAR_OFF_UNIT = 197
EXTRA_PER_SIDE = 11
EXTRA_START = 198
CONTACT_PER_SIDE = 3
CONTACT_START = EXTRA_START + 2 * EXTRA_PER_SIDE + 1  # after the extended inputs' pip lead

_ALL_POINTS = (1 << 24) - 1  # bits 0..23: the points of the board, no bar


def num_features(name: str) -> int:
    """Number of input features of encoding ``name``.

    >>> num_features("tesauro")
    198
    """
    _check_name(name)
    return ENCODINGS[name]


def extends(name: str, base: str) -> bool:
    """Whether the features of encoding ``name`` begin with all of ``base``'s, in order (each
    encoding extends the ones before it: tesauro, extended, contact).

    >>> extends("contact", "extended"), extends("extended", "contact")
    (True, False)
    """
    _check_name(name)
    _check_name(base)
    return _KIND[base] <= _KIND[name]


def _check_name(name) -> None:
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; valid encodings: {', '.join(sorted(ENCODINGS))}")


def _prepare(boards, name, out, what):
    """Validate arguments, return (int8 boards [N, 2, 25], out float32 [N, F])."""
    _check_name(name)
    arr = np.asarray(boards)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != (2, 25):
        raise ValueError(f"{what} must have shape (N, 2, 25) (or one (2, 25) board); got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what} must hold integer checker counts; got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int8)
    shape = (arr.shape[0], ENCODINGS[name])
    if out is None:
        out = np.empty(shape, np.float32)
    elif not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float32 \
            or not out.flags.c_contiguous or not out.flags.writeable:
        got = (getattr(out, "shape", None), getattr(out, "dtype", type(out)))
        raise ValueError(f"out must be a writeable C-contiguous float32 array of shape {shape}; got {got}")
    return arr, out


def encode(boards: np.ndarray, name: str, out: np.ndarray | None = None) -> np.ndarray:
    """Encode positions (int8[N, 2, 25], side on roll in ``board[1]``) as float32[N, F].

    ``out`` (float32[N, F], C-contiguous) is filled and returned when given, so a caller can reuse
    one buffer. A single (2, 25) board is encoded as a batch of one.
    """
    arr, out = _prepare(boards, name, out, "boards")
    _encode_batch(arr, _KIND[name], 1, out)
    return out


def encode_afterstates(after: np.ndarray, name: str, out: np.ndarray | None = None) -> np.ndarray:
    """Encode afterstates ``[opponent, mover_after]`` as the positions with the opponent on roll.

    Equal to ``encode(after[:, ::-1], name)`` without materialising the swapped copy.
    """
    arr, out = _prepare(after, name, out, "afterstates")
    _encode_batch(arr, _KIND[name], 0, out)
    return out


def encoding_kind(name: str) -> int:
    """The number by which compiled callers of :func:`encode_compiled` name an encoding.

    >>> encoding_kind("tesauro"), encoding_kind("contact")
    (0, 2)
    """
    _check_name(name)
    return _KIND[name]


@njit(cache=True)
def encode_compiled(boards, kind, roll_row, out):
    """The kernel behind :func:`encode` (``roll_row`` 1) and :func:`encode_afterstates`
    (``roll_row`` 0), for compiled code that has checked its arrays: int8[N, 2, 25] boards into
    float32[N, F] ``out``, ``kind`` from :func:`encoding_kind`."""
    _encode_batch(boards, kind, roll_row, out)


# ---------------------------------------------------------------------------------------------
# Compiled kernels. ``me`` is the side whose view is encoded (on roll), ``opp`` the other; both
# are 25-long rows in their own numbering.


@njit(cache=True)
def _encode_batch(boards, kind, roll_row, out):
    # Plain 2-D/3-D indexing (no per-row views) keeps this loop at memory speed.
    opp_row = 1 - roll_row
    for k in range(boards.shape[0]):
        _tesauro_side(boards, k, roll_row, out, 0)
        _tesauro_side(boards, k, opp_row, out, TESAURO_SIDE)
        me = boards[k, roll_row]
        opp = boards[k, opp_row]
        out[k, RACE_UNIT] = 1.0 if _race(me, opp) else 0.0
        out[k, CAN_BEAR_OFF_UNIT] = 1.0 if outside_checkers(me) == 0 else 0.0
        if kind >= 1:
            extra_features(me, opp, out, k)


@njit(cache=True, inline="always")
def extra_features(me, opp, out, k):
    """Every extra feature of the view where ``me`` is on roll into ``out[k, EXTRA_START:]``: both
    sides' (:func:`_extra_side`) and the pip lead, then, where ``out`` has room for them (the
    ``"contact"`` encoding), both sides' contact features (:func:`_contact_side`)."""
    my_pips, my_loss, opp_made = _extra_side(me, opp, out, k, EXTRA_START)
    opp_pips, opp_loss, my_made = _extra_side(opp, me, out, k, EXTRA_START + EXTRA_PER_SIDE)
    out[k, EXTRA_START + 2 * EXTRA_PER_SIDE] = (opp_pips - my_pips) / 100.0
    if out.shape[1] > CONTACT_START:
        _contact_side(me, opp, my_loss, opp_made, out, k, CONTACT_START)
        _contact_side(opp, me, opp_loss, my_made, out, k, CONTACT_START + CONTACT_PER_SIDE)


@njit(cache=True, inline="always")
def _tesauro_side(boards, k, r, out, base):
    total = 0
    for i in range(24):
        n = boards[k, r, i]
        total += n
        j = base + 4 * i
        out[k, j] = 1.0 if n >= 1 else 0.0
        out[k, j + 1] = 1.0 if n >= 2 else 0.0
        out[k, j + 2] = 1.0 if n >= 3 else 0.0
        out[k, j + 3] = (n - 3) * 0.5 if n > 3 else 0.0
    nbar = boards[k, r, 24]
    out[k, base + 96] = nbar * 0.5
    out[k, base + 97] = (15 - total - nbar) / 15.0


@njit(cache=True, inline="always")
def outside_checkers(side):
    n = 0
    for i in range(6, 25):
        n += side[i]
    return n


@njit(cache=True, inline="always")
def _pips(side):
    p = 0
    for i in range(25):
        p += (i + 1) * side[i]
    return p


@njit(cache=True)
def _extra_side(s, o, out, k, base):
    """The EXTRA_PER_SIDE features of side ``s`` against ``o`` (see the module docstring);
    returns S's pip count, its pip loss summed over O's 36 rolls (:func:`_shots`) and the points
    O holds (bit i: S's point i + 1), which the contact features reuse."""
    # Bit masks in S's numbering (bit i = S's point i + 1). O's checker on its index j sits on
    # S's index 23 - j, so O moves UP this numbering and enters from the bar onto bit d - 1.
    # The masks are built without branches: which points hold blots is as good as random, and
    # mispredicted branches made this loop the costliest part of the features.
    blots = np.int64(0)
    made = np.int64(0)
    o_here = np.int64(0)  # points where O has checkers
    o_made = np.int64(0)  # points O holds
    n_blots = 0
    pips = 0
    rear = -1  # S's rearmost checker: 24 on the bar
    for i in range(24):
        n = s[i]
        blots |= np.int64(n == 1) << i
        made |= np.int64(n >= 2) << i
        n_blots += n == 1
        pips += (i + 1) * n
        rear = i if n > 0 else rear
        m = o[23 - i]
        o_here |= np.int64(m > 0) << i
        o_made |= np.int64(m >= 2) << i
    nbar = s[24]
    outside = nbar
    cross = 4 * nbar
    for i in range(6, 24):
        outside += s[i]
        cross += (i // 6) * s[i]
    back = nbar
    for i in range(18, 24):
        back += s[i]
    if nbar > 0:
        rear = 24

    pips += 25 * nbar
    out[k, base + 0] = pips / 167.0
    out[k, base + 1] = n_blots / 5.0
    shots, loss = _shots(o_here, o[24], ~made & _ALL_POINTS, blots) if n_blots > 0 else (0, 0)
    out[k, base + 2] = shots / 36.0
    length, prime_rear = _longest_prime(made)
    out[k, base + 3] = min(length, 6) / 6.0
    out[k, base + 4] = (prime_rear + 1) / 24.0 if length > 0 else 0.0
    out[k, base + 5] = _popcount(made & 0x3F) / 6.0
    out[k, base + 6] = _popcount(made >> 18) / 3.0
    out[k, base + 7] = back / 5.0
    out[k, base + 8] = _escapes(rear, nbar, o_made) / 36.0
    out[k, base + 9] = (15 - outside) / 15.0
    out[k, base + 10] = cross / 30.0
    return pips, loss, o_made


@njit(cache=True)
def _contact_side(s, o, loss, o_made, out, k, base):
    """The CONTACT_PER_SIDE features of side ``s`` against ``o`` (see the module docstring);
    ``loss``: S's pip loss summed over O's 36 rolls; ``o_made``: the points O holds, in S's
    numbering (both from :func:`_extra_side`)."""
    out[k, base + 0] = loss / (36.0 * 24.0)
    # O's points in S's home board block nothing a containment is about: a checker that has
    # come that far is home.
    blocks = o_made & ~np.int64(0x3F)
    fewest = 36
    for start in range(12, 24):
        fewest = min(fewest, _escapes(start, 0, blocks))
    out[k, base + 1] = (36 - fewest) / 36.0
    # O's rearmost checker on S's numbering: O's index j is S's 23 - j, O's bar (24) is -1.
    o_rear = -2  # no checker of O left: no contact
    for j in range(25):
        o_rear = 23 - j if o[j] > 0 else o_rear
    left = 0
    if o_rear > -2:
        for i in range(o_rear if o_rear > 0 else 0, 25):
            left += s[i] * (i - o_rear + 1)
    out[k, base + 2] = left / 167.0


@njit(cache=True)
def _shots(h, nbar, open_, blots):
    """(rolls out of 36 with which the hitter (checkers ``h``, ``nbar`` on its bar, moving UP the
    bit numbering, entering on bit die - 1) can hit a bit of ``blots``, the pips those rolls'
    costliest hits take from the blots' owner summed over the 36); ``open_`` = points it may land
    on. A blot on bit i (its owner's point i + 1) sent to the bar loses 24 - i pips, so each
    roll's costliest hit is on its lowest hittable bit."""
    count = 0
    loss = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            if d1 == d2:
                hit = _double_hit_mask(h, nbar, open_, blots, d1)
                ways = 1
            else:
                hit = _roll_hit_mask(h, nbar, open_, blots, d1, d2)
                ways = 2
            if hit:
                count += ways
                loss += ways * (24 - _popcount((hit & -hit) - 1))
    return count, loss


@njit(cache=True, inline="always")
def _roll_hit_mask(h, nbar, open_, blots, d1, d2):
    """The bits of ``blots`` that some play of the roll d1-d2 (not a double) hits."""
    if nbar == 0:
        direct = ((h << d1) | (h << d2)) & blots
        # Indirect: one checker plays both dice, touching down on an open point in between.
        return direct | (((((h << d1) & open_) << d2) | (((h << d2) & open_) << d1)) & blots)
    if nbar >= 2:
        # Both dice go to entering; only the entry points can be hit.
        entry = (np.int64(1) << (d1 - 1)) | (np.int64(1) << (d2 - 1))
        return entry & blots
    # One on the bar: enter with one die, then any checker (the entered one too) plays the other.
    hit = np.int64(0)
    for k in range(2):
        a = d1 if k == 0 else d2
        b = d2 if k == 0 else d1
        e = np.int64(1) << (a - 1)
        if e & open_:
            hit |= (e | ((h | e) << b)) & blots
    return hit


@njit(cache=True, inline="always")
def _double_hit_mask(h, nbar, open_, blots, d):
    """The bits of ``blots`` that some play of the double d-d hits (each checker stepping d at
    a time over open points, after the bar's checkers enter)."""
    steps = 4
    reach = h
    hit = np.int64(0)
    if nbar > 0:
        e = np.int64(1) << (d - 1)
        if (e & open_) == 0:
            return hit  # cannot enter: no move at all
        hit = e & blots
        steps = 4 - nbar
        reach = h | e
    for _ in range(steps):
        reach = (reach << d) & open_
        hit |= reach & blots
        if reach == 0:
            break
    return hit


_REVERSED_BYTE = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], np.int64)


@njit(cache=True, inline="always")
def _reverse24(x):
    """The low 24 bits of ``x`` in reverse order (bit i to bit 23 - i)."""
    return (_REVERSED_BYTE[x & 255] << 16) | (_REVERSED_BYTE[(x >> 8) & 255] << 8) | \
        _REVERSED_BYTE[(x >> 16) & 255]


@njit(cache=True, inline="always")
def _escapes(rear, nbar, o_made):
    """Rolls out of 36 that take S's rearmost checker (on index ``rear``, 24 the bar, -1 none;
    ``nbar`` checkers on the bar) past every point O holds (``o_made``) among the 12 points in
    front of it (36 when none is held there or no checker is left).

    The checker moves a, b, a, b, ... (two steps for a plain roll, one when a second checker on
    the bar takes the other die; four for a double, fewer while others still enter), every landing
    open; it escapes once it lands below the front-most held point. ``reach`` marks the distances
    it can land at (bit d: the point d pips ahead exists and is open), ``past`` those of them
    beyond every block, so each roll is a few bit tests."""
    if rear < 0:
        return 36
    lo = max(rear - 12, 0)
    window = o_made & (((np.int64(1) << rear) - 1) ^ ((np.int64(1) << lo) - 1))
    if window == 0:
        return 36
    front = _popcount((window & -window) - 1)  # lowest held point: land below it to escape
    # Open points behind the rear checker, reversed so that bit d is the point d pips ahead.
    free = _reverse24(~o_made & ((np.int64(1) << rear) - 1))
    reach = free << 1 if rear == 24 else free >> (23 - rear)
    past = reach & ~((np.int64(2) << (rear - front)) - 1)
    one_step = nbar >= 2
    steps = 4 if nbar <= 1 else 5 - nbar  # of a double: the rest enter from the bar first
    count = 0
    for a in range(1, 7):
        for b in range(a + 1, 7):
            if ((past >> a) | (past >> b)) & 1:
                count += 2
            elif not one_step and ((reach >> a) | (reach >> b)) & (past >> (a + b)) & 1:
                count += 2
        for k in range(1, steps + 1):
            if ((reach >> (k * a)) & 1) == 0:
                break
            if (past >> (k * a)) & 1:
                count += 1
                break
    return count


@njit(cache=True, inline="always")
def _popcount(x):
    """Set bits of a non-negative integer below 2**32 (no loop: the bits are summed in place)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@njit(cache=True, inline="always")
def _highest_bit(x):
    """Index of the highest set bit of 0 < x < 2**32."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    return _popcount(x) - 1


@njit(cache=True, inline="always")
def _longest_prime(made):
    """(length, rear index) of the longest run of set bits; ties go to the run further back.

    ``runs &= runs >> 1`` keeps the bits that start a run one longer than before, so it empties
    after as many steps as the longest run is long; the bits left the step before start the
    longest runs, and the highest of them is the one further back."""
    if made == 0:
        return 0, -1
    length = 0
    runs = made
    starts = made
    while runs:
        starts = runs
        runs &= runs >> 1
        length += 1
    return length, _highest_bit(starts) + length - 1
