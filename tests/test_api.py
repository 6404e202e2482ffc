"""The public ``legal_moves`` API and the ``bgnet moves`` command, checked against GNU Backgammon."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import bgnet.engine as engine
from bgnet.cli import main
from bgnet.engine import board_from_position_id, legal_moves, position_id
from bgnet.engine.board import start_position
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


def selfplay_positions(seed: int, n: int) -> list[tuple[np.ndarray, int, int]]:
    """(position, d1, d2) met in random self-play, restarting after each game."""
    boards, dice = sample_positions(n, seed=seed)
    return [(b, int(d[0]), int(d[1])) for b, d in zip(boards, dice)]


def gnubg_moves(board: np.ndarray, d1: int, d2: int) -> dict[str, str]:
    """GNU Backgammon's legal moves as {next Position ID: notation}.

    ``gnubg_nn.moves`` keys each afterstate by its position key in ``[opponent, mover]`` order;
    ``gnubg.move_tuple_to_string`` writes the (from, to) steps it gives.
    """
    out = {}
    for key, steps in gnubg_nn.moves(board.tolist(), d1, d2, 1):
        after = [list(side) for side in gnubg_nn.board_from_position_key(key)]
        out[gnubg_nn.position_id(after)] = gnubg.move_tuple_to_string(steps, board.tolist())
    return out


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
        ref = gnubg_moves(b, d1, d2)
        ids = [p for _, p in mine]
        assert len(ids) == len(set(ids)), "moves must be distinct"
        assert dict((p, t) for t, p in mine) == ref
        passes += int(not mine)
    assert passes > 0  # the sample has positions where the turn passes


def test_next_id_is_the_mover_orientation():
    # After 8/5 6/5 the mover's side changed and the opponent's did not: the ID is
    # [opponent, mover], as gnubg_nn keys afterstates.
    moves = dict(legal_moves("4HPwATDgc/ABMA", 3, 1))
    after = board_from_position_id(moves["8/5 6/5"])
    b = start_position()
    assert np.array_equal(after[0], b[0])
    assert after[1, 4] == 2 and after[1, 5] == 4 and after[1, 7] == 2
    assert position_id(after) == moves["8/5 6/5"]


@against_reference
def test_no_legal_move_gives_an_empty_list():
    closed = np.zeros((2, 25), np.int8)
    closed[1, 24], closed[1, 5] = 1, 14
    closed[0, 0:6] = 2
    pid = position_id(closed)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            assert legal_moves(pid, d1, d2) == []
            assert gnubg_nn.moves(closed.tolist(), d1, d2, 1) == ()


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
    lines = capsys.readouterr().out.splitlines()
    expected = legal_moves("4HPwATDgc/ABMA", 3, 1)
    assert len(lines) == len(expected) == len(gnubg_nn.moves(start_position().tolist(), 3, 1, 1))
    for line, (text, pid) in zip(lines, expected):
        assert text in line and line.endswith(pid)


def test_cli_dash_dice_and_pass(capsys):
    assert main(["moves", "4HPwATDgc/ABMA", "3-1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 16
    closed = np.zeros((2, 25), np.int8)
    closed[1, 24], closed[1, 5] = 1, 14
    closed[0, 0:6] = 2
    assert main(["moves", position_id(closed), "66"]) == 0
    assert "no legal move" in capsys.readouterr().out


def test_cli_bad_input(capsys):
    with pytest.raises(SystemExit) as e:
        main(["moves", "nonsense", "31"])
    assert e.value.code == 2
    assert "has 14 characters" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["moves", "4HPwATDgc/ABMA", "71"])
    assert "dice must be two numbers from 1 to 6" in capsys.readouterr().err


def test_cli_as_a_process():
    out = subprocess.run([sys.executable, "-m", "bgnet.cli", "moves", "4HPwATDgc/ABMA", "64"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    texts = {" ".join(line.split()[1:-1]) for line in out.stdout.splitlines()}
    assert texts == {t for t, _ in legal_moves("4HPwATDgc/ABMA", 6, 4)}
