"""Build the checker-play error-rate benchmark shipped as ``bgnet/measure/data/er_benchmark.npz``.

Decisions are drawn from self-play games of GNU Backgammon 0-ply and of pubeval (so they cover
strong and weak play, and every phase: contact, crashed boards, races, bear-offs). For every
decision every legal move gets a reference equity from GNU Backgammon at 1-ply: the position the
move leaves, valued over the opponent's 21 rolls, each answered by its best reply at 0-ply
(cubeless money equity E = 2w - 1 + wg - lg + wbg - lbg); a move that ends the game is worth its
points. Decisions with a single legal move are dropped.

A second pass adds a deeper reference: the best moves of each decision at 1-ply (at most 5, within
0.16 of the best) valued again at 2-ply, two rolls ahead, as GNU Backgammon's move filters would
choose them; the other moves keep their 1-ply equity. ``bgnet bench er --reference 2-ply`` uses it.

The work is saved to ``--work`` every half minute and picked up again after an interruption.
The shipped file is what the defaults build (20,000 decisions, seed 2024; about 20 minutes on one
core for the 1-ply pass, 45 for the 2-ply pass). The decisions of a build are the first ones of
any larger build with the same seed: the 4,000-decision file shipped before is the first fifth of
this one. ``--deepen-only`` runs the second pass alone on an existing file.

    python3 tools/build_er_benchmark.py --work /tmp/er_work
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from bgnet.bots.gnubg_bots import GnubgBot, import_gnubg_nn, money_equity
from bgnet.bots.pubeval import PubevalBot
from bgnet.bots.simple import terminal_points
from bgnet.engine.board import start_position, swap
from bgnet.engine.movegen import generate
from bgnet.measure.er import DEFAULT_PATH, save_benchmark, write_arrays

SOURCES = ("gnubg:0", "pubeval")
REFERENCE_PLY = 1  # gnubg_nn.probabilities(position, 1): the 21 rolls, each best reply at 0-ply
DEEP_PLY, DEEP_KEEP, DEEP_MARGIN = 2, 5, 0.16  # the second pass: best 5 at 1-ply within 0.16
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
    p.add_argument("--deepen-only", action="store_true",
                   help="only add the 2-ply reference to the existing file at --out")
    a = p.parse_args(argv)
    g = import_gnubg_nn()
    os.makedirs(a.work, exist_ok=True)
    if not a.deepen_only:
        build(g, a)
    deepen(g, a.out, a.work)
    return 0


def build(g, a) -> None:
    """The first pass: sample the decisions and value every legal move at 1-ply."""
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
    save_benchmark(a.out, boards, dice, afters, equities, phase, source, sources=SOURCES,
                   reference=reference_1ply())
    print(f"written {a.out}: {len(boards)} decisions, {sum(len(x) for x in afters)} moves")


def reference_1ply() -> str:
    return (f"gnubg-nn {_version('gnubg-nn')} 1-ply (the opponent's 21 rolls, each best reply at "
            "0-ply), cubeless money equity")


def deep_equities(g, after: np.ndarray, eq1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One decision's moves valued again at 2-ply where they are among the best at 1-ply
    (``eq1``, float32 as stored); returns the equities and which moves were searched."""
    eq = eq1.astype(np.float64)
    searched = np.zeros(len(eq1), bool)
    order = np.argsort(-eq1, kind="stable")
    for r in order[:DEEP_KEEP]:
        if eq1[r] < eq1[order[0]] - DEEP_MARGIN:
            break
        if terminal_points(after[r][None])[0] > 0:
            continue  # a move that ends the game is worth its points at any depth
        eq[r] = -money_equity(np.array(g.probabilities(swap(after[r]).tolist(), DEEP_PLY)))
        searched[r] = True
    return eq, searched


def deepen(g, path: str, work: str) -> None:
    """The second pass: add the 2-ply reference (``equity_2ply``) to the benchmark at ``path``."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    off, after, eq1 = arrays["offsets"], arrays["after"], arrays["equity"]
    n = len(off) - 1
    eq2 = eq1.astype(np.float64)
    searched = np.zeros(len(eq1), bool)
    part_file = os.path.join(work, "deep.npz")
    start = 0
    if os.path.exists(part_file):
        with np.load(part_file) as p:
            start = int(p["decisions"])
            m = off[start]
            eq2[:m], searched[:m] = p["equity"][:m], p["searched"][:m]
    t0 = last_save = time.time()
    for d in range(start, n):
        s, e = off[d], off[d + 1]
        eq2[s:e], searched[s:e] = deep_equities(g, after[s:e], eq1[s:e])
        if time.time() - last_save > SAVE_EVERY_S or d + 1 == n:
            m = off[d + 1]
            write_arrays(part_file, decisions=np.array(d + 1), equity=eq2[:m], searched=searched[:m])
            last_save = time.time()
            rate = (d + 1 - start) / (time.time() - t0)
            print(f"2-ply: {d + 1}/{n} decisions, {rate:.2f}/s,"
                  f" about {(n - d - 1) / rate / 60:.0f} min left", flush=True)
    arrays.update(
        reference=np.array(reference_1ply()),  # files built before this pass was added said "2-ply"
        equity_2ply=eq2.astype(np.float32), searched_2ply=searched,
        reference_2ply=np.array(
            f"gnubg-nn {_version('gnubg-nn')} 2-ply for the best {DEEP_KEEP} moves at 1-ply within "
            f"{DEEP_MARGIN} (the rest at 1-ply), cubeless money equity"))
    write_arrays(path, **arrays)
    print(f"written {path}: {int(searched.sum())} moves valued at 2-ply")


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
