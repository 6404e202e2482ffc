"""An ASCII backgammon board for the terminal.

The person playing is ``X`` at the bottom, the bot ``O`` at the top. Points are numbered 1 to 24
from X's side, as a player sees his own board: X moves from 24 (top right) round to 1 (bottom
right) and bears off on the right. O's checkers are drawn on the same points, so O's own point
``p`` is shown as ``25 - p``. A stack taller than five shows its count in its fifth row.
Checkers on the bar sit in the half of the bar column where they re-enter (X's at the top, O's
at the bottom); the panel on the right repeats every count in words, with pip counts, dice, cube,
score and match length, and the Position and Match IDs follow the board::

     +13-14-15-16-17-18------19-20-21-22-23-24-+     O  bgnet
     | X           O    |   | O              X |     pips 167  off 0  bar 0
     ...

>>> from bgnet.engine.board import start_position
>>> text = render_board(start_position(), names=("bgnet", "You"))
>>> text.count("X"), text.count("O")   # 15 checkers each, plus the names' markers
(16, 16)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgnet.engine.board import NUM_CHECKERS, as_board

TOP, BOTTOM = 0, 1  # rows of the board array: O (the bot) and X (the person)
MARKS = ("O", "X")
ROWS = 5  # checkers drawn per point before the count takes over
CENTRED = -1


@dataclass(frozen=True)
class Panel:
    """What the panel beside the board says. Indices 0 and 1 are O (top) and X (bottom), as the
    rows of the board array.

    ``dice`` were rolled by ``dice_of`` (0, 1, or None before a roll); ``cube_owner`` is 0, 1
    or -1 (centred); ``score`` is the score before this game; ``match_length`` 0 is money play.
    """

    names: tuple[str, str] = ("O", "X")
    dice: tuple[int, int] = (0, 0)
    dice_of: int | None = None
    cube_value: int = 1
    cube_owner: int = CENTRED
    score: tuple[int, int] = (0, 0)
    match_length: int = 0
    crawford: bool = False
    double_offered_by: int | None = None
    position_id: str | None = None
    match_id: str | None = None


def render_board(board, **panel) -> str:
    """The board as text. ``board`` is ``[O, X]``: the bot's checkers in ``board[0]``, the
    person's in ``board[1]``, each side on its own numbering (bgnet's convention with X as the
    side "on roll"); the keyword arguments are the fields of :class:`Panel`."""
    b = as_board(board)
    info = Panel(**panel)
    cells = _point_cells(b)
    side = _panel_lines(b, info)
    lines = [_frame(range(13, 25))]
    lines += [_row(cells, r, top=True, bar=_bar_cell(b[BOTTOM, 24], r, "X")) for r in range(ROWS)]
    lines.append(" |" + " " * 18 + "|BAR|" + " " * 18 + "|")
    lines += [_row(cells, r, top=False, bar=_bar_cell(b[TOP, 24], r, "O"))
              for r in reversed(range(ROWS))]
    lines.append(_frame(range(12, 0, -1)))
    out = [f"{line}     {text}".rstrip() for line, text in zip(lines, side)]
    out += _footer(info)
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# the board


def _point_cells(b: np.ndarray) -> dict[int, tuple[str, int]]:
    """X's point p (1..24) -> (mark, count) of the checkers standing on it ("", 0 when empty)."""
    cells = {}
    for p in range(1, 25):
        x, o = int(b[BOTTOM, p - 1]), int(b[TOP, 24 - p])  # O's own point 25 - p is index 24 - p
        cells[p] = ("X", x) if x else ("O", o) if o else ("", 0)
    return cells


def _stack_char(mark: str, count: int, r: int) -> str:
    """What row ``r`` (0 = the edge of the board) of a stack shows."""
    if r == ROWS - 1 and count > ROWS:
        return str(count)
    return mark if count > r else ""


def _row(cells: dict[int, tuple[str, int]], r: int, *, top: bool, bar: str) -> str:
    """One row of checkers: points 13..24 on the top half, 12..1 on the bottom half."""
    left, right = (range(13, 19), range(19, 25)) if top else (range(12, 6, -1), range(6, 0, -1))
    text = lambda pts: "".join(f"{_stack_char(*cells[p], r):^3}" for p in pts)  # noqa: E731
    return f" |{text(left)}|{bar:^3}|{text(right)}|"


def _bar_cell(count: int, r: int, mark: str) -> str:
    """Checkers on the bar: drawn from the middle of the board outwards."""
    return _stack_char(mark, int(count), ROWS - 1 - r)


def _frame(points) -> str:
    """The numbered edge of the board: point numbers above/below their columns."""
    pts = list(points)
    label = lambda ps: "".join(f"{p:^3}".replace(" ", "-") for p in ps)  # noqa: E731
    return f" +{label(pts[:6])}-----{label(pts[6:])}+"


# ---------------------------------------------------------------------------------------------
# the panel


def _panel_lines(b: np.ndarray, info: Panel) -> list[str]:
    """Text beside each of the 13 lines of the board: O's facts at the top, X's at the bottom,
    the cube in the middle."""
    side = [""] * 13
    for who, at in ((TOP, 0), (BOTTOM, 12)):
        step = 1 if who == TOP else -1
        side[at] = f"{MARKS[who]}  {info.names[who]}"
        side[at + step] = (f"pips {_pips(b[who])}  off {NUM_CHECKERS - int(b[who].sum())}  "
                           f"bar {int(b[who, 24])}")
        side[at + 2 * step] = _score_text(info, who)
        if info.dice_of == who and info.dice[0]:
            side[at + 3 * step] = f"rolled {info.dice[0]}-{info.dice[1]}"
        if info.double_offered_by == who:
            side[at + 4 * step] = f"doubles to {2 * info.cube_value}"
    side[6] = _cube_text(info)
    return side


def _pips(side: np.ndarray) -> int:
    return int((side.astype(np.int64) * np.arange(1, 26)).sum())


def _score_text(info: Panel, who: int) -> str:
    points = info.score[who]
    text = f"score {points}"
    if info.match_length:
        text += f" ({info.match_length - points}-away)"
    return text


def _cube_text(info: Panel) -> str:
    if info.crawford:
        return "Crawford game: no doubling"
    if info.cube_owner == CENTRED:
        return f"cube {info.cube_value}, centred"
    return f"cube {info.cube_value}, owned by {MARKS[info.cube_owner]} ({info.names[info.cube_owner]})"


def _footer(info: Panel) -> list[str]:
    if info.match_length:
        kind = f"{info.match_length}-point match, score {info.names[BOTTOM]} {info.score[BOTTOM]}, " \
               f"{info.names[TOP]} {info.score[TOP]}"
    else:
        kind = "money game"
    out = [f" {kind}"]
    ids = []
    if info.position_id:
        ids.append(f"Position ID: {info.position_id}")
    if info.match_id:
        ids.append(f"Match ID: {info.match_id}")
    if ids:
        out.append(" " + "   ".join(ids))
    return out
