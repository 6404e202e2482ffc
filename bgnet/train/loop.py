"""The training run, top to bottom: config, (resume), games, learning, logs, evaluations,
checkpoints, summary. One loop for every way of playing the games, each a
:class:`~bgnet.train.sources.GameSource`:

* ``train.mode=batched``: finished games come from a local self-play pool (``distributed=none``)
  or from Ray actors (``distributed=ray``); once ``train.buffer_positions`` positions are in,
  :func:`~bgnet.train.learn.learn_step` learns from them and the source is told the new weights.
* ``train.mode=online``: Tesauro's TD(λ), one game at a time, the weights updated after every move
  through eligibility traces (:class:`bgnet.train.online.OnlineSource`: its games come learned).
  It is the reference, and slow.

A run is its state (:class:`~bgnet.train.state.RunState`: what a checkpoint holds), its schedule
(:class:`~bgnet.train.schedule.Schedule`: the phase and the learning rate), its report
(:class:`~bgnet.train.report.Report`: the bar, TensorBoard, the log) and its game source.
:class:`Trainer` holds the first two until the source starts; a :class:`Sitting` then runs the
loop over all four, and at a recipe's phase change tells each of them in turn (the schedule, the
source, the learner, the state, the report) what the new phase is.

Every metric goes to TensorBoard under ``<run dir>/tb``; checkpoints go to
``<run dir>/checkpoints`` (``latest.pt`` every ``checkpoint_every`` games and at exit, plus
numbered copies), each with the config the run really trains with beside it (``config.yaml``,
also in the run directory and inside the checkpoint). A resumed run takes the net and the
optimizer's kind from its checkpoint (:mod:`bgnet.train.resume`).
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from bgnet.atomic import write_atomic
from bgnet.bots.net import NetBot
from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.train.config import RunConfig, eval_every, load_config
from bgnet.train.distill_phase import DistillPhase, due
from bgnet.train.learn import Learner, concat_games, learn_step, race_positions, set_threads, weight_norm
from bgnet.train.report import LOG, Report, format_eval, note
from bgnet.train.resume import Requested
from bgnet.train.schedule import Schedule
from bgnet.train.selfplay import FinishedGames, SelfPlaySettings
from bgnet.train.sources import GameSource, source_for
from bgnet.train.state import Clock, RunState, plain

SourceFactory = Callable[["Trainer"], GameSource]
LATEST = "latest.pt"


def train(cfg: DictConfig | RunConfig, run_dir: str | os.PathLike, progress: bool | None = None,
          overrides: Iterable[str] | None = None, source: SourceFactory | None = None) -> dict:
    """Run the training described by ``cfg``; write everything under ``run_dir``. Returns the
    final evaluation (and a few totals) as a dict.

    ``overrides``: the command line's Hydra overrides, which tell a resumed run which keys a
    person asked for (:mod:`bgnet.train.resume`); None counts every key as asked for.
    ``source``: builds the run's game source from the trainer (default: by ``train.mode`` and
    ``distributed``, :func:`default_source`).
    """
    run = load_config(cfg)
    threads = set_threads(run.train.threads)
    state = RunState.begin(run, Requested(overrides))
    if state.games >= state.cfg.train.games and not due(state.cfg, state.games, state.distilled):
        return already_reached(state)
    shown = state.cfg.progress if progress is None else bool(progress)
    return Trainer(state, Path(run_dir), shown, threads).run(source or default_source)


def default_source(trainer: Trainer) -> GameSource:
    """Online TD(λ) with ``train.mode=online``; else self-play in this process, or on Ray actors
    with ``distributed=ray``."""
    return source_for(trainer.schedule.active, trainer.state, trainer.schedule.rate, log_dir=trainer.run_dir)


def already_reached(state: RunState) -> dict:
    print(f"bgnet train: warning: train.games={state.cfg.train.games} is already reached: {state.cfg.resume} "
          f"holds {state.games} games, so there is nothing to train and nothing was written. "
          f"Raise train.games above {state.games} to train on.", file=sys.stderr)
    return {"games": state.games, "checkpoint": str(state.cfg.resume), "already_reached": True,
            "games_at_start": state.games, "weights_version": state.version}


def config_yaml(cfg: RunConfig) -> str:
    return OmegaConf.to_yaml(OmegaConf.create(cfg.to_dict()))


def learner_for(active: RunConfig, state: RunState) -> Learner:
    """The learner of the phase whose config is ``active``."""
    T, O = active.train, active.optim
    return Learner(state.net, state.opt, T.loss, state.device, fast_cpu=T.fast_cpu,
                   new_inputs=(O.new_inputs_from, O.new_inputs_lr_scale) if O.new_inputs_from else None)


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
        self.dir = run_dir / "checkpoints"  # made by the first save
        self.keep = keep
        self.saved: list[tuple[int, str]] = []  # numbered checkpoints of this run: (games, path)
        self.latest: Path | None = None  # latest.pt, once this sitting has written it

    def save(self, name: str, payload: dict, config_yaml: str) -> Path:
        path = save_checkpoint(self.dir / name, payload)
        (self.dir / "config.yaml").write_text(config_yaml)
        if name == LATEST:
            self.latest = path
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


class Trainer:
    """A run ready to train: its state, its schedule, the clock of its compute and its
    checkpoints. :meth:`run` starts its game source (built from the trainer, see
    :data:`SourceFactory`) and trains a :class:`Sitting` with it."""

    def __init__(self, state: RunState, run_dir: Path, progress: bool, threads: int):
        self.state = state
        self.run_dir = run_dir
        self.progress = progress
        self.threads = threads
        self.schedule = Schedule(state.cfg, state.games)
        self.clock = Clock(state.compute)
        self.checkpoints = Checkpoints(run_dir, state.cfg.train.keep_checkpoints)
        self.signals = StopSignals(note)

    def run(self, make_source: SourceFactory) -> dict:
        """Train to ``train.games``; returns the summary. A stop signal (Ctrl-C, SIGTERM) saves
        ``latest.pt`` and raises :class:`Interrupted`, wherever in the run it arrives."""
        with self.signals:
            try:
                return self._sit(make_source)
            except BaseException as e:
                if self.signals.signal is None and not isinstance(e, KeyboardInterrupt):
                    raise  # a bug or a person's mistake, not a stop
                saved = self.checkpoints.latest
                where = f"; saved {saved}" if saved else ""
                LOG.info(f"stopped at {self.state.games} games{where}")
                raise Interrupted(f"stopped at {self.state.games:,} games ({self.schedule.name()}){where}") from None

    def _sit(self, make_source: SourceFactory) -> dict:
        # Built before anything is written: a source that cannot start (no Ray cluster at
        # ray.address) leaves the run directory as it was.
        source = make_source(self)
        try:
            self.signals.take_back()
            resumed = self.state.take_games_in_flight()
            if resumed:
                try:  # a local pool of the same size goes on with them
                    source.resume_games(resumed)
                except ValueError as e:
                    print(f"note: {e}; the games in flight start afresh", file=sys.stderr)
            sitting = Sitting(self, source)
            sitting.train()
        finally:
            source.close()
        summary = sitting.finish() if self.signals.signal is None else {}  # a stop here waits for it
        if self.signals.signal is not None:
            raise KeyboardInterrupt
        return summary


class Sitting:
    """One sitting of a run, from the games its state holds to ``train.games`` or a stop: the
    trainer's parts, the game ``source``, the report and the learner of the phase in force."""

    def __init__(self, trainer: Trainer, source: GameSource):
        self.state, self.schedule, self.clock = trainer.state, trainer.schedule, trainer.clock
        self.checkpoints, self.signals, self.threads = trainer.checkpoints, trainer.signals, trainer.threads
        self.run_dir, self.progress = trainer.run_dir, trainer.progress
        self.cfg = self.state.cfg
        self.source = source
        self.learner = learner_for(self.schedule.active, self.state)
        self.lr = self.schedule.rate(self.state.games)
        self.games_at_start = self.state.games
        trainer.run_dir.mkdir(parents=True, exist_ok=True)
        (trainer.run_dir / "config.yaml").write_text(config_yaml(self.cfg))
        self.report = Report(trainer.run_dir, self.state.games, self.cfg.train.games, self.schedule.label(),
                             trainer.progress)
        self.report.begins(trainer.run_dir, self.state.games, self.schedule.name(),
                           self.schedule.phase if self.cfg.phases else None)

    def train(self) -> None:
        """The loop; whatever stops it, what it learned is kept (``latest.pt``)."""
        try:
            self._distill()  # a run resumed in a distill phase finishes it first
            self._loop()
            self._distill()  # a distill phase at the recipe's end
        finally:
            self.report.end_of_loop()
            self._save(LATEST)
            self.report.flush()

    def _loop(self) -> None:
        state, T, E = self.state, self.cfg.train, self.cfg.eval
        last_ckpt = state.games - state.games % T.checkpoint_every
        every = eval_every(self.cfg)
        last_eval = state.games - (state.games % every if every else 0)
        last_log = state.games
        early = 0 < E.first < (every or T.games) and state.games < E.first  # the first, short one
        while state.games < T.games and self.signals.signal is None:
            self.lr = self.schedule.rate(state.games)
            fin = self._step()
            if not len(fin.results):
                continue
            state.games += len(fin.results)
            phase_end = self.schedule.phase_end() if self.schedule.phases() > 1 else None
            self.report.games_in(fin.results, fin.lengths, state.games, T.games, phase_end)
            if state.games - last_log >= T.log_every or state.games >= T.games:
                self.report.scalars(state.games, self.lr, weight_norm(state.net), self._spent(),
                                    self.source.scalars())
                last_log = state.games
            if self.schedule.ends(state.games):
                self._next_phase()
            if state.games - last_ckpt >= T.checkpoint_every:
                self._save(LATEST)
                self._save(numbered=True)
                self.checkpoints.prune()
                last_ckpt = state.games - state.games % T.checkpoint_every
            if every and state.games - last_eval >= every and state.games < T.games:
                previous = self.checkpoints.previous(state.games) if E.previous else None
                self._evaluate(E.games, previous)
                last_eval = state.games - state.games % every
                early = False
            elif early and state.games >= E.first and state.games < T.games:
                # A short evaluation early on, so that the curve starts long before the first
                # periodic one (eval.first, eval.first_games).
                self._evaluate(E.first_games, None)
                early = False

    def _step(self) -> FinishedGames:
        """Games from the source; a round of learning once the buffer is full."""
        state, T = self.state, self.schedule.active.train
        fin = self.source.next_games(self.cfg.train.games - state.games)
        state.version += len(fin.learned)  # games learned from as they were played (online TD(λ))
        self.report.losses(fin.learned)
        if len(fin.boards):
            state.buffer.append(race_positions(fin) if T.learn == "race" else fin)
        if sum(len(b.boards) for b in state.buffer) >= T.buffer_positions:
            self.report.losses(learn_step(self.learner, concat_games(state.buffer), lr=self.lr, epochs=T.epochs,
                                          batch_size=T.batch_size, rng=state.rng))
            state.buffer = []
            state.version += 1
            self.source.sync(state.net, state.version)
        return fin

    def _next_phase(self) -> None:
        """Enter the phase the games played now belong to: its settings for the source, the
        learner and the rate schedule; the net, the optimizer's state and the games in flight
        go on (a Ray source's workers restart, and their games in flight are dropped)."""
        self._distill()
        games = self.state.games
        active = self.schedule.next_phase(games)
        self.source.configure(SelfPlaySettings.of(active.train), games)
        self.learner = learner_for(active, self.state)
        for group in self.state.opt.param_groups:
            group["weight_decay"] = active.optim.weight_decay
        self.state.record(self.schedule.name(), self._spent(), begins=True)
        self.report.phase_begins(games, self.schedule.phase, self.schedule.name(), self.schedule.label())

    def _distill(self) -> None:
        """Run the distill phases that the games played have reached and that are not done yet
        (:mod:`bgnet.train.distill_phase`); each one done is recorded and saved at once, and
        evaluated where the run has periodic evaluations and goes on past it."""
        state = self.state
        for i in due(self.cfg, state.games, state.distilled):
            if self.signals.signal is not None:
                return
            phase = self.cfg.phases[i]
            name = f"phase {i + 1}/{len(self.cfg.phases)} {phase.name}".rstrip()
            self.report.phase_begins(state.games, i, name, name + " (distill)")
            counted = self.clock.counting_children()  # the labelling's worker processes
            reached = DistillPhase(self.cfg, i, self.run_dir).run(
                state.net, state.games, say=self._says(name), stop=lambda: self.signals.signal is not None,
                progress=self.progress)
            counted()
            if reached is None:
                return
            state.distilled.append(i)
            state.version += 1
            self.source.sync(state.net, state.version)
            state.record(name, self._spent(), distilled=plain(reached))
            self._save(LATEST)
            if eval_every(self.cfg) and state.games < self.cfg.train.games:  # the phase's gain on the curve
                self._evaluate(self.cfg.eval.games, None)

    def _final_evaluation(self, net) -> dict:
        """``eval.final_games`` games of ``net`` against each opponent, and its error rate where
        the run measures one."""
        E, device = self.cfg.eval, self.state.device
        res = evaluate_against(net, device, E.opponents, E.final_games, seed=self.cfg.seed + 2)
        if E.error_rate:
            res["error_rate"] = error_rates(net, device)
        return res

    def _student(self) -> Path | None:
        """The net of the run's last student phase done (:mod:`bgnet.train.distill_phase`), if any."""
        done = [i for i in self.state.distilled if getattr(self.cfg.phases[i].distill, "student", None) is not None]
        return DistillPhase(self.cfg, max(done), self.run_dir).student_path if done else None

    def _says(self, phase: str) -> Callable[[str], None]:
        return lambda text: self.report.says(f"{phase}: {text}")

    def _evaluate(self, games: int, previous: str | None) -> None:
        """An evaluation of ``games`` games against each opponent, recorded and shown."""
        E, state = self.cfg.eval, self.state
        res = evaluate_against(state.net, state.device, E.opponents, games, seed=self.cfg.seed + 1,
                               previous=previous)
        if E.error_rate:
            res["error_rate"] = error_rates(state.net, state.device)
        state.record(self.schedule.name(), self._spent(), eval=plain(res))
        self.report.evaluation(res, state.games, self._spent())

    def _spent(self) -> dict:
        return self.clock.spent(self.source.cpu_seconds())

    def _save(self, name: str = LATEST, metrics: dict | None = None, numbered: bool = False) -> Path:
        state = self.state
        if state.history:  # the curve as plain JSON too, for bgnet plot and people
            write_atomic(self.run_dir / "history.json", json.dumps(state.history, indent=1).encode())
        payload = state.payload(self.source.state(), self.source.games_in_flight(), self.schedule.name(),
                                self._spent(), metrics)
        if numbered:
            return self.checkpoints.numbered(state.games, payload, config_yaml(self.cfg))
        return self.checkpoints.save(name, payload, config_yaml(self.cfg))

    def finish(self) -> dict:
        """The final evaluation where the run reached its end, and the summary (``summary.json``)."""
        state, E = self.state, self.cfg.eval
        spent = self._spent()
        t_first = self.report.t_first
        summary = {"games": state.games, "checkpoint": str(self.checkpoints.latest), "threads": self.threads,
                   "device": state.device, "seconds": round(self.clock.seconds(), 1),
                   "distributed": self.cfg.distributed, "games_at_start": self.games_at_start,
                   "weights_version": state.version, "games_per_second": round(self.report.rate(state.games), 1),
                   "seconds_to_first_result": (round(t_first - self.clock.t_start, 1)
                                               if t_first is not None else None),
                   "cpu_seconds": round(spent["cpu_seconds"], 1),
                   "core_hours": round(spent["cpu_seconds"] / 3600, 3),
                   "wall_hours": round(spent["wall_seconds"] / 3600, 3)}
        summary.update(self.source.summary())
        if E.final_games and state.games >= self.cfg.train.games:
            res = self._final_evaluation(state.net)
            state.record(self.schedule.name(), self._spent(), eval=plain(res), final=True)
            self.report.evaluation(res, state.games, self._spent(), shown=False)
            summary["final_eval"] = res
            lines = [format_eval(res, state.games)]
            student = self._student()
            if student is not None:  # the recipe's product: the fast net its last student phase made
                mine = self._final_evaluation(load_net(student, state.device)[0])
                state.record(self.schedule.name(), self._spent(), student=str(student), student_eval=plain(mine))
                summary.update(student=str(student), student_eval=mine)
                lines.append(f"the student {student}: {format_eval(mine, state.games)}")
                LOG.info(lines[-1])
            self._save(LATEST, metrics=res)
            if not (self.checkpoints.dir / self.checkpoints.name(state.games)).exists():
                self._save(metrics=res, numbered=True)
            print("\n".join(lines))
        self.report.close()
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
        return summary
