"""A compiled CPU path for :class:`~bgnet.nn.model.ValueNet` and
:class:`~bgnet.nn.model.SplitValueNet`: forward passes straight from boards (:class:`FastForward`)
and the minibatch update of training (:class:`FastLearner`).

Both compute what the torch module computes, to float32 rounding, on the same weights: they read
(and :class:`FastLearner` writes, in place) the module's parameters through numpy views, so
checkpoints, evaluation and the torch path always see one set of weights. They cover ValueNets on
the ``tesauro`` and ``extended`` encodings with sigmoid, tanh or relu hidden layers (one or more),
and SplitValueNets made of two such nets; anything else (other activations, a linear net) stays
on torch: :func:`supports` and :func:`learner_unsupported` say which.

SplitValueNet. Rows are routed as the torch module routes them, by
:func:`~bgnet.nn.encode.race_mask` of the boards; each sub-net runs the compiled code below on its
own rows. In learning, the loss is the mean over the whole minibatch and a sub-net without rows
gets no gradient, so its parameters are not stepped at all (see :class:`FastLearner`).

Forward (:class:`FastForward`). Tesauro's raw inputs depend on each point only through its
checker count, so the first layer's contribution of a point is one of 16 vectors. The tables
``T[side, point, count]`` are built from the weights at every call (tens of microseconds), and the
first layer of a position becomes a sum of about twenty table rows instead of a dense 198 x H
product, with no encoded input matrix at all. Rows go through in blocks so that the activations
and the later dense layers run over contiguous hidden units, where the compiler vectorizes them.
A handful of boards (up to ``_SMALL``) is encoded and run densely instead: cheaper than tables.

Sigmoid. LLVM vectorizes no call to ``exp`` here (numba has no SVML on this build), and a scalar
``exp`` per hidden unit was the largest cost of the forward pass. :func:`_exp32` is a float32
``exp`` by range reduction and a degree-6 polynomial (Cephes' ``expf``), with the power of two
built from its bit pattern; it vectorizes, and its relative error is below 3e-7 (below 1e-6 for
the sigmoid built on it).

Learning (:class:`FastLearner`). The same update as the torch learner with loss ``"mse"``:
forward from encoded inputs, backprop through the conditional-logit probabilities
(``win = s(a)``, ``wg = win s(b)``, ``wbg = wg s(c)``, ``lg = (1 - win) s(d)``,
``lbg = lg s(e)``) and the squared error summed over the five outputs and averaged over rows, then
one step of ``torch.optim.Adam`` or ``torch.optim.SGD`` with their exact semantics. The optimizer
*is* the torch optimizer: FastLearner reads its hyperparameters from ``param_groups`` (so a
learning-rate schedule that sets ``group["lr"]`` works unchanged) and keeps Adam's moments, its
step counts and SGD's momentum buffers in the optimizer's own ``state`` tensors, written through
numpy views in the format torch itself uses. ``optimizer.state_dict()`` therefore is a torch
optimizer state whichever path made the steps, and a checkpoint written by either path resumes in
the other.

>>> import torch
>>> from bgnet.engine.board import start_position
>>> from bgnet.nn.model import ValueNet
>>> from bgnet.nn.encode import encode
>>> net = ValueNet("tesauro", 16)
>>> fast = FastForward(net)
>>> b = start_position()[None]
>>> ref = net(torch.from_numpy(encode(b, "tesauro"))).detach().numpy()
>>> bool(np.allclose(fast.positions(b), ref, atol=1e-6))
True
"""
from __future__ import annotations

import numpy as np
import torch
from llvmlite import ir
from numba import njit, prange
from numba.core import types
from numba.extending import intrinsic

from bgnet.nn.encode import (CAN_BEAR_OFF_UNIT, EXTRA_PER_SIDE, EXTRA_START, RACE_UNIT,
                             TESAURO_SIDE, _extra_side, _outside, _pips, _race, encode,
                             encode_afterstates, race_mask)

_ACT = {"sigmoid": 0, "tanh": 1, "relu": 2}
_BLOCK = 128  # rows per block of the forward pass: scratch stays in cache, one block per task
_SMALL = 16  # up to this many boards, a dense pass from encoded rows beats building the tables

# Fast-math flags. Sums may be reassociated (so that dot products and accumulations run in vector
# lanes); elementwise code may only fuse multiply-adds: reassociation would undo the exp's
# two-step range reduction, approximate reciprocals would cost precision. No flag assumes away
# NaN or infinity, so a diverged net gives NaN here as it does in torch. error_model="numpy"
# everywhere: Python's division-by-zero check would stop the loops from vectorizing.
_SUM_FLAGS = {"reassoc", "nsz", "contract"}
_EXACT_FLAGS = {"contract"}


def supports(net: torch.nn.Module) -> bool:
    """Whether :class:`FastForward` can run this network: a CPU float32 ValueNet on the tesauro
    or extended encoding, with one or more sigmoid, tanh or relu hidden layers, or a
    SplitValueNet whose contact and race nets both are such ValueNets.

    >>> from bgnet.nn.model import SplitValueNet, ValueNet
    >>> supports(ValueNet("extended", 8)), supports(SplitValueNet("extended", 8, race_hidden=4))
    (True, True)
    >>> supports(SplitValueNet("tesauro", 8, race_activation="elu"))
    False
    """
    if _is_split(net):
        return (_supports_value_net(net.contact) and _supports_value_net(net.race)
                and net.contact.encoding == net.race.encoding == net.encoding)
    return _supports_value_net(net)


