"""``bgnet serve``'s API through FastAPI's test client: bgnet's /api/v1, wildbg's /move and /eval,
the page's games, and the answers to bad input (4xx JSON that says what is wrong, never 500)."""
from __future__ import annotations

import asyncio
import random
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from serve_load import apply_play  # noqa: E402

from bgnet.bots.base import Bot  # noqa: E402
from bgnet.engine import board_from_position_id, position_id  # noqa: E402
from bgnet.engine.board import start_position  # noqa: E402
from bgnet.engine.movegen import generate  # noqa: E402
from bgnet.engine.notation import IllegalMoveError, parse_move  # noqa: E402
from bgnet.play import clickmove  # noqa: E402
from bgnet.play.web.app import create_app  # noqa: E402
from bgnet.play.web.service import BotService, Busy, TooSlow  # noqa: E402

START = "4HPwATDgc/ABMA"
# wildbg's own example: the starting position, 3-1 to play.
WILDBG_START = "p24=2&p19=-5&p17=-3&p13=5&p12=-5&p8=3&p6=5&p1=-2"
PROB_KEYS = {"win", "winG", "winBg", "loseG", "loseBg"}


@pytest.fixture(scope="module")
def client():
    app = create_app(seed=11)  # the bot shipped with bgnet, at 0-ply
    with TestClient(app) as c:
        yield c


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


def refused(resp, status=400, *words):
    assert resp.status_code == status, resp.text
    message = resp.json()["message"]
    for w in words:
        assert w in message, message
    return message


afterstate = apply_play  # wildbg steps applied to a board, as the load test checks them


def money(p):
    return 2 * p["win"] - 1 + p["winG"] - p["loseG"] + p["winBg"] - p["loseBg"]


# ---------------------------------------------------------------------------------------------
# wildbg's endpoints


def test_wildbg_move_example_lists_every_legal_move_best_first(client):
    data = ok(client.get(f"/move?die1=3&die2=1&{WILDBG_START}"))
    moves = data["moves"]
    board = start_position()
    legal = {a.tobytes() for a in generate(board, 3, 1)[0]}
    assert len(moves) == len(legal) == 16
    assert {afterstate(board, m["play"]) for m in moves} == legal
    assert {(s["from"], s["to"]) for s in moves[0]["play"]} == {(8, 5), (6, 5)}
    for m in moves:
        assert set(m["probabilities"]) == PROB_KEYS
        assert all(len(s) == 2 and set(s) == {"from", "to"} for s in m["play"])
    equities = [money(m["probabilities"]) for m in moves]
    assert equities == sorted(equities, reverse=True)


def test_wildbg_move_numbers_the_bar_25_and_off_0(client):
    # x has a checker on the bar and bears nothing off; then a bear-off position.
    data = ok(client.get("/move?die1=6&die2=5&p25=1&p6=14&p1=-15"))
    assert all(m["play"][0]["from"] == 25 for m in data["moves"])
    data = ok(client.get("/move?die1=6&die2=5&p1=1&p2=1&p24=-15"))
    assert data["moves"][0]["play"] and {s["to"] for s in data["moves"][0]["play"]} == {0}


def test_wildbg_move_without_a_legal_move_has_one_empty_play(client):
    # x on the bar against a closed board (the opponent's points 1..6 are x's 19..24).
    closed = "&".join(f"p{i}=-2" for i in range(19, 25))
    data = ok(client.get(f"/move?die1=6&die2=6&p25=1&p6=14&{closed}&p1=-3"))
    assert len(data["moves"]) == 1 and data["moves"][0]["play"] == []
    assert set(data["moves"][0]["probabilities"]) == PROB_KEYS


def test_wildbg_eval_gives_probabilities_and_the_cube(client):
    data = ok(client.get(f"/eval?{WILDBG_START}"))
    assert set(data) == {"cube", "probabilities"}
    assert data["cube"] == {"double": False, "accept": True}
    p = data["probabilities"]
    assert set(p) == PROB_KEYS and 0.4 < p["win"] < 0.6 and p["winBg"] <= p["winG"] <= p["win"]
    # The same probabilities as bgnet's own evaluation of the same position.
    own = ok(client.get("/api/v1/evaluate", params={"position_id": START}))["probabilities"]
    assert abs(own["win"] - p["win"]) < 1e-6 and abs(own["lose_gammon"] - p["loseG"]) < 1e-6


def test_wildbg_eval_takes_a_match_score_as_points_away(client):
    # A racing lead for x; at 3-away/2-away the cube answer comes from the match equity table,
    # the same as bgnet's own cube endpoint gives for that score.
    from bgnet.engine.state import MatchContext
    from bgnet.formats.match_id import match_id

    race = "p6=4&p5=4&p4=3&p3=2&p2=2&p19=-4&p20=-4&p21=-3&p22=-2&p23=-2"
    data = ok(client.get(f"/eval?{race}&x_away=3&o_away=2"))
    board = board_from_wildbg_query(race)
    mid = match_id(MatchContext(player_on_roll=1, turn=1, match_length=3, score=(1, 0)))
    own = ok(client.get("/api/v1/cube", params={"position_id": position_id(board), "match_id": mid}))
    assert data["cube"] == {"double": own["double"], "accept": own["take"]}
    assert own["match_winning_chances"] is not None
    refused(client.get(f"/eval?{race}&x_away=2"), 400, "x_away", "o_away")


def board_from_wildbg_query(query: str):
    from bgnet.play.web.positions import board_from_wildbg

    return board_from_wildbg({k: int(v) for k, v in (kv.split("=") for kv in query.split("&"))})


