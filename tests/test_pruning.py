"""Pruning in the deeper plies (bgnet.bots.search.Pruning): a cheaper net ranks each roll's moves
and the bot's own net values only the best few. Keeping every move gives the unpruned search
exactly; the default keeps the values close; the spec's option is read, and refused, clearly."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from bgnet.bots import load_bot, with_ply
from bgnet.bots.cache import CachedEvaluator
from bgnet.bots.load import pruning_for, split_ply, split_pruning
from bgnet.bots.net import NetBot
from bgnet.bots.onnx_eval import BotFileMissing
from bgnet.bots.search import PRUNE_KEEP, PRUNE_MARGIN, Pruning, best_of_rolls, segment_argmax, segment_top_k
from bgnet.engine.sampling import sample_positions
from bgnet.errors import EXIT_INPUT, EXIT_USAGE, BadArgument
from bgnet.nn.probs import equity
from bgnet.resources import shipped_bot

needs_bots = pytest.mark.skipif(shipped_bot("bgnet-deep") is None or shipped_bot("bgnet-default") is None,
                                reason="needs both shipped bots")
EVERY_MOVE = 10_000  # more moves than any roll has: pruning that keeps them all


@pytest.fixture(scope="module")
def deep():
    return load_bot("bgnet-deep,prune=none")


@pytest.fixture(scope="module")
def cheap():
    return load_bot("bgnet-default")


def pruned(bot: NetBot, cheap_bot: NetBot, keep: int, margin: float = np.inf) -> NetBot:
    return NetBot(bot.evaluator, bot.ply, name=bot.name,
                  pruning=Pruning(cheap_bot.evaluator, keep, margin))


# ---------------------------------------------------------------------------------------------
# the compiled selection


@pytest.mark.parametrize("margin", [np.inf, 0.0, 1.5])
def test_top_k_keeps_each_segment_s_best_in_row_order_ties_to_the_first(margin):
    """Against a sort: the ``keep`` largest of each segment (of equal values the first rows)
    within ``margin`` of its largest, listed in row order; empty segments empty."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(0, 12, size=300)
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = rng.integers(0, 6, size=off[-1]).astype(np.float32)  # many ties
    for keep in (1, 2, 3, 5, 20):
        rows, new_off = segment_top_k(values, off, keep, margin)
        for i in range(len(sizes)):
            seg = np.arange(off[i], off[i + 1])
            best = seg[np.argsort(-values[seg], kind="stable")[:keep]]
            want = np.sort(best[values[best] >= values[seg].max() - margin]) if len(seg) else []
            assert rows[new_off[i]:new_off[i + 1]].tolist() == list(want)
        # the argmax over the rows kept is the argmax over them all (it is always kept)
        full = segment_argmax(values, off[np.r_[True, sizes > 0]])
        kept = rows[segment_argmax(values[rows], new_off[np.r_[True, sizes > 0]])]
        assert kept.tolist() == full.tolist()


# ---------------------------------------------------------------------------------------------
# keeping every move is the unpruned search, exactly


@needs_bots
def test_pruning_that_keeps_every_move_answers_each_roll_as_without(deep, cheap):
    boards, _ = sample_positions(30, seed=11)
    chosen, probs = best_of_rolls(deep.evaluator, boards)
    chosen_p, probs_p = best_of_rolls(deep.evaluator, boards, Pruning(cheap.evaluator, EVERY_MOVE, np.inf))
    assert np.array_equal(chosen, chosen_p) and np.array_equal(probs, probs_p)


@needs_bots
@pytest.mark.parametrize("ply", [1, 2])
def test_a_search_pruned_keeping_every_move_is_the_unpruned_search(deep, cheap, ply):
    """Values and choices equal to the last bit: the same rows go to the full net in the same
    order, so nothing but the cheap net's extra look differs."""
    boards, dice = sample_positions(12, seed=3)
    n = 12 if ply == 1 else 2
    everything = pruned(deep, cheap, EVERY_MOVE)
    assert np.array_equal(everything.evaluate(boards[:n], ply), deep.evaluate(boards[:n], ply))
    a, _ = everything.choose_moves(boards[:n], dice[:n], ply=ply)
    b, _ = deep.choose_moves(boards[:n], dice[:n], ply=ply)
    assert np.array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# the default keeps the values close


