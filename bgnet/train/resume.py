"""What a resumed run trains: the checkpoint's net and optimizer, the request's everything else.

A checkpoint fixes two things that a run cannot change midway: the net's architecture (``model.*``,
read from the checkpoint's ``net_config``, which rebuilt the weights and so cannot be wrong) and
the optimizer's kind (``optim.name``: Adam's moments are no SGD state). For those keys:

* a value given on the command line (``model=h160``, ``model.hidden=[160]``, ``optim=sgd``,
  ``optim.name=sgd``) that differs from the checkpoint's is refused with a :class:`ConfigError`
  naming the key, both values, and how to start a fresh run instead;
* a value that only comes from the defaults or from an ``+experiment=`` preset gives way to the
  checkpoint's, with a note. When the optimizer's kind is taken from the checkpoint, so are its
  learning rates and weight decay (those of the preset were meant for another optimizer),
  except the ones given on the command line.

Every other key (``train.games``, ``train.lam``, ``optim.lr`` of the same optimizer, ``eval.*``,
``seed`` ...) is the request's, and the run records the config it really ran.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from bgnet.train.config import ConfigError, ModelConfig, OptimConfig, RunConfig

FRESH_RUN = ("To train that instead, start a fresh run without resume= (it writes a new run "
             "directory); to continue this checkpoint, leave {key} off the command line.")


class Requested:
    """Which config keys a person asked for: those named by the command line's overrides
    (``model=h160`` names every ``model.*`` key). ``None`` overrides: every key counts as asked
    for (a config built in code, where nothing is a mere default)."""

    def __init__(self, overrides: Iterable[str] | None):
        self.all = overrides is None
        self.keys = set() if overrides is None else _override_keys(list(overrides))

    def __call__(self, key: str) -> bool:
        return self.all or any(key == k or key.startswith(k + ".") for k in self.keys)


def _override_keys(overrides: list[str]) -> set[str]:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return {o.key_or_group for o in OverridesParser.create().parse_overrides(overrides)}


def model_of_net(net_config: dict) -> ModelConfig:
    """The ``model:`` section that builds the net ``net_config`` describes."""
    if net_config.get("type") == "SplitValueNet":
        c, r = net_config["contact"], net_config["race"]
        return ModelConfig(encoding=c["encoding"], hidden=list(c["hidden"]),
                           activation=c.get("activation", "sigmoid"), split=True,
                           race_hidden=list(r["hidden"]), race_activation=r.get("activation", "sigmoid"))
    return ModelConfig(encoding=net_config["encoding"], hidden=list(net_config["hidden"]),
                       activation=net_config.get("activation", "sigmoid"), split=False, race_hidden=None)


def optimizer_kind(checkpoint: dict) -> str | None:
    """The checkpoint's optimizer kind: from its config, else from the optimizer state's shape."""
    name = ((checkpoint.get("config") or {}).get("optim") or {}).get("name")
    if name:
        return name
    groups = (checkpoint.get("optimizer_state") or {}).get("param_groups") or [{}]
    if "betas" in groups[0]:
        return "adam"
    if "momentum" in groups[0]:
        return "sgd"
    return None


def reconcile(run: RunConfig, checkpoint: dict, requested: Requested, path: str = "the checkpoint"
              ) -> tuple[RunConfig, list[str]]:
    """The config a resume of ``checkpoint`` trains with, and notes on what came from the
    checkpoint; raises ConfigError for an asked-for architecture or optimizer it cannot have."""
    notes: list[str] = []
    model = _reconcile_model(run.model, model_of_net(checkpoint["net_config"]), requested, path, notes)
    optim = _reconcile_optim(run.optim, checkpoint, requested, path, notes)
    return dataclasses.replace(run, model=model, optim=optim), notes


def _normal(m: ModelConfig) -> dict:
    d = dataclasses.asdict(m)
    # race_hidden means nothing without split, and null means "as hidden" with it.
    d["race_hidden"] = (list(m.race_hidden or m.hidden)) if m.split else None
    race_act = m.race_activation if m.race_activation is not None else m.activation
    d["race_activation"] = _one_name(race_act) if m.split else None
    d["activation"] = _one_name(m.activation)
    return d


def _one_name(activation):
    """A list naming one activation throughout is that activation (as the net records it)."""
    if isinstance(activation, list) and len(set(activation)) == 1:
        return activation[0]
    return activation


def _reconcile_model(want: ModelConfig, have: ModelConfig, requested: Requested, path: str,
                     notes: list[str]) -> ModelConfig:
    w, h = _normal(want), _normal(have)
    taken = []
    for key in w:
        if w[key] == h[key]:
            continue
        if requested(f"model.{key}"):
            raise ConfigError(
                f"config key 'model.{key}' is {w[key]!r}, but {path} holds a net with "
                f"model.{key}={h[key]!r}: a resumed run keeps its checkpoint's architecture. "
                + FRESH_RUN.format(key=f"model.{key} (and model=)"))
        taken.append(f"model.{key}={h[key]!r}")
    if taken:
        notes.append(f"the net's architecture is the checkpoint's: {', '.join(taken)}")
    return have


def _reconcile_optim(want: OptimConfig, checkpoint: dict, requested: Requested, path: str,
                     notes: list[str]) -> OptimConfig:
    kind = optimizer_kind(checkpoint)
    if kind is None or kind == want.name:
        return want
    if requested("optim.name"):
        raise ConfigError(
            f"config key 'optim.name' is {want.name!r}, but {path} was trained with optim.name="
            f"{kind!r}: a resumed run keeps its optimizer (its state cannot become another's). "
            + FRESH_RUN.format(key="optim.name (and optim=)"))
    stored = dict((checkpoint.get("config") or {}).get("optim") or {})
    fields = {f.name for f in dataclasses.fields(OptimConfig)}
    values = {k: v for k, v in stored.items() if k in fields}
    values["name"] = kind
    for key in fields - {"name"}:
        if requested(f"optim.{key}") or key not in values:
            values[key] = getattr(want, key)
    got = OptimConfig(**values)
    settings = ", ".join(f"optim.{k}={v!r}" for k, v in dataclasses.asdict(got).items())
    notes.append(f"the optimizer is the checkpoint's: {settings}")
    return got
