"""Merging nets trained apart: the merged net's logits are the weighted mean of its members', for
one net and for split nets, through a checkpoint and an exported bot; clear refusals (nets of
different depth or kind, bad shares, an input overwritten)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from bgnet.cli import main
from bgnet.errors import BadArgument
from bgnet.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from bgnet.nn.merge import merge
from bgnet.nn.model import SplitValueNet, ValueNet


def checkpoint(path, net, games):
    save_checkpoint(path, {"net_config": net.config(), "net_state": net.state_dict(),
                           "games": games, "metrics": {"vs_pubeval": 0.5},
                           "optimizer_state": {"state": {}, "param_groups": []},
                           "history": [{"games": games, "vs_pubeval": 0.5}],
                           "play": {"buffer": {"boards": torch.zeros(3, 2, 25, dtype=torch.int8)}},
                           "compute": {"cpu_seconds": games / 10, "wall_seconds": games / 20}})


def split_net(contact, race):
    return SplitValueNet("contact", contact, ["sigmoid", "relu", "relu"], race_hidden=race,
                         race_activation="sigmoid")


def randomized(net):
    """A net with every weight drawn afresh (a fresh net's head starts at one prior for all)."""
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.3)
    return net


def test_merged_logits_are_the_weighted_mean_of_the_members():
    torch.manual_seed(0)
    a = randomized(ValueNet("tesauro", [10, 7], ["sigmoid", "relu"]))
    b = randomized(ValueNet("tesauro", [4, 9], ["sigmoid", "relu"]))
    c = randomized(ValueNet("tesauro", [3, 3], ["sigmoid", "relu"]))
    m = merge([a, b, c], [2, 1, 1])
    assert m.hidden == [17, 19] and m.activations == ["sigmoid", "relu"]
    x = torch.rand(50, a.num_inputs)
    expected = 0.5 * a.forward_logits(x) + 0.25 * b.forward_logits(x) + 0.25 * c.forward_logits(x)
    assert torch.allclose(m.forward_logits(x), expected, atol=1e-5)
    linear = [randomized(ValueNet("tesauro", [])) for _ in range(2)]  # no hidden layer: a mean
    assert torch.allclose(merge(linear).forward_logits(x),
                          (linear[0].forward_logits(x) + linear[1].forward_logits(x)) / 2, atol=1e-5)


def test_split_nets_merge_contact_and_race_apart():
    torch.manual_seed(1)
    a, b = randomized(split_net([12, 6, 6], 5)), randomized(split_net([8, 8, 4], 3))
    m = merge([a, b], [0.65, 0.35])
    assert m.contact.hidden == [20, 14, 10] and m.race.hidden == [8]
    x = torch.rand(40, a.num_inputs)
    race = torch.arange(40) % 3 == 0
    expected = 0.65 * a.forward_logits(x, race) + 0.35 * b.forward_logits(x, race)
    assert torch.allclose(m.forward_logits(x, race), expected, atol=1e-5)


def test_the_compiled_pass_skips_the_zero_blocks_and_equals_torch():
    """An exported merge runs on the frozen compiled pass, whose hidden layers read each member's
    own units only (the zero blocks between members are skipped): the same probabilities as the
    torch net's, on positions, on afterstates told their parents, and one position at a time."""
    from bgnet.engine.movegen import generate_batch
    from bgnet.engine.sampling import sample_positions
    from bgnet.nn.encode import encode, encode_afterstates, race_mask
    from bgnet.nn.fast import FastForward
    from bgnet.nn.model import net_layout, net_weights

    torch.manual_seed(2)
    m = merge([randomized(split_net([12, 6, 6], 5)), randomized(split_net([8, 8, 4], 3))],
              [0.65, 0.35])
    fast = FastForward.from_weights(net_layout(m), net_weights(m), frozen=True)
    spans = fast.prepared(0)[3]
    assert spans[0].tolist() == [[0, 227]] * 10  # the first layer reads every input
    assert spans[1].tolist() == [[0, 12]] * 3 + [[12, 20]] * 4  # 6 units of one, 8 of the other
    assert spans[2].tolist() == [[0, 6]] * 3 + [[6, 14]] * 2
    assert fast.prepared(1)[3][1].tolist() == [[0, 8]] * 3  # the race nets' heads read both

    pos, dice = sample_positions(300, seed=4, every=2)
    after, _, off = generate_batch(pos, dice)
    parent_of = np.repeat(np.arange(len(pos)), np.diff(off))
    with torch.no_grad():
        want_pos = m(torch.from_numpy(encode(pos, "contact")),
                     torch.from_numpy(race_mask(pos))).numpy()
        want_after = m(torch.from_numpy(encode_afterstates(after, "contact")),
                       torch.from_numpy(race_mask(after))).numpy()
    assert np.allclose(fast.positions(pos), want_pos, atol=2e-6)
    assert np.allclose(fast.positions(pos[:3]), want_pos[:3], atol=2e-6)
    assert np.allclose(fast.swapped_children(pos, parent_of, after), want_after, atol=2e-6)
    # A net being trained is read in full at every call: its zeros may not stay zeros.
    assert FastForward(m).prepared(0)[3][1].tolist() == [[0, 20]] * 7


