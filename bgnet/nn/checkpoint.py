"""Checkpoints: written atomically, read with errors that name the file.

A checkpoint is one ``torch.save`` dict:

* ``format``: ``"bgnet-checkpoint"`` and ``version``;
* ``net_config`` / ``net_state``: rebuild the value net with :func:`bgnet.nn.model.net_from_config`;
* ``optimizer_state``, ``games`` (self-play games played), ``config`` (the run's resolved config as
  a plain dict), ``rng`` (numpy and torch generator states), ``metrics`` (last evaluation);
* ``sha256``: the SHA-256 of everything else in the dict (:func:`content_digest`: every tensor by
  its bytes, every number and string by its value, in the dict's own order).

Writing goes to a temporary file in the same directory, is flushed to disk, then renamed over the
target, so a kill at any moment leaves either the old checkpoint or the new one, never half of one.

Reading never runs code from the file. A checkpoint is a pickle inside a zip, and a pickle can name
any Python callable to rebuild an object; bgnet reads it with torch's restricted unpickler
(``weights_only=True``), which builds only tensors, plain containers, numbers and strings, plus
numpy's scalar and array types (checkpoints of earlier bgnet versions hold numpy numbers in their
metrics). A file that names anything else is refused before that thing is touched, with a
:class:`CheckpointError` naming the file. Writing converts numpy values to plain Python ones, so
new checkpoints need none of the numpy allowances.

Reading also refuses a damaged file whose archive is still whole: a byte changed inside a
tensor's data leaves the zip and the pickle readable and the net playing, badly. The digest
stored at writing is computed again and must match; and the net's weights must be finite numbers
(a NaN or an infinity in them is refused even in a checkpoint written before digests were stored,
which loads without the digest check).
"""
from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import re
import zipfile
from pathlib import Path
from types import ModuleType

import numpy as np
import torch

from bgnet.atomic import write_atomic
from bgnet.errors import BadInputFile

FORMAT = "bgnet-checkpoint"
VERSION = 1
DIGEST = "sha256"  # the key of the content digest (absent in checkpoints of earlier versions)


class CheckpointError(BadInputFile):
    """A checkpoint file that cannot be used; the message names the file and what is wrong."""


def _numpy_multiarray() -> ModuleType:
    """numpy's multiarray module: ``numpy._core`` since numpy 2, ``numpy.core`` before."""
    try:
        return importlib.import_module("numpy._core.multiarray")
    except ImportError:  # pragma: no cover - numpy 1.x
        return importlib.import_module("numpy.core.multiarray")


def _numpy_data_types() -> list:
    """numpy's array and scalar reconstructors: they rebuild data from bytes and call nothing else."""
    multiarray = _numpy_multiarray()
    kinds = [np.dtype, np.ndarray, multiarray._reconstruct, multiarray.scalar]
    kinds += [getattr(np.dtypes, n) for n in dir(np.dtypes) if n.endswith("DType")]
    return kinds


def plain(value):
    """``value`` with numpy scalars and arrays turned into Python numbers and lists, recursively
    through dicts, lists and tuples; containers without numpy values inside are returned as they
    are (a state dict keeps its metadata).

    >>> plain({"ppg": np.float64(0.25), "n": [np.int64(3)], "a": np.arange(2)})
    {'ppg': 0.25, 'n': [3], 'a': [0, 1]}
    """
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if isinstance(value, dict):
        items = {k: plain(v) for k, v in value.items()}
        if all(items[k] is v for k, v in value.items()):
            return value
        return type(value)(items)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        items = [plain(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items)
    return value


def save_checkpoint(path: str | os.PathLike, payload: dict) -> Path:
    """Atomically write ``payload`` (plus format tags) to ``path``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = plain(dict(payload))
    data["format"], data["version"] = FORMAT, VERSION
    data.pop(DIGEST, None)
    data[DIGEST] = content_digest(data)
    buf = io.BytesIO()
    torch.save(data, buf)
    return write_atomic(path, buf.getvalue())


def load_checkpoint(path: str | os.PathLike, map_location: str = "cpu") -> dict:
    """Read a checkpoint; a missing, truncated, corrupt or foreign file raises CheckpointError. A
    training run's folder stands for its latest checkpoint (:func:`checkpoint_file`)."""
    path = checkpoint_file(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.stat().st_size == 0:
        raise CheckpointError(f"checkpoint {path} is empty (0 bytes): it was never completely written")
    _check_kind(path)
    try:
        with torch.serialization.safe_globals(_numpy_data_types()):
            raw = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        raise CheckpointError(_refusal(path, e)) from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} is truncated or corrupt and cannot be read "
                              f"({_first_line(e)})") from None
    except Exception as e:  # the restricted unpickler on arbitrary garbage can raise nearly anything
        raise CheckpointError(f"checkpoint {path} is not a readable bgnet checkpoint "
                              f"({type(e).__name__}: {_first_line(e)})") from None
    data = plain(raw)  # numpy numbers in checkpoints of earlier versions
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a bgnet checkpoint (no '{FORMAT}' tag)")
    for key in ("net_config", "net_state"):
        if key not in data:
            raise CheckpointError(f"checkpoint {path} lacks '{key}'")
    _check_digest(path, raw)
    _check_finite(path, data["net_state"])
    return data


def content_digest(data: dict) -> str:
    """The SHA-256 (hex) of a checkpoint's contents, its ``sha256`` entry left out: each value
    fed with a tag of its kind, containers in their own order, tensors as dtype, shape and bytes.
    ``torch.save`` and ``torch.load`` keep all of it exactly (dicts keep their order, floats their
    bits), so a file read back gives the digest it was written with.

    >>> content_digest({"a": 1}) == content_digest({"a": 1, "sha256": "x"}) != content_digest({"a": 2})
    True
    """
    h = hashlib.sha256()
    _feed(h, {k: v for k, v in data.items() if k != DIGEST})
    return h.hexdigest()


