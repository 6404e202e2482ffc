"""Search targets: each position's target mixes its λ-return with its 1-ply value."""
from __future__ import annotations

import numpy as np
import pytest
from test_train import config

from bgnet.bots.net import ROLL_WEIGHTS, ROLLS, NetBot
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.movegen import generate
from bgnet.engine.sampling import sample_positions
from bgnet.nn.model import ValueNet
from bgnet.nn.probs import equity
from bgnet.train.config import ConfigError, validate
from bgnet.train.learn import search_targets
from bgnet.train.loop import train


@pytest.fixture(scope="module")
def bot():
    import torch

    torch.manual_seed(0)
    return NetBot(NetEvaluator(ValueNet("tesauro", 20)), ply=1)


def one_ply_by_hand(bot, board):
    """The 21 rolls one at a time: the best afterstate by equity, averaged with the roll weights."""
    total = np.zeros(5)
    for (d1, d2), w in zip(ROLLS, ROLL_WEIGHTS):
        after, _ = generate(board, int(d1), int(d2))
        if len(after) == 0:  # no legal move: the position stands, opponent on roll
            after = board[None].copy()
        p = bot.evaluator.afterstates(after)
        total += w * p[int(np.argmax(equity(p)))]
    return total


def test_weights_zero_and_one_give_returns_and_one_ply_values(bot):
    boards, _ = sample_positions(12, seed=4)
    returns = np.random.default_rng(1).random((12, 5)).astype(np.float32)
    assert np.array_equal(search_targets(bot, boards, returns, 0.0), returns)
    ply1 = search_targets(bot, boards, returns, 1.0)
    for b, t in zip(boards, ply1):
        assert np.allclose(t, one_ply_by_hand(bot, b), atol=1e-5)
    half = search_targets(bot, boards, returns, 0.5)
    assert np.allclose(half, 0.5 * returns + 0.5 * ply1, atol=1e-6)


def test_training_with_search_targets_runs_and_validates(tmp_path):
    with pytest.raises(ConfigError, match="train.search_target"):
        validate(config(**{"train.search_target": 1.5}))
    summary = train(config(**{"train.games": 60, "seed": 2, "train.search_target": 0.75,
                              "train.buffer_positions": 512}), tmp_path)
    assert summary["games"] >= 60
