"""Statistics for matches: confidence intervals of points per game and of win rates, and
Elo-like ratings.

Backgammon results are noisy (a game is worth -3..+3 points), so every figure bgnet prints comes
with a 95 % interval. With duplicate dice, games 2k and 2k+1 share their dice with the sides
swapped; their results are strongly (negatively) correlated, so the honest interval is computed
from the per-pair means, not from the games as if they were independent.
"""
from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054  # two-sided 95 % quantile of the normal distribution
ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of log-odds


def mean_ci95(x) -> tuple[float, float]:
    """Mean of independent samples and the half-width of its 95 % normal confidence interval."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if len(x) == 0:
        raise ValueError("cannot take the mean of no samples")
    if len(x) == 1:
        return float(x[0]), math.inf
    return float(x.mean()), float(Z95 * x.std(ddof=1) / math.sqrt(len(x)))


def counted(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1.

    >>> counted(1, "match"), counted(0, "match"), counted(3, "game")
    ('1 match', '0 matches', '3 games')
    """
    if n == 1:
        return f"1 {word}"
    return f"{n} {word}es" if word.endswith(("s", "ch", "sh", "x")) else f"{n} {word}s"


MIN_SAMPLES_FOR_CI = 10  # below this a normal interval says more than the games do


def ppg_text(mean: float, half: float, samples: int) -> str:
    """Points per game with its 95 % interval, or where ``samples`` (games, or pairs of games
    with duplicate dice) are too few for one, the mean and a word saying so.

    >>> ppg_text(0.25, 0.031, 400), ppg_text(1.0, 0.0, 2)
    ('+0.250 ± 0.031 (95 %)', '+1.000 (too few games for an interval)')
    """
    if samples < MIN_SAMPLES_FOR_CI or not math.isfinite(half):
        return f"{mean:+.3f} (too few games for an interval)"
    return f"{mean:+.3f} ± {half:.3f} (95 %)"


def paired_mean_ci95(x) -> tuple[float, float]:
    """Mean and 95 % half-width of samples that come in pairs (x[0], x[1]), (x[2], x[3]), ...

    Each pair is one independent unit (duplicate dice); its mean is the sample.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if len(x) % 2:
        raise ValueError(f"paired samples come in pairs; got an odd count ({len(x)})")
    return mean_ci95(x.reshape(-1, 2).mean(axis=1))


def proportion_ci95(successes: int, n: int) -> tuple[float, float]:
    """A proportion and the half-width of its 95 % interval (normal approximation)."""
    if n <= 0:
        raise ValueError("a proportion needs at least one trial")
    p = successes / n
    return p, Z95 * math.sqrt(max(p * (1 - p), 0.0) / n)


def wilson_ci95(successes: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval (low, high) of a proportion: unlike the normal
    approximation it stays inside [0, 1] and is honest for small n or rates near 0 or 1.

    >>> lo, hi = wilson_ci95(8, 10)
    >>> round(lo, 3), round(hi, 3)
    (0.49, 0.943)
    """
    if n <= 0:
        raise ValueError(f"a proportion needs at least one trial; got n={n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie between 0 and n={n}; got {successes}")
    p, z2 = successes / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_from_score(p: float) -> float:
    """Elo difference implied by an expected score p (0 < p < 1) under the logistic model."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"an Elo difference needs a score strictly between 0 and 1; got {p}")
    return ELO_SCALE * math.log(p / (1.0 - p))


def score_from_elo(d: float) -> float:
    """Expected score of a player rated d Elo above its opponent."""
    return 1.0 / (1.0 + math.exp(-d / ELO_SCALE))


def bradley_terry(wins: np.ndarray, prior_games: float = 1.0, anchor: int | None = 0,
                  iters: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood Elo ratings and standard errors from a matrix of win counts.

    ``wins[i, j]`` is how many games player i won against player j. The logistic
    (Bradley-Terry) model P(i beats j) = 1 / (1 + 10^((r_j - r_i) / 400)) is fitted by Newton's
    method. A weak prior (``prior_games`` virtual games, half won, against a player rated 0)
    keeps ratings finite when a player won or lost every game. ``anchor`` fixes that player at 0
    (its error is then 0 and the others' errors are relative to it); ``None`` centres the mean.
    Returns ``(ratings, standard_errors)`` in Elo points.
    """
    w = np.asarray(wins, dtype=np.float64)
    k = w.shape[0]
    if w.shape != (k, k) or np.any(w < 0):
        raise ValueError("wins must be a square matrix of non-negative counts")
    w = w * (1.0 - np.eye(k))  # games against oneself carry no information
    n = w + w.T  # games between i and j
    theta = np.zeros(k)  # natural-log strengths
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        q = 1.0 / (1.0 + np.exp(-theta))  # against the prior's 0-rated player
        grad = (w - n * p).sum(axis=1) + prior_games * (0.5 - q)
        # pinv: without a prior the ratings are defined only up to a common shift, along which
        # the information matrix is singular and the gradient is zero.
        step = np.linalg.pinv(_information(theta, n, prior_games)) @ grad
        step = np.clip(step, -2.0, 2.0)  # damped Newton: the first steps from 0 can overshoot
        theta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    cov = _covariance(theta, n, prior_games, anchor)
    ratings = theta - (theta[anchor] if anchor is not None else theta.mean())
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return ratings * ELO_SCALE, se * ELO_SCALE


def _covariance(theta: np.ndarray, n: np.ndarray, prior_games: float, anchor: int | None) -> np.ndarray:
    """Covariance of the ratings relative to the anchor (whose row and column are 0), or to the
    mean of all ratings."""
    k = len(theta)
    info = _information(theta, n, prior_games)
    if anchor is not None:
        keep = np.arange(k) != anchor
        cov = np.zeros((k, k))
        cov[np.ix_(keep, keep)] = np.linalg.pinv(info[np.ix_(keep, keep)])
        return cov
    centre = np.eye(k) - 1.0 / k
    return centre @ np.linalg.pinv(info) @ centre.T


def _information(theta: np.ndarray, n: np.ndarray, prior_games: float) -> np.ndarray:
    """Fisher information (minus the Hessian of the log-likelihood) of the Bradley-Terry model."""
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    h = n * p * (1 - p)  # zero on the diagonal, as n is
    q = 1.0 / (1.0 + np.exp(-theta))
    return np.diag(h.sum(axis=1) + prior_games * q * (1 - q)) - h
