"""Errors that a person causes, and the exit codes the ``bgnet`` command gives them.

Every verb reports a person's mistake in one line on standard error, ``bgnet VERB: error: ...``,
and exits with the code of its kind, the same in every verb:

* ``2`` (:data:`EXIT_USAGE`): a bad argument or value on the command line: an unknown option, a
  seed below 0, an unknown device, a malformed Position ID, dice outside 1..6, an output path
  whose folder does not exist or that names a folder, a config value out of range;
* ``3`` (:data:`EXIT_INPUT`): an input file that cannot be used: missing, empty, truncated,
  corrupt, of the wrong kind, or one that would need running code to load;
* ``130``: interrupted (Ctrl-C).

Library code raises the exception classes below or its own subclasses of them (every error class
that means a person's mistake derives from :class:`UserError`, so its class says its exit code);
it never calls ``sys.exit`` itself.

A message often quotes what it could not use; what was sent may be a line of a megabyte, so a
message is cut to :data:`MAX_MESSAGE` characters (:func:`shortened`) wherever it leaves bgnet (the
command line, the HTTP API, UBGI), and :func:`quoted` quotes a piece of input at a readable length.
"""
from __future__ import annotations

EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_INTERRUPTED = 130

MAX_MESSAGE = 400  # characters of an error message: a hostile 1 MB line is not echoed whole
MAX_QUOTE = 120  # characters of input quoted inside a message


def shortened(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters, marked where it was cut.

    >>> shortened("x" * 500)[-12:], len(shortened("x" * 500))
    ('xxx... (cut)', 409)
    """
    return message if len(message) <= limit else message[:limit] + "... (cut)"


def quoted(text: str, limit: int = MAX_QUOTE) -> str:
    """``text`` quoted as ``repr`` quotes it, the first ``limit`` characters of a longer one and
    how long it was.

    >>> quoted("31: 8/5"), quoted("7" * 1000, 10)
    ("'31: 8/5'", "'7777777777'... (1000 characters)")
    """
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


class UserError(Exception):
    """A mistake in what a person asked for; ``exit_code`` is what the command exits with."""

    exit_code = EXIT_USAGE


class BadArgument(UserError, ValueError):
    """A command-line argument or value that cannot be used (exit code 2)."""

    exit_code = EXIT_USAGE


class BadInputFile(UserError, ValueError):
    """An input file that cannot be used: missing, corrupt, foreign or unsafe (exit code 3)."""

    exit_code = EXIT_INPUT


class MissingExtra(UserError):
    """A verb or a file that needs an optional part of bgnet that is not installed (exit code 2);
    the message names the extra that brings it, e.g. ``pip install 'bgnet[train]'``."""

    exit_code = EXIT_USAGE


def require(modules: tuple[str, ...], extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` unless every module of ``modules`` can be imported.

    >>> require(("numpy",), "train", "bgnet train")
    >>> try:
    ...     require(("no_such_module",), "train", "bgnet train")
    ... except MissingExtra as e:
    ...     print(e)
    bgnet train needs no_such_module, which comes with bgnet's 'train' extra: pip install 'bgnet[train]'
    """
    from importlib.util import find_spec

    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        them = "which comes" if len(missing) == 1 else "which come"
        raise MissingExtra(f"{what} needs {', '.join(missing)}, {them} with bgnet's '{extra}' "
                           f"extra: pip install 'bgnet[{extra}]'")
