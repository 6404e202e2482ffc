"""Export a trained value net as an ONNX model: a bot that runs without torch.

The file format (inputs, output, metadata, format versions) is declared in
:mod:`bgnet.bots.onnx_eval`, which reads and runs these files; this module writes them. The graph
is derived from the net's declared layout (:func:`bgnet.nn.model.net_layout`): for each layer a
Gemm over the weights named as the layout names them (the torch ``state_dict`` keys), then the
layer's activation, and after the last layer the conditional-probability head of
:func:`bgnet.nn.probs.probs_from_logits`, in its order of operations. A split net's graph computes
both sub-nets on every row and keeps the race net's answer where ``is_race`` is true, so one call
serves a mixed batch. Opset :data:`OPSET`, which every onnxruntime since 1.12 runs; the batch axis
is dynamic. The layout itself is stored in the metadata (``layout``).

Metadata (``metadata_props``, every value a JSON string; :func:`bgnet.bots.onnx_eval.read_metadata`
decodes them): ``format`` (``"bgnet-bot"``), ``format_version``, ``bgnet_version``, ``name``,
``encoding``, ``inputs``, ``outputs``, ``net_config``, ``layout``, ``games``, ``metrics`` (the
checkpoint's last measured strength), ``training`` (a summary of the run's configuration),
``cube`` (match equity table and cube efficiencies for cube decisions), ``exported`` (UTC date
and time), ``source`` (the checkpoint's file name), ``graph_sha256`` (the SHA-256 of the stored
graph, checked when the bot is loaded: :func:`bgnet.bots.onnx_eval.check_weights`) and, for a
merge of nets trained apart (``bgnet merge``), ``merged_from`` (each part's file name, games and
share).

>>> from bgnet.nn.model import ValueNet
>>> model = build_model(ValueNet("tesauro", 8), {"name": "tiny"})
>>> [i.name for i in model.graph.input], [o.name for o in model.graph.output]
(['x'], ['probabilities'])
>>> sorted(w.name for w in model.graph.initializer if "." in w.name)
['body.0.bias', 'body.0.weight', 'head.bias', 'head.weight']
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from bgnet.atomic import write_atomic
from bgnet.bots.onnx_eval import (
    FORMAT,
    FORMAT_VERSION,
    GRAPH_DIGEST,
    INPUT,
    LAYOUT_KEY,
    OUTPUT,
    RACE_INPUT,
    check_weights,
    graph_digest,
)
from bgnet.errors import BadArgument, BadInputFile

OPSET = 17
IR_VERSION = 8  # the oldest IR that opset 17 allows: readable by older onnxruntime releases


class ExportError(BadInputFile):
    """A net that cannot be exported (an unknown layer) or metadata that cannot be stored: the
    checkpoint handed to export is at fault (exit 3)."""


class _Graph:
    """Collects nodes and weights; each helper returns the name of the value it makes."""

    def __init__(self):
        self.nodes: list = []
        self.weights: list = []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, value) -> str:
        """A constant of the graph, named from ``hint`` and a counter."""
        return self.named(self._name(hint), value)

    def named(self, name: str, value) -> str:
        """A tensor under exactly ``name`` (a declared weight)."""
        self.weights.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, out: str | None = None,
           **attrs) -> str:
        name = out or self._name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [name], **attrs))
        return name


def _activation(g: _Graph, layer: dict, h: str) -> str:
    """ONNX nodes for a declared layer's activation (bgnet.nn.layout.ACTIVATIONS)."""
    kind = layer["activation"]
    if kind == "sigmoid":
        return g.op("Sigmoid", [h])
    if kind == "tanh":
        return g.op("Tanh", [h])
    if kind == "relu":
        return g.op("Relu", [h])
    if kind == "leaky_relu":
        return g.op("LeakyRelu", [h], alpha=float(layer["alpha"]))
    if kind == "elu":
        return g.op("Elu", [h], alpha=float(layer["alpha"]))
    if kind == "silu":  # x * sigmoid(x): ONNX has no SiLU operator at this opset
        return g.op("Mul", [h, g.op("Sigmoid", [h])], hint="silu")
    raise ExportError(f"cannot export the activation {kind!r}")


