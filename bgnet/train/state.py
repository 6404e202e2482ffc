"""A training run's state: what a checkpoint holds and what a resumed run takes back from it.

:class:`RunState` is the net, its optimizer, the games played, the weights version (the learning
rounds so far), the two random streams, the compute spent in earlier sittings, the run's history,
the positions not yet learned and the recipe's distill phases done; a resumed checkpoint also
brings its self-play games in flight, which the run's game source takes once it starts
(:meth:`RunState.take_games_in_flight`).
:class:`Clock` adds this sitting's compute to the earlier ones'.

A checkpoint holds plain Python values, lists, dicts and torch tensors only, so that it loads with
``torch.load(weights_only=True)``: :func:`plain` and :func:`as_tensors` make them so.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import numpy as np
import torch

from bgnet.nn.checkpoint import load_checkpoint
from bgnet.nn.model import SplitValueNet, ValueNet, net_from_config
from bgnet.train.config import RunConfig
from bgnet.train.learn import build_net, build_optimizer, concat_games, resolve_device
from bgnet.train.resume import Requested, reconcile
from bgnet.train.selfplay import FinishedGames

# --------------------------------------------------------------------------------------------
# Random state and plain payloads


def rng_state(rng: np.random.Generator) -> dict:
    return {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}


def restore_rng(rng: np.random.Generator, state: dict) -> None:
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])


def plain(value):
    """``value`` with numpy scalars and arrays turned into Python numbers and lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def as_tensors(value):
    """``value`` with numpy arrays turned into torch tensors (a checkpoint keeps them compact)."""
    if isinstance(value, dict):
        return {k: as_tensors(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.array(value))  # a copy: writable, contiguous
    return value


def as_arrays(value):
    """The inverse of :func:`as_tensors`."""
    if isinstance(value, dict):
        return {k: as_arrays(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value.numpy()
    return value


# --------------------------------------------------------------------------------------------
# The run's state


class RunState:
    """Everything of a run that a checkpoint keeps (see the module docstring), fresh for ``cfg``;
    :meth:`begin` makes it, from the checkpoint of ``cfg.resume`` where there is one."""

    def __init__(self, cfg: RunConfig, net: ValueNet | SplitValueNet, opt: torch.optim.Optimizer, device: str):
        self.cfg = cfg
        self.net, self.opt, self.device = net, opt, device
        self.rng = np.random.default_rng(cfg.seed)  # minibatch order (and online mode's dice)
        # The local pool's dice: a generator of their own, so the learning step is the same
        # whichever source played the games.
        self.selfplay_rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 1]))
        self.games = 0
        self.version = 0  # rounds of learning: a source plays with the weights of this version
        self.compute = {"cpu_seconds": 0.0, "wall_seconds": 0.0}  # spent before this sitting
        # The run's curve, kept in every checkpoint so that it travels with the run: one entry
        # per evaluation and per phase boundary (games, core-hours, phase, results).
        self.history: list[dict] = []
        self.buffer: list[FinishedGames] = []  # positions played and not yet learned
        self.distilled: list[int] = []  # the recipe's distill phases done (their indices)
        self.games_in_flight: dict = {}  # a resumed checkpoint's, until the source takes them

    @classmethod
    def begin(cls, cfg: RunConfig, requested: Requested) -> RunState:
        """A fresh run's state (its weights drawn from ``cfg.seed``), or the state of the
        checkpoint ``cfg.resume`` under the config :func:`~bgnet.train.resume.reconcile` allows."""
        device = resolve_device(cfg.device)
        torch.manual_seed(cfg.seed)
        data = None
        if cfg.resume:
            data = load_checkpoint(cfg.resume, map_location=device)
            cfg, notes = reconcile(cfg, data, requested, path=str(cfg.resume))
            for note in notes:
                print(f"note: {note}", file=sys.stderr)
        net = (net_from_config(data["net_config"]) if data else build_net(cfg.model)).to(device)
        state = cls(cfg, net, build_optimizer(net, cfg.optim), device)
        if data:
            state.restore(data)
        return state

    def restore(self, data: dict) -> None:
        """Take back what the checkpoint ``data`` holds."""
        self.net.load_state_dict(data["net_state"])
        if data.get("optimizer_state"):
            self.opt.load_state_dict(data["optimizer_state"])
        self.games = int(data.get("games", 0))
        self.version = int(data.get("weights_version", 0))
        rng = data.get("rng") or {}
        if rng:
            restore_rng(self.rng, rng)
        if rng.get("selfplay"):
            self.selfplay_rng.bit_generator.state = rng["selfplay"]
        else:  # a checkpoint from before the pool had its own dice: fresh ones for this part
            self.selfplay_rng = np.random.default_rng(np.random.SeedSequence([self.cfg.seed, 1, self.games]))
        self.compute.update(data.get("compute") or {})
        self.history = list(data.get("history") or [])
        self.distilled = [int(i) for i in data.get("distilled") or []]
        play = as_arrays(data.get("play") or {})
        self.games_in_flight = play.get("pool") or {}
        if play.get("buffer"):
            b = play["buffer"]
            self.buffer = [FinishedGames(np.asarray(b["boards"], np.int8), np.asarray(b["targets"], np.float32),
                                         np.empty(0, np.int64), np.empty(0, np.int64))]
        print(f"resumed from {self.cfg.resume} at {self.games} games")

    def take_games_in_flight(self) -> dict:
        """A resumed checkpoint's self-play games in flight, handed over once (to the run's
        game source, which goes on with them where it can)."""
        games, self.games_in_flight = self.games_in_flight, {}
        return games

    def payload(self, source_state: dict, games_in_flight: dict, phase: str, spent: dict,
                metrics: dict | None = None) -> dict:
        """The checkpoint of this state, with the game source's dice (``source_state``) and
        ``games_in_flight``, the ``phase`` it is in by name and the compute ``spent`` so far."""
        rng = rng_state(self.rng)
        rng.update(source_state)
        play = {"pool": games_in_flight}
        if self.buffer:
            unlearned = concat_games(self.buffer)
            play["buffer"] = {"boards": unlearned.boards, "targets": unlearned.targets}
        return {"net_config": self.net.config(), "net_state": self.net.state_dict(),
                "optimizer_state": self.opt.state_dict(), "games": self.games,
                "config": self.cfg.to_dict(), "rng": plain(rng), "metrics": plain(metrics or {}),
                "weights_version": self.version, "compute": spent,
                "phase": phase, "play": as_tensors(play), "history": self.history,
                "distilled": list(self.distilled)}

    def record(self, phase: str, spent: dict, **entry) -> None:
        """An entry of the run's history at the games played now (see ``self.history``)."""
        self.history.append({"games": self.games, "core_hours": spent["cpu_seconds"] / 3600,
                             "phase": phase, **entry})


