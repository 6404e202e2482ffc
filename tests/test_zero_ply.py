"""The one-call 0-ply decision of exported bots picks exactly the move of the batch path."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")  # the compiled forward pass reads its weights through torch
pytest.importorskip("onnxruntime")

import bgnet  # noqa: E402
from bgnet.bearoff.database import is_bearoff  # noqa: E402
from bgnet.bots import default_bot_path  # noqa: E402
from bgnet.bots.zero_ply import choose_zero_ply  # noqa: E402
from bgnet.engine.position_id import position_id  # noqa: E402
from bgnet.engine.sampling import sample_positions  # noqa: E402

pytestmark = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")


@pytest.fixture(scope="module")
def bot():
    return bgnet.load_bot()


def test_same_choice_as_the_batch_path(bot):
    from bgnet.bearoff import get_database

    get_database()  # loaded: bear-off afterstates are answered in the one call too
    boards, dice = sample_positions(2500, seed=17)
    quick = bearoff = 0
    for b, (d1, d2) in zip(boards, dice):
        d1, d2 = int(d1), int(d2)
        got = choose_zero_ply(bot.evaluator, b, d1, d2)
        after, steps = bot.choose_moves(b[None], np.array([[d1, d2]]))
        if got is None:  # only when no move is legal
            assert not (steps[0] >= 0).any()
            continue
        quick += 1
        bearoff += bool(is_bearoff(b[None])[0])
        assert np.array_equal(got[0], after[0]) and np.array_equal(got[1], steps[0])
    assert quick > 2000 and bearoff > 50


def test_finished_games_and_bear_offs(bot):
    # Moves that end the game (single, gammon, backgammon) beside moves the net or the bear-off
    # database values, in every roll: the same choice as the batch path.
    ends = []
    for opp_point, opp_off in ((10, 0), (19, 0), (21, 0), (3, 4), (24, 0)):
        b = np.zeros((2, 25), np.int8)
        b[0, opp_point] = 15 - opp_off
        b[1, 0], b[1, 3] = 1, 1
        ends.append(b)
    bearoff = np.zeros((2, 25), np.int8)
    bearoff[0, :3] = 5
    bearoff[1, :5] = 3
    ends.append(bearoff)
    finished = 0
    for b in ends:
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                got = choose_zero_ply(bot.evaluator, b, d1, d2)
                after, steps = bot.choose_moves(b[None], np.array([[d1, d2]]))
                assert got is not None
                assert np.array_equal(got[0], after[0]) and np.array_equal(got[1], steps[0])
                finished += int(got[0][1].sum() == 0)
                text, nxt = bot.best_move(position_id(b), d1, d2)
                assert nxt == position_id(got[0][::-1])
    assert finished > 10


def test_frozen_tables_agree_with_the_weights(bot):
    # The kept first-layer tables give what the dense pass from encoded inputs gives.
    from bgnet.nn.fast import FastForward

    fast = bot.evaluator.fast
    assert fast.frozen
    boards, _ = sample_positions(64, seed=3)
    fresh = FastForward.from_weights(fast.layout, fast._weights())  # not frozen: small batches go dense
    assert not fresh.frozen
    assert np.allclose(fast.positions(boards[:10]), fresh.positions(boards[:10]), atol=1e-6)
    assert np.allclose(fast.positions(boards), fresh.positions(boards), atol=1e-6)
