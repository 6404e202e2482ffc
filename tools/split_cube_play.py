"""Where a bot loses games with the cube: its checker plays or its cube decisions.

    python3 tools/split_cube_play.py --bot bgnet-deep --opponent gnubg:0 --games 40000 --seed 79

Plays two money sessions with the cube against the opponent, on duplicate dice, each with a
player made of two halves:

* **cube decisions alone**: the opponent's checker plays, the bot's cube decisions (doubles and
  takes). Both sides then move alike, so the games part only where the cube actions differ: the
  result is what the bot's cube decisions gain or lose against the opponent's, with a narrow
  interval;
* **checker plays alone**: the bot's checker plays (by cubeful equity where it ranks moves so),
  the opponent's cube decisions.

Set beside the bot itself against the same opponent (``bgnet eval BOT OPP --cube``) and its
cubeless result (``bgnet eval BOT OPP``) on the same seed, the two say which half a deficit comes
from. The opponent must value positions (its cube decisions come from its probabilities).
"""
from __future__ import annotations

import argparse
import time

from bgnet.bots import load_bot
from bgnet.bots.base import Bot
from bgnet.measure.cube_play import play_money_cube


class Halves(Bot):
    """A player whose checker plays are one bot's and whose cube decisions are another's."""

    can_evaluate = True

    def __init__(self, mover: Bot, cuber: Bot):
        self.mover, self.cuber = mover, cuber
        self.name = f"{mover.name} moves, {cuber.name} cube"

    def choose_moves(self, boards, dice):
        return self.mover.choose_moves(boards, dice)

    def choose_moves_with_cube(self, boards, dice, contexts):
        return self.mover.choose_moves_with_cube(boards, dice, contexts)

    def evaluate(self, boards, ply=None):
        return self.cuber.evaluate(boards)

    def cube_settings(self):
        return self.cuber.cube_settings()

    def cube_decisions(self, boards, contexts, ply=None, *, met=None, efficiency=None):
        return self.cuber.cube_decisions(boards, contexts, ply, met=met, efficiency=efficiency)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bot", default="bgnet-deep")
    ap.add_argument("--opponent", default="gnubg:0")
    ap.add_argument("--games", type=int, default=40000, help="even: duplicate dice (40000)")
    ap.add_argument("--seed", type=int, default=79)
    a = ap.parse_args()
    bot, opp = load_bot(a.bot), load_bot(a.opponent)
    if not opp.can_evaluate:
        ap.error(f"{a.opponent} does not value positions, so it has no cube decisions to lend")
    for label, player in (("cube decisions alone", Halves(opp, bot)),
                          ("checker plays alone", Halves(bot, opp))):
        t = time.perf_counter()
        r = play_money_cube(player, opp, a.games, seed=a.seed, progress=False)
        print(f"{label:21s} ({player.name} vs {opp.name}): {r.ppg:+.3f} ± {r.ppg_ci95:.3f} ppg "
              f"over {a.games} games ({time.perf_counter() - t:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
