"""Recipes: a run's phases declared in one file, run in order, resumed exactly by the same command,
and stopped cleanly (saved, exit 130, the resume command printed) wherever a signal lands.

The recipe of these tests is a tiny one written to a temporary config folder that Hydra searches
(``hydra.searchpath``), so that the real recipes stay the only ones shipped.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from hydra import compose, initialize_config_dir

from bgnet.nn.checkpoint import load_checkpoint
from bgnet.resources import config_dir
from bgnet.train.config import ConfigError, in_phase, load_config, phase_index
from bgnet.train.loop import train

TINY = """\
# @package _global_
hydra:
  run:
    dir: {run_dir}
seed: 3
model:
  encoding: contact
  hidden: [16, 16]
  activation: [sigmoid, relu]
  split: true
  race_hidden: [8]
  race_activation: sigmoid
train:
  games: 0
  parallel_games: 32
  buffer_positions: 256
  checkpoint_every: 200
  log_every: 200
eval:
  every: 0
  final_games: 0
phases:
  - name: warm
    until: 300
    train: {{lam: 0.7}}
    optim: {{lr: 0.001, lr_final: 0.0005}}
  - name: filtered
    until: 600
    train: {{lam: 0.4, move_filter: 4}}
    optim: {{lr: 0.0005, lr_final: 0.0002}}
  - name: td0
    until: 900
    train: {{lam: 0.0, move_filter: 4, epsilon: 0.05, explore_top: 3}}
    optim: {{lr: 0.0002, lr_final: 0.00001}}
