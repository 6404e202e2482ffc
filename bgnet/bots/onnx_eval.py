"""Exported bots: the file format bgnet writes, and the evaluator that runs one without torch.

An exported bot is an ONNX model (written by :mod:`bgnet.export.onnx_export`) of the net's
function from ENCODED positions to the five probabilities:

* input :data:`INPUT` (``"x"``): float32[batch, F], positions encoded with the encoding the
  metadata names (:func:`bgnet.nn.encode.encode`; side on roll first);
* input :data:`RACE_INPUT` (``"is_race"``): bool[batch], only for a split net: true where
  :func:`bgnet.nn.encode.race_mask` is;
* output :data:`OUTPUT` (``"probabilities"``): float32[batch, 5] in GNU Backgammon's order for
  the side on roll, before it rolls.

Metadata (``metadata_props``, every value a JSON string): ``format`` (:data:`FORMAT`),
``format_version``, ``encoding``, ``net_config``, ``layout``, :data:`GRAPH_DIGEST` and what
describes the bot (name, training summary, strength, cube settings; see
:mod:`bgnet.export.onnx_export`).

Format versions. Version 2 stores the net's declared layout (:mod:`bgnet.nn.layout`) under
``layout``, and the graph's weights are initializers named by it (the torch ``state_dict`` keys),
so the compiled forward pass finds each weight by its declared name. Version 1 (bgnet 0.1's
first exports) has no layout: its weights
were named ``{net}_hidden{i}_{w|b}_{n}`` and ``{net}_logits_{w|b}_{n}`` (``net``: ``contact``,
``race`` or ``net``; ``i`` the index in the torch ``body``; ``n`` a counter), and
:func:`_layout_v1` reads that naming back into a layout.

Loading a bot reads data only (protobuf and JSON): it never runs code from the file. A missing
file raises :class:`BotFileMissing`, a truncated, foreign or malformed one :class:`BotFileError`
(both :class:`bgnet.errors.BadInputFile`, naming the file).

A damaged bot is refused too, though onnxruntime would run it: :data:`GRAPH_DIGEST`
(``graph_sha256``) is the SHA-256 of the graph as stored in the file (its weights and operations,
the bytes of the model's ``graph`` field), written at export, computed again at loading and
compared; and every floating-point weight must be a finite number. Bots exported before the
digest was stored have none and are checked for non-finite weights only. Both checks read the
protobuf wire format directly (:func:`_wire_fields`), so they need neither the ``onnx`` package
nor torch.

:class:`OnnxEvaluator` runs the model on boards with onnxruntime, or with bgnet's compiled
forward pass (:class:`bgnet.nn.fast.FastForward`) over the same weights when that pass covers the
net: the same float32 arithmetic as the torch net, several times faster than onnxruntime on small
batches. Bots are made from files by :mod:`bgnet.bots.load`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np

from bgnet.bots.evaluator import Evaluator
from bgnet.errors import BadInputFile
from bgnet.nn.encode import ENCODINGS

FORMAT = "bgnet-bot"
FORMAT_VERSION = 2  # what bgnet.export.onnx_export writes; 1 is still read
INPUT, RACE_INPUT, OUTPUT = "x", "is_race", "probabilities"
LAYOUT_KEY = "layout"
GRAPH_DIGEST = "graph_sha256"  # metadata: the SHA-256 (hex) of the stored graph (see the module doc)


class BotFileError(BadInputFile):
    """An exported bot that cannot be used; the message names the file and what is wrong."""


class BotFileMissing(BotFileError, FileNotFoundError):
    """An exported bot's path that names no file."""


def _session(path: Path, threads: int | None):
    import onnxruntime as ort

    if not path.exists():
        raise BotFileMissing(f"exported bot {path} does not exist")
    if not path.is_file():
        raise BotFileError(f"exported bot {path} is a directory, not an ONNX file")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # errors only: the optimizer's notes are noise to a player
    if threads:
        opts.intra_op_num_threads = int(threads)
    try:
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types for unreadable models
        raise BotFileError(f"exported bot {path} is truncated or not an ONNX model ({type(e).__name__}: "
                           f"{str(e).strip()[:300]})") from None


