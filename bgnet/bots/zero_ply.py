"""One 0-ply decision in one compiled call, for exported bots (:meth:`bgnet.Bot.best_move`).

:meth:`bgnet.bots.net.NetBot.choose_moves` takes a batch through about a dozen numpy and numba
calls (generate, bear-off test, race routing, forward pass, flip, equity, argmax), which is the
right shape for self-play batches but costs more than the arithmetic for a single position. Here
the same steps run inside one compiled function: the legal afterstates are generated into
buffers kept between calls, routed to the contact or race net by the same race test, evaluated
by the same compiled forward pass (:mod:`bgnet.nn.fast`, first-layer tables kept because an
exported bot's weights never change; each afterstate started from its position's first layer, as
the batch path does when told the positions), flipped to the mover's view and ranked by money equity with
the same float32 operations in the same order, ties to the first. The chosen move is therefore
the one ``choose_moves`` picks. Where the cube and score are known, the moves are ranked in the
same call by the match's own measure (:mod:`bgnet.cube.checker`: the same compiled arithmetic as
:meth:`~bgnet.cube.checker.MoveMeasure.values`, on the same float32 probabilities), so a
match-aware decision is one compiled call too.

Afterstates that end the game get their exact outcome and bear-off afterstates the bear-off
database's probabilities, as in :meth:`bgnet.bots.evaluator.Evaluator.afterstates`. It applies to
an evaluator whose compiled pass is frozen (:class:`bgnet.nn.fast.FastForward` with
``frozen=True``); until the bear-off database is loaded, a position with a bear-off afterstate
is left to the general path (which loads it). :func:`choose_zero_ply` returns None for anything
it leaves, and the caller takes the general path.
"""
from __future__ import annotations

import weakref

import numpy as np
from numba import njit

from bgnet.bearoff import database as _database
from bgnet.bearoff.database import probabilities_kernel as _db_probabilities
from bgnet.bearoff.database import side_ok
from bgnet.cube.checker import CUBELESS, P_KIND, row_value
from bgnet.engine.api import ROWS, generate_kept, workspace
from bgnet.engine.board import game_result, race_of_sides
from bgnet.nn.fast import forward as _fast

_F1 = np.float32(1.0)
_F2 = np.float32(2.0)
_FALLBACK = -1


@njit(cache=True, inline="always")
def _mover_equity(p):
    """The mover's money equity from probabilities ``p`` of the side on roll after the move, as
    :func:`bgnet.nn.probs.flip` then :func:`bgnet.nn.probs.equity` compute it (float32, same
    order of operations)."""
    return _F2 * (_F1 - p[0]) - _F1 + p[3] - p[1] + p[4] - p[2]


# Rows of a net's first-layer tables packed into one array (fewer arrays to pass per call):
# T[side, point, count] (2 x 24 x 16), bar (2 x 16), borne off (2 x 16), the two flags, extras.
_T_BAR, _T_OFF, _T_FLAGS, _T_EXTRA = 768, 800, 832, 834


def _pack_tables(tables) -> np.ndarray:
    h = tables[0].shape[-1]
    packed = np.ascontiguousarray(np.concatenate([t.reshape(-1, h) for t in tables]), np.float32)
    assert packed.shape[0] == _T_EXTRA + tables[4].shape[0]
    return packed


@njit(cache=True)
def _forward(board, rows, acts, packed, b1, ws, bs, ss, out):
    """:func:`bgnet.nn.fast.forward.forward_children` on the afterstates ``rows`` of ``board``
    with the tables unpacked (as :meth:`bgnet.bots.evaluator.Evaluator.afterstates` does when
    told their position)."""
    h = packed.shape[1]
    parents = board.reshape((1, 2, 25))
    parent_of = np.zeros(rows.shape[0], np.int64)
    return _fast.forward_children(parents, parent_of, rows, np.arange(rows.shape[0]), 0, acts,
                                   packed[:_T_BAR].reshape((2, 24, 16, h)),
                                   packed[_T_BAR:_T_OFF].reshape((2, 16, h)),
                                   packed[_T_OFF:_T_FLAGS].reshape((2, 16, h)),
                                   packed[_T_FLAGS:_T_EXTRA], packed[_T_EXTRA:], b1, ws, bs, ss,
                                   out)


