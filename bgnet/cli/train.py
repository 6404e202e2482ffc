"""The train family of verbs: ``bgnet train`` (the command line around
:func:`bgnet.train.loop.train`), ``bgnet distill`` (:mod:`bgnet.train.distill`) and ``bgnet
plot`` (:mod:`bgnet.train.curves`).

``bgnet train``: Hydra composes the config (:func:`bgnet.train.compose.compose_run`):
``configs/train.yaml`` (shipped inside the package, see :mod:`bgnet.resources`) with its groups
(``model/``, ``optim/``, ``recipe/``, ``experiment/``) and the command line's overrides. The run
writes into its folder: ``hydra.run.dir`` (a recipe names its own, ``runs/NAME``; the default is a
new ``runs/train-DATE_TIME``), or, with ``resume=CHECKPOINT``, the checkpoint's own run folder. A
folder that already holds ``checkpoints/latest.pt`` is resumed, so the command that started a
recipe also resumes it.

Errors take the path of every verb's (:func:`bgnet.cli.main`): a mistyped key, group or value is
one line and exit code 2, an unusable checkpoint exit code 3; a stop (Ctrl-C, SIGTERM) saves the
run, prints the command that resumes it and exits 130.
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from bgnet.bots.search import MARGIN
from bgnet.cli.arguments import ArgumentParser, output_file_arg, positive_arg, probability_arg, seed_arg
from bgnet.errors import EXIT_INTERRUPTED, BadArgument, BadInputFile

# ---------------------------------------------------------------------------------------------
# bgnet train

HELP = """\
usage: bgnet train [KEY=VALUE ...] [GROUP=OPTION ...] [+recipe=NAME] [resume=CHECKPOINT]

Train a backgammon value net by self-play TD(λ). Every setting is a config key, set on the
command line as KEY=VALUE (Hydra overrides); the defaults are in configs/train.yaml, and each
key is described there and in bgnet/train/config.py.

Config groups (pick one option each; the default is marked *):
{groups}
  +recipe=NAME        a whole training, phase by phase, in its own folder runs/NAME: deep (the
                      deep bot from zero), quick (a strong bot: about half an hour of two
                      cores with distributed=ray, about an hour in one process without it) or
                      expert (TD, then fits to the net's own 1-ply search, then one fast net
                      taught by it: runs/expert/student.pt); the same command resumes it
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
  bgnet train +recipe=quick distributed=ray          # a strong bot in about half an hour (2 cores)
  bgnet train +recipe=quick                          # the same in one process: about an hour
  bgnet train +recipe=deep                           # the deep bot from zero (run it again to resume)
  bgnet train +recipe=expert                         # TD, then the net's own search, then a fast student
  bgnet train model=h160 train.games=200000 hydra.run.dir=runs/h160
  bgnet train resume=runs/h160/checkpoints/latest.pt train.games=400000 optim.lr=0.0005
  bgnet train distributed=ray ray.workers=8 ray.address=auto

