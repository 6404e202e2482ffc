"""The former home of the exported-bot evaluator, kept so that old imports keep working.

Exported bots are read and run by :mod:`bgnet.bots.onnx_eval` and made into bots by the one
loader, :mod:`bgnet.bots.load`; this module only re-exports their names.
"""
from __future__ import annotations

from bgnet.bots.load import load_net_bot as load_onnx_bot  # noqa: F401
from bgnet.bots.onnx_eval import FORMAT, INPUT, OUTPUT, RACE_INPUT, BotFileError, OnnxEvaluator, read_metadata  # noqa: F401
