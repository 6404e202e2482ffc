"""Self-play spread over many processes or machines with Ray (``bgnet train distributed=ray``).

:class:`RaySource` is the run loop's game source (:mod:`bgnet.train.sources`) for a distributed
run; everything else (config, resume, learning step, logs, evaluations, checkpoints, summary) is
the one loop of :mod:`bgnet.train.loop`, so every option means what it means in a local run.
The learner is this process. It keeps one self-play task in flight on each of ``ray.workers``
Ray actors (:class:`SelfPlayWorker`). Every worker has a CPU copy of the net and a
:class:`~bgnet.train.selfplay.SelfPlayPool`; a task plays until ``ray.games_per_task`` games have
finished and returns their positions with their targets (λ-returns, mixed with their 1-ply
values by the worker itself when ``train.search_target`` > 0, so that the search runs on every
worker at once). After each round of learning the new
weights are published once (``ray.put``) and every task submitted afterwards plays with them.

Faults: a worker that dies (killed, out of memory, its machine gone) fails its task with a
``RayActorError``; the learner starts a fresh actor in its place and gives it the lost task
again. Checkpoints are written atomically by the learner alone, so no worker can spoil one,
and a restarted run continues from ``latest.pt`` with ``resume=``.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig

from bgnet.bots.torch_eval import NetEvaluator
from bgnet.nn.model import SplitValueNet, ValueNet, net_from_config
from bgnet.train.config import ConfigError, RunConfig, load_config
from bgnet.train.learn import concat_games, searcher_for, set_threads, with_search_targets
from bgnet.train.selfplay import FinishedGames, SelfPlayPool, SelfPlaySettings

# --------------------------------------------------------------------------------------------
# The worker


@dataclass
class TaskResult:
    """What one self-play task sends back: the finished games and where they came from."""
    games: FinishedGames
    version: int  # weights version the task started with
    seconds: float  # time spent playing (and searching, with train.search_target)
    pid: int  # the worker's process (changes when a worker is replaced)
    cpu_seconds: float = 0.0  # CPU time the task took in the worker's process


class SelfPlayWorker:
    """One self-play process: a CPU copy of the net and a pool of games in flight.

    Ray runs it as an actor; it is a plain class so that it also runs in-process. The pool
    persists between tasks: games still going at the end of a task go on in the next one, with
    whatever weights that task brings, as they would in a single-machine run.
    """

    def __init__(self, net_config: dict, seed: list[int], settings: SelfPlaySettings, threads: int = 1):
        # One thread each: several workers share a machine's cores, and the pool's network
        # calls are small enough that more threads mostly fight over them.
        set_threads(threads)
        self.net = net_from_config(net_config).eval()
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        self.pool = SelfPlayPool(NetEvaluator(self.net, "cpu"), settings, rng)
        self.search_weight = settings.search_target
        self.searcher = (searcher_for(self.net, "cpu", settings.bearoff, settings.move_filter)
                         if settings.search_target else None)
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
        t, cpu = time.perf_counter(), time.process_time()
        parts, done = [], 0
        while done < games:
            fin = self.pool.step()
            if len(fin.results):
                parts.append(fin)
                done += len(fin.results)
        played = with_search_targets(concat_games(parts), self.searcher, self.search_weight)
        return TaskResult(played, version, time.perf_counter() - t, os.getpid(), time.process_time() - cpu)

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


def ray_settings(cfg: DictConfig | RunConfig) -> dict:
    """The checked ``ray:`` section of ``cfg`` as a dict; raises ConfigError."""
    run = cfg if isinstance(cfg, RunConfig) else load_config(cfg)
    if run.distributed == "ray" and run.train.mode != "batched":  # checked by load_config too
        raise ConfigError(f"distributed=ray needs train.mode=batched; got train.mode={run.train.mode}")
    return dataclasses.asdict(run.ray)


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


RAY_LOG = "ray.log"  # Ray's own messages to this process, in the run's folder
RAY_LOGS = "ray-logs"  # a link, in the run's folder, to the logs of Ray's processes on this machine


def connect(ray, settings: dict, log_dir: Path | None = None) -> bool:
    """Join the cluster at ``ray.address`` or start a local instance; returns True when this
    call connected (and so the run must disconnect), False when Ray was already up.

    Ray's own output stays out of the terminal, where a cluster that loses a node would flood it
    (hundreds of ``[state-dump]`` lines): the workers' and Ray's processes' logs are not
    forwarded to this process, Ray's messages to it go to ``log_dir/ray.log``, ``log_dir/ray-logs``
    links to the logs Ray keeps of its processes on this machine, and one line says where.
    Without ``log_dir`` Ray's messages go nowhere."""
    if ray.is_initialized():
        return False
    _log_ray_to(log_dir)
    need = settings["workers"] * settings["worker_threads"]
    # No forwarding of the workers' and Ray's processes' output; Ray's own setup of the "ray"
    # logger keeps its handlers, which are ours now (configure_logging=False would drop them).
    quiet: dict[str, Any] = {"log_to_driver": False}
    if settings["address"] is None:
        # "local": a fresh instance, never one that RAY_ADDRESS or an earlier `ray start` points at.
        ray.init(address="local", num_cpus=max(os.cpu_count() or 1, need), include_dashboard=False,
                 **quiet)
    else:
        try:
            ray.init(address=settings["address"], **quiet)
        except (ConnectionError, RuntimeError) as e:
            raise ConfigError(
                f"cannot join the Ray cluster at ray.address={settings['address']}: {e}\n"
                "Is `ray start --head` running there? If the cluster uses token authentication "
                "(the default of `ray start`), set RAY_AUTH_MODE=token here and give this machine "
                "the head's token (~/.ray/auth_token or RAY_AUTH_TOKEN).") from None
    have = ray.cluster_resources().get("CPU", 0)
    where = "a local Ray instance" if settings["address"] is None else \
        f"the Ray cluster at {settings['address']}"
    logs = f"; Ray's logs: {_link_ray_logs(ray, log_dir)}" if log_dir is not None else ""
    print(f"self-play on {settings['workers']} Ray worker{'s' if settings['workers'] != 1 else ''}, "
          f"{where} ({have:g} CPUs){logs}", flush=True)
    if have < need:
        print(f"note: the Ray cluster has {have:g} CPUs and {settings['workers']} workers ask for "
              f"{need}: some wait until more nodes join", file=sys.stderr)
    return True


