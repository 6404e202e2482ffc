"""Deepening a trained value net without changing what it computes (Net2Net's "deeper" step).

A run can start with a small, cheap net and grow it: :func:`deepen` inserts a new hidden layer
after hidden layer ``K`` (counted from 1) that starts as the identity of what it follows, so the
deeper net computes what the trained one did and training carries on from there.

The new layer is ``Linear`` followed by ReLU, and the net then mixes activations (a sigmoid net
gains a relu layer): :class:`~bgnet.nn.model.ValueNet` takes one activation per hidden layer,
its declared layout names each layer's own, and the compiled pass and the ONNX export follow the
layout. A sigmoid layer cannot be an identity (it is never linear), which is why the new layer is
a ReLU layer whatever the net's own activation.

Why the function is kept exactly. Let ``x`` be the outputs of hidden layer K (width ``h``) and
``W`` the weights of the layer that read them.

* When ``x >= 0``, as sigmoid and relu outputs are: the new layer has weights ``I`` (``h`` rows,
  then ``width - h`` rows of zeros) and bias 0, so it computes ``relu(x) = x`` on its first ``h``
  units and 0 on the others; the next layer's weights become ``[W | 0]``, which gives ``W x``.
* When ``x`` may be negative (tanh, elu, leaky_relu, silu): the new layer has weights
  ``[I; -I; 0]`` and bias 0, computing ``(relu(x), relu(-x), 0)``, and the next layer's weights
  become ``[W | -W | 0]``, which gives ``W relu(x) - W relu(-x) = W x`` for any sign. It needs
  ``width >= 2h``.
* A narrower layer (a bottleneck, cheaper to evaluate than an identity of a wide layer): with
  ``n`` the width of the layer that read ``x`` (5 when that is the head), the new layer has
  weights ``[W; -W; 0]`` and bias 0, computing ``(relu(W x), relu(-W x), 0)``, and the reading
  layer's weights become ``[I | -I | 0]`` with its bias kept, which gives ``W x`` again. It needs
  ``width >= 2n``, and is used only when the width is below what an identity needs: the new
  layer starts by carrying the old layer's sums, and its other units learn the rest.

Each product that matters is the same product as before and the added ones are exact zeros, so
the deeper net differs only by the order in which float32 sums are rounded. Units beyond those
the construction needs have zero outgoing weights: with ``noise`` their incoming weights are
random, so they compute something and can learn, without changing the function. ``noise`` also
perturbs the identity block (by ``noise`` times a standard normal per weight), which changes the
function by about that much; the default, 0, keeps it exactly.

>>> import torch
>>> from bgnet.nn.model import ValueNet
>>> net = ValueNet("tesauro", 8)
>>> deep = deepen(net)
>>> x = torch.rand(4, net.num_inputs)
>>> deep.hidden, deep.activation, bool(torch.allclose(deep(x), net(x), atol=1e-6))
([8, 8], ['sigmoid', 'relu'], True)
"""
from __future__ import annotations

import torch

from bgnet.errors import BadArgument
from bgnet.nn.model import SplitValueNet, ValueNet, dense_layers

# Hidden activations whose outputs are never negative: the new layer needs no more units.
NONNEGATIVE = ("sigmoid", "relu")
# Activations the inserted layer may have (the identity construction above needs ReLU).
INSERTED = ("relu",)
SUBNETS = ("contact", "race", "both")


def identity_width(net: ValueNet, after: int) -> int:
    """The fewest units an identity layer after hidden layer ``after`` of ``net`` can have."""
    h = net.hidden[after - 1]
    return h if net.activations[after - 1] in NONNEGATIVE else 2 * h


def readout_width(net: ValueNet, after: int) -> int:
    """The fewest units a layer after hidden layer ``after`` can have when it carries the sums of
    the layer that read that hidden layer (twice that layer's width)."""
    return 2 * (net.hidden[after] if after < len(net.hidden) else net.head.out_features)


def smallest_width(net: ValueNet, after: int) -> int:
    """The fewest units a function-keeping layer after hidden layer ``after`` can have."""
    return min(identity_width(net, after), readout_width(net, after))


