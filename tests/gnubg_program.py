"""Where the GNU Backgammon program (Debian package ``gnubg``, run as ``gnubg -t -q`` with commands
on standard input) is installed, for the tests and maintainer scripts that check bgnet against it."""
from __future__ import annotations

import shutil
from pathlib import Path

CANDIDATES = ("gnubg", "/usr/games/gnubg", "/usr/local/games/gnubg")


def gnubg_program() -> str | None:
    """The GNU Backgammon program's path, or None where it is not installed."""
    for name in CANDIDATES:
        path = shutil.which(name) or (name if Path(name).is_file() else None)
        if path:
            return path
    return None