@njit(cache=True, inline="always")
def _mover_probs(p, out):
    """The mover's probabilities ``out`` from ``p``, those of the side on roll after the move
    (:func:`bgnet.nn.probs.flip`)."""
    out[0] = _F1 - p[0]
    out[1] = p[3]
    out[2] = p[4]
    out[3] = p[1]
    out[4] = p[2]


@njit(cache=True)
def _choose(board, d1, d2, boards, moves, ints, scratch, probs, db_out, every, prm, mtab, eff,
            split, c_act, c_tables, c_b1, c_ws, c_bs, c_ss, r_act, r_tables, r_b1, r_ws, r_bs, r_ss,
            bearoff, dist, first, table, binom, full_start):
    """Row of the kept buffers holding the 0-ply choice, or -1 (no move, or a case for the
    general path). ``scratch`` is int8 [2, >= n, 2, 25] (rows for the net, then bear-off rows),
    ``probs`` float32 [>= n, 5], ``db_out`` float64 [>= n, 5]; ``c_tables``/``r_tables`` are
    packed tables (:func:`_pack_tables`). ``bearoff``: 1 to answer bear-off afterstates from the
    database arrays given, 0 to leave them to the net, -1 to leave the decision to the general
    path when one occurs (the database is not loaded yet). The measure: ``prm``, ``mtab`` and
    ``eff`` are a :class:`bgnet.cube.checker.MoveMeasure`'s parameters, tables and efficiency
    for this position; with the cubeless kind the moves are ranked by float32 money equity,
    otherwise ``every`` (float32 [>= n, 5]) receives every afterstate's probabilities for its
    mover and the measure's values rank them (ties to the first)."""
    want = prm[P_KIND] != CUBELESS
    rows = scratch[0]
    db_rows = scratch[1]
    n = generate_kept(board, d1, d2, boards, moves, ints)
    if n <= 0:
        return _FALLBACK
    eq = np.empty(n, np.float32)
    net = np.empty(n, np.int64)  # rows for the net: contact ones first, then race ones
    dbr = np.empty(n, np.int64)  # bear-off rows
    n_net = n_db = n_race = 0
    for r in range(n):
        result = game_result(boards[r])
        if result > 0:  # the mover won: exact probabilities [1, g, bg, 0, 0], its own view
            g = _F1 if result >= 2 else np.float32(0.0)
            bg = _F1 if result >= 3 else np.float32(0.0)
            eq[r] = _F2 * _F1 - _F1 + g - np.float32(0.0) + bg - np.float32(0.0)
            if want:
                every[r, 0], every[r, 1], every[r, 2] = _F1, g, bg
                every[r, 3] = every[r, 4] = np.float32(0.0)
        elif bearoff != 0 and side_ok(boards[r], 0) and side_ok(boards[r], 1):
            if bearoff < 0:
                return _FALLBACK
            dbr[n_db] = r
            n_db += 1
        else:
            net[n_net] = r
            n_net += 1
            if split and race_of_sides(boards[r, 1], boards[r, 0]):
                n_race += 1
    # Route the net rows as FastForward does: contact rows, then race rows, each in order.
    n_contact = n_net - n_race
    c = 0
    k = n_contact
    for i in range(n_net):
        r = net[i]
        if split and race_of_sides(boards[r, 1], boards[r, 0]):
            rows[k] = boards[r]
            k += 1
        else:
            rows[c] = boards[r]
            c += 1
    if n_contact > 0:
        if _forward(board, rows[:n_contact], c_act, c_tables, c_b1, c_ws, c_bs, c_ss,
                    probs[:n_contact]) >= 0:
            return _FALLBACK
    if n_race > 0:
        if _forward(board, rows[n_contact:n_net], r_act, r_tables, r_b1, r_ws, r_bs, r_ss,
                    probs[n_contact:n_net]) >= 0:
            return _FALLBACK
    c = 0
    k = n_contact
    for i in range(n_net):
        r = net[i]
        if split and race_of_sides(boards[r, 1], boards[r, 0]):
            eq[r] = _mover_equity(probs[k])
            if want:
                _mover_probs(probs[k], every[r])
            k += 1
        else:
            eq[r] = _mover_equity(probs[c])
            if want:
                _mover_probs(probs[c], every[r])
            c += 1
    if n_db > 0:
        # The database answers for the side on roll: the afterstate with its sides swapped.
        for i in range(n_db):
            db_rows[i, 0] = boards[dbr[i], 1]
            db_rows[i, 1] = boards[dbr[i], 0]
        _db_probabilities(db_rows[:n_db], dist, first, table, binom, full_start, True, db_out[:n_db])
        p = np.empty(5, np.float32)
        for i in range(n_db):
            for j in range(5):
                p[j] = np.float32(db_out[i, j])
            eq[dbr[i]] = _mover_equity(p)
            if want:
                _mover_probs(p, every[dbr[i]])
    best = 0
    if want:
        top = row_value(every[0], boards[0], prm, mtab, eff)
        for r in range(1, n):
            v = row_value(every[r], boards[r], prm, mtab, eff)
            if v > top:
                best, top = r, v
        return best
    for r in range(1, n):
        if eq[r] > eq[best]:
            best = r
    return best


