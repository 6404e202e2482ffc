"""Reading a file a person names: a regular file only, and no more than a bounded size of it.

A path on a command line may name something that is no file at all: a folder, a FIFO (reading
it waits for a writer that may never come), a device such as ``/dev/zero`` (it never ends), or a
symbolic link to one of them. :func:`read_user_file` looks at what the path names (following
links) before opening it, opens it without waiting (``O_NONBLOCK``: a FIFO swapped in after the
look does not block either), looks again at what it opened, and reads at most ``limit`` bytes.
Whatever it refuses is a :class:`~bgnet.errors.BadInputFile` naming the path and why.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> read_user_file(folder)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bgnet.errors.BadInputFile: ... is a folder, not a file: give the path of a regular file
>>> fifo = os.path.join(folder, "pipe.mat")
>>> os.mkfifo(fifo)
>>> read_user_file(fifo, what="match file")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bgnet.errors.BadInputFile: ...pipe.mat' is a FIFO (a named pipe), not a match file: ...
>>> import shutil; shutil.rmtree(folder)
"""
from __future__ import annotations

import os
import stat

from bgnet.errors import BadInputFile

MAX_USER_FILE = 16 * 1024 * 1024  # bytes: far above any match file (a long session is a few MB)
_CHUNK = 1 << 20

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_user_file(path, *, limit: int = MAX_USER_FILE, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``limit`` of them;
    :class:`~bgnet.errors.BadInputFile` for a missing or unreadable path, anything that is not a
    regular file, or a file over the limit. ``what`` names the kind of file in messages."""
    name = os.fspath(path)
    try:
        _check_kind(os.stat(name), name, what, limit)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise BadInputFile(f"no such file: {name!r}") from None
    except OSError as e:
        raise BadInputFile(f"cannot read {name!r}: {e.strerror or e}") from None
    try:
        _check_kind(os.fstat(fd), name, what, limit)  # what was opened, if it changed since
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise BadInputFile(f"cannot read {name!r}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise BadInputFile(f"{name!r} is over {limit:,} bytes, more than any {what} holds")
    return b"".join(chunks)


def read_user_text(path, *, limit: int = MAX_USER_FILE, what: str = "file") -> str:
    """:func:`read_user_file` decoded: UTF-8 (a byte-order mark dropped), else Latin-1, which
    reads any bytes."""
    data = read_user_file(path, limit=limit, what=what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.removeprefix("\ufeff")


def _check_kind(st: os.stat_result, name: str, what: str, limit: int) -> None:
    if stat.S_ISREG(st.st_mode):
        if st.st_size > limit:
            raise BadInputFile(f"{name!r} is {st.st_size:,} bytes, more than any {what} holds "
                               f"(at most {limit:,})")
        return
    kind = next((k for test, k in _KINDS if test(st.st_mode)), "something other than a regular file")
    raise BadInputFile(f"{name!r} is {kind}, not a {what}: give the path of a regular file")
