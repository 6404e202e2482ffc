"""tools/fit_cube_efficiency.py: the cube model fed GNU Backgammon's own probabilities."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import load_tool

from bgnet.cube import DEFAULT_MET, CubeEfficiency
from bgnet.measure.cube_bench import load_benchmark, rate_row

FIT = load_tool("fit_cube_efficiency")


def test_gnubg_probabilities_with_gnubg_efficiencies_give_gnubg_0ply_decisions():
    # The benchmark's 0-ply verdict is GNU Backgammon's cube model on its own 0-ply probabilities;
    # bgnet's model on those probabilities with GNU Backgammon's efficiencies must reproduce it.
    bench = load_benchmark(reference="0-ply").head(600)
    decisions = FIT.reference_decisions(bench, CubeEfficiency(), DEFAULT_MET)
    double = np.array([d.double for d in decisions])
    take = np.array([d.take for d in decisions])
    row = rate_row(bench, double, take, "model")
    assert row["all"]["agreement"] >= 0.99
    assert row["all"]["cost"] < 0.2


def test_the_model_fit_cannot_write_a_bot(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["fit_cube_efficiency.py", "--gnubg-probabilities",
                                      "--write", str(tmp_path / "bot.onnx")])
    with pytest.raises(SystemExit) as stop:
        FIT.main()
    assert stop.value.code == 2
    assert "cannot --write" in capsys.readouterr().err