def _decode(path: Path, raw: dict) -> dict:
    out = {}
    for key, text in raw.items():
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            raise BotFileError(f"exported bot {path}: metadata {key!r} is not valid JSON") from None
    if out.get("format") != FORMAT:
        raise BotFileError(f"{path} is an ONNX model but not a bgnet bot (no '{FORMAT}' format tag)")
    version = out.get("format_version", 1)
    if not isinstance(version, int) or not 1 <= version <= FORMAT_VERSION:
        raise BotFileError(f"exported bot {path} has format version {version!r}; this bgnet reads "
                           f"versions 1 to {FORMAT_VERSION} (a newer bgnet wrote it: upgrade)")
    return out


def read_metadata(path: str | os.PathLike) -> dict:
    """The metadata of an exported bot, JSON values decoded (see the module docstring)."""
    path = Path(path)
    return _decode(path, _session(path, 1).get_modelmeta().custom_metadata_map)


class OnnxEvaluator(Evaluator):
    """Probabilities from an exported bot, for boards (see :class:`bgnet.bots.evaluator.Evaluator`).

    ``threads``: onnxruntime's intra-op threads (None: its default, all cores). ``compiled``: run
    the file's weights through bgnet's compiled forward pass where it covers the net (see the
    module's note); ``self.fast`` is that pass, or None where onnxruntime runs the model.
    """

    def __init__(self, path: str | os.PathLike, threads: int | None = None, compiled: bool = True):
        self.path = Path(path)
        self.session = _session(self.path, threads)
        self.metadata = _decode(self.path, self.session.get_modelmeta().custom_metadata_map)
        encoding = self.metadata.get("encoding")
        if not isinstance(encoding, str) or encoding not in ENCODINGS:
            raise BotFileError(f"exported bot {self.path} uses encoding {encoding!r}, which this "
                               f"bgnet does not know (known: {', '.join(sorted(ENCODINGS))})")
        self.encoding = encoding
        inputs = {i.name: i for i in self.session.get_inputs()}
        if INPUT not in inputs or [o.name for o in self.session.get_outputs()] != [OUTPUT]:
            raise BotFileError(f"exported bot {self.path} lacks the '{INPUT}' input or the "
                               f"'{OUTPUT}' output of a bgnet value net")
        width = inputs[INPUT].shape[1]
        if width != ENCODINGS[self.encoding]:
            raise BotFileError(f"exported bot {self.path} takes {width} inputs, but encoding "
                               f"'{self.encoding}' has {ENCODINGS[self.encoding]}")
        self.split = RACE_INPUT in inputs
        check_weights(self.path, self.metadata)
        if compiled:
            self.fast = _compiled_forward(self)

    def _forward(self, x: np.ndarray, is_race: np.ndarray | None) -> np.ndarray:
        feeds = {INPUT: x}
        if self.split:
            feeds[RACE_INPUT] = np.ascontiguousarray(is_race, np.bool_)
        return self.session.run([OUTPUT], feeds)[0]


def _compiled_forward(ev: OnnxEvaluator):
    """bgnet's compiled forward pass over the model's weights, found by the declared layout; None
    when the pass does not cover the net, the weights do not fit the layout, or the pass
    disagrees with onnxruntime (then onnxruntime keeps the job)."""
    from bgnet.nn.fast.forward import FastForward
    from bgnet.nn.layout import LayoutError

    try:
        weights = _initializers(ev.path)
        layout = ev.metadata.get(LAYOUT_KEY) or _layout_v1(ev.metadata, weights)
        fast = FastForward.from_weights(layout, weights, frozen=True)  # an exported bot's weights never change
    except (LayoutError, ValueError, KeyError, TypeError, ImportError):
        return None
    # Same weights, same float32 arithmetic up to rounding: anything more is a mismatch of
    # layouts, and onnxruntime keeps the job.
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import generate_batch

    race = np.zeros((2, 25), np.int8)
    race[:, :6] = (3, 3, 3, 2, 2, 2)  # both sides home: a race, for the race net of a split model
    rng = np.random.default_rng(0)
    boards = np.stack([start_position()] * 32 + [race] * 32)
    after, _, _ = generate_batch(boards, rng.integers(1, 7, size=(64, 2)))
    ref = ev.run_net(after, True)  # ev.fast is not set yet: onnxruntime answers
    if not np.allclose(fast.swapped(after), ref, atol=1e-4):
        return None
    return fast


