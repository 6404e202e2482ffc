"""Export a trained value net as an ONNX model: a bot that runs without torch.

The graph is the net's function from ENCODED positions to the five probabilities:

* input ``x``: float32[batch, F], positions encoded with the encoding named in the metadata
  (:func:`bgnet.nn.encode.encode`; side on roll first);
* input ``is_race``: bool[batch], only for a :class:`~bgnet.nn.model.SplitValueNet`: the graph
  holds both nets, computes both on every row and keeps the race net's answer where ``is_race``
  is true (:func:`bgnet.nn.encode.race_mask`), so one call serves a mixed batch;
* output ``probabilities``: float32[batch, 5], GNU Backgammon's order (win, win gammon, win
  backgammon, lose gammon, lose backgammon) for the side on roll, before it rolls.

The graph is written node by node from the layers (Gemm and the activation of each hidden layer,
then the conditional-probability head of :mod:`bgnet.nn.model`), with opset :data:`OPSET`, which
every onnxruntime since 1.12 runs. The batch axis is dynamic.

Metadata (``metadata_props``, every value a JSON string; :func:`bgnet.export.onnx_bot.read_metadata`
decodes them): ``format`` (``"bgnet-bot"``), ``format_version``, ``bgnet_version``, ``name``,
``encoding``, ``inputs``, ``outputs``, ``net_config``, ``games``, ``metrics`` (the checkpoint's
last measured strength), ``training`` (a summary of the run's configuration), ``cube`` (match
equity table and cube efficiencies for cube decisions), ``exported`` (UTC date and time),
``source`` (the checkpoint's file name).

>>> from bgnet.nn.model import ValueNet
>>> model = build_model(ValueNet("tesauro", 8), {"name": "tiny"})
>>> [i.name for i in model.graph.input], [o.name for o in model.graph.output]
(['x'], ['probabilities'])
"""
from __future__ import annotations

from bgnet.atomic import write_atomic

import argparse
import datetime
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FORMAT = "bgnet-bot"
FORMAT_VERSION = 1
OPSET = 17
IR_VERSION = 8  # the oldest IR that opset 17 allows: readable by older onnxruntime releases
INPUT, RACE_INPUT, OUTPUT = "x", "is_race", "probabilities"


class ExportError(ValueError):
    """A net that cannot be exported (an unknown layer) or metadata that cannot be stored."""


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
        name = self._name(hint)
        self.weights.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, out: str | None = None,
           **attrs) -> str:
        name = out or self._name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [name], **attrs))
        return name


def _activation(g: _Graph, layer, h: str) -> str:
    """ONNX nodes for one torch activation layer."""
    kind = type(layer).__name__
    if kind in ("Sigmoid", "Tanh"):
        return g.op(kind, [h])
    if kind == "ReLU":
        return g.op("Relu", [h])
    if kind == "LeakyReLU":
        return g.op("LeakyRelu", [h], alpha=float(layer.negative_slope))
    if kind == "ELU":
        return g.op("Elu", [h], alpha=float(layer.alpha))
    if kind == "SiLU":  # x * sigmoid(x): ONNX has no SiLU operator at this opset
        return g.op("Mul", [h, g.op("Sigmoid", [h])], hint="silu")
    raise ExportError(f"cannot export a {kind} layer; exportable activations: Sigmoid, Tanh, ReLU, "
                      "LeakyReLU, ELU, SiLU")


def _linear(g: _Graph, layer, h: str, hint: str) -> str:
    w = layer.weight.detach().cpu().numpy().astype(np.float32)
    b = layer.bias.detach().cpu().numpy().astype(np.float32)
    # Gemm with transB computes h @ W.T + b, as torch's Linear does.
    return g.op("Gemm", [h, g.const(f"{hint}_w", w), g.const(f"{hint}_b", b)], hint=hint, transB=1)


def _value_net(g: _Graph, net, x: str, prefix: str, out: str | None = None) -> str:
    """Nodes of one ValueNet: hidden layers, the logits, then the probabilities built from them
    in the same order of operations as ``bgnet.nn.model.probs_from_logits``."""
    h = x
    for i, layer in enumerate(net.body):
        if type(layer).__name__ == "Linear":
            h = _linear(g, layer, h, f"{prefix}_hidden{i}")
        else:
            h = _activation(g, layer, h)
    s = g.op("Sigmoid", [_linear(g, net.head, h, f"{prefix}_logits")], hint=f"{prefix}_sigmoid")
    col = [g.op("Gather", [s, g.const("column", np.array([k], np.int64))], axis=1) for k in range(5)]
    win = col[0]
    wg = g.op("Mul", [win, col[1]], hint="wg")
    wbg = g.op("Mul", [wg, col[2]], hint="wbg")
    lose = g.op("Sub", [g.const("one", np.array(1.0, np.float32)), win], hint="lose")
    lg = g.op("Mul", [lose, col[3]], hint="lg")
    lbg = g.op("Mul", [lg, col[4]], hint="lbg")
    return g.op("Concat", [win, wg, wbg, lg, lbg], hint=f"{prefix}_probs", out=out, axis=1)


