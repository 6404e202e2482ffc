"""Build the checker-play error-rate benchmark shipped as ``bgnet/evaluate/data/er_benchmark.npz``.

Decisions are drawn from self-play games of GNU Backgammon 0-ply and of pubeval (so they cover
strong and weak play, and every phase: contact, crashed boards, races, bear-offs). For every
decision every legal move gets a reference equity from GNU Backgammon at 2-ply: the equity of a
move is minus the 1-ply evaluation, from the opponent's side, of the position it leaves (cubeless
money equity E = 2w - 1 + wg - lg + wbg - lbg); a move that ends the game is worth its points.
Decisions with a single legal move are dropped.

The work is saved to ``--work`` every half minute and picked up again after an interruption.
The shipped file is what the defaults build (20,000 decisions, seed 2024; about 20 minutes on one
core). The decisions of a build are the first ones of any larger build with the same seed: the
4,000-decision file shipped before is the first fifth of this one.

    python3 scripts/build_er_benchmark.py --work /tmp/er_work
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from bgnet.bots.gnubg_bots import GnubgBot, PubevalBot, import_gnubg_nn, money_equity
from bgnet.bots.simple import terminal_points
from bgnet.engine.board import start_position, swap
from bgnet.engine.movegen import generate
from bgnet.evaluate.er import DEFAULT_PATH, save_benchmark

SOURCES = ("gnubg:0", "pubeval")
REFERENCE_PLY = 1  # 1-ply of the opponent's position = a 2-ply choice of the move
SAVE_EVERY_S = 30.0  # seconds of work an interruption can lose


def sample_decisions(n: int, seed: int, p_take: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions and rolls with at least two legal moves, taken with probability ``p_take`` from
    self-play games, alternating between the sources. Returns (boards, dice, source index)."""
    rng = np.random.default_rng(seed)
    bots = [GnubgBot(0), PubevalBot()]
    boards, dice, source, seen = [], [], [], set()
    game = 0
    while len(boards) < n:
        src = game % len(bots)
        bot = bots[src]
        board = start_position()
        d = rng.integers(1, 7, size=2)
        while d[0] == d[1]:
            d = rng.integers(1, 7, size=2)
        while True:
            after, _ = generate(board, int(d[0]), int(d[1]))
            key = board.tobytes() + bytes(sorted(d.tolist()))
            if len(after) > 1 and key not in seen and rng.random() < p_take and len(boards) < n:
                seen.add(key)
                boards.append(board.copy())
                dice.append(d.copy())
                source.append(src)
            chosen = bot.choose_move(board, int(d[0]), int(d[1]))
            if terminal_points(chosen[None])[0] > 0:
                break
            board = swap(chosen)
            d = rng.integers(1, 7, size=2)
        game += 1
    return np.array(boards, np.int8), np.array(dice, np.int8), np.array(source, np.int8)


def move_equities(g, board: np.ndarray, d1: int, d2: int) -> tuple[np.ndarray, np.ndarray]:
    """Every legal afterstate of a decision and its reference equity for the mover."""
    after, _ = generate(board, d1, d2)
    won = terminal_points(after)
    eq = np.empty(len(after), np.float64)
    for i, a in enumerate(after):
        if won[i]:
            eq[i] = won[i]
        else:
            eq[i] = -money_equity(np.array(g.probabilities(swap(a).tolist(), REFERENCE_PLY)))
    return after, eq


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--decisions", type=int, default=20000)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--take", type=float, default=0.08, help="chance a decision of a game is kept")
    p.add_argument("--work", required=True, help="folder for the partial results (resumable)")
    p.add_argument("--out", default=DEFAULT_PATH)
    a = p.parse_args(argv)
    g = import_gnubg_nn()
    os.makedirs(a.work, exist_ok=True)
    pos_file = os.path.join(a.work, "decisions.npz")
    if os.path.exists(pos_file):
        z = np.load(pos_file)
        boards, dice, source = z["boards"], z["dice"], z["source"]
    else:
        boards, dice, source = sample_decisions(a.decisions, a.seed, a.take)
        np.savez(pos_file, boards=boards, dice=dice, source=source)
    print(f"{len(boards)} decisions sampled", flush=True)

    done_file = os.path.join(a.work, "equities.npz")
    afters, equities = [], []
    if os.path.exists(done_file):
        z = np.load(done_file)
        off = z["offsets"]
        afters = [z["after"][off[i]:off[i + 1]] for i in range(len(off) - 1)]
        equities = [z["equity"][off[i]:off[i + 1]] for i in range(len(off) - 1)]
    t0, start = time.time(), len(afters)
    last_save = t0
    for i in range(start, len(boards)):
        after, eq = move_equities(g, boards[i], int(dice[i, 0]), int(dice[i, 1]))
        afters.append(after)
        equities.append(eq)
        # Each save rewrites everything done so far: by the clock, not every N decisions, so that
        # saving stays a small share of the time however large the build.
        if time.time() - last_save > SAVE_EVERY_S or i + 1 == len(boards):
            _save_partial(done_file, afters, equities)
            last_save = time.time()
            rate = (i + 1 - start) / (time.time() - t0)
            print(f"{i + 1}/{len(boards)} decisions, {rate:.2f}/s,"
                  f" about {(len(boards) - i - 1) / rate / 60:.0f} min left", flush=True)
    phase = np.array([g.classify(b.tolist()) for b in boards], np.int8)
    save_benchmark(a.out, boards, dice, afters, equities, phase, source,
                   sources=SOURCES, reference=f"gnubg-nn {_version('gnubg-nn')} 2-ply "
                   "(minus 1-ply of the opponent's position), cubeless money equity")
    print(f"written {a.out}: {len(boards)} decisions, {sum(len(x) for x in afters)} moves")
    return 0


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "(version unknown)"


def _save_partial(path: str, afters: list, equities: list) -> None:
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in afters])]).astype(np.int64)
    tmp = path + ".tmp.npz"
    np.savez(tmp, after=np.concatenate(afters), equity=np.concatenate(equities), offsets=offsets)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