def _supports_value_net(net: torch.nn.Module) -> bool:
    return (type(net).__name__ == "ValueNet" and getattr(net, "activation", None) in _ACT
            and len(net.hidden) >= 1 and net.encoding in ("tesauro", "extended")
            and all(p.device.type == "cpu" and p.dtype == torch.float32 for p in net.parameters()))


def _is_split(net: torch.nn.Module) -> bool:
    return type(net).__name__ == "SplitValueNet"


def _subnets(net: torch.nn.Module) -> tuple:
    """The ValueNets that run ``net``: (contact, race) for a SplitValueNet, (net,) otherwise."""
    return (net.contact, net.race) if _is_split(net) else (net,)


def _linears(net) -> list:
    return [m for m in net.body if isinstance(m, torch.nn.Linear)] + [net.head]


def _view(t: torch.Tensor) -> np.ndarray:
    """A numpy array sharing memory with ``t`` (writes go straight into the tensor)."""
    return t.detach().numpy()


# ---------------------------------------------------------------------------------------------
# Vectorizable float32 exp and activations

_F0 = np.float32(0.0)
_F1 = np.float32(1.0)
_F2 = np.float32(2.0)
_HALF = np.float32(0.5)
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI = np.float32(0.693359375)  # ln 2 = _LN2_HI + _LN2_LO, the first part exact in float32
_LN2_LO = np.float32(-2.12194440e-4)
_EXP_HI = np.float32(88.0)  # beyond +-88 the scale 2^n would leave float32's normal range
_EXP_LO = np.float32(-87.0)
_P0 = np.float32(1.9875691500e-4)
_P1 = np.float32(1.3981999507e-3)
_P2 = np.float32(8.3334519073e-3)
_P3 = np.float32(4.1665795894e-2)
_P4 = np.float32(1.6666665459e-1)
_P5 = np.float32(5.0000001201e-1)


