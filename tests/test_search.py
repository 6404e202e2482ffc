"""Deeper search: 2-ply ranks the 0-ply survivors at 1-ply and searches only the best of them."""
from __future__ import annotations

import numpy as np
import pytest

from bgnet.bots.net import NetBot, SearchSettings
from bgnet.bots.search import rank_moves
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.movegen import generate
from bgnet.engine.sampling import sample_positions
from bgnet.nn.model import ValueNet
from bgnet.nn.probs import equity


@pytest.fixture(scope="module")
def net():
    import torch

    torch.manual_seed(3)
    return ValueNet("tesauro", 12)


def by_hand(bot, board, d1, d2):
    """The filters one candidate at a time: 0-ply filter, 1-ply values, 1-ply filter, 2-ply."""
    after, _ = generate(board, d1, d2)
    eq0 = equity(bot.evaluator.afterstates(after))
    order = np.argsort(-eq0, kind="stable")
    s = bot.search
    cand = [j for j in order[: s.keep] if eq0[j] >= eq0[order[0]] - s.margin]
    if len(cand) == 1:
        return after[cand[0]]
    v1 = {j: equity(bot._afterstate_value(after[[j]], 1))[0] for j in cand}
    ranked = sorted(cand, key=lambda j: -v1[j])
    deep = [j for j in ranked[: s.keep_1ply] if v1[j] >= v1[ranked[0]] - s.margin_1ply]
    if len(deep) == 1:
        return after[deep[0]]
    v2 = {j: equity(bot._afterstate_value(after[[j]], 2))[0] for j in deep}
    return after[max(deep, key=lambda j: v2[j])]


@pytest.mark.parametrize("settings", [SearchSettings(), SearchSettings(keep=5, margin=1.0, keep_1ply=3,
                                                                        margin_1ply=1.0)],
                         ids=["default", "wide"])
def test_two_ply_choice_follows_both_filters(net, settings):
    bot = NetBot(NetEvaluator(net), ply=2, search=settings)
    boards, dice = sample_positions(6, seed=21)
    chosen = bot.choose_moves(boards, dice)[0]
    for board, (d1, d2), got in zip(boards, dice, chosen):
        assert np.array_equal(got, by_hand(bot, board, int(d1), int(d2)))


def test_one_ply_filter_keeping_every_move_is_plain_two_ply(net):
    """With the 1-ply filter wide open, 2-ply is the argmax of the 2-ply values of the 0-ply survivors."""
    bot = NetBot(NetEvaluator(net), ply=2, search=SearchSettings(keep_1ply=8, margin_1ply=9.0))
    boards, dice = sample_positions(4, seed=5)
    for board, (d1, d2), got in zip(boards, dice, bot.choose_moves(boards, dice)[0]):
        after, _ = generate(board, int(d1), int(d2))
        eq0 = equity(bot.evaluator.afterstates(after))
        order = np.argsort(-eq0, kind="stable")
        cand = [j for j in order[:8] if eq0[j] >= eq0[order[0]] - 0.16]
        v2 = equity(bot._afterstate_value(after[cand], 2))
        assert np.array_equal(got, after[cand[int(np.argmax(v2))]])


def test_ranked_moves_put_the_two_ply_choice_first(net):
    bot = NetBot(NetEvaluator(net), ply=2)
    boards, dice = sample_positions(3, seed=8)
    for board, (d1, d2) in zip(boards, dice):
        ranked = rank_moves(bot, board, int(d1), int(d2))
        after, _ = generate(board, int(d1), int(d2))
        assert len(ranked) == len(after)
        assert np.array_equal(ranked[0].after, by_hand(bot, board, int(d1), int(d2)))


def test_the_mean_over_rolls_of_sure_outcomes_stays_a_probability():
    """The 21 rolls' chances sum to 1 only within float32 rounding; a position won (or gammoned)
    on every roll is still worth exactly 1, never 1.0000002 (which a labels shard refuses)."""
    from bgnet.bots.search import mean_over_rolls

    per_roll = np.ones((21 * 4, 5), np.float32)
    per_roll[21:42] = 0.25
    mean = mean_over_rolls(per_roll)
    assert mean.dtype == np.float32 and mean.max() == 1.0
    assert np.allclose(mean[1], 0.25) and np.all(mean[[0, 2, 3]] == 1.0)
