"""What a bot can do is stated by its class (bgnet.bots.base), and its users read it there."""
from __future__ import annotations

import numpy as np
import pytest

from bgnet.bots.base import Bot
from bgnet.bots.net import NetBot
from bgnet.bots.simple import RandomBot
from bgnet.engine.board import start_position
from bgnet.engine.movegen import generate
from bgnet.nn.probs import flip


class Even(Bot):
    """Evaluates every position as a coin toss without gammons, at its one depth."""

    name = "even"

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        return RandomBot(0).choose_moves(boards, dice)

    def evaluate(self, boards):
        return np.tile([0.5, 0.0, 0.0, 0.0, 0.0], (len(np.reshape(boards, (-1, 2, 25))), 1))


class Quiet(Bot):
    """Defines ``evaluate`` but says it cannot evaluate."""

    can_evaluate = False

    def evaluate(self, boards):
        raise NotImplementedError


@pytest.fixture(scope="module")
def net_bot():
    import torch

    from bgnet.nn.model import ValueNet

    torch.manual_seed(5)
    return NetBot(ValueNet("tesauro", 8), ply=1)


def test_the_base_bot_states_it_can_do_nothing_but_choose_moves():
    bot = RandomBot(1)
    assert (bot.can_evaluate, bot.plies, bot.searches, bot.ply, bot.evaluator) == (False, (), False, None, None)
    assert dict(bot.meta) == {} and bot.name == "random:1"
    assert Quiet.can_evaluate is False  # a class's own word wins over the default
    assert Even.can_evaluate is True and Even().plies == ()  # defining evaluate says it evaluates


def test_net_bots_state_their_depths_and_search(net_bot):
    assert net_bot.can_evaluate and net_bot.searches and net_bot.plies == (0, 1, 2)
    assert net_bot.ply == 1 and net_bot.evaluator is not None


def test_afterstate_probabilities_are_built_on_evaluate():
    board = start_position()
    after, _ = generate(board, 3, 1)
    p = Even().afterstate_probabilities(after)
    assert p.shape == (len(after), 5) and np.allclose(p, flip(np.array([0.5, 0, 0, 0, 0])))
    with pytest.raises(ValueError, match="not at ply=1"):
        Even().afterstate_probabilities(after, 1)


def test_a_net_bot_s_afterstates_at_each_depth_are_its_search_s(net_bot):
    board = start_position()
    after, _ = generate(board, 6, 5)
    zero = net_bot.afterstate_probabilities(after, 0)
    assert np.allclose(zero, net_bot.evaluator.afterstates(after), atol=1e-6)
    assert np.allclose(net_bot.afterstate_probabilities(after, 0, parents=board), zero, atol=1e-5)
    one = net_bot.afterstate_probabilities(after, 1)
    opp = np.ascontiguousarray(after[:, ::-1])
    assert np.allclose(one, flip(net_bot.evaluate(opp, 1)), atol=1e-6)


@pytest.mark.gnubg
def test_gnubg_states_its_depths_but_chooses_its_own_moves():
    pytest.importorskip("gnubg_nn")
    from bgnet.bots.gnubg_bots import GnubgBot

    bot = GnubgBot(1)
    assert bot.can_evaluate and not bot.searches and bot.plies == (0, 1, 2, 3) and bot.evaluator is None
    b = start_position()[None]
    assert bot.evaluate(b, 0).shape == bot.evaluate(b).shape == (1, 5)
    after, _ = bot.choose_moves(np.repeat(b, 2, axis=0), np.array([[3, 1], [6, 5]]), ply=0)
    assert after.shape == (2, 2, 25)
