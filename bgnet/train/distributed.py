"""Self-play spread over many processes or machines with Ray (``bgnet train distributed=ray``).

The learner is this process. It holds the net and the optimizer, and keeps one self-play task in
flight on each of ``ray.workers`` Ray actors (:class:`SelfPlayWorker`). Every worker has a CPU
copy of the net and a :class:`~bgnet.train.selfplay.SelfPlayPool`; a task plays until
``ray.games_per_task`` games have finished and returns their positions with their λ-returns.
As results arrive (``ray.wait``) the learner gathers them and, once ``train.buffer_positions``
are in, makes the same minibatch updates as a single-machine batched run; the new weights are
published once per version (``ray.put``) and every task submitted afterwards plays with them.

Checkpoints, TensorBoard scalars, the tqdm bar, evaluations and ``summary.json`` are those of
:func:`bgnet.train.loop.train`, so a distributed run resumes a single-machine one and the other
way round.

Faults: a worker that dies (killed, out of memory, its machine gone) fails its task with a
``RayActorError``; the learner starts a fresh actor in its place and gives it the lost task
again. Checkpoints are written atomically by the learner alone, so no worker can spoil one,
and a restarted run continues from ``latest.pt`` with ``resume=``.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from bgnet.bots.net import NetEvaluator
from bgnet.nn.checkpoint import load_checkpoint, save_checkpoint
from bgnet.nn.model import net_from_config
from bgnet.train.config import ConfigError, validate
from bgnet.train.loop import (Learner, _format_eval, _log_eval, _Stats, build_net, build_optimizer,
                              evaluate_against, learning_rate, resolve_device, restore_rng, rng_state,
                              set_threads, weight_norm)
from bgnet.train.selfplay import FinishedGames, SelfPlayPool

# Keys of the ``ray:`` config section that older configs may lack, with their defaults.
RAY_DEFAULTS = {"address": None, "workers": 2, "games_per_task": 256, "worker_threads": 1,
                "max_worker_failures": 100, "kill_worker_after_tasks": None}


# --------------------------------------------------------------------------------------------
# The worker


@dataclass
class TaskResult:
    """What one self-play task sends back: the finished games and where they came from."""
    games: FinishedGames
    version: int  # weights version the task started with
    seconds: float  # time spent playing
    pid: int  # the worker's process (changes when a worker is replaced)


def concat_games(parts: list[FinishedGames]) -> FinishedGames:
    """One FinishedGames holding all of ``parts`` in order."""
    if not parts:
        return FinishedGames(np.empty((0, 2, 25), np.int8), np.empty((0, 5), np.float32),
                             np.empty(0, np.int64), np.empty(0, np.int64))
    return FinishedGames(*(np.concatenate([getattr(p, f) for p in parts])
                           for f in ("boards", "targets", "results", "lengths")))


class SelfPlayWorker:
    """One self-play process: a CPU copy of the net and a pool of games in flight.

    Ray runs it as an actor; it is a plain class so that it also runs in-process. The pool
    persists between tasks: games still going at the end of a task go on in the next one, with
    whatever weights that task brings, as they would in a single-machine run.
    """

    def __init__(self, net_config: dict, seed: list[int], parallel_games: int, lam: float,
                 max_plies: int, epsilon: float, threads: int = 1, bearoff: bool = False):
        # One thread each: several workers share a machine's cores, and the pool's network
        # calls are small enough that more threads mostly fight over them.
        set_threads(threads)
        self.net = net_from_config(net_config).eval()
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        self.pool = SelfPlayPool(NetEvaluator(self.net, "cpu"), parallel_games, rng, lam=lam,
                                 max_plies=max_plies, epsilon=epsilon, bearoff=bearoff)
        self.version: int | None = None

    def play(self, version: int, weights, games: int) -> TaskResult:
        """Play until at least ``games`` games have finished, with weights ``version``.

        ``weights`` is a state dict, a Ray ObjectRef to one, or a one-element list holding such
        a ref (Ray leaves a ref inside a list unresolved, so it is fetched only when this
        worker does not hold that version yet).
        """
        if games < 1:
            raise ValueError(f"a self-play task needs at least one game; got {games}")
        self._load(version, weights)
        t = time.perf_counter()
        parts, done = [], 0
        while done < games:
            fin = self.pool.step()
            if len(fin.results):
                parts.append(fin)
                done += len(fin.results)
        return TaskResult(concat_games(parts), version, time.perf_counter() - t, os.getpid())

    def _load(self, version: int, weights) -> None:
        if version == self.version:
            return
        if isinstance(weights, (list, tuple)):
            (weights,) = weights
        if not isinstance(weights, dict):  # an ObjectRef
            import ray

            weights = ray.get(weights)
        self.net.load_state_dict(weights)
        self.net.eval()
        self.version = version

    def pid(self) -> int:
        return os.getpid()


# --------------------------------------------------------------------------------------------
# Config and connection


def ray_settings(cfg: DictConfig) -> dict:
    """The ``ray:`` section with defaults for missing keys, checked; raises ConfigError."""
    section = OmegaConf.select(cfg, "ray", default=None)
    raw = OmegaConf.to_container(section, resolve=True) if section is not None else {}
    unknown = sorted(set(raw) - set(RAY_DEFAULTS))
    if unknown:
        raise ConfigError(f"unknown config key(s) in 'ray': {', '.join(unknown)}; "
                          f"known: {', '.join(RAY_DEFAULTS)}")
    s = {**RAY_DEFAULTS, **raw}
    if s["address"] is not None and (not isinstance(s["address"], str) or not s["address"].strip()):
        raise ConfigError(f"config key 'ray.address' must be null, 'auto' or 'HOST:PORT'; got {s['address']!r}")
    for key, lo, none_ok in (("workers", 1, False), ("games_per_task", 1, False),
                             ("worker_threads", 1, False), ("max_worker_failures", 0, False),
                             ("kill_worker_after_tasks", 1, True)):
        v = s[key]
        if v is None and none_ok:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ConfigError(f"config key 'ray.{key}' must be a whole number >= {lo}"
                              f"{' or null' if none_ok else ''}; got {v!r}")
    if cfg.train.mode != "batched":
        raise ConfigError(f"distributed=ray needs train.mode=batched; got train.mode={cfg.train.mode}")
    return s


def import_ray(local: bool):
    """Import Ray with a clear error when it is missing. A local instance is kept on the
    loopback interface: it needs no outside address, and then listens on none."""
    if local and "ray" not in sys.modules:
        # Read by Ray when it is imported: node address 127.0.0.1 instead of the LAN address.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ConfigError("distributed=ray needs Ray: pip install 'ray'") from None
    return ray


def connect(ray, settings: dict) -> bool:
    """Join the cluster at ``ray.address`` or start a local instance; returns True when this
    call connected (and so the run must disconnect), False when Ray was already up."""
    if ray.is_initialized():
        return False
    need = settings["workers"] * settings["worker_threads"]
    if settings["address"] is None:
        # "local": a fresh instance, never one that RAY_ADDRESS or an earlier `ray start` points at.
        ray.init(address="local", num_cpus=max(os.cpu_count() or 1, need), include_dashboard=False)
    else:
        try:
            ray.init(address=settings["address"])
        except (ConnectionError, RuntimeError) as e:
            raise ConfigError(
                f"cannot join the Ray cluster at ray.address={settings['address']}: {e}\n"
                "Is `ray start --head` running there? If the cluster uses token authentication "
                "(the default of `ray start`), set RAY_AUTH_MODE=token here and give this machine "
                "the head's token (~/.ray/auth_token or RAY_AUTH_TOKEN).") from None
    have = ray.cluster_resources().get("CPU", 0)
    if have < need:
        print(f"note: the Ray cluster has {have:g} CPUs and {settings['workers']} workers ask for "
              f"{need}: some wait until more nodes join", file=sys.stderr)
    return True


# --------------------------------------------------------------------------------------------
# The workers seen from the learner


class WorkerGroup:
    """The self-play actors and what each is doing; replaces actors that die.

    A new actor first answers a probe (its process id); only then is it given tasks. So the
    games of a lost task go to whichever worker is free first, and a replacement that cannot
    start (its machine gone, no free CPU in the cluster) holds no games back.
    """

    def __init__(self, ray, settings: dict, cfg: DictConfig, net_config: dict, seed_base: int):
        from ray.exceptions import ObjectLostError, RayActorError

        self.ray = ray
        self.lost_errors = (RayActorError, ObjectLostError)
        self.settings = settings
        bearoff = bool(OmegaConf.select(cfg, "train.bearoff", default=False))
        self.args = (net_config, int(cfg.train.parallel_games), float(cfg.train.lam),
                     int(cfg.train.max_plies), float(cfg.train.epsilon), settings["worker_threads"],
                     bearoff)
        if bearoff:
            # Build (or check) the cached tables once here, so the workers only load them.
            from bgnet.bearoff import get_database

            get_database()
        self.seed = [int(cfg.seed), int(seed_base)]
        self.actor = ray.remote(num_cpus=settings["worker_threads"])(SelfPlayWorker)
        n = settings["workers"]
        self.incarnation = [0] * n
        self.pending: dict = {}  # ObjectRef -> (worker index, games asked for; 0 for a probe)
        self.ready: set[int] = set()
        self.handles = [None] * n
        self.failures = 0
        self.pids: set[int] = set()  # processes that delivered games
        for i in range(n):
            self._spawn(i)

    def _spawn(self, i: int) -> None:
        # A replacement gets its own dice: seeded by (run seed, games at start, worker, incarnation).
        seed = [*self.seed, i, self.incarnation[i]]
        self.handles[i] = self.actor.remote(self.args[0], seed, *self.args[1:])
        self.pending[self.handles[i].pid.remote()] = (i, 0)

    def idle(self) -> list[int]:
        """Workers that are up and have no task."""
        busy = {i for i, _ in self.pending.values()}
        return [i for i in sorted(self.ready) if i not in busy]

    def submit(self, i: int, version: int, weights_ref, games: int) -> None:
        ref = self.handles[i].play.remote(version, [weights_ref], games)
        self.pending[ref] = (i, games)

    def games_in_flight(self) -> int:
        return sum(g for _, g in self.pending.values())

    def tasks_in_flight(self) -> int:
        return sum(1 for _, g in self.pending.values() if g)

    def next_event(self) -> tuple[int, TaskResult | None]:
        """Wait for a task or a probe; returns (worker, result), with None for a probe answered
        or a worker that died (a fresh one is then starting in its place, and its task's games
        are no longer in flight)."""
        (ref,), _ = self.ray.wait(list(self.pending), num_returns=1)
        i, games = self.pending.pop(ref)
        try:
            value = self.ray.get(ref)
        except self.lost_errors as e:
            self.replace(i, e)
            return i, None
        self.ready.add(i)
        if not games:
            return i, None
        self.pids.add(value.pid)
        return i, value

    def replace(self, i: int, error: Exception) -> None:
        if getattr(error, "actor_init_failed", False):
            raise RuntimeError(f"a self-play worker could not start (is bgnet installed on every "
                               f"node of the cluster?): {error}") from error
        self.failures += 1
        limit = self.settings["max_worker_failures"]
        if self.failures > limit:
            raise RuntimeError(f"self-play workers died {self.failures} times (ray.max_worker_failures "
                               f"is {limit}); the last error: {error}") from error
        print(f"self-play worker {i} died ({type(error).__name__}); starting a new one",
              file=sys.stderr)
        self._kill(i)
        # Anything else still addressed to the dead actor fails too; drop it rather than count it twice.
        self.pending = {r: v for r, v in self.pending.items() if v[0] != i}
        self.ready.discard(i)
        self.incarnation[i] += 1
        self._spawn(i)

    def kill_busy_worker(self) -> int | None:
        """Fault drill: kill (like a crash, mid-task) the worker whose task was given last."""
        busy = [i for i, g in self.pending.values() if g]
        if not busy:
            return None
        self._kill(busy[-1])
        return busy[-1]

    def _kill(self, i: int) -> None:
        try:
            self.ray.kill(self.handles[i], no_restart=True)
        except Exception:  # already gone: nothing to kill
            pass

    def shutdown(self) -> None:
        for i in range(len(self.handles)):
            self._kill(i)
        self.pending.clear()
        self.ready.clear()


# --------------------------------------------------------------------------------------------
# Checkpoints (the payload of bgnet.train.loop.train)


class Checkpoints:
    """``latest.pt`` and numbered ``games_*.pt`` under ``<run>/checkpoints``, pruned to
    ``train.keep_checkpoints``; each write is atomic (:func:`save_checkpoint`). ``state()``
    gives what is saved: net, optimizer, games, rng and the weights version."""

    def __init__(self, run_dir: Path, cfg: DictConfig, state):
        self.dir = run_dir / "checkpoints"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cfg, self.state = cfg, state
        self.resolved = OmegaConf.to_container(cfg, resolve=True)
        self.saved: list[tuple[int, str]] = []  # numbered checkpoints of this run

    def save(self, name: str, metrics: dict | None = None) -> Path:
        net, opt, games, rng, version = self.state()
        payload = {"net_config": net.config(), "net_state": net.state_dict(),
                   "optimizer_state": opt.state_dict(), "games": games, "config": self.resolved,
                   "rng": rng_state(rng), "metrics": metrics or {}, "weights_version": version}
        path = save_checkpoint(self.dir / name, payload)
        (self.dir / "config.yaml").write_text(OmegaConf.to_yaml(self.cfg))
        return path

    def numbered(self, games: int, metrics: dict | None = None) -> Path:
        path = self.save(self.name(games), metrics)
        self.saved.append((games, str(path)))
        return path

    @staticmethod
    def name(games: int) -> str:
        return f"games_{games:09d}.pt"

    def previous(self, games: int) -> str | None:
        """The latest numbered checkpoint of this run from before ``games`` (for evaluations)."""
        older = [p for g, p in self.saved if g < games and os.path.exists(p)]
        return older[-1] if older else None

    def prune(self) -> None:
        numbered = sorted(self.dir.glob("games_*.pt"), key=lambda p: p.stat().st_mtime)
        for old in numbered[: max(0, len(numbered) - self.cfg.train.keep_checkpoints)]:
            old.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------
# The run


def train_distributed(cfg: DictConfig, run_dir: str | os.PathLike, progress: bool | None = None) -> dict:
    """Train as :func:`bgnet.train.loop.train` does, with self-play on Ray actors; writes the
    same files under ``run_dir`` and returns the same summary, plus the workers' figures."""
    validate(cfg)
    settings = ray_settings(cfg)
    ray = import_ray(local=settings["address"] is None)
    connected = connect(ray, settings)
    try:
        return _DistributedRun(cfg, Path(run_dir), progress, ray, settings).run()
    finally:
        if connected:
            ray.shutdown()


