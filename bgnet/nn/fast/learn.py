"""The minibatch update of training in compiled code: :class:`FastLearner`, and
:func:`learner_unsupported` saying when it cannot run.

The same update as the torch learner with loss ``"mse"``: forward from encoded inputs, backprop
through the conditional-logit probabilities (:func:`bgnet.nn.probs.probs_from_logits`:
``win = s(a)``, ``wg = win s(b)``, ``wbg = wg s(c)``, ``lg = (1 - win) s(d)``,
``lbg = lg s(e)``) and the squared error summed over the five outputs and averaged over rows, then
one step of ``torch.optim.Adam`` or ``torch.optim.SGD`` with their exact semantics. The optimizer
*is* the torch optimizer: FastLearner reads its hyperparameters from ``param_groups`` (so a
learning-rate schedule that sets ``group["lr"]`` works unchanged) and keeps Adam's moments, its
step counts and SGD's momentum buffers in the optimizer's own ``state`` tensors, written through
numpy views in the format torch itself uses. ``optimizer.state_dict()`` therefore is a torch
optimizer state whichever path made the steps, and a checkpoint written by either path resumes in
the other. The weights are the module's own parameters, updated in place through numpy views, in
the order the net's declared layout (:func:`bgnet.nn.model.net_layout`) lists them.

SplitValueNet. Rows are routed as the torch module routes them, by
:func:`~bgnet.nn.encode.race_mask` of the boards; each sub-net runs the compiled code below on its
own rows. The loss is the mean over the whole minibatch and a sub-net without rows gets no
gradient, so its parameters are not stepped at all (see :class:`FastLearner`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from numba import njit

from bgnet.nn.encode import encode, race_mask
from bgnet.nn.fast.forward import supports
from bgnet.nn.fast.kernels import (
    EXACT_FLAGS,
    F0,
    F1,
    F2,
    SUM_FLAGS,
    activate_rows,
    activation_codes,
    dense_rows,
    sigmoid32,
)

if TYPE_CHECKING:  # bgnet.nn.model imports this package: only the type checker reads it here
    from bgnet.nn.model import SplitValueNet, ValueNet


def _view(t: torch.Tensor) -> np.ndarray:
    """A numpy array sharing memory with ``t`` (writes go straight into the tensor)."""
    return t.detach().numpy()


def _subnet_parameters(net) -> list[tuple[np.ndarray, list[torch.Tensor]]]:
    """Per sub-net of the net's declared layout: its hidden layers' activation codes and its
    parameters (weight, bias, weight, bias, ... from the first layer to the logits)."""
    from bgnet.nn.model import net_layout

    params = dict(net.named_parameters())
    return [(activation_codes(sub),
             [params[layer[key]] for layer in sub["layers"] for key in ("weight", "bias")])
            for sub in net_layout(net)["subnets"]]




@njit(cache=True, fastmath=EXACT_FLAGS, error_model="numpy")
def _mse_head(z, t, n_total, dz):
    """Loss ``((p - t)^2).sum(-1).sum() / n_total`` of the probabilities built from the logits
    ``z`` [B, 5] (the mean when ``n_total`` is B; a SplitValueNet's sub-net sees part of a
    minibatch of ``n_total`` rows); writes its gradient with respect to the logits into ``dz``."""
    n = z.shape[0]
    scale = F2 / np.float32(n_total)
    total = 0.0
    for r in range(n):
        s0 = sigmoid32(z[r, 0])
        s1 = sigmoid32(z[r, 1])
        s2 = sigmoid32(z[r, 2])
        s3 = sigmoid32(z[r, 3])
        s4 = sigmoid32(z[r, 4])
        lose = F1 - s0
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
        dz[r, 0] = d0 * s0 * (F1 - s0)
        dz[r, 1] = d1 * s1 * (F1 - s1)
        dz[r, 2] = d2 * s2 * (F1 - s2)
        dz[r, 3] = d3 * s3 * (F1 - s3)
        dz[r, 4] = d4 * s4 * (F1 - s4)
    return total / n_total


@njit(cache=True, fastmath=SUM_FLAGS, error_model="numpy")
def _layer_grads(inp, dz, gw, gb):
    """Gradients of a dense layer's weights [out, in] and bias from its input rows and the
    gradient ``dz`` of its outputs (overwritten, not accumulated). ``gw = dz.T @ inp``, run as a
    dense layer over the transposed arrays, so that it takes the forward pass's tiled kernel
    (one multiply-add per weight and row at a time loaded and stored ``gw`` at each step)."""
    n_out = gw.shape[0]
    for o in range(n_out):
        gb[o] = F0
    for r in range(inp.shape[0]):
        for o in range(n_out):
            gb[o] += dz[r, o]
    dense_rows(np.ascontiguousarray(dz.T), n_out, np.ascontiguousarray(inp.T),
                np.zeros(gw.shape[1], np.float32), gw)


@njit(cache=True, fastmath=SUM_FLAGS, error_model="numpy")
def _input_grads(dz, w, h, act):
    """Gradient of the pre-activations of the layer below, whose outputs are ``h``, from the
    gradient ``dz`` of this layer's outputs and its weights ``w`` [out, in]: ``dz @ w`` (a dense
    layer whose weights are ``w.T``, the forward pass's tiled kernel) times the derivative of
    the activation."""
    n, n_in = h.shape
    dh = np.empty((n, n_in), np.float32)
    dense_rows(dz, n, np.ascontiguousarray(w.T), np.zeros(n_in, np.float32), dh)
    for r in range(n):
        for i in range(n_in):
            v = h[r, i]
            if act == 0:
                dh[r, i] *= v * (F1 - v)
            elif act == 1:
                dh[r, i] *= F1 - v * v
            elif v <= F0:
                dh[r, i] = F0
    return dh


@njit(cache=True, fastmath=SUM_FLAGS, error_model="numpy")
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


@njit(cache=True, fastmath=SUM_FLAGS, error_model="numpy")
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
def _mse_grads(x, t, n_total, acts, ws, bs, gws, gbs):
    """Forward pass of encoded rows ``x`` through the dense layers ``ws``/``bs`` (torch layout,
    hidden activations ``acts``, one code per layer, the last layer giving the five logits), the mse loss against
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
            dense_rows(outs[li], n, ws[li], bs[li], z)
        if li < len(ws) - 1:
            activate_rows(z, n, acts[li])
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
            dz = _input_grads(dz, ws[li], outs[li], acts[li - 1])
    return loss


@njit(cache=True, fastmath=EXACT_FLAGS, error_model="numpy")
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


@njit(cache=True, fastmath=EXACT_FLAGS, error_model="numpy")
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
                "with sigmoid, tanh or relu hidden layers)")
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

    def __init__(self, net: ValueNet | SplitValueNet, optimizer: torch.optim.Optimizer):
        reason = learner_unsupported(net, optimizer)
        if reason is not None:
            raise ValueError(f"FastLearner cannot run {reason}")
        self.net, self.opt = net, optimizer
        self.adam = type(optimizer) is torch.optim.Adam
        subnets = _subnet_parameters(net)
        self.split = len(subnets) == 2
        self._acts = tuple(act for act, _ in subnets)
        self._params: list[torch.Tensor] = []  # every weight and bias, sub-net after sub-net
        self._members: list[tuple[int, ...]] = []  # per sub-net: the indices of its parameters in self._params
        for _, own in subnets:
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
        return state is not None and "step" in state

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
        ps, gs, ms, vs, steps, group_of = args
        _adam_step(ps, gs, ms, vs, steps, group_of, hyper)

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
