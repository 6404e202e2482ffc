"""Teach a net to choose at 0-ply as its own 1-ply search does (``bgnet distill``).

TD(λ) self-play trains only the afterstates the net chooses: a 0-ply error is a wrong order
among a position's best moves, and the net never learns about the moves it did not play. Here
every close candidate of a decision is valued by the net's 1-ply search (the opponent's 21 rolls,
each answered by its best reply at 0-ply, averaged) and the net is fitted to those values:

1. decisions (a position and a roll) come from self-play of the net at 0-ply;
2. a contact decision with two or more candidates (the 0-ply best ``keep`` within ``margin``
   equity of the best, the filter of the bot's own search) gives one sample per candidate: the
   afterstate as a position with the opponent on roll, and its 1-ply probabilities;
3. the net is fitted to the samples (fresh Adam, ``epochs`` passes), a held-out tenth of the
   decisions telling how often the net's 0-ply choice among the candidates is the 1-ply one.

The 1-ply values come from a fixed copy of the net (the teacher), so a round of distillation
moves the net toward a target that does not move with it. Decisions are drawn in ``workers``
processes; the samples can be kept in an ``.npz`` file and fitted again without redrawing.
"""
from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgnet.bots.search import MARGIN
from bgnet.engine.board import game_results, race_mask, start_position
from bgnet.engine.movegen import generate_batch


@dataclass
class Samples:
    """Training samples of distillation, grouped by decision."""
    boards: np.ndarray  # int8[S, 2, 25]: a candidate afterstate as a position, opponent on roll
    targets: np.ndarray  # float32[S, 5]: its 1-ply probabilities, for the side on roll
    decision: np.ndarray  # int64[S]: which decision the sample is a candidate of (0, 1, ...)

    def __len__(self) -> int:
        return len(self.boards)

    @property
    def decisions(self) -> int:
        """How many decisions the samples come from."""
        return len(np.unique(self.decision))

    def save(self, path: str | Path) -> None:
        np.savez(path, boards=self.boards, targets=self.targets, decision=self.decision)

    @classmethod
    def load(cls, path: str | Path) -> Samples:
        with np.load(path, allow_pickle=False) as f:  # plain arrays only: nothing to run
            return cls(f["boards"].astype(np.int8), f["targets"].astype(np.float32),
                       f["decision"].astype(np.int64))

    @classmethod
    def concat(cls, parts: list[Samples]) -> Samples:
        shift, decision = 0, []
        for p in parts:
            decision.append(p.decision + shift)
            shift += int(p.decision.max()) + 1 if len(p) else 0
        return cls(np.concatenate([p.boards for p in parts]), np.concatenate([p.targets for p in parts]),
                   np.concatenate(decision))