def _subnet(g: _Graph, sub: dict, weights: dict, x: str, out: str | None = None) -> str:
    """Nodes of one declared sub-net: its layers, then the probabilities built from the logits
    in the same order of operations as ``bgnet.nn.probs.probs_from_logits``."""
    h = x
    for layer in sub["layers"]:
        w = g.named(layer["weight"], weights[layer["weight"]])
        b = g.named(layer["bias"], weights[layer["bias"]])
        # Gemm with transB computes h @ W.T + b, as torch's Linear does.
        h = g.op("Gemm", [h, w, b], hint=f"{sub['name']}_linear", transB=1)
        if layer is not sub["layers"][-1]:
            h = _activation(g, layer, h)
    s = g.op("Sigmoid", [h], hint=f"{sub['name']}_sigmoid")
    col = [g.op("Gather", [s, g.const("column", np.array([k], np.int64))], axis=1) for k in range(5)]
    win = col[0]
    wg = g.op("Mul", [win, col[1]], hint="wg")
    wbg = g.op("Mul", [wg, col[2]], hint="wbg")
    lose = g.op("Sub", [g.const("one", np.array(1.0, np.float32)), win], hint="lose")
    lg = g.op("Mul", [lose, col[3]], hint="lg")
    lbg = g.op("Mul", [lg, col[4]], hint="lbg")
    return g.op("Concat", [win, wg, wbg, lg, lbg], hint=f"{sub['name']}_probs", out=out, axis=1)


def build_model(net, metadata: dict | None = None) -> onnx.ModelProto:
    """The ONNX model of a :class:`~bgnet.nn.model.ValueNet` or
    :class:`~bgnet.nn.model.SplitValueNet`, with ``metadata`` (JSON-able values) stored as
    ``metadata_props`` and the net's layout under ``layout``."""
    from bgnet.nn.model import net_layout, net_weights

    try:
        layout = net_layout(net)
    except ValueError as e:
        raise ExportError(f"cannot export this {type(net).__name__}: {e}") from None
    return build_model_from_layout(layout, net_weights(net), metadata)


def build_model_from_layout(layout: dict, weights: dict, metadata: dict | None = None) -> onnx.ModelProto:
    """The ONNX model of a declared layout (:mod:`bgnet.nn.layout`) and its weights by name."""
    from bgnet.nn.layout import check_layout, check_weights

    check_layout(layout)
    check_weights(layout, weights)
    g = _Graph()
    inputs = [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, ["batch", layout["inputs"]])]
    if layout["route"] == "race_mask":
        inputs.append(helper.make_tensor_value_info(RACE_INPUT, TensorProto.BOOL, ["batch"]))
        contact, race = (_subnet(g, sub, weights, INPUT) for sub in layout["subnets"])
        mask = g.op("Unsqueeze", [RACE_INPUT, g.const("axes", np.array([1], np.int64))], hint="mask")
        g.op("Where", [mask, race, contact], out=OUTPUT)
    else:
        _subnet(g, layout["subnets"][0], weights, INPUT, out=OUTPUT)
    outputs = [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", 5])]
    graph = helper.make_graph(g.nodes, "bgnet_value_net", inputs, outputs, g.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="bgnet", producer_version=_version())
    model.ir_version = IR_VERSION
    model.doc_string = ("bgnet value net: encoded positions -> probabilities (win, win gammon, win "
                        "backgammon, lose gammon, lose backgammon) for the side on roll")
    props = {}
    for key, value in dict(metadata or {}, **{LAYOUT_KEY: layout}).items():
        try:
            props[str(key)] = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError) as e:
            raise ExportError(f"metadata {key!r} cannot be stored as JSON ({e})") from None
    props[GRAPH_DIGEST] = json.dumps(hashlib.sha256(model.graph.SerializeToString()).hexdigest())
    helper.set_model_props(model, props)
    onnx.checker.check_model(model)
    return model


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("bgnet")
    except Exception:  # running from a source tree that was never installed
        return "unknown"


