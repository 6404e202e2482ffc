"""bgnet.measure.cube_split and ``bgnet bench cube-split``: a player made of one bot's checker
plays and another's cube decisions."""
from __future__ import annotations

import numpy as np

from bgnet.bots import load_bot
from bgnet.bots.simple import RandomBot
from bgnet.cli import main
from bgnet.engine.board import start_position
from bgnet.engine.state import MatchContext
from bgnet.measure.cube_play import play_money_cube
from bgnet.measure.cube_split import SESSIONS, Halves, split_players


def test_halves_move_like_one_bot_and_double_like_the_other():
    net, rnd = load_bot("bgnet-default"), RandomBot(seed=1)
    player = Halves(rnd, net)
    boards = np.repeat(start_position()[None], 3, axis=0)
    dice = np.array([[3, 1], [6, 5], [4, 2]])
    np.testing.assert_array_equal(player.choose_moves(boards, dice)[0],
                                  RandomBot(seed=1).choose_moves(boards, dice)[0])
    ctx = [MatchContext()] * 3
    assert player.cube_decisions(boards, ctx) == net.cube_decisions(boards, ctx)
    assert player.cube_settings() == net.cube_settings()


def test_a_bot_split_from_itself_plays_even_on_duplicate_dice():
    net = load_bot("bgnet-default")
    r = play_money_cube(Halves(net, net), net, 40, seed=5, progress=False, batch=40)
    assert r.ppg == 0.0 and r.cube.doubles_a > 0  # the pairs cancel, doubles and all


def test_the_two_sessions_lend_the_opponents_halves():
    bot, opponent = load_bot("bgnet-default"), load_bot("bgnet-default@1")
    players = split_players(bot, opponent)
    assert list(players) == list(SESSIONS)
    cube_alone, moves_alone = players.values()
    assert (cube_alone.mover, cube_alone.cuber) == (opponent, bot)
    assert (moves_alone.mover, moves_alone.cuber) == (bot, opponent)


def test_the_verb_plays_both_sessions_and_refuses_an_opponent_without_cube_decisions(capsys):
    assert main(["bench", "cube-split", "--bot", "bgnet-default", "--opponent", "bgnet-default",
                 "--games", "20", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(" (")[0].strip() for line in lines] == list(SESSIONS)
    # Split from itself, each session is the bot against itself on duplicate dice: even.
    assert all("+0.000 ± 0.000 ppg over 20 games" in line for line in lines), lines
    for bot, opponent in (("bgnet-default", "random"), ("random", "bgnet-default")):
        assert main(["bench", "cube-split", "--bot", bot, "--opponent", opponent, "--games", "20"]) == 2
        err = capsys.readouterr().err.strip()
        assert "random does not value positions" in err and len(err.splitlines()) == 1
    assert main(["bench", "cube-split", "--games", "21"]) == 2
    assert "--games must be even" in capsys.readouterr().err