def _scratch(ws):
    """The call's scratch buffers, kept with this thread's engine buffers: (net and bear-off
    rows, net probabilities, database probabilities, every afterstate's mover probabilities)."""
    kept = getattr(ws, "zero_ply", None)
    if kept is None:
        kept = ws.zero_ply = (np.empty((2, ROWS, 2, 25), np.int8), np.empty((ROWS, 5), np.float32),
                              np.empty((ROWS, 5), np.float64), np.empty((ROWS, 5), np.float32))
    return kept


# The cubeless measure's arguments: money equity ranks the moves.
_CUBELESS = (np.array([CUBELESS, 0, 0, 0, 0, 0, 0, 0], np.int64), np.zeros((4, 1)), np.zeros(7))


_NO_DB = (np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32))


def _net_args(fast, sub: int):
    acts, ws, bs, ss, finite, tables = fast.prepared(sub)
    if not finite:
        return False, None
    return True, (acts, _pack_tables(tables), bs[0], ws[1:], bs[1:], ss[1:])


# The compiled call's weights arguments of each FastForward (None: not applicable), kept while
# the FastForward lives.
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _prepared(fast):
    """The compiled call's weights arguments for ``fast`` (None: not applicable)."""
    kept = _PREPARED.get(fast, False)
    if kept is not False:
        return kept
    args = None
    if getattr(fast, "frozen", False):
        subs = (0, 1) if fast.split else (0, 0)
        (ok_c, c), (ok_r, r) = (_net_args(fast, subs[0]), _net_args(fast, subs[1]))
        if ok_c and ok_r:
            args = (bool(fast.split),) + c + r
    _PREPARED[fast] = args
    return args


def _bearoff_args(evaluator):
    """(mode, dist, first, table, binom, full_start) for the compiled call: see ``_choose``."""
    if not getattr(evaluator, "bearoff", True):
        return (0,) + _NO_DB + (_database.BINOM, 0)
    db = _database.loaded_database(_database.DEFAULT_K)
    if db is None:  # not loaded yet: the general path loads it the first time it is needed
        return (-1,) + _NO_DB + (_database.BINOM, 0)
    return (1, db.dist, db.first, db.table, _database.BINOM, _database.FULL_START)


def choose_zero_ply(evaluator, board: np.ndarray, d1: int, d2: int, measure=None):
    """``(afterstate, steps)`` of the 0-ply choice of ``evaluator`` (a
    :class:`bgnet.bots.evaluator.Evaluator` with a frozen compiled pass) for one position with
    checked dice, or None where the general path must answer. ``measure`` (a
    :class:`bgnet.cube.checker.MoveMeasure` for this position) ranks the moves instead of
    cubeless money equity: the same probabilities, valued by it in the same compiled call (ties
    to the first)."""
    fast = getattr(evaluator, "fast", None)
    if fast is None:
        return None
    args = _prepared(fast)
    if args is None:
        return None
    ws = workspace()
    rows, net_probs, db_probs, every = _scratch(ws)
    ranking = _CUBELESS if measure is None else measure.kernel_args()
    best = _choose(board, d1, d2, ws.boards, ws.moves, ws.ints, rows, net_probs, db_probs, every,
                   *ranking, *args, *_bearoff_args(evaluator))
    if best < 0:
        return None
    return ws.boards[best].copy(), ws.moves[best].copy()
