"""Where a bot's checker-play errors lie: ``bgnet bench er`` split by kind of decision, side by
side with GNU Backgammon 0-ply on the same decisions.

For each group of decisions (game phase, checkers back, doubles, number of legal moves, a
checker on the bar) it prints how many there are, both error rates (millipoints a decision) and
the group's share of the whole gap between the two bots. A gap spread over the groups as the
decisions are says the bot is uniformly less accurate (more training or a larger net); a gap
that sits in one group points at what to fix there (inputs, a separate net, more positions of
that kind).

For a net bot it also prints how its equities of a decision's moves compare with the
reference's (GNU Backgammon's 1-ply equities, which every move has), each taken relative to
the decision's mean (only differences between moves decide
a choice): the slope of the net's on the reference's (below 1: the net sees the moves as closer
than they are) and how much of its remaining error a linear fit on its own hand-made inputs
(the ``extended`` encoding's features of both sides) explains. A small share there says the
inputs are not what the net lacks.

    python3 benchmarks/er_breakdown.py --bot checkpoints/bgnet-deep.onnx [--reference 2-ply]
"""
from __future__ import annotations

import argparse

import numpy as np

from bgnet.bots.evaluator import parent_rows
from bgnet.bots.load import load_bot
from bgnet.measure.er import PHASES, decision_losses, load_benchmark


def groups(bench) -> dict[str, dict[str, np.ndarray]]:
    """Named masks over the decisions, one family per kind of split."""
    boards = bench.boards.astype(np.int64)
    on_roll = boards[:, 1]
    back = on_roll[:, 18:25].sum(axis=1)  # in the opponent's home board or on the bar
    moves = np.diff(bench.offsets)
    doubles = bench.dice[:, 0] == bench.dice[:, 1]
    return {
        "phase": {name: np.isin(bench.phase, codes) for name, codes in PHASES.items()},
        "checkers back": {f"{k}": back == k for k in range(4)} | {"4+": back >= 4},
        "roll": {"doubles": doubles, "non-doubles": ~doubles},
        "legal moves": {"2-9": moves < 10, "10-19": (moves >= 10) & (moves < 20),
                        "20-39": (moves >= 20) & (moves < 40), "40+": moves >= 40},
        "on the bar": {"yes": on_roll[:, 24] > 0, "no": on_roll[:, 24] == 0},
    }


def print_breakdown(bench, bot_loss: np.ndarray, ref_loss: np.ndarray, name: str) -> None:
    gap = float((bot_loss - ref_loss).sum())
    print(f"{'group':24s} {'decisions':>9s} {name[:12]:>12s} {'gnubg 0-ply':>12s} {'gap share':>12s}")
    for family, masks in groups(bench).items():
        for label, m in masks.items():
            if not m.any():
                continue
            share = float((bot_loss[m] - ref_loss[m]).sum()) / gap if gap else float("nan")
            print(f"{family + ': ' + label:24s} {int(m.sum()):9d} {bot_loss[m].mean():12.2f} "
                  f"{ref_loss[m].mean():12.2f} {share:12.2f}")
    print(f"{'all':24s} {len(bot_loss):9d} {bot_loss.mean():12.2f} {ref_loss.mean():12.2f} {1.0:12.2f}")


def within_decision(values: np.ndarray, rows_of: np.ndarray) -> np.ndarray:
    """Each value minus the mean over its decision's moves."""
    sums = np.bincount(rows_of, values)
    counts = np.bincount(rows_of)
    return values - (sums / counts)[rows_of]


def print_equity_fit(bot, bench) -> None:
    """Compare the net's move equities with the reference's within each decision."""
    from bgnet.nn.encode import EXTRA_START, encode_afterstates
    from bgnet.nn.probs import equity

    ev = getattr(bot, "eval", None)
    if ev is None or not hasattr(ev, "afterstates"):
        print("(not a net bot: no equity comparison)")
        return
    rows_of = parent_rows(bench.offsets)  # the decision of each move
    net = within_decision(equity(ev.afterstates(bench.after)).astype(np.float64), rows_of)
    ref = within_decision(bench.equity.astype(np.float64), rows_of)
    slope = float(np.dot(net, ref) / np.dot(ref, ref))
    resid = net - ref
    x = encode_afterstates(bench.after, "extended")[:, EXTRA_START:].astype(np.float64)
    x = np.column_stack([within_decision(c, rows_of) for c in x.T])
    beta, *_ = np.linalg.lstsq(x, resid, rcond=None)
    explained = 1.0 - float(((resid - x @ beta) ** 2).mean() / (resid ** 2).mean())
    print(f"move equities relative to their decision's mean, {len(net)} moves, 1-ply reference: "
          f"slope of the net's on the reference's {slope:.3f}; error (rms {resid.std() * 1000:.1f} millipoints) "
          f"explained by a linear fit on the net's hand-made inputs: {explained:.1%}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bot", default="checkpoints/bgnet-deep.onnx", help="bot spec, as bgnet eval takes")
    p.add_argument("--reference", default="2-ply", choices=("1-ply", "2-ply"))
    p.add_argument("--decisions", type=int, default=0, help="only the first N decisions (0: all)")
    args = p.parse_args(argv)
    bench = load_benchmark(reference=args.reference)
    if args.decisions:
        bench = bench.head(args.decisions)
    bot = load_bot(args.bot)
    name = getattr(bot, "name", args.bot)
    bot_loss = decision_losses(bot, bench) * 1000.0
    ref_loss = decision_losses(load_bot("gnubg:0"), bench) * 1000.0
    print(f"{name} against gnubg 0-ply on {len(bench)} decisions ({args.reference} reference), "
          "millipoints a decision:")
    print_breakdown(bench, bot_loss, ref_loss, name)
    # Every move has a 1-ply equity (the 2-ply one covers each decision's best moves only).
    flat = load_benchmark(reference="1-ply")
    print_equity_fit(bot, flat.head(args.decisions) if args.decisions else flat)


if __name__ == "__main__":
    main()