def self_play_decisions(bot, n: int, rng: np.random.Generator, games: int | None = None,
                        explore: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` contact decisions (positions on roll, dice) met by ``bot`` playing itself (a net bot
    at its own depth), drawn evenly from whole games: ``games`` games at once (by default about one
    for every 40 decisions wanted, at most 256) are played from the opening to their end, again
    until ``n`` decisions are met, and ``n`` of them are drawn at random. Stopping as soon as ``n``
    were met would keep only the first turns of each game, never its late middle game or a crashed
    board. With ``explore`` > 0 each move is, with that chance, a legal move drawn at random
    instead: the games then wander into positions a strong bot's own games seldom reach (primes
    held against it, back games), which a student must value too."""
    games = int(games) if games else min(256, max(1, -(-n // 40)))
    got_b, got_d, total = [], [], 0
    while total < n:
        boards, dice = _whole_games(bot, games, rng, explore)
        got_b.append(boards)
        got_d.append(dice)
        total += len(boards)
    boards, dice = np.concatenate(got_b), np.concatenate(got_d)
    pick = np.sort(rng.choice(len(boards), size=n, replace=False))
    return boards[pick], dice[pick]


def _whole_games(bot, games: int, rng: np.random.Generator, explore: float) -> tuple[np.ndarray, np.ndarray]:
    """Every contact decision (position on roll, dice) of ``games`` games of ``bot`` against
    itself, each played from the opening position until it ends or becomes a race (contact never
    comes back, so the rest has no decision to keep)."""
    boards = np.repeat(start_position()[None], games, axis=0)
    first = True
    got_b, got_d = [], []
    while len(boards):
        dice = rng.integers(1, 7, size=(len(boards), 2))
        while first and (doubles := dice[:, 0] == dice[:, 1]).any():  # no double opens a game
            dice[doubles] = rng.integers(1, 7, size=(int(doubles.sum()), 2))
        first = False
        contact = ~race_mask(boards)
        got_b.append(boards[contact].copy())
        got_d.append(dice[contact].copy())
        after, _ = bot.choose_moves(boards, dice)
        if explore > 0:
            after = _explored(after, boards, dice, explore, rng)
        going = (game_results(after) == 0) & ~race_mask(after)
        boards = np.ascontiguousarray(after[going][:, ::-1])  # the opponent on roll
    return np.concatenate(got_b), np.concatenate(got_d)


def _explored(after: np.ndarray, boards: np.ndarray, dice: np.ndarray, chance: float,
              rng: np.random.Generator) -> np.ndarray:
    """``after`` with each row, with ``chance``, replaced by a legal move of that roll drawn at
    random (a position with no legal move has exactly one afterstate: the pass)."""
    wander = rng.random(len(boards)) < chance
    if not wander.any():
        return after
    rows = np.flatnonzero(wander)
    every, _, off = generate_batch(np.ascontiguousarray(boards[rows], np.int8),
                                   np.ascontiguousarray(dice[rows], np.int64))
    pick = off[:-1] + (rng.random(len(rows)) * np.diff(off)).astype(np.int64)
    after = after.copy()
    after[rows] = every[pick]
    return after


def candidate_samples(bot, boards: np.ndarray, dice: np.ndarray, keep: int, margin: float,
                      ply: int = 1, singles: bool = False) -> Samples:
    """The candidates of each decision valued at ``ply`` by ``bot`` (see the module's docstring);
    a decision with a single candidate gives nothing unless ``singles`` (then its one afterstate
    is a sample too: it teaches the values' level, which the cube reads, where ranking needs none)."""
    from bgnet.bots.search import filtered_candidates

    after, candidates = filtered_candidates(bot, boards, dice, keep, margin)
    rows, owner, k = [], [], 0
    for cand in candidates:
        if len(cand) > 1 or singles:
            rows.append(cand)
            owner.append(np.full(len(cand), k))
            k += 1
    if not rows:
        return Samples(np.zeros((0, 2, 25), np.int8), np.zeros((0, 5), np.float32), np.zeros(0, np.int64))
    pos = np.ascontiguousarray(after[np.concatenate(rows)][:, ::-1])
    live = game_results(pos) == 0  # never false after a contact position: a finished game has no 1-ply value
    targets = bot.evaluate(pos[live], ply=ply).astype(np.float32)
    return Samples(pos[live], targets, np.concatenate(owner)[live])


_TEACHER = None  # a drawing process's bot, loaded once by _load_teacher


def _load_teacher(checkpoint: str) -> None:
    global _TEACHER
    import torch

    from bgnet.bots.load import load_teacher

    torch.set_num_threads(1)
    _TEACHER = load_teacher(checkpoint)


def _draw_chunk(job: tuple[int, int, float, int]) -> Samples:
    n, keep, margin, seed = job
    boards, dice = self_play_decisions(_TEACHER, n, np.random.default_rng(seed))
    return candidate_samples(_TEACHER, boards, dice, keep, margin)


def draw_samples(checkpoint: str, decisions: int, keep: int = 5, margin: float = MARGIN, workers: int = 1,
                 seed: int = 0, chunk: int = 2048, progress: bool = True) -> Samples:
    """Decisions drawn by self-play of the checkpoint's net in chunks of ``chunk`` (each its own
    games and dice), their candidates valued at 1-ply, in ``workers`` processes."""
    from tqdm import tqdm

    sizes = [min(chunk, decisions - lo) for lo in range(0, decisions, chunk)]
    jobs = [(n, keep, margin, seed * 1_000_003 + k) for k, n in enumerate(sizes)]
    bar = tqdm(total=decisions, unit="decision", disable=not progress, smoothing=0.1)
    parts: list[Samples] = []
    results: Iterator[Samples]
    if workers == 1:
        _load_teacher(checkpoint)
        results = map(_draw_chunk, jobs)
    else:
        pool = mp.get_context("spawn").Pool(workers, _load_teacher, (checkpoint,))
        results = pool.imap(_draw_chunk, jobs)
    try:
        for n, part in zip(sizes, results):
            parts.append(part)
            bar.update(n)
    finally:
        bar.close()
        if workers > 1:
            pool.terminate()
    return Samples.concat(parts)


def choice_agreement(net, samples: Samples) -> float:
    """How often the net's 0-ply favourite among each decision's candidates is the 1-ply one."""
    from bgnet.bots.torch_eval import NetEvaluator
    from bgnet.nn.probs import equity, flip

    if not len(samples):  # a fit too small for a held-out tenth
        return float("nan")
    mine = equity(flip(NetEvaluator(net).positions(samples.boards)))  # the mover's equity
    theirs = equity(flip(samples.targets))
    starts = DecisionRuns(samples).starts
    a = np.maximum.reduceat(mine, starts) == mine[_first_best(theirs, starts)]
    return float(a.mean()) if len(a) else float("nan")


def _first_best(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    ends = np.r_[starts[1:], len(values)]
    return np.array([s + int(np.argmax(values[s:e])) for s, e in zip(starts, ends)], np.int64)


def split(samples: Samples, held_out: float, rng: np.random.Generator) -> tuple[Samples, Samples]:
    """Samples of a random ``held_out`` share of the decisions apart from the rest."""
    test = rng.random(samples.decisions) < held_out
    t = test[samples.decision]
    keep = np.flatnonzero(~t)
    held = np.flatnonzero(t)
    return (Samples(samples.boards[keep], samples.targets[keep], samples.decision[keep]),
            Samples(samples.boards[held], samples.targets[held], samples.decision[held]))


def held_out_loss(net, samples: Samples) -> float:
    """The mean squared error of the net's probabilities on the samples (the fit's own loss)."""
    from bgnet.bots.torch_eval import NetEvaluator

    if not len(samples):
        return float("nan")
    return float(np.mean((NetEvaluator(net).positions(samples.boards) - samples.targets) ** 2))


def fit(net, samples: Samples, held: Samples, *, epochs: int, lr: float, batch_size: int,
        rng: np.random.Generator, lr_final: float | None = None, log=print,
        stop: Callable[[], bool] | None = None, rank_weight: float = 0.0) -> bool:
    """Fit ``net`` to the samples with a fresh Adam, the rate falling linearly from ``lr`` to
    ``lr_final`` over the passes (constant without it), reporting the held-out loss and agreement
    each pass. ``stop``, asked after each pass, ends the fit early where it says so; returns
    whether every pass was made.

    The loss is the squared error of the five probabilities. ``rank_weight`` above 0 adds that
    many times :func:`within_decision_loss` (each batch then holds whole decisions, about
    ``batch_size`` samples): what a 0-ply choice needs is the order of a decision's candidates,
    and their values differ by less than the error a net makes on each."""
    import torch

    from bgnet.train.learn import Learner

    opt = torch.optim.Adam(net.parameters(), lr=lr)
    learner = Learner(net, opt, "mse", "cpu", fast_cpu=not rank_weight)
    log(f"before: held-out loss {held_out_loss(net, held):.6f}; 0-ply choice agrees with the "
        f"teacher on {choice_agreement(net, held):.1%} of {held.decisions} held-out decisions")
    runs = DecisionRuns(samples)
    per = max(1, round(batch_size * len(runs) / max(1, len(samples)))) if rank_weight else batch_size
    units = len(runs) if rank_weight else len(samples)  # what a batch is made of: decisions, or samples
    steps = epochs * -(-units // per)
    step = 0
    for epoch in range(epochs):
        t0, losses = time.time(), []
        net.train()
        order = rng.permutation(units)
        for lo in range(0, units, per):
            if lr_final is not None:
                for group in opt.param_groups:
                    group["lr"] = lr + (lr_final - lr) * step / max(1, steps - 1)
            if rank_weight:
                rows, which = runs.rows(order[lo:lo + per])
                losses.append(_ranked_update(learner, samples, rows, which, rank_weight))
            else:
                sel = order[lo:lo + per]
                losses.append(learner.update(samples.boards[sel], samples.targets[sel]))
            step += 1
        net.eval()
        log(f"pass {epoch + 1}/{epochs}: loss {np.mean(losses):.6f}, held-out {held_out_loss(net, held):.6f}, "
            f"agreement {choice_agreement(net, held):.1%} ({time.time() - t0:.0f} s)")
        if stop is not None and stop() and epoch + 1 < epochs:
            return False
    return True


def within_decision_loss(probs, targets, group, groups: int):
    """The mean squared error of each candidate's equity measured from its decision's mean, the
    net's against the teacher's (torch tensors: probabilities [S, 5], ``group`` [S] the decision
    of each sample, 0 .. ``groups`` - 1): zero where the net is off by the same amount on every
    candidate of a decision, which changes no choice.

    >>> import torch
    >>> t = torch.tensor([[0.5, 0.1, 0.0, 0.1, 0.0], [0.6, 0.1, 0.0, 0.1, 0.0]])
    >>> round(float(within_decision_loss(t + 0.05 * torch.tensor([1.0, 0, 0, 0, 0]), t, torch.tensor([0, 0]), 1)), 6)
    0.0
    >>> round(float(within_decision_loss(t.flip(0), t, torch.tensor([0, 0]), 1)), 4)
    0.04
    """
    import torch

    from bgnet.nn.probs import equity

    off = equity(probs) - equity(targets)
    count = torch.zeros(groups, dtype=off.dtype).index_add_(0, group, torch.ones_like(off))
    mean = torch.zeros(groups, dtype=off.dtype).index_add_(0, group, off) / count
    return ((off - mean[group]) ** 2).mean()


class DecisionRuns:
    """Where each decision's samples lie (together, as labels and :func:`split` keep them)."""

    def __init__(self, samples: Samples):
        self.starts = np.flatnonzero(np.r_[True, np.diff(samples.decision) != 0])
        self.sizes = np.diff(np.r_[self.starts, len(samples)])

    def __len__(self) -> int:
        return len(self.starts)

    def rows(self, decisions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The samples of ``decisions`` (indices of runs), and for each its place in ``decisions``.

        >>> runs = DecisionRuns(Samples(np.zeros((5, 2, 25), np.int8), np.zeros((5, 5), np.float32),
        ...                             np.array([0, 0, 1, 2, 2])))
        >>> [a.tolist() for a in runs.rows(np.array([2, 0]))]
        [[3, 4, 0, 1], [0, 0, 1, 1]]
        """
        sizes = self.sizes[decisions]
        shift = np.repeat(self.starts[decisions] - np.r_[0, np.cumsum(sizes)[:-1]], sizes)
        return shift + np.arange(sizes.sum()), np.repeat(np.arange(len(decisions)), sizes)


def _ranked_update(learner, samples: Samples, rows: np.ndarray, group: np.ndarray, weight: float) -> float:
    """One step of ``learner``'s net and optimizer on the samples ``rows`` (whole decisions,
    ``group`` telling them apart): the squared error plus ``weight`` times
    :func:`within_decision_loss`; returns the squared error."""
    import torch

    from bgnet.nn.model import probability_loss

    probs = learner.net(*learner.inputs(samples.boards[rows]))
    targets = torch.from_numpy(samples.targets[rows])
    mse = probability_loss(probs, targets, "mse")
    loss = mse + weight * within_decision_loss(probs, targets, torch.from_numpy(group), int(group[-1]) + 1)
    learner.opt.zero_grad(set_to_none=True)
    loss.backward()
    learner.opt.step()
    return float(mse.detach())


def student_start(path: str):
    """The net to fit and the checkpoint data to keep with it: a training checkpoint's (or a run
    folder's latest), or an exported or shipped bot's net rebuilt in torch (its games and
    strength kept, no optimizer state)."""
    from bgnet.nn.checkpoint import load_net
    from bgnet.resources import SHIPPED_BOTS

    if str(path).endswith(".onnx") or (str(path).lower() in SHIPPED_BOTS and not Path(path).exists()):
        from bgnet.train.surgery import net_of_bot

        return net_of_bot(path)
    return load_net(path)


def distill_checkpoint(checkpoint: str, out: str, *, decisions: int = 100_000,
                       samples_file: str | None = None, given: Samples | None = None, keep: int = 5,
                       margin: float = MARGIN, epochs: int = 2, lr: float = 1e-5,
                       lr_final: float | None = None, batch_size: int = 64, workers: int = 1,
                       seed: int = 0, rank_weight: float = 0.0) -> None:
    """Fit the net of ``checkpoint`` (a ``.pt``, or an exported bot's net) and write it to
    ``out``, without an optimizer state. The samples: those ``given`` (a teacher's values from
    labels folders made by ``bgnet label``: :func:`bgnet.train.labels.load_folders`), or those
    kept in ``samples_file`` when that file exists, or else the net's own 1-ply values of the
    close candidates of ``decisions`` self-play decisions (kept in ``samples_file`` when one is
    named)."""
    import torch

    from bgnet.nn.checkpoint import save_checkpoint

    net, data = student_start(checkpoint)  # first: a bad checkpoint is refused before any work
    if given is not None:
        samples = given
    elif samples_file and Path(samples_file).exists():
        samples = Samples.load(samples_file)
        print(f"{len(samples)} samples of {samples.decisions} decisions read from {samples_file}")
    else:
        t0 = time.time()
        samples = draw_samples(checkpoint, decisions, keep, margin, workers, seed)
        print(f"{decisions} decisions drawn, {samples.decisions} with two or more candidates: "
              f"{len(samples)} samples valued at 1-ply ({time.time() - t0:.0f} s)")
        if samples_file:
            samples.save(samples_file)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    train, held = split(samples, 0.1, rng)
    fit(net, train, held, epochs=epochs, lr=lr, lr_final=lr_final, batch_size=batch_size, rng=rng,
        rank_weight=rank_weight)
    save_checkpoint(out, dict(data, net_state=net.state_dict(), optimizer_state=None))
    print(f"wrote {out}; a run resumed from it starts a fresh optimizer")
