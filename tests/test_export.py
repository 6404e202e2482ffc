"""Exported bots: ONNX export, torch-free play, and the Position ID API of every bot."""
from __future__ import annotations

import datetime
import json
import subprocess
import sys
import textwrap
import time
from dataclasses import asdict

import numpy as np
import pytest
import torch

import bgnet
from bgnet.bots import load_bot
from bgnet.bots.base import Evaluation
from bgnet.bots.load import load_net_bot
from bgnet.bots.net import NetBot
from bgnet.bots.onnx_eval import BotFileError, OnnxEvaluator, read_metadata
from bgnet.bots.torch_eval import NetEvaluator
from bgnet.cube import CubeEfficiency, decide
from bgnet.engine.api import legal_moves
from bgnet.engine.board import start_position
from bgnet.engine.movegen import generate, generate_batch
from bgnet.engine.position_id import board_from_position_id, position_id
from bgnet.engine.sampling import sample_positions
from bgnet.engine.state import MatchContext
from bgnet.export.onnx_export import ExportError, build_model, export_onnx, set_metadata
from bgnet.formats.match_id import match_id
from bgnet.nn.checkpoint import CheckpointError, save_checkpoint
from bgnet.nn.encode import race_mask
from bgnet.nn.fast import FastForward
from bgnet.nn.model import OUTPUTS, SplitValueNet, ValueNet, net_layout

OPENING = position_id(start_position())
MONEY = match_id(MatchContext())
SEVEN_POINT = match_id(MatchContext(match_length=7, score=(2, 4)))


def _random_net(net, seed: int):
    """A net with livelier weights than the default init, so the outputs spread over [0, 1]."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return net.eval()


NETS = {
    "plain": lambda: _random_net(ValueNet("tesauro", [40, 20], "silu"), 1),
    "split": lambda: _random_net(SplitValueNet("extended", 24, race_hidden=12, race_activation="tanh"), 2),
    "contact": lambda: _random_net(SplitValueNet("contact", [24, 16], ["sigmoid", "relu"], race_hidden=12,
                                                 race_activation="sigmoid"), 3),
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{kind: (torch net, checkpoint path, onnx path)} for a plain and a split net."""
    root = tmp_path_factory.mktemp("export")
    out = {}
    for kind, make in NETS.items():
        net = make()
        ckpt = save_checkpoint(root / f"{kind}.pt", {
            "net_config": net.config(), "net_state": net.state_dict(), "games": 1234,
            "config": {"seed": 5, "train": {"games": 1234, "lam": 0.7}},
            "metrics": {"pubeval": {"ppg": 0.25, "games": 400}}})
        out[kind] = (net, ckpt, export_onnx(ckpt, root / f"{kind}.onnx"))
    return out


