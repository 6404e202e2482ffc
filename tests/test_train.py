"""The trainer: learning, λ-returns, checkpoints that survive a kill, resume, config errors, and one
learning step whatever source played the games."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir

from bgnet.bots.net import NetBot
from bgnet.bots.simple import RandomBot
from bgnet.measure.match import play_games
from bgnet.nn.checkpoint import CheckpointError, load_checkpoint, load_net
from bgnet.nn.model import flip
from bgnet.train.compose import CONFIG_DIR
from bgnet.train.config import ConfigError, validate
from bgnet.train.loop import train
from bgnet.train.selfplay import lambda_returns


def config(**over):
    base = {"progress": "false", "eval.every": 0, "eval.final_games": 0}
    base.update(over)
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(config_name="train", overrides=[f"{k}={v}" for k, v in base.items()])


def test_lambda_returns_match_the_forward_view():
    rng = np.random.default_rng(0)
    T, lam = 7, 0.6
    values = rng.random((T, 5)).astype(np.float32)
    final = np.array([1, 1, 0, 0, 0], np.float32)
    out = np.empty((T, 5), np.float32)
    lambda_returns(values, T, final, lam, out)

    # Forward view: G_t = (1-λ) Σ_n λ^(n-1) G_t^(n) + λ^(T-1-t) z, each n-step return seen from
    # the side on roll at t (every ply flips the point of view).
    def view(p, plies):
        return p if plies % 2 == 0 else flip(p)

    for t in range(T):
        g = np.zeros(5)
        for n in range(1, T - t):
            g += (1 - lam) * lam ** (n - 1) * view(values[t + n], n)
        g += lam ** (T - 1 - t) * view(final, T - 1 - t)
        assert np.allclose(out[t], g, atol=1e-5), t


def test_an_exploring_move_cuts_the_trace():
    """Watkins' rule: where the move at ply t explored, G_t is the greedy value stored at t + 1
    alone; the plies before it still mix in G_t with weight λ."""
    rng = np.random.default_rng(1)
    T, lam = 6, 0.6
    values = rng.random((T, 5)).astype(np.float32)
    final = np.array([0, 0, 0, 1, 0], np.float32)
    plain, cut = np.empty((T, 5), np.float32), np.empty((T, 5), np.float32)
    explored = np.zeros(T, np.bool_)
    explored[2] = True
    lambda_returns(values, T, final, lam, plain)
    lambda_returns(values, T, final, lam, cut, explored)
    np.testing.assert_array_equal(cut[3:], plain[3:])  # after the exploring move: unchanged
    np.testing.assert_allclose(cut[2], flip(values[3]), atol=1e-6)
    assert not np.allclose(cut[2], plain[2])
    np.testing.assert_allclose(cut[1], flip((1 - lam) * values[2] + lam * cut[2]), atol=1e-6)
    # with λ = 0 a cut changes nothing: TD(0) already backs up one ply
    zero, zero_cut = np.empty((T, 5), np.float32), np.empty((T, 5), np.float32)
    lambda_returns(values, T, final, 0.0, zero)
    lambda_returns(values, T, final, 0.0, zero_cut, explored)
    np.testing.assert_array_equal(zero, zero_cut)


def test_bad_config_values_name_their_key(tmp_path):
    for key, value, word in [("train.lam", 2, "train.lam"), ("train.games", 0, "train.games"),
                             ("train.explore_top", 1, "train.explore_top"),
                             ("train.explore_top", -2, "train.explore_top"),
                             ("model.encoding", "nope", "model.encoding"),
                             ("train.mode", "fast", "train.mode"), ("eval.games", 3, "eval.games")]:
        with pytest.raises(ConfigError, match=word):
            validate(config(**{key: value}))


def test_training_beats_a_random_mover(tmp_path):
    cfg = config(**{"train.games": 2000, "seed": 1, "train.checkpoint_every": 1000})
    summary = train(cfg, tmp_path)
    assert summary["games"] >= 2000
    net, data = load_net(tmp_path / "checkpoints" / "latest.pt")
    assert data["games"] == summary["games"]
    r = play_games(NetBot(net), RandomBot(5), 500, seed=3, progress=False)
    assert r.win_rate >= 0.80, r.summary()
    # periodic numbered checkpoints and the resolved config beside them
    assert (tmp_path / "checkpoints" / "games_000001000.pt").exists() or \
        any(p.name.startswith("games_") for p in (tmp_path / "checkpoints").iterdir())
    assert (tmp_path / "checkpoints" / "config.yaml").exists()
    assert any((tmp_path / "tb").iterdir())


def test_same_seed_same_weights(tmp_path):
    states = []
    for k in range(2):
        train(config(**{"train.games": 150, "seed": 7, "train.buffer_positions": 2000}), tmp_path / str(k))
        states.append(load_checkpoint(tmp_path / str(k) / "checkpoints" / "latest.pt")["net_state"])
    for name in states[0]:
        assert torch.equal(states[0][name], states[1][name]), name


def test_online_mode_updates_after_every_move(tmp_path):
    from bgnet.train.learn import build_net

    cfg = config(**{"train.mode": "online", "train.games": 3, "optim": "sgd", "seed": 3})
    summary = train(cfg, tmp_path)
    data = load_checkpoint(tmp_path / "checkpoints" / "latest.pt")
    assert summary["games"] == 3 and data["games"] == 3
    torch.manual_seed(3)
    initial = build_net(validate(cfg).model).state_dict()
    moved = [k for k in initial if not torch.equal(initial[k], data["net_state"][k])]
    assert moved, "online TD(λ) left every weight unchanged"


def test_truncated_checkpoint_is_a_clear_error(tmp_path):
    train(config(**{"train.games": 50}), tmp_path)
    path = tmp_path / "checkpoints" / "latest.pt"
    bad = tmp_path / "bad.pt"
    bad.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="bad.pt"):
        load_checkpoint(bad)
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match="empty"):
        load_checkpoint(tmp_path / "empty.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="junk.pt"):
        load_checkpoint(tmp_path / "junk.pt")


def _bgnet(*args, cwd):
    return [sys.executable, "-c", "import sys; from bgnet.cli import main; sys.exit(main())", *args]


def test_kill_and_resume(tmp_path):
    """kill -9 in the middle of a run loses at most one checkpoint interval."""
    run = tmp_path / "run"
    cmd = _bgnet("train", "progress=false", "train.games=100000", "train.checkpoint_every=200",
                 "eval.every=0", "eval.final_games=0", f"hydra.run.dir={run}", cwd=tmp_path)
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    latest = run / "checkpoints" / "latest.pt"
    deadline = time.time() + 240
    try:
        while time.time() < deadline:
            numbered = sorted((run / "checkpoints").glob("games_*.pt")) if latest.exists() else []
            if len(numbered) >= 2:
                break
            if proc.poll() is not None:
                pytest.fail(f"training exited early: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint written in time")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    saved = load_checkpoint(latest)["games"]
    assert saved >= 400
    # Resume for a few more games; the run continues from the saved count, in the same directory.
    target = saved + 100
    res = subprocess.run(_bgnet("train", "progress=false", f"train.games={target}",
                                "eval.every=0", "eval.final_games=0", f"resume={latest}", cwd=tmp_path),
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"resumed from {latest} at {saved} games" in res.stdout
    assert load_checkpoint(latest)["games"] >= target


def test_a_run_ends_saying_how_long_it_took_and_names_its_folder_once(tmp_path):
    import os
    import re

    run = tmp_path / "run"
    args = ("progress=false", "eval.every=0", "eval.final_games=0", f"hydra.run.dir={run}")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))  # this bgnet
    first = subprocess.run(_bgnet("train", "train.games=200", *args, cwd=tmp_path), cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.stdout.count("run folder:") == 1 and first.stdout.startswith(f"run folder: {run}")
    played = re.search(r"^trained (\d+) games in (\d+):(\d\d):(\d\d) \((\d+\.\d\d) core-hours\)$",
                       first.stdout, re.M)
    assert played, first.stdout
    assert int(played[1]) >= 200 and 0 < int(played[3]) * 60 + int(played[4]) < 300
    more = subprocess.run(_bgnet("train", "train.games=400", *args, cwd=tmp_path), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=env)
    assert more.returncode == 0, more.stderr[-2000:]
    assert more.stdout.count("run folder:") == 1
    assert re.search(r"^trained \d+ games in 0:0\d:\d\d; the run: \d+ games, 0:0\d:\d\d over every "
                     r"sitting \(\d+\.\d\d core-hours\)$", more.stdout, re.M), more.stdout
    # resume= a run's folder goes on in that folder (not in the folder above it).
    folder = subprocess.run(_bgnet("train", "train.games=500", *args[:3], f"resume={run}", cwd=tmp_path),
                            cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert folder.returncode == 0, folder.stderr[-2000:]
    assert folder.stdout.startswith(f"run folder: {run}\n") and sorted(tmp_path.iterdir()) == [run]


def test_the_time_left_is_estimated_once_the_rate_has_settled():
    from bgnet.train.progress import RATE_SETTLES_S, time_left

    assert time_left(27_000, 900.0, RATE_SETTLES_S - 0.5) == "?"
    assert time_left(27_000, 900.0, RATE_SETTLES_S) == "0:00:30"
    assert time_left(4_500_000, 250.0, 60.0) == "5:00:00"
    assert time_left(100, 0.0, 60.0) == "?"


@pytest.mark.parametrize("resume", ["nosuch.pt", "gone/checkpoints/latest.pt"])
def test_resume_from_a_missing_checkpoint_is_the_error_alone(tmp_path, resume, capsys):
    """Nothing is named, made or written before the error: no 'run folder: .', no app.log."""
    from bgnet.cli import main

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert main(["train", "progress=false", f"resume={resume}"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err == f"bgnet train: error: checkpoint {resume} does not exist\n"
    assert list(tmp_path.iterdir()) == []


def test_resume_from_a_corrupt_checkpoint_fails_clearly(tmp_path):
    bad = tmp_path / "broken.pt"
    bad.write_bytes(b"\x00" * 100)
    res = subprocess.run(_bgnet("train", "progress=false", "train.games=10", f"resume={bad}",
                                f"hydra.run.dir={tmp_path / 'r'}", cwd=tmp_path),
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 3  # an input file that cannot be used
    assert "bgnet train: error:" in res.stderr and "broken.pt" in res.stderr


def test_a_short_first_evaluation_starts_the_curve_early(tmp_path):
    """eval.first: one evaluation of eval.first_games games early, then the periodic ones."""
    import json

    cfg = config(**{"train.games": 800, "eval.every": 600, "eval.first": 200, "eval.first_games": 20,
                    "eval.games": 40, "eval.opponents": "[random]", "eval.previous": "false"})
    train(cfg, tmp_path)
    evals = [e for e in json.loads((tmp_path / "history.json").read_text()) if "eval" in e]
    assert [e["eval"]["random"]["games"] for e in evals] == [20, 40]
    assert 200 <= evals[0]["games"] < 600 <= evals[1]["games"] < 800


def test_the_first_evaluation_is_not_made_twice_nor_after_the_periodic_one(tmp_path):
    import json

    cfg = config(**{"train.games": 700, "eval.every": 300, "eval.first": 300, "eval.first_games": 20,
                    "eval.games": 40, "eval.opponents": "[random]", "eval.previous": "false"})
    train(cfg, tmp_path)
    evals = [e for e in json.loads((tmp_path / "history.json").read_text()) if "eval" in e]
    assert [e["eval"]["random"]["games"] for e in evals] == [40, 40]


def test_periodic_evaluation_against_random_repeats_with_the_seed():
    from bgnet.nn.model import ValueNet
    from bgnet.train.loop import evaluate_against

    torch.manual_seed(0)
    net = ValueNet("tesauro", 8)
    first = evaluate_against(net, "cpu", ["random"], 40, seed=3)
    again = evaluate_against(net, "cpu", ["random"], 40, seed=3)
    other = evaluate_against(net, "cpu", ["random"], 40, seed=4)
    assert first == again and first["random"]["games"] == 40
    assert other != first


# --------------------------------------------------------------------------------------------
# One learning step, whichever source played the games


class Recording:
    """A game source that passes on another's games and keeps them."""

    def __init__(self, inner):
        self.inner, self.batches, self.versions = inner, [], []

    def next_games(self, wanted):
        fin = self.inner.next_games(wanted)
        self.batches.append(fin)
        return fin

    def sync(self, net, version):
        self.versions.append(version)
        self.inner.sync(net, version)

    def state(self):
        return self.inner.state() if self.inner else {}

    def games_in_flight(self):
        return self.inner.games_in_flight() if self.inner else {}

    def resume_games(self, state):
        self.inner.resume_games(state)

    def configure(self, train, games):
        self.inner.configure(train, games)

    def cpu_seconds(self):
        return self.inner.cpu_seconds() if self.inner else 0.0

    def scalars(self):
        return self.inner.scalars()

    def summary(self):
        return self.inner.summary()

    def close(self):
        self.inner.close()


