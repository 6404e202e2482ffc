"""Check the match harness and the pubeval opponent against a known figure.

GNU Backgammon 0-ply against pubeval, cubeless money games with duplicate dice, was measured over
120,000 games at +0.626 ± 0.007 points per game for gnubg (see the reference notes). This plays
the same match through bgnet's harness (``bgnet.measure.match.play_games``) and says whether the
result lands inside that interval.

    python3 benchmarks/check_pubeval.py --games 20000
"""
from __future__ import annotations

import argparse
import json
import sys

from bgnet.bots import load_bot
from bgnet.measure.match import play_games

REFERENCE_PPG = 0.626
REFERENCE_CI95 = 0.007
REFERENCE_GAMES = 120_000


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="gnubg 0-ply vs pubeval against the known figure")
    p.add_argument("--games", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the match result here")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    games = a.games + a.games % 2
    r = play_games(load_bot("gnubg:0"), load_bot("pubeval"), games, seed=a.seed,
                   progress=not a.quiet)
    print(r.summary())
    lo, hi = REFERENCE_PPG - REFERENCE_CI95, REFERENCE_PPG + REFERENCE_CI95
    inside = lo <= r.ppg <= hi
    # The two measurements are independent: their difference has the combined uncertainty.
    diff_ci = (r.ppg_ci95 ** 2 + REFERENCE_CI95 ** 2) ** 0.5
    consistent = abs(r.ppg - REFERENCE_PPG) <= diff_ci
    print(f"measured : {r.ppg:+.3f} ± {r.ppg_ci95:.3f} ppg for gnubg 0-ply ({r.games} games)")
    print(f"reference: {REFERENCE_PPG:+.3f} ± {REFERENCE_CI95:.3f} ppg ({REFERENCE_GAMES} games)")
    print(f"inside the reference interval [{lo:+.3f}, {hi:+.3f}]: {'yes' if inside else 'NO'}")
    print(f"difference {r.ppg - REFERENCE_PPG:+.3f} ± {diff_ci:.3f}: "
          f"{'consistent' if consistent else 'NOT consistent'} at 95 %")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"result": r.to_dict(), "reference_ppg": REFERENCE_PPG,
                       "reference_ci95": REFERENCE_CI95, "inside": inside}, f, indent=2)
    return 0 if inside else 1


if __name__ == "__main__":
    sys.exit(main())
