"""A bot's cube efficiencies (Janowski's x) fitted to GNU Backgammon's cube decisions on the cube
benchmark (:mod:`bgnet.measure.cube_bench`); ``bgnet bench cube-fit`` prints the fit and can
store the chosen efficiencies in an exported bot.

A bot's cube decisions come from its cubeless probabilities and Janowski's live-cube model,
whose efficiency x bgnet sets by kind of position as GNU Backgammon does at 0 ply (contact 0.68,
races 0.6 to 0.7 by pip count, bear-offs 0.6). Those values suit GNU Backgammon's own net; another
net's probabilities may be served better by others. The fit tries a grid of efficiencies
(:data:`CONTACT` for contact positions, each with a shift :data:`RACE_SHIFT` of every race and
bear-off value), the bot's own rule of decision unchanged, on the benchmark's positions.

The fit is honest about its sample: it chooses on the even-numbered positions and reports the
odd-numbered ones, which it never saw (:func:`halves`), beside the bot's present settings.

:func:`reference_decisions` puts GNU Backgammon's own probabilities (the benchmark's, from the
verdict's depth) in place of a bot's, decided at 0-ply: how far the cube model itself, fed
probabilities as good as the judge's, can agree with the judge.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from bgnet.cube import CubeEfficiency, decide_context
from bgnet.measure.cube_bench import CubeBenchmark, rate_row

CONTACT = (0.66, 0.68, 0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.82)
RACE_SHIFT = (0.0, 0.05)
HALVES = ("fit", "held out", "all")

# Decisions (one per position of the benchmark) made with a set of efficiencies.
Decide = Callable[[CubeEfficiency | None], list]


def candidate(contact: float, race_shift: float) -> CubeEfficiency:
    """GNU Backgammon's efficiencies with the contact value set and the race values shifted."""
    base = CubeEfficiency()
    return replace(base, contact=contact,
                   race_coefficient=round(base.race_coefficient + race_shift, 6),
                   race_min=round(base.race_min + race_shift, 6),
                   race_max=round(min(1.0, base.race_max + race_shift), 6),
                   bearoff=round(base.bearoff + race_shift, 6))


def reference_decisions(bench: CubeBenchmark, efficiency: CubeEfficiency | None, met) -> list:
    """Decisions from GNU Backgammon's own probabilities (the benchmark's, at its reference depth)
    through bgnet's cube model at 0-ply: what the model can reach with probabilities as good as
    the judge's own."""
    return [decide_context(bench.probabilities[i], bench.context(i), bench.boards[i], met=met,
                           efficiency=efficiency) for i in range(len(bench))]


def model_decider(bench: CubeBenchmark, met) -> Decide:
    """:func:`reference_decisions` with the efficiencies given: the cube model alone."""
    return lambda efficiency: reference_decisions(bench, efficiency, met)


def bot_decider(bot, bench: CubeBenchmark) -> Decide:
    """The bot's own cube decisions on the benchmark's positions, with the efficiencies given."""
    contexts = [bench.context(i) for i in range(len(bench))]
    return lambda efficiency: bot.cube_decisions(bench.boards, contexts, efficiency=efficiency)


def halves(n: int) -> dict[str, np.ndarray]:
    """The rows the fit chooses on (even-numbered), the ones it reports unseen (odd), and all."""
    index = np.arange(n)
    return {"fit": index % 2 == 0, "held out": index % 2 == 1, "all": index >= 0}


def figures(decisions: list, bench: CubeBenchmark) -> dict[str, tuple[float, float]]:
    """(agreement, cost per decision) of ``decisions`` (one per position) on each half."""
    double = np.array([d.double for d in decisions])
    take = np.array([d.take for d in decisions])
    out = {}
    for name, rows in halves(len(bench)).items():
        row = rate_row(bench.rows(rows), double[rows], take[rows], name)["all"]
        out[name] = (row["agreement"], row["cost"])
    return out


@dataclass
class Fit:
    """The figures of the present settings, of every candidate tried, and the chosen one: the
    candidate of lowest cost per decision on the half the fit chooses on."""

    own: dict[str, tuple[float, float]]
    tried: list[tuple[float, float, dict[str, tuple[float, float]]]]  # (contact, race shift, figures)
    best: CubeEfficiency
    best_figures: dict[str, tuple[float, float]]


def fit_efficiency(decide: Decide, bench: CubeBenchmark, own: CubeEfficiency | None,
                   on_row: Callable[[float | None, float | None, dict], None] | None = None) -> Fit:
    """Try every candidate of the grid with ``decide`` on ``bench``. ``own``: the bot's present
    efficiencies (None: bgnet's defaults). ``on_row(contact, shift, figures)`` is told the
    figures as they come: first the present settings' (contact and shift None), then each
    candidate's."""
    present = figures(decide(own), bench)
    if on_row is not None:
        on_row(None, None, present)
    tried = []
    best, best_figures = None, None
    for contact in CONTACT:
        for shift in RACE_SHIFT:
            efficiency = candidate(contact, shift)
            found = figures(decide(efficiency), bench)
            tried.append((contact, shift, found))
            if on_row is not None:
                on_row(contact, shift, found)
            if best_figures is None or found["fit"][1] < best_figures["fit"][1]:
                best, best_figures = efficiency, found
    assert best is not None and best_figures is not None
    return Fit(present, tried, best, best_figures)


def format_figures(label: str, found: dict[str, tuple[float, float]]) -> str:
    """One row of the fit's table: agreement and cost per decision on each half."""
    return label + "   " + "   ".join(f"{100 * found[h][0]:5.1f} % {found[h][1]:6.2f}" for h in HALVES)
