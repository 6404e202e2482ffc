"""The one-call 0-ply decision of exported bots picks exactly the move of the batch path."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")  # the compiled forward pass reads its weights through torch
pytest.importorskip("onnxruntime")

import bgnet  # noqa: E402
from bgnet.bots import default_bot_path  # noqa: E402
from bgnet.bots.zero_ply import choose_zero_ply  # noqa: E402
from bgnet.engine.position_id import position_id  # noqa: E402
from bgnet.engine.sampling import sample_positions  # noqa: E402

pytestmark = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")


@pytest.fixture(scope="module")
def bot():
    return bgnet.Bot.load()


def test_same_choice_as_the_batch_path(bot):
    boards, dice = sample_positions(2500, seed=17)
    quick = 0
    for b, (d1, d2) in zip(boards, dice):
        d1, d2 = int(d1), int(d2)
        got = choose_zero_ply(bot.eval, b, d1, d2)
        if got is None:
            continue
        quick += 1
        after, steps = bot.choose_moves(b[None], np.array([[d1, d2]]))
        assert np.array_equal(got[0], after[0]) and np.array_equal(got[1], steps[0])
    assert quick > 1500  # most positions take the one-call path


def test_general_path_cases_are_left_to_it(bot):
    bearoff = np.zeros((2, 25), np.int8)
    bearoff[0, :3] = 5
    bearoff[1, :5] = 3
    assert choose_zero_ply(bot.eval, bearoff, 6, 5) is None  # answered by the bear-off database
    last = np.zeros((2, 25), np.int8)
    last[0, 10] = 15
    last[1, 0] = 1
    assert choose_zero_ply(bot.eval, last, 2, 1) is None  # every move ends the game
    assert bot.best_move(position_id(last), 2, 1)[0] == "1/off"
    assert bot.best_move(position_id(bearoff), 6, 5)[0] != ""


def test_frozen_tables_agree_with_the_weights(bot):
    # The kept first-layer tables give what the dense pass from encoded inputs gives.
    from bgnet.nn.fast import FastForward

    fast = bot.eval.fast
    assert fast.frozen
    boards, _ = sample_positions(64, seed=3)
    fresh = FastForward(fast.net)
    assert np.allclose(fast.positions(boards[:10]), fresh.positions(boards[:10]), atol=1e-6)
    assert np.allclose(fast.positions(boards), fresh.positions(boards), atol=1e-6)
