"""Checks a training config before anything runs, so a bad value fails at once, naming its key."""
from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from bgnet.nn.encode import ENCODINGS
from bgnet.nn.model import ACTIVATIONS


class ConfigError(ValueError):
    """A config value that cannot be used; the message names the key."""


def _get(cfg: DictConfig, key: str) -> Any:
    try:
        return OmegaConf.select(cfg, key, throw_on_missing=True)
    except Exception as e:  # missing mandatory value, interpolation error
        raise ConfigError(f"config key '{key}': {e}") from None


def _number(cfg, key, lo=None, hi=None, integer=False, allow_none=False, lo_open=False):
    v = _get(cfg, key)
    if v is None and allow_none:
        return
    ok_type = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok_type:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"config key '{key}' must be {kind}; got {v!r}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ConfigError(f"config key '{key}' must be {'>' if lo_open else '>='} {lo}; got {v!r}")
    if hi is not None and v > hi:
        raise ConfigError(f"config key '{key}' must be <= {hi}; got {v!r}")


def _choice(cfg, key, options):
    v = _get(cfg, key)
    if v not in options:
        raise ConfigError(f"config key '{key}' must be one of {', '.join(map(str, options))}; got {v!r}")


def validate(cfg: DictConfig) -> None:
    """Raise ConfigError for the first unusable value."""
    for section in ("model", "optim", "train", "eval"):
        if _get(cfg, section) is None:
            raise ConfigError(f"config section '{section}' is missing")
    _choice(cfg, "model.encoding", sorted(ENCODINGS))
    _choice(cfg, "model.activation", sorted(ACTIVATIONS))
    for key in ("model.hidden", "model.race_hidden"):
        v = _get(cfg, key)
        if v is None and key == "model.race_hidden":
            continue
        widths = list(v) if not isinstance(v, int) else [v]
        if not widths or any(isinstance(w, bool) or not isinstance(w, int) or w <= 0 for w in widths):
            raise ConfigError(f"config key '{key}' must be a list of positive layer widths; got {v!r}")
    _choice(cfg, "model.split", [True, False])
    _choice(cfg, "optim.name", ["adam", "sgd"])
    _number(cfg, "optim.lr", lo=0, lo_open=True)
    _number(cfg, "optim.lr_final", lo=0, allow_none=True)
    _number(cfg, "optim.weight_decay", lo=0)
    _choice(cfg, "train.mode", ["batched", "online"])
    _number(cfg, "train.games", lo=1, integer=True)
    _number(cfg, "train.parallel_games", lo=1, integer=True)
    _number(cfg, "train.lam", lo=0, hi=1)
    _number(cfg, "train.epsilon", lo=0, hi=1)
    _number(cfg, "train.batch_size", lo=1, integer=True)
    _number(cfg, "train.buffer_positions", lo=1, integer=True)
    _number(cfg, "train.epochs", lo=1, integer=True)
    _choice(cfg, "train.loss", ["mse", "bce"])
    if _get(cfg, "train.fast_cpu") is not None:  # absent in older configs: off
        _choice(cfg, "train.fast_cpu", [True, False])
    if _get(cfg, "train.search_target") is not None:  # absent in older configs: λ-returns alone
        _number(cfg, "train.search_target", lo=0, hi=1)
    if _get(cfg, "train.bearoff") is not None:  # absent in older configs: off
        _choice(cfg, "train.bearoff", [True, False])
    _number(cfg, "train.max_plies", lo=10, integer=True)
    _number(cfg, "train.checkpoint_every", lo=1, integer=True)
    _number(cfg, "train.keep_checkpoints", lo=1, integer=True)
    _number(cfg, "train.log_every", lo=1, integer=True)
    _number(cfg, "train.threads", lo=0, integer=True)
    _number(cfg, "eval.every", lo=0, integer=True)
    _number(cfg, "eval.games", lo=2, integer=True)
    _number(cfg, "eval.final_games", lo=0, integer=True)
    for key in ("eval.games", "eval.final_games"):
        if _get(cfg, key) % 2:
            raise ConfigError(f"config key '{key}' must be even (games are played in duplicate pairs); got {_get(cfg, key)}")
    opponents = _get(cfg, "eval.opponents")
    if opponents is None or isinstance(opponents, str):
        raise ConfigError(f"config key 'eval.opponents' must be a list such as [random, pubeval]; got {opponents!r}")
    _choice(cfg, "distributed", ["none", "ray"])
    _number(cfg, "seed", lo=0, integer=True)
    dev = _get(cfg, "device")
    if not isinstance(dev, str) or not (dev in ("cpu", "auto", "cuda") or dev.startswith("cuda:")):
        raise ConfigError(f"config key 'device' must be cpu, cuda, cuda:N or auto; got {dev!r}")
    if dev.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"config key 'device' is {dev!r} but this torch build sees no CUDA device")
