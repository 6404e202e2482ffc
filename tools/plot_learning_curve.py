"""Plot a training run's learning curve (evaluation ppg against each opponent) from its TensorBoard log.

    python3 tools/plot_learning_curve.py RUN_DIR --out curve.png
"""
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def curves(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        if tag.startswith("eval/ppg_vs_"):
            out[tag[len("eval/ppg_vs_"):]] = [(e.step, e.value) for e in acc.Scalars(tag)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="PNG path (default RUN_DIR/learning_curve.png)")
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    data = curves(a.run_dir)
    if not data:
        raise SystemExit(f"no evaluation scalars in {a.run_dir / 'tb'}: was eval.every > 0?")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, pts in sorted(data.items()):
        pts.sort()
        ax.plot([g for g, _ in pts], [v for _, v in pts], marker="o", label=f"vs {name}")
        print(f"vs {name}: " + ", ".join(f"{g}: {v:+.3f}" for g, v in pts))
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("self-play games")
    ax.set_ylabel("points per game (cubeless, duplicate dice)")
    ax.set_title(a.title or f"learning curve: {a.run_dir.name}")
    ax.grid(alpha=0.3)
    ax.legend()
    out = a.out or a.run_dir / "learning_curve.png"
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
