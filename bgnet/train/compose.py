"""``bgnet train``: the command line around :func:`bgnet.train.loop.train`.

Hydra composes the config: ``configs/train.yaml`` (shipped inside the package, see
:mod:`bgnet.resources`) with its groups (``model/``, ``optim/``, ``recipe/``, ``experiment/``)
and the command line's overrides. The run writes into its folder: ``hydra.run.dir`` (a recipe
names its own, ``runs/NAME``; the default is a new ``runs/train-DATE_TIME``), or, with
``resume=CHECKPOINT``, the checkpoint's own run folder. A folder that already holds
``checkpoints/latest.pt`` is resumed, so the command that started a recipe also resumes it.

Errors take the path of every verb's (:func:`bgnet.cli.main`): a mistyped key, group or value is
one line and exit code 2, an unusable checkpoint exit code 3; a stop (Ctrl-C, SIGTERM) saves the
run, prints the command that resumes it and exits 130.
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from bgnet.errors import EXIT_INTERRUPTED, BadArgument
from bgnet.resources import config_dir

CONFIG_DIR = config_dir()

HELP = """\
usage: bgnet train [KEY=VALUE ...] [GROUP=OPTION ...] [+recipe=NAME] [resume=CHECKPOINT]

Train a backgammon value net by self-play TD(λ). Every setting is a config key, set on the
command line as KEY=VALUE (Hydra overrides); the defaults are in configs/train.yaml, and each
key is described there and in bgnet/train/config.py.

Config groups (pick one option each; the default is marked *):
{groups}
  +recipe=NAME        a whole training, phase by phase, in its own folder runs/NAME: deep (the
                      deep bot from zero) or quick (a strong bot in about half an hour); the
                      same command resumes it after a stop
  model=NAME          the net's architecture (model.*: encoding, hidden, activation, split ...)
  optim=NAME          the optimizer and its learning-rate schedule (optim.*)
  +experiment=NAME    a preset run (a longer CPU run, a GPU run); it sets many keys at once, and
                      later overrides still win
  distributed=ray     play the self-play games on Ray workers (ray.* settings) instead of in this
                      process (distributed=none, the default); everything else is the same

Resuming: a run folder that holds checkpoints/latest.pt is resumed by the command that made it
(with a recipe, or with hydra.run.dir=FOLDER). resume=RUN/checkpoints/latest.pt continues that
run in its own folder. The net's architecture (model.*) and the optimizer's kind (optim.name)
come from the checkpoint: given on the command line with another value they are refused (start
a fresh run for another architecture); from the defaults or a preset they give way to the
checkpoint's. Everything else is applied: train.games (the total, counted from zero), optim.lr,
train.lam, eval.* ... The config the run really trains with is written to RUN/config.yaml.

Examples:
  bgnet train                                        # the default run: 30,000 games, a few minutes
  bgnet train +recipe=quick distributed=ray          # a strong bot in about half an hour
  bgnet train +recipe=deep                           # the deep bot from zero (run it again to resume)
  bgnet train model=h160 train.games=200000 hydra.run.dir=runs/h160
  bgnet train resume=runs/h160/checkpoints/latest.pt train.games=400000 optim.lr=0.0005
  bgnet train distributed=ray ray.workers=8 ray.address=auto

