"""Build the cube-decision benchmark shipped as ``bgnet/measure/data/cube_benchmark.npz``.

Positions come from real play: bgnet-deep against gnubg 0-ply in 7-point matches and in money
games with the cube (bgnet's own match play, :mod:`bgnet.measure.cube_play`, checker plays
cubeful). Every position before a roll where the player on roll may double is a candidate, with
the cube, its owner and the score it had in the game (the opening roll is no decision; after a
double is taken the position is not counted again). Repeats are dropped.

Each candidate gets GNU Backgammon's own verdict from the Debian program (``gnubg -t``, the
driver in ``tests/cube_reference.py``): cube decisions at 0-ply (``set evaluation cubedecision
evaluation plies 0``, its pruning nets, cubeful, no noise), its default match equity table
(Kazaross-XG2), beavers off, Jacoby off; the proper action and the cubeful equities ND, DT, DP.

Kept: every position in a doubling window (GNU Backgammon doubles or is too good to double, or
doubling is within ``--window`` of playing on, or the take is within ``--window`` of the pass),
and one in ``--clear-every`` of the others, so that clear decisions weigh in too; all in a random
order (the first N of the file are a fair sample of it).

A second pass adds the program's verdict at 2-ply (``plies 2``: two rolls ahead, cubeful, the
depth of its analysis by default) on the same positions; ``bgnet bench cube --reference 2-ply``
judges by it. ``--deepen-only`` runs that pass alone on an existing file. The defaults build the
shipped file (about 3 minutes for the first pass, 1 for the second).

    python3 tools/make_cube_bench.py
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from bgnet.engine.state import CENTERED, MatchContext
from bgnet.measure.cube_bench import DEEP_KEYS, DEFAULT_PATH, SOURCES, load_benchmark, save_benchmark
from bgnet.measure.er import write_arrays

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the program's driver lives there

CHUNK = 2000  # positions per gnubg process
REFERENCE = ("GNU Backgammon 1.07 program, cube decisions at 0-ply (pruning nets), Kazaross-XG2, "
             "beavers and Jacoby off")


def records_of(bot_a, bot_b, matches: int, money_games: int, seed: int):
    """(source, GameRecord) of ``matches`` 7-point matches and ``money_games`` money games."""
    from bgnet.measure.cube_play import play_matches, play_money_cube

    out = []
    if matches:
        r = play_matches(bot_a, bot_b, 7, matches, seed=seed, keep_records=True)
        out += [(SOURCES.index("match"), g) for m in r.records for g in m.games]
    if money_games:
        r = play_money_cube(bot_a, bot_b, money_games, seed=seed + 1, keep_records=True)
        out += [(SOURCES.index("money"), g) for m in r.records for g in m.games]
    return out


def decisions_of(record) -> list[tuple[np.ndarray, MatchContext]]:
    """Every position before a roll in a game where the player on roll may double, with its
    cube and score (the board from the side on roll)."""
    cube, owner = 1, CENTERED
    out, skip = [], True  # the opening roll is no cube decision
    for act in record.actions:
        if act.kind in ("move", "double") and not skip:
            ctx = MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=act.player,
                               turn=act.player, crawford=record.crawford,
                               match_length=record.match_length,
                               score=tuple(record.score) if record.match_length else (0, 0),
                               jacoby=record.jacoby)
            if ctx.may_double(act.player):
                out.append((np.asarray(act.board, np.int8), ctx))
        skip = act.kind == "double"  # the move after a taken double is the same decision
        if act.kind == "take":
            cube, owner, skip = act.cube, act.player, True
    return out


def candidates(records, rng) -> list[tuple[int, np.ndarray, MatchContext]]:
    """Distinct (source, board, context) in a random order."""
    seen, out = set(), []
    for source, record in records:
        for board, ctx in decisions_of(record):
            key = (board.tobytes(), ctx.cube_value, ctx.cube_owner == ctx.player_on_roll,
                   ctx.cube_owner == CENTERED, ctx.match_length, ctx.away(ctx.player_on_roll)
                   if ctx.match_length else 0, ctx.away(1 - ctx.player_on_roll)
                   if ctx.match_length else 0, ctx.crawford)
            if key not in seen:
                seen.add(key)
                out.append((source, board, ctx))
    return [out[i] for i in rng.permutation(len(out))]


def references(cases, program, plies: int = 0):
    """GNU Backgammon's verdict at ``plies`` on each (board, context), a few thousand per
    process."""
    from cube_reference import gnubg_program_decisions

    refs = []
    for lo in range(0, len(cases), CHUNK):
        refs += gnubg_program_decisions([("", b, c) for b, c in cases[lo:lo + CHUNK]], program,
                                        plies)
    return refs


def deepen(path: str, program) -> None:
    """Add the program's 2-ply verdicts to the benchmark file at ``path``."""
    from bgnet.cube import ACTIONS

    bench = load_benchmark(path)
    t = time.time()
    refs = references([(bench.boards[i], bench.context(i)) for i in range(len(bench))], program,
                      plies=2)
    if not all(r.available for r in refs):
        raise RuntimeError("gnubg gave no cube analysis for a position where it had one at 0-ply")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(zip(DEEP_KEYS, (
        np.array([r.probabilities for r in refs], np.float32),
        np.array([(r.equities["nd"], r.equities["dt"], r.equities["dp"]) for r in refs], np.float32),
        np.array([ACTIONS.index(r.action) for r in refs], np.int8),
        np.array(REFERENCE.replace("0-ply", "2-ply")))))
    write_arrays(path, **arrays)
    same = sum(ACTIONS[a] == r.action for a, r in zip(bench.action, refs))
    print(f"2-ply verdicts: {time.time() - t:.0f} s; the same action as at 0-ply in {same} of "
          f"{len(refs)} positions")


