"""Players: the :class:`~bgnet.bots.base.Bot` interface and a factory that turns a short spec into
a bot.

Specs understood by :func:`load_bot`:

* ``random`` or ``random:SEED``: a uniform random legal move;
* ``pubeval``: Tesauro's public evaluator (needs ``bgnet[ref]``);
* ``gnubg:N``: GNU Backgammon's network at N-ply, N = 0..3 (``gnubg`` alone is 0-ply; needs
  ``bgnet[ref]``);
* anything else is a path to a checkpoint or an exported bot, optionally with a search depth:
  ``PATH@PLY``.

:func:`default_bot_path` finds the bot shipped with bgnet, ``checkpoints/bgnet-default.onnx`` at
the root of the source tree; ``Bot.load()`` without a path loads it.
"""
from __future__ import annotations

import os
from pathlib import Path

from bgnet.bots.base import Bot

__all__ = ["Bot", "load_bot", "default_bot_path", "BUILTIN_SPECS"]

DEFAULT_BOT_NAME = "bgnet-default.onnx"


def default_bot_path() -> Path | None:
    """The bot shipped with bgnet, ``checkpoints/bgnet-default.onnx`` next to the ``bgnet``
    package (the root of the source tree), when that file exists; otherwise None."""
    import bgnet

    path = Path(bgnet.__file__).resolve().parents[1] / "checkpoints" / DEFAULT_BOT_NAME
    return path if path.is_file() else None

BUILTIN_SPECS = ("random", "random:SEED", "pubeval", "gnubg:0", "gnubg:1", "gnubg:2")


def _parse_int(text: str, what: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} in bot spec {spec!r} must be a whole number; got {text!r}") from None


def _split_ply(spec: str) -> tuple[str, int | None]:
    """``PATH@PLY`` -> (PATH, PLY); a path without a numeric ``@`` suffix keeps ``None``."""
    path, at, ply = spec.rpartition("@")
    if at and path and ply.strip().isdigit():
        return path, int(ply)
    return spec, None


def load_bot(spec: str, device: str = "cpu") -> Bot:
    """Make the bot a spec names (see the module docstring for the forms)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("a bot spec is a non-empty string such as 'pubeval', 'gnubg:0' or a checkpoint path")
    s = spec.strip()
    low = s.lower()
    if low == "random" or low.startswith("random:"):
        from bgnet.bots.simple import RandomBot

        seed = _parse_int(s.split(":", 1)[1], "the seed", spec) if ":" in s else None
        return RandomBot(seed)
    if low == "pubeval":
        from bgnet.bots.gnubg_bots import PubevalBot

        return PubevalBot()
    if low == "gnubg" or low.startswith("gnubg:"):
        from bgnet.bots.gnubg_bots import GnubgBot

        ply = _parse_int(s.split(":", 1)[1], "the ply", spec) if ":" in s else 0
        return GnubgBot(ply)
    return _load_path_bot(s, device)


def _load_path_bot(spec: str, device: str) -> Bot:
    path, ply = _split_ply(spec)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no such checkpoint or bot: {path!r} (built-in opponents: {', '.join(BUILTIN_SPECS)})"
        )
    try:
        from bgnet.bots.net import load_net_bot
    except ModuleNotFoundError as e:
        if e.name in ("bgnet.bots.net",):
            raise RuntimeError(
                f"cannot load {path!r}: this installation has no network bots (bgnet.bots.net is missing)"
            ) from e
        raise
    # ply None: the bot's own default depth.
    return load_net_bot(path, ply=ply, device=device)
