"""The ``bgnet`` command: one subcommand (verb) per thing a user does.

:data:`COMMANDS` is the table of verbs; each verb's arguments and its call live in the file of
its family in this package (``train``, ``nets``, ``measure``, ``play``, ``serve``, ``analyze``,
``positions``), which calls the domain modules with plain arguments and is imported only when
one of its verbs runs (so that ``bgnet play`` loads no torch).

:func:`main` is the one place where a person's mistakes become messages: an exception that means
one (a :class:`bgnet.errors.UserError`, which every such error class of the library derives
from, or a missing file) is printed as one line,
``bgnet VERB: error: MESSAGE``, and the command exits with the code of its kind (see
:mod:`bgnet.errors`). Any other exception is a bug and keeps its traceback.

The verbs' parsers share :mod:`bgnet.cli.arguments` (one-line parser errors, help with examples,
argument types checked before any work starts, and loading a bot named on the command line).
"""
from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from bgnet.cli.arguments import error_line, user_error_code
from bgnet.errors import EXIT_INTERRUPTED, EXIT_USAGE, require


def _verb(family: str, function: str) -> Callable[[list[str]], int]:
    """The verb ``function`` of the file of its ``family`` in this package (``bgnet.cli.FAMILY``),
    imported only when the verb runs."""

    def call(argv: list[str]) -> int:
        return getattr(importlib.import_module(f"{__name__}.{family}"), function)(argv)

    call.__qualname__ = call.__name__ = function
    return call


# What each verb needs beyond bgnet's own dependencies (numpy, numba, onnxruntime, tqdm): the
# training extra brings torch, Hydra, TensorBoard and matplotlib.
TRAINING = ("torch",)
NEEDS = {"train": ("torch", "hydra", "omegaconf", "tensorboard"), "export": ("torch", "onnx"),
         "widen": TRAINING, "deepen": TRAINING, "average": TRAINING, "merge": TRAINING, "distill": TRAINING,
         "checkpoint": TRAINING,
         "plot": ("matplotlib", "tensorboard")}

COMMANDS = {
    "train": (_verb("train", "train_main"),
              "train a bot by self-play (Hydra overrides, e.g. model=h160 train.games=100000)"),
    "moves": (_verb("positions", "moves_main"),
              "list the legal moves of a position"),
    "eval": (_verb("measure", "eval_main"),
             "play two bots against each other (points per game, 95 % interval)"),
    "bench": (_verb("measure", "bench_main"),
              "benchmarks: 'bench er' = checker-play error rate, 'bench cube' = cube decisions "
              "(cube-fit, cube-split)"),
    "export": (_verb("nets", "export_main"),
               "export a checkpoint as an ONNX bot that plays without torch (--out bot.onnx)"),
    "checkpoint": (_verb("nets", "checkpoint_main"),
                   "turn an exported bot back into a checkpoint to train on (BOT OUT.pt)"),
    "tournament": (_verb("measure", "tournament_main"),
                   "rate a run's checkpoints and reference bots against each other"),
    "play": (_verb("play", "play_main"),
             "play a bot in the terminal (--bot PATH, --match N, --save FILE.mat)"),
    "serve": (_verb("serve", "serve_main"),
              "play a bot in the browser and query it over HTTP (--bot, --port; wildbg's /move)"),
    "serve-external": (_verb("serve", "serve_external_main"),
                       "let GNU Backgammon play a bot as an external player (--port P)"),
    "ubgi": (_verb("play", "ubgi_main"),
             "run a bot as a UBGI engine on standard input and output (--bot, --ply)"),
    "rollout": (_verb("analyze", "rollout_main"),
                "roll out a position or the candidate moves of a roll (--trials N)"),
    "analyze": (_verb("analyze", "analyze_main"),
                "judge every checker play and cube decision of a .mat file"),
    "widen": (_verb("nets", "widen_main"),
              "widen a hidden layer of a checkpoint's net, same function, to train on (--contact N)"),
    "deepen": (_verb("nets", "deepen_main"),
               "insert an identity hidden layer into a checkpoint to train on (--after K)"),
    "average": (_verb("nets", "average_main"),
                "average the weights of a run's last checkpoints into one net (--last N --out OUT)"),
    "merge": (_verb("nets", "merge_main"),
              "merge nets trained apart into one net, the weighted mean of their logits (--out OUT)"),
    "label": (_verb("train", "label_main"),
              "value a teacher's self-play candidates by its search, in shards to distill from"),
    "distill": (_verb("train", "distill_main"),
                "fit a checkpoint's net to its own 1-ply values of close candidates (--decisions N)"),
    "plot": (_verb("train", "plot_main"),
             "draw a run's learning curve from its TensorBoard log (--out PNG)"),
}

# ---------------------------------------------------------------------------------------------
# a person's mistakes

EXAMPLES = (
    "bgnet play --match 5",
    "bgnet eval bgnet-default pubeval --games 1000",
    "bgnet train model=h160 train.games=100000",
)


def usage() -> str:
    """``bgnet --help``: the verbs, one line each, and a few examples."""
    lines = ["usage: bgnet [--version] <command> [args]   ('bgnet <command> --help' for its options)",
             "", "commands:"]
    lines += [f"  {name:<16s} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "examples:"] + [f"  {e}" for e in EXAMPLES]
    return "\n".join(lines)


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return f"bgnet {installed('bgnet')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "bgnet (version unknown: not installed)"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else EXIT_USAGE
    if argv[0] in ("-V", "--version"):
        print(version())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"bgnet: error: unknown command {name!r}; the commands are "
              f"{', '.join(COMMANDS)} (see 'bgnet --help')", file=sys.stderr)
        return EXIT_USAGE
    try:
        if not {"-h", "--help"} & set(rest):
            if name in NEEDS:
                require(NEEDS[name], "train", f"bgnet {name}")
        return COMMANDS[name][0](rest) or 0
    except KeyboardInterrupt:
        print(f"\nbgnet {name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        code = user_error_code(e)
        if code is None:
            raise  # a bug: its traceback says where
        print(f"bgnet {name}: error: {error_line(e)}", file=sys.stderr)
        return code


def run() -> int:
    """The ``bgnet`` program: :func:`main`, after which a late Ctrl-C (while the interpreter shuts
    down, the work done) no longer turns a finished command into a death by signal."""
    import signal

    try:
        code = main()
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error for the user. What
        # is still buffered goes nowhere, so the interpreter's last flush cannot fail either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == EXIT_INTERRUPTED:
        _forget_the_caught_interrupt()
    return code


def _forget_the_caught_interrupt() -> None:
    """CPython 3.11 marks a Ctrl-C as unhandled when it passes through ``eval`` of a string (as
    ``collections.namedtuple`` does while a module imports), even though bgnet caught it; run as
    ``python -m bgnet.cli`` the process then dies by SIGINT (-2) instead of exiting 130. Clear the
    mark where the interpreter exposes it."""
    import ctypes

    try:
        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (AttributeError, ValueError):  # another interpreter, or a version without the mark
        pass

