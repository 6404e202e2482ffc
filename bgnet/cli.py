"""The ``bgnet`` command: one subcommand (verb) per thing a user does.

:func:`main` is the one place where a person's mistakes become messages: an exception that means
one (a :class:`bgnet.errors.UserError`, a missing file, or one of the library's own
``ValueError`` subclasses listed in :data:`USER_ERRORS`) is printed as one line,
``bgnet VERB: error: MESSAGE``, and the command exits with the code of its kind (see
:mod:`bgnet.errors`). Any other exception is a bug and keeps its traceback.

The verbs' parsers share the helpers below: :class:`ArgumentParser` (its errors are one line too,
and its help ends with examples), the argument types :func:`seed_arg`, :func:`device_arg`,
:func:`output_file_arg` and :func:`output_dir_arg`, and :func:`load_bot_arg`, which loads a bot
named on the command line and says which kind of mistake a bad name is.
"""
from __future__ import annotations

import argparse
import os
import sys

from bgnet.errors import (EXIT_INPUT, EXIT_INTERRUPTED, EXIT_USAGE, BadArgument, BadInputFile,
                          UserError)


def _cmd_moves(argv: list[str]) -> int:
    from bgnet.engine.api import legal_moves

    p = argparse.ArgumentParser(prog="bgnet moves", description="List every legal move of a position.")
    p.add_argument("position_id", help="GNU Backgammon Position ID (14 characters)")
    p.add_argument("dice", help="the roll, e.g. 31 or 3-1")
    a = p.parse_args(argv)
    digits = [c for c in a.dice if c.isdigit()]
    if len(digits) != 2 or not all("1" <= c <= "6" for c in digits):
        p.error(f"dice must be two numbers from 1 to 6, e.g. 31; got {a.dice!r}")
    try:
        moves = legal_moves(a.position_id, int(digits[0]), int(digits[1]))
    except ValueError as e:
        p.error(str(e))
    if not moves:
        print("no legal move: the turn passes")
    for i, (text, pid) in enumerate(moves, 1):
        print(f"{i:4d}. {text:<28s} {pid}")
    return 0


def _cmd_eval(argv: list[str]) -> int:
    from bgnet.evaluate.cli import eval_main

    return eval_main(argv)


def _cmd_bench(argv: list[str]) -> int:
    from bgnet.evaluate.cli import bench_main

    return bench_main(argv)


def _cmd_tournament(argv: list[str]) -> int:
    from bgnet.evaluate.cli import tournament_main

    return tournament_main(argv)


def _cmd_export(argv: list[str]) -> int:
    from bgnet.export.onnx_export import export_main

    return export_main(argv)


def _cmd_train(argv: list[str]) -> int:
    from bgnet.train.app import main as train_main

    return train_main(argv)


def _cmd_play(argv: list[str]) -> int:
    from bgnet.play.terminal import play_main

    return play_main(argv)


def _cmd_serve_external(argv: list[str]) -> int:
    from bgnet.play.external import serve_main

    return serve_main(argv)


COMMANDS = {
    "train": (_cmd_train, "train a bot by self-play (Hydra overrides, e.g. model=h160 train.games=100000)"),
    "moves": (_cmd_moves, "list the legal moves of a position"),
    "eval": (_cmd_eval, "play two bots against each other (points per game, 95 % interval)"),
    "bench": (_cmd_bench, "benchmarks: 'bench er' = checker-play error rate"),
    "export": (_cmd_export, "export a checkpoint as an ONNX bot that plays without torch (--out bot.onnx)"),
    "tournament": (_cmd_tournament, "rate a run's checkpoints and reference bots against each other"),
    "play": (_cmd_play, "play a bot in the terminal (--bot PATH, --match N, --save FILE.mat)"),
    "serve-external": (_cmd_serve_external, "let GNU Backgammon play a bot as an external player (--port P)"),
}

# ---------------------------------------------------------------------------------------------
# a person's mistakes

# The library's own exceptions that mean a person's mistake, by dotted class name (matching by
# name keeps this module light: checking for them imports neither torch nor onnxruntime). A
# class that becomes a UserError subclass is matched by that first, with its own exit code.
USER_ERRORS = {
    "bgnet.nn.checkpoint.CheckpointError": EXIT_INPUT,  # a checkpoint that cannot be read
    "bgnet.export.onnx_bot.BotFileError": EXIT_INPUT,  # an exported bot that cannot be read
    "bgnet.export.onnx_export.ExportError": EXIT_INPUT,  # a checkpoint whose net cannot be exported
    "bgnet.train.config.ConfigError": EXIT_USAGE,  # a training setting out of range
    "bgnet.engine.notation.IllegalMoveError": EXIT_USAGE,  # a move that cannot be played
    "bgnet.play.external.ProtocolError": EXIT_USAGE,  # a board line that cannot be read
}


