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
                             "--seed", "7", "--no-db"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
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
        r = subprocess.run([sys.executable, "-m", "bgnet.cli", "serve", *args, "--no-db"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == code, (args, r.stderr)
        assert "bgnet serve: error:" in r.stderr and words in r.stderr, r.stderr


def test_a_port_in_use_is_refused(server):
    port = server.rsplit(":", 1)[1]
    r = subprocess.run([sys.executable, "-m", "bgnet.cli", "serve", "--port", port, "--no-db"], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and "choose another --port" in r.stderr, r.stderr


def test_200_concurrent_moves_from_20_clients_all_correct(server):
    from serve_load import quantiles, run_load

    result = asyncio.run(run_load(server, requests=200, clients=20, seed=3))
    assert result["failures"] == [] and result["busy"] == 0
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
        self.events: list[dict] = []  # the protocol's events met while waiting for answers
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
            if "method" in msg:
                self.events = self.events[-200:] + [msg]

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
        """Click the middle of ``selector`` with the mouse (once the bot's move has been shown in
        motion); with ``answered``, wait until the page has the server's answer."""
        self.settled()
        before = self.eval("window.bgnetAnswers || 0")
        x, y = self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: "center"}}); const r = e.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1 if kind != "mouseMoved" else 0)
        if answered:
            self.wait(lambda: (self.eval("window.bgnetAnswers || 0") or 0) > before)

    def settled(self, seconds: float = 20) -> None:
        """Wait until no move of the bot is being shown in motion."""
        self.wait(lambda: not self.eval("window.bgnetAnimating === true"), seconds)

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
def start_anew(b: Browser) -> None:
    """Click Start, and answer yes where the page asks first (a game is in progress)."""
    b.settled()
    before = b.eval("window.bgnetAnswers || 0")
    b.click("#start", answered=False)
    if not b.eval("document.getElementById('start-confirm').hidden"):
        b.click("#start-yes")
    else:
        b.wait(lambda: (b.eval("window.bgnetAnswers || 0") or 0) > before)


def test_a_whole_game_played_by_clicking(server, browser, tmp_path):
    browser.open(server + "/")
    start_anew(browser)  # a new money game
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
    start_anew(browser)
    message = browser.eval("document.getElementById('message').textContent")
    assert message.startswith(("Game 1. Opening roll: you ", "Opening roll: you ")), message
    # The log's lines read as sentences in the message, those without a stop of their own too.
    said = browser.eval("statusText({game_over: true}, ['Game 1', 'Opening roll: you 5, bot 3; you start.'])")
    assert said == "Game 1. Opening roll: you 5, bot 3; you start.", said
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


# ---------------------------------------------------------------------------------------------
# what the page shows: the bot's move, its double, where a checker may go, the hint table, pips,
# the kind of game, resigning, Jacoby, a phone


def new_page_game(b: Browser, url: str, length: str = "0", jacoby: bool = False) -> dict:
    """Open the page and start a game of the kind chosen in the New form."""
    b.open(url + "/")
    b.eval(f"document.getElementById('length').value = {json.dumps(length)}; "
           "document.getElementById('length').dispatchEvent(new Event('change'))")
    if jacoby:
        b.eval("document.getElementById('jacoby').checked = true")
    start_anew(b)
    return b.state()


def to_my_move(b: Browser, s: dict) -> dict:
    while not (s["phase"] == "move" and s["turn"] == "you"):
        assert not s["game_over"]
        b.click("#roll" if s["phase"] == "roll" else "#take")
        s = b.state()
    b.settled()
    return s


def shown(b: Browser, selector: str) -> list[dict]:
    """The elements ``selector`` finds: their data attributes and text."""
    return b.eval(f"""[...document.querySelectorAll({json.dumps(selector)})].map(e =>
        Object.assign({{text: e.textContent}}, e.dataset))""")


