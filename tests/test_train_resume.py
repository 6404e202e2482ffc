"""Resuming a run: the checkpoint's net and optimizer kind, the request's everything else.

A first tiny run (a 16-unit net, Adam, 40 games) is shared by the module; each test resumes a
copy of it.
"""
from __future__ import annotations

import shutil

import pytest
import torch
import yaml
from test_train import config

from bgnet.cli import main as bgnet_main
from bgnet.nn.checkpoint import load_checkpoint
from bgnet.train.config import ConfigError
from bgnet.train.loop import train

TINY = {"model.hidden": "[16]", "train.parallel_games": 16, "train.buffer_positions": 256,
        "train.games": 40, "seed": 5}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("first")
    train(config(**TINY), run)
    return run


@pytest.fixture
def run(first_run, tmp_path):
    """A copy of the first run, to resume without touching the shared one."""
    shutil.copytree(first_run, tmp_path / "run")
    return tmp_path / "run"


def latest(run):
    return run / "checkpoints" / "latest.pt"


def resume(run, overrides: dict):
    """Resume ``run`` as the command line ``resume=... KEY=VALUE ...`` would (with the tiny
    run's pool and buffer, set as defaults rather than overrides: the model is left alone)."""
    over = {"resume": latest(run), **overrides}
    small = {k: v for k, v in TINY.items() if not k.startswith("model.")}
    cfg = config(**{**small, **over})
    return train(cfg, run, overrides=[f"{k}={v}" for k, v in over.items()])


def test_an_architecture_on_the_command_line_that_contradicts_the_checkpoint_is_refused(run):
    before = latest(run).read_bytes()
    with pytest.raises(ConfigError, match=r"'model\.hidden' is \[160\].*model\.hidden=\[16\].*fresh run"):
        resume(run, {"model": "h160", "train.games": 80})
    with pytest.raises(ConfigError, match=r"'model\.encoding' is 'extended'.*'tesauro'"):
        resume(run, {"model.encoding": "extended", "train.games": 80})
    assert latest(run).read_bytes() == before  # nothing was written


def test_another_optimizer_on_the_command_line_is_refused(run):
    with pytest.raises(ConfigError, match=r"'optim\.name' is 'sgd'.*optim\.name='adam'"):
        resume(run, {"optim": "sgd", "train.games": 80})


def test_the_checkpoints_architecture_wins_over_the_defaults(run, capsys):
    """No model= on the command line: the default h80 gives way to the checkpoint's 16 units,
    and the config recorded says so."""
    summary = resume(run, {"train.games": 60})
    assert summary["games"] >= 60
    assert "model.hidden=[16]" in capsys.readouterr().err
    recorded = yaml.safe_load((run / "config.yaml").read_text())
    assert recorded["model"]["hidden"] == [16]
    data = load_checkpoint(latest(run))
    assert data["config"]["model"]["hidden"] == [16] and data["net_config"]["hidden"] == [16]
    assert yaml.safe_load((run / "checkpoints" / "config.yaml").read_text()) == data["config"]


def test_the_checkpoints_optimizer_and_its_rates_win_over_a_default_of_another_kind(tmp_path, capsys):
    first = tmp_path / "sgd"
    train(config(**TINY, optim="sgd", **{"optim.lr": 0.05}), first)
    resume(first, {"train.games": 60})
    data = load_checkpoint(latest(first))
    assert data["config"]["optim"]["name"] == "sgd" and data["config"]["optim"]["lr"] == 0.05
    assert "momentum" in data["optimizer_state"]["param_groups"][0]
    assert "optim.name='sgd'" in capsys.readouterr().err


def test_learning_rate_games_and_lambda_overrides_are_applied_and_recorded(run):
    over = {"train.games": 70, "optim.lr": 0.01, "optim.lr_final": "null", "train.lam": 0.5}
    summary = resume(run, over)
    assert summary["games_at_start"] == 40 and summary["games"] >= 70
    data = load_checkpoint(latest(run))
    assert data["games"] == summary["games"]
    assert data["optimizer_state"]["param_groups"][0]["lr"] == 0.01  # the rate really used
    for recorded in (data["config"], yaml.safe_load((run / "config.yaml").read_text()),
                     yaml.safe_load((run / "checkpoints" / "config.yaml").read_text())):
        assert recorded["optim"]["lr"] == 0.01 and recorded["optim"]["lr_final"] is None
        assert recorded["train"]["lam"] == 0.5 and recorded["train"]["games"] == 70
        assert recorded["resume"] == str(latest(run))


def test_games_already_reached_warns_and_writes_nothing(run, capsys):
    before = latest(run).read_bytes()
    config_before = (run / "config.yaml").read_text()
    summary = resume(run, {"train.games": 30})
    err = capsys.readouterr().err
    assert "warning" in err and "train.games=30 is already reached" in err and "40 games" in err
    assert summary["already_reached"] and summary["games"] == 40
    assert latest(run).read_bytes() == before and (run / "config.yaml").read_text() == config_before


def test_checkpoints_load_without_unpickling_code(first_run):
    data = torch.load(latest(first_run), weights_only=True)
    assert data["games"] == 40 and data["config"]["model"]["hidden"] == [16]
    assert isinstance(data["rng"]["selfplay"]["state"]["state"], int)


def command(run, *overrides):
    """``bgnet train resume=RUN/checkpoints/latest.pt OVERRIDES``, without evaluations."""
    return bgnet_main(["train", f"resume={latest(run)}", *overrides, "progress=false", "eval.every=0",
                       "train.parallel_games=16", "train.buffer_positions=256",
                       "eval.final_games=0", f"hydra.run.dir={run.parent / 'hydra'}"])


def test_the_command_refuses_a_contradicting_override_with_exit_code_2(run, capsys):
    code = command(run, "model=h160", "train.games=80")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("bgnet train: error: config key 'model.hidden'") and err.count("\n") == 1


def test_the_command_resumes_with_its_overrides(run, capsys):
    code = command(run, "train.games=60", "optim.lr=0.002")
    assert code == 0, capsys.readouterr().err
    recorded = yaml.safe_load((run / "config.yaml").read_text())
    assert recorded["optim"]["lr"] == 0.002 and recorded["model"]["hidden"] == [16]
    assert load_checkpoint(latest(run))["games"] >= 60
