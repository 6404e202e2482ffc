"""The five outcome probabilities, without torch: order, equity, flipping sides, finished games.

Probabilities follow GNU Backgammon's order, :data:`OUTPUTS`, for one side: win, win gammon, win
backgammon, lose gammon, lose backgammon (gammons include backgammons). These helpers work on
numpy arrays, and :func:`equity`, :func:`flip` and :func:`probs_from_logits` on torch tensors
too, without importing torch themselves, so a bot that runs an exported net (onnxruntime + numpy)
can use them. :mod:`bgnet.nn.model` re-exports them; nothing else in bgnet defines them again.

The network's last step, :func:`probs_from_logits`, is defined here once: the five conditional
logits ``z = (a, b, c, d, e)`` give ``win = s(a)``, ``wg = win s(b)``, ``wbg = wg s(c)``,
``lg = (1 - win) s(d)``, ``lbg = lg s(e)`` (``s`` the logistic function), so that
``0 <= wbg <= wg <= win <= 1`` and ``0 <= lbg <= lg <= 1 - win`` hold for any logits.

>>> p = np.array([0.6, 0.2, 0.01, 0.1, 0.005])
>>> round(float(equity(p)), 3)
0.305
>>> flip(p).round(3).tolist()
[0.4, 0.1, 0.005, 0.2, 0.01]
"""
from __future__ import annotations

import numpy as np

OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
NUM_OUTPUTS = 5


def check_last_axis(probs) -> None:
    if tuple(probs.shape[-1:]) != (NUM_OUTPUTS,):
        raise ValueError(f"probabilities need a last axis of 5 (win, wg, wbg, lg, lbg); got shape {tuple(probs.shape)}")


def equity(probs):
    """Cubeless money equity of the side whose probabilities these are, in points per game:
    ``2 win - 1 + wg - lg + wbg - lbg``. Shape [..., 5] -> [...].

    >>> float(equity(np.array([1.0, 1.0, 0.0, 0.0, 0.0])))
    2.0
    """
    check_last_axis(probs)
    return 2.0 * probs[..., 0] - 1.0 + probs[..., 1] - probs[..., 3] + probs[..., 2] - probs[..., 4]


def flip(probs):
    """The same outcome probabilities from the other side's view: win' = 1 - win, and the gammon
    and backgammon pairs trade places. ``flip(flip(p)) == p``.

    >>> flip(np.array([[1.0, 0.5, 0.0, 0.0, 0.0]], np.float32)).tolist()
    [[0.0, 0.0, 0.0, 0.5, 0.0]]
    """
    check_last_axis(probs)
    parts = [1.0 - probs[..., 0], probs[..., 3], probs[..., 4], probs[..., 1], probs[..., 2]]
    if _is_tensor(probs):
        import torch  # already loaded: the argument is a tensor

        return torch.stack(parts, dim=-1)
    return np.stack(parts, axis=-1).astype(np.asarray(probs).dtype, copy=False)


def _is_tensor(x) -> bool:
    return not isinstance(x, np.ndarray) and type(x).__module__.startswith("torch")


def probs_from_logits(z):
    """Five conditional logits [..., 5] -> consistent probabilities [..., 5] (torch or numpy;
    numpy input is computed in float32).

    >>> probs_from_logits(np.zeros(5)).tolist()
    [0.5, 0.25, 0.125, 0.25, 0.125]
    """
    check_last_axis(z)
    if _is_tensor(z):
        import torch  # already loaded: the argument is a tensor

        s = torch.sigmoid(z)
        stack = torch.stack
    else:
        s = 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float32)))
        stack = np.stack
    win = s[..., 0]
    wg = win * s[..., 1]
    lg = (1.0 - win) * s[..., 3]
    parts = [win, wg, wg * s[..., 2], lg, lg * s[..., 4]]
    return stack(parts, dim=-1) if _is_tensor(z) else stack(parts, axis=-1)


def terminal_probs(result_points: int, winner_is_on_roll: bool = True) -> np.ndarray:
    """Exact float32[5] of a finished game, from the view of the side on roll.

    ``result_points``: 1 single game, 2 gammon, 3 backgammon; ``winner_is_on_roll``: whether the
    side whose view is wanted won.

    >>> terminal_probs(2).tolist(), terminal_probs(3, False).tolist()
    ([1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 1.0])
    """
    if int(result_points) != result_points or result_points not in (1, 2, 3):
        raise ValueError(f"result_points must be 1, 2 or 3 (single, gammon, backgammon); got {result_points!r}")
    g = 1.0 if result_points >= 2 else 0.0
    bg = 1.0 if result_points >= 3 else 0.0
    if winner_is_on_roll:
        return np.array([1.0, g, bg, 0.0, 0.0], np.float32)
    return np.array([0.0, 0.0, 0.0, g, bg], np.float32)


def terminal_probs_batch(results: np.ndarray) -> np.ndarray:
    """float32[N, 5] for the WINNER of games scored ``results`` (int[N], each 1, 2 or 3).

    >>> terminal_probs_batch(np.array([1, 3])).tolist()
    [[1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0]]
    """
    r = np.asarray(results)
    if r.size and (r.min() < 1 or r.max() > 3):
        raise ValueError("results must all be 1, 2 or 3 (single, gammon, backgammon)")
    out = np.zeros(r.shape + (5,), np.float32)
    out[..., 0] = 1.0
    out[..., 1] = r >= 2
    out[..., 2] = r >= 3
    return out