def _log_ray_to(log_dir: Path | None) -> None:
    """Ray's Python loggers (the ``ray`` logger, which Ray points at the terminal when it is
    imported) write to ``log_dir/ray.log`` instead, or nowhere without ``log_dir``."""
    logger = logging.getLogger("ray")
    for earlier in list(logger.handlers):  # Ray's own, or an earlier run's in this process
        logger.removeHandler(earlier)
        if isinstance(earlier, logging.FileHandler):
            earlier.close()
    handler: logging.Handler = logging.NullHandler()
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_dir / RAY_LOG)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def _link_ray_logs(ray, log_dir: Path) -> str:
    """Link ``log_dir/ray-logs`` to the folder where Ray logs its processes on this machine;
    returns what to tell a person (the log file, and the link where it could be made)."""
    told = str(log_dir / RAY_LOG)
    try:  # the session's log folder: Ray names it only through its node object
        logs = Path(ray._private.worker._global_node.get_logs_dir_path())
    except AttributeError:
        return told
    link = log_dir / RAY_LOGS
    try:
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(logs, target_is_directory=True)
    except OSError:
        return f"{told}, {logs}"
    return f"{told}, {link}/"


# --------------------------------------------------------------------------------------------
# The workers seen from the learner


class WorkerGroup:
    """The self-play actors and what each is doing; replaces actors that die.

    A new actor first answers a probe (its process id); only then is it given tasks. So the
    games of a lost task go to whichever worker is free first, and a replacement that cannot
    start (its machine gone, no free CPU in the cluster) holds no games back.
    """

    def __init__(self, ray, settings: dict, play: SelfPlaySettings, seed: int, net_config: dict, seed_base: int):
        from ray.exceptions import ObjectLostError, RayActorError

        self.ray = ray
        self.lost_errors = (RayActorError, ObjectLostError)
        self.settings = settings
        self.play, self.net_config = play, net_config
        if play.bearoff:
            # Build (or check) the cached tables once here, so the workers only load them.
            from bgnet.bearoff import get_database

            get_database()
        self.seed = [int(seed), int(seed_base)]
        self.actor = ray.remote(num_cpus=settings["worker_threads"])(SelfPlayWorker)
        n = settings["workers"]
        self.incarnation = [0] * n
        self.pending: dict = {}  # ObjectRef -> (worker index, games asked for; 0 for a probe)
        self.ready: set[int] = set()
        self.handles: list[Any] = [None] * n  # ray actor handles
        self.failures = 0
        self.pids: set[int] = set()  # processes that delivered games
        for i in range(n):
            self._spawn(i)

    def _spawn(self, i: int) -> None:
        # A replacement gets its own dice: seeded by (run seed, games at start, worker, incarnation).
        seed = [*self.seed, i, self.incarnation[i]]
        self.handles[i] = self.actor.remote(self.net_config, seed, self.play, self.settings["worker_threads"])
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
# The run loop's source


