"""The training run, top to bottom: config, (resume), games, learning, logs, evaluations,
checkpoints, summary. One loop for every way of playing the games:

* ``train.mode=batched``: finished games come from a :class:`~bgnet.train.sources.GameSource`
  (a local self-play pool with ``distributed=none``, Ray actors with ``distributed=ray``); once
  ``train.buffer_positions`` positions are in, :func:`~bgnet.train.learn.learn_step` learns from
  them and the source is told the new weights.
* ``train.mode=online``: Tesauro's TD(λ), one game at a time, the weights updated after every move
  through eligibility traces (:mod:`bgnet.train.online`). It is the reference, and slow.

Every metric goes to TensorBoard under ``<run dir>/tb``; checkpoints go to
``<run dir>/checkpoints`` (``latest.pt`` every ``checkpoint_every`` games and at exit, plus
numbered copies), each with the config the run really trains with beside it (``config.yaml``,
also in the run directory and inside the checkpoint). A resumed run takes the net and the
optimizer's kind from its checkpoint (:mod:`bgnet.train.resume`).

A checkpoint holds plain Python values, lists, dicts and torch tensors only, so that it loads with
``torch.load(weights_only=True)``.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from bgnet.atomic import write_atomic
from bgnet.bots.net import NetBot
from bgnet.nn.checkpoint import load_checkpoint, save_checkpoint
from bgnet.nn.model import net_from_config
from bgnet.train.config import RunConfig, eval_every, in_phase, load_config, phase_index
from bgnet.train.learn import (
    Learner,
    build_net,
    build_optimizer,
    concat_games,
    learn_step,
    learning_rate,
    race_positions,
    resolve_device,
    set_threads,
    weight_norm,
)
from bgnet.train.progress import time_left
from bgnet.train.resume import Requested, reconcile
from bgnet.train.selfplay import FinishedGames
from bgnet.train.sources import GameSource, source_for

SourceFactory = Callable[["Trainer"], GameSource]


def train(cfg: DictConfig | RunConfig, run_dir: str | os.PathLike, progress: bool | None = None,
          overrides: Iterable[str] | None = None, source: SourceFactory | None = None) -> dict:
    """Run the training described by ``cfg``; write everything under ``run_dir``. Returns the
    final evaluation (and a few totals) as a dict.

    ``overrides``: the command line's Hydra overrides, which tell a resumed run which keys a
    person asked for (:mod:`bgnet.train.resume`); None counts every key as asked for.
    ``source``: builds the run's game source from the trainer (default: by ``distributed``).
    """
    trainer = Trainer(load_config(cfg), Path(run_dir), progress, Requested(overrides))
    return trainer.run(source or default_source)


def default_source(trainer: Trainer) -> GameSource:
    """Self-play in this process, or on Ray actors with ``distributed=ray``."""
    return source_for(trainer.active, trainer.net, trainer.device, trainer.version, trainer.games,
                      trainer.selfplay_rng, log_dir=trainer.run_dir)


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


# --------------------------------------------------------------------------------------------
# Evaluation against fixed opponents


def evaluate_against(net, device: str, opponents, games: int, seed: int, previous: str | None = None):
    """Results of the current net (0-ply) against each opponent spec; skips what isn't installed.
    A plain ``random`` opponent draws its moves from ``seed`` too, so a run's figures repeat."""
    from bgnet.bots import load_bot
    from bgnet.measure.match import play_games

    was_training = net.training
    me = NetBot(net, device=device, name="current")
    out: dict[str, dict] = {}
    specs = list(opponents) + ([previous] if previous else [])
    for spec in specs:
        try:
            opp = load_bot(f"random:{seed}" if str(spec).lower() == "random" else spec, device=device)
        except (ImportError, RuntimeError) as e:
            out[str(spec)] = {"skipped": str(e)}
            continue
        r = play_games(me, opp, games, seed=seed, progress=False)
        key = "previous" if spec == previous else str(spec)
        out[key] = {"ppg": float(r.ppg), "ppg_ci95": float(r.ppg_ci95), "win_rate": float(r.win_rate),
                    "games": int(r.games)}
    net.train(was_training)
    return out


