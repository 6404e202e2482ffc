"""Self-play's move filter (``train.move_filter``): the split forward pass it runs on, which moves
it values, and self-play with it."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import selfplay_positions

from bgnet.bots.evaluator import afterstates_of, parent_rows
from bgnet.bots.net import NetBot
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.movegen import generate_batch
from bgnet.engine.sampling import sample_positions
from bgnet.nn.encode import race_mask
from bgnet.nn.fast import FastForward
from bgnet.nn.model import SplitValueNet
from bgnet.nn.probs import equity as money_equity
from bgnet.train import move_filter
from bgnet.train.learn import searcher_for
from bgnet.train.move_filter import MoveFilter
from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings


def deep_net(seed: int = 0) -> SplitValueNet:
    torch.manual_seed(seed)
    net = SplitValueNet("extended", [32, 16], activation=["sigmoid", "relu"], race_hidden=8,
                         race_activation="sigmoid")
    with torch.no_grad():  # weights large enough that moves are told apart
        for p in net.parameters():
            p.mul_(3.0)
    return net.eval()


def afterstates_of_sample(seed: int, n: int):
    picked = selfplay_positions(seed, n)
    boards = np.stack([b for b, _, _ in picked])
    dice = np.array([[d1, d2] for _, d1, d2 in picked], np.int8)
    after, _, off = generate_batch(boards, dice)
    return boards, after, off


def contact_sample(n: int):
    """A deep net's compiled pass and the afterstates of ``n`` self-play positions: (fast,
    positions, afterstates, offsets, parent of each afterstate, its contact rows)."""
    fast = FastForward(deep_net())
    boards, after, off = afterstates_of_sample(1, n)
    return fast, boards, after, off, parent_rows(off), np.flatnonzero(~race_mask(after))


def test_the_hidden_layer_is_torchs():
    fast, boards, after, off, parent_of, contact = contact_sample(60)
    net = fast.net
    hidden = fast.hidden_children(boards, parent_of, after, contact)
    assert hidden.shape == (len(contact), 32)
    with torch.no_grad():  # the first layer as torch computes it
        from bgnet.nn.encode import encode_afterstates

        x = torch.from_numpy(encode_afterstates(after[contact], "extended"))
        ref = torch.sigmoid(net.contact.body[0](x)).numpy()
    np.testing.assert_allclose(hidden, ref, atol=1e-5)


def test_filtered_children_keep_the_best_read_rows_valued_as_the_whole_pass():
    fast, boards, after, off, parent_of, contact = contact_sample(300)
    w = np.random.default_rng(0).standard_normal(32).astype(np.float32)
    score = fast.hidden_children(boards, parent_of, after, contact) @ w
    whole = fast.swapped_children(boards, parent_of, after)
    probs, kept = fast.filtered_children(boards, parent_of, after, contact, off, w, 3)
    assert not kept[race_mask(after)].any() and np.isnan(probs[~kept]).all()
    np.testing.assert_array_equal(probs[kept], whole[kept])
    for lo, hi in zip(off[:-1], off[1:]):
        mine = (contact >= lo) & (contact < hi)
        rows, sc = contact[mine], score[mine]
        assert kept[rows].sum() == min(3, len(rows))
        if len(rows) > 3:  # the kept rows score at least as high as every row left out
            assert sc[kept[rows]].min() >= sc[~kept[rows]].max() - 1e-5


def test_hidden_children_refuses_race_rows():
    fast = FastForward(deep_net())
    boards, after, off = afterstates_of_sample(2, 200)
    races = np.flatnonzero(race_mask(after))
    assert len(races)
    with pytest.raises(ValueError, match="contact rows only"):
        fast.hidden_children(boards, parent_rows(off), after, races[:3])
    with pytest.raises(ValueError, match="contact rows only"):
        fast.filtered_children(boards, parent_rows(off), after, races[:3], off, np.ones(32), 2)


def test_the_filter_values_the_kept_moves_as_the_net_does_and_only_them():
    net = deep_net()
    ev = NetEvaluator(net, "cpu")
    boards, after, off = afterstates_of_sample(3, 120)
    full = afterstates_of(ev, after, boards, parent_rows(off))
    mf = MoveFilter(ev, 3)
    mf.values(after, boards, off)  # the first step fits the readout on a full evaluation
    got = mf.values(after, boards, off)
    valued = ~np.isnan(got[:, 0])
    np.testing.assert_allclose(got[valued], full[valued], atol=1e-6)
    is_race = race_mask(after)
    assert valued[is_race].all()  # races are always valued
    for lo, hi in zip(off[:-1], off[1:]):
        contact = ~is_race[lo:hi]
        assert valued[lo:hi][contact].sum() == min(3, contact.sum())
    # With most moves ruled out the filter still mostly agrees with the net's own choice.
    best_full = [lo + int(np.argmax(money_equity(full[lo:hi]))) for lo, hi in zip(off[:-1], off[1:])]
    assert np.mean(valued[best_full]) > 0.8


def test_keeping_every_move_plays_the_same_games():
    """The filter refits every few steps and values the rest from the hidden layer: with room
    for every move, the games, targets and values are those of the plain pool."""
    net = deep_net(4)
    plain = SelfPlayPool(NetEvaluator(net, "cpu"), SelfPlaySettings(parallel_games=24, bearoff=True),
                         np.random.default_rng(5))
    filtered = SelfPlayPool(NetEvaluator(net, "cpu"),
                            SelfPlaySettings(parallel_games=24, bearoff=True, move_filter=1000),
                            np.random.default_rng(5))
    for _ in range(2 * move_filter.REFIT_EVERY + 3):
        a, b = plain.step(), filtered.step()
        np.testing.assert_array_equal(a.boards, b.boards)
        np.testing.assert_allclose(a.targets, b.targets, atol=1e-6)
    np.testing.assert_array_equal(plain.boards, filtered.boards)


def test_a_filtered_pool_plays_whole_games_and_values_explored_moves():
    net = deep_net(6)
    pool = SelfPlayPool(NetEvaluator(net, "cpu"),
                        SelfPlaySettings(parallel_games=16, bearoff=True, move_filter=2, epsilon=0.3),
                        np.random.default_rng(7))
    finished = 0
    for _ in range(400):
        games = pool.step()
        assert np.isfinite(games.targets).all()
        finished += len(games.lengths)
    assert finished > 16
    assert np.isfinite(pool.values[np.arange(16), pool.ply]).all()


def test_the_filtered_one_ply_search_is_the_net_bots_with_room_for_every_move():
    """Under search targets: with room for every move the filtered 1-ply values are NetBot's (the
    first call fits the readout on a full evaluation, the second runs the filtered pass); keeping
    two moves a roll the values stay close, never above the full search's best reply by more
    than rounding, since the filter only takes replies away."""
    net = deep_net(8)
    boards, _ = sample_positions(40, seed=9)
    exact = NetBot(NetEvaluator(net, "cpu"), ply=1).evaluate(boards)
    wide = move_filter.FilteredOnePly(NetEvaluator(net, "cpu"), 1000)
    for _ in range(2):
        np.testing.assert_allclose(wide.evaluate(boards), exact, atol=1e-5)
    narrow = move_filter.FilteredOnePly(NetEvaluator(net, "cpu"), 2)
    narrow.evaluate(boards)
    got = narrow.evaluate(boards)
    assert np.all(money_equity(got) <= money_equity(exact) + 1e-5)
    assert np.abs(money_equity(got) - money_equity(exact)).mean() < 0.05
    assert not np.allclose(got, exact, atol=1e-4)  # some best replies were ruled out
    with pytest.raises(ValueError, match="1 ply"):
        narrow.evaluate(boards, ply=2)
    # What a source searches with when the filter is on.
    assert isinstance(searcher_for(net, "cpu", True, move_filter=8), move_filter.FilteredOnePly)


def test_the_filter_needs_the_compiled_pass():
    class Plain:
        fast = None

    with pytest.raises(ValueError, match="train.move_filter"):
        MoveFilter(Plain(), 8)


@pytest.mark.parametrize("filtered", [0, 4])
def test_exploring_moves_are_near_the_best_and_learn_the_greedy_value(filtered):
    """ε = 1, explore_top = 3: every game plays the 2nd or 3rd best move of its roll, and the
    value its next position records for the λ-returns is the best move's."""
    from bgnet.engine.board import start_position
    from bgnet.nn.probs import flip

    net = deep_net(3)
    ev = NetEvaluator(net, "cpu")
    pool = SelfPlayPool(ev, SelfPlaySettings(parallel_games=8, bearoff=True, move_filter=filtered, epsilon=1.0,
                                             explore_top=3), np.random.default_rng(5))
    pool._dice = lambda: np.tile(np.array([[3, 1]]), (8, 1))  # the same roll for every game
    pool.step()
    start = start_position()[None]
    after, _, off = generate_batch(start, np.array([[3, 1]], np.int8))
    probs = afterstates_of(ev, after, start, parent_rows(off))
    order = np.argsort(-money_equity(probs), kind="mergesort")
    near = {after[k][::-1].tobytes() for k in order[1:3]}
    assert all(b.tobytes() in near for b in pool.boards)
    assert len({b.tobytes() for b in pool.boards}) == 2  # both are drawn among 8 games
    assert pool.explored[:, 0].all() and not pool.explored[:, 1].any()
    np.testing.assert_allclose(pool.values[:, 1], np.tile(flip(probs[order[0]]), (8, 1)), atol=1e-5)


def test_explore_top_one_is_refused():
    with pytest.raises(ValueError, match="explore_top"):
        SelfPlayPool(NetEvaluator(deep_net(), "cpu"), SelfPlaySettings(parallel_games=2, explore_top=1),
                     np.random.default_rng(0))
