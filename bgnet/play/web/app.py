"""The FastAPI application: bgnet's API under ``/api/v1/``, wildbg's ``/move`` and ``/eval``,
the play page at ``/`` and the OpenAPI page at ``/docs``.

Requests are checked before any bot code runs: unknown query parameters, values out of range,
malformed IDs and bodies over :data:`MAX_BODY` bytes are answered 400/413 with
``{"message": ...}``; FastAPI's own validation errors (422) are turned into the same 400 form.
Request bodies and answers are declared in :mod:`.schema`, so ``/openapi.json`` describes them.

The OpenAPI page is Swagger UI served from the package (``static/docs``: Swagger UI's own
distribution, Apache License 2.0, its licence and notices beside it), so it works without a
network; its validator badge, which would ask a server elsewhere, is off.
"""
from __future__ import annotations

import inspect
from pathlib import Path

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from bgnet.engine.state import MAX_MATCH_LENGTH, MatchContext
from bgnet.play.web.answers import Answers
from bgnet.play.web.games import GameStore
from bgnet.play.web.positions import (
    WILDBG_POINTS,
    board_from_wildbg,
    check_die,
    one_position,
    parse_dice,
    plus_restored,
)
from bgnet.play.web.schema import (
    ERRORS,
    BotInfo,
    CubeAnswer,
    Evaluation,
    Health,
    Moves,
    WildbgEval,
    WildbgMoves,
    only,
)
from bgnet.play.web.service import ApiError, BotService

MAX_BODY = 16 * 1024  # bytes: the largest request body (game actions are a few dozen bytes)
STATIC = Path(__file__).with_name("static")


# ---------------------------------------------------------------------------------------------
# checks shared by the routes


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in ("query", "body", "path"))
        got = err.get("input")
        if err.get("type") == "extra_forbidden":
            parts.append(f"unknown field {where} (the fields are listed at /docs)")
            continue
        if err.get("type") == "json_invalid":
            at = err.get("loc", ("body", None))[-1]
            why = (err.get("ctx") or {}).get("error", "")
            parts.append(f"the body is not valid JSON ({why} at offset {at})" if why and
                         isinstance(at, int) else "the body is not valid JSON")
            continue
        if err.get("type") == "model_attributes_type" and err.get("loc") == ("body",):
            parts.append(f"the body must be a JSON object with Content-Type: application/json "
                         f"(the fields are listed at /docs); got {_what_body(got)}")
            continue
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "value_error":  # our own validators' sentences say it all
            parts.append(msg)
            continue
        got_text = "" if got is None or isinstance(got, dict) else f" (got {got!r})"
        parts.append(f"{where or 'the request'}: {msg}{got_text}")
    return "; ".join(parts)


def _what_body(got) -> str:
    """A short account of a body that is not a JSON object, never the body itself."""
    if isinstance(got, (bytes, bytearray)):
        return f"{len(got)} bytes that are not JSON (a form or plain text?)"
    kinds = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true or false"}
    return f"{kinds.get(type(got), 'null')} in JSON"