def error_rates(net, device: str) -> dict:
    """The net's 0-ply error rate on `bgnet bench er` (millipoints per decision) against the 2-ply
    reference (``er``, the figure bgnet reports first) and the 1-ply one (``er_1ply``)."""
    from bgnet.measure.er import decision_choices, has_deep_reference, load_benchmark, losses_of

    me = NetBot(net, device=device, name="current")
    one = load_benchmark(reference="1-ply")
    chosen = decision_choices(me, one)
    out = {"er_1ply": float(losses_of(one, chosen).mean() * 1000.0), "decisions": len(one)}
    two = load_benchmark(reference="2-ply") if has_deep_reference() else one
    out["er"] = float(losses_of(two, chosen).mean() * 1000.0)
    return out


# --------------------------------------------------------------------------------------------
# Checkpoints


class Checkpoints:
    """``latest.pt`` and numbered ``games_*.pt`` under ``<run>/checkpoints``, pruned to
    ``train.keep_checkpoints``; each write is atomic (:func:`save_checkpoint`)."""

    def __init__(self, run_dir: Path, keep: int):
        self.dir = run_dir / "checkpoints"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.saved: list[tuple[int, str]] = []  # numbered checkpoints of this run: (games, path)

    def save(self, name: str, payload: dict, config_yaml: str) -> Path:
        path = save_checkpoint(self.dir / name, payload)
        (self.dir / "config.yaml").write_text(config_yaml)
        return path

    @staticmethod
    def name(games: int) -> str:
        return f"games_{games:09d}.pt"

    def numbered(self, games: int, payload: dict, config_yaml: str) -> Path:
        path = self.save(self.name(games), payload, config_yaml)
        self.saved.append((games, str(path)))
        return path

    def previous(self, games: int) -> str | None:
        """The latest numbered checkpoint of this run from before ``games`` (for evaluations)."""
        older = [p for g, p in self.saved if g < games and os.path.exists(p)]
        return older[-1] if older else None

    def prune(self) -> None:
        numbered = sorted(self.dir.glob("games_*.pt"), key=lambda p: p.stat().st_mtime)
        for old in numbered[: max(0, len(numbered) - self.keep)]:
            old.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------
# The run


class Interrupted(Exception):
    """The run was stopped by a signal (Ctrl-C, SIGTERM) and saved; exit code 130."""


class StopSignals:
    """While active, SIGINT and SIGTERM set ``self.signal`` instead of raising, so a stop lands
    between two steps of the loop (never inside compiled code, where an exception cannot be
    raised cleanly); a second SIGINT raises KeyboardInterrupt at once. Only the main thread can
    take signals: elsewhere this does nothing."""

    def __init__(self, note: Callable[[str], None]):
        self.signal: int | None = None
        self.note = note
        self.saved: dict = {}

    def __enter__(self) -> StopSignals:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        import signal

        if self.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal = signum
        self.note("stopping: saving at the end of this step (Ctrl-C again to stop at once)")

    def take_back(self) -> None:
        """Handle the stop signals again where a library has put its own handlers in: Ray's
        driver, once connected, ends the process on SIGTERM with a stack report and no save."""
        import signal

        for sig in self.saved:  # empty off the main thread: nothing was installed there
            signal.signal(sig, self._handle)

    def __exit__(self, *exc) -> None:
        import signal

        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        self.saved.clear()


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


