"""Your policy against bgnet-deep: one game in the terminal, the board drawn after every move.

A policy is any function that picks one of the legal afterstates (``env.unwrapped.afterstates()``,
in action order) and returns its index, the action. Two are here: a net saved by
train_vector_td.py (``--net``), and without one a simple hand-made policy (hit when possible, then
make points, then race).

    python3 examples/play_vs_bgnet_deep.py                       # the hand-made policy
    python3 examples/train_vector_td.py --save td.pt && python3 examples/play_vs_bgnet_deep.py --net td.pt
"""
from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import bgnet.envs  # noqa: F401  (registers bgnet/Backgammon-v0)
from bgnet.nn.encode import encode


def hand_made(afterstates: np.ndarray) -> int:
    """The afterstate that leaves the opponent most checkers on the bar, then the most points
    made (two or more checkers), then the fewest pips to go."""
    after = afterstates.astype(np.int64)  # [opponent, me_after], in action order
    on_bar = after[:, 0, 24]
    made = (after[:, 1, :24] >= 2).sum(axis=1)
    pips = (after[:, 1] * np.arange(1, 26)).sum(axis=1)
    return int(np.lexsort((pips, -made, -on_bar))[0])


def net_policy(path: str, encoding: str, hidden: int):
    """The greedy policy of a net saved by train_vector_td.py (same encoding and width)."""
    import torch

    net = torch.nn.Sequential(torch.nn.Linear(encode(np.zeros((1, 2, 25), np.int8), encoding).shape[1], hidden),
                              torch.nn.Sigmoid(), torch.nn.Linear(hidden, 1))
    net.load_state_dict(torch.load(path))

    def policy(afterstates: np.ndarray) -> int:
        with torch.no_grad():
            values = net(torch.from_numpy(encode(afterstates, encoding))).reshape(-1)
        return int(values.argmax())

    return policy


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--net", help="a net saved by train_vector_td.py --save")
    ap.add_argument("--encoding", default="contact", help="the net's encoding")
    ap.add_argument("--hidden", type=int, default=64, help="the net's hidden units")
    ap.add_argument("--opponent", default="bgnet-deep", help="any bot spec: bgnet-deep@1, gnubg:0, pubeval ...")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--quiet", action="store_true", help="print the result only")
    a = ap.parse_args()
    policy = net_policy(a.net, a.encoding, a.hidden) if a.net else hand_made
    env = gym.make("bgnet/Backgammon-v0", opponent=a.opponent, render_mode=None if a.quiet else "human")
    env.reset(seed=a.seed)
    done, reward, moves = False, 0.0, 0
    while not done:
        _, reward, done, _, _ = env.step(policy(env.unwrapped.afterstates()))
        moves += 1
    result = {1: "won", 2: "won a gammon", 3: "won a backgammon"}.get(int(abs(reward)), "")
    print(f"after {moves} moves you {result if reward > 0 else result.replace('won', 'lost')} "
          f"({reward:+.0f}) against {a.opponent}")
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
