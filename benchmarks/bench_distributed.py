"""Distributed self-play speed: training games per second with 1, 2, ... Ray workers, learning
included, on one local Ray instance, next to the single-process batched trainer.

Each figure is measured from the first task's result to the end of the run, so Ray's start-up
and the workers' imports are left out; the learner (this process) trains and publishes weights
all the while, on the same machine's cores as the workers.

    python3 benchmarks/bench_distributed.py                        # 1 and 2 workers
    python3 benchmarks/bench_distributed.py --workers 1 2 4 8 15 --games 100000 --device cuda
    python3 benchmarks/bench_distributed.py --games 4000 --set model=extended \
        "model.hidden=[256,256]" "model.race_hidden=[64]"     # a fresh net of stage 7's shape
    python3 benchmarks/bench_distributed.py --net bgnet-deep --games 20000 --workers 2

With ``--net`` every run resumes from a copy of that net and trains ``--games`` more games: a
trained net's games are shorter than a fresh one's, and its rate is what a long run gets. It takes
a checkpoint (its net, optimizer and settings), an exported bot or a shipped one by name
(``bgnet-deep``, ``bgnet-default``: the net alone, with a fresh optimizer and the default settings).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

# The local instance needs no outside address: keep Ray on the loopback interface (read at import).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np  # noqa: E402
from shipped_net import write_checkpoint  # noqa: E402

from bgnet.train.compose import CONFIG_DIR  # noqa: E402
from bgnet.train.loop import set_threads, train  # noqa: E402

EXTRA: list[str] = []  # Hydra overrides from --set, applied to every run


def overrides(**over) -> list[str]:
    """The Hydra overrides of a timed run: --set's, then the run's own."""
    return EXTRA + [f"{k}={v}" for k, v in over.items()]


def config(over: list[str]):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose(config_name="train", overrides=over)


def common(a, run_dir: str) -> dict:
    """Settings of every timed run in ``run_dir``: ``--games`` games, no evaluations or checkpoints,
    resumed from a copy of ``--net`` when given."""
    games, over = a.games, {}
    if a.net:
        from bgnet.nn.checkpoint import load_checkpoint

        start = os.path.join(run_dir, "checkpoints", "latest.pt")
        os.makedirs(os.path.dirname(start))
        write_checkpoint(a.net, start)
        games += int(load_checkpoint(start)["games"])
        over["resume"] = start
    return {**over, "train.games": games, "train.parallel_games": a.parallel, "device": a.device,
            "train.checkpoint_every": 10**9, "eval.every": 0, "eval.final_games": 0,
            "progress": "false"}


def ray_overrides(a, workers: int, run_dir: str) -> list[str]:
    return overrides(**{"distributed": "ray", "ray.workers": workers,
                        "ray.games_per_task": a.games_per_task, **common(a, run_dir)})


def warm_up(parallel: int) -> None:
    """Compile (or load) the numba kernels once, so that workers find them in the cache."""
    from bgnet.bots.torch_eval import NetEvaluator
    from bgnet.nn.model import ValueNet
    from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings

    pool = SelfPlayPool(NetEvaluator(ValueNet("tesauro", 80)), SelfPlaySettings(parallel_games=min(parallel, 64)),
                        np.random.default_rng(0))
    for _ in range(3):
        pool.step()


def distributed_rate(a, workers: int) -> tuple[float, float, float]:
    """(games/s from the first result on, seconds to the first result, wall seconds)."""
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        # The overrides say which keys were asked for: a resumed net keeps its own architecture.
        over = ray_overrides(a, workers, d)
        s = train(config(over), d, progress=False, overrides=over)  # over says distributed=ray
        return s["games_per_second"], s["seconds_to_first_result"], time.perf_counter() - t


def single_rate(a) -> float:
    """Games/s of the single-process trainer, from its first finished games on (as the Ray runs)."""
    with tempfile.TemporaryDirectory() as d:
        over = overrides(**common(a, d))
        s = train(config(over), d, progress=False, overrides=over)
        return s["games_per_second"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to time")
    ap.add_argument("--games", type=int, default=8000, help="games per timed run")
    ap.add_argument("--parallel", type=int, default=512, help="games in flight in each worker")
    ap.add_argument("--games-per-task", type=int, default=256)
    ap.add_argument("--device", default="cpu", help="the learner's device (workers play on CPU)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the single-process run")
    ap.add_argument("--net", help="resume every run from a copy of this net: a checkpoint, a .onnx bot, "
                    "bgnet-deep or bgnet-default (default: a fresh net)")
    ap.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                    help="Hydra overrides for every run, e.g. model=extended (default: the 80-unit net)")
    a = ap.parse_args()
    EXTRA.extend(a.set)
    if any(w < 1 for w in a.workers):
        ap.error("--workers takes counts >= 1")
    import ray

    cores = os.cpu_count() or 1
    set_threads(1)
    warm_up(a.parallel)
    ray.init(address="local", num_cpus=max(cores, max(a.workers)), include_dashboard=False,
             log_to_driver=False)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{cores} cores (load average {load:.1f} before the runs); learner on {a.device}; "
          f"{a.parallel} games in flight per worker; {a.games} games per run; the learner shares "
          "the cores with the workers")
    try:
        rates = {}
        for w in a.workers:
            rates[w], first, wall = distributed_rate(a, w)
            ratio = rates[w] / rates[a.workers[0]]
            print(f"ray, {w:2d} worker(s): {rates[w]:8.0f} games/s  (x{ratio:.2f} of {a.workers[0]} "
                  f"worker(s); first result after {first:.0f} s, {wall:.0f} s wall)", flush=True)
    finally:
        ray.shutdown()
    if not a.no_baseline:
        single = single_rate(a)
        best = max(rates, key=lambda w: rates[w])
        print(f"single process (loop.train): {single:8.0f} games/s  ({best} Ray worker(s): "
              f"x{rates[best] / single:.2f} of it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
