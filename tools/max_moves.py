"""Search for the position and roll with the most distinct legal moves (afterstates).

The action space of bgnet.envs has room for 3060 moves, a proven bound (C(18, 4): a double's play
is how many of its four steps each of 15 checkers takes). This local search (random starts, then
single-checker changes kept when the count does not fall) finds how close real positions come,
with bgnet's own generator; the opponent's checkers wait on its bar, where they block nothing.

    python3 tools/max_moves.py --seconds 120
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from bgnet.engine.movegen import generate_batch
from bgnet.engine.position_id import position_id


def count(board: np.ndarray, die: int) -> int:
    _, steps, offsets = generate_batch(board[None], np.array([[die, die]]))
    return 0 if steps[0, 0, 0] < 0 else int(offsets[1])


def random_board(rng: np.random.Generator) -> np.ndarray:
    board = np.zeros((2, 25), np.int8)
    board[0, 24] = 15
    for point in rng.integers(0, 24, 15):
        board[1, point] += 1
    return board


def climb(rng: np.random.Generator, die: int, tries: int) -> tuple[int, np.ndarray]:
    board = random_board(rng)
    best = count(board, die)
    for _ in range(tries):
        cand = board.copy()
        src = rng.choice(np.flatnonzero(cand[1, :24]))
        cand[1, src] -= 1
        cand[1, rng.integers(0, 24)] += 1
        n = count(cand, die)
        if n >= best:
            board, best = cand, n
    return best, board


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--tries", type=int, default=400, help="changes tried from each start")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    best = {d: (0, None) for d in range(1, 7)}
    end = time.monotonic() + a.seconds
    starts = 0
    while time.monotonic() < end:
        for die in range(1, 7):
            n, board = climb(rng, die, a.tries)
            if n > best[die][0]:
                best[die] = (n, board)
        starts += 1
    for die, (n, board) in best.items():
        print(f"{die}-{die}: {n} distinct moves, position {position_id(board)} ({starts} starts)")
    most = max(n for n, _ in best.values())
    print(f"most found: {most}; the action space holds 3060")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
