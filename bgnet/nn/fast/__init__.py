"""A compiled CPU path for the value nets of :mod:`bgnet.nn.model`, in three parts:

* :mod:`~bgnet.nn.fast.kernels`: the vectorizable float32 ``exp``, activations and dense loops;
* :mod:`~bgnet.nn.fast.forward`: :class:`FastForward`, boards -> probabilities from a net's
  declared layout and weights, and :func:`supports` (no torch needed);
* :mod:`~bgnet.nn.fast.learn`: :class:`FastLearner`, the minibatch update of training with
  torch's own optimizers, and :func:`learner_unsupported` (needs torch).

All four names are importable from here; the learner's are loaded on first use, so that the
forward pass of an exported bot never imports torch.
"""
from __future__ import annotations

from bgnet.nn.fast.forward import FastForward, layout_unsupported, supports

__all__ = ["FastForward", "FastLearner", "layout_unsupported", "learner_unsupported", "supports"]


def __getattr__(name):
    if name in ("FastLearner", "learner_unsupported"):
        from bgnet.nn.fast import learn

        return getattr(learn, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
