"""bgnet's luck figures side by side with GNU Backgammon's own analysis of the same files.

What is compared, the tolerance and why the two sides differ a little are
``tests/luck_reference.py``'s, which ``tests/test_analyze_luck.py`` checks on four files; this
script prints the figures side by side for any file, with ``ok`` where a figure is within the
tolerance.

``--make DIR`` first writes a set of files to compare (a few minutes): matches and money
sessions played by bgnet's bot against gnubg (``.mat`` and ``.sgf``, with and without the cube,
the Jacoby rule, a Crawford game where the match has one) and by the GNU Backgammon program
against itself.

    python3 tools/verify_luck.py m.mat s.sgf --ply 0
    python3 tools/verify_luck.py money.mat --jacoby
    python3 tools/verify_luck.py --make /tmp/luck-files
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the comparison lives there

from gnubg_program import gnubg_program  # noqa: E402
from luck_reference import bgnet_luck, comparison_rows, format_rows, gnubg_luck, gnubg_self_play  # noqa: E402


def make_files(folder: Path, program: str) -> list[tuple[Path, bool]]:
    """Matches and money sessions to compare, written to ``folder``: (path, Jacoby rule)."""
    from bgnet.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    made: list[tuple[Path, bool]] = []
    plays = [(["--match", "7", "--matches", "1", "--seed", "1"], "bot7.mat", False),
             (["--match", "5", "--matches", "1", "--seed", "2"], "bot5.sgf", False),
             (["--cube", "--games", "6", "--seed", "3"], "money-cube.mat", False),
             (["--cube", "--jacoby", "--games", "6", "--seed", "4"], "money-jacoby.sgf", True),
             (["--games", "6", "--seed", "5"], "money-cubeless.mat", False)]
    for args, name, jacoby in plays:
        path = folder / name
        flag = "--save-sgf" if name.endswith(".sgf") else "--save-mat"
        if main(["eval", "bgnet-default", "gnubg:0", *args, flag, str(path), "--quiet"]) != 0:
            raise RuntimeError(f"bgnet eval could not write {path}")
        made.append((path, jacoby))
    for name, length, seed in (("gnubg5.sgf", 5, 7), ("gnubg3.sgf", 3, 8)):
        gnubg_self_play(folder / name, length, seed, program)
        made.append((folder / name, False))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help=".mat or .sgf files")
    parser.add_argument("--ply", type=int, default=0, help="analysis depth of both programs (default 0)")
    parser.add_argument("--jacoby", action="store_true", help="money sessions played with the Jacoby rule")
    parser.add_argument("--make", metavar="DIR", help="first write a set of files to compare into DIR")
    args = parser.parse_args()
    program = gnubg_program()
    if program is None:
        raise SystemExit("needs the GNU Backgammon program (Debian package gnubg)")
    files = [(Path(f), args.jacoby) for f in args.files]
    if args.make:
        files += make_files(Path(args.make), program)
    if not files:
        raise SystemExit("no file to compare: give files, or --make DIR")
    from bgnet.analyze.analysis import Judge
    from bgnet.bots import load_bot

    judge = Judge(load_bot(f"gnubg:{args.ply}"))
    outside = 0
    compared = 0
    for path, jacoby in files:
        ref = gnubg_luck(str(path), args.ply, jacoby, program)
        ours = bgnet_luck(str(path), args.ply, jacoby, judge)
        print("\n".join(format_rows(str(path), ours, ref)))
        verdicts = [ok for *_, ok in comparison_rows(ours, ref) if ok is not None]
        compared += len(verdicts)
        outside += sum(not ok for ok in verdicts)
    print(f"{compared - outside} of {compared} figures within the tolerance "
          "(5 %, or 0.05 EMG, 0.05 points, 2 MWC points)")


if __name__ == "__main__":
    main()
