"""Strength per compute: recipes' runs side by side, and beside the hand path that made bgnet-deep.

    python3 tools/recipe_curves.py "the deep recipe=docs/curves/deep-recipe.json" --hand \
        --out docs/deep-recipe-vs-hand.png
    python3 tools/recipe_curves.py "the expert recipe=runs/expert" \
        "the deep recipe=docs/curves/deep-recipe.json" --out docs/expert-recipe-vs-deep.png

Three panels against core-hours: points per game against pubeval and against gnubg 0-ply, and the
0-ply error rate on `bgnet bench er` (2-ply reference). Each run's points come from its
``history.json`` (a run folder, or the file itself: docs/curves keeps those of finished recipes):
the evaluations the run made as it trained, with 95 % bands, and the final evaluation of the
student a recipe ends in, where it made one, as a star. The hand path's points (``--hand``) come
from the "Strength per compute" table of docs/HISTORY.md (each stage's figures and its core-hours
from zero; branches off the line to bgnet-deep are left out), so the figure shows what was
measured and nothing typed twice. The table of every point is printed too.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"[-+]?\d+(?:\.\d+)?"


def hand_path(history_md: Path) -> list[dict]:
    """The hand path's stages: name, core-hours from zero, and the figures each has."""
    text = history_md.read_text()
    start = text.index("## Strength per compute")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not re.match(NUMBER, cells[6]) or "branch" in cells[6]:
            continue
        row = {"name": cells[0].split(" (")[0].split(",")[0], "core_hours": float(cells[6].split()[0])}
        for key, cell in (("gnubg", cells[3]), ("pubeval", cells[4]), ("er", cells[5])):
            found = re.search(NUMBER, cell.replace("**", ""))
            if found and "level with" not in cell and "checks only" not in cell:
                row[key] = float(found.group())
        rows.append(row)
    return rows


def history(path: Path) -> list[dict]:
    """The entries of a run's history: ``path`` is its folder or its ``history.json``."""
    return json.loads((path / "history.json" if path.is_dir() else path).read_text())


def figures(results: dict) -> dict:
    """ppg (with its interval) against pubeval and gnubg 0-ply, and the error rate, of one evaluation."""
    row = {}
    for key, opp in (("pubeval", "pubeval"), ("gnubg", "gnubg:0")):
        if "ppg" in results.get(opp, {}):
            row[key], row[key + "_ci"] = results[opp]["ppg"], results[opp]["ppg_ci95"]
    if "error_rate" in results:
        row["er"] = results["error_rate"]["er"]
    return row


def recipe(path: Path) -> tuple[list[dict], list[dict]]:
    """The run's evaluations as it trained, and its students' final ones: core-hours, games, and
    each figure with its interval."""
    curve, students = [], []
    for entry in history(path):
        where = {"games": entry["games"], "core_hours": entry["core_hours"]}
        if entry.get("eval"):
            curve.append(dict(where, **figures(entry["eval"])))
        if entry.get("student_eval"):
            students.append(dict(where, **figures(entry["student_eval"])))
    return curve, students


def plot(runs: dict[str, tuple[list[dict], list[dict]]], hand: list[dict], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("pubeval", "ppg against pubeval", 0.626), ("gnubg", "ppg against gnubg 0-ply", 0.0),
              ("er", "error rate, 0-ply (millipoints)", 2.6))
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    try:
        for ax, (key, label, gnubg) in zip(axes, panels):
            for name, (curve, students) in runs.items():
                pts = [r for r in curve if key in r]
                xs, ys = [r["core_hours"] for r in pts], [r[key] for r in pts]
                (line,) = ax.plot(xs, ys, marker="o", ms=4, label=name)
                if pts and key + "_ci" in pts[0]:
                    ci = [r[key + "_ci"] for r in pts]
                    ax.fill_between(xs, [y - c for y, c in zip(ys, ci)], [y + c for y, c in zip(ys, ci)],
                                    color=line.get_color(), alpha=0.15, lw=0)
                for r in (r for r in students if key in r):
                    ax.errorbar([r["core_hours"]], [r[key]], yerr=[r.get(key + "_ci", 0.0)], marker="*", ms=13,
                                color=line.get_color(), ls="none", label=f"{name}: its student")
            if hand:
                hp = [r for r in hand if key in r]
                ax.plot([r["core_hours"] for r in hp], [r[key] for r in hp], marker="s", ls="--",
                        label="the hand path (stages 1-23)")
            ax.axhline(gnubg, color="grey", lw=0.8, ls=":", label="gnubg 0-ply")
            if key == "er":  # the first evaluations, far above, would flatten the rest
                ax.set_ylim(2.0, min(ax.get_ylim()[1], 8.0))
            ax.set_xlabel("compute (core-hours)")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)


def named(spec: str) -> tuple[str, Path]:
    """``LABEL=PATH`` (or a bare PATH, labelled by its name)."""
    label, _, path = spec.rpartition("=")
    return (label or Path(path).stem), Path(path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", metavar="LABEL=PATH",
                   help="a recipe's run folder (holding history.json) or its history.json, with the label to show")
    p.add_argument("--hand", action="store_true", help="the hand path's stages too (from docs/HISTORY.md)")
    p.add_argument("--out", type=Path, required=True, help="the PNG to write")
    p.add_argument("--title", default="strength per compute")
    a = p.parse_args()
    runs = {label: recipe(path) for label, path in map(named, a.runs)}
    hand = hand_path(ROOT / "docs" / "HISTORY.md") if a.hand else []
    print(f"{'':44s} {'core-h':>7s} {'pubeval':>8s} {'gnubg:0':>8s} {'er':>5s}")
    rows = [(f"{label}: {r['games']:,} games", r) for label, (curve, _) in runs.items() for r in curve]
    rows += [(f"{label}: its student", r) for label, (_, students) in runs.items() for r in students]
    rows += [(f"hand: {r['name']}", r) for r in hand]
    for name, r in rows:
        cells = [f"{r[k]:+8.3f}" if k in r else f"{'':>8s}" for k in ("pubeval", "gnubg")]
        er = f"{r['er']:5.2f}" if "er" in r else ""
        print(f"{name:44.44s} {r['core_hours']:7.2f} {cells[0]} {cells[1]} {er}")
    plot(runs, hand, a.out, a.title)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