@pytest.mark.parametrize("query, words", [
    ("die1=0&die2=3&p6=1&p1=-1", ("die1", "1 to 6")),
    ("die1=7&die2=3&p6=1&p1=-1", ("die1", "1 to 6")),
    ("die1=3&die2=9&p6=1&p1=-1", ("die2",)),
    ("die1=3&p6=1&p1=-1", ("die2", "Field required")),
    ("die1=x&die2=3&p6=1&p1=-1", ("die1", "integer")),
    ("die1=3&die2=1&p25=-1&p6=1&p1=-1", ("p25", "bar")),
    ("die1=3&die2=1&p0=2&p6=1&p1=-1", ("p0", "negative")),
    ("die1=3&die2=1&p5=16&p1=-1", ("p5", "-15 to 15")),
    ("die1=3&die2=1&p3=abc&p6=1&p1=-1", ("p3",)),
    ("die1=3&die2=1&p6=10&p8=6&p1=-1", ("16 checkers",)),
    ("die1=3&die2=1&p6=1&p1=-10&p2=-6", ("opponent", "16 checkers")),
    ("die1=3&die2=1&p6=1", ("at least one checker",)),
    ("die1=3&die2=1&p26=1&p6=2&p1=-1", ("unknown query parameter p26",)),
    ("die1=3&die2=1&p6=2&p1=-1&foo=1&bar=2", ("bar, foo",)),
])
def test_wildbg_bad_input_is_400_saying_what_is_wrong(client, query, words):
    refused(client.get(f"/move?{query}"), 400, *words)


def test_no_query_gives_a_server_error(client):
    rng = random.Random(5)
    names = ["die1", "die2", "p0", "p1", "p6", "p13", "p24", "p25", "ply", "x_away", "o_away"]
    values = ["", "-1", "0", "1", "3", "6", "7", "15", "16", "-16", "1.5", "x", "%00", "9" * 30]
    for _ in range(150):
        q = "&".join(f"{rng.choice(names)}={rng.choice(values)}" for _ in range(rng.randint(0, 6)))
        for path in ("/move", "/eval"):
            resp = client.get(f"{path}?{q}")
            assert resp.status_code < 500, (path, q, resp.text)
            assert "message" in resp.json() or resp.status_code == 200


# ---------------------------------------------------------------------------------------------
# bgnet's API