@needs_bots
def test_a_pruned_roll_is_never_better_than_the_full_net_s_best(deep, cheap):
    """Each roll is answered by the full net's best of the moves kept, so by the full net its
    value is at most that of the full net's best of all moves, and equal where the cheap net
    kept that move (it does in most rolls: measured 96 % at keep 3 on these positions)."""
    boards, _ = sample_positions(60, seed=5)
    _, full = best_of_rolls(deep.evaluator, boards)
    _, kept = best_of_rolls(deep.evaluator, boards, Pruning(cheap.evaluator, PRUNE_KEEP))
    loss = equity(full) - equity(kept)
    assert (loss >= -1e-6).all()
    assert (loss <= 1e-6).mean() > 0.9


@needs_bots
def test_the_default_pruning_keeps_one_ply_values_and_choices_close(deep):
    """bgnet-deep as shipped (pruned by bgnet-default, keeping 3) against its unpruned search on
    200 positions of self-play at 1-ply. Measured: the equity before the roll 0.0003 lower on
    average (it can only be lower: each roll's answer is the best of a subset), 0.008 at most,
    and the same move in 199 or 200 decisions out of 200. The bounds below leave ten times that
    room, far under what a player notices (a decision's error is counted from 0.02 up)."""
    shipped = load_bot("bgnet-deep")
    assert shipped.pruning is not None
    assert (shipped.pruning.keep, shipped.pruning.margin) == (PRUNE_KEEP, PRUNE_MARGIN)
    boards, dice = sample_positions(200, seed=7)
    full, kept = equity(deep.evaluate(boards, 1)), equity(shipped.evaluate(boards, 1))
    assert (kept <= full + 1e-5).all()
    assert np.abs(full - kept).mean() < 0.003 and np.abs(full - kept).max() < 0.05
    a, _ = shipped.choose_moves(boards, dice, ply=1)
    b, _ = deep.choose_moves(boards, dice, ply=1)
    assert np.all(a == b, axis=(1, 2)).mean() >= 0.97


@needs_bots
def test_the_default_pruning_keeps_two_ply_values_close(deep):
    """At 2-ply the errors of the two layers partly cancel (measured on 40 positions: 0.0005 on
    average, 0.004 at most); the bounds leave ten times that room."""
    shipped = load_bot("bgnet-deep")
    boards, _ = sample_positions(60, seed=7)
    full, kept = equity(deep.evaluate(boards[:10], 2)), equity(shipped.evaluate(boards[:10], 2))
    assert np.abs(full - kept).mean() < 0.005 and np.abs(full - kept).max() < 0.05


# ---------------------------------------------------------------------------------------------
# the cache


@needs_bots
def test_pruning_composes_with_the_cache():
    """A cached bot keeps both nets' values, each in its own table: the same values to float32
    rounding, the second look read back, and clear_cache empties both; the bot it was made from
    is left uncached."""
    bot = load_bot("bgnet-deep@1")
    cached = bot.with_cache()
    assert isinstance(cached.pruning.evaluator, CachedEvaluator)
    assert not isinstance(bot.pruning.evaluator, CachedEvaluator)
    assert cached.pruning.keep == bot.pruning.keep
    boards, dice = sample_positions(20, seed=9)
    want = bot.evaluate(boards, 1)
    np.testing.assert_allclose(cached.evaluate(boards, 1), want, atol=1e-5)
    first = cached.pruning.evaluator.valued, cached.evaluator.valued
    np.testing.assert_allclose(cached.evaluate(boards, 1), want, atol=1e-5)
    assert (cached.pruning.evaluator.valued, cached.evaluator.valued) == first  # all read back
    assert np.array_equal(cached.choose_moves(boards, dice)[0], bot.choose_moves(boards, dice)[0])
    cached.clear_cache()
    assert len(cached.pruning.evaluator.table) == 0 and len(cached.evaluator.table) == 0


# ---------------------------------------------------------------------------------------------
# the spec's option


