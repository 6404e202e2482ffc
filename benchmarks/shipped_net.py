"""The torch net a benchmark times, named as a bot is named: ``bgnet-deep`` or ``bgnet-default``
(a bot that ships with bgnet), an exported bot (``.onnx``) or a training checkpoint (``.pt``).
An exported bot becomes a torch net again through ``tools/checkpoint_from_onnx.py``.

The benchmarks that need a trained net default to ``bgnet-deep``; the figures in docs/RESULTS.md
name the net each was measured on.
"""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

DEFAULT_NET = "bgnet-deep"
_CONVERTER = Path(__file__).resolve().parents[1] / "tools" / "checkpoint_from_onnx.py"


def _converter():
    """``tools/checkpoint_from_onnx.py`` as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("checkpoint_from_onnx", _CONVERTER)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{_CONVERTER} is missing: run the benchmarks from a bgnet source checkout")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def net_file(name: str) -> str:
    """The file of ``name``: a shipped bot's ``.onnx``, or ``name`` itself."""
    from bgnet.resources import SHIPPED_BOTS, shipped_bot

    if name in SHIPPED_BOTS:
        path = shipped_bot(name)
        if path is None:
            raise SystemExit(f"{name} is not installed ({SHIPPED_BOTS[name]})")
        return str(path)
    if not Path(name).is_file():
        raise SystemExit(f"{name}: no such file (give a .pt checkpoint, a .onnx bot, or "
                         f"{' or '.join(SHIPPED_BOTS)})")
    return name


def torch_net(name: str):
    """The torch value net of ``name`` on the CPU, in eval mode."""
    path = net_file(name)
    if path.endswith(".onnx"):
        return _converter().torch_net_of(path)[0].eval()
    from bgnet.nn.checkpoint import load_net

    return load_net(path)[0].eval()


def write_checkpoint(name: str, out: str) -> None:
    """A training checkpoint of ``name`` at ``out`` to resume a run from: a copy of a ``.pt``, or
    an exported bot's net with its games and no optimizer state (Adam starts afresh)."""
    path = net_file(name)
    if path.endswith(".onnx"):
        _converter().main([path, out])
    else:
        shutil.copyfile(path, out)
