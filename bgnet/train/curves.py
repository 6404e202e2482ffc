"""A run's learning curve: its evaluations against each opponent over self-play games, read from
the run's TensorBoard log (``RUN_DIR/tb``) and drawn as a PNG (``bgnet plot``).

The trainer logs, at every evaluation, ``eval/ppg_vs_OPPONENT`` and ``eval/win_rate_vs_OPPONENT``
with the number of self-play games as the step. A ``eval/ppg_ci95_vs_OPPONENT`` scalar (the half
width of the 95 % interval), when the log holds one, is drawn as a band around the curve.
matplotlib (Agg backend, no display needed) and TensorBoard's reader are imported only when a
curve is drawn.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from bgnet.errors import BadArgument, BadInputFile

METRICS = {"ppg": "points per game (cubeless)", "win_rate": "games won (fraction)"}

Curve = list[tuple[int, float]]


def read_curves(run_dir: str | Path, metric: str = "ppg") -> dict[str, dict[str, Curve]]:
    """``{opponent: {"value": [(games, value), ...], "ci95": [...]}}`` from the run's log, sorted
    by games (``ci95`` empty when not logged). A run without a log, or without evaluations of
    ``metric`` yet, raises :class:`~bgnet.errors.BadInputFile` naming the folder."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; valid metrics: {', '.join(METRICS)}")
    tb = Path(run_dir) / "tb"
    if not tb.is_dir() or not any(p.name.startswith("events.") for p in tb.rglob("*")):
        raise BadInputFile(f"{run_dir} has no TensorBoard log ({tb} holds no event file): give "
                           "the folder of a training run")
    acc = _read_log(tb)
    prefix, band = f"eval/{metric}_vs_", f"eval/{metric}_ci95_vs_"
    tags = acc.Tags().get("scalars", [])
    out: dict[str, dict[str, Curve]] = {}
    for tag in tags:
        if tag.startswith(prefix):
            opponent = tag[len(prefix):]
            out[opponent] = {"value": _points(acc, tag),
                             "ci95": _points(acc, band + opponent) if band + opponent in tags else []}
    if not out:
        raise BadInputFile(f"{run_dir} has no evaluations in its TensorBoard log yet (no "
                           f"{prefix}* scalars): evaluations run every eval.every games")
    return out


def _read_log(tb: Path):
    """TensorBoard's reader of the event files in ``tb``, loaded. Its progress notes (INFO on the
    ``tensorboard`` logger) are kept off the command's output."""
    import logging

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logger = logging.getLogger("tensorboard")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        acc = EventAccumulator(str(tb), size_guidance={"scalars": 0})
        acc.Reload()
    finally:
        logger.setLevel(level)
    return acc


def _points(acc, tag: str) -> Curve:
    """One scalar's (step, value) pairs by step; a step logged twice (a resumed run) keeps its
    last value."""
    return sorted({e.step: float(e.value) for e in acc.Scalars(tag)}.items())


def plot_curves(curves: dict[str, dict[str, Curve]], out: str | Path, metric: str = "ppg",
                title: str | None = None) -> Path:
    """Draw the curves (from :func:`read_curves`) into the PNG ``out``; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    try:
        for name, c in sorted(curves.items()):
            games, values = zip(*c["value"])
            (line,) = ax.plot(games, values, marker="o", label=f"vs {name}")
            half = dict(c["ci95"])
            shared = [(g, v, half[g]) for g, v in c["value"] if g in half]
            if shared:
                g, v, h = zip(*shared)
                ax.fill_between(g, [a - b for a, b in zip(v, h)], [a + b for a, b in zip(v, h)],
                                color=line.get_color(), alpha=0.2, lw=0)
        if metric == "ppg":
            ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xlabel("self-play games")
        ax.set_ylabel(METRICS[metric])
        ax.set_title(title or "learning curve")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out, dpi=110, format="png")
    finally:
        plt.close(fig)
    return Path(out)


def plot_main(argv: list[str]) -> int:
    """``bgnet plot RUN_DIR [--out PNG] [--metric ppg|win_rate] [--title TEXT]``."""
    from bgnet.arguments import ArgumentParser, output_file_arg

    p = ArgumentParser(
        prog="bgnet plot",
        description="Draw a training run's learning curve (its evaluations against each opponent "
                    "over self-play games) from its TensorBoard log as a PNG.",
        examples=("bgnet plot runs/my-run", "bgnet plot runs/my-run --metric win_rate --out wins.png"))
    p.add_argument("run_dir", help="the run's folder (holding tb/)")
    p.add_argument("--out", type=output_file_arg, default=None,
                   help="the PNG to write (default RUN_DIR/learning_curve.png)")
    p.add_argument("--metric", choices=sorted(METRICS), default="ppg",
                   help="what to draw (default ppg)")
    p.add_argument("--title", default=None, help="the plot's title (default: the run's name)")
    a = p.parse_args(argv)
    run_dir = Path(a.run_dir)
    if not run_dir.is_dir():
        raise BadInputFile(f"no run folder {a.run_dir!r}: give the folder of a training run")
    out = Path(a.out) if a.out else run_dir / "learning_curve.png"
    if a.out is None:  # the default, next to the run: checked as --out would be
        try:
            output_file_arg(str(out))
        except argparse.ArgumentTypeError as e:
            raise BadArgument(f"{e}; give --out") from None
    curves = read_curves(run_dir, a.metric)
    for name, c in sorted(curves.items()):
        print(f"vs {name}: " + ", ".join(f"{g}: {v:+.3f}" for g, v in c["value"]))
    plot_curves(curves, out, a.metric, a.title or f"learning curve: {run_dir.resolve().name}")
    print(f"wrote {out}")
    return 0
