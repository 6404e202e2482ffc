"""Training a split net's race half: race starts (``train.race_starts``: fresh self-play games
that begin where an earlier game of the pool broke contact) and ``train.learn=race`` (only race
positions learned from, so the contact half stays as it is)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from test_train import config

from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.board import race_mask
from bgnet.nn.checkpoint import load_checkpoint
from bgnet.nn.model import SplitValueNet
from bgnet.train.loop import train
from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings


def pool(race_starts: float, seed: int = 1, games: int = 48) -> SelfPlayPool:
    torch.manual_seed(0)
    net = SplitValueNet("tesauro", [16], race_hidden=[8]).eval()
    return SelfPlayPool(NetEvaluator(net, "cpu"),
                        SelfPlaySettings(parallel_games=games, bearoff=True, race_starts=race_starts),
                        np.random.default_rng(seed))


def kept(p: SelfPlayPool) -> set[bytes]:
    return {b.tobytes() for b in p.races[:min(p.races_seen, len(p.races))]}


def test_fresh_games_begin_at_races_the_pool_met_or_at_the_opening():
    p = pool(0.7)
    race_starts = openings = 0
    for _ in range(400):
        p.step()
        fresh = p.ply == 0
        for i in np.flatnonzero(fresh & ~p.opening):
            assert p.boards[i].tobytes() in kept(p)
        race_starts += int((fresh & ~p.opening).sum())
        openings += int((fresh & p.opening).sum())
    assert p.races_seen > 0 and race_mask(p.races[:min(p.races_seen, len(p.races))]).all()
    assert race_starts > openings > 0  # about 0.7 of them, once races have been met


def test_without_race_starts_every_game_begins_at_the_opening_and_nothing_is_kept():
    p = pool(0.0)
    for _ in range(200):
        p.step()
        assert p.opening.all()
    assert p.races_seen == 0 and "races" not in p.state()


def test_a_restored_pool_plays_on_as_the_original_with_its_race_positions():
    a = pool(0.7, seed=3)
    for _ in range(250):
        a.step()
    assert a.races_seen > 0
    b = pool(0.7, seed=99)
    b.restore(a.state())
    b.rng = np.random.default_rng()
    b.rng.bit_generator.state = a.rng.bit_generator.state
    assert kept(b) == kept(a) and (b.opening == a.opening).all()
    for _ in range(100):
        fa, fb = a.step(), b.step()
        np.testing.assert_array_equal(fa.boards, fb.boards)
        np.testing.assert_allclose(fa.targets, fb.targets)
    np.testing.assert_array_equal(a.boards, b.boards)


def test_a_pool_saved_before_race_starts_resumes_with_them():
    """A checkpoint from a phase without race starts has no race state: its games count as from
    the opening, those already racing as met (never kept mid-race)."""
    a = pool(0.0, seed=4)
    for _ in range(120):
        a.step()
    b = pool(0.5, seed=4)
    b.restore(a.state())
    assert b.races_seen == 0 and b.opening.all()
    assert (b.raced == race_mask(a.boards)).all()


@pytest.mark.parametrize("bad", [1.0, -0.1])
def test_race_starts_is_a_chance_below_one(bad):
    with pytest.raises(ValueError, match="race_starts"):
        pool(bad)


def test_learning_from_races_alone_leaves_the_contact_half_as_it_was(tmp_path):
    split = {"model.split": "true", "model.hidden": "[16]", "model.race_hidden": "[8]",
             "train.buffer_positions": 400, "train.parallel_games": 64}
    latest = tmp_path / "checkpoints" / "latest.pt"
    train(config(**split, **{"train.games": 200}), tmp_path)
    before = load_checkpoint(latest)["net_state"]
    train(config(**split, **{"train.games": 1200, "train.learn": "race", "train.race_starts": 0.8,
                             "resume": str(latest)}), tmp_path)
    after = load_checkpoint(latest)
    assert after["games"] >= 1200
    for name, weights in after["net_state"].items():
        if name.startswith("contact."):
            assert torch.equal(weights, before[name]), name
    assert any(not torch.equal(w, before[n]) for n, w in after["net_state"].items() if n.startswith("race."))
