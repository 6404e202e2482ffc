"""The compiled CPU path (bgnet.nn.fast) against torch: forward passes on positions and
afterstates, minibatch updates with Adam and SGD, optimizer state through checkpoints, and the
trainer and evaluator hooks that use it."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from conftest import assert_close_up_to_rounding
from numba import njit

from bgnet.engine.board import start_position
from bgnet.engine.movegen import generate_batch
from bgnet.engine.sampling import sample_positions
from bgnet.nn.checkpoint import load_checkpoint, save_checkpoint
from bgnet.nn.encode import encode, encode_afterstates
from bgnet.nn.fast import FastForward, FastLearner, learner_unsupported, supports
from bgnet.nn.fast.kernels import exp32, sigmoid32, tanh32
from bgnet.nn.model import SplitValueNet, ValueNet, probability_loss

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def boards():
    pos, dice = sample_positions(600, seed=11, every=3)
    return pos, dice


@pytest.fixture(scope="module")
def afterstates(boards):
    pos, dice = boards
    return generate_batch(pos, dice)[0]


def varied_net(encoding, hidden, activation="sigmoid", seed=0):
    """A net whose hidden units and outputs cover their whole range (a fresh net sits near its
    output priors, which would make agreement too easy)."""
    torch.manual_seed(seed)
    net = ValueNet(encoding, hidden, activation)
    with torch.no_grad():
        layers = [m for m in net.body if isinstance(m, torch.nn.Linear)] + [net.head]
        for k, layer in enumerate(layers):
            w = layer.weight.normal_(0.0, 3.0 / layer.in_features ** 0.5)
            if k == 0:
                layer.bias.normal_(0.0, 0.5)
            else:  # inputs mostly in (0, 1): centred, so that units do not all saturate alike
                w.mul_(2.0)
                layer.bias.copy_(-0.5 * w.sum(1))
    return net


def torch_probs(net, boards, afterstates):
    x = (encode_afterstates if afterstates else encode)(boards, net.encoding)
    with torch.no_grad():
        return net(torch.from_numpy(x)).numpy()


# ---------------------------------------------------------------------------------------------
# Activations


@njit
def _apply(fn_id, x, out):
    for i in range(x.shape[0]):
        if fn_id == 0:
            out[i] = exp32(x[i])
        elif fn_id == 1:
            out[i] = sigmoid32(x[i])
        else:
            out[i] = tanh32(x[i])


def test_float32_exp_sigmoid_and_tanh_are_accurate():
    x = np.linspace(-87.0, 88.0, 400_001).astype(np.float32)
    out = np.empty_like(x)
    _apply(0, x, out)
    exact = np.exp(x.astype(np.float64))
    assert np.max(np.abs(out - exact) / exact) < 3e-7
    x = np.linspace(-60.0, 60.0, 400_001).astype(np.float32)
    _apply(1, x, out)
    exact = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    assert np.max(np.abs(out - exact) / exact) < 1e-6
    # Far beyond the clamp the sigmoid saturates to 0 and 1 as it must.
    _apply(1, np.array([-200.0, 200.0], np.float32), out[:2])
    assert out[0] < 1e-37 and out[1] == 1.0
    _apply(2, x, out)
    assert np.max(np.abs(out - np.tanh(x.astype(np.float64)))) < 5e-7


# ---------------------------------------------------------------------------------------------
# Forward


@pytest.mark.parametrize("encoding,hidden", [("tesauro", [80]), ("tesauro", [40, 24]),
                                             ("extended", [80]), ("extended", [40, 24]),
                                             ("contact", [40, 24])])
def test_forward_matches_torch_on_positions_and_afterstates(encoding, hidden, boards, afterstates):
    net = varied_net(encoding, hidden)
    fast = FastForward(net)
    pos = boards[0]
    got = fast.positions(pos)
    ref = torch_probs(net, pos, False)
    assert got.dtype == np.float32 and got.shape == ref.shape
    assert_close_up_to_rounding(got, ref, net, pos, False)
    assert ref.std(axis=0).min() > 0.02  # the outputs really vary over these positions
    got = fast.swapped(afterstates)
    ref = torch_probs(net, afterstates, True)
    assert len(afterstates) > 1000  # several blocks and a partial one
    assert_close_up_to_rounding(got, ref, net, afterstates, True)
    # A few rows take the dense path from encoded inputs instead of the tables.
    assert_close_up_to_rounding(fast.positions(pos[:5]), torch_probs(net, pos[:5], False), net, pos[:5], False)
    assert_close_up_to_rounding(fast.swapped(afterstates[:9]), ref[:9], net, afterstates[:9], True)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_forward_other_activations(activation, afterstates):
    net = varied_net("tesauro", [32, 16], activation, seed=3)
    got = FastForward(net).swapped(afterstates[:700])
    assert_close_up_to_rounding(got, torch_probs(net, afterstates[:700], True), net, afterstates[:700], True)


def test_forward_parallel_equals_serial(afterstates):
    net = varied_net("tesauro", [80])
    parallel = FastForward(net, parallel=True)
    assert np.array_equal(parallel.swapped(afterstates), FastForward(net).swapped(afterstates))
    bad = afterstates.copy()
    bad[-1, 0, 5] = 40
    with pytest.raises(ValueError, match=f"board {len(bad) - 1} is not"):
        parallel.swapped(bad)


def test_forward_follows_weight_changes_and_edge_cases():
    net = varied_net("tesauro", [16])
    fast = FastForward(net)
    b = start_position()[None]
    before = fast.positions(b)
    with torch.no_grad():
        net.head.bias.add_(1.0)
    after = fast.positions(b)
    assert not np.allclose(before, after)
    assert_close_up_to_rounding(after, torch_probs(net, b, False), net, b, False)
    assert fast.positions(np.zeros((0, 2, 25), np.int8)).shape == (0, 5)
    with torch.no_grad():
        net.body[0].weight[3, 7] = float("nan")  # a diverged net gives NaN, as in torch
    for n in (1, 300):
        assert np.isnan(fast.positions(np.repeat(b, n, axis=0))).all()
        assert np.isnan(torch_probs(net, b, False)).all()
    for n in (1, 300):  # the dense path and the table path
        for point, count in ((3, 16), (3, -1), (24, 16), (0, 9)):  # 9 more: 24 on one side
            bad = np.repeat(b, n, axis=0)
            bad[n - 1, 1, point] = count if count != 9 else bad[n - 1, 1, point] + count
            with pytest.raises(ValueError, match=f"board {n - 1} is not a backgammon position"):
                fast.positions(bad)


@pytest.mark.parametrize("afterstates", [False, True], ids=["positions", "afterstates"])
def test_forward_from_declared_weights_equals_the_torch_nets_pass(boards, afterstates):
    """The pass over weights found by name (an exported bot's) is the pass over the module."""
    from bgnet.nn.model import net_layout, net_weights

    pos = boards[0]
    for net in (varied_net("extended", [24, 12], "tanh", seed=5),
                SplitValueNet("tesauro", 16, race_hidden=8)):
        direct = FastForward(net)
        named = FastForward.from_weights(net_layout(net), net_weights(net))
        run = "swapped" if afterstates else "positions"
        assert np.array_equal(getattr(named, run)(pos), getattr(direct, run)(pos))
        assert np.array_equal(getattr(named, run)(pos[:5]), getattr(direct, run)(pos[:5]))
        # The declared weights were copied: later training of the module does not reach them.
        with torch.no_grad():
            next(net.parameters()).add_(1.0)
        assert not np.array_equal(named.positions(pos), FastForward(net).positions(pos))


def test_forward_from_weights_refuses_what_it_cannot_run():
    from bgnet.nn.layout import LayoutError
    from bgnet.nn.model import net_layout, net_weights

    net = ValueNet("tesauro", 8, "elu")
    with pytest.raises(ValueError, match="activations"):
        FastForward.from_weights(net_layout(net), net_weights(net))
    net = ValueNet("tesauro", 8)
    weights = net_weights(net)
    del weights["head.weight"]
    with pytest.raises(LayoutError, match="head.weight"):
        FastForward.from_weights(net_layout(net), weights)


def test_the_forward_pass_imports_no_torch():
    import subprocess
    import sys

    script = ("import sys\n"
              "import bgnet.nn.fast\n"
              "from bgnet.nn.fast import FastForward, supports\n"
              "assert 'torch' not in sys.modules, 'torch was imported'\n"
              "from bgnet.nn.fast import learner_unsupported\n"
              "assert 'torch' in sys.modules\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_supports():
    assert supports(ValueNet("tesauro", 8)) and supports(ValueNet("extended", [8, 4], "tanh"))
    assert not supports(ValueNet("tesauro", 8, "elu"))
    assert not supports(ValueNet("tesauro", []))
    assert supports(SplitValueNet("tesauro", 8))
    assert supports(SplitValueNet("extended", 8, "tanh", 4))
    assert not supports(SplitValueNet("tesauro", 8, race_activation="elu"))
    assert not supports(ValueNet("tesauro", 8).double())
    with pytest.raises(ValueError, match="FastForward"):
        FastForward(SplitValueNet("tesauro", 8, race_hidden=[]))


# ---------------------------------------------------------------------------------------------
# Learning


def make_optimizer(net, kind):
    if kind == "adam":
        return torch.optim.Adam(net.parameters(), lr=1e-3)
    if kind == "adam_wd":
        return torch.optim.Adam(net.parameters(), lr=3e-3, betas=(0.8, 0.99), eps=1e-6,
                                weight_decay=1e-2)
    if kind == "sgd":
        return torch.optim.SGD(net.parameters(), lr=0.1)
    return torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, dampening=0.1,
                           weight_decay=1e-3, nesterov=False)


def torch_step(net, opt, boards, targets):
    x = torch.from_numpy(encode(boards, net.encoding))
    loss = probability_loss(net(x), torch.from_numpy(targets), "mse")
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return float(loss.detach())


def max_diff(a, b):
    return max(float((p - q).detach().abs().max()) for p, q in zip(a.parameters(), b.parameters()))


@pytest.fixture(scope="module")
def batches():
    pos, _ = sample_positions(64 * 50, seed=5)
    targets = np.random.default_rng(1).random((len(pos), 5)).astype(np.float32)
    targets[:, 1:3] *= targets[:, :1]  # roughly consistent targets: gammons within wins
    return [(pos[i:i + 64], targets[i:i + 64]) for i in range(0, len(pos), 64)]


@pytest.mark.parametrize("encoding,hidden,activation,kind", [
    ("tesauro", [80], "sigmoid", "adam"), ("extended", [40, 20], "sigmoid", "adam"),
    ("tesauro", [32, 16], "sigmoid", "adam_wd"), ("tesauro", [80], "sigmoid", "sgd"),
    ("extended", [24], "sigmoid", "sgd_momentum"), ("tesauro", [24, 12], "tanh", "adam"),
    ("tesauro", [24, 12], "relu", "adam")])
def test_updates_match_torch(encoding, hidden, activation, kind, batches):
    torch.manual_seed(2)
    ref = ValueNet(encoding, hidden, activation)
    net = copy.deepcopy(ref)
    ref_opt = make_optimizer(ref, kind)
    learner = FastLearner(net, make_optimizer(net, kind))
    b, t = batches[0]
    assert learner.update(b, t) == pytest.approx(torch_step(ref, ref_opt, b, t), rel=1e-6)
    assert max_diff(ref, net) < 1e-6
    assert max(float(p.detach().abs().max()) for p in ref.parameters()) > 0.1
    for b, t in batches[1:]:
        fast_loss, ref_loss = learner.update(b, t), torch_step(ref, ref_opt, b, t)
    assert fast_loss == pytest.approx(ref_loss, rel=1e-4)
    assert max_diff(ref, net) < 1e-4
    # The optimizer state is torch's own, with the same contents.
    ref_state, state = ref_opt.state_dict(), learner.state_dict()
    assert state["param_groups"] == ref_state["param_groups"]
    assert state["state"].keys() == ref_state["state"].keys()
    for k, entry in ref_state["state"].items():
        assert entry.keys() == state["state"][k].keys()
        for name, value in entry.items():
            assert value.dtype == state["state"][k][name].dtype
            assert torch.allclose(value, state["state"][k][name], rtol=1e-4, atol=1e-7), name


def test_a_nan_target_spreads_nan_as_in_torch(batches):
    ref = ValueNet("tesauro", [16])
    net = copy.deepcopy(ref)
    ref_opt = make_optimizer(ref, "adam")
    learner = FastLearner(net, make_optimizer(net, "adam"))
    b, t = batches[0]
    t = t.copy()
    t[3, 0] = np.nan
    assert np.isnan(learner.update(b, t)) and np.isnan(torch_step(ref, ref_opt, b, t))
    for p, q in zip(ref.parameters(), net.parameters()):
        assert torch.equal(p.isnan(), q.isnan())
        assert p.isnan().any()
    learner.update(*batches[1])
    torch_step(ref, ref_opt, *batches[1])
    assert all(p.isnan().all() and q.isnan().all() for p, q in zip(ref.parameters(), net.parameters()))


def test_learning_rate_changes_are_followed(batches):
    ref = ValueNet("tesauro", [20])
    net = copy.deepcopy(ref)
    ref_opt, opt = make_optimizer(ref, "adam"), make_optimizer(net, "adam")
    learner = FastLearner(net, opt)
    for k, (b, t) in enumerate(batches[:6]):
        for o in (ref_opt, opt):
            o.param_groups[0]["lr"] = 1e-3 * (k + 1)
        learner.update(b, t)
        torch_step(ref, ref_opt, b, t)
    assert max_diff(ref, net) < 1e-6


def test_checkpoint_round_trip_with_optimizer_state(tmp_path, batches):
    """Steps by the fast path, a checkpoint, then the rest by torch (and the other way round)
    land where a run entirely on one path lands."""
    torch.manual_seed(4)
    start = ValueNet("tesauro", [30])
    whole = copy.deepcopy(start)
    whole_opt = make_optimizer(whole, "adam")
    for b, t in batches[:20]:
        torch_step(whole, whole_opt, b, t)

    for first_fast in (True, False):
        net = copy.deepcopy(start)
        opt = make_optimizer(net, "adam")
        learner = FastLearner(net, opt)
        for b, t in batches[:10]:
            if first_fast:
                learner.update(b, t)
            else:
                torch_step(net, opt, b, t)
        path = save_checkpoint(tmp_path / f"c{first_fast}.pt", {
            "net_config": net.config(), "net_state": net.state_dict(),
            "optimizer_state": learner.state_dict()})
        data = load_checkpoint(path)
        resumed = ValueNet.from_config(data["net_config"])
        resumed.load_state_dict(data["net_state"])
        opt2 = make_optimizer(resumed, "adam")
        if first_fast:
            opt2.load_state_dict(data["optimizer_state"])
            for b, t in batches[10:20]:
                torch_step(resumed, opt2, b, t)
        else:
            learner2 = FastLearner(resumed, opt2)
            learner2.load_state_dict(data["optimizer_state"])
            for b, t in batches[10:20]:
                learner2.update(b, t)
        assert int(opt2.state_dict()["state"][0]["step"]) == 20
        assert max_diff(whole, resumed) < 1e-5, first_fast


def test_load_state_dict_rebinds_the_moments(batches):
    """After the optimizer's state is replaced, updates use the new tensors, not stale views."""
    net = ValueNet("tesauro", [16])
    learner = FastLearner(net, make_optimizer(net, "adam"))
    b, t = batches[0]
    learner.update(b, t)
    saved = copy.deepcopy(learner.state_dict())
    weights = copy.deepcopy(net.state_dict())
    learner.update(*batches[1])
    once = copy.deepcopy(net.state_dict())
    net.load_state_dict(weights)
    learner.load_state_dict(saved)
    learner.update(*batches[1])
    for name, value in net.state_dict().items():
        assert torch.equal(value, once[name]), name


def test_unsupported_combinations_are_refused_cleanly():
    net = ValueNet("tesauro", 8)
    adam = torch.optim.Adam(net.parameters())
    assert learner_unsupported(net, adam) is None
    assert "loss" in learner_unsupported(net, adam, "bce")
    split = SplitValueNet("tesauro", 8, race_activation="elu")
    assert "SplitValueNet" in learner_unsupported(split, torch.optim.Adam(split.parameters()))
    assert "AdamW" in learner_unsupported(net, torch.optim.AdamW(net.parameters()))
    assert "amsgrad" in learner_unsupported(net, torch.optim.Adam(net.parameters(), amsgrad=True))
    assert "parameters" in learner_unsupported(net, torch.optim.Adam(net.head.parameters()))
    with pytest.raises(ValueError, match="SplitValueNet"):
        FastLearner(split, torch.optim.Adam(split.parameters()))
    with pytest.raises(ValueError, match="targets"):
        FastLearner(net, adam).update_encoded(np.zeros((2, 198), np.float32),
                                              np.zeros((3, 5), np.float32))


# ---------------------------------------------------------------------------------------------
# Hooks in the trainer and the evaluator


def test_trainer_learner_uses_the_fast_path_only_where_it_applies(batches):
    from bgnet.train.loop import Learner

    ref = ValueNet("tesauro", [24])
    net = copy.deepcopy(ref)
    slow = Learner(ref, make_optimizer(ref, "adam"), "mse", "cpu")
    fast = Learner(net, make_optimizer(net, "adam"), "mse", "cpu", fast_cpu=True)
    assert slow.fast is None and fast.fast is not None
    for b, t in batches[:5]:
        assert fast.update(b, t) == pytest.approx(slow.update(b, t), rel=1e-5)
    assert max_diff(ref, net) < 1e-6
    assert Learner(net, make_optimizer(net, "adam"), "bce", "cpu", fast_cpu=True).fast is None
    split = SplitValueNet("tesauro", 8, race_activation="elu")
    assert Learner(split, make_optimizer(split, "adam"), "mse", "cpu", fast_cpu=True).fast is None


def test_net_evaluator_uses_fast_forward_on_the_cpu(afterstates):
    from bgnet.bots.torch_eval import NetEvaluator

    net = varied_net("tesauro", [40])
    fast, slow = NetEvaluator(net), NetEvaluator(net, fast=False)
    assert fast.fast is not None and slow.fast is None
    assert_close_up_to_rounding(fast.afterstates(afterstates), slow.afterstates(afterstates), net, afterstates, True)
    pos = afterstates[:300, ::-1]
    assert_close_up_to_rounding(fast.positions(pos), slow.positions(pos), net, pos, False)
    assert NetEvaluator(SplitValueNet("tesauro", 8, race_activation="elu")).fast is None


def test_forward_follows_loaded_and_replaced_parameters():
    """In-place loads and a parameter given new storage are both seen without rebuilding."""
    net, other = varied_net("tesauro", [16], seed=1), varied_net("tesauro", [16], seed=2)
    fast = FastForward(net)
    b = sample_positions(40, seed=2)[0]
    fast.positions(b)
    net.load_state_dict(other.state_dict())
    assert np.array_equal(fast.positions(b), FastForward(other).positions(b))
    with torch.no_grad():
        net.head.weight.data = torch.zeros_like(net.head.weight)
    assert_close_up_to_rounding(fast.positions(b), torch_probs(net, b, False), net, b, False)