def check_weights(path: str | os.PathLike, metadata: dict) -> None:
    """BotFileError when the exported bot at ``path`` is damaged: its graph does not match the
    digest in its ``metadata`` (where it has one), or a floating-point weight is NaN or
    infinite."""
    path = Path(path)
    try:
        graph = _graph_bytes(path.read_bytes())
        floats = _float_initializers(graph)
    except ValueError as e:
        raise BotFileError(f"exported bot {path} is damaged: its protobuf data cannot be read ({e})") from None
    stored = metadata.get(GRAPH_DIGEST)
    if stored is not None and stored != hashlib.sha256(graph).hexdigest():
        raise BotFileError(f"exported bot {path} is damaged: its weights and graph do not match the "
                           "SHA-256 stored with them (a changed byte inside its data); export it "
                           "again or use a copy")
    for name, values in floats.items():
        bad = int((~np.isfinite(values)).sum())
        if bad:
            raise BotFileError(f"exported bot {path} is damaged: its weights {name} hold {bad} of "
                               f"{values.size} values that are NaN or infinite")


def graph_digest(model_bytes: bytes) -> str:
    """The SHA-256 (hex) of the ``graph`` field of a serialised ONNX model (see the module doc)."""
    return hashlib.sha256(_graph_bytes(model_bytes)).hexdigest()


# The protobuf wire format: each field is a varint key (field number << 3 | wire type), then a
# varint (type 0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5).
_MODEL_GRAPH, _GRAPH_INITIALIZER = 7, 5  # ModelProto.graph, GraphProto.initializer
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_FLOAT_DATA, _TENSOR_NAME = 1, 2, 4, 8  # of TensorProto
_TENSOR_RAW_DATA, _TENSOR_DOUBLE_DATA = 9, 10
_FLOAT_TYPES = {1: "<f4", 10: "<f2", 11: "<f8"}  # TensorProto.DataType: FLOAT, FLOAT16, DOUBLE


