"""A recipe's distill phase: the run's net fitted to a teacher's search, between two spans of
self-play (expert iteration where the teacher is the run's own net).

A phase with a ``distill`` block (:class:`bgnet.train.config.DistillConfig`) plays no games. When
the run's games reach its ``until`` it

1. keeps the run's net as it is then in ``<run>/labels/<phase>/start.pt``, once: the teacher where
   ``distill.teacher`` is empty, and the net every fit of the phase starts from;
2. labels positions of the teacher's self-play with its ``ply``-ply values into that folder, in
   shards (:func:`bgnet.train.labels.label`);
3. fits the net to those labels and to those of the earlier distill phases named in
   ``distill.also`` (:func:`bgnet.train.distill.fit`, a tenth of the decisions held out), after
   which the run records the phase as done and saves a checkpoint.

A phase with a ``distill.student`` shape fits a fresh net of that shape instead and keeps it as
``<run>/<phase>.pt`` (a bot, like any checkpoint), leaving the run's own net as it was: how a
recipe ends in one fast net taught by its own slower, stronger one. Its ``shards`` may be 0 where
it fits only the labels of the phases named in ``also``, and ``start`` names an earlier student
of its shape to go on from instead of random weights. ``prune`` names an earlier student whose
net prunes the teacher's deeper plies (:class:`bgnet.bots.search.Pruning`): a 1-ply labelling
about three times cheaper.

A stop during the labelling resumes at the first shard not yet written; a stop during the fit
fits again from ``start.pt``; a phase recorded as done is never run again. The labelling runs in
the learner's process (``distill.workers`` processes there), also where self-play runs on Ray.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from bgnet.bots.load import PRUNE_OPTION
from bgnet.nn.checkpoint import load_checkpoint, save_checkpoint
from bgnet.train.config import DistillConfig, RunConfig
from bgnet.train.distill import Samples, fit, held_out_loss, split
from bgnet.train.labels import LabelSettings, label, load_labels
from bgnet.train.learn import build_net

START = "start.pt"


def due(cfg: RunConfig, games: int, done: list[int]) -> list[int]:
    """The distill phases that the run's ``games`` have reached and that are not ``done``, in order."""
    return [i for i, p in enumerate(cfg.phases) if p.distill is not None and p.until <= games and i not in done]


class DistillPhase:
    """Phase ``i`` of ``cfg`` (a distill phase) in the run folder ``run_dir``."""

    def __init__(self, cfg: RunConfig, i: int, run_dir: Path):
        settings = cfg.phases[i].distill
        assert settings is not None, f"phase {i} is not a distill phase"
        self.d: DistillConfig = settings
        self.seed = cfg.seed * 1000 + i  # each phase its own dice, the same ones when it is run again
        self.run_dir = Path(run_dir)
        self.folder = self.run_dir / "labels" / cfg.phases[i].name  # a file name, unique (config.py)
        self.start = self.folder / START
        self.student_path = self._student_file(cfg.phases[i].name)  # where a student phase keeps its net

    def _student_file(self, phase_name: str) -> Path:
        """Where the student phase ``phase_name`` of this run keeps its net."""
        return self.run_dir / f"{phase_name}.pt"

    def settings(self) -> LabelSettings:
        d = self.d
        teacher = d.teacher or str(self.start)
        if d.prune:  # an earlier student, cheap, ranks each roll's moves inside the teacher's search
            teacher += f"{PRUNE_OPTION}{self._student_file(d.prune)}"
        return LabelSettings(teacher=teacher, ply=d.ply, keep=d.keep, margin=d.margin,
                             explore=d.explore, per_shard=d.per_shard, seed=self.seed)

    def run(self, net, games: int, say: Callable[[str], None], stop: Callable[[], bool],
            progress: bool = False) -> dict | None:
        """Label, then fit ``net`` (in place); returns what the fit reached, or None where ``stop``
        ended the phase first (``net`` is then as it was at the phase's start)."""
        if not self.start.exists():  # the first sitting in this phase: the net of its start, kept
            save_checkpoint(self.start, {"net_config": net.config(), "net_state": net.state_dict(), "games": games})
        d = self.d
        if d.shards:
            say(f"labelling {d.shards} shards of {d.per_shard} decisions: {self.settings().describe()}, "
                f"into {self.folder}")
            label(self.folder, self.settings(), d.shards, workers=d.workers, progress=progress, stop=stop,
                  each=lambda k, n: say(f"labelling: shard {k}/{n} written"))
        if stop():
            return None
        own = [load_labels(self.folder, d.shards)] if d.shards else []
        samples = Samples.concat(own + [load_labels(self.folder.parent / name) for name in d.also])
        if d.student is not None:
            return self._fit_student(samples, say, stop)
        device, training = next(net.parameters()).device, net.training
        net.load_state_dict(load_checkpoint(self.start)["net_state"])  # a fit always starts there
        net.cpu()  # the fit's learner runs on the CPU
        try:
            reached = self._fit(net, samples, "the net", say, stop)
            if reached is None:
                net.load_state_dict(load_checkpoint(self.start)["net_state"])
            return reached
        finally:
            net.to(device)
            net.train(training)

    def _fit_student(self, samples: Samples, say: Callable[[str], None], stop: Callable[[], bool]) -> dict | None:
        """Fit a net of the phase's ``student`` shape (random weights seeded by the phase, or the
        earlier student ``start`` names) to ``samples`` and keep it as :attr:`student_path`; the
        run's own net is left as it is."""
        assert self.d.student is not None
        torch.manual_seed(self.seed)
        student = build_net(self.d.student)
        if self.d.start:  # goes on from an earlier student of its shape (the config checks the shape)
            student.load_state_dict(load_checkpoint(self._student_file(self.d.start))["net_state"])
        reached = self._fit(student, samples, f"the student ({self.d.start or 'random weights'})", say, stop)
        if reached is None:
            return None
        save_checkpoint(self.student_path, {"net_config": student.config(), "net_state": student.state_dict(),
                                            "games": 0})
        say(f"the student is {self.student_path} (a bot: bgnet eval {self.student_path} gnubg:0)")
        return dict(reached, student=str(self.student_path))

    def _fit(self, net, samples: Samples, what: str, say: Callable[[str], None],
             stop: Callable[[], bool]) -> dict | None:
        """``net`` fitted in place to ``samples``, a tenth of their decisions held out: what it
        reached, or None where ``stop`` ended the fit first."""
        d = self.d
        rng = np.random.default_rng(self.seed)
        train, held = split(samples, 0.1, rng)
        ranked = f", the order of candidates weighted {d.rank_weight:g}" if d.rank_weight else ""
        say(f"fitting {what} to {len(train)} samples of {train.decisions} decisions ({held.decisions} held "
            f"out), {d.epochs} passes{ranked}")
        if not fit(net, train, held, epochs=d.epochs, lr=d.lr, lr_final=d.lr_final, batch_size=d.batch_size,
                   rng=rng, log=lambda text: say(f"fitting: {text}"), stop=stop, rank_weight=d.rank_weight):
            return None
        return {"samples": len(samples), "decisions": samples.decisions, "held_out_loss": held_out_loss(net, held)}