@pytest.fixture(scope="module")
def sample():
    """10,000 self-play positions and 10,000 afterstates spread over their moves."""
    boards, dice = sample_positions(10_000, seed=11)
    after = generate_batch(boards, dice)[0]
    return boards, dice, after[:: max(1, len(after) // 10_000)][:10_000]


@pytest.fixture(scope="module")
def bot(exported):
    return bgnet.load_bot(exported["plain"][2])


# -- export ------------------------------------------------------------------------------------

@pytest.mark.parametrize("compiled", [False, True], ids=["onnxruntime", "compiled"])
@pytest.mark.parametrize("kind", list(NETS))
def test_onnx_agrees_with_torch_on_10000_positions(exported, sample, kind, compiled):
    net, _, path = exported[kind]
    boards, _, after = sample
    assert len(boards) == len(after) == 10_000
    torch_eval, onnx_eval = NetEvaluator(net), OnnxEvaluator(path, compiled=compiled)
    # The compiled pass covers sigmoid/tanh/relu nets (the split ones), not silu (the plain one).
    assert (onnx_eval.fast is not None) == (compiled and kind != "plain")
    p_torch, p_onnx = torch_eval.positions(boards), onnx_eval.positions(boards)
    a_torch, a_onnx = torch_eval.afterstates(after), onnx_eval.afterstates(after)
    assert p_onnx.shape == (10_000, 5) and p_onnx.dtype == np.float32
    assert np.abs(p_torch - p_onnx).max() < 1e-5
    assert np.abs(a_torch - a_onnx).max() < 1e-5
    # The sample is not degenerate: the outputs vary, and a split net meets both kinds of position.
    assert p_onnx[:, 0].std() > 0.01
    if kind != "plain":
        race = race_mask(boards)
        assert 0 < race.sum() < len(race)
        # Both nets really run: the race rows differ from what the contact net alone would say.
        contact_only = NetEvaluator(net.contact).positions(boards[race])
        assert np.abs(contact_only - p_onnx[race]).max() > 1e-3


def _with_metadata(path, out, key, change):
    """A copy of the exported bot ``path`` at ``out`` with metadata ``key`` changed by ``change``."""
    import onnx

    model = onnx.load(str(path))
    for prop in model.metadata_props:
        if prop.key == key:
            prop.value = json.dumps(change(json.loads(prop.value)))
    onnx.save(model, str(out))
    return out


def test_compiled_bot_falls_back_to_onnxruntime_when_the_layout_does_not_fit(exported, tmp_path):
    _, _, path = exported["split"]

    def widen_contact(layout):  # a declared shape the file's weights do not have
        layout["subnets"][0]["layers"][0]["shape"][0] += 1
        layout["subnets"][0]["layers"][1]["shape"][1] += 1
        return layout

    bad = _with_metadata(path, tmp_path / "bad.onnx", "layout", widen_contact)
    ev = OnnxEvaluator(bad)
    assert ev.fast is None
    boards = sample_positions(50, seed=3)[0]
    assert np.abs(ev.positions(boards) - OnnxEvaluator(path).positions(boards)).max() < 1e-5


def test_weights_are_found_by_their_declared_names(exported):
    import onnx

    net, _, path = exported["split"]
    layout = read_metadata(path)["layout"]
    assert layout == net_layout(net)
    names = {w.name for w in onnx.load(str(path)).graph.initializer}
    assert set(net.state_dict()) <= names  # the torch names, not generated ones
    ev = OnnxEvaluator(path)
    assert ev.fast.layout == layout
    # The compiled pass over the file's weights is the compiled pass over the torch net's.
    boards = sample_positions(500, seed=4)[0]
    assert np.array_equal(ev.fast.positions(boards), FastForward(net).positions(boards))


def _as_format_1(path, out):
    """The exported bot ``path`` rewritten as bgnet 0.1 wrote bots: format 1, no layout, weights
    named ``{net}_hidden{i}_{w|b}_{n}`` and ``{net}_logits_{w|b}_{n}``."""
    import onnx

    model = onnx.load(str(path))
    split = any(p.key == "net_config" and "SplitValueNet" in p.value for p in model.metadata_props)
    renamed = {}
    for n, init in enumerate(model.graph.initializer):
        parts = init.name.split(".")
        if parts[-1] not in ("weight", "bias"):
            continue
        net = parts[0] if split else "net"
        layer = f"hidden{parts[-2]}" if parts[-3:-2] == ["body"] else "logits"
        renamed[init.name] = f"{net}_{layer}_{parts[-1][0]}_{n + 100}"
    for init in model.graph.initializer:
        init.name = renamed.get(init.name, init.name)
    for node in model.graph.node:
        node.input[:] = [renamed.get(i, i) for i in node.input]
    props = {p.key: p.value for p in model.metadata_props if p.key not in ("layout", "graph_sha256")}
    props["format_version"] = "1"
    del model.metadata_props[:]
    onnx.helper.set_model_props(model, props)
    onnx.save(model, str(out))
    return out


@pytest.mark.parametrize("kind", ["split", "plain"])
def test_format_1_bots_are_read_by_their_naming(exported, tmp_path, kind):
    """Bots exported by bgnet 0.1 load, and the compiled pass finds their weights."""
    import onnx

    _, _, path = exported[kind]
    old = _as_format_1(path, tmp_path / "old.onnx")
    names = [w.name for w in onnx.load(str(old)).graph.initializer]
    assert not any("." in n for n in names) and any("_hidden0_w_" in n for n in names)
    boards = sample_positions(2000, seed=6)[0]
    new_ev, old_ev = OnnxEvaluator(path), OnnxEvaluator(old)
    if kind == "split":  # sigmoid and tanh: the compiled pass covers it
        assert old_ev.fast is not None and old_ev.fast.layout == new_ev.fast.layout
    else:  # silu: onnxruntime runs it, under either format
        assert old_ev.fast is None and new_ev.fast is None
    assert np.array_equal(old_ev.positions(boards), new_ev.positions(boards))
    assert np.array_equal(OnnxEvaluator(old, compiled=False).positions(boards),
                          OnnxEvaluator(path, compiled=False).positions(boards))


def test_the_shipped_bot_runs_on_the_compiled_pass():
    path = bgnet.bots.default_bot_path()
    if path is None:
        pytest.skip("no shipped bot in this installation")
    fast, runtime = OnnxEvaluator(path), OnnxEvaluator(path, compiled=False)
    assert fast.fast is not None
    boards = sample_positions(2000, seed=9)[0]
    assert np.abs(fast.positions(boards) - runtime.positions(boards)).max() < 1e-5


def test_unusable_bot_files_are_refused_with_their_name(exported, tmp_path):
    import onnx

    from bgnet.errors import BadInputFile

    _, _, path = exported["split"]
    payload = path.read_bytes()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(payload[: len(payload) // 2])
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07garbage" * 50)
    foreign = tmp_path / "foreign.onnx"
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
    onnx.save(onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["x"], ["y"])], "g", [x],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])), str(foreign))
    newer = _with_metadata(path, tmp_path / "newer.onnx", "format_version", lambda v: 99)
    folder = tmp_path / "folder.onnx"
    folder.mkdir()
    for bad, message in ((truncated, "truncated"), (garbage, "truncated or not an ONNX"),
                         (foreign, "not a bgnet bot"), (newer, "newer bgnet"),
                         (folder, "directory")):
        with pytest.raises(BotFileError, match=message) as err:
            bgnet.load_bot(bad)
        assert isinstance(err.value, BadInputFile) and bad.name in str(err.value)
    with pytest.raises(FileNotFoundError) as err:
        load_bot(str(tmp_path / "none.onnx"))
    assert isinstance(err.value, BadInputFile) and err.value.exit_code == 3


