"""Widening a trained net keeps what it computes and lets the new units learn apart; the
``bgnet widen`` verb writes such a checkpoint or refuses what it cannot do."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import assert_close_up_to_rounding
from test_fast import varied_net

from bgnet.cli import main
from bgnet.engine.sampling import sample_positions
from bgnet.errors import BadArgument
from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.nn.encode import encode, race_mask
from bgnet.nn.fast import FastForward
from bgnet.nn.model import SplitValueNet, ValueNet
from bgnet.nn.widen import widen, widen_split


def inputs(encoding):
    boards, _ = sample_positions(200, seed=1)
    return torch.from_numpy(encode(boards, encoding)), torch.from_numpy(race_mask(boards))


def test_widened_net_computes_the_same_function():
    torch.manual_seed(0)
    net = ValueNet("tesauro", 16)
    x, _ = inputs("tesauro")
    exact = widen(net, 40, noise=0.0)
    assert exact.hidden == [40]
    assert torch.allclose(exact(x), net(x), atol=1e-6)
    noisy = widen(net, 40, noise=1e-3)
    assert torch.allclose(noisy(x), net(x), atol=1e-2)
    # the copies differ from their originals, so gradients can tell them apart
    w = noisy.body[0].weight
    assert not any(torch.equal(w[j], w[i]) for j in range(16, 40) for i in range(16))


def test_widened_split_net_and_the_verb(tmp_path, capsys):
    torch.manual_seed(1)
    net = SplitValueNet("extended", 12, race_hidden=6)
    x, race = inputs("extended")
    assert race.any() and (~race).any()
    wide = widen_split(net, 20, noise=0.0)
    assert wide.contact.hidden == [20] and wide.race.hidden == [6]
    assert torch.allclose(wide(x, race), net(x, race), atol=1e-6)

    src, out = tmp_path / "net.pt", tmp_path / "wide.pt"
    save_checkpoint(src, {"net_config": net.config(), "net_state": net.state_dict(), "games": 7,
                          "optimizer_state": {"state": {}, "param_groups": []}})
    assert main(["widen", str(src), str(out), "--contact", "24", "--noise", "0"]) == 0
    assert "optimizer state is dropped" in capsys.readouterr().out
    loaded, data = load_net(out)
    assert loaded.contact.hidden == [24] and data["games"] == 7 and data["optimizer_state"] is None
    assert np.allclose(loaded(x, race).detach(), net(x, race).detach(), atol=1e-6)


@pytest.mark.parametrize("hidden,activation,layer", [
    ([10, 8], ["sigmoid", "relu"], 1), ([10, 8], ["sigmoid", "relu"], 2),
    ([10, 8, 6], ["sigmoid", "relu", "relu"], 3), ([8, 6], "tanh", 2)])
def test_any_hidden_layer_of_a_deep_net_is_widened_keeping_the_function(hidden, activation, layer):
    net = varied_net("extended", hidden, activation, seed=layer)
    x, _ = inputs("extended")
    wide = widen(net, hidden[layer - 1] + 7, noise=0.0, layer=layer)
    assert wide.hidden == [h + 7 * (k == layer - 1) for k, h in enumerate(hidden)]
    assert wide.activations == net.activations
    assert torch.allclose(wide(x), net(x), atol=1e-5)
    # the layers before the widened one and after its reader keep their weights exactly
    old, new = net.state_dict(), wide.state_dict()
    same = [k for k in old if old[k].shape == new[k].shape]
    assert all(torch.equal(old[k], new[k]) for k in same)
    assert len(same) == len(old) - 3  # only the widened layer (weight, bias) and its reader's weight
    noisy = widen(net, hidden[layer - 1] + 7, noise=1e-3, layer=layer)
    assert torch.allclose(noisy(x), net(x), atol=1e-2) and not torch.allclose(noisy(x), net(x), atol=1e-7)


def test_a_widened_deep_split_net_runs_the_same_on_the_compiled_pass_and_from_the_verb(tmp_path):
    net = SplitValueNet("extended", [12, 8], ["sigmoid", "relu"], race_hidden=6,
                        race_activation="sigmoid")
    net.contact = varied_net("extended", [12, 8], ["sigmoid", "relu"], seed=4)
    net.race = varied_net("extended", [6], "sigmoid", seed=5)
    boards, _ = sample_positions(300, seed=2)
    wide = widen_split(net, 20, noise=0.0, layer=2)
    assert wide.contact.hidden == [12, 20] and wide.race.hidden == [6]
    x, race = inputs("extended")
    assert torch.allclose(wide(x, race), net(x, race), atol=1e-5)
    expected = net(torch.from_numpy(encode(boards, "extended")),
                   torch.from_numpy(race_mask(boards))).detach().numpy()
    assert_close_up_to_rounding(FastForward(wide).positions(boards), expected, wide, boards,
                                afterstates=False)

    src, out = tmp_path / "deep.pt", tmp_path / "wider.pt"
    save_checkpoint(src, {"net_config": net.config(), "net_state": net.state_dict(), "games": 3})
    assert main(["widen", str(src), str(out), "--contact", "16", "--layer", "2", "--noise", "0"]) == 0
    loaded, data = load_net(out)
    assert loaded.contact.hidden == [12, 16] and data["games"] == 3
    assert torch.allclose(loaded(x, race), net(x, race), atol=1e-5)


def test_widen_refuses_what_it_cannot_do():
    with pytest.raises(BadArgument, match="fewer"):
        widen(ValueNet("tesauro", 16), 8)
    with pytest.raises(BadArgument, match="not one of them"):
        widen(ValueNet("tesauro", [8, 8]), 16, layer=3)
    with pytest.raises(BadArgument, match="not one of them"):
        widen(ValueNet("tesauro", [8, 8]), 16, layer=0)
    with pytest.raises(ValueError, match="share one encoding"):
        SplitValueNet.of(ValueNet("tesauro", 4), ValueNet("extended", 4))


@pytest.mark.parametrize("net,args,code,words", [
    (ValueNet("tesauro", 16), ["--contact", "8"], 2, ["cannot widen 16 hidden units to fewer (8)"]),
    (ValueNet("tesauro", [8, 8]), ["--contact", "16", "--layer", "3"], 2,
     ["2 hidden layer(s) [8, 8]", "layer 3 is not one of them"]),
    (ValueNet("tesauro", [8, 8]), ["--contact", "4", "--layer", "2"], 2, ["8 hidden units to fewer (4)"]),
    (ValueNet("tesauro", 8), ["--contact", "16", "--layer", "0"], 2, ["from 1 up"]),
    (ValueNet("tesauro", 8), ["--contact", "16", "--race", "8"], 2, ["--race applies to a split net"]),
    (ValueNet("tesauro", 8), [], 2, ["--contact"]),
    (ValueNet("tesauro", 8), ["--contact", "0"], 2, ["from 1 up"]),
    (ValueNet("tesauro", 8), ["--contact", "16", "--noise", "x"], 2, ["0 or more"]),
])
def test_the_verb_refuses_bad_arguments(tmp_path, capsys, net, args, code, words):
    src = save_checkpoint(tmp_path / "net.pt", {"net_config": net.config(),
                                                "net_state": net.state_dict()})
    assert main(["widen", str(src), str(tmp_path / "wide.pt"), *args]) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgnet widen: error: ") and len(err.splitlines()) == 1
    assert all(w in err for w in words), err
    assert not (tmp_path / "wide.pt").exists()


def test_the_verb_refuses_an_unusable_checkpoint_and_an_unwritable_output(tmp_path, capsys):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    assert main(["widen", str(bad), str(tmp_path / "wide.pt"), "--contact", "9"]) == 3
    assert "bad.pt" in capsys.readouterr().err
    assert main(["widen", str(bad), str(tmp_path), "--contact", "9"]) == 2
    assert "is a folder" in capsys.readouterr().err
