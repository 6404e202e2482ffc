"""What a run shows while it trains: the progress bar (its rate and the time left), the
TensorBoard scalars under ``<run dir>/tb``, and the lines of ``app.log`` (the logger
``bgnet.train``). The run loop (:mod:`bgnet.train.loop`) tells a :class:`Report` what happened;
the report decides nothing about the run."""
from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import numpy as np

from bgnet.train.progress import time_left

LOG = logging.getLogger("bgnet.train")


def note(text: str) -> None:
    """A line for the person at the terminal, written above the progress bar if one is shown."""
    from tqdm import tqdm

    tqdm.write(text)


class Report:
    """The bar, the TensorBoard writer and the running statistics of one sitting of a run that
    starts at ``games`` of ``total``; ``label`` names the bar, ``progress`` shows it."""

    def __init__(self, run_dir: Path, games: int, total: int, label: str, progress: bool):
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        self.writer = SummaryWriter(str(run_dir / "tb"))
        self.stats = Stats()
        self.t_first: float | None = None  # first games in: the rate is measured from there
        self.games_first = games
        self.postfix_at = 0.0
        self.bar = tqdm(total=total, initial=min(games, total), unit="game", disable=not progress,
                        dynamic_ncols=True, desc=label,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} games "
                                   "[{elapsed}{postfix}]")

    def begins(self, run_dir: Path, games: int, phase_name: str, phase: int | None) -> None:
        """The sitting's first line; ``phase`` (counted from 0) is None for a run without phases."""
        LOG.info(f"training {run_dir} from {games} games, {phase_name}")
        if phase is not None:
            self.writer.add_scalar("train/phase", phase + 1, games)

    def games_in(self, results: np.ndarray, lengths: np.ndarray, games: int, total: int,
                 phase_end: int | None) -> None:
        """Games finished, ``games`` of ``total`` in all now (see :meth:`postfix`)."""
        self.stats.add_games(results, lengths)
        if self.t_first is None:  # the rate counts the games after the first ones
            self.t_first, self.games_first = time.perf_counter(), games
        self.postfix(games, total, phase_end)
        if games > self.bar.total:  # the last batch may finish a few games more:
            self.bar.total = games  # tqdm would show '0%| N/?' past its total
        self.bar.update(len(results))

    def losses(self, losses) -> None:
        self.stats.losses.extend(losses)

    def rate(self, games: int) -> float:
        """Games a second since the first games came in."""
        if self.t_first is None:
            return 0.0
        return (games - self.games_first) / max(time.perf_counter() - self.t_first, 1e-9)

    def _left(self, games: int, until: int, gps: float) -> str:
        """The time the games from ``games`` up to ``until`` take at ``gps`` games a second."""
        measured = time.perf_counter() - self.t_first if self.t_first is not None else 0.0
        return time_left(until - games, gps, measured)

    def postfix(self, games: int, total: int, phase_end: int | None) -> None:
        """The bar's one rate and the time left, for the phase (``phase_end``, None with one
        phase) and the run; refreshed at most once a second."""
        now = time.perf_counter()
        if now - self.postfix_at < 1.0 and games < total:
            return
        self.postfix_at = now
        gps = self.rate(games)
        left = f"{self._left(games, total, gps)} left"
        if phase_end is not None:
            left = f"phase {self._left(games, phase_end, gps)} left, recipe {left}"
        self.bar.set_postfix_str(f"{gps:,.0f} games/s, {left}", refresh=False)

    def scalars(self, games: int, lr: float, weight_norm: float, spent: dict, extra: dict[str, float]) -> None:
        """The scalars of a log point: the games and losses since the last one, the rates, the
        compute spent and the source's ``extra`` ones."""
        self.stats.write(self.writer, games, lr=lr, games_per_second=self.rate(games), weight_norm=weight_norm)
        self.writer.add_scalar("compute/core_hours", spent["cpu_seconds"] / 3600, games)
        self.writer.add_scalar("compute/wall_hours", spent["wall_seconds"] / 3600, games)
        for key, value in extra.items():
            self.writer.add_scalar(key, value, games)
        self.stats.reset()

    def phase_begins(self, games: int, phase: int, name: str, label: str) -> None:
        self.writer.add_scalar("train/phase", phase + 1, games)
        self.bar.set_description_str(label)
        self.bar.write(f"[{games} games] {name} begins")
        LOG.info(f"{games} games: {name} begins")

    def says(self, text: str) -> None:
        """A line of what the run is doing, above the bar and in the log."""
        self.bar.write(text)
        LOG.info(text)

    def evaluation(self, res: dict, games: int, spent: dict, shown: bool = True) -> None:
        """An evaluation's results, to TensorBoard, the log and (``shown``) above the bar."""
        log_eval(self.writer, res, games, self.bar if shown else None, spent)

    def stopped(self, text: str) -> None:
        LOG.info(text)

    def end_of_loop(self) -> None:
        self.bar.close()

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class Stats:
    """Running statistics between two TensorBoard writes."""

    def __init__(self):
        self.results: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.losses: list[float] = []
        self.last_loss = math.nan

    def reset(self):
        self.results = []
        self.lengths = []
        self.losses = []

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


def log_eval(writer, res: dict, games: int, bar, spent: dict | None = None) -> None:
    """An evaluation's results to TensorBoard (against games and against CPU seconds), the log,
    and ``bar`` where given."""
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
    line = format_eval(res, games)
    LOG.info(line)
    if bar is not None:
        bar.write(line)


def format_eval(res: dict, games: int) -> str:
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
