"""bgnet: a backgammon bot trainer (TD(λ) self-play) and the bots it makes.

Playing an exported bot (onnxruntime and numpy only; no torch)::

    import bgnet
    bot = bgnet.load_bot("bot.onnx", ply=1)      # or a checkpoint (.pt), "bgnet-deep", or nothing
    bot.best_move("4HPwATDgc/ABMA", 3, 1)        # e.g. ('8/5 6/5', 'sGfwATDgc/ABMA')
    bot.evaluate_position("4HPwATDgc/ABMA").equity   # cubeless equity of the player on roll
    bot.cube_decision("4HPwATDgc/ABMA", "MAEAAAAAAAAE").action   # e.g. 'no_double'

Position IDs are GNU Backgammon's, with the player on roll to move; a next Position ID (from
``best_move`` or :func:`bgnet.engine.legal_moves`) has the opponent on roll, ready for its turn.

Importing ``bgnet`` is cheap: :class:`Bot` and :func:`load_bot` are loaded on first use.
"""
from __future__ import annotations

__all__ = ["Bot", "load_bot", "__version__"]


def __getattr__(name):
    # Lazy: `import bgnet` must stay light (no numba compilation, never torch).
    if name == "Bot":
        from bgnet.bots.base import Bot

        return Bot
    if name == "load_bot":
        from bgnet.bots.load import load_bot

        return load_bot
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("bgnet")
        except PackageNotFoundError:
            return "unknown"
    raise AttributeError(f"module 'bgnet' has no attribute {name!r}")
