"""What ships inside the package: the bots and the training configs, found through
:mod:`importlib.resources`, so that an installed bgnet (a wheel, any working directory) has them
as a source checkout does.

In the source tree they are the folders ``checkpoints/`` (the shipped bots) and ``configs/``
(Hydra's configs, the recipes among them); ``pyproject.toml`` maps them into the package as
``bgnet.checkpoints`` and ``bgnet.configs``.

>>> sorted(SHIPPED_BOTS)
['bgnet-deep', 'bgnet-default']
>>> (config_dir() / "train.yaml").is_file()
True
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

# The bots that ship with bgnet, by the name a bot spec gives them, and their files.
SHIPPED_BOTS = {"bgnet-default": "bgnet-default.onnx", "bgnet-deep": "bgnet-deep.onnx"}
DEFAULT_BOT = "bgnet-default"


def config_dir() -> Path:
    """The folder of the training configs (``train.yaml``, ``model/``, ``recipe/`` ...)."""
    return Path(str(resources.files("bgnet.configs")))


def shipped_bot(name: str = DEFAULT_BOT) -> Path | None:
    """The file of the shipped bot ``name`` (a key of :data:`SHIPPED_BOTS`), or None when this
    installation lacks it."""
    path = Path(str(resources.files("bgnet.checkpoints"))) / SHIPPED_BOTS[name]
    return path if path.is_file() else None
