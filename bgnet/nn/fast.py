"""A compiled CPU forward pass of :class:`~bgnet.nn.model.ValueNet` that reads boards directly.

Tesauro's raw inputs depend on each point only through its checker count, so the first layer's
contribution of a point is one of 16 vectors. The tables ``T[side, point, count]`` are computed
from the weights once per call (a few thousand multiply-adds), and the first layer of a position
becomes a sum of about twenty table rows instead of a dense 198 x H product: several times fewer
operations, and no encoded input matrix at all. The remaining layers are ordinary dense layers.

It computes the same function as the torch module (to float32 rounding) and is what self-play
and 0-ply play use on the CPU. Networks it does not cover (other activations) fall back to torch.

>>> import torch
>>> from bgnet.engine.board import start_position
>>> from bgnet.nn.model import ValueNet
>>> from bgnet.nn.encode import encode
>>> net = ValueNet("tesauro", 16)
>>> fast = FastForward(net)
>>> b = start_position()[None]
>>> ref = net(torch.from_numpy(encode(b, "tesauro"))).detach().numpy()
>>> bool(np.allclose(fast.positions(b), ref, atol=1e-5))
True
"""
from __future__ import annotations

import numpy as np
import torch
from numba import njit, prange

from bgnet.nn.encode import (CAN_BEAR_OFF_UNIT, EXTRA_PER_SIDE, EXTRA_START, RACE_UNIT,
                             TESAURO_SIDE, _extra_side, _outside, _pips, _race)

_ACT = {"sigmoid": 0, "tanh": 1, "relu": 2}


def supports(net: torch.nn.Module) -> bool:
    """Whether :class:`FastForward` can run this network."""
    return (type(net).__name__ == "ValueNet" and net.activation in _ACT and len(net.hidden) >= 1
            and net.encoding in ("tesauro", "extended"))


def _unit_values() -> np.ndarray:
    """u[n, k]: Tesauro's four units for a point holding n checkers (n = 0..15)."""
    u = np.zeros((16, 4), np.float32)
    for n in range(16):
        u[n] = [n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n > 3 else 0.0]
    return u


_U = _unit_values()
_COUNTS = np.arange(16, dtype=np.float32)


class FastForward:
    """Evaluate a ValueNet on boards with compiled code (CPU only)."""

    def __init__(self, net: torch.nn.Module):
        if not supports(net):
            raise ValueError("FastForward runs ValueNets with sigmoid, tanh or relu hidden layers on "
                             "the tesauro or extended encoding")
        self.net = net
        self.extended = net.encoding == "extended"
        self.act = _ACT[net.activation]

    def _tables(self):
        layers = [m for m in self.net.body if isinstance(m, torch.nn.Linear)] + [self.net.head]
        with torch.no_grad():
            w1 = layers[0].weight.detach().cpu().numpy().astype(np.float32)  # [H, F]
            b1 = layers[0].bias.detach().cpu().numpy().astype(np.float32)
            rest = [(l.weight.detach().cpu().numpy().astype(np.float32),
                     l.bias.detach().cpu().numpy().astype(np.float32)) for l in layers[1:]]
        h = w1.shape[0]
        tpt = np.empty((2, 24, 16, h), np.float32)
        tbar = np.empty((2, 16, h), np.float32)
        toff = np.empty((2, 16, h), np.float32)
        for s in range(2):
            base = s * TESAURO_SIDE
            blk = w1[:, base:base + 96].reshape(h, 24, 4)  # [H, point, unit]
            tpt[s] = np.einsum("nk,hpk->pnh", _U, blk)
            tbar[s] = np.outer(_COUNTS * 0.5, w1[:, base + 96])
            toff[s] = np.outer(_COUNTS / 15.0, w1[:, base + 97])
        flags = np.ascontiguousarray(w1[:, [RACE_UNIT, CAN_BEAR_OFF_UNIT]].T)  # [2, H]
        extra = np.ascontiguousarray(w1[:, EXTRA_START:].T) if self.extended else np.zeros((0, h), np.float32)
        widths = np.array([w.shape[0] for w, _ in rest], np.int64)
        flat_w = np.concatenate([w.T.ravel() for w, _ in rest]).astype(np.float32)  # stored [in, out]
        flat_b = np.concatenate([b for _, b in rest]).astype(np.float32)
        return tpt, tbar, toff, flags, extra, b1, widths, flat_w, flat_b

    def _run(self, boards: np.ndarray, roll_row: int) -> np.ndarray:
        boards = np.ascontiguousarray(boards, np.int8)
        out = np.empty((len(boards), 5), np.float32)
        if len(boards):
            _forward(boards, roll_row, self.extended, self.act, *self._tables(), out)
        return out

    def positions(self, boards: np.ndarray) -> np.ndarray:
        """Probabilities [N, 5] for the side on roll (``board[1]``)."""
        return self._run(boards, 1)

    def swapped(self, after: np.ndarray) -> np.ndarray:
        """Probabilities [N, 5] for the side on roll of ``swap(after)`` (the opponent of the mover)."""
        return self._run(after, 0)


