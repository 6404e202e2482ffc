"""Position ID and position key: agreement with GNU Backgammon (gnubg_nn) and every error."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgnet.engine import board_from_position_id, position_id
from bgnet.engine.board import start_position, swap
from bgnet.engine.position_id import board_from_position_key, position_key, read_position_id, write_position_id
from bgnet.engine.sampling import sample_positions

try:  # the reference packages are a test extra
    import gnubg_nn
except ImportError:
    gnubg_nn = None
reference = [pytest.mark.gnubg,
             pytest.mark.skipif(gnubg_nn is None, reason="needs the gnubg-nn reference package")]


def against_reference(f):
    for m in reference:
        f = m(f)
    return f


def selfplay_positions(seed: int, n: int) -> list[np.ndarray]:
    """Positions met in random self-play (random legal moves), restarting after each game."""
    return list(sample_positions(n, seed=seed)[0])


def raw_id(counts, extra_bits=()) -> str:
    """A Position ID written bit by bit from two lists of 25 counts, with no checks at all.

    ``extra_bits`` lists bit numbers (0..79) to set as well.
    """
    bits = []
    for side in counts:
        for n in side:
            bits += [1] * n + [0]
    bits = (bits + [0] * 80)[:80]
    for k in extra_bits:
        bits[k] = 1
    data = bytes(sum(bits[8 * i + j] << j for j in range(8)) for i in range(10))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    value = int.from_bytes(data, "big") << 4
    return "".join(alphabet[(value >> (6 * (13 - i))) & 63] for i in range(14))


POSITIONS = selfplay_positions(11, 2500)


def test_sample_covers_bar_and_bear_off():
    assert sum(int(b[:, 24].sum() > 0) for b in POSITIONS) > 100
    assert sum(int(b.sum() < 30) for b in POSITIONS) > 100


@against_reference
def test_agrees_with_gnubg_nn_on_selfplay_positions():
    for b in POSITIONS:
        as_list = b.tolist()
        pid = position_id(b)
        assert pid == gnubg_nn.position_id(as_list)
        assert position_key(b) == gnubg_nn.key_of_board(as_list)
        back = board_from_position_id(pid)
        assert back.dtype == np.int8 and back.shape == (2, 25)
        assert np.array_equal(back, np.array(gnubg_nn.board_from_position_id(pid)))
        assert np.array_equal(board_from_position_key(position_key(b)), b)


@against_reference
def test_start_position_is_the_documented_id():
    # GNU Backgammon's manual gives this ID for the opening position.
    assert position_id(start_position()) == "4HPwATDgc/ABMA"
    assert gnubg_nn.position_id(start_position().tolist()) == "4HPwATDgc/ABMA"


@against_reference
def test_raw_writer_matches_gnubg_nn():
    # The test's own bit writer agrees with the reference, so the corrupt IDs below are real IDs.
    for b in POSITIONS[:200]:
        assert raw_id(b.tolist()) == gnubg_nn.position_id(b.tolist())


@st.composite
def legal_boards(draw):
    """Any legal position: up to 15 checkers a side, never both colours on one point."""
    board = np.zeros((2, 25), np.int8)
    for slot in draw(st.lists(st.integers(0, 24), max_size=15)):
        board[1, slot] += 1
    free = [j for j in range(25) if j == 24 or board[1, 23 - j] == 0]
    for slot in draw(st.lists(st.sampled_from(free), max_size=15)):
        board[0, slot] += 1
    return board


@against_reference
@settings(max_examples=150, deadline=None)
@given(legal_boards())
def test_round_trip_random_boards(board):
    pid = position_id(board)
    assert len(pid) == 14
    assert pid == gnubg_nn.position_id(board.tolist())
    assert np.array_equal(board_from_position_id(pid), board)
    assert np.array_equal(board_from_position_key(position_key(board)), board)


def test_accepts_padding_and_spaces():
    b = start_position()
    assert np.array_equal(board_from_position_id("  4HPwATDgc/ABMA==\n"), b)
    assert np.array_equal(board_from_position_key(" OAHDPAABDAOAHDPAABDA "), b)


@pytest.mark.parametrize("bad, words", [
    ("4HPwATDgc/ABM", "has 14 characters; '4HPwATDgc/ABM' has 13"),
    ("4HPwATDgc/ABMAA", "has 15"),
    ("4HPwATDgc/AB!A", "character '!', which is not base64"),
    ("4HPwATDgc-ABMA", "character '-'"),
])
def test_bad_length_or_characters(bad, words):
    with pytest.raises(ValueError, match="Position ID") as e:
        board_from_position_id(bad)
    assert words in str(e.value)


def test_not_a_string():
    with pytest.raises(ValueError, match="string of 14 characters; got int"):
        board_from_position_id(12345)
    with pytest.raises(ValueError, match="string of 20 letters; got NoneType"):
        board_from_position_key(None)


def test_too_many_checkers_names_the_side_and_count():
    opp = [0] * 25
    opp[5] = 16
    me = [0] * 25
    me[5] = 14
    with pytest.raises(ValueError, match="the opponent has 16 checkers; at most 15"):
        board_from_position_id(raw_id([opp, me]))
    with pytest.raises(ValueError, match="the player on roll has 16 checkers"):
        board_from_position_id(raw_id([me, opp]))
    # 80 set bits: the first side never ends.
    with pytest.raises(ValueError, match="bits run out .*too many checkers"):
        board_from_position_id(raw_id([[0] * 25, [0] * 25], extra_bits=range(80)))


def test_both_colours_on_one_point_names_the_point():
    me = [0] * 25
    me[4] = 2  # player on roll's point 5 ...
    opp = [0] * 25
    opp[19] = 3  # ... is the opponent's point 20
    words = r"both colours on the player on roll's point 5 \(2 .* 3 of the opponent"
    with pytest.raises(ValueError, match=words):
        board_from_position_id(raw_id([opp, me]))


def test_trailing_bits():
    # The 14th character carries 2 bits of the position and 4 unused bits.
    with pytest.raises(ValueError, match="sets bits beyond the 80"):
        board_from_position_id("4HPwATDgc/ABMB")
    # A set bit after both sides are complete: without two of its checkers the start position
    # uses 78 bits, so bit 79 is free.
    b = start_position()
    b[1, 23] = 0
    assert raw_id(b.tolist()) == position_id(b)
    with pytest.raises(ValueError, match="bit 79 of 80 is set after the last point"):
        board_from_position_id(raw_id(b.tolist(), extra_bits=[79]))


def test_position_key_errors():
    with pytest.raises(ValueError, match="has 20 letters; 'OAHD' has 4"):
        board_from_position_key("OAHD")
    with pytest.raises(ValueError, match="character 'Z'; only the letters A to P"):
        board_from_position_key("ZAHDPAABDAOAHDPAABDA")


def test_bad_boards_are_refused_when_writing():
    with pytest.raises(ValueError, match="shape"):
        position_id(np.zeros((2, 24), np.int8))
    b = start_position()
    b[0, 0] = 1  # the opponent's 16th checker
    with pytest.raises(ValueError, match="opponent has 16 checkers"):
        position_id(b)
    b = start_position()
    b[1, 5], b[1, 0] = 4, 1  # my point 1 is the opponent's 24 point, where it has 2 checkers
    with pytest.raises(ValueError, match="both colours .* point.* 1"):
        position_key(b)


# ---------------------------------------------------------------------------------------------
# the compiled coder behind the per-call API


def compiled_id(first, second) -> str:
    out = np.zeros(14, np.uint8)
    assert write_position_id(first, second, out, 0) == 14
    return out.tobytes().decode("ascii")


def compiled_read(text: str):
    board = np.full((2, 25), -1, np.int8)
    ok = read_position_id(text.encode("latin-1"), board)
    return board if ok else None


def test_compiled_coder_matches_on_selfplay_positions():
    for b in POSITIONS:
        pid = position_id(b)
        assert compiled_id(b[0], b[1]) == pid
        assert compiled_id(b[1], b[0]) == position_id(swap(b))
        assert np.array_equal(compiled_read(pid), b)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/!é",
               min_size=14, max_size=14))
def test_compiled_reader_refuses_exactly_what_the_checked_reader_refuses(text):
    try:
        expected = board_from_position_id(text)
    except ValueError:
        expected = None
    got = compiled_read(text) if text.isascii() else None
    if expected is None:
        assert got is None
    else:
        assert np.array_equal(got, expected)


def test_compiled_reader_refuses_the_corrupt_ids_of_the_checked_tests():
    full = [[0] * 25, [0] * 25]
    full[1][5] = 16
    assert compiled_read(raw_id(full)) is None  # 16 checkers
    assert compiled_read(raw_id([[0] * 25, [0] * 25], extra_bits=[79])) is None  # trailing bit
    assert compiled_read("4HPwATDgc/ABMB") is None  # a bit beyond the 80
    both = [[0] * 25, [0] * 25]
    both[1][0], both[0][23] = 1, 1
    assert compiled_read(raw_id(both)) is None  # both colours on one point
    assert np.array_equal(compiled_read("AAAAAAAAAAAAAA"), np.zeros((2, 25), np.int8))


@settings(max_examples=300, deadline=None)
@given(legal_boards())
def test_compiled_coder_round_trips_random_boards(board):
    pid = position_id(board)
    assert compiled_id(board[0], board[1]) == pid
    assert np.array_equal(compiled_read(pid), board)
