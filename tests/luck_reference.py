"""bgnet's luck figures beside GNU Backgammon's own analysis of the same files, as
``tests/test_analyze_luck.py`` checks them and ``tools/verify_luck.py`` (a maintainer script, which
puts this folder on its path) prints them for any file.

For each file (``.mat`` or GNU Backgammon's ``.sgf``) the GNU Backgammon program (``gnubg -t``,
Debian package ``gnubg``) imports it, analyses it with checker play and cube decisions at a depth
(its luck analysis is its own default, cubeful 0-ply) and prints its statistics
(:func:`gnubg_luck`); ``bgnet analyze`` judges the same file with ``gnubg:PLY``
(:func:`bgnet_luck`). Compared per player (:func:`comparison_rows`): the rolls marked lucky and
unlucky, the luck total (EMG, and MWC in a match or points in a money session), the luck rate
(mEMG per roll), the actual and the luck-adjusted result, each within the tolerance: 5 % of the
program's figure, or 0.05 EMG (0.05 points in money play) or 2 MWC points, whichever is wider. A
luck rate may be off by the luck total's allowance spread over the player's rolls (and by the
0.05 the program rounds it to); a luck-adjusted result, the result less one player's luck total
plus the other's, by the two totals' allowances added.

The two sides do not evaluate with quite the same net: ``gnubg:N`` is the ``gnubg_nn`` package,
whose weights (format 1.01) differ from the program's (Debian's 1.07, format 1.00) by about a
hundredth in a probability now and then, and in a money session the program values a bear-off
of both sides by its two-sided database's cubeful equities where bgnet's cube head uses its
model. One roll's luck can differ by a few hundredths where that moves a cube action; over a
match most of it cancels.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from gnubg_program import gnubg_program

REL_TOLERANCE = 0.05
EMG_TOLERANCE = 0.05  # also points, in money play
MWC_TOLERANCE = 0.02
MARKS = ("very lucky", "lucky", "unlucky", "very unlucky")


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
# a match the program plays against itself


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

