"""Compare bgnet's cube decisions with GNU Backgammon's on self-play positions (a maintainer script).

The positions (gnubg 0-ply self-play, with cubes and scores covering money play and 7-point
matches), the two references (the GNU Backgammon program fed its own cubeless probabilities, and
``gnubg_nn.evaluate_cube_decision``) and the comparison are ``tests/cube_reference.py``'s, which
``tests/test_cube.py`` checks on a few of the cases; this script runs them at length.

Prints agreement on the action (no double / double-take / double-pass / too good), on doubling and
on taking, equity differences, and a confusion table per reference. ``--plies 1`` checks bgnet's
cube search one roll ahead (:mod:`bgnet.cube.lookahead`) against the program's 1-ply cube
analysis instead; ``--bench-plies N`` scores the program's own decisions at N plies on ``bgnet
bench cube``'s positions, as a bot's are scored.

    python3 tools/verify_cube.py --positions 400
    python3 tools/verify_cube.py --positions 400 --plies 1
    python3 tools/verify_cube.py --bench-plies 1
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the comparison lives there

from cube_reference import (  # noqa: E402
    compare_lookahead_with_program,
    compare_with_gnubg_nn,
    compare_with_program,
    gnubg_nn_met,
    gnubg_program_decisions,
    sample_cases,
)
from gnubg_program import gnubg_program  # noqa: E402


def check_lookahead(positions: int, seed: int) -> int:
    program = gnubg_program()
    if program is None:
        print("GNU Backgammon program not found (apt-get install gnubg)")
        return 1
    cases = sample_cases(positions, seed)
    t = time.time()
    refs = gnubg_program_decisions(cases, program, plies=1)
    print(f"{len(cases)} cases; gnubg program at 1-ply: {time.time() - t:.1f} s")
    for tally in compare_lookahead_with_program(cases, refs):
        print(tally.report())
    return 0


def program_on_benchmark(plies: int) -> int:
    """GNU Backgammon's own cube decisions at ``plies`` on ``bgnet bench cube``'s positions,
    scored as a bot's are: how near its searches come to its deeper verdict."""
    from bgnet.measure.cube_bench import load_benchmark, rate_row

    program = gnubg_program()
    if program is None:
        print("GNU Backgammon program not found (apt-get install gnubg)")
        return 1
    bench = load_benchmark()
    cases = [("bench", bench.boards[i], bench.context(i)) for i in range(len(bench))]
    t = time.time()
    refs = gnubg_program_decisions(cases, program, plies=plies)
    double = np.array([r.action.startswith("double") for r in refs])
    take = np.array([r.equities["dt"] < r.equities["dp"] if r.available else True for r in refs])
    print(f"GNU Backgammon program, cube decisions at {plies}-ply on {len(bench)} positions "
          f"({time.time() - t:.0f} s): agreement, cost per decision (thousandths of the cube)")
    for reference in ("2-ply", "0-ply"):
        row = rate_row(load_benchmark(reference=reference), double, take, f"gnubg {plies}-ply")
        kinds = ", ".join(f"{k.replace('_', ' ')} {row[k]['count']}" for k in
                          ("missed_double", "wrong_double", "wrong_take", "wrong_pass"))
        print(f"  judged at {reference}: {100 * row['all']['agreement']:.1f} %, "
              f"{row['all']['cost']:.2f}; {kinds}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plies", type=int, default=0, choices=(0, 1),
                    help="0: the cube arithmetic at 0-ply (default); 1: bgnet's cube search one "
                         "roll ahead against the program's 1-ply cube analysis")
    ap.add_argument("--bench-plies", type=int, choices=(0, 1, 2), metavar="N",
                    help="instead: the program's own cube decisions at N plies on the positions "
                         "of bgnet bench cube, scored as a bot's")
    a = ap.parse_args()
    if a.bench_plies is not None:
        return program_on_benchmark(a.bench_plies)
    if a.plies == 1:
        return check_lookahead(a.positions, a.seed)
    t = time.time()
    cases = sample_cases(a.positions, a.seed)
    print(f"{len(cases)} cases ({time.time() - t:.1f} s to draw)")
    tallies = []
    program = gnubg_program()
    if program is None:
        print("GNU Backgammon program not found (apt-get install gnubg): money play not checked")
    else:
        t = time.time()
        refs = gnubg_program_decisions(cases, program)
        tallies.append(compare_with_program(cases, refs))
        print(f"gnubg program: {time.time() - t:.1f} s")
    nn_met = gnubg_nn_met()
    tallies.append(compare_with_gnubg_nn(cases, nn_met, "gnubg_nn.evaluate_cube_decision, 0-ply "
                                         "(bgnet with gnubg_nn's table; MWC differences)"))
    tallies.append(compare_with_gnubg_nn(cases, None, "gnubg_nn.evaluate_cube_decision, 0-ply "
                                         "(bgnet with Kazaross-XG2; MWC differences)"))
    for tally in tallies:
        print(tally.report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