def watch_ghosts(b: Browser) -> None:
    """Note in window.sawGhost whether a checker is drawn in motion from now on."""
    b.eval("""window.sawGhost = false; new MutationObserver(() => {
        if (document.querySelector('#board .ghost')) window.sawGhost = true;
    }).observe(document.getElementById('board'), {childList: true, subtree: true}); true""")


@pytest.mark.slow
def test_the_bots_move_is_shown_with_its_dice_and_each_checkers_way(server, browser):
    s = new_page_game(browser, server)
    for _ in range(40):
        s = to_my_move(browser, s)
        watch_ghosts(browser)
        play_turn_by_clicking(browser, s)
        browser.settled()
        s = browser.state()
        if s["game_over"]:
            s = new_page_game(browser, server)
            continue
        if s["bot_moves"] and s["bot_moves"][-1]["steps"]:
            break
    move = s["bot_moves"][-1]
    assert browser.eval("window.sawGhost"), "the bot's checkers were not shown in motion"
    dice = sorted(int(d["value"]) for d in shown(browser, "#board .die.bot"))
    assert dice == sorted(move["dice"])
    # The person's numbering of the bot's point p is 25 - p; the marks name the bot's bar 25, off 0.
    starts = {25 if st["from"] == 25 else 25 - st["from"] for st in move["steps"]}
    ends = {0 if st["to"] == 0 else 25 - st["to"] for st in move["steps"]}
    froms = {int(d["point"]) for d in shown(browser, "#bot-move .bot-from")}
    tos = {int(d["point"]) for d in shown(browser, "#bot-move .bot-to")}
    assert froms and froms <= starts and tos and tos <= ends, (move, froms, tos)
    assert shown(browser, "#bot-move")[0]["move"] == move["notation"]


@pytest.fixture(scope="module")
def doubling_server():
    """A server in this process whose bot doubles at its first chance (a take)."""
    import threading

    import uvicorn

    from bgnet.bots.base import Bot
    from bgnet.engine.movegen import generate
    from bgnet.play.web.app import create_app

    class DoublingBot(Bot):
        """Plays the first legal move and sees itself a strong favourite everywhere."""

        name = "doubler"

        def choose_move(self, board, d1, d2):
            after, _ = generate(board, d1, d2)
            return after[0] if len(after) else board

        def evaluate(self, boards):
            import numpy as np

            n = len(np.asarray(boards).reshape(-1, 2, 25))
            return np.tile(np.array([0.72, 0.0, 0.0, 0.0, 0.0]), (n, 1))

    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(DoublingBot(), warm=False, seed=3), host="127.0.0.1",
                                        port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{url}/health", 60)
        yield url
    finally:
        srv.should_exit = True
        thread.join(timeout=20)


def test_the_bots_double_shows_the_cube_offered(doubling_server, browser):
    s = new_page_game(browser, doubling_server)
    for _ in range(20):
        if s["phase"] == "doubled":
            break
        play_turn_by_clicking(browser, s)
        s = browser.state()
    assert s["phase"] == "doubled" and s["cube"]["offered_by"] == "bot"
    cube = shown(browser, "#board #cube")
    assert len(cube) == 1 and cube[0]["owner"] == "offered" and cube[0]["value"] == "2"
    assert cube[0]["text"].strip() == "2" and shown(browser, "#board .offered")
    message = browser.eval("document.getElementById('message').textContent")
    assert "take or drop" in message, message
    browser.click("#take")
    cube = shown(browser, "#board #cube")
    assert cube[0]["owner"] == "you" and cube[0]["value"] == "2"


def test_a_picked_checker_shows_where_it_may_go(server, browser):
    s = to_my_move(browser, new_page_game(browser, server))
    a, b = s["legal_moves"][0]["steps"][0]
    browser.click(f"#pt-{a}", answered=False)
    browser.wait(lambda: browser.eval("document.querySelector('.point.sel') !== null"), 10)
    marked = {int(d["point"]) for d in shown(browser, "#board .point.dest")}
    assert marked == set(s["destinations"][str(a)]) and b in marked
    assert {int(d["point"]) for d in shown(browser, "#board .target")} == marked
    browser.click(f"#pt-{b}")
    t = browser.state()
    assert t["steps"] and t["steps"][0][0] == a
    assert not shown(browser, "#board .point.dest")  # nothing picked now


