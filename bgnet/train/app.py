"""``bgnet train``: the Hydra application around :func:`bgnet.train.loop.train`.

The configs live in the project's ``configs/`` directory (``train.yaml`` and the groups
``model/``, ``optim/``, ``experiment/``); a run writes into Hydra's output directory, a resumed
run into its checkpoint's run directory. ``bgnet train --help`` prints :data:`HELP` with the
options of each group; Hydra's own help stays under ``--hydra-help``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from bgnet.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_USAGE, UserError
from bgnet.resources import config_dir

CONFIG_DIR = config_dir()

HELP = """\
usage: bgnet train [KEY=VALUE ...] [GROUP=OPTION ...] [+experiment=NAME] [resume=CHECKPOINT]

Train a backgammon value net by self-play TD(λ). Every setting is a config key, set on the
command line as KEY=VALUE (Hydra overrides); the defaults are in configs/train.yaml, and each
key is described there and in bgnet/train/config.py.

Config groups (pick one option each; the default is marked *):
{groups}
  model=NAME          the net's architecture (model.*: encoding, hidden, activation, split ...)
  optim=NAME          the optimizer and its learning-rate schedule (optim.*)
  +experiment=NAME    a whole preset run (a longer run, a GPU run, a stage of the shipped bot's
                      training); it sets many keys at once, and later overrides still win
  distributed=ray     play the self-play games on Ray workers (ray.* settings) instead of in this
                      process (distributed=none, the default); everything else is the same

Resuming: resume=RUN/checkpoints/latest.pt continues that run in its own directory, from the
games it had played, with its net and its optimizer. The net's architecture (model.*) and the
optimizer's kind (optim.name) come from the checkpoint: given on the command line with another
value they are refused (start a fresh run, without resume=, for another architecture); from the
defaults or an experiment they give way to the checkpoint's. Everything else is applied:
train.games (the total, counted from zero), optim.lr, optim.lr_final, train.lam, eval.* ... The
config the run really trains with is written to RUN/config.yaml and beside each checkpoint.

Examples:
  bgnet train                                        # the default run: 30,000 games, a few minutes
  bgnet train model=h160 train.games=200000 hydra.run.dir=runs/h160
  bgnet train resume=runs/h160/checkpoints/latest.pt train.games=400000 optim.lr=0.0005
  bgnet train +experiment=strong_cpu hydra.run.dir=runs/strong
  bgnet train distributed=ray ray.workers=8 ray.address=auto

Outputs: RUN/checkpoints/{{latest.pt,games_*.pt,config.yaml}}, RUN/tb (TensorBoard),
RUN/config.yaml, RUN/summary.json. Hydra's own options: bgnet train --hydra-help
"""


def help_text() -> str:
    """:data:`HELP` with the options of each config group, read from ``configs/``."""
    defaults = {"model": "h80", "optim": "adam"}
    lines = []
    for group in ("model", "optim", "experiment"):
        names = sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))
        marked = [f"{n}*" if defaults.get(group) == n else n for n in names]
        lines.append(f"  {group + ':':<12s}{', '.join(marked)}")
    return HELP.format(groups="\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import DictConfig

    if any(a in ("-h", "--help") for a in argv):
        print(help_text(), end="")
        return 0
    argv = list(argv)
    code = _check_overrides(argv)
    if code:
        return code
    resumed_dir = _resume_dir(argv)
    if resumed_dir is not None:
        # Continue in the resumed run's own folder: its checkpoints and logs stay together, and
        # no empty new folder is left behind.
        argv = [a for a in argv if not a.startswith("hydra.run.dir=")] + [f"hydra.run.dir={resumed_dir}"]
    outcome: dict = {}

    @hydra.main(config_path=str(CONFIG_DIR), config_name="train", version_base="1.3")
    def run(cfg: DictConfig) -> None:
        hydra_cfg = HydraConfig.get()
        outcome["code"] = _train(cfg, hydra_cfg.runtime.output_dir, list(hydra_cfg.overrides.task), argv)

    saved = sys.argv
    sys.argv = ["bgnet train", *argv]
    try:
        run()
    finally:
        sys.argv = saved
    return outcome.get("code", 0)


def _resume_dir(argv: list[str]) -> str | None:
    """The run folder of a ``resume=CHECKPOINT`` on the command line (None without one)."""
    for a in argv:
        if a.startswith("resume=") and a[len("resume="):] not in ("", "null"):
            ck = Path(a[len("resume="):])
            return str(ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent)
    return None


def _check_overrides(argv: list[str]) -> int:
    """Compose the config once before Hydra runs it, so that a mistyped key or group is bgnet's
    one-line error (exit 2) rather than Hydra's traceback-like report (exit 1)."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    overrides = [a for a in argv if not a.startswith("-")]
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            compose(config_name="train", overrides=overrides)
    except (HydraException, OmegaConfBaseException) as e:
        return _error(_override_message(e), EXIT_USAGE)
    return 0