class Clock:
    """The compute a run has spent: ``before`` (its earlier sittings') plus this process's CPU
    seconds (every thread) and wall seconds since the clock was made, plus the CPU seconds of
    self-play outside this process that the caller gives."""

    def __init__(self, before: dict):
        self.before = dict(before)
        self.t_start = time.perf_counter()
        self.cpu_start = time.process_time()

    def seconds(self) -> float:
        """Wall seconds of this sitting."""
        return time.perf_counter() - self.t_start

    def counting_children(self) -> Callable[[], None]:
        """Begins counting the CPU seconds of the child processes this process finishes (a
        distill phase's labelling workers) from now; the function returned adds them to the
        run's. Ray's processes are children too but outlive the span counted, and their
        self-play is counted by the source."""
        start = _children_cpu_seconds()

        def stop() -> None:
            self.before["cpu_seconds"] += _children_cpu_seconds() - start
        return stop

    def spent(self, remote_cpu_seconds: float) -> dict:
        return {"cpu_seconds": self.before["cpu_seconds"] + time.process_time() - self.cpu_start
                + remote_cpu_seconds,
                "wall_seconds": self.before["wall_seconds"] + self.seconds()}


def _children_cpu_seconds() -> float:
    """CPU seconds of the child processes this process has waited for."""
    t = os.times()
    return t.children_user + t.children_system
