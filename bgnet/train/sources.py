"""Where a run's games come from: a :class:`GameSource`.

The run loop (:mod:`bgnet.train.loop`) asks its source for finished games, learns from them with
:func:`bgnet.train.learn.learn_step`, and tells the source when the weights changed. Three sources
exist: :class:`LocalSource`, a :class:`~bgnet.train.selfplay.SelfPlayPool` in this process
playing with the very net being trained; :class:`bgnet.train.distributed.RaySource`, the same
pools on Ray actors; and :class:`bgnet.train.online.OnlineSource` (``train.mode=online``), whose
games come already learned. The two self-play sources take their settings as one
:class:`~bgnet.train.selfplay.SelfPlaySettings`, and a phase's settings whole when a recipe's
phase changes (:meth:`GameSource.configure`). Everything else (config, resume, learning, logs,
evaluations, checkpoints, summary) is the loop's, so every option means the same with any source.

A source hands out positions with their targets: λ-returns, each mixed with the position's 1-ply
value by the net that played it when ``train.search_target`` > 0
(:func:`bgnet.train.learn.with_search_targets`).
"""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch

from bgnet.train.config import RunConfig
from bgnet.train.learn import OnePly, searcher_for, with_search_targets
from bgnet.train.selfplay import FinishedGames, InProcessSource, SelfPlayPool, SelfPlaySettings

if TYPE_CHECKING:  # the run's state holds a source's checkpoint: it imports this module
    from bgnet.train.state import RunState


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

    def configure(self, settings: SelfPlaySettings, games: int) -> None:
        """A recipe's next phase begins at ``games``: play the games to come with ``settings``
        (λ, exploration, move filter, race starts, search targets)."""

    def cpu_seconds(self) -> float:
        """CPU seconds spent by self-play outside this process since the source started."""

    def scalars(self) -> dict[str, float]:
        """Extra TensorBoard scalars, written at each log point."""

    def summary(self) -> dict:
        """Extra entries of the run's summary."""

    def close(self) -> None:
        """Stop playing; the run is over."""


class LocalSource(InProcessSource):
    """Self-play in this process: a pool of ``settings.parallel_games`` games played by the net
    being trained itself (so :meth:`sync` has nothing to do), its dice drawn from ``rng``."""

    def __init__(self, net: torch.nn.Module, device: str, settings: SelfPlaySettings, rng: np.random.Generator):
        from bgnet.bots.torch_eval import NetEvaluator

        self.rng = rng
        self.net, self.device = net, device
        self.told_filter_off = False
        settings = self._on_device(settings)
        self.pool = SelfPlayPool(NetEvaluator(net, device), settings, rng)
        self.search_weight = settings.search_target
        self.searcher = self._searcher(settings)

    def _on_device(self, settings: SelfPlaySettings) -> SelfPlaySettings:
        """The move filter runs in the compiled CPU pass: on a GPU every move is valued (the
        filter saves CPU time and changes under 1 % of choices), so a recipe runs unchanged."""
        if not settings.move_filter or str(self.device) == "cpu":
            return settings
        if not self.told_filter_off:
            print(f"note: train.move_filter is a CPU economy; on {self.device} self-play values "
                  "every move", file=sys.stderr)
            self.told_filter_off = True
        return dataclasses.replace(settings, move_filter=0)

    def _searcher(self, settings: SelfPlaySettings) -> OnePly | None:
        if not settings.search_target:
            return None
        return searcher_for(self.net, self.device, settings.bearoff, settings.move_filter)

    def configure(self, settings: SelfPlaySettings, games: int) -> None:
        settings = self._on_device(settings)
        self.pool.configure(settings)
        self.search_weight = settings.search_target
        self.searcher = self._searcher(settings)

    def games_in_flight(self) -> dict:
        return self.pool.state()

    def resume_games(self, state: dict) -> None:
        self.pool.restore(state)

    def next_games(self, wanted: int) -> FinishedGames:
        return with_search_targets(self.pool.step(), self.searcher, self.search_weight)

    def sync(self, net: torch.nn.Module, version: int) -> None:
        pass  # the pool's evaluator reads the trained weights in place

    def state(self) -> dict:
        return {"selfplay": self.rng.bit_generator.state}


def source_for(run: RunConfig, state: RunState, rate: Callable[[int], float],
               log_dir: Path | None = None) -> GameSource:
    """The game source of ``run`` (the config of the phase the run is in) for the run ``state``:
    with ``train.mode=online`` a :class:`bgnet.train.online.OnlineSource` learning at ``rate``;
    else what ``run.distributed`` names: a :class:`LocalSource` playing with the net and the
    self-play dice of ``state``, or (``ray``) a :class:`bgnet.train.distributed.RaySource` whose
    workers start at the state's weights version and seed their dice from the games played, and
    which keeps Ray's logs in ``log_dir`` (the run's folder)."""
    if run.train.mode == "online":
        from bgnet.train.online import OnlineSource

        return OnlineSource(state.net, state.opt, run, state.rng, state.device, state.games, rate)
    if run.distributed == "ray":
        from bgnet.train.distributed import RaySource

        return RaySource(run, state.net, state.version, state.games, log_dir)
    return LocalSource(state.net, state.device, SelfPlaySettings.of(run.train), state.selfplay_rng)