def _varint(buf: memoryview, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if at >= len(buf) or shift > 63:
            raise ValueError("a number runs past the end of its message")
        byte = buf[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def _wire_fields(buf: bytes | memoryview):
    """(field number, wire type, value) of each field of a protobuf message, in the order
    stored: value is an int for numbers, a memoryview of the bytes for the other types.
    ValueError for anything malformed."""
    buf = memoryview(buf)
    at = 0
    while at < len(buf):
        key, at = _varint(buf, at)
        field, kind = key >> 3, key & 7
        if kind == 0:
            value, at = _varint(buf, at)
            yield field, kind, value
            continue
        if kind == 2:
            size, at = _varint(buf, at)
        elif kind in (1, 5):
            size = 8 if kind == 1 else 4
        else:
            raise ValueError(f"field {field} has wire type {kind}, which ONNX never writes")
        if at + size > len(buf):
            raise ValueError(f"field {field} runs past the end of its message")
        yield field, kind, buf[at:at + size]
        at += size


def _graph_bytes(model_bytes: bytes) -> memoryview:
    graphs = [v for f, k, v in _wire_fields(model_bytes) if f == _MODEL_GRAPH and k == 2]
    if len(graphs) != 1:
        raise ValueError(f"a model holds one graph; this file holds {len(graphs)}")
    return graphs[0]


def _float_initializers(graph: memoryview) -> dict[str, np.ndarray]:
    """``{name: values}`` of the graph's floating-point initializers stored in the file, each in
    its shape (flat where its dimensions do not hold its values)."""
    out = {}
    for field, kind, tensor in _wire_fields(graph):
        if field != _GRAPH_INITIALIZER or kind != 2:
            continue
        dtype, name, chunks = None, "", []
        dims: list[int] = []
        for f, k, v in _wire_fields(tensor):
            if f == _TENSOR_DATA_TYPE and k == 0:
                dtype = _FLOAT_TYPES.get(v)
            elif f == _TENSOR_NAME and k == 2:
                name = bytes(v).decode("utf-8", "replace")
            elif f == _TENSOR_DIMS:  # one at a time (0) or packed (2)
                dims.extend([v] if k == 0 else _packed_varints(v))
            elif k != 0:  # raw data, or float / double values packed (2) or one at a time (5, 1)
                chunks.append((f, v))
        if dtype is None:
            continue
        packed = {_TENSOR_FLOAT_DATA: "<f4", _TENSOR_DOUBLE_DATA: "<f8", _TENSOR_RAW_DATA: dtype}
        parts = [np.frombuffer(v, packed[f]) for f, v in chunks
                 if f in packed and len(v) % np.dtype(packed[f]).itemsize == 0]
        values = np.concatenate(parts) if parts else np.zeros(0, np.float32)
        if int(np.prod(dims)) == values.size:  # no dimensions: a scalar
            values = values.reshape(dims)
        out[name] = values
    return out


def _packed_varints(buf: memoryview) -> list[int]:
    """The numbers of a packed repeated varint field."""
    out, at = [], 0
    while at < len(buf):
        value, at = _varint(buf, at)
        out.append(value)
    return out


def _initializers(path: Path) -> dict:
    """``{name: array}`` of the model's floating-point initializers (the weights) stored in the
    file itself, in their shapes: read by :func:`_float_initializers` rather than the ``onnx``
    package, whose import alone took a second of every command that loads a bot. A tensor whose
    data lives in another file has none here and is left out (bgnet never writes one), so reading
    a bot reads no other file."""
    return {name: values for name, values in _float_initializers(_graph_bytes(path.read_bytes())).items()
            if values.size}


_V1_WEIGHT = re.compile(r"^(?P<net>contact|race|net)_(?:hidden(?P<index>\d+)|logits)_(?P<kind>[wb])_\d+$")


def _layout_v1(metadata: dict, initializers: dict) -> dict:
    """The layout of a version-1 export, from its net config and its weights' names (see the
    module docstring); each weight is also entered in ``initializers`` under its declared name."""
    from bgnet.nn.layout import CONDITIONAL, FORMAT, VERSION, check_layout

    config = metadata["net_config"]
    split = config.get("type") == "SplitValueNet"
    subnets = [("contact", config["contact"]), ("race", config["race"])] if split else [("net", config)]
    found: dict[str, dict] = {}
    for old, value in list(initializers.items()):
        m = _V1_WEIGHT.match(old)
        if not m:
            continue
        prefix = f"{m['net']}." if split else ""
        layer = f"body.{m['index']}" if m["index"] is not None else "head"
        name = f"{prefix}{layer}.{'weight' if m['kind'] == 'w' else 'bias'}"
        initializers[name] = value
        if m["kind"] == "w":
            found.setdefault(m["net"], {})[layer] = value.shape
    layout_subnets = []
    for net, cfg in subnets:
        prefix = f"{net}." if split else ""
        hidden = sorted((k for k in found.get(net, {}) if k != "head"), key=lambda k: int(k[5:]))
        layers = [{"weight": f"{prefix}{k}.weight", "bias": f"{prefix}{k}.bias",
                   "shape": list(found[net][k]), "activation": cfg.get("activation", "sigmoid")}
                  for k in hidden]
        layers.append({"weight": f"{prefix}head.weight", "bias": f"{prefix}head.bias",
                       "shape": list(found[net]["head"]), "activation": CONDITIONAL})
        layout_subnets.append({"name": net, "layers": layers})
    return check_layout({"format": FORMAT, "version": VERSION, "encoding": metadata["encoding"],
                         "inputs": ENCODINGS[metadata["encoding"]],
                         "route": "race_mask" if split else None, "subnets": layout_subnets})
