"""XGID: hand-checked examples, round trips, bad input, and GNU Backgammon reading our strings."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgnet.engine.board import start_position, swap
from bgnet.engine.position_id import board_from_position_id, position_id
from bgnet.engine.state import CENTERED, MatchContext
from bgnet.formats.match_id import match_id
from bgnet.formats.xgid import board_and_context_from_xgid, xgid

START = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
# A position posted as an example on a backgammon forum: match to 7 at 6-4, Crawford.
FORUM = "XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:6:4:1:7:10"


def test_starting_position():
    board, ctx = board_and_context_from_xgid(START)
    assert np.array_equal(board, start_position())
    assert ctx == MatchContext(player_on_roll=1, turn=1)
    assert xgid(board, ctx) == START
    # The top player on roll: same characters, turn -1.
    assert xgid(start_position(), MatchContext()) == START.replace(":0:1:00:", ":0:-1:00:")


def test_forum_example_by_hand():
    board, ctx = board_and_context_from_xgid(FORUM)
    # Player 1 (upper case, on roll): 2-point 1, 5..8 two each, 11 two, 13 two, 24 two.
    me = np.zeros(25, np.int8)
    me[[1]] = 1
    me[[4, 5, 6, 7, 10, 12, 23]] = 2
    # Player 0 (lower case) on player 1's points 4, 12, 19, 20, 21, 22 = its own 21, 13, 6, 5, 4, 3.
    opp = np.zeros(25, np.int8)
    opp[[20, 12, 4, 3]] = 2
    opp[5], opp[2] = 4, 3
    assert np.array_equal(board, np.stack([opp, me]))
    assert ctx == MatchContext(player_on_roll=1, turn=1, dice=(3, 1), match_length=7,
                               score=(4, 6), crawford=True)
    assert xgid(board, ctx) == FORUM
    # The same position with player 0 to roll is the mirror board, same text.
    board0, ctx0 = board_and_context_from_xgid(FORUM.replace(":0:0:1:31:", ":0:0:-1:31:"))
    assert np.array_equal(board0, swap(board)) and ctx0.player_on_roll == 0


def test_bar_and_borne_off():
    # Player 1: 3 on its 1-point, 2 on its 6-point, 2 on the bar, 8 off.
    # Player 0: 1 on the bar, 2 on player 1's 20 (its 5), 4 on player 1's 24 (its 1), 8 off.
    board, ctx = board_and_context_from_xgid("XGID=aC----B-------------b---dB:0:0:1:31:0:0:1:0:10")
    assert board[1].tolist() == [3, 0, 0, 0, 0, 2] + [0] * 18 + [2]
    assert board[0].tolist() == [4, 0, 0, 0, 2] + [0] * 19 + [1]
    assert ctx.jacoby and ctx.is_money


def random_board(rng) -> np.ndarray:
    """A legal position: checkers dropped on random slots (or off), none on a point the other
    side holds."""
    b = np.zeros((2, 25), np.int8)
    for side in (1, 0):
        for _ in range(int(rng.integers(0, 16))):
            slot = int(rng.integers(0, 25))
            if slot < 24 and b[1 - side, 23 - slot] > 0:
                continue
            b[side, slot] += 1
    return b


def test_consistent_with_position_id():
    """The board an XGID gives has the Position ID of the same board written back."""
    rng = np.random.default_rng(3)
    for b in [start_position()] + [random_board(rng) for _ in range(60)]:
        for on_roll in (0, 1):
            ctx = MatchContext(player_on_roll=on_roll, turn=on_roll)
            back, _ = board_and_context_from_xgid(xgid(b, ctx))
            assert position_id(back) == position_id(b)
            assert np.array_equal(board_from_position_id(position_id(back)), b)


def test_double_offered():
    board, ctx = board_and_context_from_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:0:0:1:0:10")
    # Player 0 owns a 2-cube and redoubles: player 1 must answer; the cube still shows 2.
    assert (ctx.double_offered, ctx.player_on_roll, ctx.turn, ctx.cube_value, ctx.cube_owner) == \
        (True, 0, 1, 2, 0)
    assert xgid(board, ctx) == "XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:0:0:1:0:10"


def test_money_flags():
    for flag, jacoby in ((0, False), (1, True), (2, False), (3, True)):
        _, ctx = board_and_context_from_xgid(f"XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:{flag}:0:10")
        assert ctx.jacoby is jacoby


@st.composite
def boards(draw):
    return random_board(np.random.default_rng(draw(st.integers(0, 2**32 - 1))))


@st.composite
def contexts(draw):
    length = draw(st.sampled_from([0, 0, 1, 3, 7, 11, 25, 64]))
    score = (draw(st.integers(0, max(length - 1, 0))), draw(st.integers(0, max(length - 1, 0))))
    crawford = bool(length) and length - max(score) == 1 and draw(st.booleans())
    cube_log2 = 0 if crawford else draw(st.integers(0, 6))
    on_roll = draw(st.integers(0, 1))
    doubled = draw(st.booleans())
    dice = (0, 0) if doubled or draw(st.booleans()) else (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    return MatchContext(
        cube_value=1 << cube_log2, cube_owner=draw(st.sampled_from([CENTERED, 0, 1])),
        player_on_roll=on_roll, crawford=crawford, turn=1 - on_roll if doubled else on_roll,
        double_offered=doubled, dice=dice, match_length=length, score=score,
        jacoby=length == 0 and draw(st.booleans()))


@given(boards(), contexts())
@settings(max_examples=200, deadline=None)
def test_round_trip(board, ctx):
    text = xgid(board, ctx)
    back_board, back_ctx = board_and_context_from_xgid(text)
    assert np.array_equal(back_board, board)
    assert back_ctx == ctx
    assert xgid(back_board, back_ctx) == text


@pytest.mark.parametrize("bad, words", [
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "10 fields"),
    ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "field 1 .* 26 characters"),
    ("XGID=-b----E-C---eE---c-e----Q-:0:0:1:00:0:0:0:0:10", "field 1 .*'Q'"),
    ("XGID=-b----E-C---eE---c-e----C-:0:0:1:00:0:0:0:0:10", "field 1 .*16 checkers"),
    ("XGID=Ab----E-C---eE---c-e----A-:0:0:1:00:0:0:0:0:10", "top player's bar"),
    ("XGID=-b----E-C---eE---c-e----Aa:0:0:1:00:0:0:0:0:10", "bottom player's bar"),
    ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", "field 2 .*whole number"),
    ("XGID=-b----E-C---eE---c-e----B-:11:0:1:00:0:0:0:0:10", "field 2 .*maximum cube"),
    ("XGID=-b----E-C---eE---c-e----B-:0:2:1:00:0:0:0:0:10", "field 3"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10", "field 4"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:71:0:0:0:0:10", "field 5"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:3:0:0:0:0:10", "field 5"),
    ("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:B:0:0:3:0:10", "beaver"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:-1:0:0:0:10", "field 6"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:7:0:0:7:10", "not below the match length"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:3:1:7:10", "neither player is 1-away"),
    ("XGID=-b----E-C---eE---c-e----B-:1:0:1:00:6:3:1:7:10", "Crawford game"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:4:0:10", "field 8"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:7:10", "field 8"),
    (42, "string"),
    # one bound on a match's length (GNU Backgammon's 64); numbers in ASCII digits, bounded
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:65:10", "field 9 .*a match is 1 to 64 points long .*got 65"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:8000:10", "field 9 .*got 8000"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:" + "9" * 30 + ":10", "field 9 .*number of 30 digits"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:\u0667:10", "field 9 .*digits 0-9"),
    ("XGID=-b----E-C---eE---c-e----B-:\u0661:0:1:00:0:0:0:0:10", "field 2 .*digits 0-9"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:" + "9" * 30 + ":0:0:0:10", "field 6 .*0 to 32767"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:32768:0:0:0:10", "field 6 .*0 to 32767"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:" + "9" * 5000, "field 10 .*5000 characters"),
])
def test_bad_input(bad, words):
    with pytest.raises(ValueError, match=words):
        board_and_context_from_xgid(bad)


def test_writer_rejects():
    with pytest.raises(ValueError, match="power of two"):
        xgid(start_position(), MatchContext(cube_value=3))
    with pytest.raises(ValueError, match="shape"):
        xgid(np.zeros((2, 24), np.int8), MatchContext())
    with pytest.raises(ValueError, match="max_cube_log2"):
        xgid(start_position(), MatchContext(cube_value=64), max_cube_log2=5)


@pytest.mark.gnubg
def test_gnubg_reads_our_xgids():
    """GNU Backgammon imports each XGID to the same board, Position ID and Match ID as ours."""
    gnubg = pytest.importorskip("gnubg")
    for c in ("set sound enable off", "set player 0 human", "set player 1 human",
              "set automatic roll off"):
        gnubg.command(c)
    rng = np.random.default_rng(5)
    for i in range(80):
        b = random_board(rng)
        length = int(rng.choice([0, 5, 7, 9]))
        score = tuple(int(x) for x in rng.integers(0, max(length, 1), 2)) if length else (0, 0)
        crawford = bool(length) and length - max(score) == 1 and bool(rng.integers(2))
        on_roll = int(rng.integers(2))
        doubled = not crawford and i % 5 == 0
        ctx = MatchContext(
            cube_value=1 if crawford else 1 << int(rng.integers(0, 7)),
            cube_owner=CENTERED if crawford else int(rng.choice([CENTERED, 0, 1])),
            player_on_roll=on_roll, turn=1 - on_roll if doubled else on_roll,
            double_offered=doubled, crawford=crawford,
            dice=(0, 0) if doubled or i % 3 == 0 else tuple(int(x) for x in rng.integers(1, 7, 2)),
            match_length=length, score=score, jacoby=length == 0 and bool(rng.integers(2)))
        if ctx.cube_value == 1:
            ctx = ctx.replace(cube_owner=CENTERED)
        gnubg.set_gnubg_id(xgid(b, ctx))
        theirs = np.array(gnubg.board(), dtype=np.int8)
        assert np.array_equal(theirs, b), i
        assert gnubg.position_id(gnubg.board()) == position_id(b)
        # gnubg steps back from an offered double to the doubler about to decide.
        expect = ctx.replace(double_offered=False, turn=on_roll) if doubled else ctx
        assert gnubg.match_id() == match_id(expect), (i, xgid(b, ctx))
