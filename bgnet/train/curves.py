"""A run's learning curve: its evaluations against each opponent over self-play games and over
the compute spent (core-hours), with a recipe's phase boundaries marked, drawn as a PNG
(``bgnet plot``).

Two sources, the first found wins: the run's ``history.json`` (the trainer writes it beside its
checkpoints, and every checkpoint carries the same history, so a resumed run's curve is whole:
one entry per evaluation, with games, core-hours and phase, and one per phase that begins), or
its TensorBoard log (``RUN_DIR/tb``): ``eval/ppg_vs_OPPONENT`` and ``eval/win_rate_vs_OPPONENT``
with the games as the step, ``eval/ppg_ci95_vs_OPPONENT`` (the half width of the 95 % interval)
drawn as a band, ``compute/core_hours`` and ``train/phase`` where the log has them.
matplotlib (Agg backend, no display needed) and TensorBoard's reader are imported only when a
curve is drawn.
"""
from __future__ import annotations

from pathlib import Path

from bgnet.errors import BadInputFile

METRICS = {"ppg": "points per game (cubeless)", "win_rate": "games won (fraction)",
           "er": "error rate, 0-ply (millipoints per decision)"}
# The error rate's curves, one per reference of `bgnet bench er`: (history key, TensorBoard tag).
ER_CURVES = {"2-ply reference": ("er", "eval/er"), "1-ply reference": ("er_1ply", "eval/er_1ply")}

Curve = list[tuple[int, float]]


def read_history(run_dir: str | Path, metric: str = "ppg") -> tuple[dict[str, dict[str, Curve]], dict]:
    """``(curves, extra)`` from the run's ``history.json``: curves as :func:`read_curves` gives
    them, and ``extra`` with ``core_hours`` (games -> core-hours at each evaluation) and
    ``phases`` ([(games, name), ...] where each phase after the first began). Empty curves when
    the run has no history (an older run: use its TensorBoard log)."""
    import json

    path = Path(run_dir) / "history.json"
    if not path.is_file():
        return {}, {}
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BadInputFile(f"{path} is not a readable run history ({e})") from None
    curves: dict[str, dict[str, Curve]] = {}
    hours: dict[int, float] = {}
    phases: list[tuple[int, str]] = []
    for entry in entries if isinstance(entries, list) else []:
        games = int(entry.get("games", 0))
        hours[games] = float(entry.get("core_hours", 0.0))
        if entry.get("begins"):
            phases.append((games, str(entry.get("phase", ""))))
        results = dict(entry.get("eval") or {})
        rates = results.pop("error_rate", None) or {}
        if metric == "er":
            results = {name: {"er": rates[key]} for name, (key, _) in ER_CURVES.items() if key in rates}
        for opp, r in results.items():
            if metric in r:
                c = curves.setdefault(opp, {"value": [], "ci95": []})
                c["value"].append((games, float(r[metric])))
                if metric == "ppg" and "ppg_ci95" in r:
                    c["ci95"].append((games, float(r["ppg_ci95"])))
    for c in curves.values():
        c["value"] = sorted(dict(c["value"]).items())
        c["ci95"] = sorted(dict(c["ci95"]).items())
    return curves, {"core_hours": hours, "phases": phases}


def read_run(run_dir: str | Path, metric: str = "ppg") -> tuple[dict[str, dict[str, Curve]], dict]:
    """The run's curves and what is known of its compute and phases, from its history or else
    its TensorBoard log (see the module docstring)."""
    curves, extra = read_history(run_dir, metric)
    if curves:
        return curves, extra
    curves = read_curves(run_dir, metric)
    return curves, _log_extra(run_dir)


def _log_extra(run_dir: str | Path) -> dict:
    """Core-hours by games and the phase boundaries, from the TensorBoard log where it has them."""
    acc = _read_log(Path(run_dir) / "tb")
    tags = acc.Tags().get("scalars", [])
    extra: dict = {"core_hours": {}, "phases": []}
    if "compute/core_hours" in tags:
        extra["core_hours"] = dict(_points(acc, "compute/core_hours"))
    if "train/phase" in tags:
        last = None
        for games, phase in _points(acc, "train/phase"):
            if last is not None and phase != last:
                extra["phases"].append((games, f"phase {int(phase)}"))
            last = phase
    return extra


