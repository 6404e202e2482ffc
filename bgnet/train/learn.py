"""The learning step of batched TD(λ), the same whichever source played the games.

A round of learning takes the finished games gathered since the last round (positions with their
targets) and makes ``train.epochs`` passes over them in shuffled minibatches of
``train.batch_size``. The targets are λ-returns, each mixed with the position's 1-ply value when
``train.search_target`` > 0: the source that played the games mixes them
(:func:`with_search_targets`), with the weights that played, so that the costly search runs
wherever self-play runs (every Ray worker at once) rather than in the learner alone.
:func:`learn_step` is that round; the run loop (:mod:`bgnet.train.loop`) calls it for local and
Ray self-play alike. The minibatch order comes from the learner's own generator, never from the
dice, so the same games give the same step wherever they were played.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Protocol

import numpy as np
import torch

from bgnet.bots.net import NetBot
from bgnet.nn.encode import encode, race_mask
from bgnet.nn.model import SplitValueNet, ValueNet, conditional_loss, dense_layers, probability_loss
from bgnet.train.config import ConfigError, ModelConfig, OptimConfig
from bgnet.train.selfplay import FinishedGames


def set_threads(n: int) -> int:
    """Use ``n`` threads for torch and numba (0 = every core); returns the number used."""
    import numba

    n = n or os.cpu_count() or 1
    torch.set_num_threads(n)
    # numba's config module sets its NUMBA_* values at import time through globals(), which
    # numba's type information does not declare.
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    return n


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def build_net(model: ModelConfig) -> ValueNet | SplitValueNet:
    hidden = list(model.hidden)
    if model.split:
        race = list(model.race_hidden) if model.race_hidden is not None else hidden
        return SplitValueNet(model.encoding, hidden, model.activation, race_hidden=race,
                             race_activation=model.race_activation)
    return ValueNet(model.encoding, hidden, model.activation)


def build_optimizer(net: torch.nn.Module, optim: OptimConfig) -> torch.optim.Optimizer:
    if optim.name == "adam":
        return torch.optim.Adam(net.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)
    return torch.optim.SGD(net.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)


def learning_rate(optim: OptimConfig, games: int, total: int) -> float:
    """``lr`` until ``decay_start`` games, then linear decay to ``lr_final`` at ``total`` games
    (constant without ``lr_final``). Games count from zero, so a stage that resumes a run can
    anneal over its own games by starting the decay where it starts.

    >>> from bgnet.train.config import OptimConfig
    >>> stage = OptimConfig(lr=3e-5, lr_final=1e-5, decay_start=7_000_000)
    >>> [round(learning_rate(stage, g, 8_000_000) * 1e5, 3) for g in (6_000_000, 7_500_000, 9_000_000)]
    [3.0, 2.0, 1.0]
    """
    if optim.lr_final is None or games <= optim.decay_start:
        return float(optim.lr)
    frac = min(1.0, (games - optim.decay_start) / max(1, total - optim.decay_start))
    return float(optim.lr + (optim.lr_final - optim.lr) * frac)


class OnePly(Protocol):
    """A 1-ply search of search targets: :class:`bgnet.bots.net.NetBot` or, with the move
    filter, :class:`bgnet.train.move_filter.FilteredOnePly`."""

    def evaluate(self, boards: np.ndarray, ply: int = ...) -> np.ndarray:
        """Probabilities for the side on roll of each of ``boards``, at ``ply``."""


def search_targets(bot: OnePly, boards: np.ndarray, returns: np.ndarray, weight: float) -> np.ndarray:
    """Mix each position's λ-return with its 1-ply value: the 21 rolls averaged, the side on roll
    playing its best move, judged by the net being trained.

    A 1-ply value looks one roll further than the net itself, so it is a better estimate than the
    net's own and a target the net can learn from (the net learns to play as its 1-ply search
    does); the λ-return keeps the target tied to real outcomes. ``weight`` 0 gives the λ-returns,
    1 the 1-ply values alone. It costs one 1-ply evaluation (about 400 afterstates) per position.
    """
    if not weight:
        return returns
    # In slices: a position's 1-ply looks at some 400 afterstates, each encoded before its call.
    ply1 = np.concatenate([bot.evaluate(boards[lo:lo + SEARCH_SLICE], ply=1)
                           for lo in range(0, len(boards), SEARCH_SLICE)])
    return ((1.0 - weight) * returns + weight * ply1).astype(np.float32)


SEARCH_SLICE = 512  # positions per 1-ply call of search_targets


def with_search_targets(games: FinishedGames, searcher: OnePly | None, weight: float) -> FinishedGames:
    """``games`` with every target mixed with its position's 1-ply value by ``searcher``
    (:func:`search_targets`; ``weight`` 0 returns ``games`` as they are)."""
    if not weight or not len(games.boards):
        return games
    if searcher is None:
        raise ValueError("search targets need a searcher (a 1-ply search over the playing net)")
    return dataclasses.replace(games, targets=search_targets(searcher, games.boards, games.targets, weight))


def weight_norm(net: torch.nn.Module) -> float:
    # A zero tensor to start the sum from (a 0-dim CPU tensor adds to a tensor on any device).
    return float(torch.sqrt(sum(((p.detach() ** 2).sum() for p in net.parameters()), torch.zeros(()))))


class Learner:
    """One minibatch update on (positions, target probabilities).

    ``fast_cpu``: on the CPU with the mse loss, run the update in compiled code
    (:class:`bgnet.nn.fast.FastLearner`: the same step, in place, and the optimizer's state kept
    in torch's format) when the net and optimizer allow it; ``self.fast`` is None otherwise.

    ``new_inputs``: ``(first, scale)``: the first-layer weights of inputs ``first`` onwards (of
    each net of a split net) move ``scale`` times as far as the optimizer stepped them. Inputs
    that a grown net has just been given (their weights at zero) then learn at a higher rate than
    the rest of a net that is already trained; for Adam and SGD this is exactly a learning rate
    ``scale`` times the group's on those weights.
    """

    def __init__(self, net, optimizer, loss: str, device: str, fast_cpu: bool = False,
                 new_inputs: tuple[int, float] | None = None):
        self.net, self.opt, self.loss, self.device = net, optimizer, loss, device
        self.split = isinstance(net, SplitValueNet)
        self.boosted: list[torch.Tensor] = []
        self.first, self.scale = new_inputs if new_inputs else (0, 1.0)
        if new_inputs and self.scale != 1.0:
            if not 0 < self.first < net.num_inputs:
                raise ConfigError(f"config key 'optim.new_inputs_from' must name one of the net's "
                                  f"inputs 1..{net.num_inputs - 1} (0: none); got {self.first}")
            subnets = (net.contact, net.race) if self.split else (net,)
            self.boosted = [dense_layers(sub)[0].weight for sub in subnets]
        self.fast = None
        if fast_cpu and str(device) == "cpu":
            from bgnet.nn.fast import FastLearner, learner_unsupported

            if learner_unsupported(net, optimizer, loss) is None:
                self.fast = FastLearner(net, optimizer)

    def update(self, boards: np.ndarray, targets: np.ndarray) -> float:
        """One minibatch step; returns the loss before it."""
        if not self.boosted:
            return self._step(boards, targets)
        before = [w.detach()[:, self.first:].clone() for w in self.boosted]
        loss = self._step(boards, targets)
        with torch.no_grad():  # in place: the compiled learner reads these tensors' memory
            for w, old in zip(self.boosted, before):
                w[:, self.first:].sub_(old).mul_(self.scale).add_(old)
        return loss

    def inputs(self, boards: np.ndarray) -> tuple:
        """The net's arguments for ``boards``: the encoded positions, and for a split net which are races."""
        x = torch.from_numpy(encode(boards, self.net.encoding)).to(self.device)
        return (x, torch.from_numpy(race_mask(boards)).to(self.device)) if self.split else (x,)

    def _step(self, boards: np.ndarray, targets: np.ndarray) -> float:
        if self.fast is not None:
            return self.fast.update(boards, targets)
        y = torch.from_numpy(targets).to(self.device)
        args = self.inputs(boards)
        if self.loss == "bce":
            loss = conditional_loss(self.net.forward_logits(*args), y)
        else:
            loss = probability_loss(self.net(*args), y, "mse")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return float(loss.detach())


def searcher_for(net: torch.nn.Module, device: str, bearoff: bool, move_filter: int = 0) -> OnePly:
    """The 1-ply search that computes search targets over ``net`` (the net a source plays with);
    it values bear-off positions as self-play does (``bearoff``), so that its targets agree with
    the λ-returns they are mixed with, and with ``move_filter`` above 0 each roll's reply is the
    best of the moves the filter keeps, as in self-play
    (:class:`bgnet.train.move_filter.FilteredOnePly`)."""
    from bgnet.bots.torch_eval import NetEvaluator

    ev = NetEvaluator(net, device)
    ev.bearoff = bool(bearoff)
    if move_filter:
        from bgnet.train.move_filter import FilteredOnePly

        return FilteredOnePly(ev, move_filter)
    return NetBot(ev, ply=1)


def learn_step(learner: Learner, games: FinishedGames, *, lr: float, epochs: int, batch_size: int,
               rng: np.random.Generator) -> list[float]:
    """One round of learning on ``games`` at learning rate ``lr``; returns the minibatch losses.
    The net is left in eval mode, ready to play."""
    net = learner.net
    boards, targets = games.boards, games.targets
    net.train()
    for g in learner.opt.param_groups:
        g["lr"] = lr
    losses = []
    for _ in range(epochs):
        perm = rng.permutation(len(boards))
        for lo in range(0, len(boards), batch_size):
            sel = perm[lo:lo + batch_size]
            losses.append(learner.update(boards[sel], targets[sel]))
    net.eval()
    return losses


def race_positions(games: FinishedGames) -> FinishedGames:
    """``games`` with only their race positions kept for learning (results and lengths whole):
    a split net learning from them moves its race half alone, since a sub-net that gets no row
    of a minibatch gets no gradient and the optimizer leaves it as it is."""
    keep = race_mask(games.boards)
    return FinishedGames(games.boards[keep], games.targets[keep], games.results, games.lengths)


def concat_games(parts: list[FinishedGames]) -> FinishedGames:
    """One FinishedGames holding all of ``parts`` in order."""
    if not parts:
        return FinishedGames(np.empty((0, 2, 25), np.int8), np.empty((0, 5), np.float32),
                             np.empty(0, np.int64), np.empty(0, np.int64))
    if len(parts) == 1:
        return parts[0]
    return FinishedGames(*(np.concatenate([getattr(p, f) for p in parts])
                           for f in ("boards", "targets", "results", "lengths")))