@needs_bots
def test_bgnet_deep_prunes_with_bgnet_default_and_other_nets_do_not(tmp_path):
    deep = load_bot("bgnet-deep@2")
    assert deep.name == "bgnet-deep@2"
    assert deep.pruning.name == "bgnet-default" and deep.pruning.keep == PRUNE_KEEP
    assert load_bot("bgnet-default@1").pruning is None
    copy = tmp_path / "mine.onnx"
    shutil.copy(shipped_bot("bgnet-default"), copy)
    assert load_bot(f"{copy}@1").pruning is None  # a user's net prunes only when asked
    shutil.copy(shipped_bot("bgnet-deep"), copy)
    assert load_bot(f"{copy}@1").pruning.name == "bgnet-default"  # the shipped bot, by its file


@needs_bots
@pytest.mark.parametrize("spec, name, pruner, keep", [
    ("bgnet-deep@2,prune=none", "bgnet-deep,prune=none@2", None, None),
    ("bgnet-deep,prune=none@2", "bgnet-deep,prune=none@2", None, None),
    ("bgnet-deep,prune=bgnet-default@1", "bgnet-deep@1", "bgnet-default", PRUNE_KEEP),
    ("bgnet-deep@1,prune=bgnet-default:5", "bgnet-deep,prune=bgnet-default:5@1", "bgnet-default", 5),
    ("bgnet-default,prune=bgnet-default:2", "bgnet-default,prune=bgnet-default:2", "bgnet-default", 2),
])
def test_the_pruning_option_in_a_spec(spec, name, pruner, keep):
    """``,prune=`` before or after the depth; a bot pruned otherwise than by default says so in
    its name, which loads the same bot again."""
    bot = load_bot(spec)
    assert bot.name == name
    assert (bot.pruning and (bot.pruning.name, bot.pruning.keep)) == (pruner and (pruner, keep))
    again = load_bot(bot.name)
    assert again.name == name and again.ply == bot.ply


def test_the_option_keeps_its_place_through_a_depth():
    assert split_ply("bgnet-deep@2,prune=none") == ("bgnet-deep,prune=none", 2)
    assert split_pruning("runs/a,prune=x.onnx:2") == ("runs/a", "x.onnx:2")
    assert with_ply("bgnet-deep@2,prune=none", 1) == "bgnet-deep,prune=none@1"


@pytest.mark.parametrize("spec, error, words", [
    ("gnubg:1,prune=none", BadArgument, "gnubg:1 has no net to prune"),
    ("pubeval,prune=bgnet-default", BadArgument, "pubeval has no net to prune"),
    (",prune=none", BadArgument, "prune= follows a net bot's spec"),
    ("bgnet-default,prune=", BadArgument, "got nothing"),
    ("bgnet-default,prune=pubeval", BadArgument, "pubeval cannot prune"),
    ("bgnet-default,prune=gnubg:0", BadArgument, "gnubg:0 cannot prune"),
    ("bgnet-default,prune=bgnet-default:0", BadArgument, "at least 1 move a roll"),
    ("bgnet-default,prune=bgnet-default@1@2", BadArgument, "without a depth"),
    ("bgnet-default,prune=nosuch.onnx", BotFileMissing, "no such pruning net: 'nosuch.onnx'"),
])
def test_a_pruning_option_that_cannot_be_used_says_why(spec, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(")):
        load_bot(spec)


def test_pruning_keeps_a_move_at_least():
    with pytest.raises(ValueError, match="at least one move"):
        Pruning(None, 0)
    assert pruning_for(None) is None and pruning_for(" None ") is None


@pytest.mark.parametrize("spec, code, words", [
    ("bgnet-default,prune=pubeval", EXIT_USAGE, "pubeval cannot prune"),
    ("bgnet-default,prune=nosuch.onnx", EXIT_INPUT, "no such pruning net: 'nosuch.onnx'"),
])
def test_the_command_line_refuses_a_bad_option_in_one_line(spec, code, words, capsys):
    from bgnet import cli

    assert cli.main(["eval", spec, "random", "--games", "2", "--quiet"]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and words in err