def build_model(net, metadata: dict | None = None) -> onnx.ModelProto:
    """The ONNX model of a :class:`~bgnet.nn.model.ValueNet` or
    :class:`~bgnet.nn.model.SplitValueNet`, with ``metadata`` (JSON-able values) stored as
    ``metadata_props``."""
    from bgnet.nn.model import SplitValueNet, ValueNet

    g = _Graph()
    width = int(net.num_inputs)
    inputs = [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, ["batch", width])]
    if isinstance(net, SplitValueNet):
        inputs.append(helper.make_tensor_value_info(RACE_INPUT, TensorProto.BOOL, ["batch"]))
        contact = _value_net(g, net.contact, INPUT, "contact")
        race = _value_net(g, net.race, INPUT, "race")
        mask = g.op("Unsqueeze", [RACE_INPUT, g.const("axes", np.array([1], np.int64))], hint="mask")
        g.op("Where", [mask, race, contact], out=OUTPUT)
    elif isinstance(net, ValueNet):
        _value_net(g, net, INPUT, "net", out=OUTPUT)
    else:
        raise ExportError(f"cannot export a {type(net).__name__}; exportable nets: ValueNet, SplitValueNet")
    outputs = [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", 5])]
    graph = helper.make_graph(g.nodes, "bgnet_value_net", inputs, outputs, g.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="bgnet", producer_version=_version())
    model.ir_version = IR_VERSION
    model.doc_string = ("bgnet value net: encoded positions -> probabilities (win, win gammon, win "
                        "backgammon, lose gammon, lose backgammon) for the side on roll")
    props = {}
    for key, value in (metadata or {}).items():
        try:
            props[str(key)] = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError) as e:
            raise ExportError(f"metadata {key!r} cannot be stored as JSON ({e})") from None
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
    from bgnet.nn.model import OUTPUTS, SplitValueNet

    split = isinstance(net, SplitValueNet)
    inputs = {INPUT: f"float32[batch, {net.num_inputs}]: positions encoded with '{net.encoding}', "
                     "side on roll first (bgnet.nn.encode.encode)"}
    if split:
        inputs[RACE_INPUT] = "bool[batch]: true where contact is over (bgnet.nn.encode.race_mask)"
    name = Path(source).stem if source else "bgnet"
    return {
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


def _write_atomic(path: Path, payload: bytes) -> None:
    write_atomic(path, payload)


def export_onnx(checkpoint_path: str | os.PathLike, out_path: str | os.PathLike,
                metadata: dict | None = None) -> Path:
    """Export the net of a training checkpoint to ``out_path`` (ONNX); returns the path.

    ``metadata`` adds to or overrides the default entries (see the module docstring); values must
    be JSON-able. A missing or unreadable checkpoint raises
    :class:`bgnet.nn.checkpoint.CheckpointError`.
    """
    from bgnet.nn.checkpoint import load_net

    net, data = load_net(checkpoint_path)
    meta = default_metadata(net, data, checkpoint_path)
    meta.update(metadata or {})
    model = build_model(net, meta)
    out = Path(out_path)
    _write_atomic(out, model.SerializeToString())
    return out


def max_difference(net, bot_path: str | os.PathLike, positions: int = 10000, seed: int = 0) -> dict:
    """Largest absolute difference between the torch net and the exported bot, over ``positions``
    self-play positions and as many afterstates spread over their moves:
    ``{"positions": d, "afterstates": d}``."""
    from bgnet.bots.torch_eval import NetEvaluator
    from bgnet.engine.movegen import generate_batch
    from bgnet.engine.sampling import sample_positions
    from bgnet.export.onnx_bot import OnnxEvaluator

    boards, dice = sample_positions(positions, seed=seed)
    after = generate_batch(boards, dice)[0]
    after = after[:: max(1, len(after) // positions)][:positions]
    torch_eval, onnx_eval = NetEvaluator(net, fast=False), OnnxEvaluator(bot_path)
    return {
        "positions": float(np.abs(torch_eval.positions(boards) - onnx_eval.positions(boards)).max()),
        "afterstates": float(np.abs(torch_eval.afterstates(after) - onnx_eval.afterstates(after)).max()),
    }


def export_main(argv: list[str]) -> int:
    """``bgnet export CHECKPOINT [--out BOT.onnx] [--name NAME] [--check N]``."""
    p = argparse.ArgumentParser(prog="bgnet export",
                                description="Export a training checkpoint as an ONNX bot that plays "
                                            "without torch (onnxruntime + numpy).",
                                epilog="example:\n  bgnet export runs/my-run/checkpoints/latest.pt "
                                       "--out my-bot.onnx",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="a training checkpoint (.pt)")
    p.add_argument("--out", help="the ONNX file to write (default: the checkpoint's name with .onnx)")
    p.add_argument("--name", help="the bot's name in its metadata (default: the checkpoint's name)")
    p.add_argument("--check", type=int, default=1000, metavar="N",
                   help="compare the export with the torch net on N positions (0: skip; default 1000)")
    a = p.parse_args(argv)
    if a.check < 0:
        p.error(f"--check must be 0 or more; got {a.check}")
    from bgnet.nn.checkpoint import CheckpointError, load_net

    out = Path(a.out) if a.out else Path(a.checkpoint).with_suffix(".onnx")
    if out.resolve() == Path(a.checkpoint).resolve():
        p.error("--out must differ from the checkpoint")
    try:
        path = export_onnx(a.checkpoint, out, {"name": a.name} if a.name else None)
    except (CheckpointError, ExportError) as e:
        print(f"bgnet export: {e}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({path.stat().st_size / 1024:.1f} KiB)")
    if a.check:
        diff = max_difference(load_net(a.checkpoint)[0], path, a.check)
        print(f"agreement with the torch net on {a.check} positions: max |difference| "
              f"{diff['positions']:.2e} (positions), {diff['afterstates']:.2e} (afterstates)")
        if max(diff.values()) > 1e-5:
            print("bgnet export: the export disagrees with the torch net by more than 1e-5",
                  file=sys.stderr)
            return 1
    return 0
