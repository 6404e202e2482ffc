"""Deepening a trained net: the inserted identity layer keeps what the net computes, in torch, in
the compiled pass and in an exported bot; the deeper net trains on from a checkpoint; and the
``bgnet deepen`` verb writes such a checkpoint or refuses what it cannot do."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from conftest import assert_close_up_to_rounding
from test_fast import make_optimizer, max_diff, torch_step, varied_net

from bgnet.bots.onnx_eval import OnnxEvaluator
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.cli import main
from bgnet.engine.sampling import sample_positions
from bgnet.errors import BadArgument
from bgnet.export.onnx_export import export_onnx
from bgnet.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from bgnet.nn.deepen import deepen, deepen_split
from bgnet.nn.encode import encode, race_mask
from bgnet.nn.fast import FastForward, FastLearner
from bgnet.nn.layout import check_layout
from bgnet.nn.model import SplitValueNet, ValueNet, net_from_config, net_layout


@pytest.fixture(scope="module")
def boards():
    """400 positions, races among them."""
    pos, _ = sample_positions(400, seed=3)
    assert 0 < race_mask(pos).sum() < len(pos)
    return pos


def probs(net, boards):
    x = torch.from_numpy(encode(boards, net.encoding))
    with torch.no_grad():
        if isinstance(net, SplitValueNet):
            return net(x, torch.from_numpy(race_mask(boards))).numpy()
        return net(x).numpy()


def split_net(activation="sigmoid", race_activation="tanh"):
    net = SplitValueNet("extended", 12, activation, race_hidden=[8, 6],
                        race_activation=race_activation)
    net.contact = varied_net("extended", [12], activation, seed=1)
    net.race = varied_net("extended", [8, 6], race_activation, seed=2)
    return net


# ---------------------------------------------------------------------------------------------
# the construction


@pytest.mark.parametrize("hidden,activation,after,width", [
    ([16], "sigmoid", None, None), ([16, 8], "sigmoid", 1, None), ([16, 8], "sigmoid", 2, 20),
    ([12], "relu", 1, 12), ([12], "tanh", None, None), ([10, 6], "elu", 1, 25),
    ([10], "silu", 1, 20)])
def test_deepened_net_computes_the_same_probabilities(boards, hidden, activation, after, width):
    net = varied_net("tesauro", hidden, activation, seed=len(hidden))
    deep = deepen(net, after, width)
    k = len(hidden) if after is None else after
    negative = activation not in ("sigmoid", "relu")
    grown = width or (2 if negative else 1) * hidden[k - 1]
    assert deep.hidden == hidden[:k] + [grown] + hidden[k:]
    assert deep.activations == [activation] * k + ["relu"] + [activation] * (len(hidden) - k)
    ref = probs(net, boards)
    assert ref[:, 0].std() > 0.05  # outputs spread: agreement is not trivial
    assert_close_up_to_rounding(probs(deep, boards), ref, deep, boards, afterstates=False)


def test_a_split_net_is_deepened_per_sub_net(boards):
    net = split_net()
    ref = probs(net, boards)
    for which, contact, race in (("both", [12, 12], [8, 6, 12]), ("contact", [12, 12], [8, 6]),
                                 ("race", [12], [8, 6, 12])):
        deep = deepen_split(net, which)
        assert (deep.contact.hidden, deep.race.hidden) == (contact, race), which
        assert_close_up_to_rounding(probs(deep, boards), ref, deep, boards, afterstates=False)
    # tanh outputs can be negative: the race net's new layer holds x and -x, so twice the units
    assert deepen_split(net, "race", after=2, width=12).race.activations == ["tanh", "tanh", "relu"]


@pytest.mark.parametrize("hidden,activation,after,width", [
    ([32], "sigmoid", None, 10), ([32], "sigmoid", None, 16), ([24], "tanh", None, 12),
    ([32, 6], "relu", 1, 12)])
def test_a_narrower_layer_carries_the_next_layers_sums(boards, hidden, activation, after, width):
    """Below an identity's width the new layer holds +-W x, the sums of the layer that read the
    hidden layer, and that layer adds them back: the same function, at a bottleneck's cost."""
    net = varied_net("tesauro", hidden, activation, seed=7)
    deep = deepen(net, after, width, noise=0.0)
    k = len(hidden) if after is None else after
    assert deep.hidden == hidden[:k] + [width] + hidden[k:]
    ref = probs(net, boards)
    assert ref[:, 0].std() > 0.05
    assert_close_up_to_rounding(probs(deep, boards), ref, deep, boards, afterstates=False)
    reader = deep.head if k == len(hidden) else [m for m in deep.body if hasattr(m, "weight")][k + 1]
    n = reader.weight.shape[0]
    assert torch.equal(reader.weight[:, 2 * n:], torch.zeros(n, width - 2 * n))  # extra units idle
    noisy = deepen(net, after, width, noise=1e-2, seed=1)  # the extra units get incoming weights
    inserted = [m for m in noisy.body if hasattr(m, "weight")][k]
    assert inserted.weight[2 * n:].abs().sum() > 0 or width == 2 * n
    assert np.abs(probs(noisy, boards) - ref).max() > 0  # noise perturbs the carried sums too