def test_moves_give_the_next_position_id_with_the_opponent_on_roll(client):
    data = ok(client.get("/api/v1/moves", params={"position_id": START, "dice": "31", "limit": 20}))
    assert data["legal_moves"] == 16 and len(data["moves"]) == 16
    best = data["moves"][0]
    assert best["notation"] == "8/5 6/5" and best["next_position_id"] == "sGfwATDgc/ABMA"
    assert best["play"] == [{"from": 8, "to": 5}, {"from": 6, "to": 5}] or \
        sorted((s["from"], s["to"]) for s in best["play"]) == [(6, 5), (8, 5)]
    board = board_from_position_id(START)
    expected = {position_id(a[::-1]) for a in generate(board, 3, 1)[0]}
    assert {m["next_position_id"] for m in data["moves"]} == expected
    eqs = [m["equity"] for m in data["moves"]]
    assert eqs == sorted(eqs, reverse=True) and [m["rank"] for m in data["moves"]] == list(range(1, 17))
    assert set(best["probabilities"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon",
                                          "lose_backgammon"}


def test_moves_limit_ply_and_xgid(client):
    data = ok(client.get("/api/v1/moves", params={"position_id": START, "dice": "3-1", "limit": 2,
                                                  "ply": 1}))
    assert len(data["moves"]) == 2 and data["ply"] == 1
    xg = ok(client.get("/api/v1/moves", params={
        "xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10", "limit": 1}))
    assert xg["dice"] == [3, 1] and xg["moves"][0]["notation"] == "8/5 6/5"
    assert xg["position_id"] == START


@pytest.mark.parametrize("pid, who", [("AAAAAAAAAAAAAA", "both sides have"),
                                      ("AAAAwAEAAAAAAA", "the opponent has")])
def test_a_position_whose_game_is_over_is_refused_everywhere(client, pid, who):
    for path, extra in (("/api/v1/evaluate", {}), ("/api/v1/moves", {"dice": "31"}),
                        ("/api/v1/cube", {"match_id": "cAkAAAAAAAAA"})):
        refused(client.get(path, params={"position_id": pid, **extra}), 400,
                f"the game of this position is over: {who} borne off every checker")


def test_an_error_quotes_at_most_a_few_hundred_characters_of_what_was_sent(client):
    resp = client.get("/api/v1/evaluate", params={"position_id": "x" * 30_000})
    refused(resp, 400, "position_id", "(cut)")
    assert len(resp.content) < 1000


LONG_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:{}:10"


def test_a_match_longer_than_gnubg_allows_is_a_400_at_once_everywhere(client):
    """One bound on a match's length, GNU Backgammon's 64 points: an 8000-point XGID took 36 s of
    the bot's thread and a gigabyte; it is now refused before any bot code runs."""
    start = time.perf_counter()
    refused(client.get("/api/v1/moves", params={"xgid": LONG_XGID.format(8000)}), 400,
            "xgid: XGID field 9 (match length): a match is 1 to 64 points long (GNU Backgammon's "
            "limit), or 0 for money play; got 8000")
    assert time.perf_counter() - start < 0.5
    for length in (65, 99_999, "1" + "0" * 30, "\u0667"):
        refused(client.get("/api/v1/moves", params={"xgid": LONG_XGID.format(length)}), 400, "XGID field 9")
        refused(client.get("/api/v1/evaluate", params={"position_id": LONG_XGID.format(length)}), 400)
    refused(client.get("/api/v1/cube", params={"position_id": START, "match_id": "MAEA6AMAAAAE"}), 400,
            "match_id 'MAEA6AMAAAAE': Match ID 'MAEA6AMAAAAE': a match is 1 to 64 points long")
    refused(client.get(f"/eval?{WILDBG_START}&x_away=65&o_away=3"), 400, "x_away")
    refused(client.get(f"/move?die1=3&die2=1&{WILDBG_START}&x_away=3&o_away={'9' * 30}"), 400, "o_away")
    refused(client.post("/api/v1/games", json={"match_length": 65}), 400, "match_length")
    # The bound itself is answered as a short match is.
    start = time.perf_counter()
    assert ok(client.get("/api/v1/moves", params={"xgid": LONG_XGID.format(64), "limit": 1}))["moves"]
    assert ok(client.get(f"/eval?{WILDBG_START}&x_away=64&o_away=64"))["cube"]
    assert time.perf_counter() - start < 5.0


def test_a_match_id_beside_one_the_position_carries_is_refused_in_words_that_fit(client):
    refused(client.get("/api/v1/cube", params={"position_id": f"{START}:cAkAAAAAAAAA",
                                               "match_id": "cAkAAAAAAAAA"}),
            400, "already carries the cube and score (an XGID, or POSITIONID:MATCHID)")


def test_a_plus_left_unencoded_in_an_id_is_read_as_a_plus(client):
    # In a query string a bare + means a space; Position and Match IDs hold + and never a space.
    pid, mid = "wnPhATDg6+ABMA", "cAkAAAAAAAAA"
    encoded = ok(client.get("/api/v1/moves", params={"position_id": pid, "dice": "31"}))
    assert ok(client.get(f"/api/v1/moves?position_id={pid}&dice=31")) == encoded
    assert ok(client.get(f"/api/v1/moves?position_id={pid}&match_id={mid}&dice=31"))["moves"]


@pytest.mark.parametrize("params, words", [
    ({"position_id": START, "dice": "71"}, ("1 to 6",)),
    ({"position_id": START, "dice": "0-1"}, ("1 to 6",)),
    ({"position_id": START, "dice": "3"}, ("dice",)),
    ({"position_id": START}, ("dice",)),
    ({"position_id": "4HPwATDgc/AB", "dice": "31"}, ("position_id", "14 characters")),
    ({"position_id": "////////////// ", "dice": "31"}, ("position_id",)),
    ({"dice": "31"}, ("exactly one of position_id",)),
    ({"position_id": START, "xgid": "XGID=x", "dice": "31"}, ("exactly one",)),
    ({"xgid": "XGID=nonsense", "dice": "31"}, ("xgid",)),
    ({"position_id": START, "dice": "31", "ply": 3}, ("ply", "0 to 2")),
    ({"position_id": START, "dice": "31", "ply": -1}, ("ply",)),
    ({"position_id": START, "dice": "31", "limit": 0}, ("limit",)),
    ({"position_id": START, "dice": "31", "depth": 2}, ("unknown query parameter depth",)),
])
def test_moves_bad_input(client, params, words):
    refused(client.get("/api/v1/moves", params=params), 400, *words)


def test_evaluate_and_cube(client):
    e = ok(client.get("/api/v1/evaluate", params={"position_id": START, "ply": 0}))
    p = e["probabilities"]
    eq = 2 * p["win"] - 1 + p["win_gammon"] - p["lose_gammon"] + p["win_backgammon"] - p["lose_backgammon"]
    assert abs(eq - e["equity"]) < 1e-5 and e["evaluator"] == "bgnet-default"
    c = ok(client.get("/api/v1/cube", params={"position_id": START, "match_id": "cAkAAAAAAAAA"}))
    assert c["action"] == "no_double" and c["take"] is True and c["match_winning_chances"] is None
    m = ok(client.get("/api/v1/cube", params={"position_id": START, "match_id": "cAkgAAAAAAAE"}))
    assert m["match_winning_chances"] is not None
    x = ok(client.get("/api/v1/cube", params={"xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:5:10"}))
    assert x["cube_available"] is True and x["match_winning_chances"] is not None


@pytest.mark.parametrize("params, words", [
    ({"position_id": START}, ("match_id",)),
    ({"position_id": START, "match_id": "nonsense"}, ("match_id",)),
    ({"xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:5:10", "match_id": "cAkAAAAAAAAA"},
     ("leave out match_id",)),
])
def test_cube_bad_input(client, params, words):
    refused(client.get("/api/v1/cube", params=params), 400, *words)


def test_bot_metadata(client):
    b = ok(client.get("/api/v1/bot"))
    assert b["name"] == "bgnet-default" and b["encoding"] == "extended"
    assert b["strength"]["pubeval"]["games"] > 0 and b["plies"] == [0, 1, 2]
    assert b["games_trained"] > 0 and "path" not in b


def test_openapi_page_lists_the_endpoints(client):
    assert client.get("/docs").status_code == 200
    spec = ok(client.get("/openapi.json"))
    for path in ("/move", "/eval", "/api/v1/moves", "/api/v1/evaluate", "/api/v1/cube", "/api/v1/bot"):
        assert path in spec["paths"]
    names = {p["name"] for p in spec["paths"]["/move"]["get"]["parameters"]}
    assert {"die1", "die2", "p0", "p25"} <= names


def _ref(node: dict) -> str:
    schema = node["content"]["application/json"]["schema"]
    if "anyOf" in schema:  # an optional body
        schema = next(s for s in schema["anyOf"] if "$ref" in s)
    return schema["$ref"].rsplit("/", 1)[1]


def test_openapi_declares_every_body_and_answer(client):
    """A client generated from /openapi.json knows what each endpoint takes and answers."""
    spec = ok(client.get("/openapi.json"))
    paths, schemas = spec["paths"], spec["components"]["schemas"]
    answers = {("/move", "get"): "WildbgMoves", ("/eval", "get"): "WildbgEval",
               ("/api/v1/moves", "get"): "Moves", ("/api/v1/evaluate", "get"): "Evaluation",
               ("/api/v1/cube", "get"): "CubeAnswer", ("/api/v1/bot", "get"): "BotInfo",
               ("/health", "get"): "Health", ("/api/v1/games", "post"): "GameState",
               ("/api/v1/games/{gid}", "get"): "GameState",
               ("/api/v1/games/{gid}/{action}", "post"): "GameState"}
    for (path, method), name in answers.items():
        op = paths[path][method]
        assert _ref(op["responses"]["200"]) == name, (path, name)
        if path != "/health":
            assert _ref(op["responses"]["400"]) == "Message", path
    assert _ref(paths["/api/v1/games"]["post"]["requestBody"]) == "NewGame"
    assert _ref(paths["/api/v1/games/{gid}/{action}"]["post"]["requestBody"]) == "GameAction"
    assert set(schemas["NewGame"]["properties"]) == {"match_length", "name", "jacoby"}
    assert {"from", "to", "kind", "move"} == set(schemas["GameAction"]["properties"])
    state = schemas["GameState"]["properties"]
    assert {"points", "bot_moves", "destinations", "cube", "hint", "pips"} <= set(state)
    assert {"ply", "equity", "probabilities", "play"} <= set(schemas["RankedMove"]["properties"])


def test_the_api_page_needs_no_network(client):
    """/docs loads Swagger UI from the server itself, every file it names is served, and the
    page asks no other host (the validator badge is off)."""
    import re

    page = client.get("/docs")
    assert page.status_code == 200
    assert not re.search(r"https?://", page.text), page.text
    assets = re.findall(r'(?:src|href)="(/[^"]+)"', page.text)
    assert {"/static/docs/swagger-ui-bundle.js", "/static/docs/swagger-ui.css"} <= set(assets)
    for path in assets:
        got = client.get(path)
        assert got.status_code == 200, path
    assert len(client.get("/static/docs/swagger-ui-bundle.js").content) > 500_000
    assert '"validatorUrl": null' in page.text
    assert client.get("/redoc").status_code == 404  # it would load from elsewhere: not served


def test_unknown_paths_methods_and_big_bodies_are_json(client):
    refused(client.get("/api/v1/nothing"), 404, "/api/v1/nothing")
    refused(client.post("/move"), 405, "POST")
    refused(client.post("/api/v1/games", content=b"{" + b" " * 20000 + b"}",
                        headers={"Content-Type": "application/json"}), 413, "limit")
    refused(client.post("/api/v1/games", content=b"[1, 2]",
                        headers={"Content-Type": "application/json"}), 400)


def test_head_is_answered_wherever_get_is(client):
    for path in ("/", "/health", "/api/v1/bot", "/static/board.js"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
    assert client.head("/api/v1/nothing").status_code == 404


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "<svg id=\"board\"" in page.text
    for name in ("board.js", "style.css", "favicon.svg"):
        assert client.get(f"/static/{name}").status_code == 200
    assert "http" not in client.get("/static/board.js").text.replace("http://www.w3.org", "")


# ---------------------------------------------------------------------------------------------
# time and load limits


def test_a_slow_bot_gets_504_and_the_server_stays_responsive():
    from bgnet.bots.simple import RandomBot

    class Slow(RandomBot):
        def evaluate(self, boards):
            time.sleep(0.5)
            return np.full((len(np.asarray(boards).reshape(-1, 2, 25)), 5), 0.1)

    app = create_app(Slow(1), timeout=0.1, warm=False)
    with TestClient(app) as c:
        refused(c.get("/api/v1/evaluate", params={"position_id": START}), 504, "limit")
        t = time.perf_counter()
        assert c.get("/health").status_code == 200
        assert time.perf_counter() - t < 0.4


def test_bot_service_refuses_calls_beyond_its_queue():
    async def run():
        service = BotService(object(), timeout=5, max_waiting=1)
        first = asyncio.ensure_future(service.call(time.sleep, 0.3))
        await asyncio.sleep(0.05)
        with pytest.raises(Busy):
            await service.call(time.sleep, 0)
        await first
        assert service.waiting == 0
        await service.call(time.sleep, 0)  # free again
        slow = BotService(object(), timeout=0.05)
        with pytest.raises(TooSlow):
            await slow.call(time.sleep, 0.3)

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# building a move by clicks


def test_clicked_steps_build_a_legal_move():
    b = start_position()
    after, _ = generate(b, 3, 1)
    steps = clickmove.add_hop(b, 3, 1, [], 8, 5, after)
    assert clickmove.is_complete(b, steps, after) is None
    steps = clickmove.add_hop(b, 3, 1, steps, 6, 5, after)
    done = clickmove.is_complete(b, steps, after)
    assert done is not None and position_id(done[::-1]) == "sGfwATDgc/ABMA"
    # One click for a checker using both dice: 13 to 9 with 3-1.
    two = clickmove.add_hop(b, 3, 1, [], 13, 9, after)
    assert len(two) == 2 and clickmove.is_complete(b, two, after) is not None


def test_clicked_steps_are_refused_in_the_terminals_words():
    b = start_position()
    after, _ = generate(b, 6, 5)
    with pytest.raises(IllegalMoveError, match="point 19 is blocked"):
        clickmove.add_hop(b, 6, 5, [], 24, 19, after)
    with pytest.raises(IllegalMoveError, match="cannot move a checker 4 pips"):
        clickmove.add_hop(b, 6, 5, [], 13, 9, after)
    with pytest.raises(IllegalMoveError, match="no checker on point 20"):
        clickmove.add_hop(b, 6, 5, [], 20, 15, after)
    with pytest.raises(IllegalMoveError, match="wrong way"):
        clickmove.add_hop(b, 6, 5, [], 8, 13, after)
    on_bar = b.copy()
    on_bar[1, 23], on_bar[1, 24] = 1, 1
    a2, _ = generate(on_bar, 6, 5)
    with pytest.raises(IllegalMoveError, match="from the bar first"):
        clickmove.add_hop(on_bar, 6, 5, [], 13, 7, a2)


def test_a_step_that_leaves_the_higher_die_unplayed_is_refused():
    # x: one checker on 13, fourteen on 1; the opponent holds x's 2. With 6-5 either die can be
    # played but not both (13/8/2 and 13/7/2 end on the blocked point): the 6 must be played.
    b = np.zeros((2, 25), np.int8)
    b[1, 12], b[1, 0] = 1, 14
    b[0, 22], b[0, 0] = 2, 13
    after, _ = generate(b, 6, 5)
    assert len(after) == 1
    with pytest.raises(IllegalMoveError, match="cannot be played"):
        clickmove.add_hop(b, 6, 5, [], 13, 8, after)
    steps = clickmove.add_hop(b, 6, 5, [], 13, 7, after)
    assert clickmove.is_complete(b, steps, after) is not None


# ---------------------------------------------------------------------------------------------
# games on the page


def new_game(client, **body):
    return ok(client.post("/api/v1/games", json=body))


def act(client, state, action, **body):
    return ok(client.post(f"/api/v1/games/{state['id']}/{action}", json=body))


def to_my_move(client, s):
    while s["phase"] != "move" or s["turn"] != "you":
        assert not s["game_over"]
        s = act(client, s, "roll") if s["phase"] == "roll" else act(client, s, "take")
    return s


def test_a_clicked_move_is_shown_undone_and_confirmed(client):
    s = to_my_move(client, new_game(client))
    move = s["legal_moves"][0]
    refused(client.post(f"/api/v1/games/{s['id']}/confirm", json={}), 400, "not finished")
    first = act(client, s, "step", **{"from": move["steps"][0][0], "to": move["steps"][0][1]})
    assert len(first["steps"]) == 1
    assert (first["points"], first["bar"], first["off"]) != (s["points"], s["bar"], s["off"])
    assert act(client, first, "undo")["steps"] == []
    t = s
    for a, b in move["steps"]:
        t = act(client, t, "step", **{"from": a, "to": b})
    assert t["complete"] is True
    done = act(client, t, "confirm")
    assert any(line.startswith("You play ") for line in done["log"])
    assert done["log_count"] > s["log_count"]


def test_an_illegal_typed_move_is_explained_and_changes_nothing(client):
    s = to_my_move(client, new_game(client))
    message = refused(client.post(f"/api/v1/games/{s['id']}/move", json={"move": "24/1"}), 400,
                      "Illegal move:")
    d1, d2 = s["dice"]
    b = board_from_position_id(s["position_id"])
    with pytest.raises(IllegalMoveError) as e:
        parse_move("24/1", b, max(d1, d2), min(d1, d2))
    assert str(e.value) in message  # the terminal's words
    again = ok(client.get(f"/api/v1/games/{s['id']}"))
    assert again["points"] == s["points"] and again["phase"] == "move"


def test_a_whole_money_game_then_the_next_and_a_mat_file(client):
    s = new_game(client, name="Ann")
    for _ in range(400):
        if s["game_over"]:
            break
        if s["phase"] == "roll":
            s = act(client, s, "roll")
        elif s["phase"] == "doubled":
            s = act(client, s, "take")
        else:
            s = act(client, s, "move", move=s["legal_moves"][0]["notation"])
    assert s["game_over"] and s["winner"] in ("you", "bot") and s["points_won"] >= 1
    assert sum(s["score"].values()) == s["points_won"]
    mat = client.get(f"/api/v1/games/{s['id']}/mat")
    assert mat.status_code == 200 and "Game 1" in mat.text and "Ann" in mat.text
    assert "attachment" in mat.headers["content-disposition"]
    sgf = client.get(f"/api/v1/games/{s['id']}/sgf")
    assert sgf.status_code == 200 and "attachment" in sgf.headers["content-disposition"]
    assert sgf.headers["content-disposition"].endswith('.sgf"')
    from bgnet.formats.mat import read_mat
    from bgnet.formats.sgf import read_sgf

    from_sgf, from_mat = read_sgf(sgf.text), read_mat(mat.text)
    assert from_sgf.names == from_mat.names and "Ann" in from_sgf.names
    assert [g.moves() for g in from_sgf.games] == [g.moves() for g in from_mat.games]
    assert (from_sgf.games[0].winner, from_sgf.games[0].points) == (from_mat.games[0].winner,
                                                                      from_mat.games[0].points)
    nxt = act(client, s, "new_game")
    assert nxt["game_number"] == 2 and not nxt["game_over"]


def test_resigning_a_one_point_match_ends_it(client):
    s = new_game(client, match_length=1)
    s = act(client, s, "resign", kind="backgammon")
    assert s["game_over"] and s["match_over"] and s["winner"] == "bot"
    assert s["score"]["bot"] >= 1
    refused(client.post(f"/api/v1/games/{s['id']}/new_game", json={}), 400, "match is over")


def test_doubling_turns_the_cube(client):
    s = new_game(client, match_length=0)
    for _ in range(60):
        if s["may_double"]:
            break
        s = to_my_move(client, s)
        s = act(client, s, "move", move=s["legal_moves"][0]["notation"])
        if s["game_over"]:
            s = act(client, s, "new_game")
    assert s["may_double"]
    d = act(client, s, "double")
    assert (d["game_over"] and d["winner"] == "you") or \
        (d["cube"]["value"] == 2 and d["cube"]["owner"] == "bot" and not d["may_double"])


def test_hints_list_moves_with_equities(client):
    s = to_my_move(client, new_game(client))
    h = act(client, s, "hint")["hint"]
    assert h["moves"] and h["by"] == "bgnet-default" and h["ply"] == 0
    # Best first by the measure the hint names (cubeful in a game with the cube), which may
    # order two close moves otherwise than their cubeless equities do.
    key = "cubeful_equity" if h["ranked_by"].startswith("cubeful") else "equity"
    eqs = [m[key] for m in h["moves"]]
    assert eqs == sorted(eqs, reverse=True)
    for m in h["moves"]:  # gammon chances for the table, a place kept for a cubeful column
        assert 0 <= m["probabilities"]["win_gammon"] <= m["probabilities"]["win"]
        assert "cubeful_equity" in m


def test_moves_at_two_ply_are_all_valued_at_two_ply(client):
    """Every move listed is valued at the ply asked, not only the search's best: each equals
    the 2-ply value of its next position computed directly, and the list is in their order."""
    from bgnet.nn.probs import equity, flip

    data = ok(client.get("/api/v1/moves", params={"position_id": START, "dice": "31", "ply": 2,
                                                  "limit": 4}))
    assert data["ply"] == 2 and [m["ply"] for m in data["moves"]] == [2, 2, 2, 2]
    bot = client.app.state.answers.bot
    for m in data["moves"]:
        nxt = board_from_position_id(m["next_position_id"])  # the opponent on roll
        direct = float(equity(flip(np.asarray(bot.evaluate(nxt[None], 2), np.float64))[0]))
        assert m["equity"] == pytest.approx(direct, abs=2e-5), m["notation"]
    eqs = [m["equity"] for m in data["moves"]]
    assert eqs == sorted(eqs, reverse=True)
    zero = ok(client.get("/api/v1/moves", params={"position_id": START, "dice": "31", "ply": 0,
                                                  "limit": 4}))
    assert [m["ply"] for m in zero["moves"]] == [0, 0, 0, 0]
    assert zero["moves"][1]["equity"] != data["moves"][1]["equity"]


def test_a_jacoby_money_game(client):
    s = new_game(client, jacoby=True)
    assert s["jacoby"] is True and s["match_length"] == 0
    assert new_game(client)["jacoby"] is False


def _apply_bot_move(points, bar, move):
    """The person's view of the board after the bot's move: its steps are numbered from its
    side (25 its bar, 0 off); the person's point is 25 - p."""
    points, bar = list(points), dict(bar)
    for step in move["steps"]:
        a, b = step["from"], step["to"]
        if a == 25:
            bar["bot"] -= 1
        else:
            points[25 - a] += 1  # the bot's checkers are negative
        if b != 0:
            if step["hit"]:
                assert points[25 - b] == 1
                points[25 - b] = 0
                bar["you"] += 1
            points[25 - b] -= 1
    return points, bar


def test_the_bots_moves_are_told_with_their_dice_and_steps(client):
    s = to_my_move(client, new_game(client))
    for _ in range(30):
        move = s["legal_moves"][0]
        for a, b in move["steps"]:
            s = act(client, s, "step", **{"from": a, "to": b})
        before = s  # the board with the person's move shown, before the bot answers
        s = act(client, s, "confirm")
        if s["game_over"]:
            break
        if s["phase"] == "doubled":  # the bot doubled instead of rolling
            assert s["cube"]["offered_by"] == "bot" and not s["bot_moves"]
            s = to_my_move(client, s)
            continue
        assert s["bot_moves"], s["log"][-3:]
        points, bar = before["points"], before["bar"]
        for m in s["bot_moves"]:
            assert len(m["dice"]) == 2 and all(1 <= d <= 6 for d in m["dice"])
            assert any(f"rolls {m['dice'][0]}-{m['dice'][1]}" in line for line in s["log"])
            if m["notation"]:
                assert any(m["notation"] in line for line in s["log"])
            points, bar = _apply_bot_move(points, bar, m)
        assert points == s["points"] and bar == s["bar"]
        ids = [m["id"] for m in s["bot_moves"]]
        assert len(set(ids)) == len(ids)
        s = to_my_move(client, s)


def test_destinations_are_the_points_a_click_may_reach(client):
    s = to_my_move(client, new_game(client))
    dest = s["destinations"]
    assert dest
    for move in s["legal_moves"]:
        a, b = move["steps"][0]
        assert b in dest[str(a)], (move, dest)
    for a, ends in dest.items():
        for b in ends:
            t = act(client, s, "step", **{"from": int(a), "to": b})  # accepted, then undone
            assert t["steps"] and t["steps"][0][0] == int(a)
            act(client, t, "undo")
    after_one = act(client, s, "step", **{"from": s["legal_moves"][0]["steps"][0][0],
                                          "to": s["legal_moves"][0]["steps"][0][1]})
    assert after_one["destinations"] != dest or len(s["dice_left"]) > 2


class DoublingBot(Bot):
    """Plays the first legal move and sees itself a strong favourite everywhere: it doubles at
    its first chance (a double it thinks the person should take)."""

    name = "doubler"

    def choose_move(self, board, d1, d2):
        after, _ = generate(board, d1, d2)
        return after[0] if len(after) else board

    def evaluate(self, boards):
        n = len(np.asarray(boards).reshape(-1, 2, 25))
        return np.tile(np.array([0.72, 0.0, 0.0, 0.0, 0.0]), (n, 1))


def test_the_bots_double_is_shown_as_an_offered_cube():
    with TestClient(create_app(DoublingBot(), warm=False, seed=3)) as c:
        s = new_game(c)
        for _ in range(20):
            if s["phase"] == "doubled":
                break
            s = act(c, s, "roll") if s["phase"] == "roll" else \
                act(c, s, "move", move=s["legal_moves"][0]["notation"])
        assert s["phase"] == "doubled" and s["turn"] == "you"
        assert s["cube"] == {"value": 1, "owner": "centre", "offered": 2, "offered_by": "bot"}
        t = act(c, s, "take")
        assert t["cube"]["value"] == 2 and t["cube"]["owner"] == "you" and t["cube"]["offered"] is None


@pytest.mark.parametrize("body, words", [
    ({"match_length": -1}, ("match_length",)),
    ({"match_length": "5"}, ("match_length",)),
    ({"match_length": 99}, ("match_length",)),
    ({"name": "a:b"}, ("name",)),
    ({"colour": "red"}, ("unknown field colour",)),
    ({"jacoby": "yes"}, ("jacoby",)),
    ({"jacoby": True, "match_length": 5}, ("Jacoby rule is for money play",)),
])
def test_new_game_bad_input(client, body, words):
    refused(client.post("/api/v1/games", json=body), 400, *words)


@pytest.mark.parametrize("name, words", [
    ("A\rB", ("control character (U+000D)", "1 to 40 printable characters")),
    ("A\nB", ("control character (U+000A)",)),
    ("A\tB", ("control character (U+0009)",)),
    ("A\u202eB", ("unprintable character (U+202E)",)),
    ("x" * 41, ("41 characters long", "limit of 40")),
    ("   ", ("is empty",)),
    ("x" * 5000 + "\r", ("control character", "(cut)")),
])
def test_a_name_that_breaks_the_rule_is_a_400_saying_why(client, name, words):
    message = refused(client.post("/api/v1/games", json={"name": name}), 400, *words)
    assert len(message) < 400  # a long name is quoted in part, never echoed whole


def test_every_name_the_page_accepts_downloads_as_mat_and_sgf(client):
    """The 500 this replaces: a name with a carriage return was accepted, and its .mat failed."""
    from bgnet.formats.mat import read_mat
    from bgnet.formats.sgf import read_sgf

    for name in ("Ann", "  Zoë   van der Berg ", "O'Neil [B] \\ \"x\"", "李小龍", "x" * 40):
        s = new_game(client, name=name)
        kept = " ".join(name.split())
        assert s["names"]["you"] == kept
        mat, sgf = (client.get(f"/api/v1/games/{s['id']}/{kind}") for kind in ("mat", "sgf"))
        assert mat.status_code == 200 and sgf.status_code == 200, (mat.text, sgf.text)
        assert read_mat(mat.text).names[0] == read_sgf(sgf.text).names[0] == kept


@pytest.mark.parametrize("content, ctype, words", [
    (b"{bad json", "application/json", ("not valid JSON", "Expecting property name", "offset 1")),
    (b"x=1", "application/x-www-form-urlencoded", ("must be a JSON object", "3 bytes that are not JSON")),
    (b"[1, 2]", "application/json", ("must be a JSON object", "got an array in JSON")),
])
def test_a_body_that_is_no_json_object_is_told_so(client, content, ctype, words):
    resp = client.post("/api/v1/games", content=content, headers={"content-type": ctype})
    refused(resp, 400, *words)
    assert "x=1" not in resp.json()["message"]  # the body is described, never echoed


def test_game_action_bad_input(client):
    s = to_my_move(client, new_game(client))  # the person's move, whatever the dice
    gid = s["id"]
    refused(client.post(f"/api/v1/games/{gid}/fly", json={}), 404, "fly")
    refused(client.post("/api/v1/games/nosuchgame/roll", json={}), 404, "nosuchgame")
    refused(client.post(f"/api/v1/games/{gid}/step", json={"from": "a", "to": 3}), 400, "from")
    refused(client.post(f"/api/v1/games/{gid}/step", json={"from": 8}), 400, "step")
    refused(client.post(f"/api/v1/games/{gid}/step", json={"from": 8, "to": 26}), 400, "to")
    refused(client.post(f"/api/v1/games/{gid}/step", json={"form": 8, "to": 5}), 400,
            "unknown field form")
    refused(client.post(f"/api/v1/games/{gid}/move", json={}), 400, "move")
    refused(client.post(f"/api/v1/games/{gid}/resign", json={"kind": "all"}), 400, "kind",
            "single", "gammon")
    refused(client.post(f"/api/v1/games/{gid}/roll", json={}), 400, "start of your turn")
    refused(client.post(f"/api/v1/games/{gid}/take", json={}), 400, "no double")


class LastMoveBot(Bot):
    """Plays the last legal move the generator lists: rarely the best, always the same."""

    name = "last"

    def choose_move(self, board, d1, d2):
        after, _ = generate(board, d1, d2)
        return after[-1] if len(after) else board


def test_a_bot_that_only_chooses_moves_puts_its_choice_first():
    from serve_load import check_answer, random_positions, wildbg_query

    with TestClient(create_app(LastMoveBot(), warm=False)) as c:
        for board, d1, d2 in random_positions(8, seed=2):
            data = ok(c.get(f"/move?{wildbg_query(board, d1, d2)}"))
            assert check_answer(board, d1, d2, data, ordered=False) is None
            after, _ = generate(board, d1, d2)
            if len(after):
                assert apply_play(board, data["moves"][0]["play"]) == after[-1].tobytes()
        refused(c.get("/api/v1/moves", params={"position_id": START, "dice": "31", "ply": 1}),
                400, "fixed depth")


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("::1", True),
                                            ("localhost", True), ("0.0.0.0", False),
                                            ("192.168.1.5", False)])