class Trainer:
    """A run's state (net, optimizer, games played, weights version, generators, phase, compute
    spent) and its loop. A recipe's run (``phases``) trains each phase with that phase's settings
    (:func:`bgnet.train.config.in_phase`); a run without phases is one phase."""

    def __init__(self, cfg: RunConfig, run_dir: Path, progress: bool | None, requested: Requested):
        self.threads = set_threads(cfg.train.threads)
        self.device = device = resolve_device(cfg.device)
        self.run_dir = run_dir
        self.rng = np.random.default_rng(cfg.seed)  # minibatch order (and online mode's dice)
        # The local pool's dice: a generator of their own, so the learning step is the same
        # whichever source played the games.
        self.selfplay_rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 1]))
        torch.manual_seed(cfg.seed)
        self.games = self.version = 0
        self.compute = {"cpu_seconds": 0.0, "wall_seconds": 0.0}  # spent before this sitting
        # The run's curve, kept in every checkpoint so that it travels with the run: one entry
        # per evaluation and per phase boundary (games, core-hours, phase, results).
        self.history: list[dict] = []
        self.saved_play: dict = {}  # the games in flight and unlearned of a resumed checkpoint
        data = None
        if cfg.resume:
            data = load_checkpoint(cfg.resume, map_location=device)
            cfg, notes = reconcile(cfg, data, requested, path=str(cfg.resume))
            for note in notes:
                print(f"note: {note}", file=sys.stderr)
        self.cfg = cfg
        self.net = (net_from_config(data["net_config"]) if data else build_net(cfg.model)).to(device)
        self.opt = build_optimizer(self.net, cfg.optim)
        if data:
            self._restore(data)
        self.progress = cfg.progress if progress is None else bool(progress)
        self.total = cfg.train.games
        self.phase = phase_index(cfg, self.games)
        self.active = in_phase(cfg, self.phase)

    def _restore(self, data: dict) -> None:
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
        self.saved_play = as_arrays(data.get("play") or {})
        print(f"resumed from {self.cfg.resume} at {self.games} games")

    # -- payloads ------------------------------------------------------------------------------
    def config_yaml(self) -> str:
        return OmegaConf.to_yaml(OmegaConf.create(self.cfg.to_dict()))

    def payload(self, metrics: dict | None = None) -> dict:
        state = rng_state(self.rng)
        if self.source is not None:
            state.update(self.source.state())
        play = {}
        if self.source is not None:
            play["pool"] = self.source.games_in_flight()
        if self.buffer:
            unlearned = concat_games(self.buffer)
            play["buffer"] = {"boards": unlearned.boards, "targets": unlearned.targets}
        return {"net_config": self.net.config(), "net_state": self.net.state_dict(),
                "optimizer_state": self.opt.state_dict(), "games": self.games,
                "config": self.cfg.to_dict(), "rng": plain(state), "metrics": plain(metrics or {}),
                "weights_version": self.version, "compute": self.spent(),
                "phase": self._phase_name(), "play": as_tensors(play), "history": self.history}

    def save(self, name: str, metrics: dict | None = None, numbered: bool = False) -> Path:
        if self.history:  # the curve as plain JSON too, for bgnet plot and people
            write_atomic(self.run_dir / "history.json", json.dumps(self.history, indent=1).encode())
        if numbered:
            return self.ckpt.numbered(self.games, self.payload(metrics), self.config_yaml())
        return self.ckpt.save(name, self.payload(metrics), self.config_yaml())

    def spent(self) -> dict:
        """Compute spent on the run so far: CPU seconds of this process (every thread) and of
        remote self-play workers, and wall seconds, over every sitting."""
        if not hasattr(self, "cpu_at_start"):
            return dict(self.compute)
        remote = self.source.cpu_seconds() if self.source is not None else 0.0
        return {"cpu_seconds": self.compute["cpu_seconds"] + time.process_time() - self.cpu_at_start + remote,
                "wall_seconds": self.compute["wall_seconds"] + time.perf_counter() - self.t_start}

    # -- the run -------------------------------------------------------------------------------
    def run(self, make_source: SourceFactory) -> dict:
        """Train to ``train.games``; returns the summary. A stop signal (Ctrl-C, SIGTERM) saves
        ``latest.pt`` and raises :class:`Interrupted`, wherever in the run it arrives."""
        self.source: GameSource | None = None
        self.buffer: list[FinishedGames] = []
        if self.games >= self.total:
            return self._already_reached()
        self.t_start = time.perf_counter()
        self.cpu_at_start = time.process_time()
        with StopSignals(self._note) as self.signals:
            try:
                return self._run(make_source)
            except BaseException as e:
                if self.signals.signal is None and not isinstance(e, KeyboardInterrupt):
                    raise  # a bug or a person's mistake, not a stop
                saved = getattr(self, "final_path", None)
                where = f"; saved {saved}" if saved else ""
                self._log_line(f"stopped at {self.games} games{where}")
                raise Interrupted(f"stopped at {self.games:,} games ({self._phase_name()}){where}") from None

    def _run(self, make_source: SourceFactory) -> dict:
        if self.cfg.train.mode == "online":
            self.step = self._online_step()
        else:
            # Built before anything is written: a source that cannot start (no Ray cluster at
            # ray.address) leaves the run directory as it was.
            self.source = make_source(self)
            self.signals.take_back()
            self._restore_play()
            self.learner = self._learner()
            self.step = self._batched_step
        try:
            self._start()
            try:
                self._loop()
            finally:  # whatever stopped the loop, what it learned is kept
                self.bar.close()
                self.final_path = self.save("latest.pt")
                self.writer.flush()
        finally:
            if self.source is not None:
                self.source.close()
        if self.signals.signal is None:
            summary = self._finish(self.final_path)  # a stop here waits for the final evaluation
        if self.signals.signal is not None:
            raise KeyboardInterrupt
        return summary

    def _restore_play(self) -> None:
        """The games in flight and the positions not yet learned, where the checkpoint has them
        and this run's pool can take them (a local pool of the same size)."""
        saved = self.saved_play
        if self.source is not None and saved.get("pool"):
            try:
                self.source.resume_games(saved["pool"])
            except ValueError as e:
                print(f"note: {e}; the games in flight start afresh", file=sys.stderr)
        if saved.get("buffer"):
            b = saved["buffer"]
            self.buffer = [FinishedGames(np.asarray(b["boards"], np.int8), np.asarray(b["targets"], np.float32),
                                         np.empty(0, np.int64), np.empty(0, np.int64))]
        self.saved_play = {}

    def _learner(self) -> Learner:
        T, O = self.active.train, self.active.optim
        return Learner(self.net, self.opt, T.loss, self.device, fast_cpu=T.fast_cpu,
                       new_inputs=(O.new_inputs_from, O.new_inputs_lr_scale) if O.new_inputs_from else None)

    def _phase_name(self) -> str:
        if not self.cfg.phases:
            return "run"
        return f"phase {self.phase + 1}/{len(self.cfg.phases)} {self.cfg.phases[self.phase].name}".rstrip()

    def _note(self, text: str) -> None:
        bar = getattr(self, "bar", None)
        (bar.write if bar is not None else print)(text)

    def _log_line(self, text: str) -> None:
        import logging

        logging.getLogger("bgnet.train").info(text)

    def _start(self) -> None:
        """The run directory's config, checkpoints folder, TensorBoard writer and progress bar."""
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        self.ckpt = Checkpoints(self.run_dir, self.cfg.train.keep_checkpoints)
        (self.run_dir / "config.yaml").write_text(self.config_yaml())
        self.writer = SummaryWriter(str(self.run_dir / "tb"))
        self.games_at_start = self.games_first = self.games
        self.t_first: float | None = None  # first games in: the rate is measured from there
        self.stats = _Stats()
        self.lr = learning_rate(self.active.optim, self.games, self.active.train.games)
        self.bar = tqdm(total=self.total, initial=min(self.games, self.total), unit="game",
                        disable=not self.progress, dynamic_ncols=True, desc=self._bar_name(),
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} games "
                                   "[{elapsed}{postfix}]")
        self._log_line(f"training {self.run_dir} from {self.games} games, {self._phase_name()}")
        if self.cfg.phases:
            self.writer.add_scalar("train/phase", self.phase + 1, self.games)

    def _bar_name(self) -> str:
        name = self._phase_name() if self.cfg.phases else "self-play"
        return name + (" (ray)" if self.cfg.distributed == "ray" else "")

    def _already_reached(self) -> dict:
        print(f"bgnet train: warning: train.games={self.total} is already reached: {self.cfg.resume} "
              f"holds {self.games} games, so there is nothing to train and nothing was written. "
              f"Raise train.games above {self.games} to train on.", file=sys.stderr)
        return {"games": self.games, "checkpoint": str(self.cfg.resume), "already_reached": True,
                "games_at_start": self.games, "weights_version": self.version}

    def _loop(self) -> None:
        T, E = self.cfg.train, self.cfg.eval
        last_ckpt = self.games - self.games % T.checkpoint_every
        every = eval_every(self.cfg)
        last_eval = self.games - (self.games % every if every else 0)
        last_log = self.games
        early = 0 < E.first < (every or self.total) and self.games < E.first  # the first, short one
        while self.games < self.total and self.signals.signal is None:
            A = self.active
            self.lr = learning_rate(A.optim, self.games, A.train.games)
            results, lengths, losses = self.step(self.lr)
            self.stats.losses.extend(losses)
            if not len(results):
                continue
            self.stats.add_games(results, lengths)
            self.games += len(results)
            if self.t_first is None:  # the rate counts the games after the first ones
                self.t_first, self.games_first = time.perf_counter(), self.games
            self._postfix()
            if self.games > self.bar.total:  # the last batch may finish a few games more:
                self.bar.total = self.games  # tqdm would show '0%| N/?' past its total
            self.bar.update(len(results))
            if self.games - last_log >= T.log_every or self.games >= self.total:
                self._log()
                last_log = self.games
            if self.games >= A.train.games and self.games < self.total:
                self._next_phase()
            if self.games - last_ckpt >= T.checkpoint_every:
                self.save("latest.pt")
                self.save("", numbered=True)
                self.ckpt.prune()
                last_ckpt = self.games - self.games % T.checkpoint_every
            if every and self.games - last_eval >= every and self.games < self.total:
                previous = self.ckpt.previous(self.games) if E.previous else None
                self._evaluate(E.games, previous)
                last_eval = self.games - self.games % every
                early = False
            elif early and self.games >= E.first and self.games < self.total:
                # A short evaluation early on, so that the curve starts long before the first
                # periodic one (eval.first, eval.first_games).
                self._evaluate(E.first_games, None)
                early = False

    def _evaluate(self, games: int, previous: str | None) -> None:
        """An evaluation of ``games`` games against each opponent, recorded and shown."""
        E = self.cfg.eval
        res = evaluate_against(self.net, self.device, E.opponents, games, seed=self.cfg.seed + 1,
                               previous=previous)
        if E.error_rate:
            res["error_rate"] = error_rates(self.net, self.device)
        self._record(res)
        _log_eval(self.writer, res, self.games, self.bar, self.spent())

    def _record(self, res: dict, final: bool = False) -> None:
        """An evaluation's results in the run's history (see ``self.history``)."""
        entry = {"games": self.games, "core_hours": self.spent()["cpu_seconds"] / 3600,
                 "phase": self._phase_name(), "eval": plain(res)}
        if final:
            entry["final"] = True
        self.history.append(entry)

    def _next_phase(self) -> None:
        """Enter the phase the games played now belong to: its settings for the source, the
        learner and the rate schedule; the net, the optimizer's state and the games in flight
        go on."""
        self.phase = phase_index(self.cfg, self.games)
        self.active = in_phase(self.cfg, self.phase)
        assert self.source is not None
        self.source.configure(self.active.train, self.games)
        self.learner = self._learner()
        for group in self.opt.param_groups:
            group["weight_decay"] = self.active.optim.weight_decay
        self.writer.add_scalar("train/phase", self.phase + 1, self.games)
        self.history.append({"games": self.games, "core_hours": self.spent()["cpu_seconds"] / 3600,
                             "phase": self._phase_name(), "begins": True})
        self.bar.set_description_str(self._bar_name())
        self.bar.write(f"[{self.games} games] {self._phase_name()} begins")
        self._log_line(f"{self.games} games: {self._phase_name()} begins")

    def _batched_step(self, lr: float):
        """Games from the source; a round of learning once the buffer is full."""
        T = self.active.train
        assert self.source is not None, "batched training draws its games from a source"
        fin = self.source.next_games(self.total - self.games)
        if len(fin.results):
            self.buffer.append(race_positions(fin) if T.learn == "race" else fin)
        losses: list[float] = []
        if sum(len(b.boards) for b in self.buffer) >= T.buffer_positions:
            losses = learn_step(self.learner, concat_games(self.buffer), lr=lr, epochs=T.epochs,
                                batch_size=T.batch_size, rng=self.rng)
            self.buffer = []
            self.version += 1
            self.source.sync(self.net, self.version)
        return fin.results, fin.lengths, losses

    def _online_step(self):
        """One game of online TD(λ), learning after every move."""
        from bgnet.train.online import OnlineTD

        online = OnlineTD(self.net, self.cfg, self.rng, self.device)

        def step(lr: float):
            for g in self.opt.param_groups:
                g["lr"] = lr
            result, length, loss = online.play_game(lr)
            self.version += 1
            return np.array([result]), np.array([length]), [loss]

        return step

    def _rate(self) -> float:
        if self.t_first is None:
            return 0.0
        return (self.games - self.games_first) / max(time.perf_counter() - self.t_first, 1e-9)

    def _left(self, until: int, gps: float) -> str:
        """The time the games up to ``until`` take at ``gps`` games a second, as H:MM:SS."""
        measured = time.perf_counter() - self.t_first if self.t_first is not None else 0.0
        return time_left(until - self.games, gps, measured)

    def _log(self) -> None:
        gps = self._rate()
        spent = self.spent()
        self.stats.write(self.writer, self.games, lr=self.lr, games_per_second=gps,
                         weight_norm=weight_norm(self.net))
        self.writer.add_scalar("compute/core_hours", spent["cpu_seconds"] / 3600, self.games)
        self.writer.add_scalar("compute/wall_hours", spent["wall_seconds"] / 3600, self.games)
        extra: dict[str, float] = self.source.scalars() if self.source else {}
        for key, value in extra.items():
            self.writer.add_scalar(key, value, self.games)
        self.stats.reset()

    def _postfix(self) -> None:
        """The bar's one rate (games/s since the first games came in) and the time left, for
        the phase and the recipe; refreshed at most once a second."""
        now = time.perf_counter()
        if now - getattr(self, "_postfix_at", 0.0) < 1.0 and self.games < self.total:
            return
        self._postfix_at = now
        gps = self._rate()
        left = f"{self._left(self.total, gps)} left"
        if self.cfg.phases and len(self.cfg.phases) > 1:
            left = f"phase {self._left(min(self.active.train.games, self.total), gps)} left, recipe {left}"
        self.bar.set_postfix_str(f"{gps:,.0f} games/s, {left}", refresh=False)

    def _finish(self, final_path: Path) -> dict:
        E = self.cfg.eval
        spent = self.spent()
        summary = {"games": self.games, "checkpoint": str(final_path), "threads": self.threads,
                   "device": self.device, "seconds": round(time.perf_counter() - self.t_start, 1),
                   "distributed": self.cfg.distributed, "games_at_start": self.games_at_start,
                   "weights_version": self.version, "games_per_second": round(self._rate(), 1),
                   "seconds_to_first_result": (round(self.t_first - self.t_start, 1)
                                               if self.t_first is not None else None),
                   "cpu_seconds": round(spent["cpu_seconds"], 1),
                   "core_hours": round(spent["cpu_seconds"] / 3600, 3),
                   "wall_hours": round(spent["wall_seconds"] / 3600, 3)}
        if self.source is not None:
            summary.update(self.source.summary())
        if E.final_games and self.games >= self.total:
            res = evaluate_against(self.net, self.device, E.opponents, E.final_games, seed=self.cfg.seed + 2)
            if E.error_rate:
                res["error_rate"] = error_rates(self.net, self.device)
            self._record(res, final=True)
            _log_eval(self.writer, res, self.games, None, self.spent())
            summary["final_eval"] = res
            self.save("latest.pt", metrics=res)
            if not (self.ckpt.dir / self.ckpt.name(self.games)).exists():
                self.save("", metrics=res, numbered=True)
            print(_format_eval(res, self.games))
        self.writer.close()
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
        return summary