def hint_table(b: Browser) -> tuple[dict, list[str], list[list[str]]]:
    """Ask for a hint: the answer the page got, the table's headings and its cells, row by row."""
    b.click("#hint")
    h = b.state()["hint"]
    heads = [x["text"] for x in shown(b, "#hint-table thead th")]
    cells = b.eval("[...document.querySelectorAll('#hint-table tbody tr')].map(r => "
                   "[...r.cells].map(c => c.textContent))")
    return h, heads, cells


def _signed(x: float) -> str:
    return f"{x:+.3f}"


def test_the_hint_table_has_headings_gammons_and_plays_a_row(server, browser):
    to_my_move(browser, new_page_game(browser, server))
    h, heads, cells = hint_table(browser)
    # Money play with the cube: ranked by cubeful equity, the cubeless equity in its own column.
    assert h["ranked_by"] == "cubeful money equity"
    for word in ("Move", "Cubeful equity", "Diff", "Cubeless", "Win", "W g", "W bg", "L g", "L bg"):
        assert word in heads, heads
    assert "MWC %" not in heads and "EMG" not in heads
    rows = shown(browser, "#hint-table tbody tr")
    assert [r["move"] for r in rows] == [m["notation"] for m in h["moves"]]
    ranked, plain = heads.index("Cubeful equity"), heads.index("Cubeless")
    for m, row in zip(h["moves"], cells):
        assert row[ranked] == _signed(m["cubeful_equity"]) and row[plain] == _signed(m["equity"])
    values = [m["cubeful_equity"] for m in h["moves"]]
    assert values == sorted(values, reverse=True)
    column = heads.index("W g")
    assert cells[0][column] == f"{100 * h['moves'][0]['probabilities']['win_gammon']:.1f}"
    pick = h["moves"][min(1, len(h["moves"]) - 1)]["notation"]
    browser.click(f"#hint-table tbody tr[data-move={json.dumps(pick)}]")
    t = browser.state()
    assert any(line == f"You play {pick}." for line in t["log"]), t["log"][-4:]
    assert t["hint"] is None


def test_a_match_hint_table_is_headed_mwc_and_emg(server, browser):
    to_my_move(browser, new_page_game(browser, server, "7"))
    h, heads, cells = hint_table(browser)
    assert h["ranked_by"].startswith("cubeful equity at the score")
    for word in ("MWC %", "EMG", "Diff", "Cubeless"):
        assert word in heads, heads
    assert "Cubeful equity" not in heads and "Equity cubeless" not in heads
    mwc, emg, plain = heads.index("MWC %"), heads.index("EMG"), heads.index("Cubeless")
    for m, row in zip(h["moves"], cells):
        assert row[mwc] == f"{100 * m['mwc']:.2f}" and row[emg] == _signed(m["cubeful_equity"])
        assert row[plain] == _signed(m["equity"])
    if len(cells) > 1:
        diff = h["moves"][1]["cubeful_equity"] - h["moves"][0]["cubeful_equity"]
        assert cells[1][heads.index("Diff")] == f"{diff:.3f}"


@pytest.fixture(scope="module")
def cubeless_server():
    """A server in this process started as ``bgnet serve --cubeless-play`` starts it."""
    import threading

    import uvicorn

    from bgnet.play.web.app import create_app

    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(warm=False, seed=3, cubeless_play=True),
                                        host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{url}/health", 60)
        yield url
    finally:
        srv.should_exit = True
        thread.join(timeout=20)


def test_a_cubeless_hint_table_is_headed_equity_cubeless(cubeless_server, browser):
    to_my_move(browser, new_page_game(browser, cubeless_server, "7"))
    h, heads, cells = hint_table(browser)
    assert h["ranked_by"] == "cubeless money equity"
    assert "Equity cubeless" in heads and "Diff" in heads
    for word in ("MWC %", "EMG", "Cubeful equity", "Cubeless"):
        assert word not in heads, heads
    column = heads.index("Equity cubeless")
    assert [row[column] for row in cells] == [_signed(m["equity"]) for m in h["moves"]]


