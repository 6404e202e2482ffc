"""Play an exported bot: onnxruntime, numpy and bgnet's compiled encoders, no torch.

:class:`OnnxEvaluator` runs the model written by :mod:`bgnet.export.onnx_export` on boards (it
encodes them with the encoding named in the model's metadata); :func:`load_onnx_bot` wraps it in
a :class:`~bgnet.bots.net.NetBot`, so the exported bot searches at 0, 1 or 2 ply exactly as the
torch net does. ``bgnet.Bot.load("bot.onnx")`` comes here.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from bgnet.bots.evaluator import Evaluator
from bgnet.nn.encode import ENCODINGS

FORMAT = "bgnet-bot"  # the tag bgnet.export.onnx_export writes
INPUT, RACE_INPUT, OUTPUT = "x", "is_race", "probabilities"


class BotFileError(ValueError):
    """An exported bot that cannot be used; the message names the file and what is wrong."""


def _session(path: Path, threads: int | None):
    import onnxruntime as ort

    if not path.exists():
        raise FileNotFoundError(f"exported bot {path} does not exist")
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
    return out


def read_metadata(path: str | os.PathLike) -> dict:
    """The metadata of an exported bot, JSON values decoded (see :mod:`bgnet.export.onnx_export`)."""
    path = Path(path)
    return _decode(path, _session(path, 1).get_modelmeta().custom_metadata_map)


class OnnxEvaluator(Evaluator):
    """Probabilities from an exported bot, for boards (see :class:`bgnet.bots.evaluator.Evaluator`).

    ``threads``: onnxruntime's intra-op threads (None: its default, all cores). ``compiled``: run
    the weights through bgnet's compiled forward pass when torch is installed (see the module's
    note); ``self.fast`` is that pass, or None where onnxruntime runs the model.
    """

    def __init__(self, path: str | os.PathLike, threads: int | None = None, compiled: bool = True):
        self.path = Path(path)
        self.session = _session(self.path, threads)
        self.metadata = _decode(self.path, self.session.get_modelmeta().custom_metadata_map)
        self.encoding = self.metadata.get("encoding")
        if self.encoding not in ENCODINGS:
            raise BotFileError(f"exported bot {self.path} uses encoding {self.encoding!r}, which this "
                               f"bgnet does not know (known: {', '.join(sorted(ENCODINGS))})")
        inputs = {i.name: i for i in self.session.get_inputs()}
        if INPUT not in inputs or [o.name for o in self.session.get_outputs()] != [OUTPUT]:
            raise BotFileError(f"exported bot {self.path} lacks the '{INPUT}' input or the "
                               f"'{OUTPUT}' output of a bgnet value net")
        width = inputs[INPUT].shape[1]
        if width != ENCODINGS[self.encoding]:
            raise BotFileError(f"exported bot {self.path} takes {width} inputs, but encoding "
                               f"'{self.encoding}' has {ENCODINGS[self.encoding]}")
        self.split = RACE_INPUT in inputs
        if compiled:
            self.fast = _compiled_forward(self)

    def _forward(self, x: np.ndarray, is_race: np.ndarray | None) -> np.ndarray:
        feeds = {INPUT: x}
        if self.split:
            feeds[RACE_INPUT] = np.ascontiguousarray(is_race, np.bool_)
        return self.session.run([OUTPUT], feeds)[0]


_WEIGHT = re.compile(r"^(?P<net>[a-z]+)_(?:hidden(?P<layer>\d+)|logits)_(?P<kind>[wb])_\d+$")


def _compiled_forward(ev: OnnxEvaluator):
    """bgnet's compiled forward pass over the model's weights, or None when torch is missing,
    the model's net config is unknown to this bgnet, or the pass disagrees with onnxruntime."""
    try:
        import onnx
        from onnx import numpy_helper

        from bgnet.nn.fast import FastForward, supports
        from bgnet.nn.model import net_from_config
    except ImportError:
        return None
    try:
        net = net_from_config(ev.metadata.get("net_config") or {})
        weights = {}
        for init in onnx.load(str(ev.path)).graph.initializer:
            m = _WEIGHT.match(init.name)
            if m:
                weights[(m["net"], m["layer"], m["kind"])] = numpy_helper.to_array(init)
        _load_weights(net, weights)
    except (KeyError, ValueError, TypeError):
        return None
    if not supports(net):
        return None
    fast = FastForward(net, frozen=True)  # an exported bot's weights never change
    # Same weights, same float32 arithmetic up to rounding: anything more is a mismatch of
    # layouts, and onnxruntime keeps the job.
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import generate_batch

    race = np.zeros((2, 25), np.int8)
    race[:, :6] = (3, 3, 3, 2, 2, 2)  # both sides home: a race, for the race net of a split model
    rng = np.random.default_rng(0)
    boards = np.stack([start_position()] * 32 + [race] * 32)
    after, _, _ = generate_batch(boards, rng.integers(1, 7, size=(64, 2)))
    ref = ev._run(after, True)  # ev.fast is not set yet: onnxruntime answers
    if not np.allclose(fast.swapped(after), ref, atol=1e-4):
        return None
    return fast


def _load_weights(net, weights: dict) -> None:
    """Copy exported weights (keyed by sub-net name, body index and w/b) into a torch net."""
    import torch

    subs = {"contact": net.contact, "race": net.race} if hasattr(net, "contact") else {"net": net}
    used = 0
    with torch.no_grad():
        for name, sub in subs.items():
            layers = [(str(i), m) for i, m in enumerate(sub.body) if type(m).__name__ == "Linear"]
            for key, layer in layers + [(None, sub.head)]:
                for kind, param in (("w", layer.weight), ("b", layer.bias)):
                    value = weights[(name, key, kind)]
                    if value.shape != tuple(param.shape):
                        raise ValueError(f"{name} weight shape {value.shape} != {tuple(param.shape)}")
                    param.copy_(torch.from_numpy(np.array(value, np.float32)))
                    used += 1
    if used != len(weights):
        raise ValueError("the model has weights the net config does not account for")


def load_onnx_bot(path: str | os.PathLike, ply: int | None = 0, name: str | None = None,
                  threads: int | None = None, search=None):
    """A :class:`~bgnet.bots.net.NetBot` playing an exported bot at ``ply`` (0, 1 or 2), without
    torch. Its ``meta`` is the model's metadata (training summary, strength, cube settings)."""
    from bgnet.bots.net import NetBot

    ev = OnnxEvaluator(path, threads)
    label = name or ev.metadata.get("name") or Path(path).stem
    return NetBot(ev, ply=0 if ply is None else ply, name=str(label), search=search,
                  meta=dict(ev.metadata, path=str(path)))