def _override_message(e: Exception) -> str:
    """Hydra's complaint about an override, said the way bgnet says a config error: an unknown
    key is named with the keys its section has."""
    import dataclasses
    import re

    from bgnet.train.config import SECTIONS, RunConfig

    text = " ".join(str(e).split())
    option = re.search(r"Could not find '([\w-]+)/([\w.-]+)' Available options in '[\w-]+': (.*?) "
                       r"Config search path", text)
    if option:
        group, name, options = option.groups()
        return f"{group}={name}: no such option; the options of '{group}' are {', '.join(options.split())}"
    unknown = re.search(r"Could not override '([\w.]+)'", text) or re.search(r"full_key: ([\w.]+)", text)
    if unknown:
        key = unknown.group(1)
        section = key.split(".", 1)[0]
        kind = SECTIONS.get(section)
        names = sorted(f.name for f in dataclasses.fields(kind if kind else RunConfig))
        where = f"'{section}' has" if kind else "the config has"
        return f"unknown config key '{key}'; {where}: {', '.join(names)}"
    return text


def _train(cfg, out_dir: str, overrides: list[str], argv: list[str]) -> int:
    """Run the training; a person's mistake is one line on standard error and its exit code."""
    from bgnet.nn.checkpoint import CheckpointError
    from bgnet.train.config import ConfigError
    from bgnet.train.loop import Interrupted, train

    run_dir = Path(out_dir)
    latest = run_dir / "checkpoints" / "latest.pt"
    if not cfg.get("resume") and latest.exists():
        # The same command resumes a run whose folder is fixed (a recipe's runs/NAME).
        with _open_struct(cfg):
            cfg.resume = str(latest)
        print(f"resuming the run in {run_dir} (its folder holds {latest.name})")
    log = _log_to(run_dir)
    print(f"run folder: {run_dir}")
    try:
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
    except ConfigError as e:
        return _error(e, e.exit_code)
    except UserError as e:
        return _error(e, e.exit_code)
    except CheckpointError as e:  # an unusable resume= file
        return _error(e, EXIT_INPUT)
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


class _open_struct:
    """Lets a key of a struct DictConfig be set (Hydra hands the config over locked)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        from omegaconf import OmegaConf

        OmegaConf.set_struct(self.cfg, False)

    def __exit__(self, *exc):
        from omegaconf import OmegaConf

        OmegaConf.set_struct(self.cfg, True)


def _resume_command(argv: list[str], run_dir: Path) -> str:
    """The command that goes on with the run in ``run_dir``: the same command where the folder
    is fixed (a recipe, or hydra.run.dir given), else the command with the folder named."""
    import shlex

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


def _error(e: Exception | str, code: int) -> int:
    message = " ".join(str(e).split())
    print(f"bgnet train: error: {message}", file=sys.stderr)
    return code
