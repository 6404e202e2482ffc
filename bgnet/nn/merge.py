"""One net made of several nets trained apart: the weighted mean of their logits (``bgnet merge``).

Two nets trained from different starts make different errors, and a mean of their answers is
more accurate than either (an ensemble). When the nets have the same depth and the same
activations layer by layer, that mean is itself a net of the same kind, only wider: each hidden
layer holds the members' units side by side, a member's units see only its own units of the
layer below (the weights between members are zero), and the head sums the members' heads, each
scaled by its share. Its conditional logits are then exactly

    logits(x) = share_1 * logits_1(x) + ... + share_n * logits_n(x)

and its probabilities are built from them as any net's are (a mean of logits, not of
probabilities: the two differ by little, and only the first keeps the result an ordinary net
that exports, plays, searches and trains like any other). Widths may differ between members;
for a split net the contact nets and the race nets are merged apart.

The zero blocks cost nothing in an exported bot, whose compiled forward pass reads each member's
units only (:func:`bgnet.nn.fast.kernels.layer_spans`): two 256-unit members then evaluate about
1.7 times slower than one of them (torch, and a net in training, compute the whole width).
Whether the merge plays better than its best member is a claim to measure (``bgnet eval``,
``bgnet bench er``), not to assume.

>>> import torch
>>> from bgnet.nn.model import ValueNet
>>> a, b = ValueNet("tesauro", 8), ValueNet("tesauro", 6)
>>> m = merge([a, b], [0.75, 0.25])
>>> m.hidden
[14]
>>> x = torch.rand(3, a.num_inputs)
>>> bool(torch.allclose(m.forward_logits(x), 0.75 * a.forward_logits(x) + 0.25 * b.forward_logits(x), atol=1e-6))
True
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from bgnet.errors import BadArgument
from bgnet.nn.model import SplitValueNet, ValueNet, dense_layers


def merge(nets: Sequence[ValueNet | SplitValueNet], shares: Sequence[float] | None = None,
          names: Sequence[str] | None = None) -> ValueNet | SplitValueNet:
    """The net whose logits are ``sum(share * logits)`` over ``nets`` (see the module docstring).

    ``shares``: one positive weight per net, scaled to sum to 1 (None: equal). ``names`` label
    the nets in the error a net that cannot be merged raises (:class:`bgnet.errors.BadArgument`).
    """
    names = list(names) if names is not None else [f"net {k + 1}" for k in range(len(nets))]
    if len(nets) < 2:
        raise BadArgument("a merge needs at least two nets")
    weights = normalized_shares(shares, len(nets))
    split = [isinstance(net, SplitValueNet) for net in nets]
    if all(split):
        split_nets = [net for net in nets if isinstance(net, SplitValueNet)]
        return SplitValueNet.of(
            _merge_value_nets([n.contact for n in split_nets], weights, names, "contact net"),
            _merge_value_nets([n.race for n in split_nets], weights, names, "race net"))
    if any(split):
        kind = names[split.index(True)], names[split.index(False)]
        raise BadArgument(f"{kind[0]} holds a split net (contact and race) and {kind[1]} one net: "
                          "only nets of one kind can be merged")
    return _merge_value_nets([n for n in nets if isinstance(n, ValueNet)], weights, names, "net")


def normalized_shares(shares: Sequence[float] | None, n: int) -> list[float]:
    """``shares`` scaled to sum to 1 (None: ``n`` equal shares); a wrong count or a share that is
    not a positive number is a :class:`bgnet.errors.BadArgument`.

    >>> normalized_shares([2, 1, 1], 3)
    [0.5, 0.25, 0.25]
    """
    if shares is None:
        return [1.0 / n] * n
    values = [float(s) for s in shares]
    if len(values) != n:
        raise BadArgument(f"{len(values)} share(s) for {n} nets: give one share per net")
    if not all(v > 0 and v != float("inf") for v in values):  # also refuses NaN
        raise BadArgument(f"shares must be positive numbers; got {', '.join(map(str, values))}")
    total = sum(values)
    return [v / total for v in values]


def _merge_value_nets(nets: list[ValueNet], shares: list[float], names: list[str],
                      what: str) -> ValueNet:
    first = nets[0]
    for net, name in zip(nets[1:], names[1:]):
        if net.encoding != first.encoding:
            raise BadArgument(f"the {what} of {name} reads the '{net.encoding}' inputs and that of "
                              f"{names[0]} '{first.encoding}': merged nets share their inputs")
        if net.activations != first.activations:
            raise BadArgument(f"the {what} of {name} has the hidden layers "
                              f"{_describe(net)} and that of {names[0]} {_describe(first)}: "
                              "merged nets need the same depth and activations layer by layer")
    hidden = [sum(net.hidden[k] for net in nets) for k in range(len(first.hidden))]
    activation = first.activation if isinstance(first.activation, str) else list(first.activations)
    out = ValueNet(first.encoding, hidden, activation)
    layers = [dense_layers(net) for net in nets]
    with torch.no_grad():
        for k, target in enumerate(dense_layers(out)):
            target.weight.zero_()
            target.bias.zero_()
            row = col = 0
            for member, share in zip(layers, shares):
                layer = member[k]
                rows, cols = layer.weight.shape
                if k == len(hidden):  # the head: the members' logits, each scaled by its share
                    if hidden:
                        target.weight[:, col:col + cols] = share * layer.weight
                        col += cols
                    else:  # linear members read the inputs themselves: their weights' mean
                        target.weight.add_(share * layer.weight)
                    target.bias.add_(share * layer.bias)
                elif k == 0:  # every member reads all the inputs
                    target.weight[row:row + rows, :] = layer.weight
                    target.bias[row:row + rows] = layer.bias
                    row += rows
                else:  # a hidden layer sees its own member's units only
                    target.weight[row:row + rows, col:col + cols] = layer.weight
                    target.bias[row:row + rows] = layer.bias
                    row, col = row + rows, col + cols
    return out.eval()


def _describe(net: ValueNet) -> str:
    return ", ".join(f"{h} {a}" for h, a in zip(net.hidden, net.activations)) or "none"
