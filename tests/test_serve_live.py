"""``bgnet serve`` as people use it: the command on a loopback port, 200 concurrent ``/move``
requests from 20 clients, and headless Chromium playing a whole game on the page by clicking.

Chromium is Debian's ``chromium`` package, driven over the Chrome DevTools Protocol (the
``websocket-client`` package); the browser tests are skipped, saying why, without them.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, seconds: float, proc=None) -> bytes:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process stopped (exit {proc.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.read()
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"nothing answered at {url} within {seconds:g} s")


@pytest.fixture(scope="module")
def server():
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "bgnet.cli", "serve", "--port", str(port),
                             "--seed", "7"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{url}/health", 300, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_the_command_refuses_bad_arguments():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args, code, words in ((["--port", "70000"], 2, "port"), (["--ply", "5"], 2, "ply"),
                              (["--host", "not-an-address"], 2, "--host"),
                              (["--bot", "no/such/bot.onnx"], 3, "no such"),
                              (["--ply", "3"], 2, "0, 1 or 2")):
        r = subprocess.run([sys.executable, "-m", "bgnet.cli", "serve", *args], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == code, (args, r.stderr)
        assert "bgnet serve: error:" in r.stderr and words in r.stderr, r.stderr


def test_a_port_in_use_is_refused(server):
    port = server.rsplit(":", 1)[1]
    r = subprocess.run([sys.executable, "-m", "bgnet.cli", "serve", "--port", port], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and "choose another --port" in r.stderr, r.stderr


def test_200_concurrent_moves_from_20_clients_all_correct(server):
    from bgnet.play.web.loadtest import quantiles, run_load

    result = asyncio.run(run_load(server, requests=200, clients=20, seed=3))
    assert result["failures"] == []
    assert len(result["latencies"]) == 200
    q = quantiles(result["latencies"])
    print(f"\n/move latency ms: p50 {q['p50']:.1f}, p90 {q['p90']:.1f}, p99 {q['p99']:.1f}")


# ---------------------------------------------------------------------------------------------
# the browser


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """Headless Chromium driven over the DevTools Protocol: navigate, evaluate, click, type."""

    def __init__(self, exe: str, profile: Path):
        import websocket

        port = free_port()
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-proxy-server",
             "--no-first-run", f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
             "--window-size=1200,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(f"http://127.0.0.1:{port}/json/version", 60, self.proc)
        pages = [t for t in json.loads(wait_for(f"http://127.0.0.1:{port}/json/list", 10))
                 if t["type"] == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                              suppress_origin=True)
        self.next_id = 0
        self.send("Page.enable")
        self.send("Runtime.enable")

    def send(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def eval(self, expr: str):
        r = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait(lambda: self.eval("window.bgnetState ? window.bgnetState.id : null"), 60)

    def wait(self, cond, seconds: float = 60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            value = cond()
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError("the page did not get there in time")

    def click(self, selector: str, answered: bool = True) -> None:
        """Click the middle of ``selector`` with the mouse; with ``answered``, wait until the
        page has the server's answer."""
        before = self.eval("window.bgnetAnswers || 0")
        x, y = self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: "center"}}); const r = e.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1 if kind != "mouseMoved" else 0)
        if answered:
            self.wait(lambda: (self.eval("window.bgnetAnswers || 0") or 0) > before)

    def type(self, selector: str, text: str) -> None:
        self.click(selector, answered=False)
        self.send("Input.insertText", text=text)

    def state(self) -> dict:
        return self.eval("window.bgnetState")

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    exe = chromium_path()
    if exe is None:
        pytest.skip("no chromium on PATH: install Debian's chromium package for the browser tests")
    pytest.importorskip("websocket", reason="the browser tests drive chromium with websocket-client")
    b = Browser(exe, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def play_turn_by_clicking(b: Browser, s: dict) -> None:
    """One decision of the person, made with the mouse."""
    if s["phase"] == "roll":
        b.click("#roll")
    elif s["phase"] == "doubled":
        b.click("#take")
    else:
        for a, z in s["legal_moves"][0]["steps"]:
            b.click(f"#pt-{a}", answered=False)
            b.wait(lambda: b.eval("document.querySelector('.point.sel') !== null"), 10)
            b.click(f"#pt-{z}")
        assert b.state()["complete"], b.eval("document.getElementById('message').textContent")
        b.click("#confirm")


def is_drawn_board(path: Path) -> bool:
    """A screenshot shows the board: large areas of felt, and light and dark checkers."""
    import numpy as np
    from PIL import Image

    px = np.asarray(Image.open(path).convert("RGB").resize((300, 225)), np.int32).reshape(-1, 3)

    def share(rgb, tol=18):
        return float((np.abs(px - np.array(rgb)) <= tol).all(axis=1).mean())
    return share((0x2E, 0x5A, 0x3A)) > 0.08 and share((0xF4, 0xEF, 0xE4)) > 0.005 \
        and share((0x3B, 0x2A, 0x20)) > 0.005


@pytest.mark.slow
def test_a_whole_game_played_by_clicking(server, browser, tmp_path):
    browser.open(server + "/")
    browser.click("#start")  # a new money game
    s = browser.state()
    for _ in range(500):
        if s["game_over"]:
            break
        play_turn_by_clicking(browser, s)
        s = browser.state()
    assert s["game_over"] and s["winner"] in ("you", "bot") and s["points_won"] >= 1
    message = browser.eval("document.getElementById('message').textContent")
    assert "win" in message, message
    shot = browser.screenshot(tmp_path / "page.png")
    assert is_drawn_board(shot)
    blank = tmp_path / "blank.png"
    browser.send("Page.navigate", url="about:blank")
    time.sleep(0.5)
    assert not is_drawn_board(browser.screenshot(blank))


def test_a_typed_illegal_move_is_explained(server, browser):
    browser.open(server + "/")
    browser.click("#start")
    s = browser.state()
    while not (s["phase"] == "move" and s["turn"] == "you"):
        play_turn_by_clicking(browser, s)
        s = browser.state()
    browser.type("#move-text", "24/1")
    browser.click("#play-typed")
    message = browser.eval("document.getElementById('message').textContent")
    assert message.startswith("Illegal move:") and "23 pips" in message, message
    assert browser.eval("document.getElementById('message').className") == "error"
    assert browser.state()["points"] == s["points"]
