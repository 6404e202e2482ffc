"""Widening a trained value net without changing what it computes (Net2Net's "wider" step).

A net that has stopped improving at its width can be given more hidden units and trained on,
instead of being trained again from nothing. Each new unit copies an existing one (its incoming
weights and bias); the copied unit and its copy then share the old unit's outgoing weights, half
each, so the widened net computes the same function. A little noise on the copies' incoming
weights lets the two drift apart in training (exact copies would receive identical gradients
forever).

>>> import torch
>>> from bgnet.nn.model import ValueNet
>>> net = ValueNet("tesauro", 8)
>>> wide = widen(net, 12, noise=0.0)
>>> x = torch.rand(4, net.num_inputs)
>>> wide.hidden, bool(torch.allclose(wide(x), net(x), atol=1e-6))
([12], True)
"""
from __future__ import annotations

import torch
from torch import nn

from bgnet.errors import BadArgument
from bgnet.nn.model import SplitValueNet, ValueNet


def widen(net: ValueNet, hidden: int, noise: float = 1e-3, seed: int = 0) -> ValueNet:
    """A copy of a one-hidden-layer ``ValueNet`` with ``hidden`` units (at least its width).
    Impossible requests raise :class:`~bgnet.errors.BadArgument`."""
    if not isinstance(net, ValueNet) or len(net.hidden) != 1:
        shape = net.hidden if isinstance(net, ValueNet) else type(net).__name__
        raise BadArgument(f"widen works on a ValueNet with one hidden layer; this net has {shape}")
    old = net.hidden[0]
    if hidden < old:
        raise BadArgument(f"cannot widen {old} hidden units to fewer ({hidden})")
    if not noise >= 0.0:
        raise BadArgument(f"the noise must be 0 or more; got {noise}")
    gen = torch.Generator().manual_seed(seed)
    source = torch.cat([torch.arange(old), torch.randint(0, old, (hidden - old,), generator=gen)])
    # How many units share each old unit's outgoing weights after widening.
    share = torch.bincount(source, minlength=old).float()
    wide = ValueNet(net.encoding, hidden, net.activation)
    first, head, wide_first = _first_layer(net), net.head, _first_layer(wide)
    with torch.no_grad():
        w1 = first.weight[source].clone()
        w1[old:] += noise * torch.randn(w1[old:].shape, generator=gen)
        wide_first.weight.copy_(w1)
        wide_first.bias.copy_(first.bias[source])
        wide.head.weight.copy_(head.weight[:, source] / share[source])
        wide.head.bias.copy_(head.bias)
    return wide


def _first_layer(net: ValueNet) -> nn.Linear:
    """The net's input-to-hidden layer (a ValueNet's body starts with it)."""
    layer = net.body[0]
    assert isinstance(layer, nn.Linear), f"a ValueNet's body starts with a Linear layer, not {layer}"
    return layer


def widen_split(net: SplitValueNet, contact_hidden: int, race_hidden: int | None = None,
                noise: float = 1e-3, seed: int = 0) -> SplitValueNet:
    """A :class:`SplitValueNet` with its contact (and optionally race) net widened."""
    out = SplitValueNet(net.encoding, contact_hidden, net.contact.activation,
                        race_hidden=race_hidden or net.race.hidden[0],
                        race_activation=net.race.activation)
    out.contact = widen(net.contact, contact_hidden, noise, seed)
    out.race = widen(net.race, race_hidden or net.race.hidden[0], noise, seed + 1)
    return out
