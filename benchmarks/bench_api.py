"""The public per-call API against GNU Backgammon's C library, side by side on the same positions.

* ``legal_moves``: :func:`bgnet.engine.legal_moves` (Position ID in; notation and next Position
  ID of every move out) against ``gnubg_nn.moves`` (a board list in; position keys and step
  tuples out), microseconds per call, best of several repeats.
* ``best_move`` at 0-ply, at 1-ply and (``--ply2-decisions``) at 2-ply: ``Bot.best_move`` of
  the shipped bot (``bgnet.load_bot()``) against ``gnubg_nn.best_move(board, d1, d2, ply)``,
  decisions per second. GNU Backgammon keeps a cache of evaluations, so each decision is timed
  once, on distinct positions that neither side has seen (each depth on other positions): the
  positions come from pubeval self-play (pubeval does not fill gnubg's cache), and both bots
  are warmed up on other positions first. With ``--unpruned`` a bot that prunes its deeper
  plies (``bgnet-deep``) is timed again at 1 and 2 ply with ``,prune=none``, on the same
  positions (a bgnet bot keeps no values between calls).

* a match-aware 0-ply decision: ``Bot.best_move`` with a Match ID (7-point match, 3-away
  5-away, cube 2 owned by the opponent: moves valued by cubeful equity at the score) beside the
  same bot's cubeless ``best_move``, on the same distinct positions, each timed once; their
  ratio (the goal is at most 1.3).

Everything runs in this one process on one core (numba and the BLAS libraries limited to one
thread). ``--bot PATH`` times another exported bot or checkpoint's ``best_move`` instead of the
shipped bot's (``--only best_move`` skips the ``legal_moves`` part).

    python3 benchmarks/bench_api.py [--positions 20000] [--decisions 5000] [--bot SPEC]
        [--ply-decisions 500] [--ply2-decisions 0] [--unpruned]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")



# bgnet from this source tree, not an installed copy
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_engine import best_of  # noqa: E402  (the benchmarks' folder is the script's own)


def distinct_positions(n: int, seed: int):
    """``n`` distinct (board, d1, d2) from pubeval self-play, in the order met."""
    from bgnet.engine.position_id import position_id
    from bgnet.engine.sampling import sample_positions
    from bgnet.measure.reference_play import pubeval_chooser

    boards, dice = sample_positions(int(n * 1.3) + 100, seed=seed, chooser=pubeval_chooser)
    seen, out = set(), []
    for b, (d1, d2) in zip(boards, dice):
        d1, d2 = int(d1), int(d2)
        key = (position_id(b), max(d1, d2), min(d1, d2))
        if key not in seen and b[0].any() and b[1].any():
            seen.add(key)
            out.append((b, d1, d2))
    if len(out) < n:
        raise SystemExit(f"only {len(out)} distinct positions were met; ask for fewer")
    return out[:n]


def bench_legal_moves(positions, repeats: int) -> None:
    import gnubg_nn

    from bgnet.engine import legal_moves
    from bgnet.engine.position_id import position_id

    calls = [(position_id(b), d1, d2) for b, d1, d2 in positions]
    lists = [(b.tolist(), d1, d2) for b, d1, d2 in positions]
    legal_moves(*calls[0])  # compile (or load the compiled cache) outside the timing
    moves = gnubg_nn.moves
    n_bgnet = sum(len(legal_moves(*c)) for c in calls)
    n_gnubg = sum(len(moves(b, x, y, 1)) for b, x, y in lists)

    def run_bgnet():
        for c in calls:
            legal_moves(*c)

    def run_gnubg():
        for b, x, y in lists:
            moves(b, x, y, 1)

    t_bgnet = best_of(run_bgnet, repeats) / len(calls)
    t_gnubg = best_of(run_gnubg, repeats) / len(calls)
    print(f"legal_moves over {len(calls)} positions (moves listed: bgnet {n_bgnet}, gnubg {n_gnubg}; "
          "bgnet counts a pass as one)")
    print(f"  bgnet legal_moves   : {t_bgnet * 1e6:7.1f} us a call")
    print(f"  gnubg_nn.moves      : {t_gnubg * 1e6:7.1f} us a call")
    print(f"  ratio bgnet / gnubg : {t_bgnet / t_gnubg:7.2f} (time a call)")


def bench_best_move(positions, warmup: int, bot_path: str | None = None, ply: int = 0,
                    unpruned: bool = False) -> None:
    """``best_move`` of the bot (and, with ``unpruned``, of the same bot unpruned where it
    prunes) and of gnubg_nn at ``ply`` over ``positions[warmup:]``, each timed once."""
    import gnubg_nn

    import bgnet
    from bgnet.bots.load import PRUNE_OPTION
    from bgnet.engine.position_id import position_id

    bots = [bgnet.load_bot(bot_path)]
    if unpruned and ply > 0 and getattr(bots[0], "pruning", None) is not None:
        spec = bot_path or "bgnet-default"
        bots.append(bgnet.load_bot(f"{spec}{PRUNE_OPTION}none"))
    warm, timed = positions[:warmup], positions[warmup:]
    calls = [(position_id(b), d1, d2) for b, d1, d2 in timed]
    lists = [(b.tolist(), d1, d2) for b, d1, d2 in timed]
    for b, d1, d2 in warm:
        for bot in bots:
            bot.best_move(position_id(b), d1, d2, ply=ply)
        gnubg_nn.best_move(b.tolist(), d1, d2, ply)
    rates = []
    for bot in bots:
        best = bot.best_move
        t = time.perf_counter()
        for c in calls:
            best(*c, ply=ply)
        rates.append((bot.name, time.perf_counter() - t))
    gbest = gnubg_nn.best_move
    t = time.perf_counter()
    for b, x, y in lists:
        gbest(b, x, y, ply)
    t_gnubg = time.perf_counter() - t
    r_gnubg = len(calls) / t_gnubg
    print(f"best_move at {ply}-ply over {len(calls)} distinct positions ({bots[0].name}; each timed once)")
    for name, t_bgnet in rates:
        r_bgnet = len(calls) / t_bgnet
        label = "bgnet Bot.best_move" if name == bots[0].name else "  ... ,prune=none"
        print(f"  {label:20s}: {r_bgnet:9.0f} decisions/s ({t_bgnet / len(calls) * 1e6:.1f} us), "
              f"{r_bgnet / r_gnubg:.2f}x gnubg's")
    print(f"  gnubg_nn.best_move  : {r_gnubg:9.0f} decisions/s ({t_gnubg / len(calls) * 1e6:.1f} us)")
    print(f"  ratio bgnet / gnubg : {len(calls) / rates[0][1] / r_gnubg:9.2f} (decisions a second)")


def bench_match_aware(positions, warmup: int, bot_path: str | None = None) -> None:
    import bgnet
    from bgnet.engine.position_id import position_id
    from bgnet.engine.state import MatchContext
    from bgnet.formats.match_id import match_id

    bot = bgnet.load_bot(bot_path)
    ctx = MatchContext(cube_value=2, cube_owner=0, player_on_roll=1, turn=1, match_length=7,
                       score=(2, 4))
    mid = match_id(ctx)
    warm, timed = positions[:warmup], positions[warmup:]
    for b, d1, d2 in warm:
        bot.best_move(position_id(b), d1, d2)
        bot.best_move(position_id(b), d1, d2, match_id=mid)
    calls = [(position_id(b), d1, d2) for b, d1, d2 in timed]
    best = bot.best_move
    half = len(calls) // 2  # each half timed both ways, in turn, so neither gets the warmer cache
    t_plain = t_match = 0.0
    for part, first in ((calls[:half], "plain"), (calls[half:], "match")):
        for kind in (first, "match" if first == "plain" else "plain"):
            t = time.perf_counter()
            if kind == "plain":
                for c in part:
                    best(*c)
                t_plain += time.perf_counter() - t
            else:
                for c in part:
                    best(*c, match_id=mid)
                t_match += time.perf_counter() - t
    n = len(calls)
    print(f"match-aware best_move at 0-ply over {n} distinct positions ({bot.name}; Match ID {mid})")
    print(f"  cubeless            : {t_plain / n * 1e6:7.1f} us a decision")
    print(f"  at the score        : {t_match / n * 1e6:7.1f} us a decision")
    print(f"  ratio match / plain : {t_match / t_plain:7.2f} (time a decision; goal <= 1.3)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=20_000, help="positions for legal_moves")
    ap.add_argument("--decisions", type=int, default=5_000, help="timed decisions for best_move")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bot", help="bot spec, exported bot or checkpoint to time (default: the "
                                  "shipped bot)")
    ap.add_argument("--ply-decisions", type=int, default=500,
                    help="timed decisions for best_move at 1-ply (0: none)")
    ap.add_argument("--ply2-decisions", type=int, default=0,
                    help="timed decisions for best_move at 2-ply (default 0: none)")
    ap.add_argument("--unpruned", action="store_true",
                    help="at 1 and 2 ply, also time a bot that prunes its deeper plies unpruned "
                         "(SPEC,prune=none)")
    ap.add_argument("--only", choices=["legal_moves", "best_move", "match"], help="run one part")
    a = ap.parse_args()
    positions = distinct_positions(max(a.positions, a.decisions + a.ply_decisions
                                       + a.ply2_decisions + 600), a.seed)
    if a.only in (None, "legal_moves"):
        bench_legal_moves(positions[:a.positions], a.repeats)
    if a.only in (None, "best_move"):
        bench_best_move(positions[:a.decisions + 500], warmup=500, bot_path=a.bot)
        rest = positions[a.decisions + 500:]  # each depth on other positions: no cache saw them
        if a.ply_decisions:
            bench_best_move(rest[:a.ply_decisions + 50], warmup=50, bot_path=a.bot, ply=1,
                            unpruned=a.unpruned)
        if a.ply2_decisions:
            rest = rest[a.ply_decisions + 50:]
            bench_best_move(rest[:a.ply2_decisions + 10], warmup=10, bot_path=a.bot, ply=2,
                            unpruned=a.unpruned)
    if a.only in (None, "match"):
        bench_match_aware(positions[:a.decisions + 500], warmup=500, bot_path=a.bot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