def core_hours_at(hours: dict[int, float], games: int) -> float | None:
    """Core-hours spent at ``games``, interpolated between the nearest logged points (None
    outside them).

    >>> core_hours_at({1000: 0.5, 3000: 1.5}, 2000)
    1.0
    """
    if not hours:
        return None
    points = sorted(hours.items())
    if games in hours:
        return hours[games]
    for (g0, h0), (g1, h1) in zip(points, points[1:]):
        if g0 <= games <= g1:
            return h0 + (h1 - h0) * (games - g0) / max(1, g1 - g0)
    return None


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
    if metric == "er":
        out = {name: {"value": _points(acc, tag), "ci95": []} for name, (_, tag) in ER_CURVES.items()
               if tag in tags}
    for tag in tags:
        if tag.startswith(prefix):
            opponent = tag[len(prefix):]
            out[opponent] = {"value": _points(acc, tag),
                             "ci95": _points(acc, band + opponent) if band + opponent in tags else []}
    if not out:
        raise BadInputFile(f"{run_dir} has no evaluations yet: {first_evaluation_note(run_dir, acc)}")
    return out


def first_evaluation_note(run_dir: str | Path, acc=None) -> str:
    """When a run's first evaluation comes, from its ``config.yaml`` and, where its log has them,
    the games played so far and their rate: 'the first comes at 10,000 games (eval.first); the
    run is at 5,000 games, 150 games/s: about 0:00:33 from now'."""
    from omegaconf import DictConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from bgnet.train.config import ConfigError, first_evaluation_at, load_config

    try:
        raw = OmegaConf.load(Path(run_dir) / "config.yaml")
        if not isinstance(raw, DictConfig):
            raise ValueError("not a mapping")
        run = load_config(raw)
    except (OSError, ValueError, TypeError, ConfigError, OmegaConfBaseException):
        return "evaluations come every eval.every games of a run (see its config.yaml)"
    if not run.eval.every and not run.eval.first and not run.eval.final_games:
        return "this run evaluates nothing (eval.every=0, eval.first=0, eval.final_games=0)"
    at = first_evaluation_at(run)
    key = "eval.first" if at == run.eval.first else ("eval.every" if at < run.train.games
                                                      else "the run's end")
    note = f"the first comes at {at:,} games ({key})"
    rates = _points(acc, "train/games_per_second") if acc is not None and \
        "train/games_per_second" in acc.Tags().get("scalars", []) else []
    if rates:
        from bgnet.train.progress import clock

        games, gps = rates[-1]
        note += f"; the run was at {games:,} games"
        if gps > 0 and games < at:
            note += f", {gps:,.0f} games/s: about {clock((at - games) / gps)} from then"
    return note


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
                title: str | None = None, extra: dict | None = None) -> Path:
    """Draw the curves (from :func:`read_curves` or :func:`read_run`) into the PNG ``out``:
    against self-play games, and beside it against core-hours when ``extra`` has them, with
    the phase boundaries of ``extra`` marked on both. Returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    extra = extra or {}
    hours = extra.get("core_hours") or {}
    panels = ["games"] + (["core-hours"] if hours else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.2), squeeze=False)
    try:
        for ax, x in zip(axes[0], panels):
            to_x = (lambda g: g) if x == "games" else (lambda g: core_hours_at(hours, g))
            _draw(ax, curves, to_x, metric)
            for games, name in extra.get("phases") or []:
                at = to_x(games)
                if at is not None:
                    ax.axvline(at, color="grey", ls="--", lw=0.8)
                    ax.annotate(name, (at, 1), xycoords=("data", "axes fraction"), rotation=90,
                                fontsize=7, va="top", ha="right", color="grey")
            ax.set_xlabel("self-play games" if x == "games" else "compute (core-hours)")
        fig.suptitle(title or "learning curve")
        fig.tight_layout()
        fig.savefig(out, dpi=110, format="png")
    finally:
        plt.close(fig)
    return Path(out)


def _draw(ax, curves: dict[str, dict[str, Curve]], to_x, metric: str) -> None:
    for name, c in sorted(curves.items()):
        points = [(to_x(g), v) for g, v in c["value"] if to_x(g) is not None]
        if not points:
            continue
        xs, values = zip(*points)
        label = name if metric == "er" else f"vs {name}"
        (line,) = ax.plot(xs, values, marker="o", label=label)
        half = dict(c["ci95"])
        shared = [(to_x(g), v, half[g]) for g, v in c["value"] if g in half and to_x(g) is not None]
        if shared:
            g, v, h = zip(*shared)
            ax.fill_between(g, [a - b for a, b in zip(v, h)], [a + b for a, b in zip(v, h)],
                            color=line.get_color(), alpha=0.2, lw=0)
    if metric == "ppg":
        ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_ylabel(METRICS[metric])
    ax.grid(alpha=0.3)
    ax.legend()