@intrinsic
def _f32_from_bits(typingctx, bits):
    """The float32 whose bit pattern is the low 32 bits of the integer ``bits`` (a bitcast:
    vectorizes, unlike ldexp)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        low = builder.trunc(args[0], ir.IntType(32)) if bits.bitwidth > 32 else args[0]
        return builder.bitcast(low, ir.FloatType())

    return types.float32(bits), codegen


@njit(cache=True, inline="always", fastmath=_EXACT_FLAGS, error_model="numpy")
def _exp32(x):
    """exp(x) for float32 x, relative error < 3e-7; arguments are clamped to [-87, 88]."""
    x = min(max(x, _EXP_LO), _EXP_HI)
    n = np.floor(x * _LOG2E + _HALF)
    r = x - n * _LN2_HI
    r = r - n * _LN2_LO
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    p = p * (r * r) + r + _F1
    return p * _f32_from_bits((np.int32(n) + 127) << 23)


@njit(cache=True, inline="always", fastmath=_EXACT_FLAGS, error_model="numpy")
def _sigmoid32(x):
    return _F1 / (_F1 + _exp32(-x))


@njit(cache=True, inline="always", fastmath=_EXACT_FLAGS, error_model="numpy")
def _tanh32(x):
    # 1 - 2 / (1 + e^2x): absolute error ~2e-7 near 0, where tanh itself is small.
    return _F1 - _F2 / (_F1 + _exp32(_F2 * x))


@njit(cache=True, fastmath=_EXACT_FLAGS, error_model="numpy")
def _activate_rows(a, m, act):
    """Apply the activation (0 sigmoid, 1 tanh, 2 relu) to rows ``a[:m]`` in place."""
    w = a.shape[1]
    for r in range(m):
        if act == 0:
            for j in range(w):
                a[r, j] = _sigmoid32(a[r, j])
        elif act == 1:
            for j in range(w):
                a[r, j] = _tanh32(a[r, j])
        else:
            for j in range(w):
                a[r, j] = max(a[r, j], _F0)


@njit(cache=True, fastmath=_EXACT_FLAGS, error_model="numpy")
def _probs_rows(z, m, out, lo):
    """Five conditional logits ``z[:m]`` (a C-contiguous [B, 5] block) -> consistent
    probabilities ``out[lo:lo + m]``."""
    flat = z.reshape(z.size)  # one contiguous run of 5 m logits: the sigmoid vectorizes
    for j in range(5 * m):
        flat[j] = _sigmoid32(flat[j])
    for r in range(m):
        s0 = z[r, 0]
        wg = s0 * z[r, 1]
        lg = (_F1 - s0) * z[r, 3]
        out[lo + r, 0] = s0
        out[lo + r, 1] = wg
        out[lo + r, 2] = wg * z[r, 2]
        out[lo + r, 3] = lg
        out[lo + r, 4] = lg * z[r, 4]


@njit(cache=True, fastmath=_SUM_FLAGS, error_model="numpy")
def _dense_rows(inp, m, w, b, out):
    """``out[:m] = inp[:m] @ w.T + b`` with ``w`` in torch's [out, in] layout: one contiguous
    dot product per output (reassociated into vector lanes)."""
    n_out, n_in = w.shape
    for r in range(m):
        for o in range(n_out):
            s = _F0
            for i in range(n_in):
                s += inp[r, i] * w[o, i]
            out[r, o] = s + b[o]


# ---------------------------------------------------------------------------------------------
# Forward pass from boards


@njit(cache=True, error_model="numpy")
def _tables(w1, n_extra):
    """First-layer tables from the weights w1 [H, F]: per (side, point, count), bar count, borne
    off count, the two flag units and the extra features, each a row of H values; and whether
    every weight is finite (the tables skip zero inputs, where torch would multiply a NaN or an
    infinite weight by 0 and spread NaN)."""
    h = w1.shape[0]
    wt = np.ascontiguousarray(w1.T)  # [F, H]: every input's weights contiguous
    finite = np.isfinite(wt).all()
    tpt = np.zeros((2, 24, 16, h), np.float32)
    tbar = np.zeros((2, 16, h), np.float32)
    toff = np.zeros((2, 16, h), np.float32)
    for s in range(2):
        base = s * TESAURO_SIDE
        for i in range(24):
            c = base + 4 * i
            for n in range(1, 16):
                # The same float32 input values the encoder writes, times the same weights.
                u3 = np.float32((n - 3) * 0.5) if n > 3 else np.float32(0.0)
                for j in range(h):
                    v = wt[c, j]
                    if n >= 2:
                        v += wt[c + 1, j]
                    if n >= 3:
                        v += wt[c + 2, j]
                    tpt[s, i, n, j] = v + u3 * wt[c + 3, j]
        for n in range(16):
            ub = np.float32(n * 0.5)
            uo = np.float32(n / 15.0)
            for j in range(h):
                tbar[s, n, j] = ub * wt[base + 96, j]
                toff[s, n, j] = uo * wt[base + 97, j]
    flags = np.ascontiguousarray(wt[RACE_UNIT:CAN_BEAR_OFF_UNIT + 1])
    extra = np.ascontiguousarray(wt[EXTRA_START:EXTRA_START + n_extra])
    return finite, (tpt, tbar, toff, flags, extra)


@njit(cache=True, error_model="numpy")
def _first_bad_board(boards):
    """Index of the first board with a count outside 0..15 or a side of more than 15 checkers
    (the tables have no row for it), or -1."""
    for k in range(boards.shape[0]):
        for side in range(2):
            total = 0
            for i in range(25):
                c = boards[k, side, i]
                if c < 0 or c > 15:
                    return k
                total += c
            if total > 15:
                return k
    return -1


@njit(cache=True, inline="always", fastmath=_SUM_FLAGS, error_model="numpy")
def _add_row(a, r, t):
    for j in range(t.shape[0]):
        a[r, j] += t[j]


@njit(cache=True, fastmath=_SUM_FLAGS, error_model="numpy")
def _first_layer(boards, lo, m, roll_row, tpt, tbar, toff, flags, extra, b1, a, feats):
    """Pre-activations of the first hidden layer for boards ``lo:lo + m`` into ``a[:m]``.
    Returns the index of the first board with a count outside 0..15 or a side of more than 15
    checkers (the tables have no row for it; its row is left incomplete), or -1."""
    opp_row = 1 - roll_row
    h = b1.shape[0]
    n_extra = extra.shape[0]
    bad = -1
    for r in range(m):
        k = lo + r
        for j in range(h):
            a[r, j] = b1[j]
        for s in range(2):
            row = roll_row if s == 0 else opp_row
            total = 0
            for i in range(24):
                c = boards[k, row, i]
                total += c
                if c > 0:
                    if c <= 15:
                        _add_row(a, r, tpt[s, i, c])
                    elif bad < 0:
                        bad = k
                elif c < 0 and bad < 0:
                    bad = k
            nb = boards[k, row, 24]
            off = 15 - total - nb
            if nb < 0 or nb > 15 or off < 0 or off > 15:
                if bad < 0:
                    bad = k
                continue
            if nb > 0:
                _add_row(a, r, tbar[s, nb])
            if off > 0:
                _add_row(a, r, toff[s, off])
        me = boards[k, roll_row]
        opp = boards[k, opp_row]
        if _race(me, opp):
            _add_row(a, r, flags[0])
        if _outside(me) == 0:
            _add_row(a, r, flags[1])
        if n_extra > 0:
            _extra_side(me, opp, feats, 0, EXTRA_START)
            _extra_side(opp, me, feats, 0, EXTRA_START + EXTRA_PER_SIDE)
            feats[0, EXTRA_START + 2 * EXTRA_PER_SIDE] = (_pips(opp) - _pips(me)) / 100.0
            for e in range(n_extra):
                v = feats[0, EXTRA_START + e]
                if v != 0.0:
                    for j in range(h):
                        a[r, j] += v * extra[e, j]
    return bad


@njit(cache=True, error_model="numpy")
def _forward_block(blk, boards, roll_row, act, tpt, tbar, toff, flags, extra, b1, ws, bs, out):
    """Rows ``blk * _BLOCK`` onwards (one block) of :func:`_forward_serial`; returns the first
    invalid board's index or -1."""
    n = boards.shape[0]
    lo = blk * _BLOCK
    m = min(n, lo + _BLOCK) - lo
    cur = np.empty((_BLOCK, b1.shape[0]), np.float32)
    feats = np.zeros((1, EXTRA_START + extra.shape[0]), np.float32)
    bad = _first_layer(boards, lo, m, roll_row, tpt, tbar, toff, flags, extra, b1, cur, feats)
    _activate_rows(cur, m, act)
    _probs_rows(_dense_layers(cur, m, act, ws, bs), m, out, lo)
    return bad


