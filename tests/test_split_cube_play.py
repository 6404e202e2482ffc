"""tools/split_cube_play.py: a player made of one bot's checker plays and another's cube."""
from __future__ import annotations

import numpy as np
from conftest import load_tool

from bgnet.bots import load_bot
from bgnet.bots.simple import RandomBot
from bgnet.engine.board import start_position
from bgnet.engine.state import MatchContext
from bgnet.measure.cube_play import play_money_cube

SPLIT = load_tool("split_cube_play")


def test_halves_move_like_one_bot_and_double_like_the_other():
    net, rnd = load_bot("bgnet-default"), RandomBot(seed=1)
    player = SPLIT.Halves(rnd, net)
    boards = np.repeat(start_position()[None], 3, axis=0)
    dice = np.array([[3, 1], [6, 5], [4, 2]])
    np.testing.assert_array_equal(player.choose_moves(boards, dice)[0],
                                  RandomBot(seed=1).choose_moves(boards, dice)[0])
    ctx = [MatchContext()] * 3
    assert player.cube_decisions(boards, ctx) == net.cube_decisions(boards, ctx)
    assert player.cube_settings() == net.cube_settings()


def test_a_bot_split_from_itself_plays_even_on_duplicate_dice():
    net = load_bot("bgnet-default")
    r = play_money_cube(SPLIT.Halves(net, net), net, 40, seed=5, progress=False, batch=40)
    assert r.ppg == 0.0 and r.cube.doubles_a > 0  # the pairs cancel, doubles and all
