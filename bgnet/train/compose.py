"""The training config as Hydra composes it for ``bgnet train`` (whose command line is in
:mod:`bgnet.cli.train`): ``configs/train.yaml`` (shipped inside the package, see
:mod:`bgnet.resources`, the folder :data:`CONFIG_DIR`) with its groups and the overrides, and
Hydra's or OmegaConf's complaint about an override said as bgnet says a config error.
"""
from __future__ import annotations

from pathlib import Path

from bgnet.resources import config_dir

CONFIG_DIR = config_dir()


def compose_run(overrides: list[str]):
    """The composed config of ``overrides`` (without Hydra's own node) and the run's folder;
    a mistyped key, group or value raises :class:`bgnet.train.config.ConfigError`."""
    from hydra import compose, initialize_config_dir
    from hydra.core.utils import setup_globals
    from hydra.errors import HydraException
    from omegaconf import OmegaConf, open_dict
    from omegaconf.errors import OmegaConfBaseException

    from bgnet.train.config import ConfigError

    setup_globals()  # Hydra's resolvers, ${now:...} among them
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name="train", overrides=overrides, return_hydra_config=True)
        run_dir = Path(str(cfg.hydra.run.dir))
    except (HydraException, OmegaConfBaseException) as e:
        raise ConfigError(_override_message(e)) from None
    with open_dict(cfg):
        del cfg["hydra"]
    OmegaConf.set_struct(cfg, False)
    return cfg, run_dir


def _override_message(e: Exception) -> str:
    """Hydra's or OmegaConf's complaint about an override, said the way bgnet says a config error:
    the key, what it must be, and for an unknown key the keys its section has."""
    import dataclasses
    import re

    from bgnet.train.config import SECTIONS, RunConfig

    text = " ".join(f"{e} {e.__cause__ or ''}".split())
    option = re.search(r"Could not find '([\w-]+)/([\w.-]+)' Available options in '[\w-]+': (.*?) "
                       r"Config search path", text)
    if option:
        group, name, options = option.groups()
        return f"{group}={name}: no such option; the options of '{group}' are {', '.join(options.split())}"
    key = re.search(r"full_key: ([\w.\[\]]+)", text) or re.search(r"Could not override '([\w.]+)'", text)
    value = re.search(r"Value '([^']*)'", text)
    kinds = (("to Integer", "a whole number"), ("to Float", "a number"), ("valid bool", "true or false"),
             ("not a ListConfig", "a list such as [1, 2]"))
    for marker, kind in kinds:
        if key and marker in text:
            got = f"; got {value.group(1)!r}" if value else ""
            return f"config key '{key.group(1)}' must be {kind}{got}"
    if key and ("not in struct" in text or "Could not override" in text or "not in '" in text):
        name = key.group(1)
        section = name.split(".", 1)[0]
        schema = SECTIONS.get(section)
        names = sorted(f.name for f in dataclasses.fields(schema if schema else RunConfig))
        where = f"'{section}' has" if schema else "the config has"
        return f"unknown config key '{name}'; {where}: {', '.join(names)}"
    return text