def _plain(value):
    """A JSON-able copy of checkpoint data (numpy scalars and tuples become plain values)."""
    return json.loads(json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def _training_summary(data: dict) -> dict:
    config = data.get("config") or {}
    summary = {"games": int(data.get("games", 0))}
    for key in ("model", "optim", "train", "seed"):
        if key in config:
            summary[key] = config[key]
    return _plain(summary)


def default_metadata(net, data: dict, source: str | os.PathLike | None = None) -> dict:
    """The metadata :func:`export_onnx` stores for a net and its checkpoint data."""
    from bgnet.cube import DEFAULT_MET, CubeEfficiency
    from bgnet.nn.model import SplitValueNet
    from bgnet.nn.probs import OUTPUTS

    split = isinstance(net, SplitValueNet)
    inputs = {INPUT: f"float32[batch, {net.num_inputs}]: positions encoded with '{net.encoding}', "
                     "side on roll first (bgnet.nn.encode.encode)"}
    if split:
        inputs[RACE_INPUT] = "bool[batch]: true where contact is over (bgnet.nn.encode.race_mask)"
    name = Path(source).stem if source else "bgnet"
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "bgnet_version": _version(),
        "name": name,
        "encoding": net.encoding,
        "inputs": inputs,
        "outputs": list(OUTPUTS),
        "output_view": "the side on roll of the encoded position, before it rolls",
        "net_config": _plain(net.config()),
        "games": int(data.get("games", 0)),
        "metrics": _plain(data.get("metrics") or {}),
        "training": _training_summary(data),
        "cube": {"met": DEFAULT_MET, "efficiency": asdict(CubeEfficiency())},
        "exported": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": Path(source).name if source else None,
    }
    if data.get("merged_from"):  # a merge of nets trained apart (bgnet.nn.merge): its parts
        meta["merged_from"] = _plain(data["merged_from"])
    return meta


def check_output_path(out_path: str | os.PathLike) -> Path:
    """``out_path`` as a Path when a file can be written there: not a directory, and in a
    directory that exists (it is not created). BadArgument otherwise."""
    out = Path(out_path)
    if out.is_dir():
        raise BadArgument(f"--out {out} is a directory; name the file to write, e.g. {out / 'bot.onnx'}")
    parent = out.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise BadArgument(f"cannot write {out}: its folder {parent} {what} (create it first)")
    return out


def export_onnx(checkpoint_path: str | os.PathLike, out_path: str | os.PathLike,
                metadata: dict | None = None) -> Path:
    """Export the net of a training checkpoint to ``out_path`` (ONNX); returns the path.

    ``metadata`` adds to or overrides the default entries (see the module docstring); values must
    be JSON-able. A missing or unreadable checkpoint raises
    :class:`bgnet.nn.checkpoint.CheckpointError`; an ``out_path`` that is a directory or whose
    folder does not exist :class:`bgnet.errors.BadArgument`.
    """
    from bgnet.nn.checkpoint import load_net

    out = check_output_path(out_path)
    net, data = load_net(checkpoint_path)
    meta = default_metadata(net, data, checkpoint_path)
    meta.update(metadata or {})
    model = build_model(net, meta)
    write_atomic(out, model.SerializeToString())
    return out


