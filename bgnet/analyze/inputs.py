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

import re
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


__all__ = ["expand", "numbered", "read_match_file", "MATCH_SUFFIXES"]
