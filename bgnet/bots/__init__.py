"""Players: the :class:`~bgnet.bots.base.Bot` interface, and the one loader that turns a spec or
a file into a bot (:mod:`bgnet.bots.load`: :func:`load_bot`, :func:`load_net_bot`,
:func:`default_bot_path`; ``bgnet.load_bot`` is :func:`load_bot`).

Modules: :mod:`~bgnet.bots.base` (the interface), :mod:`~bgnet.bots.load` (the loader),
:mod:`~bgnet.bots.net` (a value net's move choice and search), :mod:`~bgnet.bots.evaluator` with
:mod:`~bgnet.bots.torch_eval` and :mod:`~bgnet.bots.onnx_eval` (what runs the net: torch, or an
exported file without torch), :mod:`~bgnet.bots.simple`, :mod:`~bgnet.bots.pubeval` and
:mod:`~bgnet.bots.gnubg_bots` (the reference players; only the last needs GNU Backgammon).
"""
from __future__ import annotations

from bgnet.bots.base import Bot
from bgnet.bots.load import (  # noqa: F401
    BUILTIN_SPECS,
    DEFAULT_BOT_NAME,
    default_bot_path,
    load_bot,
    load_net_bot,
    with_ply,
)

__all__ = ["Bot", "load_bot", "load_net_bot", "with_ply", "default_bot_path", "BUILTIN_SPECS"]