def test_pips_are_labelled_and_the_new_form_shows_the_game_played(server, browser):
    s = new_page_game(browser, server, "7")
    assert s["match_length"] == 7
    browser.open(server + "/")  # the page opened again finds the game, and says what it is
    assert browser.eval("document.getElementById('length').value") == "7"
    assert "7-point match" in browser.eval("document.getElementById('score').textContent")
    s = browser.state()
    you = shown(browser, "#pips-you")[0]["text"]
    bot = shown(browser, "#pips-bot")[0]["text"]
    assert str(s["pips"]["you"]) in you and str(s["pips"]["bot"]) in bot
    assert "pips" in (you + bot).lower()
    line = browser.eval("document.getElementById('pips').textContent")
    assert "ips" in line and str(s["pips"]["you"]) in line and str(s["pips"]["bot"]) in line


def test_resigning_asks_first(server, browser):
    s = new_page_game(browser, server)
    assert browser.eval("document.getElementById('resign-confirm').hidden")
    browser.click("#resign", answered=False)
    assert not browser.eval("document.getElementById('resign-confirm').hidden")
    assert "point" in browser.eval("document.getElementById('resign-question').textContent")
    assert not browser.state()["game_over"]  # nothing sent yet
    browser.click("#resign-no", answered=False)
    assert browser.eval("document.getElementById('resign-confirm').hidden")
    assert not browser.state()["game_over"]
    browser.click("#resign", answered=False)
    browser.click("#resign-yes")
    s = browser.state()
    assert s["game_over"] and s["winner"] == "bot", s["log"][-3:]


def test_start_asks_first_while_a_match_is_in_progress(server, browser):
    """Start while a match or a money game is on asks, as resigning does (the server's own
    new_game action refuses a new game mid-match, and Start is no way around it); No plays on,
    Yes starts anew, and once the game is over Start asks nothing."""
    s = new_page_game(browser, server, "5")
    assert not s["match_over"] and browser.eval("document.getElementById('start-confirm').hidden")
    browser.eval("document.getElementById('length').value = '0'; "
                 "document.getElementById('length').dispatchEvent(new Event('change'))")
    browser.click("#start", answered=False)
    assert not browser.eval("document.getElementById('start-confirm').hidden")
    question = browser.eval("document.getElementById('start-question').textContent")
    assert question.startswith("Start a new money game? The 5-point match in progress (") and \
        "ends unfinished" in question, question
    assert browser.state()["id"] == s["id"]  # nothing sent yet
    browser.click("#start-no", answered=False)
    assert browser.eval("document.getElementById('start-confirm').hidden")
    assert browser.state()["id"] == s["id"] and "Not started" in \
        browser.eval("document.getElementById('message').textContent")
    browser.click("#start", answered=False)
    browser.click("#start-yes")
    t = browser.state()
    assert t["id"] != s["id"] and t["match_length"] == 0 and not t["match_over"]
    browser.click("#resign", answered=False)  # the money game ends ...
    browser.click("#resign-yes")
    assert browser.state()["game_over"]
    browser.click("#start")  # ... and Start begins anew at once, asking nothing
    assert browser.state()["id"] != t["id"]
    assert browser.eval("document.getElementById('start-confirm').hidden")