"""


def write_recipe(tmp_path, text: str):
    """A config folder holding ``recipe/tiny.yaml`` made of ``text`` (its runs go to ``tmp_path/run``)."""
    folder = tmp_path / "configs"
    (folder / "recipe").mkdir(parents=True)
    (folder / "recipe" / "tiny.yaml").write_text(text.format(run_dir=tmp_path / "run"))
    return folder


@pytest.fixture
def recipes(tmp_path):
    return write_recipe(tmp_path, TINY)


def composed(recipes, *overrides):
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        return compose(config_name="train", overrides=[f"hydra.searchpath=[file://{recipes}]", "+recipe=tiny",
                                                       "progress=false", *overrides])


def weights(run_dir):
    return load_checkpoint(run_dir / "checkpoints" / "latest.pt")["net_state"]


# --------------------------------------------------------------------------------------------
# The config


def test_a_recipe_runs_to_its_last_phase_and_each_phase_has_its_own_settings(recipes):
    run = load_config(composed(recipes))
    assert run.train.games == 900  # games: 0 is the last phase's end
    assert [phase_index(run, g) for g in (0, 299, 300, 899, 5000)] == [0, 0, 1, 2, 2]
    second = in_phase(run, 1)
    assert (second.train.lam, second.train.move_filter, second.optim.decay_start, second.train.games) == \
        (0.4, 4, 300, 600)
    assert (second.optim.lr, second.optim.lr_final) == (0.0005, 0.0002)


@pytest.mark.parametrize("override, message", [
    ("phases.1.until=200", r"phases\[1\] \(filtered\)\.until' must be > 300"),
    ("+phases.0.train.parallel_games=8", r"cannot change within a run"),
    ("phases.2.optim.lr=-1", r"in phases\[2\] \(td0\): config key 'optim.lr' must be > 0"),
    ("train.games=901", r"past the recipe's last phase"),
    ("+phases.0.steps=3", r"unknown config key\(s\) in 'phases\[0\]': steps"),
])
def test_a_recipe_that_cannot_run_is_refused_naming_the_key(recipes, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(composed(recipes, override))


@pytest.mark.parametrize("name", sorted(p.stem for p in (config_dir() / "recipe").glob("*.yaml")))
def test_each_shipped_recipe_composes_and_validates(name):
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        run = load_config(compose(config_name="train", overrides=[f"+recipe={name}"]))
    assert run.phases and run.train.games == run.phases[-1].until
    assert load_config(run.to_dict()) == run  # what a checkpoint records loads back the same


# --------------------------------------------------------------------------------------------
# Running, resuming


def test_the_phases_run_in_order_and_the_history_marks_them(recipes, tmp_path):
    summary = train(composed(recipes), tmp_path / "run")
    assert summary["games"] >= 900 and summary["cpu_seconds"] > 0
    data = load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")
    begins = [(h["phase"], h["games"]) for h in data["history"] if h.get("begins")]
    assert [name for name, _ in begins] == ["phase 2/3 filtered", "phase 3/3 td0"]
    assert 300 <= begins[0][1] < 300 + 32 and 600 <= begins[1][1] < 600 + 32
    assert data["phase"] == "phase 3/3 td0"
    assert data["compute"]["cpu_seconds"] > 0 and data["compute"]["wall_seconds"] > 0


def test_a_stopped_recipe_resumed_plays_on_exactly_as_if_it_had_not_stopped(recipes, tmp_path):
    """The games in flight, the positions not yet learned, the generators and the phase travel
    in the checkpoint: stopping at 450 games (mid-phase) and resuming gives the very same net."""
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    train(composed(recipes), straight)
    train(composed(recipes, "train.games=450"), stopped)
    resume = f"resume={stopped / 'checkpoints' / 'latest.pt'}"
    train(composed(recipes, resume), stopped, overrides=[resume])
    a, b = weights(straight), weights(stopped)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------------------------
# The command: the same command resumes; a signal anywhere saves and exits 130


def bgnet_train(recipes, *args):
    return [sys.executable, "-m", "bgnet.cli", "train", f"hydra.searchpath=[file://{recipes}]", "+recipe=tiny",
            "progress=false", *args]


def start(recipes, *args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(bgnet_train(recipes, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_the_same_command_resumes_a_recipe_run(recipes, tmp_path):
    first = subprocess.run(bgnet_train(recipes, "train.games=300"), capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert f"run folder: {tmp_path / 'run'}" in first.stdout
    again = subprocess.run(bgnet_train(recipes), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"resuming the run in {tmp_path / 'run'}" in again.stdout
    assert load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")["games"] >= 900
    assert "phase 3/3 td0" in (tmp_path / "run" / "app.log").read_text()
    assert len(list(tmp_path.iterdir())) == 2  # configs and run: no other folder was made


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.8, 1.6, 2.6, 4.0])
def test_a_signal_anywhere_saves_and_exits_130_with_the_command_that_resumes(recipes, tmp_path, delay):
    """Stopped at a spread of moments after it starts (while it loads, builds the pool, plays,
    learns, changes phase), the run exits 130 without a traceback, says how to resume, and the
    same command then finishes it."""
    proc = start(recipes, "train.games=900")
    assert "run folder" in proc.stdout.readline()
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    if proc.returncode == 0:  # it finished before the signal came: nothing to check
        return
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Error" not in err, err
    assert "bgnet train: interrupted" in err and "resume with: bgnet train" in err
    latest = tmp_path / "run" / "checkpoints" / "latest.pt"
    if "saved" in err:
        assert load_checkpoint(latest)["games"] < 900
    done = subprocess.run(bgnet_train(recipes), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert load_checkpoint(latest)["games"] >= 900


@pytest.mark.slow
def test_a_run_killed_outright_resumes_from_its_last_checkpoint(recipes, tmp_path):
    proc = start(recipes)
    latest = tmp_path / "run" / "checkpoints" / "latest.pt"
    deadline = time.time() + 300
    while not list((tmp_path / "run").glob("checkpoints/games_*.pt")) and time.time() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    before = load_checkpoint(latest)["games"]
    assert 200 <= before < 900
    done = subprocess.run(bgnet_train(recipes), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"resumed from {latest} at {before} games" in done.stdout
    assert load_checkpoint(latest)["games"] >= 900


@pytest.mark.slow
def test_the_same_recipe_runs_on_ray_workers_through_its_phases(recipes, tmp_path):
    pytest.importorskip("ray")
    summary = train(composed(recipes, "distributed=ray", "ray.workers=2", "ray.games_per_task=64",
                             "train.games=700"), tmp_path / "run")
    assert summary["games"] >= 700 and summary["worker_processes"] >= 2
    data = load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")
    assert [h["phase"] for h in data["history"] if h.get("begins")] == ["phase 2/3 filtered", "phase 3/3 td0"]
    # The workers' CPU time counts in the run's compute, beside the learner's.
    assert data["compute"]["cpu_seconds"] > 0