def test_only_loopback_hosts_pass_without_a_warning(host, loopback):
    from bgnet.cli.serve import check_host

    assert check_host(host) is loopback


def test_several_people_play_at_once_each_in_their_own_game(client):
    a, b = new_game(client, name="Ann"), new_game(client, name="Bob", match_length=3)
    assert a["id"] != b["id"]
    b_before = ok(client.get(f"/api/v1/games/{b['id']}"))
    a = to_my_move(client, a)
    act(client, a, "move", move=a["legal_moves"][0]["notation"])
    b_after = ok(client.get(f"/api/v1/games/{b['id']}"))
    assert b_after == b_before and b_after["names"]["you"] == "Bob" and b_after["match_length"] == 3


def test_old_games_are_dropped_past_the_limit():
    from bgnet.bots.simple import RandomBot

    with TestClient(create_app(RandomBot(1), max_games=2, warm=False)) as c:
        first = new_game(c)
        new_game(c)
        new_game(c)
        refused(c.get(f"/api/v1/games/{first['id']}"), 404, "start a new one")


def test_a_fault_of_the_server_is_one_json_line_without_a_traceback():
    class Broken(LastMoveBot):
        def evaluate(self, boards):
            raise RuntimeError("secret internals")

    app = create_app(Broken(), warm=False)
    with TestClient(app, raise_server_exceptions=False) as c:
        resp = c.get("/api/v1/evaluate", params={"position_id": START})
        assert resp.status_code == 500
        assert "RuntimeError" in resp.json()["message"] and "secret" not in resp.text


