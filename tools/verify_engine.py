"""Compare bgnet's legal moves with GNU Backgammon's on many self-play positions.

Positions come from random-move, pubeval and gnubg 0-ply self-play (and gnubg with some random
moves mixed in), so that bar entries, closed boards, bear-offs with contact, doubles, one-die-only
and no-move cases are all present. Prints the case counts and the number of differences (the goal
is zero).

    python3 tools/verify_engine.py --positions 200000
"""
from __future__ import annotations

import argparse
import time

from bgnet.engine.sampling import random_chooser, sample_positions
from bgnet.measure.reference_play import compare_moves, describe_cases, gnubg_chooser, mixed_chooser, pubeval_chooser


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    sources = [("random", random_chooser, 0.3), ("pubeval", pubeval_chooser, 0.3),
               ("gnubg", gnubg_chooser, 0.2), ("gnubg+10% random", mixed_chooser(0.1), 0.2)]
    total_bad = 0
    totals: dict[str, int] = {}
    for k, (name, chooser, share) in enumerate(sources):
        n = int(a.positions * share)
        t = time.time()
        boards, dice = sample_positions(n, seed=a.seed + k, chooser=chooser)
        bad = compare_moves(boards, dice)
        cases = describe_cases(boards, dice)
        for key, v in cases.items():
            totals[key] = totals.get(key, 0) + v
        total_bad += len(bad)
        print(f"{name:>18s}: {n:7d} positions, {len(bad)} differences ({time.time() - t:.0f} s)")
        for i in bad[:5]:
            print("   differs:", boards[i].tolist(), dice[i].tolist())
    print("cases:", ", ".join(f"{k} {v}" for k, v in totals.items()))
    print(f"total: {totals['positions']} positions, {total_bad} differences")
    return 1 if total_bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
