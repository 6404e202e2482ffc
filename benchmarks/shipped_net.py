"""The torch net a benchmark times, named as a bot is named: ``bgnet-deep`` or ``bgnet-default``
(a bot that ships with bgnet), an exported bot (``.onnx``) or a training checkpoint (``.pt``).
An exported bot becomes a torch net again through
:func:`bgnet.bots.torch_eval.net_of_exported_bot`, and a checkpoint through
:func:`bgnet.train.surgery.checkpoint_of_bot` (``bgnet checkpoint``).

The benchmarks that need a trained net default to ``bgnet-deep``; the figures in docs/RESULTS.md
name the net each was measured on.
"""
from __future__ import annotations

import shutil
from pathlib import Path

DEFAULT_NET = "bgnet-deep"


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
        from bgnet.bots.torch_eval import net_of_exported_bot

        return net_of_exported_bot(path)[0].eval()
    from bgnet.nn.checkpoint import load_net

    return load_net(path)[0].eval()


def write_checkpoint(name: str, out: str) -> None:
    """A training checkpoint of ``name`` at ``out`` to resume a run from: a copy of a ``.pt``, or
    an exported bot's net with its games and no optimizer state (Adam starts afresh)."""
    path = net_file(name)
    if path.endswith(".onnx"):
        from bgnet.train.surgery import checkpoint_of_bot  # as `bgnet checkpoint` writes it

        checkpoint_of_bot(path, out)
    else:
        shutil.copyfile(path, out)
