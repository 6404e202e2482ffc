"""What the move filter saves and costs under search targets (``train.search_target`` with
``train.move_filter``): 1-ply values of self-play positions, every reply valued in full
(:class:`bgnet.bots.net.NetBot`) against the filtered search
(:class:`bgnet.train.move_filter.FilteredOnePly`), side by side in one run.

It prints positions a second of each (one thread), the speed-up, and how far the filtered values
fall from the full ones (the mover's money equity: mean, 99th percentile, largest), next to how
far the full 1-ply values are from the net's own 0-ply ones, the change a search target makes.

    python3 benchmarks/bench_search_filter.py [--net bgnet-deep] [--keep 6 8 12]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from shipped_net import DEFAULT_NET, torch_net

from bgnet.bots.gnubg_bots import money_equity
from bgnet.bots.net import NetBot, NetEvaluator
from bgnet.train.learn import SEARCH_SLICE
from bgnet.train.move_filter import FilteredOnePly
from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings


def selfplay_boards(net, n: int, seed: int) -> np.ndarray:
    """``n`` positions (side on roll about to roll) from the net's own self-play games."""
    pool = SelfPlayPool(NetEvaluator(net, "cpu"), SelfPlaySettings(parallel_games=256, bearoff=True),
                        np.random.default_rng(seed))
    got: list[np.ndarray] = []
    while sum(len(b) for b in got) < n:
        got.append(pool.step().boards)
    return np.concatenate(got)[:n]


def timed(search, boards: np.ndarray) -> tuple[np.ndarray, float]:
    """1-ply values of ``boards`` in slices as search targets take them, and the seconds taken."""
    start = time.perf_counter()
    values = np.concatenate([search.evaluate(boards[lo:lo + SEARCH_SLICE], ply=1)
                             for lo in range(0, len(boards), SEARCH_SLICE)])
    return values, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--net", default=DEFAULT_NET,
                    help=f"a checkpoint, a .onnx bot, bgnet-deep or bgnet-default (default {DEFAULT_NET})")
    ap.add_argument("--keep", type=int, nargs="+", default=[6, 8, 12])
    ap.add_argument("--positions", type=int, default=8192,
                    help="positions timed: 16 slices, so the readout is refitted once as in training")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    net = torch_net(a.net)
    boards = selfplay_boards(net, a.positions + SEARCH_SLICE, a.seed)
    warm, boards = boards[:SEARCH_SLICE], boards[SEARCH_SLICE:]
    full = NetBot(NetEvaluator(net, "cpu"), ply=1)
    full.evaluate(warm[:8])  # compile outside the timing
    exact, seconds = timed(full, boards)
    eq = money_equity(exact)
    shift = np.abs(eq - money_equity(full.evaluate(boards, ply=0)))
    print(f"{a.net}: {len(boards)} self-play positions, 1-ply values on one thread")
    print(f"every reply valued: {len(boards) / seconds:7.0f} positions/s; the 1-ply value is "
          f"{shift.mean():.4f} from the 0-ply one on average (99th percentile {np.quantile(shift, 0.99):.4f})")
    for keep in a.keep:
        search = FilteredOnePly(NetEvaluator(net, "cpu"), keep)
        search.evaluate(warm)  # the first call fits the readout on a full evaluation
        got, took = timed(search, boards)
        diff = np.abs(money_equity(got) - eq)
        print(f"keep {keep:2d}: {len(boards) / took:7.0f} positions/s ({seconds / took:.2f}x); "
              f"equity off by {diff.mean():.5f} on average, 99th percentile "
              f"{np.quantile(diff, 0.99):.4f}, at most {diff.max():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