# ---------------------------------------------------------------------------------------------
# moves ranked by the match's own measure


def test_wildbg_move_ranks_by_the_score_it_is_given(client):
    """No score, double match point and 2-away/4-away rank the moves differently; at double
    match point only winning counts, so the list runs down the winning chances."""
    base = f"/move?die1=3&die2=1&{WILDBG_START}"
    money_answer = client.get(base).content
    dmp = client.get(base + "&x_away=1&o_away=1")
    other = client.get(base + "&x_away=2&o_away=4").content
    assert len({money_answer, dmp.content, other}) == 3
    wins = [m["probabilities"]["win"] for m in ok(dmp)["moves"]]
    assert wins == sorted(wins, reverse=True)
    money_eqs = [money(m["probabilities"]) for m in ok(client.get(base))["moves"]]
    assert money_eqs == sorted(money_eqs, reverse=True)


def test_api_moves_with_a_match_id_rank_by_the_match_s_own_measure(client):
    from bgnet.engine.state import MatchContext
    from bgnet.formats.match_id import match_id

    plain = ok(client.get("/api/v1/moves", params={"position_id": START, "dice": "31", "limit": 16}))
    assert plain["ranked_by"] == "cubeless money equity"
    assert all(m["value"] == m["equity"] and m["match_winning_chances"] is None for m in plain["moves"])
    mid = match_id(MatchContext(match_length=5, score=(4, 4)))
    dmp = ok(client.get("/api/v1/moves", params={"position_id": START, "match_id": mid, "dice": "31",
                                                  "limit": 16}))
    assert "EMG" in dmp["ranked_by"]
    values = [m["value"] for m in dmp["moves"]]
    assert values == sorted(values, reverse=True)
    for m in dmp["moves"]:  # double match point: the match winning chances are the game's
        assert m["match_winning_chances"] == pytest.approx(m["probabilities"]["win"], abs=1e-5)
    assert [m["notation"] for m in dmp["moves"]] != [m["notation"] for m in plain["moves"]]
    joined = ok(client.get("/api/v1/moves", params={"position_id": f"{START}:{mid}", "dice": "31",
                                                     "limit": 16}))
    assert joined["moves"] == dmp["moves"]
    refused(client.get("/api/v1/moves", params={"position_id": f"{START}:{mid}", "match_id": mid,
                                                "dice": "31"}), 400, "match_id")
    refused(client.get("/api/v1/moves", params={"position_id": START, "match_id": "nonsense",
                                                "dice": "31"}), 400, "match_id")


