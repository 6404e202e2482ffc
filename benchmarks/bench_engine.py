"""Afterstates per second: bgnet's batched move generator against ``gnubg_nn.moves`` (C).

Both run on the same positions (gnubg and pubeval self-play, with dice), on one core, in one run.
gnubg_nn builds a Python tuple per move, which is part of what a caller pays for it; bgnet's kernel
writes flat arrays. Each side is timed as the best of several repeats.

    python3 benchmarks/bench_engine.py
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from bgnet.engine.movegen import generate_batch  # noqa: E402
from bgnet.engine.sampling import sample_positions  # noqa: E402


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    import gnubg_nn

    from bgnet.measure.reference_play import gnubg_chooser, pubeval_chooser

    half = a.positions // 2
    b1, d1 = sample_positions(half, seed=1, chooser=gnubg_chooser)
    b2, d2 = sample_positions(a.positions - half, seed=2, chooser=pubeval_chooser)
    boards, dice = np.concatenate([b1, b2]), np.concatenate([d1, d2])
    generate_batch(boards[:10], dice[:10])  # compile outside the timing

    after, steps, offsets = generate_batch(boards, dice)
    n_after = int((steps[:, 0, 0] >= 0).sum())  # the kernel's "pass" rows are not moves
    t_bgnet = best_of(lambda: generate_batch(boards, dice), a.repeats)

    lists = [b.tolist() for b in boards]
    pairs = [(int(x), int(y)) for x, y in dice]
    moves = gnubg_nn.moves

    def run_gnubg():
        total = 0
        for b, (x, y) in zip(lists, pairs):
            total += len(moves(b, x, y, 1))
        return total

    n_gnubg = run_gnubg()
    t_gnubg = best_of(run_gnubg, a.repeats)
    r_bgnet, r_gnubg = n_after / t_bgnet, n_gnubg / t_gnubg
    print(f"positions: {len(boards)} (gnubg and pubeval self-play); afterstates: bgnet {n_after}, gnubg {n_gnubg}")
    print(f"bgnet generate_batch : {r_bgnet / 1e6:6.2f} M afterstates/s ({t_bgnet * 1e3:.1f} ms)")
    print(f"gnubg_nn.moves       : {r_gnubg / 1e6:6.2f} M afterstates/s ({t_gnubg * 1e3:.1f} ms)")
    print(f"ratio bgnet / gnubg  : {r_bgnet / r_gnubg:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
