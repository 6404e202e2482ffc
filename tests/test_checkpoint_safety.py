"""Loading a checkpoint never runs code from it, and never loads a damaged one.

A ``.pt`` file is a pickle, and a pickle may ask to call any Python function while it is read. Each
test below hands a crafted file whose pickle asks to create a marker file (``open(marker, "w")``)
to one of the ways bgnet loads checkpoints; the marker must never appear, and the error must name
the file. Then files whose archive is whole but whose data is not: bytes changed inside a tensor,
weights that are NaN.
"""
from __future__ import annotations

import struct
import zipfile

import numpy as np
import pytest
import torch

from bgnet.nn.checkpoint import CheckpointError, content_digest, load_checkpoint, load_net, save_checkpoint
from bgnet.nn.model import ValueNet


class _Payload:
    """Unpickling this object calls ``open(marker, "w")``, which creates the marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _hostile(folder, name="evil.pt"):
    """A file that looks like a bgnet checkpoint (format tag, a real net) with the payload inside."""
    net = ValueNet("tesauro", 4)
    path = folder / name
    marker = folder / "payload-ran"
    torch.save({"format": "bgnet-checkpoint", "version": 1, "net_config": net.config(),
                "net_state": net.state_dict(), "games": 0, "metrics": {"x": _Payload(marker)}}, path)
    return path, marker


def test_a_hostile_checkpoint_is_refused_before_its_payload_runs(tmp_path):
    path, marker = _hostile(tmp_path)
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path)
    assert not marker.exists()
    assert str(path) in str(err.value) and "nothing from it was run" in str(err.value)
    assert "builtins.open" in str(err.value) or "io.open" in str(err.value)


def test_load_net_refuses_it_too(tmp_path):
    path, marker = _hostile(tmp_path)
    with pytest.raises(CheckpointError, match="refused"):
        load_net(path)
    assert not marker.exists()


def test_a_bot_spec_or_bot_load_refuses_it(tmp_path):
    import bgnet
    from bgnet.bots import load_bot

    path, marker = _hostile(tmp_path)
    for load in (lambda: bgnet.load_bot(path), lambda: load_bot(f"{path}@1")):
        with pytest.raises(CheckpointError) as err:
            load()
        assert str(path) in str(err.value)
    assert not marker.exists()


def test_a_run_directory_with_a_hostile_checkpoint_stops_the_tournament(tmp_path):
    from bgnet.measure.tournament import checkpoints_of, run_tournament

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    path, marker = _hostile(run / "checkpoints", "games_000001000.pt")
    with pytest.raises(CheckpointError, match="games_000001000.pt"):
        run_tournament(checkpoints_of(run), games_per_pair=2, progress=False)
    assert not (run / "checkpoints" / "payload-ran").exists() and not marker.exists()


def test_checkpoints_are_written_with_plain_values_and_read_back(tmp_path):
    net = ValueNet("tesauro", 4)
    path = save_checkpoint(tmp_path / "c.pt", {
        "net_config": net.config(), "net_state": net.state_dict(), "games": np.int64(7),
        "metrics": {"ppg": np.float64(0.25), "ci": (np.float32(0.5),)},
        "rng": {"numpy": np.random.default_rng(3).bit_generator.state, "torch": torch.get_rng_state()}})
    data = load_checkpoint(path)
    assert data["games"] == 7 and type(data["games"]) is int
    assert data["metrics"] == {"ppg": 0.25, "ci": (0.5,)} and type(data["metrics"]["ppg"]) is float
    rng = np.random.default_rng()
    rng.bit_generator.state = data["rng"]["numpy"]
    assert rng.integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    loaded = ValueNet("tesauro", 4)
    loaded.load_state_dict(data["net_state"])
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), net.state_dict().values()))


def test_checkpoints_of_earlier_versions_with_numpy_numbers_still_load(tmp_path):
    """Earlier bgnet versions stored evaluation figures as numpy numbers, through torch.save."""
    net = ValueNet("tesauro", 4)
    path = tmp_path / "old.pt"
    torch.save({"format": "bgnet-checkpoint", "version": 1, "net_config": net.config(),
                "net_state": net.state_dict(), "games": 10,
                "metrics": {"pubeval": {"ppg": np.float64(0.2), "win_rate": np.float64(0.55)}},
                "weights": np.arange(3, dtype=np.float32)}, path)
    data = load_checkpoint(path)
    assert data["metrics"]["pubeval"] == {"ppg": 0.2, "win_rate": 0.55}
    assert data["weights"] == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------------------------------------
# Every verb that loads a checkpoint: exit code 3, one line naming the file, the payload never run


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _verbs(path: str, tmp) -> dict[str, list[str]]:
    return {
        "eval": ["eval", path, "random", "--games", "2", "--quiet"],
        "play": ["play", "--bot", path],
        "serve-external": ["serve-external", "--port", str(_free_port()), "--bot", path],
        "bench": ["bench", "er", "--bot", path, "--limit", "10"],
        "tournament": ["tournament", str(tmp / "run"), "--games", "2"],
        "export": ["export", path, "--out", str(tmp / "bot.onnx")],
        "train": ["train", f"resume={path}", "progress=false", f"hydra.run.dir={tmp / 'out'}"],
    }


@pytest.mark.parametrize("verb", ["eval", "play", "serve-external", "bench", "tournament", "export", "train"])
def test_no_verb_runs_the_payload_of_a_hostile_checkpoint(verb, tmp_path, capsys):
    from bgnet import cli

    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    path, marker = _hostile(tmp_path / "run" / "checkpoints", "games_000001000.pt")
    code = cli.main(_verbs(str(path), tmp_path)[verb])
    err = capsys.readouterr().err
    assert not marker.exists()
    assert code == 3, err
    assert "Traceback" not in err and "games_000001000.pt" in err and "refused" in err


# ---------------------------------------------------------------------------------------------
# damaged data inside a whole archive


def _saved(folder, name="c.pt", net=None):
    net = net or ValueNet("tesauro", 4)
    return save_checkpoint(folder / name, {"net_config": net.config(), "net_state": net.state_dict(),
                                           "games": 3}), net


def _flip_tensor_bytes(path, count=50, seed=0):
    """Change ``count`` bytes inside the largest tensor's data of the checkpoint at ``path``,
    where the zip's own structure (headers, directory) does not look."""
    with zipfile.ZipFile(path) as z:
        entry = max((i for i in z.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    raw = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack("<HH", raw[entry.header_offset + 26:entry.header_offset + 30])
    start = entry.header_offset + 30 + name_len + extra_len
    rng = np.random.default_rng(seed)
    for at in rng.choice(entry.file_size, size=count, replace=False):
        raw[start + int(at)] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_a_saved_checkpoint_carries_the_digest_of_its_contents(tmp_path):
    path, _ = _saved(tmp_path)
    data = load_checkpoint(path)
    assert data["sha256"] == content_digest(data) and len(data["sha256"]) == 64


def test_flipped_bytes_in_the_weights_are_refused_though_the_archive_reads(tmp_path):
    path, net = _saved(tmp_path)
    _flip_tensor_bytes(path)
    raw = torch.load(path, weights_only=True)  # the archive is whole: torch reads it
    assert not torch.equal(raw["net_state"]["body.0.weight"], net.state_dict()["body.0.weight"])
    with pytest.raises(CheckpointError, match="damaged") as err:
        load_net(path)
    assert str(path) in str(err.value) and "SHA-256" in str(err.value)


def test_a_changed_number_outside_the_weights_is_refused_too(tmp_path):
    path, net = _saved(tmp_path)
    raw = torch.load(path, weights_only=True)
    raw["games"] = 4  # the pickle rewritten with the digest kept: what a flipped digit does
    torch.save(raw, path)
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(path)


def test_nan_weights_are_refused_with_or_without_a_digest(tmp_path):
    net = ValueNet("tesauro", 4)
    with torch.no_grad():
        net.body[0].weight.fill_(float("nan"))
    path, _ = _saved(tmp_path, "nan.pt", net)  # a valid digest of NaN weights
    with pytest.raises(CheckpointError, match="body.0.weight hold 792 of 792 values that are NaN"):
        load_checkpoint(path)
    old = tmp_path / "old-nan.pt"  # as written before digests: no sha256 entry
    torch.save({"format": "bgnet-checkpoint", "version": 1, "net_config": net.config(),
                "net_state": net.state_dict()}, old)
    with pytest.raises(CheckpointError, match="NaN or infinite") as err:
        load_net(old)
    assert str(old) in str(err.value)


def test_a_checkpoint_without_a_digest_still_loads(tmp_path):
    net = ValueNet("tesauro", 4)
    old = tmp_path / "old.pt"
    torch.save({"format": "bgnet-checkpoint", "version": 1, "net_config": net.config(),
                "net_state": net.state_dict(), "games": 5}, old)
    loaded, data = load_net(old)
    assert data["games"] == 5 and "sha256" not in data
    assert torch.equal(loaded.body[0].weight, net.body[0].weight)


def test_a_real_training_checkpoint_reads_back_with_its_digest(tmp_path):
    """Optimizer moments, integer keys, generator states: every kind a run saves survives the
    round trip with the same digest."""
    net = ValueNet("tesauro", 4)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    net(torch.rand(3, 198)).sum().backward()
    opt.step()
    path = save_checkpoint(tmp_path / "run.pt", {
        "net_config": net.config(), "net_state": net.state_dict(),
        "optimizer_state": opt.state_dict(), "games": 10, "config": {"train": {"lam": 0.7}},
        "rng": {"numpy": np.random.default_rng(1).bit_generator.state, "torch": torch.get_rng_state()},
        "metrics": {"ppg": float("nan"), "ci": (0.1, 0.2), "flag": True, "none": None}})
    assert load_checkpoint(path)["optimizer_state"]["state"][0]["step"] == 1


@pytest.mark.parametrize("opponent", ["pubeval", "random"])
def test_eval_of_a_damaged_checkpoint_exits_3_naming_it(opponent, tmp_path, capsys):
    from bgnet import cli

    if opponent == "pubeval":
        pytest.importorskip("gnubg_nn")
    flipped, _ = _saved(tmp_path, "bad.pt")
    _flip_tensor_bytes(flipped)
    net = ValueNet("tesauro", 4)
    with torch.no_grad():
        net.body[0].weight.fill_(float("nan"))
    nan, _ = _saved(tmp_path, "nan.pt", net)
    for path in (flipped, nan):
        code = cli.main(["eval", str(path), opponent, "--games", "10", "--quiet"])
        err = capsys.readouterr().err
        assert code == 3, err
        assert "Traceback" not in err and str(path) in err and "damaged" in err
