"""Play with the cube, measured: A's match win rate over M matches to N points (95 % Wilson
interval) and the speed in matches per second; optionally money games with the cube too.

    python3 benchmarks/bench_cube_play.py --a gnubg:0 --b pubeval --length 7 --matches 200
    python3 benchmarks/bench_cube_play.py --money 400 --jacoby

Bots that cannot value positions (pubeval, random) never double and take every double, so
gnubg:0 against pubeval measures GNU Backgammon's net with its cube against a player who never
uses the cube and never drops.
"""
from __future__ import annotations

import argparse
import json
import sys

from bgnet.bots import load_bot
from bgnet.measure.cube_play import play_matches, play_money_cube


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", default="gnubg:0", help="bot A (default gnubg:0)")
    p.add_argument("--b", default="pubeval", help="bot B (default pubeval)")
    p.add_argument("--length", type=int, default=7, help="match length (default 7)")
    p.add_argument("--matches", type=int, default=200, help="matches to play (default 200; 0: none)")
    p.add_argument("--money", type=int, default=0, help="also play this many money games with "
                   "the cube (even: duplicate dice)")
    p.add_argument("--jacoby", action="store_true", help="Jacoby rule in the money games")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write the figures to this JSON file")
    a = p.parse_args(argv)
    bot_a, bot_b = load_bot(a.a), load_bot(a.b)
    out = {}
    if a.matches > 0:
        r = play_matches(bot_a, bot_b, a.length, a.matches, seed=a.seed, progress=sys.stderr.isatty())
        print(r.summary())
        lo, hi = r.win_rate_ci95
        print(f"\n{r.bot_a} wins {100 * r.win_rate:.1f} % of {r.length}-point matches "
              f"(95 % interval {100 * lo:.1f} - {100 * hi:.1f} %), {r.matches_per_second:.2f} matches/s\n")
        out["matches"] = r.to_dict()
    if a.money > 0:
        m = play_money_cube(bot_a, bot_b, a.money + a.money % 2, seed=a.seed, jacoby=a.jacoby,
                            progress=sys.stderr.isatty())
        print(m.summary())
        out["money"] = m.to_dict()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
        print(f"written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