def _flip_weight_bytes(path, out, name, count=50, seed=0):
    """A copy of the exported bot ``path`` at ``out`` with ``count`` bytes changed inside the
    stored data of the weight ``name``; everything else (protobuf framing, metadata) as it was."""
    import onnx

    weight = next(w for w in onnx.load(str(path)).graph.initializer if w.name == name)
    raw = bytearray(path.read_bytes())
    start = bytes(raw).find(weight.raw_data)
    assert start > 0 and bytes(raw).count(weight.raw_data) == 1
    for at in np.random.default_rng(seed).choice(len(weight.raw_data), size=count, replace=False):
        raw[start + int(at)] ^= 0xFF
    out.write_bytes(bytes(raw))
    return out


def _with_nan_first_layer(path, out, digest: bool):
    """A copy of ``path`` whose first layer's weights are all NaN, with a digest of the new graph
    stored (``digest``) or none (as bots exported before digests)."""
    import onnx

    model = onnx.load(str(path))
    first = next(w for w in model.graph.initializer if w.name.endswith("body.0.weight"))
    first.CopyFrom(onnx.numpy_helper.from_array(
        np.full(onnx.numpy_helper.to_array(first).shape, np.nan, np.float32), first.name))
    kept = [p for p in model.metadata_props if p.key != "graph_sha256"]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    if digest:
        import hashlib

        onnx.helper.set_model_props(model, dict({p.key: p.value for p in kept}, graph_sha256=json.dumps(
            hashlib.sha256(model.graph.SerializeToString()).hexdigest())))
    onnx.save(model, str(out))
    return out


def test_an_exported_bot_carries_the_digest_of_its_graph(exported):
    import hashlib

    import onnx

    _, _, path = exported["split"]
    stored = read_metadata(path)["graph_sha256"]
    assert stored == hashlib.sha256(onnx.load(str(path)).graph.SerializeToString()).hexdigest()


