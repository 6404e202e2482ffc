"""The files ``bgnet analyze`` is given: files, folders, or the name ``bgnet eval --save-mat``
was given.

``bgnet eval --matches 2 --save-mat m.mat`` writes ``m-001.mat`` and ``m-002.mat``; ``bgnet
analyze m.mat`` then means those files (when no ``m.mat`` itself exists). A folder means every
match file in it (``.mat`` and ``.sgf``), in name order. Each file is named once, in the order
given.

:func:`read_match_file` reads one: a regular file only (a FIFO, a device or a link to one is
refused before anything waits on it), of a bounded size, in either format.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from bgnet.engine.game import MatchRecord
from bgnet.errors import BadInputFile

MATCH_SUFFIXES = (".mat", ".sgf")


def numbered(path: Path) -> list[Path]:
    """The files ``STEM-NNN.SUFFIX`` beside ``path`` (``STEM.SUFFIX``), in number order."""
    pattern = re.compile(re.escape(path.stem) + r"-(\d+)" + re.escape(path.suffix) + "$")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.match(p.name)) and p.is_file()]
    return [p for _, p in sorted(found)]


def expand(inputs: list[str]) -> list[str]:
    """The match files ``inputs`` name (see the module docstring); BadInputFile for a name that
    is none of a file, a folder holding match files, or the name of numbered files.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for n in ("m-002.mat", "m-001.mat", "notes.txt"): open(os.path.join(d, n), "w").close()
    >>> [os.path.basename(p) for p in expand([os.path.join(d, "m.mat")])]
    ['m-001.mat', 'm-002.mat']
    >>> [os.path.basename(p) for p in expand([d])]
    ['m-001.mat', 'm-002.mat']
    """
    out: list[str] = []
    for text in inputs:
        path = Path(text)
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix.lower() in MATCH_SUFFIXES and p.is_file())
            if not files:
                raise BadInputFile(f"the folder {text!r} holds no match file (.mat or .sgf)")
            found = [str(p) for p in files]
        elif path.exists():
            found = [text]
        else:
            series = numbered(path)
            if not series:
                hint = (f" (nor {path.stem}-001{path.suffix} and so on, as bgnet eval --save-mat "
                        "writes them)") if path.suffix else ""
                raise BadInputFile(f"no such file: {text!r}{hint}")
            found = [str(p) for p in series]
        for f in found:
            if f not in out:
                check_text(f)
                out.append(f)
    return out


def read_match_file(path, *, jacoby: bool = False) -> tuple[MatchRecord, str]:
    """The match a file holds and its format, ``"sgf"`` (GNU Backgammon's own: the name ends
    ``.sgf`` or the text opens a game tree) or ``"mat"``. ``jacoby``: a ``.mat`` money session
    played with the Jacoby rule (a ``.sgf`` file says so itself). A file that cannot be used is a
    :class:`~bgnet.errors.BadInputFile` naming it, and the line where the text is at fault."""
    from bgnet.formats.files import read_user_text
    from bgnet.formats.mat import read_mat
    from bgnet.formats.sgf import read_sgf

    text = read_user_text(path, what="match file")
    kind = "sgf" if str(path).lower().endswith(".sgf") or text.lstrip().startswith("(") else "mat"
    try:
        record = read_sgf(text) if kind == "sgf" else read_mat(text, jacoby=jacoby)
    except ValueError as e:
        raise BadInputFile(f"{path}: {e}") from None
    if not record.games or not any(g.actions for g in record.games):
        raise BadInputFile(f"{path}: the file holds no game")
    return record, kind




# Bytes that no text file holds: the control characters other than tab, line feed, vertical tab,
# form feed, carriage return and escape.
_BINARY = frozenset(range(0x00, 0x09)) | frozenset(range(0x0E, 0x1B)) | frozenset(range(0x1C, 0x20))
# What a binary file given by mistake most likely is, by the start of its bytes or its name.
_KINDS = ((b"PK\x03\x04", None, "a zip archive, such as a training checkpoint (.pt)"),
          (b"\x89PNG", None, "a PNG image"),
          (b"\x1f\x8b", None, "a gzip archive"),
          (b"", ".onnx", "an exported bot (.onnx)"),
          (b"", ".pt", "a training checkpoint (.pt)"))


def check_text(path: str, sample: int = 4096) -> None:
    """A :class:`BadInputFile` for a file that holds binary data rather than the text of a match
    (a bot, a checkpoint, an image given by mistake), saying what it is not, and what it looks
    like where that can be told, without quoting its bytes. A file that cannot be read is left
    to the reader, which says why.

    >>> import tempfile, os
    >>> bot = os.path.join(tempfile.mkdtemp(), "mine.onnx")
    >>> _ = open(bot, "wb").write(b"\\x08\\x08\\x12\\x05bgnet\\x1a\\x050.1.0")
    >>> try:
    ...     check_text(bot)
    ... except BadInputFile as e:
    ...     print(str(e).split("; ")[1])
    it looks like an exported bot (.onnx) (a bot to analyse with is given as --bot FILE)
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return  # a FIFO or a device is never opened here: the reader refuses it before it waits
        with open(path, "rb") as f:
            head = f.read(sample)
    except OSError:
        return
    if not any(b in _BINARY for b in head):
        return
    suffix = Path(path).suffix.lower()
    kind = next((what for magic, ext, what in _KINDS
                 if (magic and head.startswith(magic)) or (ext and suffix == ext)), None)
    looks = f"; it looks like {kind}" if kind else ""
    bot = " (a bot to analyse with is given as --bot FILE)" if kind and ("bot" in kind or "checkpoint"
                                                                       in kind) else ""
    raise BadInputFile(f"{path} is not a match file (.mat or .sgf text): it holds binary data{looks}{bot}")


__all__ = ["expand", "numbered", "check_text", "read_match_file", "MATCH_SUFFIXES"]
