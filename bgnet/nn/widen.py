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
>>> deep = ValueNet("tesauro", [8, 6], ["sigmoid", "relu"])
>>> wider = widen(deep, 10, noise=0.0, layer=2)
>>> wider.hidden, bool(torch.allclose(wider(x), deep(x), atol=1e-6))
([8, 10], True)
"""
from __future__ import annotations

import torch

from bgnet.errors import BadArgument
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
    wide.load_state_dict(_resized(net, wide))
    grown, reader = dense_layers(wide)[layer - 1], dense_layers(wide)[layer]
    was, was_read = dense_layers(net)[layer - 1], dense_layers(net)[layer]
    with torch.no_grad():
        w = was.weight[source].clone()
        w[old:] += noise * torch.randn(w[old:].shape, generator=gen)
        grown.weight.copy_(w)
        grown.bias.copy_(was.bias[source])
        reader.weight.copy_(was_read.weight[:, source] / share[source])
        reader.bias.copy_(was_read.bias)
    return wide


def _resized(net: ValueNet, wide: ValueNet) -> dict[str, torch.Tensor]:
    """``net``'s weights where their shapes fit ``wide``, ``wide``'s own where they do not (the
    widened layer and its reader, which :func:`widen` then fills)."""
    theirs = wide.state_dict()
    return {k: v if v.shape == theirs[k].shape else theirs[k] for k, v in net.state_dict().items()}


def widen_split(net: SplitValueNet, contact_hidden: int, race_hidden: int | None = None,
                noise: float = 1e-3, seed: int = 0, layer: int = 1) -> SplitValueNet:
    """A :class:`SplitValueNet` with hidden layer ``layer`` of its contact net widened to
    ``contact_hidden`` units and, when ``race_hidden`` is given, the race net's first layer."""
    out = SplitValueNet(net.encoding, net.contact.hidden, net.contact.activation,
                        race_hidden=net.race.hidden, race_activation=net.race.activation)
    out.contact = widen(net.contact, contact_hidden, noise, seed, layer)
    out.race = (widen(net.race, race_hidden, noise, seed + 1) if race_hidden is not None
                else _copy(net.race))
    return out


def _copy(net: ValueNet) -> ValueNet:
    """An independent copy of ``net`` (same weights)."""
    twin = ValueNet(net.encoding, net.hidden, net.activation)
    twin.load_state_dict(net.state_dict())
    return twin