@pytest.mark.parametrize("weight", ["contact.body.0.weight", "race.head.bias"])
def test_flipped_bytes_in_an_exported_bots_weights_are_refused(exported, tmp_path, weight):
    import onnxruntime as ort

    _, _, path = exported["split"]
    bad = _flip_weight_bytes(path, tmp_path / "bad.onnx", weight, count=5 if "bias" in weight else 50)
    ort.InferenceSession(str(bad), providers=["CPUExecutionProvider"])  # onnxruntime would run it
    for load in (lambda: OnnxEvaluator(bad), lambda: bgnet.load_bot(f"{bad}@1")):
        with pytest.raises(BotFileError, match="damaged: its weights and graph do not match") as err:
            load()
        assert str(bad) in str(err.value)
    with pytest.raises(BotFileError, match="damaged"):  # never stamped over the damage
        set_metadata(bad, {}, tmp_path / "stamped.onnx")
    assert not (tmp_path / "stamped.onnx").exists()


@pytest.mark.parametrize("digest", [True, False], ids=["with-digest", "without-digest"])
def test_an_exported_bot_with_nan_weights_is_refused(exported, tmp_path, digest):
    _, _, path = exported["split"]
    bad = _with_nan_first_layer(path, tmp_path / "nan.onnx", digest)
    assert ("graph_sha256" in read_metadata(bad)) == digest
    with pytest.raises(BotFileError, match="contact.body.0.weight hold 5304 of 5304 values that are NaN"):
        OnnxEvaluator(bad)


def test_a_bot_exported_before_digests_loads_and_can_be_stamped(exported, tmp_path):
    import onnx

    _, _, path = exported["split"]
    model = onnx.load(str(path))
    kept = [p for p in model.metadata_props if p.key != "graph_sha256"]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    old = tmp_path / "old.onnx"
    onnx.save(model, str(old))
    boards = sample_positions(64, seed=5)[0]
    expected = OnnxEvaluator(path).positions(boards)
    assert np.array_equal(OnnxEvaluator(old).positions(boards), expected)
    stamped = set_metadata(old, {}, tmp_path / "stamped.onnx")
    assert read_metadata(stamped)["graph_sha256"] == read_metadata(path)["graph_sha256"]
    assert np.array_equal(OnnxEvaluator(stamped).positions(boards), expected)


