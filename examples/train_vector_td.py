"""Train an agent of your own on bgnet's vector environment: afterstate TD(0) with a small torch net.

The agent values each legal afterstate of its turn (the environment gives them in action order),
plays the best, and learns from the next afterstate it chooses, or from the points when the game
ends. It trains first against the random bot, then against pubeval, and is measured (greedy, no
learning) against both after each phase. Everything runs on one CPU core.

    pip install -c constraints.txt -e ".[envs,train,ref]"   # gymnasium, torch, pubeval (gnubg-nn)
    python3 examples/train_vector_td.py                   # the figures in the README
    python3 examples/train_vector_td.py --tiny            # a check that it runs (seconds)
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bgnet.bots.simple import segment_argmax  # noqa: E402
from bgnet.envs import BackgammonVectorEnv  # noqa: E402
from bgnet.nn.encode import encode, num_features  # noqa: E402

torch.set_num_threads(1)


def make_net(inputs: int, hidden: int) -> torch.nn.Module:
    """Expected points of the game (-3 .. 3) after an afterstate, from the agent's side."""
    return torch.nn.Sequential(torch.nn.Linear(inputs, hidden), torch.nn.Sigmoid(), torch.nn.Linear(hidden, 1))


def choose(net, env, encoding: str, epsilon: float, rng: np.random.Generator):
    """The action of every game (the afterstate the net values most; a random legal one with
    chance ``epsilon``), the chosen afterstates' features and the games that had a move."""
    after, offsets = env.afterstates()
    counts = np.diff(offsets)
    live = counts > 0
    actions = np.zeros(env.num_envs, np.int64)
    if not live.any():
        return actions, np.zeros((0, num_features(encoding)), np.float32), live
    x = encode(after, encoding)  # the agent's checkers first, as the observation
    with torch.no_grad():
        values = net(torch.from_numpy(x)).numpy().reshape(-1).astype(np.float64)
    seg = np.concatenate([[0], np.cumsum(counts[live])])
    best = segment_argmax(values, seg) - seg[:-1]
    explore = rng.random(len(best)) < epsilon
    best[explore] = (rng.random(int(explore.sum())) * counts[live][explore]).astype(np.int64)
    actions[live] = best
    return actions, x[seg[:-1] + best], live


def train(net, opt, env, encoding: str, games: int, epsilon: float, rng) -> int:
    """TD(0) on the agent's afterstates until ``games`` games have ended; returns the steps."""
    env.reset(seed=int(rng.integers(2**31)))
    n = env.num_envs
    prev = np.zeros((n, num_features(encoding)), np.float32)
    has_prev = np.zeros(n, bool)
    finished = steps = 0
    while finished < games:
        actions, chosen, live = choose(net, env, encoding, epsilon, rng)
        inputs, targets = [], []
        pending = has_prev & live  # the afterstate chosen last step is valued by this one's
        if pending.any():
            with torch.no_grad():
                nxt = net(torch.from_numpy(chosen[pending[live]])).numpy().reshape(-1)
            inputs.append(prev[pending])
            targets.append(nxt)
        prev[live] = chosen
        has_prev = live.copy()
        _, rewards, terminated, _, _ = env.step(actions)
        if terminated.any():  # the game's points are the target of its last afterstate
            inputs.append(prev[terminated])
            targets.append(rewards[terminated].astype(np.float32))
            has_prev &= ~terminated
            finished += int(terminated.sum())
        if inputs:
            x = torch.from_numpy(np.concatenate(inputs))
            y = torch.from_numpy(np.concatenate(targets)).reshape(-1, 1)
            loss = torch.nn.functional.mse_loss(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        steps += 1
    return steps


def measure(net, env, encoding: str, games: int, seed: int) -> tuple[float, float]:
    """Mean points a game of the greedy agent, with a 95 % half-width, over ``games`` games."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    results: list[float] = []
    while len(results) < games:
        actions, _, _ = choose(net, env, encoding, 0.0, rng)
        _, rewards, terminated, _, _ = env.step(actions)
        results += rewards[terminated].tolist()
    r = np.array(results[:games])
    return float(r.mean()), float(1.96 * r.std(ddof=1) / np.sqrt(len(r)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=128, help="games in flight")
    ap.add_argument("--encoding", default="contact", help="tesauro, extended or contact")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epsilon", type=float, default=0.02)
    ap.add_argument("--random-games", type=int, default=5_000, help="training games against random")
    ap.add_argument("--pubeval-games", type=int, default=60_000, help="training games against pubeval")
    ap.add_argument("--eval-games", type=int, default=4_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", help="write the trained net's weights here (torch.save)")
    ap.add_argument("--tiny", action="store_true", help="a few games of each phase: a check that it runs")
    a = ap.parse_args()
    if a.tiny:
        a.envs, a.random_games, a.pubeval_games, a.eval_games = 8, 30, 20, 20
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    net = make_net(num_features(a.encoding), a.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    phases = [("random", a.random_games)]
    if importlib.util.find_spec("gnubg_nn") is not None:
        phases.append(("pubeval", a.pubeval_games))
    else:
        print("pubeval needs gnubg-nn (pip install 'bgnet[ref]'): training against random only")
    start = time.perf_counter()
    for opponent, games in phases:
        env = BackgammonVectorEnv(a.envs, opponent=opponent, encoding=a.encoding)
        t = time.perf_counter()
        steps = train(net, opt, env, a.encoding, games, a.epsilon, rng)
        print(f"trained {games} games against {opponent} in {time.perf_counter() - t:.0f} s ({steps} steps)")
        for judge, _ in phases:
            ppg, half = measure(net, BackgammonVectorEnv(a.envs, opponent=judge, encoding=a.encoding),
                                a.encoding, a.eval_games, seed=a.seed + 1)
            print(f"  vs {judge}: {ppg:+.3f} ± {half:.3f} points a game over {a.eval_games} games")
    print(f"total {time.perf_counter() - start:.0f} s")
    if a.save:
        torch.save(net.state_dict(), a.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
