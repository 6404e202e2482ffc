"""The games of ``bgnet serve`` kept in SQLite (``bgnet.play.web.database``): written after every
change, restored at start, a damaged or foreign file refused and left as it was; and the command
itself killed with ``kill -9`` and started again on the same file, its game going on."""
from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from bgnet.bots.base import Bot  # noqa: E402
from bgnet.engine.movegen import generate  # noqa: E402
from bgnet.play.web.app import create_app  # noqa: E402
from bgnet.play.web.database import GameDatabase, GameDatabaseError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class FirstMoveBot(Bot):
    """Plays the first legal move: a restored game is answered as the original would be."""

    name = "first"

    def choose_move(self, board, d1, d2):
        after, _ = generate(board, d1, d2)
        return after[0] if len(after) else board


def _app(database, **kw):
    return create_app(FirstMoveBot(), warm=False, database=database, **kw)


def _act(client, state, action, **body):
    r = client.post(f"/api/v1/games/{state['id']}/{action}", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _play_some(client, state, decisions: int):
    """A few of the person's decisions: roll, then the first legal move, or take a double."""
    for _ in range(decisions):
        if state["game_over"]:
            break
        if state["phase"] == "roll":
            state = _act(client, state, "roll")
        elif state["phase"] == "doubled":
            state = _act(client, state, "take")
        else:
            state = _act(client, state, "move", move=state["legal_moves"][0]["notation"])
    return state


# ---------------------------------------------------------------------------------------------
# the file


def test_games_are_written_and_read_back(tmp_path):
    db = GameDatabase(tmp_path / "sub" / "games.sqlite")  # the folder is made
    db.save("a", {"x": 1})
    db.save("b", {"y": [1, 2]})
    db.save("a", {"x": 2})
    db.delete("b")
    db.close()
    again = GameDatabase(tmp_path / "sub" / "games.sqlite")
    assert again.games() == [("a", {"x": 2})] and len(again) == 1
    again.close()


def test_concurrent_writes_from_many_threads_all_land(tmp_path):
    db = GameDatabase(tmp_path / "games.sqlite")
    errors = []

    def writer(k):
        try:
            for i in range(50):
                db.save(f"g{k}-{i % 10}", {"k": k, "i": i})
        except Exception as e:  # noqa: BLE001 - any failure is the test's finding
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    stored = dict(db.games())
    assert len(stored) == 80 and all(stored[f"g{k}-9"] == {"k": k, "i": 49} for k in range(8))
    db.close()


@pytest.mark.parametrize("content, words", [
    (b"this is not a database at all, just text\n" * 20, "damaged or not an SQLite file"),
    (os.urandom(8192), "damaged or not an SQLite file"),
])
def test_a_file_that_is_no_database_is_refused_and_left_as_it_was(tmp_path, content, words):
    path = tmp_path / "games.sqlite"
    path.write_bytes(content)
    with pytest.raises(GameDatabaseError, match=words) as err:
        GameDatabase(path)
    assert str(path) in str(err.value) and "left as it is" in str(err.value)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.sqlite"]


def test_another_programs_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE notes (text TEXT)")
        other.execute("INSERT INTO notes VALUES ('mine')")
    before = path.read_bytes()
    with pytest.raises(GameDatabaseError, match="not a bgnet game database"):
        GameDatabase(path)
    assert path.read_bytes() == before


def test_a_database_damaged_inside_is_refused(tmp_path):
    path = tmp_path / "games.sqlite"
    db = GameDatabase(path)
    for i in range(200):
        db.save(f"game-{i:03d}", {"log": ["x" * 200] * 3})
    db.close()
    raw = bytearray(path.read_bytes())
    page = 4096
    for at in range(2 * page, len(raw) - page, page):  # each table page's header
        raw[at:at + 8] = b"\xff" * 8
    path.write_bytes(bytes(raw))
    with pytest.raises(GameDatabaseError, match="damaged") as err:
        GameDatabase(path)
    assert str(path) in str(err.value)
    assert path.read_bytes() == bytes(raw)


def test_a_second_server_on_the_same_file_is_refused(tmp_path):
    path = tmp_path / "games.sqlite"
    first = GameDatabase(path)
    first.save("a", {"x": 1})
    code = ("import sys; from bgnet.play.web.database import GameDatabase, GameDatabaseError\n"
            "try:\n    GameDatabase(sys.argv[1])\nexcept GameDatabaseError as e:\n    print(e)")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert "in use by another bgnet serve" in r.stdout, r.stdout + r.stderr
    first.save("b", {"x": 2})  # the first goes on undisturbed
    first.close()
    assert [gid for gid, _ in GameDatabase(path).games()] == ["a", "b"]


# ---------------------------------------------------------------------------------------------
# the server's games


def test_a_restarted_app_resumes_each_game_where_it_was(tmp_path):
    path = tmp_path / "games.sqlite"
    db = GameDatabase(path)
    with TestClient(_app(db, seed=5)) as c:
        assert c.get("/health").json() | {"waiting": 0} == \
            {"ok": True, "waiting": 0, "games": 0, "restored": 0, "saved": True}
        a = _play_some(c, c.post("/api/v1/games", json={"match_length": 5, "name": "Ann"}).json(), 9)
        b = _play_some(c, c.post("/api/v1/games", json={"jacoby": True}).json(), 4)
        b = _act(c, b, "hint")
        mat_before = c.get(f"/api/v1/games/{a['id']}/mat").text
    db.close()
    db = GameDatabase(path)
    with TestClient(_app(db, seed=5)) as c:
        health = c.get("/health").json()
        assert health["restored"] == 2 and health["games"] == 2
        assert c.get(f"/api/v1/games/{a['id']}").json() == a
        assert c.get(f"/api/v1/games/{b['id']}").json() == b  # the hint, the log, the bot's moves
        assert c.get(f"/api/v1/games/{a['id']}/mat").text == mat_before
        after = _play_some(c, a, 4)  # and it goes on
        assert after["log_count"] > a["log_count"]
    db.close()


def test_the_dice_after_a_restart_are_the_dice_without_one(tmp_path):
    """The dice generator's state is kept: a game restored plays on exactly as if the server
    had never stopped."""
    def run(restart: bool):
        path = tmp_path / f"games-{restart}.sqlite"
        db = GameDatabase(path)
        with TestClient(_app(db, seed=9)) as c:
            s = _play_some(c, c.post("/api/v1/games", json={"match_length": 3}).json(), 6)
            if not restart:
                s = _play_some(c, s, 30)
        db.close()
        if restart:
            db = GameDatabase(path)
            with TestClient(_app(db, seed=9)) as c:
                s = _play_some(c, c.get(f"/api/v1/games/{s['id']}").json(), 30)
            db.close()
        return {k: v for k, v in s.items() if k != "id"}

    assert run(True) == run(False)


def test_dropped_games_leave_the_database_too(tmp_path):
    db = GameDatabase(tmp_path / "games.sqlite")
    with TestClient(_app(db, max_games=2)) as c:
        ids = [c.post("/api/v1/games", json={}).json()["id"] for _ in range(3)]
        assert c.get(f"/api/v1/games/{ids[0]}").status_code == 404
    assert sorted(gid for gid, _ in db.games()) == sorted(ids[1:])
    db.close()


def test_a_stored_game_that_cannot_be_restored_refuses_the_start(tmp_path):
    path = tmp_path / "games.sqlite"
    db = GameDatabase(path)
    with TestClient(_app(db)) as c:
        s = _play_some(c, c.post("/api/v1/games", json={"match_length": 3}).json(), 4)
    state = dict(db.games())[s["id"]]
    state["table"]["games"][0][0][3] = [[24, 2]]  # a move its dice never made
    db.save(s["id"], state)
    db.save("junk", {"table": "nonsense"})
    before = db.games()
    db.close()
    db = GameDatabase(path)
    with pytest.raises(GameDatabaseError, match="cannot be restored") as err:
        _app(db)
    db.close()
    assert str(path) in str(err.value) and "left as it is" in str(err.value)
    assert s["id"] in str(err.value)
    after = GameDatabase(path)
    assert after.games() == before  # nothing removed, nothing rewritten
    after.close()


# ---------------------------------------------------------------------------------------------
# the command: kill -9, start again, play on


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(db: Path, port: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bgnet.cli", "serve", "--port", str(port),
                             "--db", str(db), "--bot", "random:3", *extra], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _call(url: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def _wait_up(url: str, proc: subprocess.Popen, seconds: float = 300) -> dict:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the server stopped: {proc.stderr.read().decode()[-2000:]}")
        try:
            return _call(url, "/health")
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing answered at {url}")


def test_kill_9_then_start_again_and_the_game_goes_on(tmp_path):
    db = tmp_path / "games.sqlite"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _start(db, port)
    try:
        assert _wait_up(url, proc)["restored"] == 0
        s = _call(url, "/api/v1/games", {"match_length": 5, "name": "Ann"})
        while s["phase"] != "move":
            s = _call(url, f"/api/v1/games/{s['id']}/roll", {})
        s = _call(url, f"/api/v1/games/{s['id']}/move", {"move": s["legal_moves"][0]["notation"]})
        assert any(line.startswith("You play") for line in s["log"])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _start(db, port)
    try:
        health = _wait_up(url, proc)
        assert health["restored"] == 1 and health["saved"]
        assert _call(url, f"/api/v1/games/{s['id']}") == s
        while s["phase"] != "move" and not s["game_over"]:
            s = _call(url, f"/api/v1/games/{s['id']}/roll", {})
        if not s["game_over"]:
            nxt = _call(url, f"/api/v1/games/{s['id']}/move", {"move": s["legal_moves"][0]["notation"]})
            assert nxt["log_count"] > s["log_count"]
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_command_refuses_a_garbage_database_with_exit_3(tmp_path):
    db = tmp_path / "games.sqlite"
    db.write_bytes(b"garbage, not SQLite" * 100)
    r = subprocess.run([sys.executable, "-m", "bgnet.cli", "serve", "--port", str(_free_port()),
                        "--db", str(db)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr
    assert r.stderr.startswith("bgnet serve: error: game database ") and str(db) in r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    assert db.read_bytes() == b"garbage, not SQLite" * 100