Outputs: RUN/checkpoints/{{latest.pt,games_*.pt,config.yaml}}, RUN/tb (TensorBoard),
RUN/history.json (the curve: bgnet plot RUN), RUN/app.log, RUN/config.yaml, RUN/summary.json.
"""


def help_text() -> str:
    """:data:`HELP` with the options of each config group, read from ``configs/``."""
    defaults = {"model": "h80", "optim": "adam"}
    lines = []
    for group in ("model", "optim", "recipe", "experiment"):
        names = sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))
        marked = [f"{n}*" if defaults.get(group) == n else n for n in names]
        lines.append(f"  {group + ':':<12s}{', '.join(marked)}")
    return HELP.format(groups="\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(help_text(), end="")
        return 0
    flags = [a for a in argv if a.startswith("-")]
    if flags:
        raise BadArgument(f"unknown option {flags[0]!r}: bgnet train takes KEY=VALUE overrides "
                          "(see bgnet train --help)")
    argv = list(argv)
    resumed_dir = _resume_dir(argv)
    if resumed_dir is not None:
        # Continue in the resumed run's own folder: its checkpoints and logs stay together, and
        # no empty new folder is left behind.
        argv = [a for a in argv if not a.startswith("hydra.run.dir=")] + [f"hydra.run.dir={resumed_dir}"]
    cfg, run_dir = compose_run(argv)
    return _train(cfg, run_dir, [a for a in argv if not a.startswith("hydra.")], argv)


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


def _resume_dir(argv: list[str]) -> str | None:
    """The run folder of a ``resume=CHECKPOINT`` on the command line (None without one)."""
    for a in argv:
        if a.startswith("resume=") and a[len("resume="):] not in ("", "null"):
            ck = Path(a[len("resume="):])
            return str(ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent)
    return None


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


def _train(cfg, run_dir: Path, overrides: list[str], argv: list[str]) -> int:
    """Run the training in ``run_dir``; a stop prints the command that resumes it (exit 130)."""
    from bgnet.train.loop import Interrupted, train

    latest = run_dir / "checkpoints" / "latest.pt"
    if not cfg.get("resume") and latest.exists():
        # The same command resumes a run whose folder is fixed (a recipe's runs/NAME).
        cfg.resume = str(latest)
        print(f"resuming the run in {run_dir} (its folder holds {latest.name})")
    run_dir.mkdir(parents=True, exist_ok=True)
    log = _log_to(run_dir)
    try:
        print(f"run folder: {run_dir}", flush=True)
        _log_line("command: bgnet train" + "".join(" " + shlex.quote(a) for a in argv))
        summary = train(cfg, run_dir, overrides=overrides)
    except Interrupted as e:
        print(f"bgnet train: interrupted: {e}", file=sys.stderr)
        print(f"resume with: {_resume_command(argv, run_dir)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:  # before the run began: nothing new to save
        saved = " (its last checkpoint is as it was)" if latest.exists() else ""
        print(f"bgnet train: interrupted before training began{saved}", file=sys.stderr)
        print(f"resume with: {_resume_command(argv, run_dir)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        log()
    print(f"run folder: {run_dir}")
    if not summary.get("already_reached"):
        print(f"  curve: bgnet plot {run_dir}")
        print(f"  bot:   bgnet export {run_dir}/checkpoints/latest.pt --out {run_dir.name}.onnx")
        if not cfg.get("phases"):
            more = [a for a in argv if not a.startswith("train.games=")]
            print(f"  train on: {_resume_command(more, run_dir)} train.games=N (N above {summary['games']})")
    return 0


def _log_line(text: str) -> None:
    import logging

    logging.getLogger("bgnet.train").info(text)


def _resume_command(argv: list[str], run_dir: Path) -> str:
    """The command that goes on with the run in ``run_dir``: the same command where the folder
    is fixed (a recipe, or hydra.run.dir given), else the command with the folder named."""
    args = [a for a in argv if not a.startswith("resume=")]
    if not any(a.startswith("hydra.run.dir=") for a in args) and not _fixed_folder(args):
        args.append(f"hydra.run.dir={run_dir}")
    return "bgnet train" + "".join(" " + shlex.quote(a) for a in args)


def _fixed_folder(args: list[str]) -> bool:
    """Whether the composed config names its run folder itself (as a recipe does)."""
    return any(a.startswith("+recipe=") or a.startswith("recipe=") for a in args)


def _log_to(run_dir: Path):
    """Send the trainer's log lines (bgnet.train) to ``RUN/app.log``; returns the undo."""
    import logging

    run_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(run_dir / "app.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    logger = logging.getLogger("bgnet.train")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    def undo() -> None:
        logger.removeHandler(handler)
        handler.close()

    return undo
