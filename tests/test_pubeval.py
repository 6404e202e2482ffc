"""Tesauro's pubeval in bgnet: the same moves as GNU Backgammon's copy, and no GNU Backgammon
needed to play it (the base install measures the shipped bots against pubeval and random)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bgnet.bots.pubeval import CONTACT_WEIGHTS, RACE_WEIGHTS, PubevalBot, afterstate_scores
from bgnet.engine.board import race_mask, start_position
from bgnet.engine.movegen import generate
from bgnet.engine.sampling import play_steps, sample_positions

ROOT = Path(__file__).resolve().parents[1]
HAVE_GNUBG = importlib.util.find_spec("gnubg_nn") is not None


def test_the_weights_are_the_published_122_of_each_kind():
    assert RACE_WEIGHTS.shape == CONTACT_WEIGHTS.shape == (122,)
    # The first and last figures of each published vector, and the race vector's zeros at every
    # point's first input (no opponent's blot can stand in a race).
    assert (CONTACT_WEIGHTS[0], CONTACT_WEIGHTS[-1]) == (np.float32(0.25696), np.float32(-2.758))
    assert (RACE_WEIGHTS[1], RACE_WEIGHTS[-1]) == (np.float32(-0.1716), np.float32(3.4204))
    assert not RACE_WEIGHTS[0:120:5].any()


def test_the_opening_31_makes_the_five_point():
    after, _ = PubevalBot().choose_moves(start_position()[None], np.array([[3, 1]]))
    assert after[0, 1, 4] == 2 and after[0, 1, 5] == 4 and after[0, 1, 7] == 2


def test_bearing_off_the_last_checker_beats_every_other_score():
    board = np.zeros((2, 25), np.int8)
    board[1, 0], board[0, 20] = 1, 15
    after, _ = generate(board, 6, 5)
    scores = afterstate_scores(after, np.zeros(len(after), np.bool_), RACE_WEIGHTS, CONTACT_WEIGHTS)
    assert after[int(np.argmax(scores)), 1].sum() == 0


@pytest.mark.skipif(not HAVE_GNUBG, reason="the reference copy is gnubg_nn (pip install 'bgnet[ref]')")
def test_moves_agree_with_gnubg_nn_pub_best_move():
    import gnubg_nn

    boards, dice = sample_positions(1500, seed=21)
    races = race_mask(boards)
    assert 50 < races.sum() < len(boards) - 50  # both weight vectors are exercised
    ours, _ = PubevalBot().choose_moves(boards, dice)
    rows = []
    for b, (d1, d2) in zip(boards.tolist(), dice.tolist()):
        flat = gnubg_nn.pub_best_move(b, d1, d2)  # 0-based, 24 = bar, -1 = off
        rows.append(flat + [-2] * (8 - len(flat)))
    steps = (np.array(rows, np.int8).reshape(-1, 4, 2) + 1).astype(np.int8)
    theirs = play_steps(boards, steps)
    assert np.array_equal(ours, theirs)


HIDE_REFERENCE = textwrap.dedent("""
    import importlib.machinery, sys

    HIDDEN = {"gnubg_nn", "gnubg", "torch"}

    class Absent(importlib.machinery.PathFinder):
        '''The path finder, blind to the packages a base install lacks.'''

        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name.partition(".")[0] in HIDDEN:
                return None
            return super().find_spec(name, path, target)

    sys.meta_path[:] = [Absent if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
    for name in list(sys.modules):
        assert name.partition(".")[0] not in HIDDEN, name
""")


def test_eval_against_pubeval_and_random_needs_no_gnubg_nor_torch():
    script = HIDE_REFERENCE + textwrap.dedent("""
        import importlib.util
        assert importlib.util.find_spec("gnubg_nn") is None and importlib.util.find_spec("torch") is None
        from bgnet.cli import main
        rc = main(["eval", "bgnet-default", "pubeval", "--games", "12", "--seed", "3"])
        rc2 = main(["eval", "pubeval", "random:1", "--games", "12", "--seed", "3"])
        print("exit codes", rc, rc2)
        print("imported", sorted(n for n in sys.modules if n.partition(".")[0] in HIDDEN))
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert "exit codes 0 0" in run.stdout, run.stdout + run.stderr
    assert "imported []" in run.stdout
    assert "bgnet[ref]" not in run.stderr and "Traceback" not in run.stderr
    assert "bgnet-default vs pubeval" in run.stdout + run.stderr


def test_a_gnubg_opponent_without_its_package_still_says_what_to_install():
    script = HIDE_REFERENCE + textwrap.dedent("""
        from bgnet.cli import main
        print("exit code", main(["eval", "bgnet-default", "gnubg:0", "--games", "2"]))
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert "exit code 2" in run.stdout or "exit code 3" in run.stdout, run.stdout + run.stderr
    assert "pip install 'bgnet[ref]'" in run.stderr
