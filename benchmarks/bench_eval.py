"""Speed of head-to-head evaluation, in games per second, measured in one run:

1. GNU Backgammon 0-ply vs pubeval, one game at a time, calling ``gnubg_nn`` directly (the
   yardstick: no harness at all);
2. the same match through bgnet's batched harness (``bgnet.measure.match.play_games``);
3. a network bot (``bgnet.nn.model.ValueNet``, afterstates valued by
   ``bgnet.nn.model.evaluate_afterstates``, all positions of a ply in one call) vs pubeval through
   the harness. The net is untrained: only its speed is measured.

    python3 benchmarks/bench_eval.py --games 2000
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from bgnet.bots import load_bot
from bgnet.bots.gnubg_bots import import_gnubg_nn, play_steps
from bgnet.bots.simple import GreedyBot, terminal_points
from bgnet.engine.board import start_position, swap
from bgnet.measure.match import play_games


def direct_games_per_second(games: int, seed: int) -> tuple[float, float]:
    """gnubg 0-ply vs pubeval one game at a time, straight through gnubg_nn: (games/s, ppg)."""
    g = import_gnubg_nn()
    rng = np.random.default_rng(seed)
    total = 0
    t0 = time.perf_counter()
    for k in range(games):
        board = start_position()
        gnubg_on_roll = k % 2 == 0
        d = rng.integers(1, 7, size=2)
        while d[0] == d[1]:
            d = rng.integers(1, 7, size=2)
        while True:
            lst = board.tolist()
            if gnubg_on_roll:
                steps = g.best_move(lst, int(d[0]), int(d[1]), 0)
            else:
                flat = g.pub_best_move(lst, int(d[0]), int(d[1]))
                steps = [(flat[i] + 1, flat[i + 1] + 1) for i in range(0, len(flat), 2)]
            arr = np.full((1, 4, 2), -1, np.int8)
            if steps:
                arr[0, : len(steps)] = steps
            after = play_steps(board[None], arr)[0]
            won = int(terminal_points(after[None])[0])
            if won:
                total += won if gnubg_on_roll else -won
                break
            board = swap(after)
            gnubg_on_roll = not gnubg_on_roll
            d = rng.integers(1, 7, size=2)
    seconds = time.perf_counter() - t0
    return games / seconds, total / games


def net_bot(hidden: int):
    """An untrained ValueNet as a greedy bot, or None with the reason when bgnet.nn is missing."""
    try:
        import torch

        from bgnet.nn.model import ValueNet, equity, evaluate_afterstates
    except ImportError as e:
        return None, f"pending: the network module is not available ({e})"
    torch.set_num_threads(1)  # one thread is fastest for small MLPs on a busy 2-core machine
    torch.manual_seed(0)
    net = ValueNet("tesauro", hidden).eval()
    bot = GreedyBot(lambda after: equity(evaluate_afterstates(net, after)), name=f"net{hidden}")
    return bot, ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="games per second of head-to-head evaluation")
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--direct-games", type=int, default=500,
                   help="games of the one-at-a-time yardstick")
    p.add_argument("--hidden", type=int, default=80, help="hidden units of the net bot")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args(argv)
    games = a.games + a.games % 2

    # Warm up the compiled kernels and the reference programs so no run pays for loading.
    play_games(load_bot("gnubg:0"), load_bot("pubeval"), 20, seed=99, progress=False)

    gps, ppg = direct_games_per_second(a.direct_games, a.seed)
    print(f"gnubg:0 vs pubeval, one game at a time through gnubg_nn: {gps:7.1f} games/s"
          f" ({a.direct_games} games, gnubg {ppg:+.2f} ppg)")

    r = play_games(load_bot("gnubg:0"), load_bot("pubeval"), games, seed=a.seed, progress=False)
    print(f"gnubg:0 vs pubeval through the harness:                {r.games_per_second:7.1f} games/s"
          f" ({games} games, gnubg {r.ppg:+.3f} ± {r.ppg_ci95:.3f} ppg, {r.mean_plies:.1f} plies)")

    bot, why = net_bot(a.hidden)
    if bot is None:
        print(f"net vs pubeval through the harness: {why}")
        return 0
    play_games(bot, load_bot("pubeval"), 20, seed=99, progress=False)
    rn = play_games(bot, load_bot("pubeval"), games, seed=a.seed, progress=False)
    print(f"{bot.name} (untrained) vs pubeval through the harness:      {rn.games_per_second:7.1f} games/s"
          f" ({games} games, {rn.mean_plies:.1f} plies)")
    verdict = "at least as fast as" if rn.games_per_second >= r.games_per_second else "SLOWER than"
    print(f"net-vs-pubeval is {verdict} gnubg-vs-pubeval"
          f" ({rn.games_per_second / r.games_per_second:.2f}x)")
    netbot = play_bot(a.hidden)
    if netbot is not None:
        play_games(netbot, load_bot("pubeval"), 20, seed=99, progress=False)
        rb = play_games(netbot, load_bot("pubeval"), games, seed=a.seed, progress=False)
        print(f"NetBot (bgnet.bots.net, 0-ply, untrained) vs pubeval:     {rb.games_per_second:7.1f} games/s"
              f" ({games} games, {rb.mean_plies:.1f} plies)")
    return 0


def play_bot(hidden: int):
    """The project's playing net bot around the same untrained net, when that module exists."""
    try:
        import torch

        from bgnet.bots.net import NetBot
        from bgnet.nn.model import ValueNet
    except ImportError:
        return None
    torch.manual_seed(0)
    return NetBot(ValueNet("tesauro", hidden), ply=0, name=f"netbot{hidden}")


if __name__ == "__main__":
    sys.exit(main())
