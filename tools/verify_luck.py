"""bgnet's luck figures side by side with GNU Backgammon's own analysis of the same files.

For each file (``.mat`` or GNU Backgammon's ``.sgf``) the GNU Backgammon program (``gnubg -t``,
Debian package ``gnubg``) imports it, analyses it with checker play and cube decisions at
``--ply`` (its luck analysis is its own default, cubeful 0-ply) and prints its statistics;
``bgnet analyze`` judges the same file with ``gnubg:PLY``. Printed per player: the rolls marked
lucky and unlucky, the luck total (EMG, and MWC in a match or points in a money session), the
luck rate (mEMG per roll), the actual and the luck-adjusted result, each bgnet figure beside the
program's, with ``ok`` where it is within the tolerance: 5 % of the program's figure, or 0.05
EMG (0.05 points in money play) or 2 MWC points, whichever is wider. A luck rate may be off by
the luck total's allowance spread over the player's rolls (and by the 0.05 the program rounds
it to); a luck-adjusted result, the result less one player's luck total plus the other's, by
the two totals' allowances added.

The two sides do not evaluate with quite the same net: ``gnubg:N`` is the ``gnubg_nn`` package,
whose weights (format 1.01) differ from the program's (Debian's 1.07, format 1.00) by about a
hundredth in a probability now and then, and in a money session the program values a bear-off
of both sides by its two-sided database's cubeful equities where bgnet's cube head uses its
model. One roll's luck can differ by a few hundredths where that moves a cube action; over a
match most of it cancels.

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
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

GNUBG_CANDIDATES = ("gnubg", "/usr/games/gnubg", "/usr/local/games/gnubg")
REL_TOLERANCE = 0.05
EMG_TOLERANCE = 0.05  # also points, in money play
MWC_TOLERANCE = 0.02
MARKS = ("very lucky", "lucky", "unlucky", "very unlucky")


def gnubg_program() -> str | None:
    """The GNU Backgammon program's path, or None where it is not installed."""
    for name in GNUBG_CANDIDATES:
        path = shutil.which(name) or (name if Path(name).is_file() else None)
        if path:
            return path
    return None


@dataclass
class LuckFigures:
    """One program's luck figures for the two players of a file (lists of two)."""

    names: list
    match: bool
    luck: list  # EMG
    luck_units: list  # match: MWC (0..1); money: points
    luck_rate: list  # mEMG per roll
    marks: dict = field(default_factory=dict)  # mark -> [count, count]
    rolls: list | None = None  # rolls judged (bgnet's side)
    result: list | None = None  # match: MWC (0..1) won; money: points; None where not printed
    luck_adjusted: list | None = None


# ---------------------------------------------------------------------------------------------
# the GNU Backgammon program


def gnubg_script(path: str, ply: int, jacoby: bool) -> str:
    """Commands that analyse ``path`` at ``ply`` and print the match's statistics."""
    load = "load match" if path.endswith(".sgf") else "import mat"
    return "\n".join(["set threads 1", "set automatic roll off", f"set jacoby {'on' if jacoby else 'off'}",
                      f"set analysis chequerplay evaluation plies {ply}",
                      f"set analysis cubedecision evaluation plies {ply}",
                      f"{load} {path}", "analyse match", "show statistics match", ""])


def _signed_numbers(line: str) -> list[float]:
    """The numbers of a statistics line, their signs kept where a space follows them ("( -7.5%)")."""
    return [float(sign + digits) for sign, digits in re.findall(r"([-+]?)\s*(\d+\.\d+)", line)]


def parse_statistics(out: str) -> LuckFigures:
    """The luck figures of the program's ``show statistics match``."""
    lines = out.splitlines()
    head = next(x for x in lines if x.startswith("Player "))
    names = head.split()[1:3]

    def line(label: str) -> str | None:
        return next((x for x in lines if x.startswith(label)), None)

    total = line("Luck total EMG")
    rate = line("Luck rate mEMG")
    if total is None or rate is None:
        raise ValueError("GNU Backgammon printed no luck statistics")
    match = "(MWC)" in total
    t, r = _signed_numbers(total.split(")", 1)[1]), _signed_numbers(rate.split(")", 1)[1])
    scale = 0.01 if match else 1.0
    figures = LuckFigures(names, match, [t[0], t[2]], [scale * t[1], scale * t[3]], [r[0], r[2]])
    for mark in MARKS:
        row = line(f"Rolls marked {mark} ")
        figures.marks[mark] = [int(x) for x in row.split()[-2:]] if row else [0, 0]
    for label, attr in (("Actual result", "result"), ("Luck adjusted result", "luck_adjusted")):
        row = line(label)
        if row is not None:
            setattr(figures, attr, [scale * v for v in _signed_numbers(row[len(label):])][:2])
    return figures


def gnubg_luck(path: str, ply: int = 0, jacoby: bool = False, program: str | None = None) -> LuckFigures:
    """The program's luck figures for ``path`` analysed at ``ply``."""
    program = program or gnubg_program()
    if program is None:
        raise FileNotFoundError("needs the GNU Backgammon program (Debian package gnubg)")
    out = subprocess.run([program, "-t", "-q"], input=gnubg_script(str(Path(path).resolve()), ply, jacoby),
                         capture_output=True, text=True, timeout=1800, check=True).stdout
    return parse_statistics(out)