@njit(cache=True, error_model="numpy")
def _forward_serial(boards, roll_row, act, tpt, tbar, toff, flags, extra, b1, ws, bs, out):
    """Probabilities of ``boards`` (side on roll in row ``roll_row``) into ``out``; ``ws``/``bs``
    are the dense layers after the first, the last giving the five logits. Returns the index of
    the first invalid board, or -1."""
    for blk in range((boards.shape[0] + _BLOCK - 1) // _BLOCK):
        bad = _forward_block(blk, boards, roll_row, act, tpt, tbar, toff, flags, extra, b1, ws,
                             bs, out)
        if bad >= 0:
            return bad
    return -1


@njit(cache=True, parallel=True, error_model="numpy")
def _forward_parallel(boards, roll_row, act, tpt, tbar, toff, flags, extra, b1, ws, bs, out):
    """:func:`_forward_serial` with the blocks shared among numba's threads."""
    nblk = (boards.shape[0] + _BLOCK - 1) // _BLOCK
    bad = np.empty(nblk, np.int64)
    for blk in prange(nblk):
        bad[blk] = _forward_block(blk, boards, roll_row, act, tpt, tbar, toff, flags, extra, b1,
                                  ws, bs, out)
    for blk in range(nblk):
        if bad[blk] >= 0:
            return bad[blk]
    return -1


@njit(cache=True, error_model="numpy")
def _forward_dense(x, act, ws, bs, out):
    """Probabilities of encoded rows ``x`` through every layer (for a few rows, where building
    the first-layer tables would cost more than the dense product)."""
    n = x.shape[0]
    _probs_rows(_dense_layers(x, n, act, ws, bs), n, out, 0)


@njit(cache=True, error_model="numpy")
def _dense_layers(cur, m, act, ws, bs):
    """The first ``m`` rows of ``cur`` through the dense layers ``ws``/``bs``: activations after
    each but the last, whose output (the five logits) is returned."""
    for li in range(len(ws)):
        nxt = np.empty((cur.shape[0], ws[li].shape[0]), np.float32)
        _dense_rows(cur, m, ws[li], bs[li], nxt)
        if li < len(ws) - 1:
            _activate_rows(nxt, m, act)
        cur = nxt
    return cur


class FastForward:
    """Evaluate a ValueNet or SplitValueNet on boards with compiled code (CPU only). Reads the
    module's weights at every call, so it follows training without being rebuilt.

    A SplitValueNet's rows are routed as :meth:`SplitValueNet.forward` routes them, by
    :func:`~bgnet.nn.encode.race_mask` of the boards as given: contact is symmetric, so the mask
    of an afterstate as written is also the mask of the position it becomes (what the evaluator
    passes to torch). Each sub-net runs on its own rows and the results are put back in order.

    ``frozen``: the weights will not change (an exported bot): the first-layer tables and the
    weight views are built once and kept, and every batch, however small, takes the table path.

    ``parallel``: share large batches among numba's threads (``numba.set_num_threads``). Off by
    default: the trainer runs one thread per process, and numba's threading layer here (GNU
    OpenMP) does not survive a ``fork`` once started.

    >>> from bgnet.engine.board import start_position
    >>> from bgnet.nn.model import SplitValueNet
    >>> FastForward(SplitValueNet("extended", 8, race_hidden=4)).positions(start_position()).shape
    (1, 5)
    """

    def __init__(self, net: torch.nn.Module, parallel: bool = False, frozen: bool = False):
        if not supports(net):
            raise ValueError("FastForward runs CPU float32 ValueNets (or SplitValueNets of two) "
                             "with sigmoid, tanh or relu hidden layers on the tesauro or extended "
                             "encoding")
        self.net = net
        self.split = _is_split(net)
        self.n_extra = net.num_inputs - EXTRA_START
        self.parallel = bool(parallel)
        self.frozen = bool(frozen)
        self._kept = {}  # id(sub-net) -> _prepare's answer, when frozen

    def _prepare(self, net, want_tables: bool):
        """``(act, ws, bs, finite, tables)`` of one ValueNet: kept between calls when frozen
        (otherwise the weights are read again, so training is followed)."""
        kept = self._kept.get(id(net))
        if kept is not None:
            return kept
        layers = _linears(net)
        ws = tuple(_view(l.weight) for l in layers)
        bs = tuple(_view(l.bias) for l in layers)
        finite, tables = _tables(ws[0], self.n_extra) if want_tables or self.frozen else (False, None)
        prepared = (_ACT[net.activation], ws, bs, finite, tables)
        if self.frozen:
            self._kept[id(net)] = prepared
        return prepared

    def _run(self, boards: np.ndarray, roll_row: int) -> np.ndarray:
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
        n = len(boards)
        out = np.empty((n, 5), np.float32)
        if n == 0:
            return out
        if self.split:
            bad = self._run_split(boards, roll_row, out)
        else:
            bad = self._run_net(self.net, boards, roll_row, out)
        if bad >= 0:
            raise ValueError(f"board {bad} is not a backgammon position (each side holds 0 to 15 "
                             f"checkers): {boards[bad].tolist()}")
        return out

    def _run_split(self, boards: np.ndarray, roll_row: int, out: np.ndarray) -> int:
        """The contact net on contact rows, the race net on races; the first invalid board's
        index (in ``boards``) or -1."""
        is_race = race_mask(boards)
        n_race = int(np.count_nonzero(is_race))
        if n_race == 0 or n_race == len(boards):  # one net takes every row: nothing to gather
            return self._run_net(self.net.race if n_race else self.net.contact, boards, roll_row,
                                 out)
        bad = len(boards)
        for sub, rows in ((self.net.contact, ~is_race), (self.net.race, is_race)):
            idx = np.flatnonzero(rows)
            part = np.empty((len(idx), 5), np.float32)
            k = self._run_net(sub, boards[idx], roll_row, part)
            out[idx] = part
            if k >= 0:
                bad = min(bad, int(idx[k]))
        return bad if bad < len(boards) else -1

    def _run_net(self, net, boards: np.ndarray, roll_row: int, out: np.ndarray) -> int:
        """Probabilities of one ValueNet on contiguous ``boards`` into ``out``; returns the
        first invalid board's index or -1 (``out`` is then incomplete)."""
        n = len(boards)
        act, ws, bs, finite, tables = self._prepare(net, n > _SMALL)
        if finite and (n > _SMALL or self.frozen):
            run = _forward_parallel if self.parallel and n > _BLOCK else _forward_serial
            return run(boards, roll_row, act, *tables, bs[0], ws[1:], bs[1:], out)
        bad = _first_bad_board(boards)
        if bad < 0:
            x = (encode if roll_row == 1 else encode_afterstates)(boards, net.encoding)
            _forward_dense(x, act, ws, bs, out)
        return bad

    def positions(self, boards: np.ndarray) -> np.ndarray:
        """Probabilities [N, 5] for the side on roll (``board[1]``)."""
        return self._run(boards, 1)

    def swapped(self, after: np.ndarray) -> np.ndarray:
        """Probabilities [N, 5] for the side on roll of ``swap(after)`` (the opponent of the
        mover), as the net sees an afterstate ``[opponent, mover_after]``."""
        return self._run(after, 0)


# ---------------------------------------------------------------------------------------------
# Learning: gradients of the mean squared error, then one torch-compatible optimizer step


@njit(cache=True, fastmath=_EXACT_FLAGS, error_model="numpy")
def _mse_head(z, t, n_total, dz):
    """Loss ``((p - t)^2).sum(-1).sum() / n_total`` of the probabilities built from the logits
    ``z`` [B, 5] (the mean when ``n_total`` is B; a SplitValueNet's sub-net sees part of a
    minibatch of ``n_total`` rows); writes its gradient with respect to the logits into ``dz``."""
    n = z.shape[0]
    scale = _F2 / np.float32(n_total)
    total = 0.0
    for r in range(n):
        s0 = _sigmoid32(z[r, 0])
        s1 = _sigmoid32(z[r, 1])
        s2 = _sigmoid32(z[r, 2])
        s3 = _sigmoid32(z[r, 3])
        s4 = _sigmoid32(z[r, 4])
        lose = _F1 - s0
        wg = s0 * s1
        lg = lose * s3
        e0 = s0 - t[r, 0]
        e1 = wg - t[r, 1]
        e2 = wg * s2 - t[r, 2]
        e3 = lg - t[r, 3]
        e4 = lg * s4 - t[r, 4]
        total += e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3 + e4 * e4
        g0, g1, g2, g3, g4 = scale * e0, scale * e1, scale * e2, scale * e3, scale * e4
        # d loss / d s_k through win, wg = win s1, wbg = wg s2, lg = (1 - win) s3, lbg = lg s4
        d0 = g0 + (g1 + g2 * s2) * s1 - (g3 + g4 * s4) * s3
        d1 = (g1 + g2 * s2) * s0
        d2 = g2 * wg
        d3 = (g3 + g4 * s4) * lose
        d4 = g4 * lg
        dz[r, 0] = d0 * s0 * (_F1 - s0)
        dz[r, 1] = d1 * s1 * (_F1 - s1)
        dz[r, 2] = d2 * s2 * (_F1 - s2)
        dz[r, 3] = d3 * s3 * (_F1 - s3)
        dz[r, 4] = d4 * s4 * (_F1 - s4)
    return total / n_total


@njit(cache=True, fastmath=_SUM_FLAGS, error_model="numpy")
def _layer_grads(inp, dz, gw, gb):
    """Gradients of a dense layer's weights [out, in] and bias from its input rows and the
    gradient ``dz`` of its outputs (overwritten, not accumulated)."""
    gw[:] = 0.0
    gb[:] = 0.0
    n_out, n_in = gw.shape
    for r in range(inp.shape[0]):
        for o in range(n_out):
            d = dz[r, o]
            gb[o] += d
            for i in range(n_in):
                gw[o, i] += d * inp[r, i]


@njit(cache=True, fastmath=_SUM_FLAGS, error_model="numpy")
def _input_grads(dz, w, h, act):
    """Gradient of the pre-activations of the layer below, whose outputs are ``h``, from the
    gradient ``dz`` of this layer's outputs and its weights ``w`` [out, in]."""
    n, n_in = h.shape
    dh = np.zeros((n, n_in), np.float32)
    for r in range(n):
        for o in range(w.shape[0]):
            d = dz[r, o]
            for i in range(n_in):
                dh[r, i] += d * w[o, i]
        for i in range(n_in):
            v = h[r, i]
            if act == 0:
                dh[r, i] *= v * (_F1 - v)
            elif act == 1:
                dh[r, i] *= _F1 - v * v
            elif v <= _F0:
                dh[r, i] = _F0
    return dh


@njit(cache=True, fastmath=_SUM_FLAGS, error_model="numpy")
def _sparse_dense_rows(x, w, b, z):
    """``z = x @ w.T + b`` for input rows that are mostly zeros (encoded positions): each nonzero
    input adds its weight column, contiguous in a transposed copy of ``w``."""
    wt = np.ascontiguousarray(w.T)
    n_out = w.shape[0]
    for r in range(x.shape[0]):
        for o in range(n_out):
            z[r, o] = b[o]
        for i in range(x.shape[1]):
            v = x[r, i]
            if v != 0.0:
                for o in range(n_out):
                    z[r, o] += v * wt[i, o]


@njit(cache=True, fastmath=_SUM_FLAGS, error_model="numpy")
def _sparse_layer_grads(x, dz, gw, gb):
    """:func:`_layer_grads` for mostly-zero input rows: accumulates the transposed gradient one
    nonzero input at a time, then transposes it into ``gw``."""
    n_out, n_in = gw.shape
    gt = np.zeros((n_in, n_out), np.float32)
    gb[:] = 0.0
    for r in range(x.shape[0]):
        for o in range(n_out):
            gb[o] += dz[r, o]
        for i in range(n_in):
            v = x[r, i]
            if v != 0.0:
                for o in range(n_out):
                    gt[i, o] += v * dz[r, o]
    for o in range(n_out):
        for i in range(n_in):
            gw[o, i] = gt[i, o]


@njit(cache=True, error_model="numpy")
def _mse_grads(x, t, n_total, act, ws, bs, gws, gbs):
    """Forward pass of encoded rows ``x`` through the dense layers ``ws``/``bs`` (torch layout,
    hidden activation ``act``, the last layer giving the five logits), the mse loss against
    targets ``t`` (squared errors summed, divided by ``n_total``), and backprop into
    ``gws``/``gbs``. Returns the loss."""
    n = x.shape[0]
    # Skipping zero inputs is exact only with finite weights and gradients: torch's 0 * NaN
    # spreads NaN, and so do the dense loops.
    sparse = np.isfinite(ws[0]).all()
    outs = [x]  # the input of every layer, then the logits
    for li in range(len(ws)):
        z = np.empty((n, ws[li].shape[0]), np.float32)
        if li == 0 and sparse:
            _sparse_dense_rows(x, ws[0], bs[0], z)
        else:
            _dense_rows(outs[li], n, ws[li], bs[li], z)
        if li < len(ws) - 1:
            _activate_rows(z, n, act)
        outs.append(z)
    dz = np.empty((n, 5), np.float32)
    loss = _mse_head(outs[len(ws)], t, n_total, dz)
    for li in range(len(ws) - 1, -1, -1):
        if li == 0 and sparse and np.isfinite(dz).all():
            _sparse_layer_grads(x, dz, gws[0], gbs[0])
        elif li == 0:
            _layer_grads(x, dz, gws[0], gbs[0])
        else:
            _layer_grads(outs[li], dz, gws[li], gbs[li])
            dz = _input_grads(dz, ws[li], outs[li], act)
    return loss


@njit(cache=True, fastmath=_EXACT_FLAGS, error_model="numpy")
def _adam_step(ps, gs, ms, vs, steps, group_of, hyper):
    """torch.optim.Adam's step (no amsgrad) on flat views, in float32 where torch computes in
    float32 and in float64 where it computes with Python floats. ``steps[k]`` is a one-element
    view of parameter k's step tensor; ``hyper[group_of[k]]`` = (lr, beta1, beta2, eps, weight
    decay, gradient sign: -1 when maximizing)."""
    for k in range(len(ps)):
        p, g, m, v = ps[k], gs[k], ms[k], vs[k]
        h = hyper[group_of[k]]
        beta1, beta2 = h[1], h[2]
        steps[k][0] += 1  # the step tensor, counted as torch counts it
        t = float(steps[k][0])
        neg_step = np.float32(-(h[0] / (1.0 - beta1 ** t)))
        bc2 = np.float32((1.0 - beta2 ** t) ** 0.5)
        w1 = np.float32(1.0 - beta1)
        b2 = np.float32(beta2)
        c2 = np.float32(1.0 - beta2)
        eps = np.float32(h[3])
        wd = np.float32(h[4])
        sign = np.float32(h[5])
        for j in range(p.shape[0]):
            gj = sign * g[j] + wd * p[j]
            m[j] = m[j] + w1 * (gj - m[j])  # exp_avg.lerp_(grad, 1 - beta1)
            v[j] = v[j] * b2 + c2 * gj * gj
            p[j] = p[j] + neg_step * (m[j] / (np.sqrt(v[j]) / bc2 + eps))


@njit(cache=True, fastmath=_EXACT_FLAGS, error_model="numpy")
def _sgd_step(ps, gs, bufs, hyper):
    """torch.optim.SGD's step on flat views. ``hyper[k]`` = (lr, weight decay, momentum,
    dampening, nesterov, gradient sign, 1 when the momentum buffer is new)."""
    for k in range(len(ps)):
        p, g, buf = ps[k], gs[k], bufs[k]
        lr = np.float32(hyper[k, 0])
        wd = np.float32(hyper[k, 1])
        mom = np.float32(hyper[k, 2])
        keep = np.float32(1.0 - hyper[k, 3])
        nesterov = hyper[k, 4] != 0.0
        sign = np.float32(hyper[k, 5])
        fresh = hyper[k, 6] != 0.0
        use_buf = hyper[k, 2] != 0.0
        for j in range(p.shape[0]):
            gj = sign * g[j] + wd * p[j]
            if use_buf:
                buf[j] = gj if fresh else buf[j] * mom + keep * gj
                gj = gj + mom * buf[j] if nesterov else buf[j]
            p[j] = p[j] - lr * gj


def learner_unsupported(net: torch.nn.Module, optimizer, loss: str = "mse") -> str | None:
    """Why :class:`FastLearner` cannot run this combination, or None when it can."""
    if loss != "mse":
        return f"loss {loss!r} (only 'mse')"
    if not supports(net):
        return (f"{type(net).__name__} (only CPU float32 ValueNets, or SplitValueNets of two, "
                "with sigmoid, tanh or relu hidden layers on the tesauro or extended encoding)")
    if type(optimizer) not in (torch.optim.Adam, torch.optim.SGD):
        return f"optimizer {type(optimizer).__name__} (only torch.optim.Adam and SGD)"
    params = list(net.parameters())
    grouped = [p for g in optimizer.param_groups for p in g["params"]]
    if len(grouped) != len(params) or {id(p) for p in grouped} != {id(p) for p in params}:
        return "the optimizer does not hold exactly the net's parameters"
    for g in optimizer.param_groups:
        for key in ("amsgrad", "decoupled_weight_decay", "capturable", "differentiable", "fused"):
            if g.get(key):
                return f"optimizer option {key}"
        if any(isinstance(v, torch.Tensor) for v in g.values() if v is not g["params"]):
            return "tensor-valued optimizer hyperparameters"
    return None


class FastLearner:
    """Minibatch mse updates of a ValueNet or SplitValueNet on the CPU in compiled code, stepping
    ``optimizer`` (a ``torch.optim.Adam`` or ``SGD`` over the net's parameters) exactly as torch
    would.

    Weights are updated in place through numpy views of the parameters; the optimizer's state
    (Adam's ``step``/``exp_avg``/``exp_avg_sq``, SGD's ``momentum_buffer``) lives in its own
    tensors, in torch's format, so :meth:`state_dict` is ``optimizer.state_dict()`` and either
    path resumes from a checkpoint of the other. Hyperparameters are read from
    ``optimizer.param_groups`` at every step. ``p.grad`` is left untouched.

    A SplitValueNet is trained as torch trains it through :meth:`SplitValueNet.forward`: rows are
    routed by :func:`~bgnet.nn.encode.race_mask`, the loss is the mean over *all* rows (each
    sub-net's gradient is its rows' sum divided by the whole minibatch's size), and a sub-net
    that got no row has no gradient in torch, so the optimizer skips its parameters: no weight
    decay, no momentum, and Adam's step count does not advance (nor is its state created).

    >>> from bgnet.nn.model import ValueNet
    >>> from bgnet.engine.board import start_position
    >>> net = ValueNet("tesauro", 8)
    >>> learner = FastLearner(net, torch.optim.Adam(net.parameters(), lr=1e-3))
    >>> loss = learner.update(start_position()[None], np.full((1, 5), 0.5, np.float32))
    >>> loss > 0, int(learner.state_dict()["state"][0]["step"])
    (True, 1)
    """

    def __init__(self, net: torch.nn.Module, optimizer: torch.optim.Optimizer):
        reason = learner_unsupported(net, optimizer)
        if reason is not None:
            raise ValueError(f"FastLearner cannot run {reason}")
        self.net, self.opt = net, optimizer
        self.adam = type(optimizer) is torch.optim.Adam
        self.split = _is_split(net)
        self._nets = _subnets(net)
        self._acts = tuple(_ACT[m.activation] for m in self._nets)
        self._params = []  # every weight and bias, sub-net after sub-net
        self._members = []  # per sub-net: the indices of its parameters in self._params
        for m in self._nets:
            own = [p for l in _linears(m) for p in (l.weight, l.bias)]
            self._members.append(tuple(range(len(self._params), len(self._params) + len(own))))
            self._params += own
        self._grads = [np.zeros(tuple(p.shape), np.float32) for p in self._params]
        self._buf = np.empty((0, net.num_inputs), np.float32)
        self._bound = None  # (state, size, data pointers, views): see _bind

    # -- state ------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The optimizer's state dict, in torch's format (see the class doc)."""
        return self.opt.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """Load a torch optimizer state dict (written by this class or by torch's own step)."""
        self.opt.load_state_dict(state)
        self._bound = None

    def _group_index(self, p) -> int:
        for k, g in enumerate(self.opt.param_groups):
            if any(q is p for q in g["params"]):
                return k
        raise ValueError("a parameter of the net left the optimizer's param_groups")

    def _has_state(self, p) -> bool:
        state = self.opt.state.get(p)
        return bool(state) and "step" in state

    def _init_state(self, p) -> None:
        """Adam's state for ``p``, created as torch creates it at the parameter's first step.
        (SGD keeps state only for momentum, made in :meth:`_sgd` as torch makes it.)"""
        state = self.opt.state[p]
        if not state:
            dtype = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
            state["step"] = torch.tensor(0.0, dtype=dtype)
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _bind(self):
        """Numpy views of the weights, gradients and optimizer state, rebuilt only when the
        optimizer's state changed size or was replaced (load_state_dict) or a parameter moved.
        Adam's views exist only for parameters that have state (``None`` for the others)."""
        ptrs = tuple(p.data_ptr() for p in self._params)
        if self._bound is not None:
            state, size, old_ptrs, views = self._bound
            # Holding the bound state object keeps its id from being reused by a new one.
            if self.opt.state is state and len(state) == size and old_ptrs == ptrs:
                return views
        views = {
            "w": [tuple(_view(self._params[i]) for i in m[0::2]) for m in self._members],
            "b": [tuple(_view(self._params[i]) for i in m[1::2]) for m in self._members],
            "gw": [tuple(self._grads[i] for i in m[0::2]) for m in self._members],
            "gb": [tuple(self._grads[i] for i in m[1::2]) for m in self._members],
            "flat": [_view(p).reshape(-1) for p in self._params],
            "grads": [g.reshape(-1) for g in self._grads],
            "group_of": np.array([self._group_index(p) for p in self._params], np.int64),
            "steps": {},  # the arguments of one optimizer step, per set of stepped sub-nets
        }
        if self.adam:
            states = [self.opt.state[p] if self._has_state(p) else None for p in self._params]
            for key, name, shape in (("m", "exp_avg", -1), ("v", "exp_avg_sq", -1),
                                     ("step", "step", 1)):
                views[key] = [None if s is None else _view(s[name]).reshape(shape) for s in states]
        self._bound = (self.opt.state, len(self.opt.state), ptrs, views)
        return views

    # -- updates ----------------------------------------------------------------------------
    def update(self, boards: np.ndarray, targets: np.ndarray) -> float:
        """One step on positions ``boards`` (int8[B, 2, 25], side on roll in ``board[1]``) with
        target probabilities float32[B, 5]; returns the loss before the step."""
        boards = np.asarray(boards)
        n = len(boards)
        if self._buf.shape[0] < n:
            self._buf = np.empty((max(n, 256), self.net.num_inputs), np.float32)
        x = encode(boards, self.net.encoding, self._buf[:n])
        return self.update_encoded(x, targets, race_mask(boards) if self.split else None)

    def update_encoded(self, x: np.ndarray, targets: np.ndarray,
                       is_race: np.ndarray | None = None) -> float:
        """One step on encoded rows float32[B, F] with target probabilities float32[B, 5];
        a SplitValueNet also needs ``is_race`` (bool[B], :func:`~bgnet.nn.encode.race_mask`)."""
        x = np.ascontiguousarray(x, np.float32)
        t = np.ascontiguousarray(targets, np.float32)
        if x.ndim != 2 or x.shape[1] != self.net.num_inputs or t.shape != (len(x), 5) or not len(x):
            raise ValueError(f"expected x [B, {self.net.num_inputs}] and targets [B, 5] with B > 0; "
                             f"got {x.shape} and {t.shape}")
        rows = self._routes(is_race, len(x))
        v = self._bind()
        n = len(x)
        loss = 0.0
        stepped = []
        for k, idx in enumerate(rows):
            if idx is not None and not len(idx):
                continue  # torch never calls this sub-net: its parameters get no gradient
            xk, tk = (x, t) if idx is None else (x[idx], t[idx])
            loss += _mse_grads(xk, tk, n, self._acts[k], v["w"][k], v["b"][k], v["gw"][k],
                               v["gb"][k])
            stepped.append(k)
        if self.adam:
            self._adam(tuple(stepped))
        else:
            self._sgd(v, [i for k in stepped for i in self._members[k]])
        return float(loss)

    def _routes(self, is_race, n: int) -> list:
        """Per sub-net, the indices of its rows, or None for all of them."""
        if not self.split:
            if is_race is not None:
                raise ValueError("is_race is for a SplitValueNet; this net is a "
                                 f"{type(self.net).__name__}")
            return [None]
        if is_race is None:
            raise ValueError("a SplitValueNet needs is_race (bool[B]): see "
                             "bgnet.nn.encode.race_mask")
        mask = np.asarray(is_race)
        if mask.dtype != np.bool_ or mask.shape != (n,):
            raise ValueError(f"is_race must be a bool array of shape ({n},); got {mask.dtype} "
                             f"{mask.shape}")
        n_race = int(np.count_nonzero(mask))
        if n_race in (0, n):  # one sub-net takes every row, in order
            empty = np.empty(0, np.int64)
            return [empty, None] if n_race else [None, empty]
        return [np.flatnonzero(~mask), np.flatnonzero(mask)]

    def _adam(self, stepped: tuple) -> None:
        v = self._bind()
        members = [i for k in stepped for i in self._members[k]]
        if not all(self._has_state(self._params[i]) for i in members):
            for i in members:  # a sub-net's first step: torch makes its state now
                self._init_state(self._params[i])
            v = self._bind()  # the state grew: rebound, with views of the new tensors
        args = v["steps"].get(stepped)
        if args is None:
            args = v["steps"][stepped] = (
                tuple(v["flat"][i] for i in members), tuple(v["grads"][i] for i in members),
                tuple(v["m"][i] for i in members), tuple(v["v"][i] for i in members),
                tuple(v["step"][i] for i in members), v["group_of"][members])
        # Read afresh at every step: a schedule may have changed the learning rate.
        hyper = np.array([(g["lr"], *g["betas"], g["eps"], g["weight_decay"],
                           -1.0 if g["maximize"] else 1.0) for g in self.opt.param_groups])
        _adam_step(*args, hyper)

    def _sgd(self, v, members: list) -> None:
        hyper = np.empty((len(members), 7))
        bufs = []
        for row, k in enumerate(members):
            p = self._params[k]
            g = self.opt.param_groups[v["group_of"][k]]
            fresh = 0.0
            if g["momentum"] != 0:
                state = self.opt.state[p]
                if state.get("momentum_buffer") is None:  # torch starts it from the gradient
                    state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    fresh = 1.0
                bufs.append(_view(state["momentum_buffer"]).reshape(-1))
            else:
                bufs.append(v["grads"][k])  # unused without momentum
            hyper[row] = (g["lr"], g["weight_decay"], g["momentum"], g["dampening"],
                          1.0 if g["nesterov"] else 0.0, -1.0 if g["maximize"] else 1.0, fresh)
        _sgd_step(tuple(v["flat"][k] for k in members), tuple(v["grads"][k] for k in members),
                  tuple(bufs), hyper)
