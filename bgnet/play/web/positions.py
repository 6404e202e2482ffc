"""Positions, dice and IDs read from requests; moves and probabilities written into answers.

Two ways to give a position:

* bgnet's API: a GNU Backgammon Position ID (the side to move on roll), ``POSITIONID:MATCHID`` or
  an XGID (the last two also carry the cube, the score and possibly the dice), read alike by
  :func:`bgnet.formats.position.read_position` whichever parameter holds them;
* wildbg's API: checker counts ``p0`` .. ``p25`` from the side to move ("x"): ``p1`` .. ``p24``
  are x's points 1..24, x's checkers positive and the opponent's negative; ``p25`` is x's bar
  (0..15) and ``p0`` the opponent's bar (-15..0). Checkers not on the board are borne off.

In both, a move's steps are ``(from, to)`` pairs numbered from the mover's side, 25 the bar and
0 off, one pair per die. Probabilities are cubeless, in GNU Backgammon's order; after a move they
are the mover's, with the opponent to roll next.
"""
from __future__ import annotations

import numpy as np

from bgnet.engine import position_id
from bgnet.engine.board import NUM_CHECKERS, check_board
from bgnet.formats.position import read_dice
from bgnet.nn.probs import OUTPUTS
from bgnet.play.web.service import ApiError

WILDBG_POINTS = tuple(f"p{i}" for i in range(26))
WILDBG_NAMES = ("win", "winG", "winBg", "loseG", "loseBg")  # wildbg's names for OUTPUTS


def bad(message: str) -> ApiError:
    """A 400 answer for input that cannot be used."""
    return ApiError(400, message)


def check_die(value: int, name: str) -> int:
    if not 1 <= value <= 6:
        raise bad(f"{name} must be from 1 to 6; got {value}")
    return int(value)


def parse_dice(text: str) -> tuple[int, int]:
    """``"31"``, ``"3-1"``, ``"3,1"`` or ``"3 1"`` -> (3, 1) (:func:`bgnet.formats.position.read_dice`);
    a 400 otherwise."""
    try:
        return read_dice(text)
    except ValueError as e:
        raise bad(str(e)) from None


def plus_restored(text: str) -> str:
    """An ID from a query string with each inner space read back as the ``+`` it was: Position and
    Match IDs are base64, whose ``+`` a URL must write as ``%2B``, and a ``+`` left as it is
    arrives as a space. No ID bgnet reads holds a space, so the repair is safe.

    >>> plus_restored(" sGfwATDgc/ABMA:cIkWAAAAAAAA "), plus_restored("4HP AQEgA AAAAA")
    ('sGfwATDgc/ABMA:cIkWAAAAAAAA', '4HP+AQEgA+AAAAA')
    """
    return text.strip().replace(" ", "+")


def one_position(position_id_: str | None, xgid_: str | None):
    """(board, MatchContext or None) from exactly one of the parameters ``position_id`` and
    ``xgid``; either takes a Position ID, ``POSITIONID:MATCHID`` or an XGID."""
    from bgnet.formats.position import check_in_play, read_position

    if (position_id_ is None) == (xgid_ is None):
        raise bad("give the position as exactly one of position_id (a GNU Backgammon Position ID, "
                  "POSITIONID:MATCHID or an XGID) and xgid")
    name, text = ("position_id", position_id_) if position_id_ is not None else ("xgid", xgid_)
    assert text is not None  # exactly one of the two was given
    text = plus_restored(text)
    try:
        pos = read_position(text)
        check_in_play(pos.board)
    except ValueError as e:
        raise bad(f"{name}: {e}") from None
    return pos.board, pos.context



def board_from_wildbg(points: dict[str, int]) -> np.ndarray:
    """bgnet's board ``[opponent, x]`` from wildbg's ``p0`` .. ``p25`` (missing names are 0)."""
    board = np.zeros((2, 25), np.int8)
    p25, p0 = points.get("p25", 0), points.get("p0", 0)
    if not 0 <= p25 <= NUM_CHECKERS:
        raise bad(f"p25 is the bar of the side to move: 0..15 checkers; got {p25}")
    if not -NUM_CHECKERS <= p0 <= 0:
        raise bad(f"p0 is the opponent's bar, written negative: -15..0; got {p0}")
    board[1, 24], board[0, 24] = p25, -p0
    for i in range(1, 25):
        v = points.get(f"p{i}", 0)
        if not -NUM_CHECKERS <= v <= NUM_CHECKERS:
            raise bad(f"p{i} must be from -15 to 15; got {v}")
        if v > 0:
            board[1, i - 1] = v
        elif v < 0:
            board[0, 24 - i] = -v  # x's point i is the opponent's point 25 - i
    for side, who in ((1, "the side to move (positive counts and p25)"),
                      (0, "the opponent (negative counts and p0)")):
        if int(board[side].sum()) > NUM_CHECKERS:
            raise bad(f"{who} has {int(board[side].sum())} checkers; at most 15 are allowed")
    if int(board[1].sum()) == 0 or int(board[0].sum()) == 0:
        raise bad("each side needs at least one checker on the board: a game with a side "
                  "borne off is over")
    try:
        check_board(board)
    except ValueError as e:
        raise bad(f"impossible position: {e}") from None
    return board


def next_position_id(after: np.ndarray) -> str:
    """The Position ID after a move with the OPPONENT on roll (``after`` is ``[opponent, mover]``)."""
    return position_id(np.ascontiguousarray(after[::-1]))


def steps_list(steps) -> list[dict]:
    """``[{"from": 8, "to": 5}, ...]`` from (from, to) pairs, padding (-1) dropped."""
    pairs = np.asarray(steps).reshape(-1, 2)
    return [{"from": int(a), "to": int(b)} for a, b in pairs if a >= 0]


def probs_dict(probs) -> dict:
    """bgnet's names: ``{"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}``."""
    return {k: round(float(v), 6) for k, v in zip(OUTPUTS, probs)}


def wildbg_probs(probs) -> dict:
    """wildbg's names: ``{"win", "winG", "winBg", "loseG", "loseBg"}``."""
    return {k: round(float(v), 6) for k, v in zip(WILDBG_NAMES, probs)}
