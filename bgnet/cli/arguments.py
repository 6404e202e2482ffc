"""What every verb's command line shares: how a person's mistakes become one-line errors, and the
argument types and parser the verbs use.

:func:`user_error_code` says whether an exception is a person's mistake (a
:class:`bgnet.errors.UserError`, the base of every such error class in the library, or a missing
file) and with which exit code; :func:`error_line` is its message on
one line. :class:`ArgumentParser` raises :class:`~bgnet.errors.BadArgument` instead of printing
its usage, and ends its help with examples. :func:`seed_arg`, :func:`device_arg`,
:func:`output_file_arg` and :func:`output_dir_arg` check arguments before any work starts, and
:func:`load_bot_arg` loads a bot named on a command line and says which kind of mistake a bad
name is. The ``bgnet`` command (:mod:`bgnet.cli`) and its families of verbs use them.
"""
from __future__ import annotations

import argparse
import os

from bgnet.engine.state import MAX_MATCH_LENGTH, read_match_length
from bgnet.errors import EXIT_INPUT, BadArgument, BadInputFile, UserError, shortened


def user_error_code(exc: BaseException) -> int | None:
    """The exit code of an exception that means a person's mistake (a
    :class:`~bgnet.errors.UserError`, whose class says its code, or a missing file); None for
    anything else (a bug, which should keep its traceback)."""
    if isinstance(exc, UserError):
        return exc.exit_code
    if isinstance(exc, FileNotFoundError):
        return EXIT_INPUT  # the verbs check their output folders first: a missing file is an input
    return None


def error_line(exc: BaseException) -> str:
    """The exception's message on one line, cut to a readable length
    (:func:`bgnet.errors.shortened`: it may quote a line of a hostile file)."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        text = f"{exc.strerror}: {exc.filename}"  # not "[Errno 2] ..."
    else:
        text = str(exc) or type(exc).__name__
    return shortened(" ".join(text.split()))


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


def whole_arg(what: str):
    """An argument type: a whole number from 0 up, else an error naming ``what``.

    >>> whole_arg("a number of games")("12")
    12
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise argparse.ArgumentTypeError(f"{what} is a whole number from 0 up; got {text!r}")
        return value
    return parse


# A seed of the dice: numpy's generators take no negative seed.
seed_arg = whole_arg("a seed")


def name_arg(text: str) -> str:
    """A player's name (``--name``), by the one rule of :mod:`bgnet.formats.names`: 1 to 40
    printable characters without ':'."""
    from bgnet.formats.names import player_name

    try:
        return player_name(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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


# Upper bounds of counts, far above any run one machine finishes, low enough that a slip of the
# keyboard (an extra digit or ten) is an error line rather than an attempt to fill the memory.
MAX_GAMES = 10_000_000
MAX_MATCHES = 1_000_000
MAX_TRIALS = 10_000_000
MAX_WORKERS = 256  # processes: far above the cores of one machine
MAX_BATCH = 1 << 16  # games in flight at once


def at_most(maximum: int, what: str):
    """An argument type: a whole number (ASCII digits, a sign allowed) no larger than
    ``maximum``; the verb checks the lower bound itself, in its own words.

    >>> at_most(256, "processes")("2")
    2
    """
    def parse(text: str) -> int:
        digits = text.strip().removeprefix("-")
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 12:
            raise argparse.ArgumentTypeError(f"must be a whole number of {what}, at most {maximum:,}; "
                                             f"got {text[:20]!r}")
        value = int(text)
        if value > maximum:
            raise argparse.ArgumentTypeError(f"at most {maximum:,} {what}; got {value:,}")
        return value
    return parse


def count_arg(maximum: int, minimum: int = 1):
    """An argument type: a whole number from ``minimum`` to ``maximum`` (``1e6`` reads as a number
    too), else an error giving the range (argparse names the option before it).

    >>> count_arg(100)("1e2"), count_arg(100)("7")
    (100, 7)
    """
    def parse(text: str) -> int:
        why = f"must be a whole number from {minimum:,} to {maximum:,}; got {text!r}"
        try:
            value = float(text) if any(c in text.lower() for c in ".e") else int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(why) from None
        if value != value or not minimum <= value <= maximum or value != int(value):
            raise argparse.ArgumentTypeError(why)
        return int(value)
    return parse


def match_length_arg(minimum: int = 0):
    """An argument type: a match length, ``minimum`` (0: money play allowed) to
    :data:`~bgnet.engine.state.MAX_MATCH_LENGTH`, GNU Backgammon's limit, in ASCII digits
    (:func:`~bgnet.engine.state.read_match_length`).

    >>> match_length_arg(1)("7")
    7
    """
    def parse(text: str) -> int:
        try:
            value = read_match_length(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"a match is 1 to {MAX_MATCH_LENGTH} points long; got {value}")
        return value
    return parse


def positive_arg(kind, what: str):
    """An argument type: ``kind`` (int or float) of ``text``, above 0 and finite, else an error
    naming ``what``."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{what} must be above 0; got {text!r}")
        return value
    return parse


def probability_arg(what: str):
    """An argument type: a number from 0 to 1, else an error naming ``what``.

    >>> probability_arg("--explore")("0.05")
    0.05
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 <= value <= 1:
            raise argparse.ArgumentTypeError(f"{what} must be a chance from 0 to 1; got {text!r}")
        return value
    return parse


def output_file_arg(text: str) -> str:
    """A file to write at the end of a verb's work, checked at the start so that no work is lost:
    its folder must exist and be writable, and it must not be a folder itself."""
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: give a file name")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: there is no folder {folder!r} "
                                         "(it does not exist; create it first)")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: the folder {folder!r} is not "
                                         "writable")
    return text


