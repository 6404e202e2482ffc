"""Distillation draws contact decisions by self-play, values each close candidate at 1-ply with
the same net, fits the net to those values, and its verb keeps everything of the checkpoint but
the net (or refuses what it cannot do)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from bgnet.bots.net import NetBot
from bgnet.cli import main
from bgnet.engine.board import race_mask
from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.nn.encode import encode
from bgnet.nn.model import SplitValueNet, ValueNet
from bgnet.nn.probs import equity, flip
from bgnet.train.distill import Samples, candidate_samples, draw_samples, fit, self_play_decisions, split


@pytest.fixture(scope="module")
def bot():
    torch.manual_seed(3)
    return NetBot(ValueNet("tesauro", 12))


@pytest.fixture(scope="module")
def decisions(bot):
    return self_play_decisions(bot, 120, np.random.default_rng(5), games=16)


def test_self_play_decisions_are_contact_positions_with_legal_dice(decisions):
    boards, dice = decisions
    assert boards.shape == (120, 2, 25) and dice.shape == (120, 2)
    assert not race_mask(boards).any()
    assert ((dice >= 1) & (dice <= 6)).all()
    assert (boards.sum(axis=2) <= 15).all() and (boards >= 0).all()
    assert len({b.tobytes() for b in boards}) > 60  # the games went different ways


def test_candidates_are_the_close_best_moves_valued_at_one_ply(bot, decisions):
    boards, dice = decisions
    s = candidate_samples(bot, boards, dice, keep=3, margin=0.2)
    counts = np.bincount(s.decision)
    assert len(s) > 0 and counts.min() >= 2 and counts.max() <= 3
    assert s.decisions == len(counts) <= len(boards)
    assert np.allclose(s.targets, bot.evaluate(s.boards, ply=1), atol=1e-6)
    mover = equity(flip(bot.evaluate(s.boards, ply=0)))  # each candidate's 0-ply equity, mover's view
    for d in range(s.decisions):
        eq = mover[s.decision == d]
        assert eq.max() - eq.min() <= 0.2 + 1e-5


def test_samples_round_trip_concat_and_split(bot, decisions, tmp_path):
    s = candidate_samples(bot, *decisions, keep=4, margin=0.3)
    path = tmp_path / "s.npz"
    s.save(path)
    back = Samples.load(path)
    assert np.array_equal(back.boards, s.boards) and np.array_equal(back.decision, s.decision)
    both = Samples.concat([s, back])
    assert both.decisions == 2 * s.decisions and len(both) == 2 * len(s)
    train, held = split(both, 0.3, np.random.default_rng(0))
    assert len(train) + len(held) == len(both)
    assert not set(train.decision) & set(held.decision)  # a decision's candidates stay together


def test_fit_moves_the_net_toward_its_targets(bot, decisions):
    s = candidate_samples(bot, *decisions, keep=4, margin=0.3)
    torch.manual_seed(4)
    net = ValueNet("tesauro", 12)
    x = torch.from_numpy(encode(s.boards, "tesauro"))

    def error() -> float:
        return float(((net(x).detach().numpy() - s.targets) ** 2).mean())

    before = error()
    fit(net, s, s, epochs=5, lr=1e-2, batch_size=16, rng=np.random.default_rng(1), log=lambda *_: None)
    assert error() < 0.5 * before


def test_a_fit_with_a_rank_weight_learns_the_order_of_each_decisions_candidates(bot, decisions):
    import torch as t

    from bgnet.train.distill import DecisionRuns, within_decision_loss

    s = candidate_samples(bot, *decisions, keep=4, margin=0.3)
    x = torch.from_numpy(encode(s.boards, "tesauro"))
    runs = DecisionRuns(s)
    rows, which = runs.rows(np.arange(len(runs)))
    assert np.array_equal(rows, np.arange(len(s)))  # every decision, in order: every sample once

    def order_error(net) -> float:
        with t.no_grad():
            return float(within_decision_loss(net(x), t.from_numpy(s.targets), t.from_numpy(which), len(runs)))

    errors = {}
    for weight in (0.0, 30.0):
        torch.manual_seed(4)
        net = ValueNet("tesauro", 12)
        before = order_error(net)
        fit(net, s, s, epochs=5, lr=1e-2, batch_size=16, rng=np.random.default_rng(1), log=lambda *_: None,
            rank_weight=weight)
        errors[weight] = order_error(net)
    assert errors[30.0] < 0.5 * before and errors[30.0] < errors[0.0]


def test_a_fit_with_nothing_held_out_reports_no_figure_instead_of_failing(bot, decisions):
    s = candidate_samples(bot, *decisions, keep=4, margin=0.3)
    none = Samples(s.boards[:0], s.targets[:0], s.decision[:0])
    lines = []
    fit(ValueNet("tesauro", 12), s, none, epochs=1, lr=1e-2, batch_size=16, rng=np.random.default_rng(1),
        log=lines.append)
    assert "held-out nan" in lines[-1] and "agreement nan%" in lines[-1]


def test_the_verb_writes_a_checkpoint_to_resume_and_reuses_its_samples(tmp_path, capsys):
    torch.manual_seed(1)
    net = SplitValueNet("extended", 8, race_hidden=4)
    src, out, data = tmp_path / "net.pt", tmp_path / "d.pt", tmp_path / "s.npz"
    save_checkpoint(src, {"net_config": net.config(), "net_state": net.state_dict(), "games": 9,
                          "optimizer_state": {"state": {}, "param_groups": []}})
    args = ["distill", str(src), str(out), "--decisions", "60", "--data", str(data), "--epochs", "1"]
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "60 decisions drawn" in said and "agreement" in said and data.exists()
    loaded, kept = load_net(out)
    assert kept["games"] == 9 and kept["optimizer_state"] is None
    assert any(not torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), net.state_dict().values()))
    assert main(args) == 0
    assert "read from" in capsys.readouterr().out


@pytest.mark.parametrize("args,code", [(["--decisions", "0"], 2), (["--lr", "-1"], 2), (["--keep", "x"], 2),
                                       (["--data", "no/such/folder/s.npz"], 2), (["--rank-weight", "-1"], 2)])
def test_the_verb_refuses_bad_settings(tmp_path, args, code):
    assert main(["distill", str(tmp_path / "none.pt"), str(tmp_path / "o.pt"), *args]) == code


def test_the_verb_refuses_a_bad_checkpoint(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    assert main(["distill", str(bad), str(tmp_path / "o.pt"), "--decisions", "5"]) == 3


def test_the_samples_depend_on_the_seed_not_on_the_workers(tmp_path):
    torch.manual_seed(2)
    net = ValueNet("tesauro", 8)
    src = tmp_path / "net.pt"
    save_checkpoint(src, {"net_config": net.config(), "net_state": net.state_dict()})
    one = draw_samples(str(src), 50, workers=1, seed=3, chunk=20, progress=False)
    two = draw_samples(str(src), 50, workers=2, seed=3, chunk=20, progress=False)
    assert len(one) > 0 and np.array_equal(one.boards, two.boards)
    assert np.array_equal(one.targets, two.targets) and np.array_equal(one.decision, two.decision)