def test_a_position_id_and_an_xgid_of_one_position_say_why_they_rank_differently(client):
    """A bare Position ID carries no cube, an XGID always does: the first ranks by cubeless
    money equity, the second (money play, the cube centred) by cubeful money equity, and each
    answer says why, naming the other spelling; with the cube given both ways they agree."""
    from bgnet.engine.state import MatchContext
    from bgnet.formats.match_id import match_id

    bare = ok(client.get("/api/v1/moves", params={"position_id": START, "dice": "31", "limit": 16}))
    xg = ok(client.get("/api/v1/moves", params={
        "xgid": "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10", "limit": 16}))
    assert (bare["ranked_by"], xg["ranked_by"]) == ("cubeless money equity", "cubeful money equity")
    assert bare["ranked_by_why"].startswith("no cube or score was given (a bare Position ID "
                                            "carries neither), so the moves rank by cubeless")
    assert "an XGID" in bare["ranked_by_why"]
    assert xg["ranked_by_why"].startswith("the cube and score were given (money play), so the moves "
                                          "rank by cubeful money equity; the same position as a bare "
                                          "Position ID")
    with_cube = ok(client.get("/api/v1/moves", params={
        "position_id": f"{START}:{match_id(MatchContext(dice=(3, 1)))}", "limit": 16}))
    assert with_cube["moves"] == xg["moves"] and with_cube["ranked_by_why"] == xg["ranked_by_why"]
    mid = match_id(MatchContext(match_length=5, score=(4, 4)))
    dmp = ok(client.get("/api/v1/moves", params={"position_id": START, "match_id": mid, "dice": "31"}))
    assert dmp["ranked_by_why"].startswith("the score of a match was given")