class HeadAsGet:
    """ASGI middleware: HEAD answered wherever GET is, as HTTP asks (the headers GET would send,
    no body); FastAPI's routes know GET alone."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "HEAD":
            return await self.app(scope, receive, send)

        async def headers_only(message):
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


class BodyLimit:
    """ASGI middleware: bodies over ``limit`` bytes are answered 413 before the app reads them."""

    def __init__(self, app, limit: int = MAX_BODY):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._refuse(send)
        chunks, size, more = [], 0, True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                return await self.app(scope, _replay([msg], receive), send)
            chunks.append(msg.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await self._refuse(send)
            more = msg.get("more_body", False)
        body = b"".join(chunks)
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}],
                                      receive), send)

    async def _refuse(self, send):
        resp = JSONResponse({"message": f"the request body is over the limit of {self.limit} bytes"},
                            status_code=413)
        await resp({"type": "http"}, _replay([], None), send)


def _replay(messages, then):
    """A ``receive`` that gives ``messages`` first, then defers to ``then`` (the real one, which
    reports the client's disconnect when it comes; streaming responses wait for it)."""
    queue = list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        if then is None:
            return {"type": "http.disconnect"}
        return await then()
    return receive


def _wildbg_signature(fn):
    """Give ``fn`` the query parameters ``die1``, ``die2``, ``p0`` .. ``p25``, ``x_away``,
    ``o_away`` so that the OpenAPI page lists them one by one."""
    params = [inspect.Parameter("die1", inspect.Parameter.KEYWORD_ONLY, annotation=int,
                                default=Query(..., description="first die, 1..6")),
              inspect.Parameter("die2", inspect.Parameter.KEYWORD_ONLY, annotation=int,
                                default=Query(..., description="second die, 1..6"))]
    return _with_points(fn, params)


def _with_points(fn, params):
    for name in WILDBG_POINTS:
        i = int(name[1:])
        desc = ("bar of the side to move, 0..15" if i == 25 else
                "bar of the opponent, -15..0" if i == 0 else
                f"point {i} of the side to move: its checkers positive, the opponent's negative")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=int,
                                        default=Query(0, description=desc)))
    for name, who in (("x_away", "the side to move"), ("o_away", "the opponent")):
        params.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=int | None,
            default=Query(None, ge=1, le=MAX_MATCH_LENGTH, description=f"points {who} needs to win the match "
                          "(give both for match play; money play without them)")))
    fn.__signature__ = inspect.Signature(params)
    return fn


def _away_context(x_away: int | None, o_away: int | None) -> MatchContext:
    """The cube context of wildbg's ``/eval``: money with a centred cube, or a match score
    given as points away (x is player 1, on roll)."""
    if (x_away is None) != (o_away is None):
        raise ApiError(400, "give both x_away and o_away (match play) or neither (money play)")
    if x_away is None or o_away is None:  # both or neither, checked above
        return MatchContext(player_on_roll=1, turn=1)
    length = max(x_away, o_away)
    return MatchContext(player_on_roll=1, turn=1, match_length=length,
                        score=(length - o_away, length - x_away))


def _match_context(match_id: str) -> MatchContext:
    """The context of a ``match_id`` query parameter; a bad one is refused (400)."""
    from bgnet.formats.match_id import match_context_from_id

    try:
        return match_context_from_id(plus_restored(match_id))
    except ValueError as e:
        raise ApiError(400, f"match_id {match_id!r}: {e}") from None


# ---------------------------------------------------------------------------------------------
# the application


def create_app(bot=None, *, ply: int | None = None, timeout: float = 30.0, max_waiting: int = 64,
               max_games: int = 500, seed=None, warm: bool = True,
               cubeless_play: bool = False, database=None) -> FastAPI:
    """The server for ``bot`` (default: the bot shipped with bgnet) searching at ``ply``.

    ``timeout``: seconds a request waits for the bot (then 504); ``max_waiting``: bot calls
    queued before requests get 503; ``max_games``: games kept for the play page (the one idle
    longest is dropped first); ``seed``: the dice of the page's games (tests); ``warm``: make
    one bot call at start-up so the first request does not pay for compiling; ``cubeless_play``:
    moves rank by cubeless money equity even where the cube and score are given;
    ``database``: a :class:`~bgnet.play.web.database.GameDatabase` that keeps the page's games
    across restarts (its games are restored now; None: games live in memory only).
    """
    if bot is None:
        from bgnet.bots.load import load_bot

        bot = load_bot(ply=ply or 0)
    service = BotService(bot, timeout=timeout, max_waiting=max_waiting)
    answers = Answers(bot, ply, cubeless_play=cubeless_play)
    games = GameStore(answers, service, max_games=max_games, seed=seed, database=database)
    app = FastAPI(title="bgnet", version=_version(), docs_url=None, redoc_url=None,
                  description=f"The backgammon bot {bot.name}: bgnet's API under /api/v1/, "
                              "wildbg's /move and /eval, and a page to play it at /.")
    app.state.service, app.state.answers, app.state.games = service, answers, games
    if warm:
        service.call_now(_warm_up, answers)
    _add_error_handlers(app)
    app.add_middleware(BodyLimit)
    app.add_middleware(HeadAsGet)
    _add_wildbg_routes(app, service, answers)
    _add_api_routes(app, service, answers)
    games.add_routes(app)
    _add_page(app)
    return app


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("bgnet")
    except Exception:  # not installed (a source tree on PYTHONPATH)
        return "0"