def output_dir_arg(text: str) -> str:
    """A folder to write into, created when missing, as :func:`output_file_arg` creates a file:
    refused when a file has its name, or when the folder it would be made in does not exist (a
    mistyped path makes no tree of folders)."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a file: give a folder for the outputs")
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(text) and not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"cannot make {text!r}: there is no folder {parent!r} "
                                         "(it does not exist; create it first)")
    return text


BOT_FORMS = ("an exported bot (.onnx), a checkpoint (.pt) or a training run's folder (PATH, or "
             "PATH@PLY for a search depth of 0, 1 or 2), a shipped bot (bgnet-default, bgnet-deep; "
             "@PLY too), gnubg:N (GNU Backgammon at N = 0 to 3 ply), pubeval, random or random:SEED; "
             "a net bot's spec may end in ,prune=NET[:K] or ,prune=none (a cheaper net ranks each "
             "roll's moves in its deeper plies; bgnet-deep prunes with bgnet-default unless told "
             "none)")


def load_bot_arg(spec: str | None, device: str = "cpu", ply: int | None = None):
    """Load the bot that ``spec`` names on a command line (None: the shipped default bot), at
    ``ply`` when a ``--ply`` was given (:func:`bgnet.bots.with_ply`, the one resolver of a bot
    and a depth; see :func:`bgnet.bots.load_bot` for the forms).

    A name that is neither a built-in bot nor a file raises :class:`BadArgument` listing the
    built-in ones; a missing bot file (a shipped bot missing from the installation included)
    raises :class:`BadInputFile`, as a corrupt one does (the loaders' own errors, which name the
    file). Other ``ValueError``s of the loader are mistakes in the spec (``gnubg:x``) and become
    :class:`BadArgument`."""
    from bgnet.bots import BUILTIN_SPECS, load_bot, with_ply
    from bgnet.bots.load import split_ply, split_pruning
    from bgnet.resources import SHIPPED_BOTS

    spec = with_ply(spec, ply)
    try:
        return load_bot(spec, device=device)
    except FileNotFoundError as e:
        path, prune = split_pruning(split_ply(spec)[0])
        if prune is not None and (os.path.exists(path) or path.lower() in SHIPPED_BOTS):
            raise BadInputFile(error_line(e)) from None  # the pruning net's file is missing
        if os.path.exists(path):
            raise  # something the bot needs is missing, not the file named
        if path.lower() in SHIPPED_BOTS or os.sep in path or "/" in path or os.path.splitext(path)[1]:
            raise BadInputFile(error_line(e) if path.lower() in SHIPPED_BOTS
                               else f"no such bot file: {path!r}") from None
        raise BadArgument(f"unknown bot {spec!r}: give the path of a checkpoint (.pt) or an "
                          f"exported bot (.onnx), optionally PATH@PLY, or one of "
                          f"{', '.join(BUILTIN_SPECS)}") from e
    except ValueError as e:
        if user_error_code(e) is not None:
            raise
        raise BadArgument(str(e)) from e
    except ImportError as e:  # a reference bot without its package: say what to install
        raise BadArgument(error_line(e)) from e