def test_a_cubeless_server_keeps_the_cubeless_ranking(client):
    from bgnet.engine.state import MatchContext
    from bgnet.play.web.answers import Answers

    bot = client.app.state.answers.bot
    dmp = MatchContext(match_length=5, score=(4, 4))
    plain = Answers(bot, cubeless_play=True).moves(start_position(), 3, 1, 0, 16, dmp)
    assert plain["ranked_by"] == "cubeless money equity"
    assert "started with cubeful play off" in plain["ranked_by_why"]
    assert plain["moves"] == Answers(bot).moves(start_position(), 3, 1, 0, 16)["moves"]


def test_the_cube_endpoint_decides_as_the_bot_does_at_the_table(client):
    """/api/v1/cube answers with the bot's own rule (a 0-ply net looks again at close decisions),
    the same as Bot.cube_decision, bgnet play and bgnet eval."""
    import bgnet
    from bgnet.formats.match_id import match_id
    from bgnet.measure.cube_bench import load_benchmark

    bot = bgnet.load_bot("bgnet-default")
    bench = load_benchmark().head(40)
    for i in range(len(bench)):
        pid, mid = position_id(bench.boards[i]), match_id(bench.context(i))
        got = ok(client.get("/api/v1/cube", params={"position_id": pid, "match_id": mid}))
        want = bot.cube_decision(pid, mid)
        assert (got["action"], got["double"], got["take"]) == (want.action, want.double, want.take)
