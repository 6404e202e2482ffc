"""The compiled CPU path (bgnet.nn.fast) for SplitValueNet against torch: forward passes routed
by the race mask, and minibatch updates through the trainer's learner on self-play data, with
mixed, all-contact and all-race minibatches (a sub-net without rows is not stepped at all)."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from conftest import assert_close_up_to_rounding

from bgnet.bearoff import is_bearoff
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.board import game_results, start_position
from bgnet.engine.movegen import generate_batch
from bgnet.engine.sampling import sample_positions
from bgnet.nn.encode import encode, encode_afterstates, race_mask
from bgnet.nn.fast import FastForward, FastLearner, learner_unsupported, supports
from bgnet.nn.model import SplitValueNet
from bgnet.train.loop import Learner
from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings

torch.set_num_threads(1)

BATCH = 64


def varied(net: SplitValueNet, seed: int = 0) -> SplitValueNet:
    """Spread both sub-nets' weights so that hidden units and outputs cover their range (a fresh
    net sits near its output priors, which would make agreement too easy)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for sub in (net.contact, net.race):
            layers = [m for m in sub.body if isinstance(m, torch.nn.Linear)] + [sub.head]
            for k, layer in enumerate(layers):
                w = layer.weight.normal_(0.0, 3.0 / layer.in_features ** 0.5)
                if k == 0:
                    layer.bias.normal_(0.0, 0.5)
                else:
                    w.mul_(2.0)
                    layer.bias.copy_(-0.5 * w.sum(1))
    return net


def torch_probs(net, boards, afterstates):
    """What the torch evaluator computes: the encoded view, routed by the mask of the board as
    written."""
    x = (encode_afterstates if afterstates else encode)(boards, net.encoding)
    with torch.no_grad():
        return net(torch.from_numpy(x), torch.from_numpy(race_mask(boards))).numpy()


@pytest.fixture(scope="module")
def boards():
    pos, dice = sample_positions(1500, seed=21, every=2)
    after = generate_batch(pos, dice)[0]
    assert 0.05 < race_mask(pos).mean() < 0.95 and 0.05 < race_mask(after).mean() < 0.95
    return pos, after


# ---------------------------------------------------------------------------------------------
# Forward


@pytest.mark.parametrize("encoding,hidden,race_hidden,race_act", [
    ("extended", [48], [24], "sigmoid"), ("tesauro", [32, 16], [20], "tanh")])
def test_forward_matches_torch(encoding, hidden, race_hidden, race_act, boards):
    net = varied(SplitValueNet(encoding, hidden, "sigmoid", race_hidden, race_act))
    fast = FastForward(net)
    pos, after = boards
    for data, afterstates in ((pos, False), (after, True)):
        got = (fast.swapped if afterstates else fast.positions)(data)
        ref = torch_probs(net, data, afterstates)
        assert got.dtype == np.float32 and got.shape == ref.shape
        assert_close_up_to_rounding(got, ref, net, data, afterstates)
        mask = race_mask(data)
        for rows in (mask, ~mask):  # both nets give varied outputs on their own rows
            assert ref[rows].std(axis=0).min() > 0.01
        # Batches of one kind (no gathering) and a few rows (the dense path).
        for rows in (np.flatnonzero(mask)[:300], np.flatnonzero(~mask)[:300], np.arange(7)):
            sub = (fast.swapped if afterstates else fast.positions)(data[rows])
            assert_close_up_to_rounding(sub, ref[rows], net, data[rows], afterstates)


@pytest.mark.parametrize("encoding,hidden", [("extended", [24]), ("extended", [16, 12]), ("tesauro", [20]),
                                             ("contact", [16, 12])])
def test_children_pass_matches_torch_and_depends_only_on_row_and_parent(encoding, hidden):
    """FastForward.swapped_children (each afterstate's first layer started from its position's)
    agrees with torch to float32 rounding, on the afterstates of all 21 rolls of contact and race
    positions; a row's value does not depend on the rest of the batch."""
    net = varied(SplitValueNet(encoding, hidden, race_hidden=10))
    fast = FastForward(net)
    pos, _ = sample_positions(120, seed=22, every=3)
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], np.int8)
    after, _, off = generate_batch(np.repeat(pos, 21, axis=0), np.tile(rolls, (len(pos), 1)))
    parent_of = np.repeat(np.arange(len(pos)), np.diff(off[::21]))
    assert 0.05 < race_mask(after).mean() < 0.95
    got = fast.swapped_children(pos, parent_of, after)
    assert_close_up_to_rounding(got, torch_probs(net, after, True), net, after, True)
    pick = np.arange(3, len(after), 7)
    assert np.array_equal(fast.swapped_children(pos, parent_of[pick], after[pick]), got[pick])
    with pytest.raises(ValueError, match="one parent per board"):
        fast.swapped_children(pos, parent_of[:-1], after)
    with pytest.raises(ValueError, match="must index the"):
        fast.swapped_children(pos[:1], parent_of, after)
    broken = pos.copy()
    broken[0, 0, 0] = 16
    with pytest.raises(ValueError, match="parent 0 is not a backgammon position"):
        fast.swapped_children(broken, parent_of, after)