class Replay(Recording):
    """A game source that hands out recorded games again, in the same order."""

    def __init__(self, batches):
        super().__init__(None)
        self.queue = list(batches)

    def next_games(self, wanted):
        return self.queue.pop(0)

    def sync(self, net, version):
        self.versions.append(version)

    def state(self):
        return {}

    def scalars(self):
        return {}

    def summary(self):
        return {}

    def close(self):
        pass


def record_run(cfg, run_dir, make_source=None):
    """Train ``cfg`` with its own source, recorded; returns (recorder, final net state)."""
    from bgnet.train.loop import default_source

    holder = {}

    def source(trainer):
        holder["rec"] = Recording((make_source or default_source)(trainer))
        return holder["rec"]

    train(cfg, run_dir, source=source)
    return holder["rec"], load_checkpoint(Path(run_dir) / "checkpoints" / "latest.pt")


def replay_run(cfg, run_dir, batches):
    replay = Replay(batches)
    train(cfg, run_dir, source=lambda trainer: replay)
    return replay, load_checkpoint(Path(run_dir) / "checkpoints" / "latest.pt")


def assert_same_weights(a, b):
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_the_same_games_give_the_same_learning_step_without_the_pool(tmp_path):
    """The local pool's games, replayed through a source that plays nothing, train the same
    weights: the learning step depends on the games alone, not on the source's dice."""
    cfg = config(**{"train.games": 60, "seed": 4, "model.hidden": "[12]", "train.parallel_games": 16,
                    "train.buffer_positions": 300, "train.epochs": 2})
    rec, played = record_run(cfg, tmp_path / "local")
    replay, replayed = replay_run(cfg, tmp_path / "replay", rec.batches)
    assert rec.versions and replay.versions == rec.versions
    assert played["weights_version"] == replayed["weights_version"] == len(rec.versions)
    assert_same_weights(played["net_state"], replayed["net_state"])
    assert played["optimizer_state"]["state"].keys() == replayed["optimizer_state"]["state"].keys()
