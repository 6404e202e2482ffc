"""The public ``legal_moves`` API and the ``bgnet moves`` command, checked against GNU Backgammon."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import selfplay_positions

import bgnet.engine as engine
from bgnet.cli import main
from bgnet.engine import board_from_position_id, legal_moves, position_id
from bgnet.engine.api import _legal_moves_checked
from bgnet.engine.board import game_result, start_position, swap
from bgnet.engine.movegen import generate
from bgnet.engine.notation import format_move, write_move
from bgnet.engine.sampling import sample_positions

try:  # the reference packages are a test extra
    import gnubg
    import gnubg_nn
except ImportError:
    gnubg = gnubg_nn = None
reference = [pytest.mark.gnubg, pytest.mark.skipif(gnubg is None or gnubg_nn is None,
                                                   reason="needs the gnubg and gnubg-nn reference packages")]


def against_reference(f):
    for m in reference:
        f = m(f)
    return f


def gnubg_moves(board: np.ndarray, d1: int, d2: int) -> dict[str, str]:
    """GNU Backgammon's legal moves as {next Position ID, the opponent on roll: notation}.

    ``gnubg_nn.moves`` keys each afterstate by its position key in ``[opponent, mover]`` order
    (``board[1]`` on roll); the position the opponent then faces is that board with the sides
    swapped. ``gnubg.move_tuple_to_string`` writes the (from, to) steps it gives.
    """
    out = {}
    for key, steps in gnubg_nn.moves(board.tolist(), d1, d2, 1):
        after = [list(side) for side in gnubg_nn.board_from_position_key(key)]
        out[gnubg_nn.position_id(after[::-1])] = gnubg.move_tuple_to_string(steps, board.tolist())
    return out


def closed_board() -> np.ndarray:
    """The player on roll has a checker on the bar against a closed board: no roll can be played."""
    closed = np.zeros((2, 25), np.int8)
    closed[1, 24], closed[1, 5] = 1, 14
    closed[0, 0:6] = 2
    return closed


def finished_board() -> np.ndarray:
    """The opponent (``board[0]``) bore off its last checkers on its last move: the game is over."""
    won = np.zeros((2, 25), np.int8)
    won[1, 0] = 3
    return won


POSITIONS = selfplay_positions(7, 400)


def test_public_names():
    assert set(engine.__all__) == {"legal_moves", "position_id", "board_from_position_id"}
    assert engine.position_id(start_position()) == "4HPwATDgc/ABMA"


@against_reference
def test_agrees_with_gnubg_on_selfplay_positions():
    passes = 0
    for b, d1, d2 in POSITIONS:
        pid = gnubg_nn.position_id(b.tolist())
        mine = legal_moves(pid, d1, d2)
        ids = [p for _, p in mine]
        assert len(ids) == len(set(ids)), "moves must be distinct"
        ref = gnubg_moves(b, d1, d2)
        if not ref:  # the turn passes: the same checkers, the opponent on roll
            assert mine == [("", gnubg_nn.position_id(b.tolist()[::-1]))]
            passes += 1
            continue
        assert dict((p, t) for t, p in mine) == ref
    assert passes > 0  # the sample has positions where the turn passes


def test_next_id_has_the_opponent_on_roll():
    # After 8/5 6/5 from the opening, the side that moved is the opponent of the side on roll.
    moves = dict(legal_moves("4HPwATDgc/ABMA", 3, 1))
    assert moves["8/5 6/5"] == "sGfwATDgc/ABMA"
    after = board_from_position_id(moves["8/5 6/5"])
    b = start_position()
    assert np.array_equal(after[1], b[1])  # on roll now: the side that did not move
    assert after[0, 4] == 2 and after[0, 5] == 4 and after[0, 7] == 2
    # The next ID is a position for the opponent: its own moves, not the mover's again.
    # Only the mover has checkers on its 5-point; the side on roll now has none there.
    parts = {part for text, _ in legal_moves(moves["8/5 6/5"], 3, 1) for part in text.split()}
    assert parts and not any(part.startswith("5/") for part in parts)
    same_side_again = legal_moves(position_id(swap(after)), 3, 1)
    assert any(part.startswith("5/") for text, _ in same_side_again for part in text.split())


def test_order_does_not_depend_on_the_order_of_the_dice():
    for b, d1, d2 in POSITIONS[:100]:
        pid = position_id(b)
        assert legal_moves(pid, d1, d2) == legal_moves(pid, d2, d1)


@against_reference
def test_whole_games_alternate_sides_until_one_side_is_off():
    rng = np.random.default_rng(5)
    pips = np.arange(1, 26)
    for _ in range(20):
        pid, plies = "4HPwATDgc/ABMA", 0
        while True:
            board = board_from_position_id(pid)
            d1, d2 = int(rng.integers(1, 7)), int(rng.integers(1, 7))
            moves = legal_moves(pid, d1, d2)
            if not moves:
                break
            if moves[0][0]:
                assert {p for _, p in moves} == set(gnubg_moves(board, d1, d2))
            text, nxt = moves[int(rng.integers(len(moves)))]
            after = board_from_position_id(nxt)
            # The side that moved is now board[0]: fewer pips (the same checkers on a pass).
            moved, before = int((after[0] * pips).sum()), int((board[1] * pips).sum())
            assert moved < before if text else moved == before
            # The side now on roll is the one that waited: a hit only sends its checkers back.
            assert after[1].sum() == board[0].sum()
            assert int((after[1] * pips).sum()) >= int((board[0] * pips).sum())
            pid, plies = nxt, plies + 1
        # The game ends right after the winner's move: the winner is the side NOT on roll.
        final = board_from_position_id(pid)
        assert final[0].sum() == 0 and final[1].sum() > 0
        assert game_result(swap(final)) in (1, 2, 3)
        assert plies > 20


def test_a_finished_game_has_no_moves():
    assert legal_moves(position_id(finished_board()), 6, 5) == []
    assert legal_moves(position_id(swap(finished_board())), 6, 5) == []


@against_reference
def test_no_legal_move_passes_the_turn():
    closed = closed_board()
    pid = position_id(closed)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            assert legal_moves(pid, d1, d2) == [("", position_id(swap(closed)))]
            assert gnubg_nn.moves(closed.tolist(), d1, d2, 1) == ()


def test_compiled_notation_is_format_move():
    scratch = np.empty(40, np.int64)
    text = np.zeros(64, np.uint8)
    boards, dice = sample_positions(3000, seed=21)
    checked = 0
    for b, (d1, d2) in zip(boards, dice):
        _, steps = generate(b, int(d1), int(d2))
        for s in steps:
            n = write_move(s, b[0], text, 0, scratch)
            assert text[:n].tobytes().decode("ascii") == format_move(s, b)
            checked += 1
    assert checked > 30_000


def test_compiled_path_equals_the_checked_path():
    for b, d1, d2 in POSITIONS + selfplay_positions(8, 600):
        pid = position_id(b)
        assert legal_moves(pid, d1, d2) == _legal_moves_checked(pid, max(d1, d2), min(d1, d2))
    # Other spellings and very many moves take the checked path and give the same answer.
    assert legal_moves(" 4HPwATDgc/ABMA== ", 3, 1) == legal_moves("4HPwATDgc/ABMA", 3, 1)
    open_board = np.zeros((2, 25), np.int8)
    open_board[1, [23, 20, 17, 14, 11, 8, 5, 2]] = [2, 2, 2, 2, 2, 2, 2, 1]
    open_board[0, 24] = 15
    pid = position_id(open_board)
    assert len(legal_moves(pid, 1, 1)) == len(_legal_moves_checked(pid, 1, 1)) > 100


@pytest.mark.parametrize("d1, d2, words", [
    (0, 1, "the first die must be from 1 to 6; got 0"),
    (3, 7, "the second die must be from 1 to 6; got 7"),
    ("3", 1, "the first die must be a whole number from 1 to 6; got '3'"),
    (3, 1.0, "the second die must be a whole number"),
    (True, 1, "the first die must be a whole number"),
])
def test_bad_dice(d1, d2, words):
    with pytest.raises(ValueError) as e:
        legal_moves("4HPwATDgc/ABMA", d1, d2)
    assert words in str(e.value)


def test_bad_position_id():
    with pytest.raises(ValueError, match="has 14 characters"):
        legal_moves("4HPwATDgc", 3, 1)


def test_numpy_dice_are_accepted():
    assert legal_moves("4HPwATDgc/ABMA", np.int64(3), np.int8(1)) == legal_moves("4HPwATDgc/ABMA", 3, 1)


# ---------------------------------------------------------------------------------------------
# the command


@against_reference
def test_cli_lists_every_move(capsys):
    assert main(["moves", "4HPwATDgc/ABMA", "31"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    expected = legal_moves("4HPwATDgc/ABMA", 3, 1)
    assert head.startswith("position 4HPwATDgc/ABMA  dice 31: 16 legal moves")
    assert len(lines) == len(expected) == len(gnubg_nn.moves(start_position().tolist(), 3, 1, 1))
    for line, (text, pid) in zip(lines, expected):
        assert text in line and line.endswith(pid)


def test_cli_same_list_for_either_order_of_the_dice(capsys):
    assert main(["moves", "4HPwATDgc/ABMA", "31"]) == 0
    first = capsys.readouterr().out
    assert main(["moves", "4HPwATDgc/ABMA", "1-3"]) == 0
    assert capsys.readouterr().out == first
    assert main(["moves", "4HPwATDgc/ABMA", "3", "1"]) == 0  # the dice as two words
    assert capsys.readouterr().out == first
    assert main(["moves", "4HPwATDgc/ABMA", "3", "1", "2"]) == 2
    assert "dice must be two numbers from 1 to 6" in capsys.readouterr().err


def test_cli_reads_an_xgid(capsys):
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
    assert main(["moves", xgid]) == 0  # the dice come from the XGID
    from_xgid = capsys.readouterr().out
    assert main(["moves", "4HPwATDgc/ABMA", "52"]) == 0
    assert capsys.readouterr().out == from_xgid
    assert main(["moves", xgid, "64"]) == 0  # dice given on the command line win
    assert "dice 64: " in capsys.readouterr().out.splitlines()[0]


def test_cli_pass_and_finished_game(capsys):
    closed = closed_board()
    assert main(["moves", position_id(closed), "66"]) == 0
    out = capsys.readouterr().out
    assert "no legal move, the turn passes" in out
    assert out.splitlines()[-1].endswith(position_id(swap(closed)))
    assert main(["moves", position_id(finished_board()), "31"]) == 0
    assert "the game is over" in capsys.readouterr().out


@pytest.mark.parametrize("args, words", [
    (["nonsense", "31"], "has 14 characters"),
    (["4HPwATDgc/ABMA", "71"], "dice must be two numbers from 1 to 6"),
    (["4HPwATDgc/ABMA", "3"], "dice must be two numbers from 1 to 6"),
    (["4HPwATDgc/ABMA"], "give the dice after the position"),
    (["XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"], "give the dice"),
    (["XGID=-b----E-C---eE---c-e----B-:0:0:7:00:0:0:0:0:10", "31"], "XGID"),
    ([], "required"),
])
def test_cli_bad_input(capsys, args, words):
    assert main(["moves"] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgnet moves: error: ") and words in err
    assert err.count("\n") == 1


def test_cli_as_a_process():
    out = subprocess.run([sys.executable, "-m", "bgnet.cli", "moves", "4HPwATDgc/ABMA", "64"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    texts = {" ".join(line.split()[1:-1]) for line in out.stdout.splitlines()[1:]}
    assert texts == {t for t, _ in legal_moves("4HPwATDgc/ABMA", 6, 4)}
    bad = subprocess.run([sys.executable, "-m", "bgnet.cli", "moves", "4HPwATDgc/ABM!", "64"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.startswith("bgnet moves: error: ") and len(bad.stderr.splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# Bot.best_move in the same convention, and the kept buffers under threads


def test_best_move_chains_through_a_game():
    from bgnet.bots.simple import RandomBot

    bot = RandomBot(4)
    rng = np.random.default_rng(9)
    pid, plies = "4HPwATDgc/ABMA", 0
    while True:
        d1, d2 = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        moves = legal_moves(pid, d1, d2)
        if not moves:
            with pytest.raises(ValueError, match="is over"):
                bot.best_move(pid, d1, d2)
            break
        played = bot.best_move(pid, d1, d2)
        assert played in moves  # a pass is ("", the same checkers with the opponent on roll)
        pid, plies = played[1], plies + 1
    assert plies > 20 and board_from_position_id(pid)[0].sum() == 0


def test_threads_get_their_own_buffers():
    import threading

    cases = [(position_id(b), d1, d2) for b, d1, d2 in POSITIONS[:200]]
    expected = [legal_moves(*c) for c in cases]
    failures = []

    def work():
        for _ in range(3):
            if [legal_moves(*c) for c in cases] != expected:
                failures.append(threading.current_thread().name)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