class _Stats:
    """Running statistics between two TensorBoard writes."""

    def __init__(self):
        self.reset()
        self.last_loss = math.nan

    def reset(self):
        self.results: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.losses: list[float] = []

    def add_games(self, results, lengths):
        self.results.append(np.asarray(results))
        self.lengths.append(np.asarray(lengths))

    def write(self, writer, games: int, **scalars):
        if self.results:
            r = np.abs(np.concatenate(self.results))
            writer.add_scalar("selfplay/game_length", float(np.concatenate(self.lengths).mean()), games)
            writer.add_scalar("selfplay/gammon_rate", float((r >= 2).mean()), games)
            writer.add_scalar("selfplay/backgammon_rate", float((r >= 3).mean()), games)
        if self.losses:
            self.last_loss = float(np.mean(self.losses))
            writer.add_scalar("train/loss", self.last_loss, games)
        for k, v in scalars.items():
            writer.add_scalar(f"train/{k}", v, games)


def _log_eval(writer, res: dict, games: int, bar, spent: dict | None = None) -> None:
    import logging

    rates = res.get("error_rate") or {}
    for key in ("er", "er_1ply"):
        if key in rates:
            writer.add_scalar(f"eval/{key}", rates[key], games)
    for opp, r in res.items():
        if "ppg" in r:
            writer.add_scalar(f"eval/ppg_vs_{opp}", r["ppg"], games)
            writer.add_scalar(f"eval/ppg_ci95_vs_{opp}", r["ppg_ci95"], games)  # bgnet plot's band
            writer.add_scalar(f"eval/win_rate_vs_{opp}", r["win_rate"], games)
    if spent is not None:
        writer.add_scalar("compute/core_hours", spent["cpu_seconds"] / 3600, games)
        # The same curve against the compute spent: TensorBoard's step is these scalars' CPU seconds.
        for opp, r in res.items():
            if "ppg" in r:
                writer.add_scalar(f"eval_by_cpu_seconds/ppg_vs_{opp}", r["ppg"], int(spent["cpu_seconds"]))
    line = _format_eval(res, games)
    logging.getLogger("bgnet.train").info(line)
    if bar is not None:
        bar.write(line)


def _format_eval(res: dict, games: int) -> str:
    parts = []
    for opp, r in res.items():
        if "ppg" in r:
            parts.append(f"vs {opp}: {r['ppg']:+.3f} ± {r['ppg_ci95']:.3f} ppg, "
                         f"{100 * r['win_rate']:.1f}% wins ({r['games']} games)")
        elif opp == "error_rate":
            parts.append(f"error rate {r['er']:.2f} / {r['er_1ply']:.2f} (2-ply / 1-ply reference)")
        else:
            parts.append(f"vs {opp}: skipped ({r['skipped']})")
    return f"[{games} games] " + "; ".join(parts)
