"""Distributed self-play on Ray: the worker on its own, the ray config checks, and short training
runs on a local Ray instance (one for the module) with a worker killed mid-run, then a resume, and
the same learning step as a local run on the same games."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# A local instance needs no outside address: keep Ray on the loopback interface (read at import).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir

from bgnet.nn.checkpoint import load_checkpoint
from bgnet.nn.model import ValueNet
from bgnet.train.compose import CONFIG_DIR
from bgnet.train.config import ConfigError
from bgnet.train.distributed import SelfPlayWorker, WorkerGroup, ray_settings
from bgnet.train.loop import train
from bgnet.train.selfplay import SelfPlaySettings


def config(*overrides):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(config_name="train", overrides=["distributed=ray", *overrides])


# Small and quick: few games in flight, small tasks, frequent updates, logs and checkpoints.
SHORT = ["train.parallel_games=32", "ray.games_per_task=40", "train.buffer_positions=1024",
         "train.batch_size=64", "train.checkpoint_every=100", "train.log_every=50", "eval.every=0",
         "eval.opponents=[random]", "progress=false"]


# --------------------------------------------------------------------------------------------
# Without Ray


def test_worker_plays_games_with_the_weights_it_is_given():
    net = ValueNet("tesauro", 8)
    w = SelfPlayWorker(net.config(), [0, 0, 0, 0],
                       SelfPlaySettings(parallel_games=16, lam=0.7, max_plies=1000, epsilon=0.0))
    r = w.play(0, net.state_dict(), 5)
    g = r.games
    assert len(g.results) >= 5 and r.version == 0 and r.pid == os.getpid()
    assert len(g.boards) == len(g.targets) == g.lengths.sum()
    assert set(np.abs(g.results)) <= {1, 2, 3}
    assert g.targets.min() >= 0.0 and g.targets.max() <= 1.0
    # The last position of each game is the winner's final move: its target is the result.
    last = np.cumsum(g.lengths) - 1
    assert np.all(g.targets[last, 0] == 1.0)

    other = ValueNet("tesauro", 8)
    w.play(1, [other.state_dict()], 1)  # a new version, wrapped as refs are
    for a, b in zip(w.net.state_dict().values(), other.state_dict().values()):
        assert torch.equal(a, b)
    # The same version again is not reloaded: the weights argument is not even looked at.
    assert len(w.play(1, [None], 2).games.results) >= 2


def test_worker_mixes_its_targets_with_the_one_ply_values_of_the_net_it_played_with():
    """With train.search_target the worker, not the learner, searches: the same dice give the same
    games, and each target is the λ-return mixed with the position's 1-ply value by the weights
    the task played with."""
    from bgnet.train.learn import searcher_for

    torch.manual_seed(3)
    net = ValueNet("tesauro", 8)
    args = dict(parallel_games=8, lam=0.7, max_plies=1000, epsilon=0.0, bearoff=True)
    plain = SelfPlayWorker(net.config(), [5, 0, 0, 0], SelfPlaySettings(**args)).play(0, net.state_dict(), 3).games
    mixed = SelfPlayWorker(net.config(), [5, 0, 0, 0], SelfPlaySettings(search_target=0.25, **args)).play(
        0, net.state_dict(), 3).games
    assert np.array_equal(plain.boards, mixed.boards) and np.array_equal(plain.results, mixed.results)
    ply1 = searcher_for(net.eval(), "cpu", bearoff=True).evaluate(plain.boards, ply=1)
    assert np.allclose(mixed.targets, 0.75 * plain.targets + 0.25 * ply1, atol=1e-5)
    assert not np.allclose(mixed.targets, plain.targets, atol=1e-3)


def test_ray_settings_defaults_and_errors():
    s = ray_settings(config())
    assert s["address"] is None and s["workers"] >= 1
    with pytest.raises(ConfigError, match="ray.workers"):
        ray_settings(config("ray.workers=0"))
    with pytest.raises(ConfigError, match="ray.max_worker_failures"):
        ray_settings(config("ray.max_worker_failures=-1"))
    with pytest.raises(ConfigError, match="unknown config key"):
        ray_settings(config("+ray.wrokers=3"))
    with pytest.raises(ConfigError, match="train.mode=batched"):
        ray_settings(config("train.mode=online"))
    with pytest.raises(ConfigError, match="ray.address"):
        ray_settings(config("ray.address=''"))


def test_sigterm_saves_a_ray_run_and_exits_130(tmp_path):
    """Ray's driver puts in its own SIGTERM handler when it connects (one that ends the process
    with a stack report and no save); the run takes the signal back and stops as on Ctrl-C."""
    pytest.importorskip("ray")
    run = tmp_path / "run"
    code = "import sys; from bgnet.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "train", "distributed=ray", "ray.workers=1", "train.games=1000000",
           *SHORT, "eval.final_games=0", f"hydra.run.dir={run}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    latest = run / "checkpoints" / "latest.pt"
    try:
        deadline = time.time() + 120
        while not latest.exists():
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"no checkpoint in time: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
    assert code == 130, proc.stderr.read().decode()[-2000:]
    log = (run / "app.log").read_text()
    assert "stopped at" in log
    assert load_checkpoint(latest)["games"] >= 100


# --------------------------------------------------------------------------------------------
# On a local Ray instance


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def crash_the_second_task(monkeypatch) -> None:
    """The fault drill: the worker given the run's second task is killed as soon as it has it,
    as if its process crashed mid-task."""
    submit = WorkerGroup.submit
    given: list[int] = []

    def submit_then_crash(self, i: int, version: int, weights_ref, games: int) -> None:
        submit(self, i, version, weights_ref, games)
        given.append(i)
        if len(given) == 2:
            self.ray.kill(self.handles[i], no_restart=True)

    monkeypatch.setattr(WorkerGroup, "submit", submit_then_crash)


@pytest.fixture(scope="module")
def killed_run(local_ray, tmp_path_factory):
    """A one-worker run of 200 games whose worker is killed in its second task: only a
    replacement can finish it."""
    run_dir = tmp_path_factory.mktemp("ray_run")
    cfg = config(*SHORT, "train.games=200", "ray.workers=1", "eval.final_games=0")
    with pytest.MonkeyPatch.context() as monkeypatch:
        crash_the_second_task(monkeypatch)
        return run_dir, train(cfg, run_dir, progress=False)


@pytest.mark.slow
def test_killed_worker_is_replaced_and_the_run_finishes(killed_run):
    run_dir, s = killed_run
    assert s["games"] >= 200 and s["workers"] == 1
    assert s["worker_failures"] == 1  # the actor really died: its task failed with RayActorError
    assert s["worker_processes"] == 2  # the first worker's process, then its replacement's
    assert s["weights_version"] >= 1  # the learner trained and published new weights
    ck = run_dir / "checkpoints"
    assert (ck / "latest.pt").exists() and sorted(ck.glob("games_*.pt"))
    data = load_checkpoint(ck / "latest.pt")
    assert data["games"] == s["games"] and data["weights_version"] == s["weights_version"]
    assert data["config"]["distributed"] == "ray"
    # Trained weights differ from the untrained net the same seed builds.
    torch.manual_seed(0)
    fresh = ValueNet("tesauro", 80).state_dict()
    assert any(not torch.equal(fresh[k], v) for k, v in data["net_state"].items())
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert (run_dir / "summary.json").exists()


@pytest.mark.slow
def test_resume_continues_from_the_checkpoint(killed_run, tmp_path):
    run_dir, first = killed_run
    total = first["games"] + 80
    cfg = config(*SHORT, f"train.games={total}", "ray.workers=2", "eval.final_games=10",
                 f"resume={run_dir / 'checkpoints' / 'latest.pt'}")
    s = train(cfg, tmp_path, progress=False)
    assert s["games_at_start"] == first["games"]
    assert s["games"] >= total and s["worker_failures"] == 0
    assert s["weights_version"] > first["weights_version"]
    assert s["final_eval"]["random"]["games"] == 10
    data = load_checkpoint(tmp_path / "checkpoints" / "latest.pt")
    assert data["games"] == s["games"] and data["metrics"]["random"]["games"] == 10


@pytest.mark.slow
def test_ray_and_local_runs_take_the_same_learning_step_on_the_same_games(local_ray, tmp_path):
    """The games a Ray run received, replayed through the local loop with the same config, train
    the very same weights. With train.search_target the workers mixed the targets (the test
    above), so the games carry them: the learner takes the same step from them either way."""
    from test_train import assert_same_weights, record_run, replay_run

    over = [*SHORT, "train.games=60", "ray.workers=1", "eval.final_games=0", "model.hidden=[12]",
            "train.buffer_positions=400", "train.search_target=0.5"]
    rec, by_ray = record_run(config(*over), tmp_path / "ray")
    assert by_ray["config"]["distributed"] == "ray" and rec.versions
    _, by_local = replay_run(config(*over, "distributed=none"), tmp_path / "local", rec.batches)
    assert_same_weights(by_ray["net_state"], by_local["net_state"])
    assert by_ray["weights_version"] == by_local["weights_version"] == len(rec.versions)


@pytest.mark.slow
def test_ray_s_output_stays_out_of_the_terminal_and_its_logs_are_in_the_run_folder(tmp_path):
    """What Ray's processes and workers write (a node lost floods it with [state-dump] lines)
    is not forwarded; Ray's messages go to RUN/ray.log, RUN/ray-logs links to its processes'
    logs, and the terminal gets one line of bgnet's."""
    pytest.importorskip("ray")
    run = tmp_path / "run"
    script = f"""
import time
from pathlib import Path
from pathlib import Path
from bgnet.train.distributed import connect, import_ray

ray = import_ray(local=True)
settings = {{"address": None, "workers": 1, "worker_threads": 1}}
assert connect(ray, settings, Path({str(run)!r}))

@ray.remote
def noisy():
    import sys
    print("[state-dump] from a worker's stdout", flush=True)
    print("[state-dump] from a worker's stderr", file=sys.stderr, flush=True)
    return 1

assert ray.get(noisy.remote()) == 1
time.sleep(3)  # time enough for Ray to forward the lines, were it to
ray.shutdown()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    said = (done.stdout + done.stderr).splitlines()
    assert said == [f"self-play on 1 Ray worker, a local Ray instance ({_cpus(said)} CPUs); Ray's "
                    f"logs: {run / 'ray.log'}, {run / 'ray-logs'}/"], said
    assert "Started a local Ray instance" in (run / "ray.log").read_text()
    logs = run / "ray-logs"
    assert logs.is_symlink() and any(p.name.startswith("raylet") for p in logs.iterdir())
    worker_logs = "".join(p.read_text(errors="replace") for p in logs.glob("worker-*"))
    assert "[state-dump] from a worker's stdout" in worker_logs  # kept there, not lost


def _cpus(lines: list[str]) -> str:
    return lines[0].split("(", 1)[1].split(" CPUs", 1)[0] if lines and "(" in lines[0] else "?"
