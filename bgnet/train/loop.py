"""The training run, top to bottom: build, (resume), self-play, learn, log, evaluate, checkpoint.

Two modes share everything but the learning step:

* ``batched``: a pool of games plays in parallel (:class:`~bgnet.train.selfplay.SelfPlayPool`);
  each finished game contributes its positions with their λ-returns, and once enough positions
  are gathered they are used once, in shuffled minibatches (Adam or SGD).
* ``online``: Tesauro's TD(λ), one game at a time, the weights updated after every move through
  eligibility traces (:mod:`bgnet.train.online`). It is the reference, and slow.

Every metric goes to TensorBoard under ``<run dir>/tb``; checkpoints go to
``<run dir>/checkpoints`` (``latest.pt`` every ``checkpoint_every`` games and at exit, plus
numbered copies), each with the resolved config beside it.
"""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from bgnet.bots.net import NetBot, NetEvaluator
from bgnet.nn.checkpoint import load_checkpoint, save_checkpoint
from bgnet.nn.encode import encode, race_mask
from bgnet.nn.model import SplitValueNet, ValueNet, conditional_loss, net_from_config, probability_loss
from bgnet.train.config import validate
from bgnet.train.selfplay import SelfPlayPool


# --------------------------------------------------------------------------------------------
# Building blocks


def set_threads(n: int) -> int:
    """Use ``n`` threads for torch and numba (0 = every core); returns the number used."""
    import numba

    n = n or os.cpu_count() or 1
    torch.set_num_threads(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    return n


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def build_net(model: DictConfig) -> torch.nn.Module:
    hidden = list(model.hidden)
    if model.split:
        race = list(model.race_hidden) if model.race_hidden is not None else hidden
        return SplitValueNet(model.encoding, hidden, model.activation, race_hidden=race)
    return ValueNet(model.encoding, hidden, model.activation)


def build_optimizer(net: torch.nn.Module, optim: DictConfig) -> torch.optim.Optimizer:
    if optim.name == "adam":
        return torch.optim.Adam(net.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)
    return torch.optim.SGD(net.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)


def learning_rate(optim: DictConfig, games: int, total: int) -> float:
    """Linear decay from ``lr`` to ``lr_final`` over the run (constant without ``lr_final``)."""
    if optim.lr_final is None:
        return float(optim.lr)
    frac = min(1.0, games / max(1, total))
    return float(optim.lr + (optim.lr_final - optim.lr) * frac)


def search_targets(bot: NetBot, boards: np.ndarray, returns: np.ndarray, weight: float) -> np.ndarray:
    """Mix each position's λ-return with its 1-ply value: the 21 rolls averaged, the side on roll
    playing its best move, judged by the net being trained.

    A 1-ply value looks one roll further than the net itself, so it is a better estimate than the
    net's own and a target the net can learn from (the net learns to play as its 1-ply search
    does); the λ-return keeps the target tied to real outcomes. ``weight`` 0 gives the λ-returns,
    1 the 1-ply values alone. It costs one 1-ply evaluation (about 400 afterstates) per position.
    """
    ply1 = bot.evaluate(boards, ply=1)
    return ((1.0 - weight) * returns + weight * ply1).astype(np.float32)


def weight_norm(net: torch.nn.Module) -> float:
    return float(torch.sqrt(sum((p.detach() ** 2).sum() for p in net.parameters())))


def rng_state(rng: np.random.Generator) -> dict:
    return {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}


def restore_rng(rng: np.random.Generator, state: dict) -> None:
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])


class Learner:
    """One minibatch update on (positions, target probabilities).

    ``fast_cpu``: on the CPU with the mse loss, run the update in compiled code
    (:class:`bgnet.nn.fast.FastLearner`: the same step, in place, and the optimizer's state kept
    in torch's format) when the net and optimizer allow it; ``self.fast`` is None otherwise.
    """

    def __init__(self, net, optimizer, loss: str, device: str, fast_cpu: bool = False):
        self.net, self.opt, self.loss, self.device = net, optimizer, loss, device
        self.split = isinstance(net, SplitValueNet)
        self.fast = None
        if fast_cpu and str(device) == "cpu":
            from bgnet.nn.fast import FastLearner, learner_unsupported

            if learner_unsupported(net, optimizer, loss) is None:
                self.fast = FastLearner(net, optimizer)

    def update(self, boards: np.ndarray, targets: np.ndarray) -> float:
        if self.fast is not None:
            return self.fast.update(boards, targets)
        x = torch.from_numpy(encode(boards, self.net.encoding)).to(self.device)
        y = torch.from_numpy(targets).to(self.device)
        args = (x, torch.from_numpy(race_mask(boards)).to(self.device)) if self.split else (x,)
        if self.loss == "bce":
            loss = conditional_loss(self.net.forward_logits(*args), y)
        else:
            loss = probability_loss(self.net(*args), y, "mse")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return float(loss.detach())