def test_forward_reports_the_invalid_board_by_its_index(boards):
    pos = boards[0][:400].copy()
    fast = FastForward(varied(SplitValueNet("tesauro", 16, race_hidden=8)))
    races = np.flatnonzero(race_mask(pos))
    bad = int(races[len(races) // 2])  # a race row: its index in the race net's rows differs
    pos[bad, 1, 3] = 16
    with pytest.raises(ValueError, match=f"board {bad} is not a backgammon position"):
        fast.positions(pos)
    assert fast.positions(pos[:0]).shape == (0, 5)


def test_net_evaluator_runs_a_split_net_on_the_fast_path(boards):
    net = varied(SplitValueNet("extended", 40, race_hidden=20), seed=2)
    fast, slow = NetEvaluator(net), NetEvaluator(net, fast=False)
    assert isinstance(fast.fast, FastForward) and slow.fast is None
    pos, after = boards
    assert_close_up_to_rounding(fast.afterstates(after), slow.afterstates(after), net, after, True)
    assert_close_up_to_rounding(fast.positions(pos), slow.positions(pos), net, pos, False)
    # Told each afterstate's position (bear-offs from the database, finished games exact, as
    # without), the compiled pass starts from the position's first layer.
    bear = np.zeros((2, 2, 25), np.int8)
    bear[:, 0, :3], bear[:, 1, :2] = 3, (1, 1)  # the mover is bearing off its last two checkers
    parents = np.concatenate([pos[:300], bear])
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], np.int8)[np.arange(302) % 21]
    kids, _, off = generate_batch(parents, rolls)
    parent_of = np.repeat(np.arange(len(parents)), np.diff(off))
    told = fast.afterstates(kids, parents, parent_of)
    assert (game_results(kids) > 0).any() and is_bearoff(kids).any()
    assert_close_up_to_rounding(told, slow.afterstates(kids), net, kids, True)
    assert np.array_equal(slow.afterstates(kids, parents, parent_of), slow.afterstates(kids))


def test_supports_split_nets():
    assert supports(SplitValueNet("extended", 128, race_hidden=64))
    assert supports(SplitValueNet("tesauro", [16, 8], "relu", [8], "tanh"))
    assert not supports(SplitValueNet("tesauro", 8, race_activation="silu"))
    assert not supports(SplitValueNet("tesauro", [], race_hidden=8))
    split = SplitValueNet("tesauro", 8)
    assert learner_unsupported(split, torch.optim.Adam(split.parameters())) is None
    assert "parameters" in learner_unsupported(split, torch.optim.Adam(split.contact.parameters()))


# ---------------------------------------------------------------------------------------------
# Learning


@pytest.fixture(scope="module")
def selfplay():
    """Positions and their λ-return targets from self-play games of a split net (its forward
    on the compiled path)."""
    torch.manual_seed(0)
    pool = SelfPlayPool(NetEvaluator(SplitValueNet("extended", 32, race_hidden=16)),
                        SelfPlaySettings(parallel_games=64), np.random.default_rng(3))
    b, t = [], []
    while sum(map(len, b)) < 4000:
        fin = pool.step()
        b.append(fin.boards)
        t.append(fin.targets)
    return np.concatenate(b), np.concatenate(t)


def minibatches(selfplay, kinds, seed=0):
    """Minibatch row indices of the given kinds: contact rows only, race rows only, or mixed."""
    b, _ = selfplay
    rng = np.random.default_rng(seed)
    mask = race_mask(b)
    pools = {"contact": rng.permutation(np.flatnonzero(~mask)),
             "race": rng.permutation(np.flatnonzero(mask)), "mixed": rng.permutation(len(b))}
    used = dict.fromkeys(pools, 0)
    out = []
    for kind in kinds:
        rows = pools[kind]
        out.append(rows[np.arange(used[kind], used[kind] + BATCH) % len(rows)])
        used[kind] += BATCH
    return out


# All-contact first (the race net has no optimizer state yet), then every kind in turn.
KINDS = (["contact"] * 6 + ["mixed", "race", "mixed", "contact", "race", "race", "mixed"] * 7)[:50]


