"""Where the bear-off tables are kept on disk, and how they are read back safely.

The tables are built once and cached as ``.npz`` files in ``$BGNET_CACHE`` if that is set, else in
``$XDG_CACHE_HOME/bgnet``, else in ``~/.cache/bgnet``. File names carry :data:`VERSION`, bumped
whenever the way a table is built changes, so an old file is never read as a new one. Files are
written atomically (:func:`bgnet.atomic.write_atomic`). A file that cannot be read, or whose arrays
fail their checks, is rebuilt with a warning; a cache directory that cannot be written only costs
a warning (the tables stay in memory).
"""
from __future__ import annotations

import io
import os
import sys
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bgnet.atomic import write_atomic

VERSION = 1
CACHE_ENV = "BGNET_CACHE"


def cache_dir() -> Path:
    """The directory of bgnet's cached files (it may not exist yet)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "bgnet"


def cache_path(name: str) -> Path:
    """Path of the cached table ``name`` at the current :data:`VERSION`.

    >>> cache_path("bearoff-onesided").name
    'bearoff-onesided-v1.npz'
    """
    return cache_dir() / f"{name}-v{VERSION}.npz"


class CacheError(ValueError):
    """A cached table that cannot be used; the message says why."""


def _read(path: Path, check: Callable[[dict], None]) -> dict:
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}  # reading each member checks its CRC
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise CacheError(f"cannot read it ({type(e).__name__}: {e})") from None
    check(arrays)
    return arrays


def _write(path: Path, arrays: dict) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    write_atomic(path, buf.getvalue())


def load_or_build(name: str, build: Callable[[], dict], check: Callable[[dict], None]) -> dict:
    """The arrays of table ``name``: read from the cache, or built by ``build()`` and cached.

    ``check(arrays)`` raises :class:`CacheError` for arrays that are not a valid table; a cached
    file failing it (or failing to load) is rebuilt with a warning, never an exception.
    """
    path = cache_path(name)
    if path.exists():
        try:
            return _read(path, check)
        except CacheError as e:
            warnings.warn(f"bear-off cache {path} is corrupt ({e}); rebuilding it", RuntimeWarning,
                          stacklevel=3)
    # A first build takes seconds: say so, so that a pause in play or training is not a mystery.
    print(f"bgnet: building the bear-off table {name} (once; cached in {path.parent})",
          file=sys.stderr, flush=True)
    arrays = build()
    check(arrays)  # a freshly built table that fails its checks is a bug, not a bad file
    try:
        _write(path, arrays)
    except OSError as e:
        warnings.warn(f"could not write the bear-off cache {path} ({e}); the table is kept in "
                      f"memory only (set {CACHE_ENV} to a writable directory)", RuntimeWarning,
                      stacklevel=3)
    return arrays
