"""Averaging the weights of several checkpoints of one net (Polyak averaging over a run's tail).

Late in a run the learning rate is small and the weights wander around a good point, each
checkpoint a little off it in its own direction, following the last few thousand games. The
mean of several such checkpoints can sit nearer that point than any one of them. This is a
claim to measure, not to assume: ``bgnet average`` writes the mean, and ``bgnet eval`` says
whether it plays better than the newest checkpoint it came from.

Only nets of one shape can be averaged (same encoding, layers and activations), and averaging
is meaningful only for checkpoints of one run, whose weights descend from the same start: two
nets trained apart compute with differently ordered hidden units, and their mean is neither.

>>> import torch
>>> from bgnet.nn.model import ValueNet
>>> a, b = ValueNet("tesauro", 8), ValueNet("tesauro", 8)
>>> mean = average([a, b])
>>> bool(torch.allclose(mean.head.weight, (a.head.weight + b.head.weight) / 2))
True
>>> x = torch.rand(3, a.num_inputs)
>>> bool(torch.allclose(average([a, a])(x), a(x)))  # a net averaged with itself is itself
True
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from bgnet.errors import BadArgument
from bgnet.nn.model import SplitValueNet, ValueNet, net_from_config


def average(nets: Sequence[ValueNet | SplitValueNet],
            names: Sequence[str] | None = None) -> ValueNet | SplitValueNet:
    """A new net whose every weight is the mean of that weight over ``nets`` (one or more nets
    of one shape). ``names`` label the nets in the error a net of another shape raises."""
    if not nets:
        raise BadArgument("average needs at least one net")
    names = list(names) if names is not None else [f"net {k + 1}" for k in range(len(nets))]
    first = nets[0].config()
    for net, name in zip(nets[1:], names[1:]):
        if net.config() != first:
            raise BadArgument(f"{name} holds a net of another shape than {names[0]} "
                              f"({_describe(net.config())} against {_describe(first)}); "
                              "only checkpoints of one net can be averaged")
    mean = net_from_config(first)
    states = [net.state_dict() for net in nets]
    with torch.no_grad():
        averaged = {key: torch.stack([s[key].double() for s in states]).mean(0).to(value.dtype)
                    if value.is_floating_point() else value
                    for key, value in states[0].items()}
    mean.load_state_dict(averaged)
    return mean.eval()


def _describe(config: dict) -> str:
    """A net's shape in a few words, e.g. ``contact: extended [80, 40]``."""
    if config.get("type") == "SplitValueNet":
        return f"contact: {_describe(config['contact'])}; race: {_describe(config['race'])}"
    return f"{config['encoding']} {config['hidden']} {config['activation']}"