def make_optimizer(net, kind):
    if kind == "adam":
        return torch.optim.Adam(net.parameters(), lr=1e-3)
    if kind == "adam_wd":
        return torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.8, 0.99), weight_decay=1e-2)
    return torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, dampening=0.1,
                           weight_decay=1e-3)


def assert_same_state(ref_opt, opt, atol):
    ref, got = ref_opt.state_dict(), opt.state_dict()
    assert got["param_groups"] == ref["param_groups"]
    assert got["state"].keys() == ref["state"].keys()
    for k, entry in ref["state"].items():
        assert entry.keys() == got["state"][k].keys()
        for name, value in entry.items():
            assert value.dtype == got["state"][k][name].dtype
            if name == "step":  # counts: exactly equal
                assert torch.equal(value, got["state"][k][name]), (k, name)
            else:
                assert torch.allclose(value, got["state"][k][name], rtol=0, atol=atol), (k, name)


def max_diff(a, b):
    return max(float((p - q).detach().abs().max()) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("kind", ["adam", "adam_wd", "sgd_momentum"])
def test_updates_match_the_torch_learner(kind, selfplay):
    torch.manual_seed(1)
    ref = SplitValueNet("extended", 48, race_hidden=24)
    net = copy.deepcopy(ref)
    start = copy.deepcopy(ref)
    slow = Learner(ref, make_optimizer(ref, kind), "mse", "cpu")
    fast = Learner(net, make_optimizer(net, kind), "mse", "cpu", fast_cpu=True)
    assert slow.fast is None and isinstance(fast.fast, FastLearner)
    b, t = selfplay
    for k, rows in enumerate(minibatches(selfplay, KINDS)):
        assert fast.update(b[rows], t[rows]) == pytest.approx(slow.update(b[rows], t[rows]),
                                                              rel=1e-5, abs=1e-7)
        if k == 5:
            # Six all-contact steps: torch gave the race net no gradient, so no state either.
            assert len(fast.fast.state_dict()["state"]) == len(list(net.contact.parameters()))
            assert max_diff(start.race, net.race) == 0.0
        if k % 10 == 9:
            assert max_diff(ref, net) < 1e-6, k
    assert max_diff(ref, net) < 1e-6
    assert max_diff(start.contact, net.contact) > 1e-2 and max_diff(start.race, net.race) > 1e-2
    assert_same_state(slow.opt, fast.fast.opt, atol=1e-7)
    if kind != "sgd_momentum":
        steps = {int(s["step"]) for s in fast.fast.state_dict()["state"].values()}
        n_contact = sum(what != "race" for what in KINDS)
        assert steps == {n_contact, sum(what != "contact" for what in KINDS)}


def test_state_crosses_paths_mid_run(selfplay):
    """Torch steps with only contact rows (no race state), its state dict loaded into the fast
    learner, the rest on the fast path: the same weights and state as torch all along."""
    torch.manual_seed(3)
    whole = SplitValueNet("extended", 24, race_hidden=12)
    half = copy.deepcopy(whole)
    whole_learner = Learner(whole, make_optimizer(whole, "adam"), "mse", "cpu")
    b, t = selfplay
    plan = minibatches(selfplay, KINDS[:20], seed=4)
    for rows in plan:
        whole_learner.update(b[rows], t[rows])
    first = Learner(half, make_optimizer(half, "adam"), "mse", "cpu")
    for rows in plan[:6]:
        first.update(b[rows], t[rows])
    saved = copy.deepcopy(first.opt.state_dict())
    assert len(saved["state"]) == 4  # the contact net's weights and biases only
    opt = make_optimizer(half, "adam")
    learner = FastLearner(half, opt)
    learner.load_state_dict(saved)
    for rows in plan[6:]:
        learner.update(b[rows], t[rows])
    assert max_diff(whole, half) < 1e-6
    assert_same_state(whole_learner.opt, opt, atol=1e-7)


def test_update_encoded_needs_a_valid_race_mask(selfplay):
    net = SplitValueNet("tesauro", 8)
    learner = FastLearner(net, torch.optim.Adam(net.parameters()))
    x = encode(start_position()[None].repeat(3, 0), "tesauro")
    t = np.full((3, 5), 0.5, np.float32)
    with pytest.raises(ValueError, match="needs is_race"):
        learner.update_encoded(x, t)
    with pytest.raises(ValueError, match="bool array of shape"):
        learner.update_encoded(x, t, np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="bool array of shape"):
        learner.update_encoded(x, t, np.zeros(2, bool))
    assert learner.update_encoded(x, t, np.array([True, False, False])) > 0
    single = FastLearner(net.contact, torch.optim.Adam(net.contact.parameters()))
    with pytest.raises(ValueError, match="is_race is for a SplitValueNet"):
        single.update_encoded(x, t, np.zeros(3, bool))