# ---------------------------------------------------------------------------------------------
# bgnet


def bgnet_luck(path: str, ply: int = 0, jacoby: bool = False, judge=None) -> LuckFigures:
    """bgnet's luck figures for ``path`` judged by ``gnubg:PLY`` (or by ``judge``)."""
    from bgnet.analyze.analysis import Judge, analyse_record
    from bgnet.analyze.inputs import read_match_file
    from bgnet.bots import load_bot

    judge = judge or Judge(load_bot(f"gnubg:{ply}"))
    a = analyse_record(read_match_file(path, jacoby=jacoby)[0], judge, path)
    match = bool(a.match_length)
    p = a.players
    figures = LuckFigures([x.name for x in p], match, [x.luck for x in p],
                          [x.luck_mwc if match else x.luck_points for x in p], [x.luck_rate for x in p],
                          {m: [x.luck_marks[m] for x in p] for m in MARKS}, [x.rolls for x in p])
    figures.result = [x.result if match else float(x.points_won - x.points_lost) for x in p]
    figures.luck_adjusted = a.luck_adjusted()
    return figures


# ---------------------------------------------------------------------------------------------
# side by side


def allowance(ref: float, absolute: float) -> float:
    """How far a figure may be from the program's ``ref``: 5 % of it, or ``absolute``."""
    return max(REL_TOLERANCE * abs(ref), absolute)


def comparison_rows(ours: LuckFigures, ref: LuckFigures) -> list[tuple[str, int, float, float, bool | None]]:
    """(figure, player, bgnet's, the program's, within the tolerance; None: not compared) for
    every figure of both players."""
    units, unit_tol = ("MWC", MWC_TOLERANCE) if ref.match else ("points", EMG_TOLERANCE)
    luck_allowance = [allowance(ref.luck_units[p], unit_tol) for p in (0, 1)]
    rows: list[tuple[str, int, float, float, bool | None]] = []

    def add(label: str, p: int, mine: float, theirs: float, tol: float) -> None:
        rows.append((label, p, mine, theirs, abs(mine - theirs) <= tol))

    for p in (0, 1):
        emg = allowance(ref.luck[p], EMG_TOLERANCE)
        add("luck total, EMG", p, ours.luck[p], ref.luck[p], emg)
        add(f"luck total, {units}", p, ours.luck_units[p], ref.luck_units[p], luck_allowance[p])
        rolls = max(1, (ours.rolls or [1, 1])[p])
        # The program prints a rate to one decimal: half of it more.
        add("luck rate, mEMG / roll", p, ours.luck_rate[p], ref.luck_rate[p], 1000.0 * emg / rolls + 0.05)
        if ours.result is not None and ref.result is not None:
            add(f"result, {units}", p, ours.result[p], ref.result[p], allowance(ref.result[p], unit_tol))
        if ours.luck_adjusted is not None and ref.luck_adjusted is not None:
            add(f"luck-adjusted result, {units}", p, ours.luck_adjusted[p], ref.luck_adjusted[p],
                sum(luck_allowance))
        for mark in MARKS:
            rows.append((f"rolls marked {mark}", p, float(ours.marks[mark][p]), float(ref.marks[mark][p]), None))
    return rows


def format_rows(path: str, ours: LuckFigures, ref: LuckFigures) -> list[str]:
    pct = ref.match
    out = [f"{path}: {'match' if ref.match else 'money session'}; players {ref.names[0]} / {ref.names[1]}",
           f"  {'figure':34s} {'player':>14s} {'bgnet':>10s} {'GNU Bg':>10s}  within"]
    for label, p, mine, theirs, ok in comparison_rows(ours, ref):
        scale = 100.0 if pct and ("MWC" in label) else 1.0
        digits = 0 if label.startswith("rolls") else (2 if scale == 100.0 else 3)
        verdict = "" if ok is None else ("ok" if ok else "NO")
        out.append(f"  {label:34s} {ref.names[p][:14]:>14s} {scale * mine:>10.{digits}f} "
                   f"{scale * theirs:>10.{digits}f}  {verdict}")
    return out


# ---------------------------------------------------------------------------------------------
# files to compare


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


def gnubg_self_play(path: Path, length: int, seed: int, program: str) -> None:
    """A match to ``length`` points that the program plays against itself at 0-ply, saved as
    ``.sgf``."""
    players = [f"set player {p} {what}" for p in (0, 1) for what in
               ("gnubg", "chequerplay evaluation plies 0", "cubedecision evaluation plies 0")]
    script = "\n".join(["set threads 1", f"set seed {seed}", *players, "set display off",
                        f"new match {length}", f"save match {path}", ""])
    subprocess.run([program, "-t", "-q"], input=script, capture_output=True, text=True, timeout=600,
                   check=True)
    if not path.is_file():
        raise RuntimeError(f"GNU Backgammon wrote no {path}")


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