def deepen(net: ValueNet, after: int | None = None, width: int | None = None,
           activation: str = "relu", noise: float = 0.0, seed: int = 0) -> ValueNet:
    """A copy of ``net`` with a new hidden layer of ``width`` units (default: the fewest the
    construction needs) after hidden layer ``after`` (1 .. number of hidden layers; default the
    last), computing the same function (see the module doc). Impossible requests raise
    :class:`~bgnet.errors.BadArgument`."""
    after = _check(net, after, width, activation, noise)
    need = identity_width(net, after)
    width = need if width is None else int(width)
    if width < smallest_width(net, after):
        kind = "sigmoid or relu" if need == net.hidden[after - 1] else net.activations[after - 1]
        raise BadArgument(f"a layer after hidden layer {after} ({kind}, {net.hidden[after - 1]} "
                          f"units) needs at least {smallest_width(net, after)} units to keep the "
                          f"net's function ({need} as an identity, {readout_width(net, after)} to "
                          f"carry the next layer's sums); got --width {width}")
    readout = width < need
    hidden = net.hidden[:after] + [width] + net.hidden[after:]
    acts = net.activations[:after] + [activation] + net.activations[after:]
    deep = ValueNet(net.encoding, hidden, acts)
    old, new = dense_layers(net), dense_layers(deep)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for k, layer in enumerate(old):
            target = new[k if k < after else k + 1]
            if k == after and readout:  # [I | -I | 0]: adds up the new layer's +- copies of its sums
                n = layer.weight.shape[0]
                target.weight.copy_(_identity(n, width, 2 * n).T)
            elif k == after:  # the layer that read hidden layer K now reads the new layer
                target.weight.copy_(_reader(layer.weight, width, need))
            else:
                target.weight.copy_(layer.weight)
            target.bias.copy_(layer.bias)
        inserted = new[after]
        if readout:  # [W; -W; 0]: the reading layer's sums, both signs
            w = old[after].weight
            inserted.weight.copy_(_reader(w.T, width, 2 * w.shape[0]).T)
        else:
            inserted.weight.copy_(_identity(net.hidden[after - 1], width, need))
        inserted.bias.zero_()
        if noise:
            inserted.weight.add_(noise * torch.randn(inserted.weight.shape, generator=gen))
    return deep


def deepen_split(net: SplitValueNet, which: str = "both", after: int | None = None,
                 width: int | None = None, activation: str = "relu", noise: float = 0.0,
                 seed: int = 0) -> SplitValueNet:
    """A copy of a :class:`SplitValueNet` with its ``which`` net(s) (``contact``, ``race`` or
    ``both``) deepened by :func:`deepen`."""
    if which not in SUBNETS:
        raise BadArgument(f"unknown sub-net {which!r}; give one of {', '.join(SUBNETS)}")
    contact, race = net.contact, net.race
    if which in ("contact", "both"):
        contact = deepen(contact, after, width, activation, noise, seed)
    if which in ("race", "both"):
        race = deepen(race, after, width, activation, noise, seed + 1)
    return SplitValueNet.of(contact, race)


def _check(net, after, width, activation, noise) -> int:
    if not isinstance(net, ValueNet):
        raise BadArgument(f"deepen works on a ValueNet (a SplitValueNet's sub-nets: deepen_split); "
                          f"got a {type(net).__name__}")
    if not net.hidden:
        raise BadArgument("a net without hidden layers has no layer to deepen after")
    depth = len(net.hidden)
    after = depth if after is None else int(after)
    if not 1 <= after <= depth:
        raise BadArgument(f"--after must name a hidden layer, 1 to {depth} (the net's hidden "
                          f"layers {net.hidden}); got {after}")
    if activation not in INSERTED:
        raise BadArgument(f"the new layer's activation must be one of {', '.join(INSERTED)} (only "
                          f"a ReLU layer can start as an exact identity); got {activation!r}")
    if width is not None and int(width) <= 0:
        raise BadArgument(f"--width must be a positive number of units; got {width}")
    if not noise >= 0.0:
        raise BadArgument(f"--noise must be 0 or more; got {noise}")
    return after


def _identity(h: int, width: int, need: int) -> torch.Tensor:
    """The new layer's weights [width, h]: ``I`` (or ``I; -I`` when ``need`` is 2h), then zeros."""
    w = torch.zeros(width, h)
    eye = torch.eye(h)
    w[:h] = eye
    if need == 2 * h:
        w[h:2 * h] = -eye
    return w


def _reader(w: torch.Tensor, width: int, need: int) -> torch.Tensor:
    """The weights [out, width] that read the new layer: ``[W | 0]`` or ``[W | -W | 0]``."""
    out = torch.zeros(w.shape[0], width, dtype=w.dtype)
    h = w.shape[1]
    out[:, :h] = w
    if need == 2 * h:
        out[:, h:2 * h] = -w
    return out

