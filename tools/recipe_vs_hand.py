"""Strength per compute: a recipe's run beside the hand path that made bgnet-deep.

    python3 tools/recipe_vs_hand.py runs/deep --out docs/deep-recipe-vs-hand.png

Three panels against core-hours: points per game against pubeval and against gnubg 0-ply, and the
0-ply error rate on `bgnet bench er` (2-ply reference). The recipe's points come from its run's
``history.json`` (the evaluations the run made as it trained, 95 % bands); the hand path's from
the "Strength per compute" table of docs/HISTORY.md (each stage's figures and its core-hours from
zero; branches off the line to bgnet-deep are left out), so the figure shows what was measured
and nothing typed twice. The table of both is printed too.
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


def recipe(run_dir: Path) -> list[dict]:
    """The run's evaluations: core-hours, games, and each figure with its interval."""
    out = []
    for entry in json.loads((run_dir / "history.json").read_text()):
        results = entry.get("eval")
        if not results:
            continue
        row = {"games": entry["games"], "core_hours": entry["core_hours"]}
        for key, opp in (("pubeval", "pubeval"), ("gnubg", "gnubg:0")):
            if "ppg" in results.get(opp, {}):
                row[key], row[key + "_ci"] = results[opp]["ppg"], results[opp]["ppg_ci95"]
        if "error_rate" in results:
            row["er"] = results["error_rate"]["er"]
        out.append(row)
    return out


def plot(rec: list[dict], hand: list[dict], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("pubeval", "ppg against pubeval", 0.626), ("gnubg", "ppg against gnubg 0-ply", 0.0),
              ("er", "error rate, 0-ply (millipoints)", 2.6))
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    try:
        for ax, (key, label, gnubg) in zip(axes, panels):
            pts = [r for r in rec if key in r]
            if pts:
                xs, ys = [r["core_hours"] for r in pts], [r[key] for r in pts]
                (line,) = ax.plot(xs, ys, marker="o", label="the deep recipe")
                if key + "_ci" in pts[0]:
                    ci = [r[key + "_ci"] for r in pts]
                    ax.fill_between(xs, [y - c for y, c in zip(ys, ci)], [y + c for y, c in zip(ys, ci)],
                                    color=line.get_color(), alpha=0.15, lw=0)
            hp = [r for r in hand if key in r]
            ax.plot([r["core_hours"] for r in hp], [r[key] for r in hp], marker="s", ls="--",
                    label="the hand path (stages 1-23)")
            ax.axhline(gnubg, color="grey", lw=0.8, ls=":", label="gnubg 0-ply")
            ax.set_xlabel("compute (core-hours)")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path, help="the recipe's run folder (holding history.json)")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "deep-recipe-vs-hand.png")
    p.add_argument("--title", default="strength per compute: the deep recipe and the hand path")
    a = p.parse_args()
    rec, hand = recipe(a.run_dir), hand_path(ROOT / "docs" / "HISTORY.md")
    print(f"{'':34s} {'core-h':>7s} {'pubeval':>8s} {'gnubg:0':>8s} {'er':>5s}")
    for name, rows in (("recipe", [dict(r, name=f"{r['games']:,} games") for r in rec]), ("hand", hand)):
        for r in rows:
            cells = [f"{r[k]:+8.3f}" if k in r else f"{'':>8s}" for k in ("pubeval", "gnubg")]
            er = f"{r['er']:5.2f}" if "er" in r else ""
            print(f"{name + ': ' + r['name']:34.34s} {r['core_hours']:7.2f} {cells[0]} {cells[1]} {er}")
    plot(rec, hand, a.out, a.title)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
