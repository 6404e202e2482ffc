"""Fit a bot's cube efficiency (Janowski's x) to GNU Backgammon's deeper cube decisions.

    python3 tools/fit_cube_efficiency.py --bot bgnet-deep
    python3 tools/fit_cube_efficiency.py --bot bot.onnx --write bot.onnx
    python3 tools/fit_cube_efficiency.py --gnubg-probabilities

A bot's cube decisions come from its cubeless probabilities and Janowski's live-cube model,
whose efficiency x bgnet sets by kind of position as GNU Backgammon does at 0 ply (contact 0.68,
races 0.6 to 0.7 by pip count, bear-offs 0.6). Those values suit GNU Backgammon's own net; another
net's probabilities may be served better by others. This tool tries a grid of efficiencies (the
contact value, and a shift of every race and bear-off value), the bot's own rule of decision
unchanged (a 0-ply net searching its close decisions one roll ahead), on the positions of ``bgnet
bench cube`` judged by GNU Backgammon at 2-ply.

The fit is honest about its sample: it chooses on the even-numbered positions and reports the
odd-numbered ones, which it never saw, beside the bot's present settings. ``--write PATH`` stores
the chosen efficiencies in an exported bot's metadata (``cube``), which every cube decision of
that bot then uses (``bgnet eval``, ``play``, ``serve``, ``analyze``, ``bench cube``).

``--gnubg-probabilities`` puts GNU Backgammon's own probabilities (the benchmark's, from the
verdict's depth) in place of the bot's, decided at 0-ply: how far the cube model itself, fed
probabilities as good as the judge's, can agree with the judge.
"""
from __future__ import annotations

import argparse
from dataclasses import asdict, replace

import numpy as np

import bgnet
from bgnet.cube import DEFAULT_MET, CubeEfficiency, decide_context
from bgnet.measure.cube_bench import CubeBenchmark, load_benchmark, rate_row

CONTACT = (0.66, 0.68, 0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.82)
RACE_SHIFT = (0.0, 0.05)


def candidate(contact: float, race_shift: float) -> CubeEfficiency:
    """GNU Backgammon's efficiencies with the contact value set and the race values shifted."""
    base = CubeEfficiency()
    return replace(base, contact=contact,
                   race_coefficient=round(base.race_coefficient + race_shift, 6),
                   race_min=round(base.race_min + race_shift, 6),
                   race_max=round(min(1.0, base.race_max + race_shift), 6),
                   bearoff=round(base.bearoff + race_shift, 6))


def reference_decisions(bench: CubeBenchmark, efficiency, met) -> list:
    """Decisions from GNU Backgammon's own probabilities (the benchmark's, at its reference depth)
    through bgnet's cube model at 0-ply: what the model can reach with probabilities as good as
    the judge's own."""
    return [decide_context(bench.probabilities[i], bench.context(i), bench.boards[i], met=met,
                           efficiency=efficiency) for i in range(len(bench))]


def figures(decisions: list, bench: CubeBenchmark, halves) -> dict:
    """Agreement and cost per decision of ``decisions`` (one per position), per half."""
    double = np.array([d.double for d in decisions])
    take = np.array([d.take for d in decisions])
    out = {}
    for name, rows in halves.items():
        row = rate_row(bench.rows(rows), double[rows], take[rows], name)["all"]
        out[name] = (row["agreement"], row["cost"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bot", default="bgnet-deep", help="the bot (default bgnet-deep)")
    ap.add_argument("--reference", default="2-ply", choices=("2-ply", "0-ply"),
                    help="GNU Backgammon's decisions to fit (default 2-ply)")
    ap.add_argument("--write", metavar="PATH.onnx",
                    help="store the chosen efficiencies in this exported bot's metadata "
                         "(the bot's own file, or a copy: give --bot's file and a new name)")
    ap.add_argument("--out", metavar="PATH.onnx",
                    help="with --write: write the result here instead of over PATH")
    ap.add_argument("--gnubg-probabilities", action="store_true",
                    help="decide from GNU Backgammon's own probabilities (the benchmark's) instead "
                         "of the bot's, at 0-ply: how far the cube model itself can agree")
    a = ap.parse_args()
    if a.out and not a.write:
        ap.error("--out names where --write writes; give --write PATH.onnx too")
    if a.write and a.gnubg_probabilities:
        ap.error("--gnubg-probabilities measures the cube model, not a bot: it cannot --write")
    bot = bgnet.load_bot(a.bot)
    bench = load_benchmark(reference=a.reference)
    index = np.arange(len(bench))
    halves = {"fit": index % 2 == 0, "held out": index % 2 == 1, "all": index >= 0}
    met, own = bot.cube_settings()
    contexts = [bench.context(i) for i in range(len(bench))]
    if a.gnubg_probabilities:
        name = f"{bot.name}'s cube model on GNU Backgammon's probabilities"

        def decide(efficiency) -> list:
            return reference_decisions(bench, efficiency, met)
    else:
        name = bot.name

        def decide(efficiency) -> list:
            return bot.cube_decisions(bench.boards, contexts, efficiency=efficiency)
    print(f"{name}: cube decisions against GNU Backgammon at {a.reference} on {len(bench)} "
          "positions; chosen on the even-numbered, reported on the odd-numbered too")
    print(f"{'contact':>8s} {'race+':>6s}   {'fit':>14s}   {'held out':>14s}   {'all':>14s}")

    def show(label: str, f: dict) -> None:
        cells = "   ".join(f"{100 * f[h][0]:5.1f} % {f[h][1]:6.2f}" for h in halves)
        print(f"{label}   {cells}")

    present = figures(decide(own), bench, halves)
    show(f"{'own':>8s} {'':>6s}", present)
    best, best_cost = None, np.inf
    for contact in CONTACT:
        for shift in RACE_SHIFT:
            eff = candidate(contact, shift)
            f = figures(decide(eff), bench, halves)
            show(f"{contact:8.2f} {shift:+6.2f}", f)
            if f["fit"][1] < best_cost:
                best, best_cost, best_f = eff, f["fit"][1], f
    assert best is not None
    print(f"chosen: {best} (cost per decision on the held-out half {best_f['held out'][1]:.2f}, "
          f"the bot's own settings {present['held out'][1]:.2f}; agreement "
          f"{100 * best_f['held out'][0]:.1f} % against {100 * present['held out'][0]:.1f} %)")
    if a.write:
        from bgnet.export.onnx_export import set_metadata

        path = set_metadata(a.write, {"cube": {"met": met or DEFAULT_MET, "efficiency": asdict(best)}},
                            a.out)
        print(f"written to {path}")


if __name__ == "__main__":
    main()