def set_metadata(bot_path: str | os.PathLike, updates: dict,
                 out_path: str | os.PathLike | None = None) -> Path:
    """Write an exported bot again with some metadata entries replaced (``updates``: name to a
    JSON-able value, e.g. ``{"cube": {...}}``), to ``out_path`` or in place; the graph and the
    weights are left as they are, and the digest of the graph is stored with them (a bot
    exported before digests gets one: ``set_metadata(path, {})``). Returns the path written.

    The file is written atomically. A file that is not an exported bot raises
    :class:`bgnet.bots.onnx_eval.BotFileError`, as loading it would, and so does a damaged one
    (its digest is never stamped over damage); a ``cube`` entry that the cube head could not use
    (an unknown table, efficiencies out of range) a ValueError, before anything is written.
    """
    from bgnet.bots.onnx_eval import read_metadata

    check_weights(bot_path, read_metadata(bot_path))  # refuses what is not an exported bot, or a damaged one
    updates = _plain(updates)
    if "cube" in updates:
        _check_cube_entry(updates["cube"])
    out = check_output_path(out_path if out_path is not None else bot_path)
    model = onnx.load(str(bot_path))
    updates[GRAPH_DIGEST] = hashlib.sha256(model.graph.SerializeToString()).hexdigest()
    kept = [p for p in model.metadata_props if p.key not in updates]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    for key, value in updates.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, json.dumps(value, sort_keys=True)
    data = model.SerializeToString()
    if graph_digest(data) != updates[GRAPH_DIGEST]:  # the graph as written is the graph digested
        raise ExportError(f"{bot_path}: the graph changed when written again; nothing was written")
    write_atomic(out, data)
    return out


def _check_cube_entry(cube) -> None:
    """ValueError unless ``cube`` is ``{"met": name or None, "efficiency": {...} or None}`` as
    :meth:`bgnet.bots.net.NetBot.cube_settings` reads it."""
    from bgnet.cube import CubeEfficiency, load_met

    if not isinstance(cube, dict) or set(cube) - {"met", "efficiency"}:
        raise ValueError(f"the cube entry holds 'met' and 'efficiency' only; got {cube!r}")
    if cube.get("met") is not None:
        load_met(cube["met"])
    eff = cube.get("efficiency")
    if eff is not None:
        if not isinstance(eff, dict):
            raise ValueError(f"the cube efficiency is a mapping of CubeEfficiency's fields; got {eff!r}")
        try:
            CubeEfficiency(**eff)
        except TypeError as e:
            raise ValueError(f"the cube efficiency has an unknown field ({e})") from None


def max_difference(net, bot_path: str | os.PathLike, positions: int = 10000, seed: int = 0) -> dict:
    """Largest absolute difference between the torch net and the exported bot, over ``positions``
    self-play positions and as many afterstates spread over their moves:
    ``{"positions": d, "afterstates": d}``."""
    from bgnet.bots.onnx_eval import OnnxEvaluator
    from bgnet.bots.torch_eval import NetEvaluator
    from bgnet.engine.movegen import generate_batch
    from bgnet.engine.sampling import sample_positions

    boards, dice = sample_positions(positions, seed=seed)
    after = generate_batch(boards, dice)[0]
    after = after[:: max(1, len(after) // positions)][:positions]
    torch_eval, onnx_eval = NetEvaluator(net, fast=False), OnnxEvaluator(bot_path)
    return {
        "positions": float(np.abs(torch_eval.positions(boards) - onnx_eval.positions(boards)).max()),
        "afterstates": float(np.abs(torch_eval.afterstates(after) - onnx_eval.afterstates(after)).max()),
    }


def bot_name_for(checkpoint: str | os.PathLike, out: str | os.PathLike | None = None) -> str:
    """The name an exported bot gets unless ``--name`` gives one: the output file's (``--out
    quick.onnx``: ``quick``), else the run's, for a checkpoint in a run's ``checkpoints``
    folder (``runs/quick/checkpoints/latest.pt``: ``quick``), else the checkpoint's own.

    >>> bot_name_for("runs/quick/checkpoints/latest.pt")
    'quick'
    >>> bot_name_for("runs/quick/checkpoints/latest.pt", "bots/strong.onnx")
    'strong'
    >>> bot_name_for("nets/s9.pt")
    's9'
    """
    if out is not None:
        return Path(out).stem
    if Path(checkpoint).is_dir():  # a run's folder: its own name, whatever it holds
        return Path(checkpoint).resolve().name
    ck = Path(checkpoint)
    if ck.parent.name == "checkpoints" and ck.parent.parent.name not in ("", ".", ".."):
        return ck.parent.parent.name
    if ck.parent.name == "checkpoints":  # a checkpoints folder given relative to the run
        run = ck.resolve().parent.parent.name
        if run:
            return run
    return ck.stem
