"""Rollout speed: bgnet's batched rollout beside the same rollout played with ``gnubg_nn`` moves in
a Python loop, trials per second and the ratio, in one run.

Both roll out the same position to the end of the game (no truncation) at 0-ply, with the first
two rolls cycled, in two modes:

* ``plain``: no luck correction: each ply costs one move choice per trial;
* ``luck``: luck correction as ``bgnet rollout`` does it: every ply also finds and evaluates the
  best move of all 21 rolls (the Python loop does that with ``gnubg_nn.best_move`` and
  ``gnubg_nn.probabilities``, one call per roll).

bgnet plays with its shipped net (``--bot``); the loop with GNU Backgammon's 0-ply net. The nets
differ in size (bgnet's is larger), so the ratio measures the engines, nets included.

Usage::

    python3 benchmarks/bench_rollout.py [--trials 144] [--loop-trials 36] [--position ID]
        [--modes plain,luck] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bgnet.analyze.rollout import (
    ROLL_WEIGHTS,
    ROLLS,
    DiceStreams,
    RolloutSettings,
    run_trials,
)
from bgnet.engine import board_from_position_id
from bgnet.engine.sampling import play_steps
from bgnet.nn.probs import flip

# A middle-game contact position (after 31: 8/5 6/5, 64: 24/18 13/9, with the first player on
# roll): long games, as rollouts mostly are.
DEFAULT_POSITION = "4HPwATDgc/ABMA"


def _gnubg_move(g, board: np.ndarray, d1: int, d2: int) -> np.ndarray:
    """The afterstate ``gnubg_nn.best_move`` plays at 0-ply."""
    pairs = g.best_move(board.tolist(), d1, d2, 0)
    steps = np.full((1, 4, 2), -1, np.int8)
    for k, (a, b) in enumerate(pairs):
        steps[0, k] = a, b
    return play_steps(board[None], steps)[0]


def _gnubg_value(g, after: np.ndarray) -> np.ndarray:
    """The mover's 0-ply probabilities of an afterstate, by gnubg's net."""
    if int(after[1].sum()) == 0:
        out = np.zeros(5)
        out[0] = 1.0
        return out
    return flip(np.asarray(g.probabilities(after[::-1].tolist(), 0), np.float64))


def loop_rollout(board: np.ndarray, trials: int, seed: int, luck: bool) -> tuple[float, float]:
    """A rollout played one trial and one move at a time with ``gnubg_nn``: (equity, seconds)."""
    import gnubg_nn as g

    dice = DiceStreams(trials, seed, cycle=True)
    t0 = time.perf_counter()
    results = []
    roll_index = {tuple(r): k for k, r in enumerate(ROLLS.tolist())}
    for t in range(trials):
        b = board.copy()
        sign, ply, corr = 1.0, 0, 0.0
        # The trial's rolls fetched at once, as a loop written for speed would.
        rolls = dice.get(np.full(400, t), np.arange(400)).tolist()
        while True:
            d1, d2 = rolls[ply]
            if luck:
                vals = []
                for r1, r2 in ROLLS:
                    v = _gnubg_value(g, _gnubg_move(g, b, int(r1), int(r2)))
                    vals.append(2 * v[0] - 1 + v[1] - v[3] + v[2] - v[4])
                k = roll_index[(min(d1, d2), max(d1, d2))]
                corr += sign * (vals[k] - float(np.dot(ROLL_WEIGHTS, vals)))
            after = _gnubg_move(g, b, d1, d2)
            if after[1].sum() == 0:
                pts = 1 + (after[0].sum() == 15)  # backgammons left out: the timing is the point
                results.append(sign * pts - corr)
                break
            b = after[::-1].copy()
            sign, ply = -sign, ply + 1
    return float(np.mean(results)), time.perf_counter() - t0


def batched_rollout(bot, board: np.ndarray, trials: int, seed: int, luck: bool) -> tuple[float, float]:
    settings = RolloutSettings(trials=trials, seed=seed, luck=luck, bearoff=False)
    t0 = time.perf_counter()
    out = run_trials(bot, board[None], settings)
    seconds = time.perf_counter() - t0
    vals = out.raw[0] - out.luck[0]
    eq = 2 * vals[:, 0] - 1 + vals[:, 1] - vals[:, 3] + vals[:, 2] - vals[:, 4]
    return float(eq.mean()), seconds


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=144, help="bgnet's trials per mode (default 144)")
    p.add_argument("--loop-trials", type=int, default=36,
                   help="the Python loop's trials per mode (default 36; it is the slow one)")
    p.add_argument("--position", default=DEFAULT_POSITION, help="Position ID to roll out")
    p.add_argument("--bot", help="bgnet bot spec (default: the shipped bot)")
    p.add_argument("--modes", default="plain,luck", help="plain, luck or both (default)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the figures to this file")
    a = p.parse_args(argv)

    import gnubg_nn  # noqa: F401  (fail early when the reference is missing)

    from bgnet.bots import default_bot_path, load_bot

    bot = load_bot(a.bot or str(default_bot_path()))
    board = board_from_position_id(a.position)
    # Warm up compiled code and caches outside the timings.
    for luck in (True, False):
        run_trials(bot, board[None], RolloutSettings(trials=2, seed=99, luck=luck, bearoff=False))
    loop_rollout(board, 1, 99, luck=False)  # gnubg_nn loads its nets at the first call
    rows = []
    for mode in a.modes.split(","):
        luck = mode.strip() == "luck"
        eq_b, sec_b = batched_rollout(bot, board, a.trials, a.seed, luck)
        eq_l, sec_l = loop_rollout(board, a.loop_trials, a.seed, luck)
        row = {"mode": mode.strip(), "bgnet_trials": a.trials, "bgnet_seconds": sec_b,
               "bgnet_trials_per_s": a.trials / sec_b, "bgnet_equity": eq_b,
               "loop_trials": a.loop_trials, "loop_seconds": sec_l,
               "loop_trials_per_s": a.loop_trials / sec_l, "loop_equity": eq_l}
        row["ratio"] = row["bgnet_trials_per_s"] / row["loop_trials_per_s"]
        rows.append(row)
        print(f"{row['mode']:>6s}: bgnet batched {row['bgnet_trials_per_s']:8.1f} trials/s "
              f"({a.trials} in {sec_b:.1f} s) | gnubg_nn Python loop {row['loop_trials_per_s']:7.1f} "
              f"trials/s ({a.loop_trials} in {sec_l:.1f} s) | ratio {row['ratio']:.1f}x", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