def test_the_first_paint_shows_the_board_before_the_server_answers(server, browser, tmp_path):
    """The page's script draws the board (at the opening) before it asks the server for the
    game, so the first paint is a board, not an empty space: held back at the network, the
    game's answer has not come, and the board is there."""
    browser.send("Page.navigate", url="about:blank")
    browser.events.clear()
    browser.send("Fetch.enable", patterns=[{"urlPattern": "*/api/v1/games*"}])
    try:
        browser.send("Page.navigate", url=server + "/")
        held = browser.wait(lambda: browser.eval("1") and next(
            (e for e in browser.events if e["method"] == "Fetch.requestPaused"), None), 60)
        assert "/api/v1/games" in held["params"]["request"]["url"]  # the game, asked for and held
        assert browser.eval("window.bgnetState === undefined")  # no answer from the server yet
        drawn = browser.eval("[document.querySelectorAll('#board .point').length, "
                             "document.querySelectorAll('#board circle').length]")
        assert drawn[0] >= 25 and drawn[1] >= 30, drawn  # the points, the 30 checkers
        assert is_drawn_board(browser.screenshot(tmp_path / "first.png"))
        assert "Setting up" in browser.eval("document.getElementById('message').textContent")
    finally:
        for e in [e for e in browser.events if e["method"] == "Fetch.requestPaused"]:
            browser.send("Fetch.continueRequest", requestId=e["params"]["requestId"])
        browser.send("Fetch.disable")
    browser.wait(lambda: browser.eval("window.bgnetState ? window.bgnetState.id : null"), 60)


def test_a_money_game_with_the_jacoby_rule(server, browser):
    s = new_page_game(browser, server, "0", jacoby=True)
    assert s["jacoby"] is True and s["match_length"] == 0
    assert "Jacoby" in browser.eval("document.getElementById('score').textContent")
    browser.eval("document.getElementById('length').value = '5'; "
                 "document.getElementById('length').dispatchEvent(new Event('change'))")
    assert browser.eval("document.getElementById('jacoby').disabled")


@pytest.mark.slow
def test_the_phone_layout_at_390_px(server, browser, tmp_path):
    """At 390 px the board takes the whole width, its labels are legible and what one touches is
    near 44 px: points, and the buttons."""
    browser.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=2,
                 mobile=True)
    try:
        s = to_my_move(browser, new_page_game(browser, server))
        browser.eval("window.scrollTo(0, 0)")
        board = browser.eval("(() => { const r = document.getElementById('board').getBoundingClientRect();"
                             " return [r.left, r.width]; })()")
        assert board[0] <= 2 and board[1] >= 380, board
        sizes = browser.eval("""[...Array(24).keys()].map(i => {
            const r = document.querySelector('#pt-' + (i + 1) + ' .hit').getBoundingClientRect();
            return Math.min(r.width, r.height); })""")
        assert min(sizes) >= 40, sizes
        labels = browser.eval("""[...document.querySelectorAll('#board text')]
            .filter(t => t.textContent.trim()).map(t => parseFloat(t.getAttribute('font-size'))
            * Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b))""")
        assert labels and min(labels) >= 12, labels
        buttons = browser.eval("""[...document.querySelectorAll('#controls button:not([hidden]), #start,'
            + ' #resign, #play-typed')].map(b => b.getBoundingClientRect().height)""")
        assert min(buttons) >= 43.5, buttons
        shot = browser.screenshot(tmp_path / "phone.png")
        assert is_drawn_board(shot)
        import numpy as np
        from PIL import Image

        img = np.asarray(Image.open(shot).convert("RGB"), np.int32)
        rows = img[: img.shape[0] // 2]  # the board is at the top of the page
        felt = (np.abs(rows - np.array([0x2E, 0x5A, 0x3A])) <= 18).all(axis=2)
        columns = np.flatnonzero(felt.any(axis=0))
        assert columns.min() < 0.1 * img.shape[1] and columns.max() > 0.9 * img.shape[1]
        assert s["phase"] == "move"
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride")


def test_the_api_page_works_without_a_network(server, browser):
    """/docs is drawn from the server's own files: every resource the page loads comes from it."""
    browser.send("Page.navigate", url=server + "/docs")
    browser.wait(lambda: browser.eval("document.querySelectorAll('.opblock').length") >= 8, 60)
    loaded = browser.eval("performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(u.startswith(server) for u in loaded), loaded
    assert "/api/v1/moves" in browser.eval("document.body.textContent")
