"""``bgnet train``: the Hydra application around :func:`bgnet.train.loop.train`.

The configs live in the project's ``configs/`` directory (``train.yaml`` and the groups
``model/``, ``optim/``, ``experiment/``); a run writes into Hydra's output directory, a resumed
run into its checkpoint's run directory. ``bgnet train --help`` prints :data:`HELP` with the
options of each group; Hydra's own help stays under ``--hydra-help``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from bgnet.errors import EXIT_INPUT, EXIT_USAGE, UserError

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"

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
    if not (CONFIG_DIR / "train.yaml").exists():
        print(f"bgnet train: error: the configs directory is missing ({CONFIG_DIR}); install bgnet "
              "from its source tree (pip install -e .) so that configs/ is present", file=sys.stderr)
        return EXIT_USAGE
    outcome: dict = {}

    @hydra.main(config_path=str(CONFIG_DIR), config_name="train", version_base="1.3")
    def run(cfg: DictConfig) -> None:
        hydra_cfg = HydraConfig.get()
        out_dir = hydra_cfg.runtime.output_dir
        if cfg.get("resume"):
            # Continue in the resumed run's own directory: its checkpoints and logs stay together.
            ck = Path(cfg.resume).resolve()
            out_dir = str(ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent)
        outcome["code"] = _train(cfg, out_dir, list(hydra_cfg.overrides.task))

    saved = sys.argv
    sys.argv = ["bgnet train", *argv]
    try:
        run()
    finally:
        sys.argv = saved
    return outcome.get("code", 0)


def _train(cfg, out_dir: str, overrides: list[str]) -> int:
    """Run the training; a person's mistake is one line on standard error and its exit code."""
    from bgnet.nn.checkpoint import CheckpointError
    from bgnet.train.loop import train

    try:
        train(cfg, out_dir, overrides=overrides)
    except UserError as e:
        return _error(e, e.exit_code)
    except CheckpointError as e:  # an unusable resume= file
        return _error(e, EXIT_INPUT)
    except ValueError as e:
        return _error(e, EXIT_USAGE)
    return 0


def _error(e: Exception, code: int) -> int:
    message = " ".join(str(e).split())
    print(f"bgnet train: error: {message}", file=sys.stderr)
    return code
