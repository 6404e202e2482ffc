"""Move notation against GNU Backgammon, the parser's round trip, and every reason it gives."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import selfplay_positions
from hypothesis import given, settings
from hypothesis import strategies as st

from bgnet.engine.board import start_position
from bgnet.engine.movegen import generate
from bgnet.engine.notation import IllegalMoveError, format_move, parse_move

try:  # the reference packages are a test extra
    import gnubg
except ImportError:
    gnubg = None
reference = [pytest.mark.gnubg, pytest.mark.skipif(gnubg is None, reason="needs the gnubg reference package")]


def against_reference(f):
    for m in reference:
        f = m(f)
    return f


def make(me: dict[int, int], opp: dict[int, int]) -> np.ndarray:
    """A board from checkers on the MOVER's point numbers (25 = bar) for both sides.

    ``opp`` names the opponent's checkers by the mover's numbering too (the opponent's bar is
    written 0), which keeps the test positions readable; the rest of each side is borne off.
    """
    b = np.zeros((2, 25), np.int8)
    for p, n in me.items():
        b[1, p - 1] = n
    for p, n in opp.items():
        b[0, 24 if p == 0 else 24 - p] = n
    return b


def steps_tuple(steps) -> tuple[tuple[int, int], ...]:
    return tuple((int(a), int(b)) for a, b in steps if a >= 0)


POSITIONS = selfplay_positions(3, 400)


# ---------------------------------------------------------------------------------------------
# format_move


def test_sample_has_bar_bear_off_hits_and_doubles():
    kinds = {"bar": 0, "off": 0, "hit": 0, "double": 0}
    for b, d1, d2 in POSITIONS:
        after, steps = generate(b, d1, d2)
        kinds["bar"] += int(b[1, 24] > 0 and len(after) > 0)
        kinds["double"] += int(d1 == d2)
        kinds["off"] += int(any((s[:, 1] == 0).any() for s in steps))
        kinds["hit"] += int(any(a[0, 24] > b[0, 24] for a in after))
    assert min(kinds.values()) >= 15, kinds


@against_reference
def test_format_agrees_with_gnubg_on_selfplay_moves():
    total = 0
    for b, d1, d2 in POSITIONS:
        _, steps = generate(b, d1, d2)
        for s in steps:
            assert format_move(s, b) == gnubg.move_tuple_to_string(steps_tuple(s), b.tolist())
            total += 1
    assert total > 5000


@pytest.mark.parametrize("me, opp, dice, steps, text", [
    # Entering with a hit.
    ({25: 1, 6: 14}, {22: 1, 1: 2}, (3, 1), [(25, 22), (6, 5)], "bar/22* 6/5"),
    # Bearing off.
    ({6: 2, 3: 1}, {20: 2}, (6, 3), [(6, 0), (3, 0)], "6/off 3/off"),
    # Two checkers on one path, written once with the count.
    ({8: 2, 6: 5}, {20: 2}, (3, 3), [(8, 5), (8, 5), (6, 3), (6, 3)], "8/5(2) 6/3(2)"),
    # One checker's steps merged, the hit on the way kept.
    ({13: 1, 6: 5}, {10: 1, 20: 2}, (3, 3), [(13, 10), (10, 7), (7, 4), (6, 3)], "13/10*/4 6/3"),
    # No hit on the way: merged to start and end.
    ({13: 1, 6: 5}, {20: 2}, (3, 3), [(13, 10), (10, 7), (7, 4), (6, 3)], "13/4 6/3"),
    # Highest start first, whatever order the steps came in.
    ({24: 2, 13: 5}, {20: 2}, (6, 2), [(13, 11), (24, 18)], "24/18 13/11"),
])
@against_reference
def test_standard_examples(me, opp, dice, steps, text):
    b = make(me, opp)
    assert format_move(steps, b) == text
    assert format_move(steps, b) == gnubg.move_tuple_to_string(tuple(steps), b.tolist())
    # The example is a legal move, and reading its text back finds it.
    after, legal_steps = generate(b, *dice)
    i = parse_move(text, b, *dice)
    assert sorted(steps_tuple(legal_steps[i])) == sorted(steps)


@against_reference
def test_no_move_is_the_empty_string_as_gnubg_writes_it():
    b = start_position()
    assert format_move([], b) == "" == gnubg.move_tuple_to_string((), b.tolist())
    assert format_move(np.full((4, 2), -1, np.int8), b) == ""


def test_format_rejects_impossible_steps():
    with pytest.raises(ValueError, match="got 5/7"):
        format_move([(5, 7)], start_position())
    with pytest.raises(ValueError, match="at most 4 steps; got 5"):
        format_move([(6, 5)] * 5, start_position())


# ---------------------------------------------------------------------------------------------
# parse_move: round trip and the forms people type


def test_round_trip_selects_every_legal_move():
    for b, d1, d2 in POSITIONS[:120]:
        _, steps = generate(b, d1, d2)
        for i, s in enumerate(steps):
            assert parse_move(format_move(s, b), b, d1, d2) == i


@pytest.mark.parametrize("text, same_as", [
    ("13/11 24/18", "24/18 13/11"),
    ("  24 / 18    13/11 ", "24/18 13/11"),
    ("24-18 13-11", "24/18 13/11"),
    ("24/18, 13/11", "24/18 13/11"),
    ("24/16", "24/18/16"),
    ("24/18/16", "24/18 18/16"),
])
def test_equivalent_texts_start_position_62(text, same_as):
    b = start_position()
    assert parse_move(text, b, 6, 2) == parse_move(same_as, b, 6, 2)


def test_bar_off_and_repeat_spellings():
    b = make({25: 1, 6: 14}, {22: 1, 1: 2})
    assert parse_move("bar/22* 6/5", b, 3, 1) == parse_move("25/22 6/5", b, 3, 1)
    assert parse_move("bar/22* 6/5", b, 3, 1) == parse_move("BAR/22 6/5", b, 3, 1)
    assert parse_move("bar/22* 6/5", b, 3, 1) == parse_move("b/22 6/5", b, 3, 1)
    home = make({6: 2, 3: 1}, {20: 2})
    assert parse_move("6/off 3/off", home, 6, 3) == parse_move("6/0 3/0", home, 6, 3)
    doubles = make({8: 2, 6: 5}, {20: 2})
    ref = parse_move("8/5 8/5 6/3 6/3", doubles, 3, 3)
    assert parse_move("8/5(2) 6/3(2)", doubles, 3, 3) == ref
    assert parse_move("8/5 (2) 6/3(2)", doubles, 3, 3) == ref
    b = start_position()
    assert parse_move("13/7 6/4", b, 2, 2) == parse_move("13/11/9/7 6/4", b, 2, 2)


def test_hit_marks_choose_between_paths():
    # Blots on the way on 9 and 11: "13/7" with 4-2 hits one or the other, so it must say which.
    b = make({13: 1, 6: 14}, {9: 1, 11: 1, 20: 2})
    after, _ = generate(b, 4, 2)
    with pytest.raises(IllegalMoveError, match="hitting different checkers: type") as e:
        parse_move("13/7", b, 4, 2)
    assert "13/9*/7" in str(e.value) and "13/11*/7" in str(e.value)
    via9 = after[parse_move("13/9*/7", b, 4, 2)]
    via11 = after[parse_move("13/11/7", b, 4, 2)]
    assert via9[0, 24 - 9] == 0 and via9[0, 24 - 11] == 1
    assert via11[0, 24 - 11] == 0 and via11[0, 24 - 9] == 1


def test_unmarked_path_prefers_no_hit():
    b = make({13: 1, 6: 14}, {9: 1, 20: 2})
    after, _ = generate(b, 4, 2)
    quiet = after[parse_move("13/7", b, 4, 2)]
    assert quiet[0, 24] == 0  # nothing on the bar
    hit = after[parse_move("13/9*/7", b, 4, 2)]
    assert hit[0, 24] == 1


# ---------------------------------------------------------------------------------------------
# parse_move: properties on random self-play positions


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 60))
def test_every_legal_move_round_trips_and_conserves_checkers(seed, plies):
    b, d1, d2 = selfplay_positions(seed, plies + 1)[-1]
    after, steps = generate(b, d1, d2)
    for i, (a, s) in enumerate(zip(after, steps)):
        assert parse_move(format_move(s, b), b, d1, d2) == i
        # The mover's checkers on the board plus those borne off stay 15; the opponent's too
        # (a hit checker goes to its bar).
        off = int((s[:, 1] == 0).sum())
        assert int(a[1].sum()) + off == int(b[1].sum())
        assert int(a[0].sum()) == int(b[0].sum())
        both = [p for p in range(24) if a[1, p] > 0 and a[0, 23 - p] > 0]
        assert both == []


# ---------------------------------------------------------------------------------------------
# parse_move: why a move is illegal


def reason(text, board, d1, d2) -> str:
    with pytest.raises(IllegalMoveError) as e:
        parse_move(text, board, d1, d2)
    return str(e.value)


def test_reason_no_checker_on_point():
    assert reason("12/6 6/2", start_position(), 6, 4) == "you have no checker on point 12"
    assert reason("bar/22 13/12", start_position(), 3, 1) == "you have no checker on the bar"
    assert reason("24/18(3)", start_position(), 6, 6) == "you have only 2 checkers on point 24"
    one = make({13: 1, 6: 14}, {20: 2})
    assert reason("13/9 13/11", one, 4, 2) == "you have only 1 checker on point 13"


def test_reason_blocked_point():
    b = start_position()
    assert b[0, 24 - 19] == 5  # the opponent's 6-point is the mover's 19
    assert reason("24/19 13/7", b, 6, 5) == "point 19 is blocked (the opponent has 5 checkers there)"


def test_reason_every_way_blocked():
    b = make({24: 1, 6: 14}, {22: 2, 21: 3})
    assert reason("24/19", b, 3, 2) == (
        "point 21 is blocked (the opponent has 3 checkers there) and "
        "point 22 is blocked (the opponent has 2 checkers there)"
    )


def test_reason_enter_from_the_bar_first():
    b = make({25: 1, 13: 5, 8: 3, 6: 5}, {24: 2, 12: 5, 17: 3, 19: 5})
    assert len(generate(b, 3, 1)[0]) > 0
    assert reason("13/10 6/5", b, 3, 1) == "you must enter your checker from the bar first"
    two = make({25: 2, 13: 4, 8: 3, 6: 5}, {24: 2, 12: 5, 17: 3, 19: 5})
    assert reason("13/10 6/5", two, 3, 1) == "you must enter your checkers from the bar first"
    assert reason("bar/22 13/12", two, 3, 1) == "you must enter your checker from the bar first"


def test_reason_bear_off_with_checkers_outside():
    assert reason("6/off 6/1", start_position(), 6, 5) == (
        "you cannot bear off while checkers are outside your home board")


def test_reason_bear_off_from_a_lower_point():
    b = make({5: 1, 2: 1}, {20: 2})
    assert reason("2/off 5/4", b, 6, 1) == (
        "you cannot bear off from point 2 with a 6 while you have a checker on point 4: move it first")


def test_reason_dice_cannot_move_that_far():
    assert reason("13/8", start_position(), 3, 1) == "the dice 3-1 cannot move a checker 5 pips"
    home = make({6: 3}, {20: 2})
    assert reason("6/off", home, 2, 1) == "the dice 2-1 cannot bear off a checker from point 6"


def test_reason_dice_used_too_often_or_too_far():
    b = start_position()
    assert reason("24/18 13/9 8/4", b, 6, 4) == "that is 3 moves, but 6-4 gives only 2"
    assert reason("24/18 13/7", b, 6, 4) == "that moves 12 pips, but 6-4 gives only 10"
    assert reason("24/20 13/9", b, 6, 4) == "the dice 6-4 cannot make moves of 4 and 4 pips together"


def test_reason_must_play_both_dice():
    assert reason("13/7", start_position(), 6, 4) == "both dice can be played, so you must play both"


def test_reason_must_play_the_higher_die():
    # Only one checker can move: the 6 (24/18) or the 5 (24/19), never both (13 is blocked).
    b = make({24: 1, 1: 14}, {13: 2})
    _, steps = generate(b, 6, 5)
    assert [steps_tuple(s) for s in steps] == [((24, 18),)]
    assert reason("24/19", b, 6, 5) == "when only one die can be played you must play the higher (6)"


def test_reason_must_play_all_doubles():
    assert reason("24/18(2)", start_position(), 6, 6) == (
        "4 of the 6s can be played, so you must play 4 (you played 2)")


def test_no_legal_move_passes():
    closed = make({25: 1, 6: 14}, {p: 2 for p in range(19, 25)})
    assert len(generate(closed, 6, 6)[0]) == 0
    assert parse_move("", closed, 6, 6) is None
    assert parse_move("pass", closed, 6, 6) is None
    assert reason("bar/19", closed, 6, 6) == "you have no legal move with 6-6: the turn passes"
    assert reason("", start_position(), 3, 1) == "you have a legal move with 3-1, so you must play it"


@pytest.mark.parametrize("text, words", [
    ("hello", "cannot read 'hello': write a move as from/to parts"),
    ("13", "cannot read '13'"),
    ("13/", "cannot read '13/'"),
    ("13/x", "cannot read 'x' in '13/x' as a point"),
    ("30/24", "there is no point 30"),
    ("7/13", "from 7 to 13: checkers move from higher points to lower ones"),
    ("off/3", "a checker moves on after bearing off"),
    ("3/bar", "a checker moves to the bar"),
    ("13/7(5)", "repeated 1 to 4 times; got (5)"),
])
def test_unreadable_text_says_what_was_expected(text, words):
    assert words in reason(text, start_position(), 6, 4)


def test_bad_dice_and_text_type():
    with pytest.raises(ValueError, match="dice are whole numbers from 1 to 6; got 7 and 1"):
        parse_move("13/6", start_position(), 7, 1)
    with pytest.raises(IllegalMoveError, match="a move is text"):
        parse_move(None, start_position(), 3, 1)
    crowded = start_position()
    crowded[1, 0] = 1
    with pytest.raises(ValueError, match="player on roll has 16 checkers"):
        parse_move("13/10", crowded, 3, 1)
