"""Play an exported bot: onnxruntime, numpy and bgnet's compiled encoders, no torch.

:class:`OnnxEvaluator` runs the model written by :mod:`bgnet.export.onnx_export` on boards (it
encodes them with the encoding named in the model's metadata); :func:`load_onnx_bot` wraps it in
a :class:`~bgnet.bots.net.NetBot`, so the exported bot searches at 0, 1 or 2 ply exactly as the
torch net does. ``bgnet.Bot.load("bot.onnx")`` comes here.
"""
from __future__ import annotations

import json
import os
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

    ``threads``: onnxruntime's intra-op threads (None: its default, all cores).
    """

    def __init__(self, path: str | os.PathLike, threads: int | None = None):
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

    def _forward(self, x: np.ndarray, is_race: np.ndarray | None) -> np.ndarray:
        feeds = {INPUT: x}
        if self.split:
            feeds[RACE_INPUT] = np.ascontiguousarray(is_race, np.bool_)
        return self.session.run([OUTPUT], feeds)[0]


def load_onnx_bot(path: str | os.PathLike, ply: int | None = 0, name: str | None = None,
                  threads: int | None = None, search=None):
    """A :class:`~bgnet.bots.net.NetBot` playing an exported bot at ``ply`` (0, 1 or 2), without
    torch. Its ``meta`` is the model's metadata (training summary, strength, cube settings)."""
    from bgnet.bots.net import NetBot

    ev = OnnxEvaluator(path, threads)
    label = name or ev.metadata.get("name") or Path(path).stem
    return NetBot(ev, ply=0 if ply is None else ply, name=str(label), search=search,
                  meta=dict(ev.metadata, path=str(path)))
