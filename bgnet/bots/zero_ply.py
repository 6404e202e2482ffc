"""One 0-ply decision in one compiled call, for exported bots (:meth:`bgnet.Bot.best_move`).

:meth:`bgnet.bots.net.NetBot.choose_moves` takes a batch through about a dozen numpy and numba
calls (generate, bear-off test, race routing, forward pass, flip, equity, argmax), which is the
right shape for self-play batches but costs more than the arithmetic for a single position. Here
the same steps run inside one compiled function: the legal afterstates are generated into
buffers kept between calls, routed to the contact or race net by the same race test, evaluated
by the same compiled forward pass (:mod:`bgnet.nn.fast`, first-layer tables kept because an
exported bot's weights never change), flipped to the mover's view and ranked by money equity with
the same float32 operations in the same order, ties to the first. The chosen move is therefore
the one ``choose_moves`` picks.

It applies to an evaluator whose compiled pass is frozen (:class:`bgnet.nn.fast.FastForward`
with ``frozen=True``) and to positions none of whose afterstates is a bear-off position (those
are answered from the bear-off database) or a finished game; :func:`choose_zero_ply` returns
None for anything else and the caller takes the general path.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.bearoff.database import _side_ok
from bgnet.engine.api import _WS, _generate_kept
from bgnet.engine.board import game_result, race_of_sides
from bgnet.nn import fast as _fast

_F1 = np.float32(1.0)
_F2 = np.float32(2.0)
_FALLBACK = -1


@njit(cache=True)
def _choose(board, d1, d2, boards, moves, ints, rows, probs, split,
            c_act, c_tables, c_b1, c_ws, c_bs, r_act, r_tables, r_b1, r_ws, r_bs):
    """Row of the kept buffers holding the 0-ply choice, or -1 (no move, or a case for the
    general path). ``rows`` is int8 scratch [>= n, 2, 25], ``probs`` float32 [>= n, 5]."""
    n = _generate_kept(board, d1, d2, boards, moves, ints)
    if n <= 0:
        return _FALLBACK
    n_race = 0
    for r in range(n):
        if game_result(boards[r]) > 0 or (_side_ok(boards[r], 0) and _side_ok(boards[r], 1)):
            return _FALLBACK
        if split and race_of_sides(boards[r, 1], boards[r, 0]):
            n_race += 1
    # Contact rows first, then race rows, each in order (as FastForward routes a batch).
    order = np.empty(n, np.int64)
    c = 0
    k = n - n_race
    for r in range(n):
        if split and race_of_sides(boards[r, 1], boards[r, 0]):
            order[k] = r
            k += 1
        else:
            order[c] = r
            c += 1
    for i in range(n):
        rows[i] = boards[order[i]]
    n_contact = n - n_race
    if n_contact > 0:
        if _fast._forward_serial(rows[:n_contact], 0, c_act, c_tables[0], c_tables[1], c_tables[2],
                                 c_tables[3], c_tables[4], c_b1, c_ws, c_bs, probs[:n_contact]) >= 0:
            return _FALLBACK
    if n_race > 0:
        if _fast._forward_serial(rows[n_contact:n], 0, r_act, r_tables[0], r_tables[1], r_tables[2],
                                 r_tables[3], r_tables[4], r_b1, r_ws, r_bs, probs[n_contact:n]) >= 0:
            return _FALLBACK
    # The mover's money equity, as bgnet.nn.probs.flip then .equity compute it in float32.
    best = -1
    best_eq = np.float32(0.0)
    for i in range(n):
        p = probs[i]
        eq = _F2 * (_F1 - p[0]) - _F1 + p[3] - p[1] + p[4] - p[2]
        r = order[i]
        if best < 0 or eq > best_eq or (eq == best_eq and r < best):
            best, best_eq = r, eq
    return best


_ROWS = _WS.boards.shape[0]
_rows = np.empty((_ROWS, 2, 25), np.int8)
_probs = np.empty((_ROWS, 5), np.float32)


def _net_args(fast, net):
    act, ws, bs, finite, tables = fast._prepare(net, True)
    return finite, (act, tables, bs[0], ws[1:], bs[1:])


def _prepared(fast):
    """The compiled call's weights arguments, kept on the FastForward (None: not applicable)."""
    kept = getattr(fast, "_zero_ply_args", False)
    if kept is not False:
        return kept
    args = None
    if getattr(fast, "frozen", False):
        nets = (fast.net.contact, fast.net.race) if fast.split else (fast.net, fast.net)
        (ok_c, c), (ok_r, r) = (_net_args(fast, nets[0]), _net_args(fast, nets[1]))
        if ok_c and ok_r:
            args = (bool(fast.split),) + c + r
    fast._zero_ply_args = args
    return args


def choose_zero_ply(evaluator, board: np.ndarray, d1: int, d2: int):
    """``(afterstate, steps)`` of the 0-ply choice of ``evaluator`` (a
    :class:`bgnet.bots.evaluator.Evaluator` with a frozen compiled pass) for one position with
    checked dice, or None where the general path must answer."""
    fast = getattr(evaluator, "fast", None)
    if fast is None:
        return None
    args = _prepared(fast)
    if args is None:
        return None
    ws = _WS
    best = _choose(board, d1, d2, ws.boards, ws.moves, ws.ints, _rows, _probs, *args)
    if best < 0:
        return None
    return ws.boards[best].copy(), ws.moves[best].copy()
