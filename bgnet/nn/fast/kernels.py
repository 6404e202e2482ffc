"""Compiled building blocks shared by the forward pass and the learner: a vectorizable float32
``exp`` (built from an LLVM bitcast), the activations and the dense-layer loops.

Sigmoid. LLVM vectorizes no call to ``exp`` here (numba has no SVML on this build), and a scalar
``exp`` per hidden unit was the largest cost of the forward pass. :func:`exp32` is a float32
``exp`` by range reduction and a degree-6 polynomial (Cephes' ``expf``), with the power of two
built from its bit pattern; it vectorizes, and its relative error is below 3e-7 (below 1e-6 for
the sigmoid built on it).

Activations are passed to compiled code as small integers, :data:`ACT` (the layout's names,
:mod:`bgnet.nn.layout`, of the activations the compiled code runs).

Fast-math flags. Sums may be reassociated (so that dot products and accumulations run in vector
lanes); elementwise code may only fuse multiply-adds: reassociation would undo the exp's
two-step range reduction, approximate reciprocals would cost precision. No flag assumes away NaN
or infinity, so a diverged net gives NaN here as it does in torch. ``error_model="numpy"``
everywhere: Python's division-by-zero check would stop the loops from vectorizing.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import types
from numba.extending import intrinsic

ACT = {"sigmoid": 0, "tanh": 1, "relu": 2}


def activation_codes(subnet: dict) -> np.ndarray:
    """The :data:`ACT` codes of a declared sub-net's hidden layers, the first layer's first (each
    layer has its own: a deepened net mixes them)."""
    return np.array([ACT[layer["activation"]] for layer in subnet["layers"][:-1]], np.int64)
SUM_FLAGS = {"reassoc", "nsz", "contract"}
EXACT_FLAGS = {"contract"}


F0 = np.float32(0.0)
F1 = np.float32(1.0)
F2 = np.float32(2.0)
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


@njit(cache=True, inline="always", fastmath=EXACT_FLAGS, error_model="numpy")
def exp32(x):
    """exp(x) for float32 x, relative error < 3e-7; arguments are clamped to [-87, 88]."""
    x = min(max(x, _EXP_LO), _EXP_HI)
    n = np.floor(x * _LOG2E + _HALF)
    r = x - n * _LN2_HI
    r = r - n * _LN2_LO
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    p = p * (r * r) + r + F1
    return p * _f32_from_bits((np.int32(n) + 127) << 23)


@njit(cache=True, inline="always", fastmath=EXACT_FLAGS, error_model="numpy")
def sigmoid32(x):
    return F1 / (F1 + exp32(-x))


@njit(cache=True, inline="always", fastmath=EXACT_FLAGS, error_model="numpy")
def tanh32(x):
    # 1 - 2 / (1 + e^2x): absolute error ~2e-7 near 0, where tanh itself is small.
    return F1 - F2 / (F1 + exp32(F2 * x))


@njit(cache=True, fastmath=EXACT_FLAGS, error_model="numpy")
def activate_rows(a, m, act):
    """Apply the activation (0 sigmoid, 1 tanh, 2 relu) to rows ``a[:m]`` in place."""
    w = a.shape[1]
    for r in range(m):
        if act == 0:
            for j in range(w):
                a[r, j] = sigmoid32(a[r, j])
        elif act == 1:
            for j in range(w):
                a[r, j] = tanh32(a[r, j])
        else:
            for j in range(w):
                a[r, j] = max(a[r, j], F0)


@njit(cache=True, fastmath=EXACT_FLAGS, error_model="numpy")
def probs_rows(z, m, out, lo):
    """Five conditional logits ``z[:m]`` (a C-contiguous [B, 5] block) -> consistent
    probabilities ``out[lo:lo + m]``."""
    flat = z.reshape(z.size)  # one contiguous run of 5 m logits: the sigmoid vectorizes
    for j in range(5 * m):
        flat[j] = sigmoid32(flat[j])
    for r in range(m):
        s0 = z[r, 0]
        wg = s0 * z[r, 1]
        lg = (F1 - s0) * z[r, 3]
        out[lo + r, 0] = s0
        out[lo + r, 1] = wg
        out[lo + r, 2] = wg * z[r, 2]
        out[lo + r, 3] = lg
        out[lo + r, 4] = lg * z[r, 4]


@njit(cache=True, inline="always", fastmath=SUM_FLAGS, error_model="numpy")
def _dense_four(inp, r, w, b, spans, out):
    """Rows ``r:r + 4`` of :func:`dense_rows`, two outputs at a time: each pass over the inputs
    loads a weight once for four rows and an input once for two outputs. Outputs ``2p`` and
    ``2p + 1`` read inputs ``spans[p, 0]:spans[p, 1]`` only (:func:`layer_spans`). The bounds
    are unsigned: an index numba cannot prove non-negative gets a wraparound test on every load,
    which stops the loop from vectorizing (twelve times slower)."""
    n_out = w.shape[0]
    o = 0
    while o + 2 <= n_out:
        s0 = s1 = s2 = s3 = t0 = t1 = t2 = t3 = F0
        for i in range(np.uint64(spans[o >> 1, 0]), np.uint64(spans[o >> 1, 1])):
            u = w[o, i]
            v = w[o + 1, i]
            a0 = inp[r, i]
            a1 = inp[r + 1, i]
            a2 = inp[r + 2, i]
            a3 = inp[r + 3, i]
            s0 += a0 * u
            s1 += a1 * u
            s2 += a2 * u
            s3 += a3 * u
            t0 += a0 * v
            t1 += a1 * v
            t2 += a2 * v
            t3 += a3 * v
        out[r, o] = s0 + b[o]
        out[r + 1, o] = s1 + b[o]
        out[r + 2, o] = s2 + b[o]
        out[r + 3, o] = s3 + b[o]
        out[r, o + 1] = t0 + b[o + 1]
        out[r + 1, o + 1] = t1 + b[o + 1]
        out[r + 2, o + 1] = t2 + b[o + 1]
        out[r + 3, o + 1] = t3 + b[o + 1]
        o += 2
    if o < n_out:  # an odd output count: the last output, one dot product per row
        for k in range(r, r + 4):
            s = F0
            for i in range(np.uint64(spans[o >> 1, 0]), np.uint64(spans[o >> 1, 1])):
                s += inp[k, i] * w[o, i]
            out[k, o] = s + b[o]


@njit(cache=True, error_model="numpy")
def full_spans(w):
    """:func:`layer_spans` of a dense layer: every output pair reads every input."""
    spans = np.empty(((w.shape[0] + 1) // 2, 2), np.int64)
    spans[:, 0] = 0
    spans[:, 1] = w.shape[1]
    return spans


def layer_spans(w: np.ndarray) -> np.ndarray:
    """For each pair of outputs ``(2p, 2p + 1)`` of the dense layer ``w`` ([out, in]), the range
    ``[lo, hi)`` of inputs outside which both rows' weights are exactly zero (``lo == hi`` where
    the pair reads nothing). A merged net's hidden layers are block-diagonal (:mod:`bgnet.nn.merge`):
    each member's units read their own member's units only, and their spans skip the zero blocks,
    which hold half a two-member merge's arithmetic. Leaving out terms that are exactly zero
    changes no sum beyond float32 reassociation.

    >>> layer_spans(np.array([[1, 2, 0, 0], [0, 3, 0, 0], [0, 0, 4, 5]], np.float32)).tolist()
    [[0, 2], [2, 4]]
    """
    w = np.asarray(w)
    n_out, n_in = w.shape
    nonzero = w != 0
    if n_out % 2:
        nonzero = np.vstack([nonzero, np.zeros((1, n_in), bool)])
    pairs = nonzero[0::2] | nonzero[1::2]
    spans = np.zeros((len(pairs), 2), np.int64)
    any_ = pairs.any(axis=1)
    spans[any_, 0] = pairs[any_].argmax(axis=1)
    spans[any_, 1] = n_in - pairs[any_, ::-1].argmax(axis=1)
    return spans


def spans_save_work(w: np.ndarray, spans: np.ndarray, share: float = 0.9) -> bool:
    """Whether ``spans`` leave out more than ``1 - share`` of ``w``'s products: worth a layer of
    its own spans only then (a dense layer's spans are all full)."""
    return float((spans[:, 1] - spans[:, 0]).sum()) * 2 < share * w.size


@njit(cache=True, fastmath=SUM_FLAGS, error_model="numpy")
def dense_rows(inp, m, w, b, out):
    """``out[:m] = inp[:m] @ w.T + b`` with ``w`` in torch's [out, in] layout (every input read:
    :func:`dense_rows_spans` with :func:`full_spans`)."""
    dense_rows_spans(inp, m, w, b, full_spans(w), out)


@njit(cache=True, fastmath=SUM_FLAGS, error_model="numpy")
def dense_rows_spans(inp, m, w, b, spans, out):
    """``out[:m] = inp[:m] @ w.T + b`` with ``w`` in torch's [out, in] layout, each output pair
    reading only the inputs of its span (:func:`layer_spans`; elsewhere its weights are zero).

    Tiled four rows by two outputs (:func:`_dense_four`): eight dot products in vector lanes at
    once (reassociated). One dot product at a time, as before, was bound by its two loads per
    multiply-add; the 256-by-256 layer of a deepened net now takes about 40 % less time. Every
    row goes through the same tile (the last ``m % 4`` padded with zero rows), so a row's result
    never depends on the rows beside it or on the batch's size."""
    n_out, n_in = w.shape
    r = 0
    while r + 4 <= m:
        _dense_four(inp, r, w, b, spans, out)
        r += 4
    if r < m:
        pad = np.zeros((4, n_in), np.float32)
        pad[:m - r] = inp[r:m]
        res = np.empty((4, n_out), np.float32)
        _dense_four(pad, 0, w, b, spans, res)
        out[r:m] = res[:m - r]


@njit(cache=True, error_model="numpy")
def dense_stack(cur, m, acts, ws, bs, ss):
    """The first ``m`` rows of ``cur`` through the dense layers ``ws``/``bs`` (each read over its
    spans ``ss``, :func:`layer_spans`): after each but the last, its activation ``acts[i]`` (codes
    of :data:`ACT`); the last one's output (the five logits) is returned."""
    for li in range(len(ws)):
        nxt = np.empty((cur.shape[0], ws[li].shape[0]), np.float32)
        dense_rows_spans(cur, m, ws[li], bs[li], ss[li], nxt)
        if li < len(ws) - 1:
            activate_rows(nxt, m, acts[li])
        cur = nxt
    return cur