def test_a_narrow_split_net_round_trips_through_the_compiled_pass(boards):
    net = split_net()
    deep = deepen_split(net, "contact", width=10)
    assert deep.contact.hidden == [12, 10]
    fast = FastForward(deep).positions(boards)
    assert_close_up_to_rounding(fast, probs(net, boards), deep, boards, afterstates=False)


def test_noise_moves_only_the_new_layer_and_extra_units_keep_the_function(boards):
    net = varied_net("tesauro", [10], "sigmoid", seed=4)
    noisy = deepen(net, width=16, noise=1e-2, seed=3)
    new = noisy.body[2].weight
    assert not torch.equal(new[:10], torch.eye(10)) and new[10:].abs().sum() > 0
    assert torch.equal(noisy.body[0].weight, net.body[0].weight)
    assert torch.equal(noisy.head.weight[:, 10:], torch.zeros(5, 6))  # extra units: no effect yet
    diff = np.abs(probs(noisy, boards) - probs(net, boards)).max()
    assert 0 < diff < 0.05
    same_seed = deepen(net, width=16, noise=1e-2, seed=3)
    assert torch.equal(same_seed.body[2].weight, new)


def test_impossible_requests_are_refused():
    net = ValueNet("tesauro", [8, 4])
    with pytest.raises(BadArgument, match="1 to 2"):
        deepen(net, after=3)
    with pytest.raises(BadArgument, match="at least 8 units"):
        deepen(net, after=1, width=7)
    with pytest.raises(BadArgument, match="at least 10 units"):  # 16 as an identity, 10 to carry
        deepen(ValueNet("tesauro", 8, "tanh"), width=9)
    with pytest.raises(BadArgument, match="ReLU"):
        deepen(net, activation="sigmoid")
    with pytest.raises(BadArgument, match="no layer"):
        deepen(ValueNet("tesauro", []))
    with pytest.raises(BadArgument, match="unknown sub-net"):
        deepen_split(SplitValueNet("tesauro", 8), "left")


# ---------------------------------------------------------------------------------------------
# the mixed-activation net everywhere its layout is used


def test_mixed_activations_round_trip_through_config_and_checkpoint(tmp_path, boards):
    deep = deepen(varied_net("tesauro", [16, 8], "tanh", seed=5), after=1)
    assert deep.config()["activation"] == ["tanh", "relu", "tanh"]
    assert net_from_config(deep.config()).config() == deep.config()
    assert ValueNet("tesauro", [4, 4], ["relu", "relu"]).config()["activation"] == "relu"
    layout = check_layout(net_layout(deep))
    assert [l["activation"] for l in layout["subnets"][0]["layers"][:-1]] == ["tanh", "relu", "tanh"]
    path = save_checkpoint(tmp_path / "deep.pt", {"net_config": deep.config(),
                                                  "net_state": deep.state_dict()})
    loaded, data = load_net(path)
    assert data["net_config"] == deep.config() and loaded.config() == deep.config()
    assert np.array_equal(probs(loaded, boards), probs(deep, boards))
    with pytest.raises(ValueError, match="one name or a list of 2"):
        ValueNet("tesauro", [4, 4], ["relu"])
    with pytest.raises(ValueError, match="unknown activation 'cube'"):
        ValueNet("tesauro", [4, 4], ["relu", "cube"])


@pytest.mark.parametrize("make", [
    lambda: deepen(varied_net("tesauro", [24], "sigmoid", seed=6), width=30, noise=0.3),
    lambda: deepen(varied_net("extended", [16, 8], "tanh", seed=7), after=1, noise=0.3),
    lambda: deepen_split(split_net("relu", "sigmoid"), noise=0.3),
], ids=["sigmoid-relu", "tanh-relu-tanh", "split"])
def test_compiled_pass_runs_mixed_activations(make, boards):
    """Noise makes the new layer a real (non-identity) layer, so each activation counts."""
    net = make()
    fast = FastForward(net)
    ref = probs(net, boards)
    assert_close_up_to_rounding(fast.positions(boards), ref, net, boards, afterstates=False)
    assert_close_up_to_rounding(fast.positions(boards[:5]), ref[:5], net, boards[:5],
                                afterstates=False)  # the dense path for a few boards


@pytest.mark.parametrize("base,activation", [([24, 12], "tanh"), ([20], "sigmoid")])
def test_compiled_learner_trains_mixed_activations_as_torch_does(base, activation):
    """SGD steps compare the gradients themselves (Adam's first steps divide by the gradient's
    own size, turning a rounding-level difference in a near-zero gradient, as a saturated unit
    has, into a step-sized one)."""
    pos, _ = sample_positions(64 * 4, seed=5)
    targets = np.random.default_rng(1).random((len(pos), 5)).astype(np.float32)
    targets[:, 1:3] *= targets[:, :1]
    ref = deepen(varied_net("tesauro", base, activation, seed=8), after=1, noise=0.1)
    net = copy.deepcopy(ref)
    ref_opt = make_optimizer(ref, "sgd_momentum")
    learner = FastLearner(net, make_optimizer(net, "sgd_momentum"))
    for i in range(0, len(pos), 64):
        b, t = pos[i:i + 64], targets[i:i + 64]
        assert learner.update(b, t) == pytest.approx(torch_step(ref, ref_opt, b, t), rel=1e-5)
    assert max_diff(ref, net) < 1e-6
    assert max(float((p - q).detach().abs().max()) for p, q in
               zip(ref.parameters(), deepen(varied_net("tesauro", base, activation, seed=8),
                                            after=1, noise=0.1).parameters())) > 1e-3  # it moved


