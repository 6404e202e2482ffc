"""The games of ``bgnet serve`` on disk: one SQLite file, so that a restart resumes them.

One table, ``games``: a row per game, its id, its state as JSON (:meth:`WebGame.snapshot
<bgnet.play.web.games.WebGame.snapshot>`: the moves and decisions of the match, never a pickle)
and the time of its last change. The server writes a game's row after every change, restores
every row at start, and deletes the row of a game it drops.

The file is SQLite's own format (the standard library's ``sqlite3``, nothing to install), in
write-ahead-log mode with one connection guarded by a lock, so writes from any thread are safe,
and a ``kill -9`` loses at most the change being written. The connection holds SQLite's exclusive
lock while the server runs: a second server given the same file is refused at start rather than
having the two overwrite each other's games.

A file that is not a bgnet game database, a damaged one, or one whose games cannot be played
again is refused at start with :class:`GameDatabaseError` (a :class:`bgnet.errors.BadInputFile`)
that names the file and says what is wrong; nothing in it is changed, emptied or overwritten.
Its :data:`APPLICATION_ID` marks a file as bgnet's, ``user_version`` its :data:`VERSION`.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from bgnet.errors import BadInputFile

APPLICATION_ID = 0x62676E74  # "bgnt": the mark of a bgnet game database in SQLite's header
VERSION = 1
_SCHEMA = ("CREATE TABLE games (id TEXT PRIMARY KEY, state TEXT NOT NULL, "
           "updated REAL NOT NULL)")


class GameDatabaseError(BadInputFile):
    """A game database that cannot be used; the message names the file and what is wrong."""


def default_path() -> Path:
    """Where ``bgnet serve`` keeps its games unless ``--db`` says: ``bgnet/games.sqlite`` in the
    user's data folder (``$XDG_DATA_HOME``, else ``~/.local/share``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "bgnet" / "games.sqlite"


class GameDatabase:
    """The games' SQLite file at ``path``, created (with its folder) when it does not exist.
    GameDatabaseError when it cannot be opened as one (see the module docstring)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = self._open()

    # -- opening ---------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        path = self.path
        if path.exists() and not path.is_file():
            raise GameDatabaseError(f"game database {path} is not a regular file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise GameDatabaseError(f"cannot make the folder of the game database {path}: "
                                    f"{e.strerror or e}") from None
        new = not path.exists() or path.stat().st_size == 0
        try:
            db = sqlite3.connect(path, timeout=1.0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise GameDatabaseError(f"cannot open the game database {path}: {e}") from None
        try:
            self._claim(db)
            if new:
                self._create(db)
            else:
                self._check(db)
        except sqlite3.OperationalError as e:
            db.close()
            if "locked" in str(e) or "busy" in str(e):
                raise GameDatabaseError(
                    f"game database {path} is in use by another bgnet serve: give this one its "
                    "own file (--db PATH), or stop the other first") from None
            raise GameDatabaseError(self._damaged(e)) from None
        except sqlite3.DatabaseError as e:
            db.close()
            raise GameDatabaseError(self._damaged(e)) from None
        except GameDatabaseError:
            db.close()
            raise
        return db

    def _damaged(self, error: BaseException | str) -> str:
        return (f"game database {self.path} is damaged or not an SQLite file ({error}); it was "
                "left as it is: move it aside (or give another --db PATH) to start with no games")

    @staticmethod
    def _claim(db: sqlite3.Connection) -> None:
        """Hold SQLite's exclusive lock on the file from now until the connection closes: a
        write takes it, and locking mode EXCLUSIVE keeps it. SQLite reads the file's header
        first, so a file that is not SQLite fails here, unchanged."""
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
        db.execute("BEGIN EXCLUSIVE")
        db.execute("COMMIT")

    def _create(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # with WAL: a process killed loses nothing written
        db.execute("BEGIN")
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {VERSION}")
        db.execute(_SCHEMA)
        db.execute("COMMIT")

    def _check(self, db: sqlite3.Connection) -> None:
        path = self.path
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise GameDatabaseError(f"{path} is an SQLite file but not a bgnet game database "
                                    "(another program's?); it was left as it is: give another "
                                    "--db PATH")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != VERSION:
            raise GameDatabaseError(f"game database {path} is of version {version}; this bgnet "
                                    f"reads version {VERSION}")
        problems = [row[0] for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise GameDatabaseError(self._damaged(problems[0] if problems else "no answer"))
        columns = [row[1] for row in db.execute("PRAGMA table_info(games)")]
        if columns != ["id", "state", "updated"]:
            raise GameDatabaseError(self._damaged(f"its games table has columns {columns}"))
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")

    # -- games -----------------------------------------------------------------------------------

    def games(self) -> list[tuple[str, dict]]:
        """Every stored game, ``(id, state)``, the one changed longest ago first.
        GameDatabaseError for a row whose state is not a JSON object."""
        with self._lock:
            rows = self._db.execute("SELECT id, state FROM games ORDER BY updated, id").fetchall()
        out = []
        for gid, text in rows:
            try:
                state = json.loads(text)
            except (json.JSONDecodeError, TypeError):
                state = None
            if not isinstance(gid, str) or not isinstance(state, dict):
                raise GameDatabaseError(f"game database {self.path}: the game {gid!r} is not "
                                        "stored as a JSON object; the file was left as it is: "
                                        "move it aside to start with no games")
            out.append((gid, state))
        return out

    def save(self, gid: str, state: dict) -> None:
        """Write the game ``gid``'s ``state`` (JSON-able), replacing what was stored."""
        text = json.dumps(state, separators=(",", ":"))
        with self._lock:
            self._db.execute("INSERT INTO games (id, state, updated) VALUES (?, ?, ?) "
                             "ON CONFLICT (id) DO UPDATE SET state = excluded.state, "
                             "updated = excluded.updated", (gid, text, time.time()))

    def delete(self, gid: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM games WHERE id = ?", (gid,))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM games").fetchone()[0])

    def close(self) -> None:
        """Close the file (the lock is released; the log is folded into the file)."""
        with self._lock:
            self._db.close()


__all__ = ["GameDatabase", "GameDatabaseError", "default_path", "APPLICATION_ID", "VERSION"]