def test_nets_that_cannot_be_merged_are_refused_by_name():
    deep, shallow = ValueNet("tesauro", [8, 8], "relu"), ValueNet("tesauro", [8], "relu")
    with pytest.raises(BadArgument, match=r"b\.pt has the hidden layers 8 relu and that of a\.pt"):
        merge([deep, shallow], names=["a.pt", "b.pt"])
    with pytest.raises(BadArgument, match="same depth and activations"):
        merge([ValueNet("tesauro", 8, "relu"), ValueNet("tesauro", 8, "sigmoid")])
    with pytest.raises(BadArgument, match="'extended' inputs"):
        merge([ValueNet("tesauro", 8), ValueNet("extended", 8)])
    with pytest.raises(BadArgument, match="only nets of one kind"):
        merge([split_net([4, 4, 4], 2), ValueNet("contact", [4, 4, 4])])
    with pytest.raises(BadArgument, match="at least two"):
        merge([deep])
    for shares in ([1.0], [1.0, 0.0], [1.0, float("nan")]):
        with pytest.raises(BadArgument, match="share"):
            merge([deep, deep], shares)


def test_the_verb_writes_a_checkpoint_that_exports_and_plays_as_the_mean(tmp_path, capsys):
    from bgnet.bots.onnx_eval import OnnxEvaluator
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import generate_batch

    torch.manual_seed(2)
    a, b = randomized(split_net([16, 8, 8], 6)), randomized(split_net([12, 8, 4], 4))
    checkpoint(tmp_path / "a.pt", a, 700)
    checkpoint(tmp_path / "b.pt", b, 900)
    out = tmp_path / "ab.pt"
    assert main(["merge", str(tmp_path / "a.pt"), str(tmp_path / "b.pt"), "--shares", "3,1",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "share 0.750" in printed and "contact [28 sigmoid, 16 relu, 12 relu], race [10 sigmoid]" in printed
    merged, data = load_net(out)
    assert data["games"] == 700 and data["optimizer_state"] is None and data["metrics"] == {}
    # The first member's curve and unlearned games are not the merge's; the compute is both runs'.
    assert data["history"] == [] and data["play"] == {}
    assert data["compute"] == {"cpu_seconds": 160.0, "wall_seconds": 80.0}
    assert [p["share"] for p in data["merged_from"]] == [0.75, 0.25]
    assert main(["export", str(out), "--out", str(tmp_path / "ab.onnx")]) == 0
    ev = OnnxEvaluator(tmp_path / "ab.onnx")
    assert [(p["source"], p["games"]) for p in ev.metadata["merged_from"]] == [
        (str(tmp_path / "a.pt"), 700), (str(tmp_path / "b.pt"), 900)]
    assert ev.fast is not None  # the compiled pass runs a merged net as any other
    rng = np.random.default_rng(0)
    after, _, _ = generate_batch(np.stack([start_position()] * 64), rng.integers(1, 7, size=(64, 2)))
    from bgnet.nn.encode import encode_afterstates, race_mask

    x = torch.from_numpy(encode_afterstates(after, "contact"))
    race = torch.from_numpy(race_mask(after))
    logits = 0.75 * a.forward_logits(x, race) + 0.25 * b.forward_logits(x, race)
    from bgnet.nn.probs import probs_from_logits

    expected = probs_from_logits(logits).detach().numpy()
    assert np.allclose(ev.run_net(after, True), expected, atol=1e-5)


def test_the_verb_refuses_what_it_cannot_do(tmp_path, capsys):
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    checkpoint(a, ValueNet("tesauro", [8, 8]), 1)
    checkpoint(b, ValueNet("tesauro", 6), 2)
    assert main(["merge", str(a), str(b), "--out", str(tmp_path / "o.pt")]) == 2
    assert "same depth" in capsys.readouterr().err
    assert main(["merge", str(a), "--out", str(tmp_path / "o.pt")]) == 2
    assert "two or more" in capsys.readouterr().err
    assert main(["merge", str(a), str(a), "--out", str(tmp_path / "o.pt")]) == 2
    assert "named twice" in capsys.readouterr().err
    assert main(["merge", str(a), str(b), "--out", str(a)]) == 2  # would overwrite an input
    assert "no checkpoint is lost" in capsys.readouterr().err
    assert load_checkpoint(a)["games"] == 1
    assert main(["merge", str(a), str(b), "--shares", "1,x", "--out", str(tmp_path / "o.pt")]) == 2
    assert "positive numbers" in capsys.readouterr().err
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    assert main(["merge", str(a), str(tmp_path / "bad.pt"), "--out", str(tmp_path / "o.pt")]) == 3
    assert not (tmp_path / "o.pt").exists()