Outputs: RUN/checkpoints/{{latest.pt,games_*.pt,config.yaml}}, RUN/tb (TensorBoard),
RUN/history.json (the curve: bgnet plot RUN), RUN/app.log, RUN/config.yaml, RUN/summary.json.
"""


def help_text() -> str:
    """:data:`HELP` with the options of each config group, read from ``configs/``."""
    from bgnet.train.compose import CONFIG_DIR

    defaults = {"model": "h80", "optim": "adam"}
    lines = []
    for group in ("model", "optim", "recipe", "experiment"):
        names = sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))
        marked = [f"{n}*" if defaults.get(group) == n else n for n in names]
        lines.append(f"  {group + ':':<12s}{', '.join(marked)}")
    return HELP.format(groups="\n".join(lines) + "\n")


_ADDED_GROUPS = ("recipe", "experiment")  # config groups not among the defaults (configs/train.yaml)


def _as_override(flag: str, argv: list[str]) -> str:
    """'; did you mean train.games=10?' for ``--games 10`` where a config key has that name."""
    import dataclasses

    from bgnet.train.config import SECTIONS, RunConfig

    name, _, value = flag.lstrip("-").replace("-", "_").partition("=")
    if not value and flag in argv and argv.index(flag) + 1 < len(argv):
        value = argv[argv.index(flag) + 1]
    top = [name] if name in {f.name for f in dataclasses.fields(RunConfig)} - set(SECTIONS) else []
    keys = top + [f"{section}.{name}" for section, schema in SECTIONS.items()
                  if name in {f.name for f in dataclasses.fields(schema)}]
    return f"; did you mean {keys[0]}={value or 'VALUE'}?" if keys else ""


def train_main(argv: list[str]) -> int:
    """``bgnet train [KEY=VALUE ...]``: see :data:`HELP`."""
    if any(a in ("-h", "--help") for a in argv):
        print(help_text(), end="")
        return 0
    flags = [a for a in argv if a.startswith("-")]
    if flags:
        raise BadArgument(f"unknown option {flags[0]!r}: bgnet train takes KEY=VALUE overrides"
                          f"{_as_override(flags[0], argv)} (see bgnet train --help)")
    for group in _ADDED_GROUPS:
        named = next((a for a in argv if a.startswith(f"{group}=")), None)
        if named is not None:  # Hydra would say "unknown key": a group outside the defaults needs +
            raise BadArgument(f"{named}: the {group} group is added to the config with a +, "
                              f"as +{named}")
    argv = list(argv)
    resumed_dir = _resume_dir(argv)
    if resumed_dir is not None:
        # Continue in the resumed run's own folder: its checkpoints and logs stay together, and
        # no empty new folder is left behind.
        argv = [a for a in argv if not a.startswith("hydra.run.dir=")] + [f"hydra.run.dir={resumed_dir}"]
    from bgnet.train.compose import compose_run

    cfg, run_dir = compose_run(argv)
    return _train(cfg, run_dir, [a for a in argv if not a.startswith("hydra.")], argv)


def _resume_dir(argv: list[str]) -> str | None:
    """The run folder of a ``resume=CHECKPOINT`` (or ``resume=RUN``) on the command line; None
    without one. A checkpoint that is not there is refused here, before a run folder is named,
    made or written to."""
    for a in argv:
        if a.startswith("resume=") and a[len("resume="):] not in ("", "null"):
            from bgnet.nn.checkpoint import CheckpointError, checkpoint_file

            ck = checkpoint_file(a[len("resume="):])
            if not ck.is_file():
                raise CheckpointError(f"checkpoint {ck} does not exist")
            return str(ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent)
    return None


def _train(cfg, run_dir: Path, overrides: list[str], argv: list[str]) -> int:
    """Run the training in ``run_dir``; a stop prints the command that resumes it (exit 130)."""
    from bgnet.train.config import validate
    from bgnet.train.loop import Interrupted, train

    validate(cfg)  # a bad value is refused before a run folder is made for it
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
        started = time.perf_counter()
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
    if not summary.get("already_reached"):
        print(_time_taken(summary, time.perf_counter() - started))
        print(f"  curve: bgnet plot {run_dir}")
        print(f"  bot:   bgnet export {bot_of(cfg, run_dir)} --out {run_dir.name}.onnx")
        if not cfg.get("phases"):
            more = [a for a in argv if not a.startswith("train.games=")]
            print(f"  train on: {_resume_command(more, run_dir)} train.games=N (N above {summary['games']})")
    return 0


def bot_of(cfg, run_dir: Path) -> Path:
    """The checkpoint a finished run's bot is exported from: the net of its recipe's last student
    phase where it has one (a fast net taught by the run's own), else the run's latest.

    >>> bot_of({"phases": [{"name": "td"}, {"name": "fast", "distill": {"student": {"hidden": [8]}}}]}, Path("r"))
    PosixPath('r/fast.pt')
    >>> bot_of({}, Path("r"))
    PosixPath('r/checkpoints/latest.pt')
    """
    students = [p.get("name") for p in cfg.get("phases") or [] if (p.get("distill") or {}).get("student")]
    return run_dir / f"{students[-1]}.pt" if students else run_dir / "checkpoints" / "latest.pt"


def _time_taken(summary: dict, seconds: float) -> str:
    """'trained 30,008 games in 0:00:48 (0.01 core-hours)': this sitting's games and time
    (``seconds``, its final evaluation included), and the whole run's where it was resumed."""
    from bgnet.train.progress import clock

    played = summary["games"] - summary.get("games_at_start", 0)
    line = f"trained {played:,} games in {clock(seconds)}"
    if summary.get("games_at_start"):
        line += (f"; the run: {summary['games']:,} games, {clock(3600 * summary['wall_hours'])} "
                 f"over every sitting")
    return f"{line} ({summary['core_hours']:.2f} core-hours)"


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


# ---------------------------------------------------------------------------------------------
# bgnet distill


def distill_main(argv: list[str]) -> int:
    """``bgnet distill CKPT OUT --decisions N [--data FILE.npz] [--epochs E] [--lr X] ...``."""
    p = ArgumentParser(
        prog="bgnet distill",
        description="Fit a net to a teacher's search: to the values of a labels folder made by "
                    "bgnet label (--labels), or to its own 1-ply values of every close candidate of "
                    "self-play decisions, so that it chooses at 0-ply as it would at 1-ply; "
                    "export OUT or resume training from it.",
        examples=("bgnet distill bgnet-default student.pt --labels runs/labels/deep --epochs 4 "
                  "--lr 1e-4 --lr-final 1e-6 --batch-size 256",
                  "bgnet distill runs/my-run/checkpoints/latest.pt distilled.pt --decisions 200000 --workers 2",
                  "bgnet distill latest.pt distilled.pt --decisions 200000 --data samples.npz --epochs 3"))
    p.add_argument("checkpoint", help="the net to fit (a checkpoint, or an exported bot's net); "
                                      "without --labels, also the teacher")
    p.add_argument("out", type=output_file_arg, help="the checkpoint to write, in an existing folder")
    p.add_argument("--decisions", type=positive_arg(int, "--decisions"), default=100_000,
                   help="self-play contact decisions to draw (default 100000)")
    p.add_argument("--data", metavar="FILE.npz", default=None,
                   help="samples to fit: read from FILE when it exists, otherwise drawn and kept there")
    p.add_argument("--labels", metavar="FOLDER", action="append", default=None,
                   help="fit a teacher's values instead: a folder made by bgnet label (again for "
                        "more folders, fitted together)")
    p.add_argument("--keep", type=positive_arg(int, "--keep"), default=5,
                   help="candidates of a decision: the 0-ply best KEEP (default 5) ...")
    p.add_argument("--margin", type=positive_arg(float, "--margin"), default=MARGIN,
                   help=f"... within MARGIN equity of the best (default {MARGIN:g}, the search's)")
    p.add_argument("--epochs", type=positive_arg(int, "--epochs"), default=2,
                   help="passes over the samples (default 2)")
    p.add_argument("--lr", type=positive_arg(float, "--lr"), default=1e-5, help="Adam's rate (default 1e-5)")
    p.add_argument("--lr-final", type=positive_arg(float, "--lr-final"), default=None,
                   help="the rate falls linearly to this over the passes (default: constant)")
    p.add_argument("--batch-size", type=positive_arg(int, "--batch-size"), default=64, help="minibatch (default 64)")
    p.add_argument("--rank-weight", type=positive_arg(float, "--rank-weight"), default=0.0,
                   help="also fit the order of each decision's candidates, with this weight beside the "
                        "values' error (batches of whole decisions; default: values only)")
    p.add_argument("--workers", type=positive_arg(int, "--workers"), default=1,
                   help="processes drawing the decisions (default 1)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the dice and the passes (default 0)")
    a = p.parse_args(argv)
    if a.data and not Path(a.data).exists():
        try:  # checked before the long draw, so that its samples have somewhere to go
            output_file_arg(a.data)
        except argparse.ArgumentTypeError as e:
            raise BadArgument(f"--data: {e}") from None
    from bgnet.train.distill import distill_checkpoint

    if a.labels and a.data:
        raise BadArgument("--labels and --data are two sources of samples: give one")
    given = None
    if a.labels:
        from bgnet.train.distill import student_start
        from bgnet.train.labels import load_folders

        student_start(a.checkpoint)  # a bad start is refused before the labels are read
        given = load_folders(a.labels)
    distill_checkpoint(a.checkpoint, a.out, decisions=a.decisions, samples_file=a.data, given=given,
                       keep=a.keep, margin=a.margin, epochs=a.epochs, lr=a.lr, lr_final=a.lr_final,
                       batch_size=a.batch_size, workers=a.workers, seed=a.seed, rank_weight=a.rank_weight)
    return 0


# ---------------------------------------------------------------------------------------------
# bgnet label


def label_main(argv: list[str]) -> int:
    """``bgnet label TEACHER[@PLY] FOLDER --shards N [--workers W] ...``."""
    from bgnet.bots.load import split_ply

    p = ArgumentParser(
        prog="bgnet label",
        description="Value the close candidates of a teacher's self-play decisions by the teacher's "
                    "own search, into a folder of shards that `bgnet distill --labels` fits a net "
                    "to. The same command resumes a stopped labelling; more --shards adds to it.",
        examples=("bgnet label bgnet-deep@1 runs/labels/deep --shards 200 --workers 2",
                  "bgnet label runs/deep@1 runs/labels/mine --shards 50 --keep 8"))
    p.add_argument("teacher", help="a bgnet bot to learn from, with the depth of its values "
                                   "(default 1): bgnet-deep@1, runs/deep@2, bot.onnx@0")
    p.add_argument("folder", help="the labels folder: made, or filled on where it stopped")
    p.add_argument("--shards", type=positive_arg(int, "--shards"), required=True,
                   help="shards the folder should hold in the end (each --per-shard decisions)")
    p.add_argument("--per-shard", type=positive_arg(int, "--per-shard"), default=2048,
                   help="self-play contact decisions of one shard (default 2048)")
    p.add_argument("--keep", type=positive_arg(int, "--keep"), default=5,
                   help="candidates of a decision: the teacher's 0-ply best KEEP (default 5) ...")
    p.add_argument("--margin", type=positive_arg(float, "--margin"), default=MARGIN,
                   help=f"... within MARGIN equity of the best (default {MARGIN:g}, the search's)")
    p.add_argument("--no-singles", dest="singles", action="store_false",
                   help="skip decisions with a single candidate (kept by default: they teach the "
                        "values' level, which cube decisions read)")
    p.add_argument("--player", default="",
                   help="the bot whose self-play gives the positions (any spec, e.g. pubeval; "
                        "default: the teacher); the values are the teacher's all the same")
    p.add_argument("--explore", type=probability_arg("--explore"), default=0.0,
                   help="chance that a self-play move is a random legal one, for positions the "
                        "teacher's own games seldom reach (default 0)")
    p.add_argument("--workers", type=positive_arg(int, "--workers"), default=1,
                   help="processes labelling shards (default 1)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the games and dice (default 0)")
    a = p.parse_args(argv)
    teacher, ply = split_ply(a.teacher.strip())
    if ply is not None and not 0 <= ply <= 2:
        raise BadArgument(f"the depth of the values is 0 (the teacher's net itself, for a student of "
                          f"another shape), 1 or 2; got {a.teacher!r}")
    from bgnet.train.labels import LabelSettings, label

    settings = LabelSettings(teacher=teacher, ply=1 if ply is None else ply, keep=a.keep, margin=a.margin,
                             singles=a.singles, player=a.player, explore=a.explore, per_shard=a.per_shard,
                             seed=a.seed)
    done = label(a.folder, settings, a.shards, workers=a.workers)
    print(f"{a.folder}: {a.shards} shards of {settings.describe()} ({done} labelled now)")
    return 0


# ---------------------------------------------------------------------------------------------
# bgnet plot


def plot_main(argv: list[str]) -> int:
    """``bgnet plot RUN_DIR [--out PNG] [--metric ppg|win_rate] [--title TEXT]``."""
    from bgnet.train.curves import METRICS, plot_curves, read_run

    p = ArgumentParser(
        prog="bgnet plot",
        description="Draw a training run's learning curve (its evaluations against each opponent, "
                    "over self-play games and over core-hours, a recipe's phases marked) as a PNG.",
        examples=("bgnet plot runs/my-run", "bgnet plot runs/my-run --metric win_rate --out wins.png"))
    p.add_argument("run_dir", help="the run's folder (holding tb/)")
    p.add_argument("--out", type=output_file_arg, default=None,
                   help="the PNG to write (default RUN_DIR/learning_curve.png)")
    p.add_argument("--metric", choices=sorted(METRICS), default="ppg",
                   help="what to draw (default ppg)")
    p.add_argument("--title", default=None, help="the plot's title (default: the run's name)")
    a = p.parse_args(argv)
    run_dir = Path(a.run_dir)
    if not run_dir.is_dir():
        raise BadInputFile(f"no run folder {a.run_dir!r}: give the folder of a training run")
    out = Path(a.out) if a.out else run_dir / "learning_curve.png"
    if a.out is None:  # the default, next to the run: checked as --out would be
        try:
            output_file_arg(str(out))
        except argparse.ArgumentTypeError as e:
            raise BadArgument(f"{e}; give --out") from None
    curves, extra = read_run(run_dir, a.metric)
    for name, c in sorted(curves.items()):
        label = name if a.metric == "er" else f"vs {name}"
        print(f"{label}: " + ", ".join(f"{g}: {v:+.3f}" for g, v in c["value"]))
    plot_curves(curves, out, a.metric, a.title or f"learning curve: {run_dir.resolve().name}", extra)
    print(f"wrote {out}")
    return 0
