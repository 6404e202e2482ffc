"""Helpers shared by the test modules (import them: ``from conftest import ...``)."""
from __future__ import annotations

import numpy as np

from bgnet.engine.sampling import sample_positions

# float32's unit roundoff: one correctly rounded operation is off by at most this fraction.
UNIT_ROUNDOFF = 2.0 ** -24
# Largest slope of each activation: an error in its input comes out at most this much larger.
SLOPE = {"sigmoid": 0.25, "tanh": 1.0, "relu": 1.0, "leaky_relu": 1.0, "elu": 1.0, "silu": 1.1}
# Ulps by which an activation's own float32 evaluation may be off (exp and tanh are not
# correctly rounded in torch nor in the compiled pass; both stay within a few ulps).
ACTIVATION_ULPS = 4


def _activation(name: str, z: np.ndarray) -> np.ndarray:
    if name == "sigmoid":
        return 1.0 / (1.0 + np.exp(-z))
    if name == "tanh":
        return np.tanh(z)
    return np.maximum(z, 0.0) if name == "relu" else np.abs(z)  # others: bounded by |z|


def float32_tolerance(net, x: np.ndarray) -> float:
    """How far apart two float32 evaluations of ``net`` on the encoded rows ``x`` may be when they
    differ only in rounding (the order of their sums, their exp and tanh): twice the largest
    standard deviation of one evaluation's rounding error, over rows and outputs.

    Derived from float32's precision and the net's shape, under the standard model of rounding
    (each operation's relative error independent, uniform within ±u, so of variance u²/3): a sum
    of n products whose partial sums are bounded by Σ|wᵢaᵢ| carries a rounding error of variance
    at most (n/3)·u²·(Σ|wᵢaᵢ|)²; a layer passes the variance it receives on through W², and an
    activation through the square of its largest slope, adding a few ulps of its own; the output
    sigmoid has slope 1/4, and a probability is a product of at most three of them. The
    variance grows with each layer's width and with the number of layers, as rounding does. The
    largest standard deviation is computed in float64 for every row and both sub-nets of a split
    net; two evaluations each within it are, with margin, within twice it.
    """
    from bgnet.nn.layout import CONDITIONAL
    from bgnet.nn.model import net_layout, net_weights

    layout, weights = net_layout(net), net_weights(net)
    u = UNIT_ROUNDOFF
    own = (ACTIVATION_ULPS * u) ** 2 / 3  # variance of an activation's own rounding, per unit²
    worst = 0.0
    for sub in layout["subnets"]:
        a = np.asarray(x, np.float64)
        var = np.zeros_like(a)
        for layer in sub["layers"]:
            w = weights[layer["weight"]].astype(np.float64)
            b = weights[layer["bias"]].astype(np.float64)
            n = w.shape[1]
            bound = np.abs(a) @ np.abs(w).T + np.abs(b)  # Σ|wᵢaᵢ| + |b|: bounds every partial sum
            var = var @ (w ** 2).T + (n / 3) * u ** 2 * bound ** 2
            if layer["activation"] == CONDITIONAL:
                logit = 0.25 ** 2 * var + own
                wins, losses = logit[:, :3].sum(1), logit[:, [0, 3, 4]].sum(1)
                worst = max(worst, float(np.sqrt(np.maximum(wins, losses)).max()))
            else:
                a = _activation(layer["activation"], a @ w.T + b)
                var = SLOPE[layer["activation"]] ** 2 * var + own * a ** 2
    return 2.0 * worst


def assert_close_up_to_rounding(got, ref, net, boards, afterstates: bool) -> None:
    """``got`` and ``ref`` (float[N, 5], two evaluations of ``net`` on ``boards``, as positions or
    as afterstates) differ by no more than :func:`float32_tolerance` allows."""
    from bgnet.nn.encode import encode, encode_afterstates

    x = (encode_afterstates if afterstates else encode)(np.asarray(boards), net.encoding)
    tolerance = float32_tolerance(net, x)
    diff = float(np.abs(np.asarray(got, np.float64) - np.asarray(ref, np.float64)).max())
    assert diff <= tolerance, f"differ by {diff:.3g}, more than float32 rounding explains ({tolerance:.3g})"


def selfplay_positions(seed: int, n: int) -> list[tuple[np.ndarray, int, int]]:
    """(position, d1, d2) met in random self-play, restarting after each game."""
    boards, dice = sample_positions(n, seed=seed)
    return [(b, int(d[0]), int(d[1])) for b, d in zip(boards, dice)]