@pytest.mark.parametrize("damage", ["flipped", "nan"])
def test_eval_of_a_damaged_exported_bot_exits_3_naming_it(exported, tmp_path, capsys, damage):
    from bgnet.cli import main

    pytest.importorskip("gnubg_nn")
    _, _, path = exported["split"]
    bad = (_flip_weight_bytes(path, tmp_path / "bad.onnx", "contact.body.0.weight") if damage == "flipped"
           else _with_nan_first_layer(path, tmp_path / "bad.onnx", digest=False))
    code = main(["eval", str(bad), "pubeval", "--games", "10", "--quiet"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "Traceback" not in err and str(bad) in err and "damaged" in err


def test_the_shipped_bots_carry_a_digest_and_pass_the_checks():
    """The shipped bots were stamped with set_metadata(path, {}): one metadata entry appended,
    the graph's bytes as they were."""
    from pathlib import Path

    from bgnet.bots.onnx_eval import check_weights, graph_digest
    from bgnet.resources import SHIPPED_BOTS

    for file in SHIPPED_BOTS.values():
        path = Path(__file__).resolve().parents[1] / "checkpoints" / file  # the source tree's
        if path.is_file():
            meta = read_metadata(path)
            assert meta["graph_sha256"] == graph_digest(path.read_bytes())
            check_weights(path, meta)
            assert OnnxEvaluator(path).fast is not None


def test_metadata_round_trip(exported):
    net, ckpt, path = exported["split"]
    meta = read_metadata(path)
    assert meta["format"] == "bgnet-bot"
    assert meta["bgnet_version"] == bgnet.__version__
    assert meta["encoding"] == "extended"
    assert meta["outputs"] == list(OUTPUTS)
    assert set(meta["inputs"]) == {"x", "is_race"}
    assert meta["net_config"] == net.config()
    assert meta["games"] == 1234 and meta["training"]["train"]["lam"] == 0.7
    assert meta["metrics"] == {"pubeval": {"ppg": 0.25, "games": 400}}
    assert meta["cube"] == {"met": "kazaross-xg2", "efficiency": asdict(CubeEfficiency())}
    assert meta["source"] == ckpt.name and meta["name"] == "split"
    exported_at = datetime.datetime.fromisoformat(meta["exported"])
    assert abs((datetime.datetime.now(datetime.timezone.utc) - exported_at).total_seconds()) < 3600
    assert load_net_bot(path).meta["metrics"] == meta["metrics"]


def test_extra_metadata_overrides_and_export_replaces_atomically(exported, tmp_path):
    _, ckpt, _ = exported["plain"]
    out = tmp_path / "bot.onnx"
    export_onnx(ckpt, out, {"name": "first"})
    export_onnx(ckpt, out, {"name": "second", "note": {"elo": [1, 2]}})
    meta = read_metadata(out)
    assert meta["name"] == "second" and meta["note"] == {"elo": [1, 2]}
    assert load_net_bot(out).name == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["bot.onnx"]  # no temporary file left behind
    with pytest.raises(ExportError, match="JSON"):
        export_onnx(ckpt, tmp_path / "x.onnx", {"bad": object()})


def test_unknown_layer_cannot_be_exported():
    net = ValueNet("tesauro", 8)
    net.body[1] = torch.nn.Softplus()
    with pytest.raises(ExportError, match="Softplus"):
        build_model(net)


def test_corrupt_or_missing_files_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="bad.pt"):
        export_onnx(bad, tmp_path / "out.onnx")
    with pytest.raises(CheckpointError, match="corrupt|not a readable"):
        bgnet.load_bot(bad)
    assert not (tmp_path / "out.onnx").exists()
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00garbage")
    with pytest.raises(BotFileError, match="junk.onnx"):
        bgnet.load_bot(junk)
    with pytest.raises(FileNotFoundError, match="missing.onnx"):
        bgnet.load_bot(tmp_path / "missing.onnx")


def test_cli_export(exported, tmp_path, capsys):
    from bgnet.cli import main

    _, ckpt, _ = exported["plain"]
    out = tmp_path / "cli.onnx"
    assert main(["export", str(ckpt), "--out", str(out), "--check", "300", "--name", "clibot"]) == 0
    text = capsys.readouterr().out
    assert "wrote" in text and "agreement" in text
    assert read_metadata(out)["name"] == "clibot"
    assert main(["export", str(tmp_path / "nope.pt"), "--out", str(out)]) == 3
    assert "nope.pt does not exist" in capsys.readouterr().err


def test_cli_export_names_the_bot_after_the_file_or_the_run(exported, tmp_path, capsys):
    from bgnet.cli import main

    _, ckpt, _ = exported["plain"]
    run = tmp_path / "quick" / "checkpoints"
    run.mkdir(parents=True)
    latest = run / "latest.pt"
    latest.write_bytes(ckpt.read_bytes())
    assert main(["export", str(latest), "--check", "0"]) == 0
    assert read_metadata(run / "latest.onnx")["name"] == "quick"  # the run, not "latest"
    assert main(["export", str(latest), "--out", str(tmp_path / "strong.onnx"), "--check", "0"]) == 0
    assert read_metadata(tmp_path / "strong.onnx")["name"] == "strong"
    capsys.readouterr()


def test_a_run_folder_stands_for_its_latest_checkpoint(exported, tmp_path, capsys):
    from bgnet.cli import main

    _, ckpt, _ = exported["plain"]
    (tmp_path / "quick" / "checkpoints").mkdir(parents=True)
    (tmp_path / "quick" / "checkpoints" / "latest.pt").write_bytes(ckpt.read_bytes())
    run = tmp_path / "quick"
    assert main(["export", str(run), "--check", "50"]) == 0
    assert read_metadata(tmp_path / "quick.onnx")["name"] == "quick"
    bot = load_bot(f"{run}@1")
    assert bot.name == "quick@1" and bot.meta["games"] == 1234
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    assert main(["export", str(tmp_path / "empty"), "--check", "0"]) == 3
    err = capsys.readouterr().err
    assert "is a folder with no checkpoint in it" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content, words", [(b"train:\n  games: 3000\n", "a text file"),
                                            (b"cube: 1\n", "a text file"),
                                            (b"\x00\x01\x02\x03" * 40, "neither a zip")])
