"""Averaging checkpoints of one run: the mean of each weight, the newest one's other contents,
and clear refusals (nets of two shapes, an input overwritten, a folder without checkpoints)."""
from __future__ import annotations

import pytest
import torch

from bgnet.cli import main
from bgnet.errors import BadArgument
from bgnet.nn.average import average
from bgnet.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from bgnet.nn.model import SplitValueNet, ValueNet


def checkpoint(path, net, games):
    save_checkpoint(path, {"net_config": net.config(), "net_state": net.state_dict(),
                           "games": games, "metrics": {"vs_pubeval": 0.1 * games},
                           "optimizer_state": {"state": {}, "param_groups": []}})


def test_every_weight_is_the_mean_and_split_nets_average_both_parts():
    torch.manual_seed(0)
    nets = [SplitValueNet("extended", [12, 6], ["sigmoid", "relu"], race_hidden=5,
                           race_activation="sigmoid") for _ in range(3)]
    mean = average(nets)
    for key, value in mean.state_dict().items():
        expected = sum(n.state_dict()[key] for n in nets) / 3
        assert torch.allclose(value, expected, atol=1e-7), key
    assert mean.config() == nets[0].config()
    assert not mean.training


def test_nets_of_two_shapes_are_refused_by_name():
    with pytest.raises(BadArgument, match=r"b\.pt holds a net of another shape than a\.pt"):
        average([ValueNet("tesauro", 8), ValueNet("tesauro", 9)], ["a.pt", "b.pt"])
    with pytest.raises(BadArgument, match="at least one"):
        average([])


def test_the_verb_averages_a_folders_newest_checkpoints(tmp_path, capsys):
    torch.manual_seed(1)
    run = tmp_path / "checkpoints"
    run.mkdir()
    nets = [ValueNet("tesauro", 8) for _ in range(4)]
    for k, net in enumerate(nets):
        checkpoint(run / f"games_{(k + 1) * 100:09d}.pt", net, (k + 1) * 100)
    out = tmp_path / "avg.pt"
    assert main(["average", str(run), "--last", "3", "--out", str(out)]) == 0
    assert "averaged 3 checkpoint(s), 200 to 400 games" in capsys.readouterr().out
    mean, data = load_net(out)
    expected = average(nets[1:])
    x = torch.rand(5, mean.num_inputs)
    assert torch.allclose(mean(x), expected(x), atol=1e-6)
    assert data["games"] == 400 and data["optimizer_state"] is None and data["metrics"] == {}


def test_the_verb_refuses_what_it_cannot_do(tmp_path, capsys):
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    checkpoint(a, ValueNet("tesauro", 8), 1)
    checkpoint(b, ValueNet("tesauro", 6), 2)
    assert main(["average", str(a), str(b), "--out", str(tmp_path / "o.pt")]) == 2
    assert "another shape" in capsys.readouterr().err
    assert main(["average", str(a), "--out", str(a)]) == 2  # would overwrite an input
    assert "no checkpoint is lost" in capsys.readouterr().err
    assert load_checkpoint(a)["games"] == 1
    assert main(["average", str(tmp_path / "none"), "--out", str(tmp_path / "o.pt")]) == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["average", str(empty), "--out", str(tmp_path / "o.pt")]) == 2
    assert "without numbered checkpoints" in capsys.readouterr().err
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    assert main(["average", str(a), str(tmp_path / "bad.pt"), "--out", str(tmp_path / "o.pt")]) == 3
    assert not (tmp_path / "o.pt").exists()
