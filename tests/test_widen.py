"""Widening a trained net keeps what it computes and lets the new units learn apart."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgnet.engine.sampling import sample_positions
from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.nn.encode import encode, race_mask
from bgnet.nn.model import SplitValueNet, ValueNet
from bgnet.nn.widen import widen, widen_split

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "widen_checkpoint.py"


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


def test_widened_split_net_and_the_script(tmp_path):
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
    subprocess.run([sys.executable, str(SCRIPT), str(src), str(out),
                    "--contact", "24", "--noise", "0"], check=True, capture_output=True)
    loaded, data = load_net(out)
    assert loaded.contact.hidden == [24] and data["games"] == 7 and data["optimizer_state"] is None
    assert np.allclose(loaded(x, race).detach(), net(x, race).detach(), atol=1e-6)


def test_widen_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="fewer"):
        widen(ValueNet("tesauro", 16), 8)
    with pytest.raises(ValueError, match="one hidden layer"):
        widen(ValueNet("tesauro", [8, 8]), 16)