def test_cli_export_of_a_file_that_is_no_checkpoint_says_so(tmp_path, capsys, content, words):
    from bgnet.cli import main

    path = tmp_path / "notes.pt"
    path.write_bytes(content)
    assert main(["export", str(path), "--check", "0"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgnet export: error: ") and len(err.splitlines()) == 1
    assert "is not a checkpoint" in err and words in err and "Python object" not in err


def test_cli_export_of_a_bot_says_it_is_one_already(exported, capsys):
    from bgnet.cli import main

    assert main(["export", "bgnet-default"]) == 2
    assert "bgnet-default is a bot shipped with bgnet, exported already" in capsys.readouterr().err
    onnx = str(exported["plain"][2])
    assert main(["export", onnx]) == 3
    err = capsys.readouterr().err.strip()
    assert err == (f"bgnet export: error: {onnx} is an exported bot (ONNX) already: it plays as it is "
                   f"(bgnet play --bot {onnx}); export takes a training checkpoint (.pt) or a training "
                   "run's folder")


def test_cli_checkpoint_turns_an_exported_bot_back_into_the_checkpoint_it_came_from(exported, tmp_path,
                                                                                   capsys):
    from bgnet.cli import main
    from bgnet.nn.checkpoint import load_checkpoint, load_net

    for kind in ("split", "contact"):  # nets the compiled pass runs, whose weights it reads back
        net, _, onnx = exported[kind]
        out = tmp_path / f"{kind}.pt"
        assert main(["checkpoint", str(onnx), str(out)]) == 0
        assert f"wrote {out}" in capsys.readouterr().out
        back, data = load_net(out)
        assert back.config() == net.config()
        state = back.state_dict()
        assert all(torch.equal(state[k], v) for k, v in net.state_dict().items())
        assert data["games"] == 1234 and data["metrics"]["pubeval"]["ppg"] == 0.25
        assert not load_checkpoint(out).get("optimizer_state")  # a resumed run starts a fresh one
    out = tmp_path / "zero.pt"
    assert main(["checkpoint", str(exported["split"][2]), str(out), "--games", "0"]) == 0
    assert load_checkpoint(out)["games"] == 0
    capsys.readouterr()
    assert main(["checkpoint", str(exported["split"][1]), str(tmp_path / "again.pt")]) == 2
    assert "is a training checkpoint (or a run's folder) already" in capsys.readouterr().err
    assert main(["checkpoint", str(tmp_path / "missing.onnx"), str(tmp_path / "x.pt")]) == 3
    assert "missing.onnx does not exist" in capsys.readouterr().err
    assert not (tmp_path / "again.pt").exists() and not (tmp_path / "x.pt").exists()


def test_cli_export_refuses_a_directory_or_a_missing_folder(exported, tmp_path, capsys):
    from bgnet.cli import main

    _, ckpt, _ = exported["plain"]
    assert main(["export", str(ckpt), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgnet export: error: ") and "is a directory" in err
    assert len(err.splitlines()) == 1
    missing = tmp_path / "no" / "such" / "bot.onnx"
    assert main(["export", str(ckpt), "--out", str(missing), "--check", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "does not exist" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "no").exists()  # the folder was not created
    assert main(["export", str(ckpt), "--out", str(tmp_path / "x.onnx"), "--check", "-1"]) == 2
    assert "--check" in capsys.readouterr().err


def test_exported_bot_plays_without_torch(exported):
    # A meta-path finder refuses torch: loading and playing must never ask for it.
    script = textwrap.dedent("""
        import json, sys
        class NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError("torch was imported: " + name)
        sys.meta_path.insert(0, NoTorch())
        import bgnet
        bot = bgnet.load_bot(sys.argv[1], ply=1)
        move = bot.best_move(sys.argv[2], 3, 1)
        ev = bot.evaluate_position(sys.argv[2]).as_dict()
        cube = bot.cube_decision(sys.argv[2], sys.argv[3]).action
        print(json.dumps({"move": move, "equity": ev["equity"], "cube": cube,
                          "torch": "torch" in sys.modules, "compiled": bot.evaluator.fast is not None}))
    """)
    _, _, path = exported["split"]
    run = subprocess.run([sys.executable, "-c", script, str(path), OPENING, MONEY],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["torch"] is False
    assert got["compiled"] is True  # the compiled pass needs no torch either
    assert tuple(got["move"]) in legal_moves(OPENING, 3, 1)
    here = bgnet.load_bot(path, ply=1)
    assert got["equity"] == pytest.approx(here.evaluate_position(OPENING).equity, abs=1e-6)
    assert got["cube"] == here.cube_decision(OPENING, MONEY).action


# -- the Position ID API -------------------------------------------------------------------------

def test_best_move_is_the_best_legal_move(bot, sample):
    boards, dice, _ = sample
    for board, (d1, d2) in zip(boards[:300:10], dice[:300:10]):
        pid = position_id(board)
        moves = legal_moves(pid, int(d1), int(d2))
        if not moves:
            continue
        text, nxt = bot.best_move(pid, int(d1), int(d2))
        assert (text, nxt) in moves
        # 0-ply: no legal move has a higher equity for the mover than the one played.
        after = np.stack([board_from_position_id(m[1])[::-1] for m in moves])  # the mover's view
        p = bot.evaluator.afterstates(after)
        eq = 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]
        assert eq[[m[1] for m in moves].index(nxt)] == pytest.approx(eq.max(), abs=1e-6)


def test_no_legal_move_passes_the_turn(bot):
    board = np.zeros((2, 25), np.int8)
    board[0, :6] = 2          # the opponent's home board is closed...
    board[0, 6] = 3
    board[1, 24] = 1          # ...and the side on roll has a checker on the bar
    board[1, 5] = 14
    pid, passed = position_id(board), position_id(board[::-1])  # the opponent on roll next
    assert legal_moves(pid, 6, 5) == [("", passed)]
    assert bot.best_move(pid, 6, 5) == ("", passed)
    assert bot.best_move(pid, 6, 5, ply=2) == ("", passed)


def test_evaluate_position_id(bot, exported):
    e = bot.evaluate_position(OPENING)
    assert isinstance(e, Evaluation) and e.ply == 0 and e.position_id == OPENING
    arr = bot.evaluate(start_position()[None])
    assert arr.shape == (1, 5)
    assert np.allclose(e.probabilities, arr[0], atol=1e-7)
    p = e.probabilities
    assert e.equity == pytest.approx(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])
    d = e.as_dict()
    assert list(d)[1:6] == list(OUTPUTS) and d["equity"] == e.equity
    # The checkpoint the export came from gives the same evaluation.
    torch_bot = bgnet.load_bot(exported["plain"][1])
    assert np.allclose(torch_bot.evaluate_position(OPENING).probabilities, p, atol=1e-5)
    # evaluate takes boards only, and says where a Position ID goes.
    with pytest.raises(TypeError, match=r"evaluate_position\('"):
        bot.evaluate(OPENING)


def test_one_ply_evaluation_averages_the_best_replies(bot):
    """1-ply = the 21 rolls weighted 1/36 or 2/36, each played by the 0-ply choice."""
    board = board_from_position_id("4HPwATDgc/ABMA")
    expected = np.zeros(5)
    for a in range(1, 7):
        for b in range(a, 7):
            after, _ = generate(board, a, b)
            p = bot.evaluator.afterstates(after)
            eq = 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]
            expected += (1 if a == b else 2) / 36 * p[int(np.argmax(eq))]
    got = bot.evaluate_position("4HPwATDgc/ABMA", ply=1)
    assert got.ply == 1
    assert np.allclose(got.probabilities, expected, atol=1e-5)


def test_deeper_plies_play_legal_moves_and_two_ply_is_interactive(bot):
    bot.best_move(OPENING, 4, 2, ply=2)  # compile and warm up
    legal = legal_moves(OPENING, 3, 1)
    assert bot.best_move(OPENING, 3, 1, ply=1) in legal
    t = time.perf_counter()
    move = bot.best_move(OPENING, 3, 1, ply=2)
    assert time.perf_counter() - t < 2.0
    assert move in legal
    deep = bgnet.load_bot(bot.meta["path"], ply=2)
    assert deep.ply == 2 and deep.best_move(OPENING, 3, 1) == move
    with pytest.raises(ValueError, match="0, 1 or 2"):
        bot.best_move(OPENING, 3, 1, ply=3)
    with pytest.raises(ValueError, match="0, 1 or 2"):
        bgnet.load_bot(bot.meta["path"], ply=4)
    with pytest.raises(ValueError, match="die"):
        bot.best_move(OPENING, 0, 3)


def test_cube_decision_uses_the_bots_probabilities_and_settings(bot, exported, sample, tmp_path):
    boards = sample[0]
    race = position_id(boards[np.flatnonzero(race_mask(boards))[0]])
    for pid, mid in ((OPENING, MONEY), (OPENING, SEVEN_POINT), (race, MONEY)):
        got = bot.cube_decision(pid, mid, ply=0)
        assert got == decide(bot.evaluate_position(pid, ply=0).probabilities, mid, pid)
        # At 1-ply the cube is searched one roll ahead (bgnet.cube.lookahead); its take point
        # and cubeless equity are those of the 1-ply probabilities.
        got = bot.cube_decision(pid, mid, ply=1)
        want = decide(bot.evaluate_position(pid, ply=1).probabilities, mid, pid)
        assert (got.take_point, got.cubeless_equity) == (want.take_point, want.cubeless_equity)
    # The exported cube efficiency is the one the bot uses.
    out = tmp_path / "eff.onnx"
    eff = asdict(CubeEfficiency(contact=0.5))
    export_onnx(exported["plain"][1], out, {"cube": {"met": "kazaross-xg2", "efficiency": eff}})
    assert bgnet.load_bot(out).cube_decision(OPENING, MONEY).efficiency == 0.5
    assert bot.cube_decision(OPENING, MONEY).efficiency == CubeEfficiency().contact


def test_other_bots_answer_the_position_id_api():
    from bgnet.bots.simple import RandomBot

    rnd = RandomBot(3)
    assert rnd.best_move(OPENING, 6, 4) in legal_moves(OPENING, 6, 4)
    with pytest.raises(ValueError, match="fixed depth"):
        rnd.best_move(OPENING, 6, 4, ply=1)
    with pytest.raises(NotImplementedError):
        rnd.evaluate_position(OPENING)


@pytest.mark.gnubg
def test_gnubg_bot_evaluates_position_ids():
    gnubg_nn = pytest.importorskip("gnubg_nn")
    from bgnet.bots.gnubg_bots import GnubgBot

    g = GnubgBot(0)
    e = g.evaluate_position(OPENING)
    assert np.allclose(e.probabilities, gnubg_nn.probabilities(start_position().tolist(), 0), atol=1e-6)
    assert g.best_move(OPENING, 3, 1) == ("8/5 6/5", "sGfwATDgc/ABMA")


def test_load_bot_spec_and_default_bot(exported, monkeypatch):
    path = exported["plain"][2]
    b = load_bot(f"{path}@1")
    assert isinstance(b, NetBot) and b.ply == 1
    found = bgnet.bots.default_bot_path()
    assert found is None or (found.name == "bgnet-default.onnx" and found.is_file())
    monkeypatch.setattr(bgnet.bots.load, "default_bot_path", lambda: path)
    assert bgnet.load_bot().meta["path"] == str(path)
    monkeypatch.setattr(bgnet.bots.load, "default_bot_path", lambda: None)
    with pytest.raises(FileNotFoundError, match="no default bot"):
        bgnet.load_bot()


def test_set_metadata_replaces_entries_and_keeps_the_net(exported, tmp_path):
    src = exported["plain"][2]
    eff = asdict(CubeEfficiency(contact=0.74, race_min=0.65))
    out = set_metadata(src, {"cube": {"met": "kazaross-xg2", "efficiency": eff}}, tmp_path / "b.onnx")
    before, after = read_metadata(src), read_metadata(out)
    assert after["cube"]["efficiency"] == eff
    assert {k: v for k, v in after.items() if k != "cube"} == \
        {k: v for k, v in before.items() if k != "cube"}
    met, efficiency = bgnet.load_bot(out).cube_settings()
    assert met == "kazaross-xg2" and efficiency == CubeEfficiency(contact=0.74, race_min=0.65)
    boards = sample_positions(64, seed=3)[0]
    np.testing.assert_array_equal(bgnet.load_bot(out).evaluate(boards), bgnet.load_bot(src).evaluate(boards))
    for bad, words in (({"met": "no-such-table"}, "no-such-table"),
                       ({"efficiency": {"contact": 1.5}}, "contact"),
                       ({"efficiency": {"contactt": 0.7}}, "unknown field")):
        with pytest.raises(ValueError, match=words):
            set_metadata(out, {"cube": bad})
    assert read_metadata(out)["cube"]["efficiency"] == eff  # nothing written
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(BotFileError):
        set_metadata(junk, {"cube": {}})
    assert junk.read_bytes() == b"not a model"