def test_an_exported_deepened_net_agrees_with_torch(tmp_path, boards):
    net = deepen_split(split_net(), noise=0.3)
    ckpt = save_checkpoint(tmp_path / "deep.pt", {"net_config": net.config(),
                                                  "net_state": net.state_dict()})
    path = export_onnx(ckpt, tmp_path / "deep.onnx")
    ref = NetEvaluator(net, fast=False).positions(boards)
    for compiled in (False, True):
        bot = OnnxEvaluator(path, compiled=compiled)
        assert (bot.fast is not None) == compiled
        assert np.abs(bot.positions(boards) - ref).max() < 1e-5
    assert main(["export", str(ckpt), "--out", str(tmp_path / "cli.onnx"), "--check", "200"]) == 0


# ---------------------------------------------------------------------------------------------
# the verb, and training on


def write_checkpoint(path, net, games=7):
    return save_checkpoint(path, {"net_config": net.config(), "net_state": net.state_dict(),
                                  "games": games, "optimizer_state": {"state": {}, "param_groups": []}})


def test_the_verb_writes_a_checkpoint_without_optimizer_state(tmp_path, boards, capsys):
    net = split_net()
    src, out = write_checkpoint(tmp_path / "net.pt", net), tmp_path / "deep.pt"
    assert main(["deepen", str(src), str(out), "--net", "contact", "--width", "14"]) == 0
    text = capsys.readouterr().out
    assert "contact [12 sigmoid, 14 relu]" in text and "optimizer state is dropped" in text
    loaded, data = load_net(out)
    assert loaded.contact.hidden == [12, 14] and loaded.race.hidden == [8, 6]
    assert data["games"] == 7 and data["optimizer_state"] is None
    assert_close_up_to_rounding(probs(loaded, boards), probs(net, boards), loaded, boards, False)


@pytest.mark.parametrize("args,code,words", [
    (["--after", "2"], 2, ["--after must name a hidden layer, 1 to 1"]),
    (["--width", "3"], 2, ["at least 8 units"]),
    (["--net", "race"], 2, ["--net applies to a split net"]),
    (["--activation", "tanh"], 2, ["invalid choice"]),
    (["--noise", "-1"], 2, ["0 or more"]),
])
def test_the_verb_refuses_bad_arguments(tmp_path, capsys, args, code, words):
    src = write_checkpoint(tmp_path / "net.pt", ValueNet("tesauro", 8))
    assert main(["deepen", str(src), str(tmp_path / "deep.pt"), *args]) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgnet deepen: error: ") and len(err.splitlines()) == 1
    assert all(w in err for w in words), err
    assert not (tmp_path / "deep.pt").exists()


def test_the_verb_refuses_unusable_files(tmp_path, capsys):
    assert main(["deepen", str(tmp_path / "none.pt"), str(tmp_path / "deep.pt")]) == 3
    assert "none.pt does not exist" in capsys.readouterr().err
    src = write_checkpoint(tmp_path / "net.pt", ValueNet("tesauro", 8))
    assert main(["deepen", str(src), str(tmp_path / "no" / "deep.pt")]) == 2
    assert "there is no folder" in capsys.readouterr().err


def test_a_run_resumes_from_a_deepened_checkpoint(tmp_path, capsys):
    from test_train import config

    from bgnet.train.loop import train

    tiny = {"model.hidden": "[16]", "train.parallel_games": 16, "train.buffer_positions": 256,
            "seed": 5}
    first = tmp_path / "first"
    train(config(**tiny, **{"train.games": 40}), first)
    deep = tmp_path / "deep.pt"
    assert main(["deepen", str(first / "checkpoints" / "latest.pt"), str(deep)]) == 0
    small = {k: v for k, v in tiny.items() if not k.startswith("model.")}
    summary = train(config(**small, **{"resume": deep, "train.games": 60}), tmp_path / "second",
                    overrides=[f"resume={deep}", "train.games=60"])
    assert summary["games"] >= 60
    data = load_checkpoint(tmp_path / "second" / "checkpoints" / "latest.pt")
    assert data["net_config"]["hidden"] == [16, 16]
    assert data["net_config"]["activation"] == ["sigmoid", "relu"]
    assert data["optimizer_state"]  # a fresh optimizer, saved with the run
    before = load_checkpoint(deep)["net_state"]
    assert not torch.equal(data["net_state"]["body.2.weight"], before["body.2.weight"])