# --------------------------------------------------------------------------------------------
# Evaluation against fixed opponents


def evaluate_against(net, device: str, opponents, games: int, seed: int, previous: str | None = None):
    """Results of the current net (0-ply) against each opponent spec; skips what isn't installed.
    A plain ``random`` opponent draws its moves from ``seed`` too, so a run's figures repeat."""
    from bgnet.bots import load_bot
    from bgnet.evaluate.match import play_games

    me = NetBot(net, device=device, name="current")
    out = {}
    specs = list(opponents) + ([previous] if previous else [])
    for spec in specs:
        try:
            opp = load_bot(f"random:{seed}" if str(spec).lower() == "random" else spec, device=device)
        except (ImportError, RuntimeError) as e:
            out[str(spec)] = {"skipped": str(e)}
            continue
        r = play_games(me, opp, games, seed=seed, progress=False)
        key = "previous" if spec == previous else str(spec)
        out[key] = {"ppg": r.ppg, "ppg_ci95": r.ppg_ci95, "win_rate": r.win_rate, "games": r.games}
    net.train()
    return out


# --------------------------------------------------------------------------------------------
# The run


def train(cfg: DictConfig, run_dir: str | os.PathLike, progress: bool | None = None) -> dict:
    """Run the training described by ``cfg``; write everything under ``run_dir``. Returns the
    final evaluation (and a few totals) as a dict."""
    validate(cfg)
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    threads = set_threads(cfg.train.threads)
    if progress is None:
        progress = bool(cfg.get("progress", True))
    device = resolve_device(cfg.device)
    run_dir = Path(run_dir)
    ckpt_dir = run_dir / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)

    net = build_net(cfg.model).to(device)
    opt = build_optimizer(net, cfg.optim)
    games = 0
    if cfg.resume:
        data = load_checkpoint(cfg.resume, map_location=device)
        net = net_from_config(data["net_config"]).to(device)
        net.load_state_dict(data["net_state"])
        opt = build_optimizer(net, cfg.optim)
        if data.get("optimizer_state"):
            opt.load_state_dict(data["optimizer_state"])
        games = int(data.get("games", 0))
        if data.get("rng"):
            restore_rng(rng, data["rng"])
        print(f"resumed from {cfg.resume} at {games} games")
    OmegaConf.save(cfg, run_dir / "config.yaml")

    # Plain copies of the config sections: OmegaConf lookups in the hot loop cost ~18 % of a run.
    T, E, O = (SimpleNamespace(**OmegaConf.to_container(sec, resolve=True))
               for sec in (cfg.train, cfg.eval, cfg.optim))
    total = int(T.games)
    writer = SummaryWriter(str(run_dir / "tb"))
    resolved = OmegaConf.to_container(cfg, resolve=True)

    def checkpoint(name: str, metrics: dict | None = None) -> Path:
        payload = {"net_config": net.config(), "net_state": net.state_dict(),
                   "optimizer_state": opt.state_dict(), "games": games, "config": resolved,
                   "rng": rng_state(rng), "metrics": metrics or {}}
        path = save_checkpoint(ckpt_dir / name, payload)
        (ckpt_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg))
        return path

    def prune_numbered() -> None:
        numbered = sorted(ckpt_dir.glob("games_*.pt"), key=lambda p: p.stat().st_mtime)
        for old in numbered[: max(0, len(numbered) - T.keep_checkpoints)]:
            old.unlink(missing_ok=True)

    bar = tqdm(total=total, initial=min(games, total), unit="game", disable=not progress,
               dynamic_ncols=True, desc="self-play")
    stats = _Stats()
    last_ckpt = games - games % T.checkpoint_every
    last_eval = games - (games % E.every if E.every else 0)
    last_log = games
    saved: list[tuple[int, str]] = []  # numbered checkpoints of this run: (games, path)
    t_start = time.perf_counter()
    games_at_start = games

    if T.mode == "online":
        from bgnet.train.online import OnlineTD

        online = OnlineTD(net, cfg, rng, device)
    else:
        learner = Learner(net, opt, T.loss, device,
                          fast_cpu=bool(getattr(T, "fast_cpu", False)))
        pool = SelfPlayPool(NetEvaluator(net, device), T.parallel_games, rng,
                            lam=T.lam, max_plies=T.max_plies,
                            epsilon=T.epsilon, bearoff=bool(getattr(T, "bearoff", False)))
        search_weight = float(getattr(T, "search_target", 0.0) or 0.0)
        searcher = NetBot(pool.ev, ply=1) if search_weight else None
        buf_boards: list[np.ndarray] = []
        buf_targets: list[np.ndarray] = []
        buffered = 0

    try:
        while games < total:
            lr = learning_rate(O, games, total)
            if T.mode == "online":
                for g in opt.param_groups:
                    g["lr"] = lr
                result, length, loss = online.play_game(lr)
                stats.add_games(np.array([result]), np.array([length]))
                stats.losses.append(loss)
                new = 1
            else:
                net.eval()
                fin = pool.step()
                new = len(fin.results)
                if new:
                    stats.add_games(fin.results, fin.lengths)
                    buf_boards.append(fin.boards)
                    buf_targets.append(fin.targets)
                    buffered += len(fin.boards)
                if buffered >= T.buffer_positions:
                    net.train()
                    for g in opt.param_groups:
                        g["lr"] = lr
                    b = np.concatenate(buf_boards)
                    t = np.concatenate(buf_targets)
                    if search_weight:
                        t = search_targets(searcher, b, t, search_weight)
                    for _ in range(T.epochs):
                        perm = rng.permutation(len(b))
                        for lo in range(0, len(b), T.batch_size):
                            sel = perm[lo:lo + T.batch_size]
                            stats.losses.append(learner.update(b[sel], t[sel]))
                    buf_boards, buf_targets, buffered = [], [], 0
            if not new:
                continue
            games += new
            bar.update(new)

            if games - last_log >= T.log_every or games >= total:
                elapsed = time.perf_counter() - t_start
                gps = (games - games_at_start) / max(elapsed, 1e-9)
                stats.write(writer, games, lr=lr, games_per_second=gps, weight_norm=weight_norm(net))
                bar.set_postfix(gps=f"{gps:.0f}", loss=f"{stats.last_loss:.4f}")
                stats.reset()
                last_log = games

            if games - last_ckpt >= T.checkpoint_every:
                checkpoint("latest.pt")
                saved.append((games, str(checkpoint(f"games_{games:09d}.pt"))))
                prune_numbered()
                last_ckpt = games - games % T.checkpoint_every

            if E.every and games - last_eval >= E.every and games < total:
                older = [p for g, p in saved if g < games and os.path.exists(p)]
                previous = older[-1] if (E.previous and older) else None
                res = evaluate_against(net, device, E.opponents, E.games,
                                       seed=cfg.seed + 1, previous=previous)
                _log_eval(writer, res, games, bar)
                last_eval = games - games % E.every
    except KeyboardInterrupt:
        bar.write("interrupted: saving a checkpoint")
    finally:
        bar.close()
        final_path = checkpoint("latest.pt")
        writer.flush()

    summary = {"games": games, "checkpoint": str(final_path), "threads": threads, "device": device,
               "seconds": round(time.perf_counter() - t_start, 1)}
    if E.final_games and games >= total:
        res = evaluate_against(net, device, E.opponents, E.final_games, seed=cfg.seed + 2)
        _log_eval(writer, res, games, None)
        summary["final_eval"] = res
        checkpoint("latest.pt", metrics=res)
        if not (ckpt_dir / f"games_{games:09d}.pt").exists():
            checkpoint(f"games_{games:09d}.pt", metrics=res)
        print(_format_eval(res, games))
    writer.close()
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
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


def _log_eval(writer, res: dict, games: int, bar) -> None:
    for opp, r in res.items():
        if "ppg" in r:
            writer.add_scalar(f"eval/ppg_vs_{opp}", r["ppg"], games)
            writer.add_scalar(f"eval/win_rate_vs_{opp}", r["win_rate"], games)
    if bar is not None:
        bar.write(_format_eval(res, games))


def _format_eval(res: dict, games: int) -> str:
    parts = []
    for opp, r in res.items():
        if "ppg" in r:
            parts.append(f"vs {opp}: {r['ppg']:+.3f} ± {r['ppg_ci95']:.3f} ppg, "
                         f"{100 * r['win_rate']:.1f}% wins ({r['games']} games)")
        else:
            parts.append(f"vs {opp}: skipped ({r['skipped']})")
    return f"[{games} games] " + "; ".join(parts)
