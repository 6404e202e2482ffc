"""Where a batched run's games come from: a :class:`GameSource`.

The run loop (:mod:`bgnet.train.loop`) asks its source for finished games, learns from them with
:func:`bgnet.train.learn.learn_step`, and tells the source when the weights changed. Two sources
exist: :class:`LocalSource`, a :class:`~bgnet.train.selfplay.SelfPlayPool` in this process
playing with the very net being trained, and :class:`bgnet.train.distributed.RaySource`, the same
pools on Ray actors. Everything else (config, resume, learning, logs, evaluations, checkpoints,
summary) is the loop's, so every option means the same with either source.

A source hands out positions with their targets: λ-returns, each mixed with the position's 1-ply
value by the net that played it when ``train.search_target`` > 0
(:func:`bgnet.train.learn.with_search_targets`).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from bgnet.nn.model import SplitValueNet, ValueNet
from bgnet.train.config import RunConfig, TrainConfig
from bgnet.train.learn import searcher_for, with_search_targets
from bgnet.train.selfplay import FinishedGames, SelfPlayPool


class GameSource(Protocol):
    """A supply of finished self-play games for one run."""

    def next_games(self, wanted: int) -> FinishedGames:
        """The games that finished since the last call (possibly none); ``wanted`` is how many
        the run still needs, so that a source does not start games nobody will learn from."""

    def sync(self, net: torch.nn.Module, version: int) -> None:
        """The net's weights changed (``version`` counts the learning rounds): play with them."""

    def state(self) -> dict:
        """What a checkpoint keeps so that a resumed run goes on with the same dice (plain types)."""

    def games_in_flight(self) -> dict:
        """The games being played, as arrays, for a checkpoint (empty where they cannot be kept)."""

    def resume_games(self, state: dict) -> None:
        """Go on with the games of :meth:`games_in_flight` (ValueError if they do not fit)."""

    def configure(self, train: TrainConfig, games: int) -> None:
        """A recipe's next phase begins at ``games``: play the games to come with ``train``'s
        settings (λ, exploration, move filter, search targets)."""

    def cpu_seconds(self) -> float:
        """CPU seconds spent by self-play outside this process since the source started."""

    def scalars(self) -> dict[str, float]:
        """Extra TensorBoard scalars, written at each log point."""

    def summary(self) -> dict:
        """Extra entries of the run's summary."""

    def close(self) -> None:
        """Stop playing; the run is over."""


class LocalSource:
    """Self-play in this process: a pool of ``train.parallel_games`` games played by the net being
    trained itself (so :meth:`sync` has nothing to do), its dice drawn from ``rng``."""

    def __init__(self, net: torch.nn.Module, device: str, train: TrainConfig, rng: np.random.Generator):
        from bgnet.bots.torch_eval import NetEvaluator

        self.rng = rng
        self.net, self.device = net, device
        self.pool = SelfPlayPool(NetEvaluator(net, device), train.parallel_games, rng, lam=train.lam,
                                 max_plies=train.max_plies, epsilon=train.epsilon, bearoff=train.bearoff,
                                 move_filter=self._filter(train), explore_top=train.explore_top,
                                 race_starts=train.race_starts)
        self._search(train)

    def _filter(self, train: TrainConfig) -> int:
        """The move filter runs in the compiled CPU pass: on a GPU every move is valued (the
        filter saves CPU time and changes under 1 % of choices), so a recipe runs unchanged."""
        if train.move_filter and str(self.device) != "cpu":
            if not getattr(self, "noted", False):
                print(f"note: train.move_filter is a CPU economy; on {self.device} self-play values "
                      "every move", file=sys.stderr)
                self.noted = True
            return 0
        return train.move_filter

    def _search(self, train: TrainConfig) -> None:
        self.search_weight = train.search_target
        self.searcher = (searcher_for(self.net, self.device, train.bearoff, self._filter(train))
                         if train.search_target else None)

    def configure(self, train: TrainConfig, games: int) -> None:
        self.pool.configure(train.lam, train.epsilon, train.explore_top, self._filter(train),
                            train.race_starts)
        self._search(train)

    def games_in_flight(self) -> dict:
        return self.pool.state()

    def resume_games(self, state: dict) -> None:
        self.pool.restore(state)

    def cpu_seconds(self) -> float:
        return 0.0  # self-play runs in this process: its CPU time is the process's

    def next_games(self, wanted: int) -> FinishedGames:
        return with_search_targets(self.pool.step(), self.searcher, self.search_weight)

    def sync(self, net: torch.nn.Module, version: int) -> None:
        pass  # the pool's evaluator reads the trained weights in place

    def state(self) -> dict:
        return {"selfplay": self.rng.bit_generator.state}

    def scalars(self) -> dict[str, float]:
        return {}

    def summary(self) -> dict:
        return {}

    def close(self) -> None:
        pass


def source_for(run: RunConfig, net: ValueNet | SplitValueNet, device: str, version: int, games: int,
               rng: np.random.Generator, log_dir: Path | None = None) -> GameSource:
    """The game source ``run.distributed`` names: a :class:`LocalSource` playing with ``net``
    and the dice of ``rng``, or (``ray``) a :class:`bgnet.train.distributed.RaySource` whose
    workers start at weights ``version`` and seed their dice from the ``games`` played, and
    which keeps Ray's logs in ``log_dir`` (the run's folder)."""
    if run.distributed == "ray":
        from bgnet.train.distributed import RaySource

        return RaySource(run, net, version, games, log_dir)
    return LocalSource(net, device, run.train, rng)