def _warm_up(answers: Answers) -> None:
    """Compile and load what the first requests would otherwise wait for: the contact and race
    nets and the bear-off database."""
    import numpy as np

    from bgnet.engine.board import start_position

    bearoff = np.zeros((2, 25), np.int8)
    bearoff[:, :5] = 3
    for b in (start_position(), bearoff):
        answers.ranked(b, 3, 1, answers.default_ply)
        if answers.evaluator is not None:
            answers.probabilities(b, answers.default_ply)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request, exc: ApiError):
        return JSONResponse({"message": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request, exc: RequestValidationError):
        return JSONResponse({"message": _validation_message(exc)}, status_code=400)

    @app.exception_handler(404)
    async def not_found(request, exc):
        detail = getattr(exc, "detail", None)
        message = detail if isinstance(detail, str) and detail != "Not Found" else \
            f"no such page or endpoint: {request.url.path} (the API is described at /docs)"
        return JSONResponse({"message": message}, status_code=404)

    @app.exception_handler(Exception)
    async def unexpected(request, exc: Exception):
        # A fault of the server, not of the request: one line, no traceback to the client.
        return JSONResponse({"message": f"the server failed on {request.url.path} "
                                        f"({type(exc).__name__}); please report it"},
                            status_code=500)

    @app.exception_handler(405)
    async def bad_method(request, exc):
        return JSONResponse({"message": f"{request.method} is not allowed on {request.url.path}"},
                            status_code=405)


def _add_wildbg_routes(app: FastAPI, service: BotService, answers: Answers) -> None:
    wildbg = ("die1", "die2", *WILDBG_POINTS, "x_away", "o_away")

    async def get_move(**kw):
        d1, d2 = check_die(kw["die1"], "die1"), check_die(kw["die2"], "die2")
        board = board_from_wildbg(kw)
        # Moves rank by the match's own measure at the score given, cubelessly without one.
        x_away, o_away = kw.get("x_away"), kw.get("o_away")
        ctx = None if x_away is None and o_away is None else _away_context(x_away, o_away)
        # Answered as it is: FastAPI's generic encoding of a long list costs more than the bot.
        return JSONResponse(await service.call(answers.wildbg_moves, board, d1, d2, ctx))

    async def get_eval(**kw):
        board = board_from_wildbg(kw)
        ctx = _away_context(kw.get("x_away"), kw.get("o_away"))
        return await service.call(answers.wildbg_eval, board, ctx)

    app.get("/move", tags=["wildbg"], dependencies=[Depends(only(*wildbg))],
            response_model=WildbgMoves, responses=ERRORS,
            summary="wildbg: every legal move, best first")(_wildbg_signature(get_move))
    app.get("/eval", tags=["wildbg"], dependencies=[Depends(only(*wildbg[2:]))],
            response_model=WildbgEval, responses=ERRORS,
            summary="wildbg: probabilities and the cube decision")(_with_points(get_eval, []))


def _add_api_routes(app: FastAPI, service: BotService, answers: Answers) -> None:
    pid_q = Query(None, description="GNU Backgammon Position ID, the side to move on roll")
    xgid_q = Query(None, description="XGID (instead of position_id)")
    ply_q = Query(None, description="search depth (net bots: 0, 1 or 2); default the server's")

    @app.get("/api/v1/bot", tags=["bgnet"], dependencies=[Depends(only())],
             response_model=BotInfo, responses=ERRORS,
             summary="the bot: name, encoding, measured strength")
    async def bot_info():
        return answers.describe()

    @app.get("/api/v1/moves", tags=["bgnet"],
             dependencies=[Depends(only("position_id", "match_id", "xgid", "dice", "ply", "limit"))],
             response_model=Moves, responses=ERRORS,
             summary="the legal moves of a position, best first, each valued at the ply asked")
    async def moves(position_id: str | None = pid_q,
                    match_id: str | None = Query(None, description="GNU Backgammon Match ID (cube, "
                                                 "score, match length): moves rank by the "
                                                 "match's own measure"),
                    xgid: str | None = xgid_q,
                    dice: str | None = Query(None, description="the roll, e.g. 31 or 3-1 "
                                             "(default: the dice of the XGID)"),
                    ply: int | None = ply_q,
                    limit: int = Query(10, ge=1, le=1000, description="moves to list")):
        board, ctx = one_position(position_id, xgid)
        if match_id is not None:
            if ctx is not None:
                raise ApiError(400, "the position already carries the cube and score (an XGID, "
                                    "or POSITIONID:MATCHID): leave out match_id")
            ctx = _match_context(match_id)
        if dice is not None:
            d1, d2 = parse_dice(dice)
        elif ctx is not None and ctx.dice[0]:
            d1, d2 = ctx.dice
        else:
            raise ApiError(400, "give the dice, e.g. dice=31")
        return await service.call(answers.moves, board, d1, d2, answers.ply(ply), limit, ctx)

    @app.get("/api/v1/evaluate", tags=["bgnet"],
             dependencies=[Depends(only("position_id", "xgid", "ply"))],
             response_model=Evaluation, responses=ERRORS,
             summary="cubeless probabilities and equity of the side on roll, before rolling")
    async def evaluate(position_id: str | None = pid_q, xgid: str | None = xgid_q,
                       ply: int | None = ply_q):
        board, _ = one_position(position_id, xgid)
        return await service.call(answers.evaluate, board, answers.ply(ply))

    @app.get("/api/v1/cube", tags=["bgnet"],
             dependencies=[Depends(only("position_id", "match_id", "xgid", "ply"))],
             response_model=CubeAnswer, responses=ERRORS,
             summary="the cube decision of the side on roll")
    async def cube(position_id: str | None = pid_q,
                   match_id: str | None = Query(None, description="GNU Backgammon Match ID "
                                                "(cube, score, match length; with position_id)"),
                   xgid: str | None = xgid_q, ply: int | None = ply_q):
        board, ctx = one_position(position_id, xgid)
        if ctx is None:
            if match_id is None:
                raise ApiError(400, "give match_id with position_id (e.g. cAkAAAAAAAAA for "
                                    "money with a centred cube)")
            ctx = _match_context(match_id)
        elif match_id is not None:
            raise ApiError(400, "the position already carries the cube and score (an XGID, or "
                                "POSITIONID:MATCHID): leave out match_id")
        return await service.call(answers.cube, board, ctx, answers.ply(ply))


def _add_page(app: FastAPI) -> None:
    from fastapi.openapi.docs import get_swagger_ui_html

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/docs", include_in_schema=False)
    async def docs():
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json",
                                   title="bgnet: the HTTP API",
                                   swagger_js_url="/static/docs/swagger-ui-bundle.js",
                                   swagger_css_url="/static/docs/swagger-ui.css",
                                   swagger_favicon_url="/static/favicon.svg",
                                   swagger_ui_parameters={"validatorUrl": None})

    @app.get("/health", tags=["bgnet"], response_model=Health,
             summary="alive, how many bot calls wait, how many games are kept and were restored")
    async def health(request: Request):
        games = request.app.state.games
        return {"ok": True, "waiting": request.app.state.service.waiting, "games": len(games),
                "restored": games.restored, "saved": games.database is not None}
