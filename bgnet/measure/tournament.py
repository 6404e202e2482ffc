"""Tournaments: the checkpoints of a training run and reference opponents play each other.

Every pair of players meets in a duplicate-dice match; the win counts of all matches are fitted
with the Bradley-Terry (logistic Elo) model by maximum likelihood, giving a rating with a standard
error for each player, anchored at pubeval = 0 when pubeval takes part. The ratings of the
checkpoints against the games they were trained on are drawn to a PNG and logged to TensorBoard.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bgnet.bots.base import Bot
from bgnet.errors import BadArgument
from bgnet.measure.stats import Z95, bradley_terry

DEFAULT_REFERENCES = ("pubeval", "gnubg:0")
_GAMES_IN_NAME = re.compile(r"games_(\d+)")


@dataclass
class Player:
    """One entrant: its spec (as :func:`bgnet.bots.load_bot` reads it), a short name, and the
    self-play games it was trained on (None for reference opponents)."""

    spec: str
    name: str
    games: int | None = None


@dataclass
class TournamentResult:
    players: list[Player]
    wins: np.ndarray  # wins[i, j]: games player i won against player j
    points: np.ndarray  # points[i, j]: i's points per game against j (nan on the diagonal)
    ratings: np.ndarray  # Elo-like, relative to the anchor
    rating_se: np.ndarray  # standard errors
    anchor: str
    games_per_pair: int
    matches: list[dict] = field(default_factory=list)

    def table(self) -> str:
        """Players sorted by rating, with 95 % error bars and their score against the field."""
        order = np.argsort(-self.ratings)
        w = max(len("player"), *(len(p.name) for p in self.players))
        lines = [f"ratings (Elo-like, {self.anchor} = 0; 95 % error bars; {self.games_per_pair} games a pair)",
                 f"{'player':<{w}s}  {'rating':>14s}  {'trained':>12s}  {'win %':>6s}"]
        for i in order:
            p = self.players[i]
            won, played = self.wins[i].sum(), self.wins[i].sum() + self.wins[:, i].sum()
            trained = "" if p.games is None else f"{p.games:,}"
            lines.append(f"{p.name:<{w}s}  {self.ratings[i]:+7.0f} ± {Z95 * self.rating_se[i]:4.0f}"
                         f"  {trained:>12s}  {100 * won / max(played, 1):6.1f}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "anchor": self.anchor, "games_per_pair": self.games_per_pair,
            "players": [{"name": p.name, "spec": p.spec, "games": p.games,
                         "rating": float(r), "rating_se": float(s)}
                        for p, r, s in zip(self.players, self.ratings, self.rating_se)],
            "wins": self.wins.astype(int).tolist(), "matches": self.matches,
        }


def checkpoints_of(run: str | os.PathLike, max_checkpoints: int | None = None) -> list[Player]:
    """The numbered checkpoints of a run directory (``checkpoints/games_N.pt`` or any ``*.pt``),
    oldest first; with ``max_checkpoints``, an evenly spaced selection that keeps the last one."""
    run = Path(run)
    if not run.is_dir():
        raise FileNotFoundError(f"no such run directory: {str(run)!r}")
    folder = run / "checkpoints" if (run / "checkpoints").is_dir() else run
    files = sorted(folder.glob("games_*.pt")) or sorted(
        p for p in folder.glob("*.pt") if p.name != "latest.pt") or sorted(folder.glob("*.pt"))
    if not files:
        raise FileNotFoundError(f"no checkpoints (*.pt) in {str(folder)!r}")
    players = []
    for f in files:
        m = _GAMES_IN_NAME.search(f.name)
        players.append(Player(str(f), f.stem, int(m.group(1)) if m else None))
    players.sort(key=lambda p: (p.games is None, p.games or 0, p.name))
    if max_checkpoints and len(players) > max_checkpoints:
        keep = np.unique(np.linspace(0, len(players) - 1, max_checkpoints).round().astype(int))
        players = [players[i] for i in keep]
    return players


def players_from(sources: list[str], references=DEFAULT_REFERENCES,
                 max_checkpoints: int | None = 8) -> list[Player]:
    """Entrants from run directories and bot specs, plus the reference opponents not yet in."""
    players: list[Player] = []
    for s in sources:
        if os.path.isdir(s):
            players += checkpoints_of(s, max_checkpoints)
        else:
            players.append(Player(s, s))
    for r in references:
        if r not in {p.spec for p in players}:
            players.append(Player(r, r))
    names = [p.name for p in players]
    for i, p in enumerate(players):  # two runs can both have games_000100000.pt
        if names.count(p.name) > 1:
            p.name = f"{Path(p.spec).parent.parent.name}/{p.name}" if p.games is not None else f"{p.name}#{i}"
    if len(players) < 2:
        raise BadArgument("a tournament needs at least two players: give two bots or a run with "
                          "two checkpoints, or drop --no-ref")
    return players


def run_tournament(players: list[Player], games_per_pair: int = 400, seed: int = 0,
                   load: Callable[[str], Bot] | None = None, progress: bool = True) -> TournamentResult:
    """Round robin: every pair plays ``games_per_pair`` duplicate-dice games (rounded up to even).

    Each bot is loaded once. Ratings are anchored at pubeval (or the first player without one).
    """
    from bgnet.measure.match import play_games

    if load is None:
        from bgnet.bots.load import load_bot

        load = load_bot
    games_per_pair += games_per_pair % 2
    bots = [load(p.spec) for p in players]
    for p, b in zip(players, bots):
        meta_games = b.meta.get("games")  # net bots know their age
        if p.games is None and meta_games is not None and not _is_reference(p.spec):
            p.games = int(meta_games)
    k = len(players)
    wins = np.zeros((k, k))
    points = np.full((k, k), np.nan)
    matches = []
    try:
        for i in range(k):
            for j in range(i + 1, k):
                r = play_games(bots[i], bots[j], games_per_pair, seed=seed + 1000 * i + j,
                               progress=progress)
                wins[i, j], wins[j, i] = r.wins, r.games - r.wins
                points[i, j], points[j, i] = r.ppg, -r.ppg
                matches.append({"a": players[i].name, "b": players[j].name, "ppg": r.ppg,
                                "ppg_ci95": r.ppg_ci95, "wins": r.wins, "games": r.games})
    finally:
        for b in bots:
            b.close()
    anchor = next((i for i, p in enumerate(players) if p.spec == "pubeval"), None)
    if anchor is None:
        anchor = next((i for i, p in enumerate(players) if p.games is None), 0)
    ratings, se = bradley_terry(wins, anchor=anchor)
    return TournamentResult(players, wins, points, ratings, se, players[anchor].name,
                            games_per_pair, matches)


def _is_reference(spec: str) -> bool:
    low = spec.lower()
    return low in ("pubeval", "random", "gnubg") or low.startswith(("random:", "gnubg:"))


def plot_ratings(result: TournamentResult, path: str | os.PathLike, title: str = "") -> Path:
    """PNG of the checkpoints' ratings against training games, references as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    trained = [i for i, p in enumerate(result.players) if p.games is not None]
    if trained:
        xs = [p.games for p in result.players if p.games is not None]  # the games of ``trained``
        ax.errorbar(xs, result.ratings[trained], yerr=Z95 * result.rating_se[trained], fmt="o-",
                    capsize=3, label="checkpoints")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for c, i in enumerate(i for i, p in enumerate(result.players) if p.games is None):
        ax.axhline(result.ratings[i], ls="--", lw=1, color=colours[(c + 1) % len(colours)],
                   label=result.players[i].name)
    ax.set_xlabel("self-play games")
    ax.set_ylabel(f"rating (Elo-like, {result.anchor} = 0)")
    ax.set_title(title or "strength against training games")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def log_tensorboard(result: TournamentResult, logdir: str | os.PathLike) -> None:
    """Ratings of the checkpoints at their training step, and the references' ratings."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(logdir))
    try:
        for p, r, s in zip(result.players, result.ratings, result.rating_se):
            if p.games is not None:
                writer.add_scalar("tournament/rating", float(r), global_step=p.games)
                writer.add_scalar("tournament/rating_se", float(s), global_step=p.games)
        refs = {p.name: float(r) for p, r in zip(result.players, result.ratings) if p.games is None}
        if refs:
            steps = [p.games for p in result.players if p.games is not None] or [0]
            for name, r in refs.items():
                for step in (min(steps), max(steps)):
                    writer.add_scalar(f"tournament/reference/{name}", r, global_step=step)
    finally:
        writer.close()


def write_outputs(result: TournamentResult, out_dir: str | os.PathLike) -> dict[str, Path]:
    """JSON, PNG and TensorBoard log in ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tournament.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    png = plot_ratings(result, out / "ratings.png")
    log_tensorboard(result, out / "tb")
    return {"json": out / "tournament.json", "png": png, "tensorboard": out / "tb"}