def in_window(ref, window: float) -> bool:
    nd, dt, dp = ref.equities["nd"], ref.equities["dt"], ref.equities["dp"]
    return (ref.action != "no_double" or min(dt, dp) > nd - window
            or abs(dt - dp) < window)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=100, help="7-point matches to draw from")
    ap.add_argument("--money-games", type=int, default=400, help="money games to draw from")
    ap.add_argument("--seed", type=int, default=2035)
    ap.add_argument("--window", type=float, default=0.15)
    ap.add_argument("--clear-every", type=int, default=12)
    ap.add_argument("--out", default=DEFAULT_PATH)
    ap.add_argument("--deepen-only", action="store_true",
                    help="only add the 2-ply verdicts to the existing file --out")
    a = ap.parse_args()
    from gnubg_program import gnubg_program

    from bgnet.bots import load_bot

    program = gnubg_program()
    if program is None:
        print("the GNU Backgammon program is not installed (apt-get install gnubg)")
        return 1
    if a.deepen_only:
        deepen(a.out, program)
        return 0
    rng = np.random.default_rng(a.seed)
    t = time.time()
    bots = load_bot("bgnet-deep"), load_bot("gnubg:0")
    cases = candidates(records_of(*bots, a.matches, a.money_games, a.seed), rng)
    print(f"{len(cases)} candidate positions ({time.time() - t:.0f} s of play)", flush=True)
    t = time.time()
    refs = references([(b, c) for _, b, c in cases], program)
    print(f"gnubg's verdicts: {time.time() - t:.0f} s", flush=True)
    keep = [i for i, r in enumerate(refs) if r.available and
            (in_window(r, a.window) or rng.integers(a.clear_every) == 0)]
    save_benchmark(
        a.out, [cases[i][1] for i in keep], [cases[i][2] for i in keep],
        [refs[i].probabilities for i in keep],
        [(refs[i].equities["nd"], refs[i].equities["dt"], refs[i].equities["dp"]) for i in keep],
        [refs[i].action for i in keep], [cases[i][0] for i in keep],
        reference=REFERENCE)
    kinds = {k: sum(refs[i].action == k for i in keep) for k in sorted({refs[i].action for i in keep})}
    print(f"{len(keep)} positions written to {a.out}: "
          + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    deepen(a.out, program)
    return 0


if __name__ == "__main__":
    sys.exit(main())