def _feed(h, value) -> None:
    """Feed ``value`` to the hash ``h``, unambiguously (a tag, a length, then the contents)."""
    def put(tag: bytes, body: bytes) -> None:
        h.update(tag + len(body).to_bytes(8, "little") + body)

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        put(b"T", f"{t.dtype}{tuple(t.shape)}".encode())
        put(b"B", t.reshape(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(value, dict):
        put(b"D", str(len(value)).encode())
        for k, v in value.items():
            _feed(h, k)
            _feed(h, v)
    elif isinstance(value, (list, tuple)):
        put(b"L" if isinstance(value, list) else b"U", str(len(value)).encode())
        for v in value:
            _feed(h, v)
    elif isinstance(value, str):
        put(b"S", value.encode("utf-8", "surrogatepass"))
    elif isinstance(value, (bytes, bytearray)):
        put(b"Y", bytes(value))
    elif isinstance(value, float):
        put(b"F", value.hex().encode())
    elif value is None or isinstance(value, (bool, int)):  # bool before int: True is not 1 here
        put(b"I", repr(value).encode())
    else:  # anything else the restricted unpickler allows (a dtype, a torch.Size) by its repr
        put(b"O", f"{type(value).__qualname__}:{value!r}".encode())


def _check_digest(path: Path, data: dict) -> None:
    """CheckpointError when the stored digest is not the contents' own (checkpoints written
    before digests were stored have none, and pass)."""
    stored = data.get(DIGEST)
    if stored is None:
        return
    if not isinstance(stored, str) or stored != content_digest(data):
        raise CheckpointError(f"checkpoint {path} is damaged: its contents do not match the "
                              "SHA-256 stored with them (a changed byte inside its data); use an "
                              "earlier checkpoint or a copy of this one")


def _check_finite(path: Path, net_state) -> None:
    """CheckpointError when the net's weights are not a mapping of tensors or hold a NaN or an
    infinity (such a net plays nonsense and trains to more of it)."""
    if not isinstance(net_state, dict):
        raise CheckpointError(f"checkpoint {path}: its 'net_state' is not the net's weights by "
                              f"name (a {type(net_state).__name__})")
    for name, t in net_state.items():
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            bad = int((~torch.isfinite(t)).sum())
            if bad:
                raise CheckpointError(f"checkpoint {path} is damaged: its weights {name} hold {bad} "
                                      f"of {t.numel()} values that are NaN or infinite; use an "
                                      "earlier checkpoint")


def checkpoint_file(path: str | os.PathLike) -> Path:
    """The checkpoint file ``path`` names: itself, or for a folder the latest checkpoint of the
    training run it is (``RUN/checkpoints/latest.pt``) or holds (``checkpoints/latest.pt``). A
    folder with neither raises CheckpointError, saying what to give instead.

    >>> checkpoint_file("runs/none/checkpoints/latest.pt").as_posix()
    'runs/none/checkpoints/latest.pt'
    """
    path = Path(path)
    if not path.is_dir():
        return path
    for found in (path / "checkpoints" / "latest.pt", path / "latest.pt"):
        if found.is_file():
            return found
    raise CheckpointError(f"{path} is a folder with no checkpoint in it: give a checkpoint file, or "
                          "a training run's folder (it holds checkpoints/latest.pt once the run has "
                          "saved its net)")


def exported_bot_refusal(path, wanted: str = "a training checkpoint (.pt) or a training run's "
                                             "folder is wanted here") -> str:
    """Why an exported bot cannot stand where a checkpoint is wanted, and what it is good for."""
    return f"{path} is an exported bot (ONNX) already: it plays as it is (bgnet play --bot {path}); {wanted}"


def _check_kind(path: Path) -> None:
    """CheckpointError for a file that cannot be a checkpoint at all: ``torch.save`` writes a zip
    archive (older versions a pickle, which starts with its protocol byte 0x80). Anything else,
    text above all, is said to be what it is before the unpickler reads it as instructions."""
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith((b"PK\x03\x04", b"\x80")):
        return
    if path.suffix.lower() == ".onnx":
        raise CheckpointError(exported_bot_refusal(path))
    try:
        head.decode("utf-8")
        text = b"\0" not in head
    except UnicodeDecodeError:
        text = False
    what = "a text file" if text else "neither a zip archive nor a pickle"
    raise CheckpointError(f"{path} is not a checkpoint: it is {what}, where a bgnet checkpoint "
                          "is a training run's saved net (RUN/checkpoints/latest.pt)")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _refusal(path: Path, error: BaseException) -> str:
    """Why a file was refused: torch's message names the global the pickle asked for."""
    found = re.search(r"GLOBAL ([\w.]+)", str(error))
    named = f"it names {found.group(1)}" if found else _first_line(error)
    return (f"checkpoint {path} was refused: it asks to run or build a Python object that a bgnet "
            f"checkpoint never holds ({named}); nothing from it was run. Load only checkpoints "
            f"written by bgnet; one from a trusted source that holds other objects must be "
            f"re-saved with plain tensors, numbers, strings, lists and dicts")


def load_net(path: str | os.PathLike, device: str = "cpu"):
    """The value net stored in a checkpoint, in eval mode on ``device``."""
    from bgnet.nn.model import net_from_config

    data = load_checkpoint(path)
    net = net_from_config(data["net_config"])
    try:
        net.load_state_dict(data["net_state"])
    except RuntimeError as e:
        raise CheckpointError(f"checkpoint {path}: weights do not fit the stored architecture ({e})") from None
    return net.to(device).eval(), data