def user_error_code(exc: BaseException) -> int | None:
    """The exit code of an exception that means a person's mistake; None for anything else
    (a bug, which should keep its traceback)."""
    if isinstance(exc, UserError):
        return exc.exit_code
    if isinstance(exc, FileNotFoundError):
        return EXIT_INPUT  # the verbs check their output folders first: a missing file is an input
    for cls in type(exc).__mro__:
        code = USER_ERRORS.get(f"{cls.__module__}.{cls.__qualname__}")
        if code is not None:
            return code
    return None


def error_line(exc: BaseException) -> str:
    """The exception's message on one line."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        text = f"{exc.strerror}: {exc.filename}"  # not "[Errno 2] ..."
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# shared by the verbs' parsers


class ArgumentParser(argparse.ArgumentParser):
    """A verb's parser: a mistake raises :class:`BadArgument` (one line from :func:`main`, exit
    code 2) instead of printing the usage; ``examples`` (command lines) end its help."""

    def __init__(self, *args, examples: tuple[str, ...] = (), **kwargs):
        if examples:
            kwargs["epilog"] = "examples:\n" + "\n".join(f"  {e}" for e in examples)
            kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise BadArgument(f"{message} (see '{self.prog} --help')")


def seed_arg(text: str) -> int:
    """A seed of the dice: a whole number from 0 up (numpy's generators take no negative seed)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 up; got {text!r}")
    return seed


def device_arg(text: str) -> str:
    """A torch device that exists here: cpu, cuda, cuda:N or mps."""
    if text == "cpu":
        return text  # needs no torch to check
    import torch

    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        device = None
    if device is None or device.type not in ("cpu", "cuda", "mps"):
        raise argparse.ArgumentTypeError(f"unknown device {text!r}: give cpu, cuda, cuda:N or mps")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise argparse.ArgumentTypeError(f"device {text!r}: torch sees no CUDA GPU here; use cpu")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise argparse.ArgumentTypeError(f"device {text!r}: there are {torch.cuda.device_count()} "
                                         "CUDA GPUs here, numbered from 0")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise argparse.ArgumentTypeError(f"device {text!r}: torch has no MPS (Apple GPU) here; use cpu")
    return text


def output_file_arg(text: str) -> str:
    """A file to write at the end of a verb's work, checked at the start so that no work is lost:
    its folder must exist and be writable, and it must not be a folder itself."""
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: give a file name")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: there is no folder {folder!r} "
                                         "(create it first)")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: the folder {folder!r} is not "
                                         "writable")
    return text


def output_dir_arg(text: str) -> str:
    """A folder to write into (created when missing); refused when a file has its name."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a file: give a folder for the outputs")
    return text


def load_bot_arg(spec: str, device: str = "cpu"):
    """Load the bot that ``spec`` names on a command line (see :func:`bgnet.bots.load_bot`).

    A name that is neither a built-in bot nor a file raises :class:`BadArgument` listing the
    built-in ones; a missing bot file raises :class:`BadInputFile`, as a corrupt one does (the
    loaders' own errors, which name the file). Other ``ValueError``s of the loader are mistakes
    in the spec (``gnubg:x``) and become :class:`BadArgument`."""
    from bgnet.bots import BUILTIN_SPECS, load_bot

    try:
        return load_bot(spec, device=device)
    except FileNotFoundError as e:
        path = spec.rpartition("@")[0] if spec.rpartition("@")[2].isdigit() else spec
        if os.path.exists(path):
            raise  # something the bot needs is missing, not the file named
        if os.sep in path or "/" in path or os.path.splitext(path)[1]:
            raise BadInputFile(f"no such bot file: {path!r}") from None
        raise BadArgument(f"unknown bot {spec!r}: give the path of a checkpoint (.pt) or an "
                          f"exported bot (.onnx), optionally PATH@PLY, or one of "
                          f"{', '.join(BUILTIN_SPECS)}") from e
    except ValueError as e:
        if user_error_code(e) is not None:
            raise
        raise BadArgument(str(e)) from e
    except ImportError as e:  # a reference bot without its package: say what to install
        raise BadArgument(error_line(e)) from e


EXAMPLES = (
    "bgnet play --match 5",
    "bgnet eval checkpoints/bgnet-default.onnx pubeval --games 1000",
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
    import bgnet

    return f"bgnet {bgnet.__version__}"


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
        return COMMANDS[name][0](rest) or 0
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error for the user.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"\nbgnet {name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        code = user_error_code(e)
        if code is None:
            raise  # a bug: its traceback says where
        print(f"bgnet {name}: error: {error_line(e)}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
