"""Widening a trained value net without changing what it computes (Net2Net's "wider" step).

A net that has stopped improving at its width can be given more hidden units and trained on,
instead of being trained again from nothing. Any one hidden layer can be widened: each new unit
copies an existing unit of that layer (its incoming weights and bias); the copied unit and its
copy then share the old unit's outgoing weights in the next layer (or the head), half each. The
activations act unit by unit, so the two compute the same value and the widened net computes the
same function. A little noise on the copies' incoming weights lets the two drift apart in
training (exact copies would receive identical gradients forever).

>>> import torch
>>> from bgnet.nn.model import ValueNet
>>> net = ValueNet("tesauro", 8)
>>> wide = widen(net, 12, noise=0.0)
>>> x = torch.rand(4, net.num_inputs)
>>> wide.hidden, bool(torch.allclose(wide(x), net(x), atol=1e-6))
([12], True)
>>> grown = grow_inputs(net, "extended")  # Tesauro's inputs and the extended encoding's extras
>>> x2 = torch.cat([x, torch.rand(4, 23)], dim=1)
>>> grown.num_inputs, bool(torch.allclose(grown(x2), net(x), atol=1e-6))
(221, True)
>>> deep = ValueNet("tesauro", [8, 6], ["sigmoid", "relu"])
>>> wider = widen(deep, 10, noise=0.0, layer=2)
>>> wider.hidden, bool(torch.allclose(wider(x), deep(x), atol=1e-6))
([8, 10], True)
"""
from __future__ import annotations

import torch

from bgnet.errors import BadArgument
from bgnet.nn.encode import extends
from bgnet.nn.model import SplitValueNet, ValueNet, dense_layers


def widen(net: ValueNet, hidden: int, noise: float = 1e-3, seed: int = 0,
          layer: int = 1) -> ValueNet:
    """A copy of ``net`` whose hidden layer ``layer`` (counted from 1) has ``hidden`` units (at
    least its width); every other layer keeps its weights. Impossible requests raise
    :class:`~bgnet.errors.BadArgument`."""
    if not isinstance(net, ValueNet):
        raise BadArgument(f"widen works on a ValueNet; got {type(net).__name__}")
    if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= len(net.hidden):
        raise BadArgument(f"this net has {len(net.hidden)} hidden layer(s) {net.hidden}; "
                          f"layer {layer!r} is not one of them (they are counted from 1)")
    old = net.hidden[layer - 1]
    if hidden < old:
        raise BadArgument(f"cannot widen {old} hidden units to fewer ({hidden})")
    if not noise >= 0.0:
        raise BadArgument(f"the noise must be 0 or more; got {noise}")
    gen = torch.Generator().manual_seed(seed)
    source = torch.cat([torch.arange(old), torch.randint(0, old, (hidden - old,), generator=gen)])
    # How many units share each old unit's outgoing weights after widening.
    share = torch.bincount(source, minlength=old).float()
    widths = list(net.hidden)
    widths[layer - 1] = hidden
    wide = ValueNet(net.encoding, widths, net.activation)
    with torch.no_grad():
        for k, (was, now) in enumerate(zip(dense_layers(net), dense_layers(wide))):
            if k == layer - 1:  # the widened layer: its units, then the copies
                w = was.weight[source].clone()
                w[old:] += noise * torch.randn(w[old:].shape, generator=gen)
                now.weight.copy_(w)
                now.bias.copy_(was.bias[source])
            elif k == layer:  # its reader: each copy takes its share of the unit's weights
                now.weight.copy_(was.weight[:, source] / share[source])
                now.bias.copy_(was.bias)
            else:
                now.load_state_dict(was.state_dict())
    return wide


def widen_split(net: SplitValueNet, contact_hidden: int, race_hidden: int | None = None,
                noise: float = 1e-3, seed: int = 0, layer: int = 1) -> SplitValueNet:
    """A :class:`SplitValueNet` with hidden layer ``layer`` of its contact net widened to
    ``contact_hidden`` units and, when ``race_hidden`` is given, the race net's first layer."""
    contact = widen(net.contact, contact_hidden, noise, seed, layer)
    race = net.race if race_hidden is None else widen(net.race, race_hidden, noise, seed + 1)
    return SplitValueNet.of(contact, race)


def grow_inputs(net: ValueNet | SplitValueNet, encoding: str) -> ValueNet | SplitValueNet:
    """A copy of ``net`` that reads ``encoding``, an encoding whose features begin with all of
    the net's own (:func:`bgnet.nn.encode.extends`): the first layer's weights of the new
    inputs start at zero, so it computes the same function until training moves them."""
    if not isinstance(net, (ValueNet, SplitValueNet)):
        raise BadArgument(f"grow_inputs works on a ValueNet or SplitValueNet; got {type(net).__name__}")
    try:
        readable = extends(encoding, net.encoding)
    except ValueError as e:  # an unknown name: the encoder's own message
        raise BadArgument(str(e)) from None
    if not readable:
        raise BadArgument(f"the {encoding!r} encoding does not begin with the net's own "
                          f"{net.encoding!r} inputs, so the net cannot read it")
    if isinstance(net, SplitValueNet):
        return SplitValueNet.of(_grown(net.contact, encoding), _grown(net.race, encoding))
    return _grown(net, encoding)


def _grown(net: ValueNet, encoding: str) -> ValueNet:
    grown = ValueNet(encoding, list(net.hidden), net.activation)
    with torch.no_grad():
        for k, (was, now) in enumerate(zip(dense_layers(net), dense_layers(grown))):
            if k == 0:
                now.weight.zero_()
                now.weight[:, :net.num_inputs] = was.weight
                now.bias.copy_(was.bias)
            else:
                now.load_state_dict(was.state_dict())
    return grown