class RaySource:
    """The game source of a ``distributed=ray`` run (see :class:`bgnet.train.sources.GameSource`).

    Connects to Ray (or starts a local instance), starts the workers, and keeps each busy with
    a task of up to ``ray.games_per_task`` games, never asking for more games in all than the run
    still wants. Worker dice are seeded by (seed, games at start, worker, incarnation).
    """

    def __init__(self, cfg: RunConfig, net: ValueNet | SplitValueNet, version: int, games_at_start: int,
                 log_dir: Path | None = None):
        self.settings = dataclasses.asdict(cfg.ray)
        self.ray = import_ray(local=self.settings["address"] is None)
        self.connected = connect(self.ray, self.settings, log_dir)
        self.staleness: list[int] = []
        self.seed, self.net_config, self.worker_cpu = cfg.seed, net.config(), 0.0
        self.version = version
        try:
            self.weights_ref = self._publish(net)
            self.workers = WorkerGroup(self.ray, self.settings, SelfPlaySettings.of(cfg.train), self.seed,
                                       self.net_config, games_at_start)
        except BaseException:
            self._disconnect()
            raise

    def next_games(self, wanted: int) -> FinishedGames:
        self._fill(wanted)
        _, result = self.workers.next_event()
        if result is None:  # a probe answered, or a worker died and is being replaced
            return concat_games([])
        self.worker_cpu += result.cpu_seconds
        self.staleness.append(self.version - result.version)
        return result.games

    def sync(self, net: torch.nn.Module, version: int) -> None:
        """Put the current weights in the object store once; every later task plays with them."""
        self.weights_ref = self._publish(net)
        self.version = version

    def _publish(self, net: torch.nn.Module):
        """The net's weights in the object store (a Ray ObjectRef)."""
        return self.ray.put({k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()})

    def state(self) -> dict:
        return {}  # worker dice are reseeded from the games played at each start

    def games_in_flight(self) -> dict:
        return {}  # the workers' games are not kept: a resumed run starts fresh ones

    def resume_games(self, state: dict) -> None:
        pass

    def configure(self, settings: SelfPlaySettings, games: int) -> None:
        """Fresh workers with the new phase's settings, their dice seeded from ``games``: the
        games the old workers had in flight are dropped (a local pool plays its own on)."""
        old = self.workers
        old.shutdown()
        self.workers = WorkerGroup(self.ray, self.settings, settings, self.seed, self.net_config, games)
        self.workers.pids |= old.pids  # the run's totals go on
        self.workers.failures = old.failures

    def cpu_seconds(self) -> float:
        return self.worker_cpu

    def scalars(self) -> dict[str, float]:
        out = {"distributed/workers": self.settings["workers"],
               "distributed/worker_failures": self.workers.failures,
               "distributed/weights_version": self.version}
        if self.staleness:
            out["distributed/weight_staleness"] = float(np.mean(self.staleness))
        self.staleness = []
        return out

    def summary(self) -> dict:
        return {"workers": self.settings["workers"], "worker_failures": self.workers.failures,
                "worker_processes": len(self.workers.pids)}

    def close(self) -> None:
        self.workers.shutdown()
        self._disconnect()

    def _fill(self, wanted: int) -> None:
        """Give tasks to idle workers until the games in flight reach what the run wants."""
        for i in self.workers.idle():
            remaining = wanted - self.workers.games_in_flight()
            if remaining <= 0:
                return
            self.workers.submit(i, self.version, self.weights_ref,
                                min(self.settings["games_per_task"], remaining))

    def _disconnect(self) -> None:
        if self.connected:
            self.connected = False
            self.ray.shutdown()
            _log_ray_to(None)  # the run's log file is closed; Ray's later messages go nowhere
