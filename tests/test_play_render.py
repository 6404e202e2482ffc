"""The terminal board: numbering from the person's side, every checker and count visible."""
from __future__ import annotations

import numpy as np
import pytest

from bgnet.engine.board import start_position
from bgnet.engine.game import Game
from bgnet.engine.position_id import position_id
from bgnet.play.render import render_board
from bgnet.play.terminal import board_text


def cell_start(point: int) -> int:
    """First character of a point's 3-character column: " |" then six points, "|BAR|", six."""
    k = (point - 13) if point > 12 else (12 - point)  # 0..11 from the left edge
    return 2 + 3 * k + (5 if k >= 6 else 0)


def column(text: str, point: int) -> list[str]:
    """The cells of a point's column from the edge of the board towards the middle."""
    lines = text.splitlines()
    rows = lines[1:6] if point > 12 else lines[11:6:-1]
    c = cell_start(point)
    return [r[c:c + 3].strip() for r in rows]


def stack(text: str, point: int) -> tuple[str, int]:
    """(mark, count) drawn on a point."""
    cells = [c for c in column(text, point) if c]
    if not cells:
        return "", 0
    marks = {c for c in cells if not c.isdigit()}
    digits = [c for c in cells if c.isdigit()]
    mark = marks.pop()
    return mark, int(digits[0]) if digits else len(cells)


def test_start_position_numbering_and_counts():
    text = render_board(start_position(), names=("bgnet", "Ann"))
    lines = text.splitlines()
    assert lines[0].startswith(" +13-14-15-16-17-18-") and "19-20-21-22-23-24-+" in lines[0]
    assert lines[12].startswith(" +12-11-10--9--8--7-") and "-6--5--4--3--2--1-+" in lines[12]
    # X (the person) from its own side: 2 on 24, 5 on 13, 3 on 8, 5 on 6; O on the mirror points.
    assert [stack(text, p) for p in (24, 13, 8, 6)] == [("X", 2), ("X", 5), ("X", 3), ("X", 5)]
    assert [stack(text, p) for p in (1, 12, 17, 19)] == [("O", 2), ("O", 5), ("O", 3), ("O", 5)]
    board_part = "\n".join(line[:45] for line in lines[:13])
    assert board_part.count("X") == 15 and board_part.count("O") == 15
    assert lines[0].endswith("O  bgnet") and lines[12].endswith("X  Ann")
    assert lines[1].endswith("pips 167  off 0  bar 0") and lines[11].endswith("pips 167  off 0  bar 0")


def test_tall_stacks_bar_and_borne_off():
    b = np.zeros((2, 25), np.int8)
    b[1, 5], b[1, 0], b[1, 24] = 8, 3, 2  # X: 8 on its 6-point, 3 on its 1-point, 2 on the bar
    b[0, 5], b[0, 0], b[0, 24] = 7, 2, 1  # O: 7 on its 6 (X's 19), 2 on its 1 (X's 24), 1 on the bar
    text = render_board(b, names=("bot", "me"), cube_value=4, cube_owner=1)
    assert stack(text, 6) == ("X", 8) and stack(text, 19) == ("O", 7)
    assert stack(text, 1) == ("X", 3) and stack(text, 24) == ("O", 2)
    lines = text.splitlines()
    bar_column = "".join(line[20:23] for line in lines[1:12])
    assert bar_column.count("X") == 2 and bar_column.count("O") == 1
    assert "off 2  bar 2" in lines[11] and "pips 101" in lines[11]  # X: 8*6 + 3 + 2*25
    assert "off 5  bar 1" in lines[1] and "pips 69" in lines[1]  # O: 7*6 + 2 + 25
    assert "cube 4, owned by X (me)" in text


def test_panel_dice_score_ids():
    text = render_board(start_position(), names=("bgnet", "You"), dice=(6, 4), dice_of=1,
                        score=(2, 1), match_length=5, position_id="4HPwATDgc/ABMA",
                        match_id="cAkAAAAAAAAA", double_offered_by=None)
    lines = text.splitlines()
    assert "rolled 6-4" in lines[9]  # next to X, the bottom half
    assert "score 1 (4-away)" in lines[10] and "score 2 (3-away)" in lines[2]
    assert lines[13] == " 5-point match, score You 1, bgnet 2"
    assert lines[14] == " Position ID: 4HPwATDgc/ABMA   Match ID: cAkAAAAAAAAA"
    crawford = render_board(start_position(), crawford=True, match_length=3, score=(2, 0))
    assert "Crawford game: no doubling" in crawford


def test_bad_board_is_refused():
    b = start_position()
    b[1, 0] = 3  # X on its 1-point where O has its 24-point... and 16 checkers
    with pytest.raises(ValueError, match="checkers|both colours"):
        render_board(b)


def test_board_of_a_game_from_the_persons_side():
    """The person is player 0: after the bot (player 1) moves, the drawing shows the bot's
    checkers where the person sees them, and the Position ID of the player on roll."""
    g = Game(seed=5)
    g.opening_roll((1, 3))  # player 1 starts with 3-1
    g.play("8/5 6/5")
    text = board_text(g, ("Ann", "bot"))
    # The bot made its 5-point: the person's 20-point.
    assert stack(text, 20) == ("O", 2) and stack(text, 19) == ("O", 4) and stack(text, 17) == ("O", 2)
    assert f"Position ID: {position_id(g.board)}" in text
