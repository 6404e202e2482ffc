"""Checkpoints: written atomically, read with errors that name the file.

A checkpoint is one ``torch.save`` dict:

* ``format``: ``"bgnet-checkpoint"`` and ``version``;
* ``net_config`` / ``net_state``: rebuild the value net with :func:`bgnet.nn.model.net_from_config`;
* ``optimizer_state``, ``games`` (self-play games played), ``config`` (the run's resolved config as
  a plain dict), ``rng`` (numpy and torch generator states), ``metrics`` (last evaluation).

Writing goes to a temporary file in the same directory, is flushed to disk, then renamed over the
target, so a kill at any moment leaves either the old checkpoint or the new one, never half of one.
"""
from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import torch

from bgnet.atomic import write_atomic

FORMAT = "bgnet-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; the message names the file and what is wrong."""


def save_checkpoint(path: str | os.PathLike, payload: dict) -> Path:
    """Atomically write ``payload`` (plus format tags) to ``path``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = dict(payload)
    data["format"], data["version"] = FORMAT, VERSION
    buf = io.BytesIO()
    torch.save(data, buf)
    return write_atomic(path, buf.getvalue())


def load_checkpoint(path: str | os.PathLike, map_location: str = "cpu") -> dict:
    """Read a checkpoint; a missing, truncated, corrupt or foreign file raises CheckpointError."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.stat().st_size == 0:
        raise CheckpointError(f"checkpoint {path} is empty (0 bytes): it was never completely written")
    try:
        data = torch.load(path, map_location=map_location, weights_only=False)
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} is truncated or corrupt and cannot be read ({e})") from None
    except Exception as e:  # unpickling of arbitrary garbage can raise nearly anything
        raise CheckpointError(f"checkpoint {path} is not a readable bgnet checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a bgnet checkpoint (no '{FORMAT}' tag)")
    for key in ("net_config", "net_state"):
        if key not in data:
            raise CheckpointError(f"checkpoint {path} lacks '{key}'")
    return data


def load_net(path: str | os.PathLike, device: str = "cpu"):
    """The value net stored in a checkpoint, in eval mode on ``device``."""
    from bgnet.nn.model import net_from_config

    data = load_checkpoint(path)
    net = net_from_config(data["net_config"])
    try:
        net.load_state_dict(data["net_state"])
    except RuntimeError as e:
        raise CheckpointError(f"checkpoint {path}: weights do not fit the stored architecture ({e})") from None
    return net.to(device).eval(), data
