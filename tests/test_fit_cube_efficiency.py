"""tools/fit_cube_efficiency.py: the cube model fed GNU Backgammon's own probabilities."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from bgnet.cube import DEFAULT_MET, CubeEfficiency
from bgnet.measure.cube_bench import load_benchmark, rate_row

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("bgnet_tools_fit_cube", ROOT / "tools" / "fit_cube_efficiency.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bgnet_tools_fit_cube"] = mod
    spec.loader.exec_module(mod)
    return mod


FIT = _tool()


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