@njit(cache=True, inline="always", fastmath=True, error_model="numpy")
def _activate(x, act):
    if act == 0:
        return 1.0 / (1.0 + np.exp(-x))
    if act == 1:
        return np.tanh(x)
    return x if x > 0.0 else 0.0


@njit(cache=True, parallel=True, fastmath=True, error_model="numpy")
def _forward(boards, roll_row, extended, act, tpt, tbar, toff, flags, extra, b1, widths,
             flat_w, flat_b, out):
    n = boards.shape[0]
    h1 = b1.shape[0]
    widest = h1
    for w in widths:
        widest = max(widest, w)
    opp_row = 1 - roll_row
    n_extra = extra.shape[0]
    block = 256  # rows per parallel chunk, so scratch is allocated per chunk, not per row
    for blk in prange((n + block - 1) // block):
        cur = np.empty(widest, np.float32)
        nxt = np.empty(widest, np.float32)
        feats = np.zeros((1, EXTRA_START + n_extra), np.float32)
        for r in range(blk * block, min(n, (blk + 1) * block)):
            _one(boards, r, roll_row, opp_row, extended, act, tpt, tbar, toff, flags, extra, b1,
                 widths, flat_w, flat_b, out, cur, nxt, feats, h1, n_extra)


@njit(cache=True, inline="always", fastmath=True, error_model="numpy")
def _one(boards, r, roll_row, opp_row, extended, act, tpt, tbar, toff, flags, extra, b1, widths,
         flat_w, flat_b, out, cur, nxt, feats, h1, n_extra):
    if True:
        for j in range(h1):
            cur[j] = b1[j]
        for s in range(2):
            row = roll_row if s == 0 else opp_row
            total = 0
            for i in range(24):
                c = boards[r, row, i]
                total += c
                if c > 0:
                    t = tpt[s, i, c]
                    for j in range(h1):
                        cur[j] += t[j]
            nb = boards[r, row, 24]
            off = 15 - total - nb
            if nb > 0:
                t = tbar[s, nb]
                for j in range(h1):
                    cur[j] += t[j]
            if off > 0:
                t = toff[s, off]
                for j in range(h1):
                    cur[j] += t[j]
        me = boards[r, roll_row]
        opp = boards[r, opp_row]
        if _race(me, opp):
            for j in range(h1):
                cur[j] += flags[0, j]
        if _outside(me) == 0:
            for j in range(h1):
                cur[j] += flags[1, j]
        if extended:
            _extra_side(me, opp, feats, 0, EXTRA_START)
            _extra_side(opp, me, feats, 0, EXTRA_START + EXTRA_PER_SIDE)
            feats[0, EXTRA_START + 2 * EXTRA_PER_SIDE] = (_pips(opp) - _pips(me)) / 100.0
            for k in range(n_extra):
                v = feats[0, EXTRA_START + k]
                if v != 0.0:
                    for j in range(h1):
                        cur[j] += v * extra[k, j]
        for j in range(h1):
            cur[j] = _activate(cur[j], act)
        # Dense layers after the first; the last one gives the five logits.
        width = h1
        wpos = 0
        bpos = 0
        nl = widths.shape[0]
        for li in range(nl):
            wout = widths[li]
            for o in range(wout):
                nxt[o] = flat_b[bpos + o]
            for i in range(width):
                v = cur[i]
                base = wpos + i * wout
                for o in range(wout):
                    nxt[o] += v * flat_w[base + o]
            wpos += width * wout
            bpos += wout
            last = li == nl - 1
            for o in range(wout):
                cur[o] = nxt[o] if last else _activate(nxt[o], act)
            width = wout
        # Conditional logits -> consistent probabilities (see bgnet.nn.model).
        s0 = 1.0 / (1.0 + np.exp(-cur[0]))
        s1 = 1.0 / (1.0 + np.exp(-cur[1]))
        s2 = 1.0 / (1.0 + np.exp(-cur[2]))
        s3 = 1.0 / (1.0 + np.exp(-cur[3]))
        s4 = 1.0 / (1.0 + np.exp(-cur[4]))
        wg = s0 * s1
        lg = (1.0 - s0) * s3
        out[r, 0] = s0
        out[r, 1] = wg
        out[r, 2] = wg * s2
        out[r, 3] = lg
        out[r, 4] = lg * s4
