"""What ``train.move_filter`` costs in play: on the contact decisions of ``bgnet bench er``, how
often the filtered choice differs from the net's own and how many millipoints a decision it adds
(GNU Backgammon's reference equities), for several ``keep``.

The filter's readout is fitted as in self-play (:class:`bgnet.train.move_filter.MoveFilter`: a
full evaluation of one batch), on the even-numbered decisions, and judged on the odd ones.

    python3 benchmarks/bench_move_filter.py [--net bgnet-deep] [--keep 4 6 8 10]
"""
from __future__ import annotations

import argparse

import numpy as np
from shipped_net import DEFAULT_NET, torch_net

from bgnet.bots.evaluator import afterstates_of, parent_rows
from bgnet.bots.gnubg_bots import money_equity
from bgnet.bots.net import NetEvaluator
from bgnet.bots.simple import segment_argmax
from bgnet.measure.er import load_benchmark
from bgnet.train.move_filter import MoveFilter, valued_equity


def subset(bench, decisions: np.ndarray):
    """(positions, afterstates, offsets, reference equities) of the chosen decisions."""
    rows = np.concatenate([np.arange(bench.offsets[d], bench.offsets[d + 1]) for d in decisions])
    off = np.concatenate([[0], np.cumsum(np.diff(bench.offsets)[decisions])]).astype(np.int64)
    return bench.boards[decisions], bench.after[rows], off, bench.equity[rows].astype(np.float64)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--net", default=DEFAULT_NET,
                    help=f"a checkpoint, a .onnx bot, bgnet-deep or bgnet-default (default {DEFAULT_NET})")
    ap.add_argument("--keep", type=int, nargs="+", default=[4, 6, 8, 10])
    ap.add_argument("--reference", default="2-ply", choices=("1-ply", "2-ply"))
    a = ap.parse_args(argv)
    bench = load_benchmark(reference=a.reference)
    contact = np.flatnonzero(np.isin(bench.phase, (4, 5)))  # contact and crashed
    fit_set, test_set = subset(bench, contact[0::2]), subset(bench, contact[1::2])
    net = torch_net(a.net)
    boards, after, off, equity = test_set
    best = np.maximum.reduceat(equity, off[:-1])
    full = afterstates_of(NetEvaluator(net, "cpu"), after, boards, parent_rows(off))
    own = segment_argmax(money_equity(full), off)
    own_loss = (best - equity[own]) * 1000
    print(f"{a.net}: {len(off) - 1} contact decisions ({a.reference} reference), the net's own "
          f"choice {own_loss.mean():.3f} millipoints a decision")
    for keep in a.keep:
        mf = MoveFilter(NetEvaluator(net, "cpu"), keep)
        mf.values(*fit_set[1::-1], fit_set[2])  # the first call fits the readout (full evaluation)
        got = mf.values(after, boards, off)
        chosen = segment_argmax(valued_equity(got), off)
        loss = (best - equity[chosen]) * 1000
        print(f"keep {keep:2d}: differs in {np.mean(chosen != own):6.2%} of decisions; "
              f"{loss.mean():.3f} millipoints a decision ({loss.mean() - own_loss.mean():+.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