class _DistributedRun:
    """The learner's state and its loop; one instance per call of :func:`train_distributed`."""

    def __init__(self, cfg: DictConfig, run_dir: Path, progress, ray, settings: dict):
        self.cfg, self.run_dir, self.ray, self.settings = cfg, run_dir, ray, settings
        self.progress = bool(cfg.get("progress", True)) if progress is None else progress
        self.threads = set_threads(cfg.train.threads)
        self.device = resolve_device(cfg.device)
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.ckpt = Checkpoints(run_dir, cfg, self._state)
        self.net = build_net(cfg.model).to(self.device)
        self.opt = build_optimizer(self.net, cfg.optim)
        self.games = self.version = 0
        if cfg.resume:
            self._resume(cfg.resume)
        OmegaConf.save(cfg, run_dir / "config.yaml")
        self.total = int(cfg.train.games)
        self.learner = Learner(self.net, self.opt, cfg.train.loss, self.device,
                               fast_cpu=bool(cfg.train.get("fast_cpu", False)))
        self.stats = _Stats()
        self.buf: list[FinishedGames] = []
        self.buffered = 0
        self.staleness: list[int] = []
        self.lr = learning_rate(cfg.optim, self.games, self.total)

    def _resume(self, path) -> None:
        data = load_checkpoint(path, map_location=self.device)
        self.net = net_from_config(data["net_config"]).to(self.device)
        self.net.load_state_dict(data["net_state"])
        self.opt = build_optimizer(self.net, self.cfg.optim)
        if data.get("optimizer_state"):
            self.opt.load_state_dict(data["optimizer_state"])
        self.games = int(data.get("games", 0))
        self.version = int(data.get("weights_version", 0))
        if data.get("rng"):
            restore_rng(self.rng, data["rng"])
        print(f"resumed from {path} at {self.games} games")

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> dict:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        cfg = self.cfg
        self.writer = SummaryWriter(str(self.run_dir / "tb"))
        self.bar = tqdm(total=self.total, initial=min(self.games, self.total), unit="game",
                        disable=not self.progress, dynamic_ncols=True, desc="self-play (ray)")
        self.games_at_start = self.games
        self.last_ckpt = self.games - self.games % cfg.train.checkpoint_every
        self.last_eval = self.games - (self.games % cfg.eval.every if cfg.eval.every else 0)
        self.last_log = self.games
        self.t_start = time.perf_counter()
        self.t_first = None  # first result: the rate is measured from there (start-up excluded)
        self.games_first = self.games
        self.workers = WorkerGroup(self.ray, self.settings, cfg, self.net.config(), self.games)
        try:
            self._loop()
        except KeyboardInterrupt:
            self.bar.write("interrupted: saving a checkpoint")
        finally:
            self.workers.shutdown()
            self.bar.close()
            final_path = self.ckpt.save("latest.pt")
            self.writer.flush()
        return self._finish(final_path)

    def _loop(self) -> None:
        tasks_done = 0
        drill = self.settings["kill_worker_after_tasks"]
        self._publish()
        while self.games < self.total or self.workers.tasks_in_flight():
            _, result = self.workers.next_event()
            if result is not None:
                self._absorb(result)
                tasks_done += 1
            self._fill()
            if drill is not None and tasks_done >= drill:
                drill = None
                killed = self.workers.kill_busy_worker()
                if killed is not None:
                    self.bar.write(f"fault drill: killed self-play worker {killed}")

    def _publish(self) -> None:
        """Put the current weights in the object store once; every later task plays with them."""
        state = {k: v.detach().to("cpu", copy=True) for k, v in self.net.state_dict().items()}
        self.weights_ref = self.ray.put(state)

    def _fill(self) -> None:
        """Give tasks to idle workers until the games in flight reach the total."""
        for i in self.workers.idle():
            remaining = self.total - self.games - self.workers.games_in_flight()
            if remaining <= 0:
                return
            games = min(self.settings["games_per_task"], remaining)
            self.workers.submit(i, self.version, self.weights_ref, games)

    def _absorb(self, result: TaskResult) -> None:
        fin = result.games
        new = len(fin.results)
        if self.t_first is None:
            self.t_first, self.games_first = time.perf_counter(), self.games + new
        self.staleness.append(self.version - result.version)
        self.stats.add_games(fin.results, fin.lengths)
        self.buf.append(fin)
        self.buffered += len(fin.boards)
        self.lr = learning_rate(self.cfg.optim, self.games, self.total)
        if self.buffered >= self.cfg.train.buffer_positions:
            self._learn()
        self.games += new
        self.bar.update(new)
        self._after_games()

    def _learn(self) -> None:
        """The batched update of loop.train on the gathered positions, then publish."""
        cfg = self.cfg
        self.net.train()
        for g in self.opt.param_groups:
            g["lr"] = self.lr
        data = concat_games(self.buf)
        b, t = data.boards, data.targets
        for _ in range(cfg.train.epochs):
            perm = self.rng.permutation(len(b))
            for lo in range(0, len(b), cfg.train.batch_size):
                sel = perm[lo:lo + cfg.train.batch_size]
                self.stats.losses.append(self.learner.update(b[sel], t[sel]))
        self.net.eval()
        self.buf, self.buffered = [], 0
        self.version += 1
        self._publish()

    def _rate(self) -> float:
        if self.t_first is None:
            return 0.0
        return (self.games - self.games_first) / max(time.perf_counter() - self.t_first, 1e-9)

    def _after_games(self) -> None:
        cfg, games = self.cfg, self.games
        if games - self.last_log >= cfg.train.log_every or games >= self.total:
            self._log()
        if games - self.last_ckpt >= cfg.train.checkpoint_every:
            self.ckpt.save("latest.pt")
            self.ckpt.numbered(games)
            self.ckpt.prune()
            self.last_ckpt = games - games % cfg.train.checkpoint_every
        if cfg.eval.every and games - self.last_eval >= cfg.eval.every and games < self.total:
            previous = self.ckpt.previous(games) if cfg.eval.previous else None
            res = evaluate_against(self.net, self.device, cfg.eval.opponents, cfg.eval.games,
                                   seed=cfg.seed + 1, previous=previous)
            self.net.eval()
            _log_eval(self.writer, res, games, self.bar)
            self.last_eval = games - games % cfg.eval.every

    def _log(self) -> None:
        gps = self._rate()
        w = self.writer
        self.stats.write(w, self.games, lr=self.lr, games_per_second=gps, weight_norm=weight_norm(self.net))
        w.add_scalar("distributed/workers", self.settings["workers"], self.games)
        w.add_scalar("distributed/worker_failures", self.workers.failures, self.games)
        w.add_scalar("distributed/weights_version", self.version, self.games)
        if self.staleness:
            w.add_scalar("distributed/weight_staleness", float(np.mean(self.staleness)), self.games)
        self.bar.set_postfix(gps=f"{gps:.0f}", loss=f"{self.stats.last_loss:.4f}",
                             lost=self.workers.failures)
        self.stats.reset()
        self.staleness = []
        self.last_log = self.games

    def _state(self):
        return self.net, self.opt, self.games, self.rng, self.version

    def _finish(self, final_path: Path) -> dict:
        cfg, games = self.cfg, self.games
        summary = {"games": games, "checkpoint": str(final_path), "threads": self.threads,
                   "device": self.device, "seconds": round(time.perf_counter() - self.t_start, 1),
                   "distributed": "ray", "workers": self.settings["workers"],
                   "worker_failures": self.workers.failures, "weights_version": self.version,
                   "worker_processes": len(self.workers.pids),
                   "games_at_start": self.games_at_start,
                   "games_per_second": round(self._rate(), 1),
                   "seconds_to_first_result": (round(self.t_first - self.t_start, 1)
                                               if self.t_first is not None else None)}
        if cfg.eval.final_games and games >= self.total:
            res = evaluate_against(self.net, self.device, cfg.eval.opponents, cfg.eval.final_games,
                                   seed=cfg.seed + 2)
            _log_eval(self.writer, res, games, None)
            summary["final_eval"] = res
            self.ckpt.save("latest.pt", res)
            if not (self.ckpt.dir / self.ckpt.name(games)).exists():
                self.ckpt.numbered(games, res)
            print(_format_eval(res, games))
        self.writer.close()
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
        return summary
