"""bgnet.measure.cube_fit and ``bgnet bench cube-fit``: cube efficiencies fitted to GNU
Backgammon's cube decisions, and the cube model fed GNU Backgammon's own probabilities."""
from __future__ import annotations

import json

import numpy as np

from bgnet.bots import load_bot
from bgnet.bots.onnx_eval import read_metadata
from bgnet.cli import main
from bgnet.cube import DEFAULT_MET, CubeEfficiency
from bgnet.measure.cube_bench import load_benchmark, rate_row
from bgnet.measure.cube_fit import (
    CONTACT,
    RACE_SHIFT,
    candidate,
    fit_efficiency,
    model_decider,
    reference_decisions,
)
from bgnet.resources import shipped_bot


def test_gnubg_probabilities_with_gnubg_efficiencies_give_gnubg_0ply_decisions():
    # The benchmark's 0-ply verdict is GNU Backgammon's cube model on its own 0-ply probabilities;
    # bgnet's model on those probabilities with GNU Backgammon's efficiencies must reproduce it.
    bench = load_benchmark(reference="0-ply").head(600)
    decisions = reference_decisions(bench, CubeEfficiency(), DEFAULT_MET)
    double = np.array([d.double for d in decisions])
    take = np.array([d.take for d in decisions])
    row = rate_row(bench, double, take, "model")
    assert row["all"]["agreement"] >= 0.99
    assert row["all"]["cost"] < 0.2


def test_the_fit_chooses_the_cheapest_candidate_on_the_even_half():
    bench = load_benchmark(reference="2-ply").head(300)
    seen = []
    fit = fit_efficiency(model_decider(bench, DEFAULT_MET), bench, None,
                         lambda contact, shift, found: seen.append((contact, shift)))
    assert seen[0] == (None, None)  # the present settings' row first
    assert seen[1:] == [(c, s) for c in CONTACT for s in RACE_SHIFT] == [(c, s) for c, s, _ in fit.tried]
    cheapest = min(fit.tried, key=lambda t: t[2]["fit"][1])
    assert fit.best == candidate(cheapest[0], cheapest[1]) and fit.best_figures == cheapest[2]
    assert candidate(0.68, 0.0) == CubeEfficiency()  # the grid holds GNU Backgammon's own values
    assert fit.own == next(found for c, s, found in fit.tried if (c, s) == (0.68, 0.0))


def test_the_model_fit_cannot_write_a_bot(tmp_path, capsys):
    assert main(["bench", "cube-fit", "--gnubg-probabilities", "--write", str(tmp_path / "bot.onnx")]) == 2
    assert "cannot --write" in capsys.readouterr().err
    assert main(["bench", "cube-fit", "--out", str(tmp_path / "bot.onnx")]) == 2
    assert "give --write BOT.onnx too" in capsys.readouterr().err
    assert main(["bench", "cube-fit", "--bot", "bgnet-default", "--write", str(tmp_path / "no.onnx")]) == 3
    assert "no such exported bot file" in capsys.readouterr().err


def test_the_chosen_efficiencies_are_written_into_a_copy_of_the_bot(tmp_path, capsys):
    default = shipped_bot("bgnet-default")
    before = default.read_bytes()
    out = tmp_path / "fitted.onnx"
    assert main(["bench", "cube-fit", "--bot", "bgnet-default", "--limit", "120",
                 "--write", str(default), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count(" % ") >= 3 * (len(CONTACT) * len(RACE_SHIFT) + 1)  # a row per candidate, and own
    assert f"written to {out}" in printed
    stored = json.loads(json.dumps(read_metadata(out)["cube"]))
    assert stored["met"] == DEFAULT_MET and f"chosen: {CubeEfficiency(**stored['efficiency'])}" in printed
    assert load_bot(str(out)).cube_settings()[1] == CubeEfficiency(**stored["efficiency"])
    assert default.read_bytes() == before  # --out: the bot itself is left as it was
