"""The games played on the page: one per visitor, each a :class:`~bgnet.play.table.Table`.

The table holds the match and the rules of play (how the bot answers doubles, resignations, its
moves, and the message for each, as events); here the person's decisions come from requests and
the events' lines go to a log that the page shows. The person is player 0 (X, the left column of
a ``.mat`` file), the bot player 1.

A person's move is either typed (``move``, judged by :func:`bgnet.engine.notation.parse_move`,
so an illegal one is explained as in the terminal) or clicked one checker at a time (``step``,
see :mod:`bgnet.play.clickmove`), shown before it is played, and then ``confirm``-ed or ``undo``-ne. The
dice are rolled for the person when doubling is not allowed, and a turn without a legal move
passes by itself, as in the terminal.

Game state answers (:meth:`WebGame.state`) draw the board from the person's side: ``points[p]``
for p = 1..24 is the count on the person's point p, the person's checkers positive and the
bot's negative.

With a :class:`~bgnet.play.web.database.GameDatabase`, the store writes each game after every
change (:meth:`WebGame.snapshot`: the table's data, :meth:`bgnet.play.table.Table.snapshot`, and
what the page shows: the log, the bot's last moves, the hint) and restores them all when the
server starts, so a restart, even a ``kill -9``, resumes every game where it was.
"""
from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from fastapi import Body, FastAPI, Path, Request
from fastapi.responses import PlainTextResponse

from bgnet.engine import position_id
from bgnet.engine.board import pip_counts
from bgnet.engine.game import DOUBLED, MOVE, OPENING, OVER, ROLL, RuleError
from bgnet.engine.notation import format_move
from bgnet.formats.match_id import match_id
from bgnet.play import clickmove
from bgnet.play.table import BOT, HUMAN, Event, Refusal, Table
from bgnet.play.web.positions import probs_dict
from bgnet.play.web.schema import ERRORS, GameAction, GameState, NewGame, only
from bgnet.play.web.service import ApiError

MAX_LOG = 200
HINT_MOVES = 5
ACTIONS = ("roll", "double", "take", "drop", "resign", "move", "step", "undo", "confirm",
           "new_game", "hint")
RESIGN_KINDS = {"single": 1, "gammon": 2, "backgammon": 3}
# A JSON body that may be left out. One shared marker rather than a call in each route's
# defaults; FastAPI copies the default for every request that omits the body.
_OPTIONAL_BODY = Body(default=None)


class WebGame:
    """One person's match (or money session) against the bot."""

    def __init__(self, gid: str, answers, *, match_length: int, name: str, seed=None,
                 jacoby: bool = False, table: Table | None = None):
        self.id = gid
        self.answers = answers
        self.log: list[str] = []
        self.log_count = 0  # lines written since the start, so the page can tell the new ones
        self.hint: dict | None = None
        self.bot_moves: list[dict] = []  # the bot's moves since the person's last action
        if table is not None:  # restored (see restore): its game is under way
            table.on_event = self._told
            self.table = table
            return
        self.table = Table(answers.advisor, match_length=match_length, games=None, seed=seed,
                           name=name, jacoby=jacoby, on_event=self._told)
        self._start_game()

    # -- as data ---------------------------------------------------------------------------------
    def snapshot(self) -> dict:
        """The game as JSON-able data for :meth:`restore` (what the database stores)."""
        return {"id": self.id, "table": self.table.snapshot(), "log": list(self.log),
                "log_count": self.log_count, "hint": self.hint, "bot_moves": list(self.bot_moves)}

    @classmethod
    def restore(cls, data: dict, answers) -> WebGame:
        """The game of :meth:`snapshot`'s ``data``, its table played again by the rules;
        ValueError saying what does not fit."""
        if not isinstance(data, dict):
            raise ValueError("a stored game is a JSON object")
        table = Table.restore(answers.advisor, data.get("table"))  # type: ignore[arg-type]
        log, count, hint, moves = (data.get(k) for k in ("log", "log_count", "hint", "bot_moves"))
        if not (isinstance(log, list) and all(isinstance(line, str) for line in log)
                and isinstance(count, int) and count >= len(log)
                and (hint is None or isinstance(hint, dict))
                and isinstance(moves, list) and all(isinstance(m, dict) for m in moves)):
            raise ValueError("its log, hint or bot's moves are not stored as a game's are")
        game = cls(str(data.get("id")), answers, match_length=table.match.length, name=table.name,
                   table=table)
        game.log, game.log_count, game.hint, game.bot_moves = log[-MAX_LOG:], count, hint, moves
        return game

    # -- plumbing --------------------------------------------------------------------------------
    def _write(self, text: str) -> None:
        lines = [line for line in str(text).splitlines() if line.strip()]
        self.log.extend(lines)
        self.log_count += len(lines)
        del self.log[:-MAX_LOG]

    def _told(self, event: Event) -> None:
        self._write(event.text)

    @property
    def match(self):
        return self.table.match

    @property
    def game(self):
        return self.table.game

    @property
    def steps(self) -> list:
        """The clicked move so far: (from, to, die) single steps."""
        return self.table.steps

    def _start_game(self) -> None:
        try:
            self.table.start_game()
        finally:
            self._keep_bot_moves(0)

    def _decide(self, decision, *args, logged: bool = True) -> None:
        """Make the person's decision at the table and keep the bot's moves that answered it;
        a refusal is a 400 (its line also goes to the log when ``logged``, as typed decisions'
        do)."""
        first = len(self.game.record.actions)
        try:
            decision(*args)
        except Refusal as e:
            if logged:
                self._write(str(e))
            raise ApiError(400, str(e)) from None
        except Exception:
            self._keep_bot_moves(first)
            raise
        self._keep_bot_moves(first)

    def _keep_bot_moves(self, first: int) -> None:
        g = self.game
        self.bot_moves = [_bot_move(g, i, a) for i, a in enumerate(g.record.actions)
                          if i >= first and a.player == BOT and a.kind == "move"]

    # -- actions ---------------------------------------------------------------------------------
    def act(self, action: str, body: dict | None = None) -> dict:
        """Carry out ``action`` for the person and return the new state (see the module doc).
        ``body``: the action's fields (:class:`~bgnet.play.web.schema.GameAction`)."""
        body = body or {}
        if action not in ("step", "undo"):  # a hint holds for the whole roll
            self.hint = None
        if action not in ACTIONS:
            raise ApiError(404, f"no game action {action!r}; actions: {', '.join(ACTIONS)}")
        if action == "new_game":
            if not self.game.over:
                raise ApiError(400, "finish this game first (or resign it)")
            if self.match.over:
                raise ApiError(400, "the match is over: start a new match")
            self._start_game()
            return self.state()
        if self.game.over:
            raise ApiError(400, "the game is over: start the next game")
        if action != "hint" and self.game.turn != HUMAN:
            raise ApiError(400, "it is not your turn")
        try:
            getattr(self, "_" + action)(body)
        except RuleError as e:  # the rules refuse it now (the table's checks come first)
            raise ApiError(400, f"Not allowed: {e}.") from None
        return self.state()

    def _roll(self, body):
        self._need(ROLL, "you can roll only at the start of your turn")
        self._decide(self.table.roll)

    def _double(self, body):
        self._need(ROLL, "you can double only before rolling")
        self._decide(self.table.double)

    def _take(self, body):
        self._need(DOUBLED, "there is no double to answer")
        self._decide(self.table.take)

    def _drop(self, body):
        self._need(DOUBLED, "there is no double to answer")
        self._decide(self.table.drop)

    def _resign(self, body):
        kind = str(body.get("kind") or "single")
        if kind not in RESIGN_KINDS:
            raise ApiError(400, f"resign single, gammon or backgammon; got {kind!r}")
        try:
            self.table.resign(RESIGN_KINDS[kind])
        except Refusal as e:  # told in the log, as a rejected resignation is
            self._write(str(e))
            return
        if self.game.over:
            self.bot_moves = []

    def _move(self, body):
        text = body.get("move")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "give the move as text, e.g. {\"move\": \"24/18 13/11\"}")
        self._need(MOVE, "roll the dice first")
        self._decide(self.table.move, text)

    def _step(self, body):
        self._need(MOVE, "roll the dice first")
        a, b = body.get("from", body.get("from_")), body.get("to")
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 25 for x in (a, b)):
            raise ApiError(400, "a step is {\"from\": POINT, \"to\": POINT} with points 0..25 "
                                "(25 the bar, 0 off), numbered from your side")
        try:
            self.table.step(a, b)
        except Refusal as e:
            raise ApiError(400, str(e)) from None

    def _undo(self, body):
        self._need(MOVE, "there is no move to undo")
        self.table.undo()

    def _confirm(self, body):
        self._need(MOVE, "there is no move to confirm")
        self._decide(self.table.confirm, logged=False)

    def _hint(self, body):
        g = self.game
        if g.phase == MOVE and g.turn == HUMAN:
            self.hint = self._move_hint(g)
        else:
            self.hint = {"text": self.table.cube_hint().text.splitlines()}

    def _move_hint(self, g) -> dict:
        """The best moves with their figures, valued by the page's bot at its depth."""
        ply, ctx = self.answers.ply(None), g.context()
        count, top = self.answers.valued(g.board, max(g.dice), min(g.dice), ply, HINT_MOVES, ctx)
        moves = [{"notation": m.notation, "equity": _r4(m.equity),
                  "cubeful_equity": _r4(m.cubeful), "mwc": _r4(m.mwc),
                  "probabilities": None if m.probabilities is None else probs_dict(m.probabilities)}
                 for m in top]
        return {"moves": moves, "legal_moves": count, "ply": self.answers.values_ply(ply),
                "by": self.answers.evaluator_name,
                "ranked_by": self.answers.ranked_by(ctx)}

    def _need(self, phase: str, why: str) -> None:
        if self.game.phase != phase:
            raise ApiError(400, why)

    # -- the state -------------------------------------------------------------------------------
    def state(self) -> dict:
        g, m, table = self.game, self.match, self.table
        view = g.board_for(HUMAN)
        mine = g.phase == MOVE and g.turn == HUMAN
        shown = clickmove.display_board(view, self.steps) if mine else view
        points = [0] * 25
        for p in range(1, 25):
            points[p] = int(shown[1, p - 1]) - int(shown[0, 24 - p])
        pips = pip_counts(shown)
        on_roll = g.player_on_roll
        legal = []
        if mine:
            after_all, steps_all = g.legal_moves()
            legal = [{"notation": format_move(s, view),
                      "steps": [[int(x), int(y)] for x, y in s if x >= 0]} for s in steps_all]
        owner = {HUMAN: "you", BOT: "bot"}.get(g.cube_owner, "centre")
        cube = {"value": g.cube_value, "owner": owner}
        if g.phase == DOUBLED and on_roll is not None:
            cube.update(offered=2 * g.cube_value, offered_by="you" if on_roll == HUMAN else "bot")
        state = {
            "id": self.id, "names": {"you": table.name, "bot": table.bot_name},
            "match_length": m.length, "jacoby": bool(m.jacoby),
            "score": {"you": m.score[HUMAN], "bot": m.score[BOT]},
            "game_number": len(m.games), "crawford": g.crawford, "phase": g.phase,
            "turn": {HUMAN: "you", BOT: "bot"}.get(g.turn),
            "on_roll": {HUMAN: "you", BOT: "bot"}.get(on_roll),
            "points": points,
            "bar": {"you": int(shown[1, 24]), "bot": int(shown[0, 24])},
            "off": {"you": 15 - int(shown[1].sum()), "bot": 15 - int(shown[0].sum())},
            "pips": {"you": pips[0], "bot": pips[1]},
            "dice": list(g.dice) if g.dice[0] else None,
            "dice_left": table.dice_left() if mine else [],
            "steps": [[a, b] for a, b, _ in self.steps],
            "steps_notation": format_move([(a, b) for a, b, _ in self.steps], view) if self.steps else "",
            "complete": bool(mine and table.clicked_move() is not None),
            "legal_moves": legal,
            "destinations": {str(a): ends for a, ends in table.destinations().items()} if mine else {},
            "bot_moves": list(self.bot_moves),
            "cube": cube,
            "may_double": g.phase == ROLL and g.turn == HUMAN and g.may_double(HUMAN),
            "position_id": position_id(g.board) if on_roll is not None else None,
            "match_id": match_id(g.context()) if g.phase not in (OVER, OPENING) else None,
            "game_over": g.over, "match_over": m.over,
            "winner": None if not g.over else ("you" if g.winner == HUMAN else "bot"),
            "points_won": g.points if g.over else 0,
            "log": list(self.log[-40:]), "log_count": self.log_count,
            "hint": self.hint,
        }
        return state

    def mat(self) -> str:
        return self.table.match_text("mat")

    def sgf(self) -> str:
        return self.table.match_text("sgf")


def _bot_move(g, index: int, action) -> dict:
    """The bot's move ``action`` (the ``index``-th action of game ``g``) as the page shows it:
    its dice and steps numbered from its side, each saying whether it hits."""
    opp = action.board[0].astype(int).copy()  # the person's checkers, from the bot's side
    steps = []
    for a, b in action.steps:
        hit = 1 <= b <= 24 and opp[24 - b] == 1
        if hit:
            opp[24 - b] = 0
        steps.append({"from": int(a), "to": int(b), "hit": bool(hit)})
    return {"id": f"{g.record.number}-{index}", "dice": [int(max(action.dice)), int(min(action.dice))],
            "notation": action.notation or "", "steps": steps}


class GameStore:
    """The games being played, by id; past ``max_games`` the one idle longest is dropped. With
    a ``database`` (:class:`~bgnet.play.web.database.GameDatabase`) each game is written there
    after every change, and the games stored there are restored now (:attr:`restored` counts
    them); a stored game that cannot be restored raises its GameDatabaseError, and the file is
    left as it is."""

    def __init__(self, answers, service, *, max_games: int = 500, seed=None, database=None):
        self.answers, self.service = answers, service
        self.max_games = max_games
        self.seed = seed
        self.database = database
        self._games: OrderedDict[str, WebGame] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0
        self.restored = self._restore() if database is not None else 0

    def _restore(self) -> int:
        from bgnet.play.web.database import GameDatabaseError

        for gid, data in self.database.games():
            try:
                game = WebGame.restore(data, self.answers)
                if game.id != gid:
                    raise ValueError(f"it is stored under another id, {game.id!r}")
            except ValueError as e:
                raise GameDatabaseError(f"game database {self.database.path}: the game {gid!r} "
                                        f"cannot be restored ({e}); the file was left as it is: "
                                        "move it aside to start with no games") from None
            self._games[gid] = game
        self._count = len(self._games)
        self._drop_the_oldest()
        return len(self._games)

    def _drop_the_oldest(self) -> None:
        while len(self._games) > self.max_games:
            gid, _ = self._games.popitem(last=False)
            if self.database is not None:
                self.database.delete(gid)

    def save(self, game: WebGame) -> None:
        """Write ``game`` to the database (when there is one)."""
        if self.database is not None:
            self.database.save(game.id, game.snapshot())

    def new(self, match_length: int, name: str = "You", jacoby: bool = False) -> WebGame:
        with self._lock:
            self._count += 1
            seed = None if self.seed is None else self.seed + self._count
            gid = secrets.token_urlsafe(12)
        game = WebGame(gid, self.answers, match_length=match_length, name=name, seed=seed,
                       jacoby=jacoby)
        self.save(game)
        with self._lock:
            self._games[gid] = game
            self._drop_the_oldest()
        return game

    def act(self, game: WebGame, action: str, body: dict) -> dict:
        """``game.act(action, body)``, then the game written, whatever the action's outcome (a
        refused action may still have changed its log)."""
        try:
            return game.act(action, body)
        finally:
            self.save(game)

    def get(self, gid: str) -> WebGame:
        with self._lock:
            game = self._games.get(gid)
            if game is None:
                raise ApiError(404, f"no game {gid!r} on this server (it may have been dropped "
                                    "after a long idle time): start a new one")
            self._games.move_to_end(gid)
            return game

    def __len__(self) -> int:
        return len(self._games)

    # -- routes ----------------------------------------------------------------------------------
    def add_routes(self, app: FastAPI) -> None:
        call = self.service.call
        gid_p = Path(..., description="the game's id, as POST /api/v1/games gave it",
                     max_length=64)

        @app.post("/api/v1/games", tags=["play"], response_model=GameState, responses=ERRORS,
                  summary="start a money game or a match")
        async def new_game(request: Request, body: NewGame | None = _OPTIONAL_BODY):
            only()(request)
            options = body or NewGame.model_validate({})
            game = await call(self.new, options.match_length, options.name, options.jacoby)
            return await call(game.state)

        @app.get("/api/v1/games/{gid}", tags=["play"], response_model=GameState, responses=ERRORS,
                 summary="a game's state")
        async def game_state(request: Request, gid: str = gid_p):
            only()(request)
            game = self.get(gid)
            return await call(game.state)

        @app.post("/api/v1/games/{gid}/{action}", tags=["play"], response_model=GameState,
                  responses=ERRORS, summary="roll, double, take, drop, resign, move, step, undo, "
                                            "confirm, new_game or hint")
        async def game_action(request: Request, gid: str = gid_p,
                              action: str = Path(..., description=", ".join(ACTIONS)),
                              body: GameAction | None = _OPTIONAL_BODY):
            only()(request)
            game = self.get(gid)
            fields = body.model_dump(by_alias=True, exclude_none=True) if body is not None else {}
            return await call(self.act, game, action, fields)

        async def match_file(request: Request, gid: str, kind: str) -> PlainTextResponse:
            """The match as a file to download, ``kind`` "mat" or "sgf"."""
            only()(request)
            game = self.get(gid)
            text = await call(game.mat if kind == "mat" else game.sgf)
            return PlainTextResponse(text, headers={
                "Content-Disposition": f'attachment; filename="bgnet-{gid[:8]}.{kind}"'})

        @app.get("/api/v1/games/{gid}/mat", tags=["play"], summary="the match as a .mat file",
                 response_class=PlainTextResponse, responses=ERRORS)
        async def game_mat(request: Request, gid: str = gid_p):
            return await match_file(request, gid, "mat")

        @app.get("/api/v1/games/{gid}/sgf", tags=["play"], summary="the match as GNU Backgammon's .sgf file",
                 response_class=PlainTextResponse, responses=ERRORS)
        async def game_sgf(request: Request, gid: str = gid_p):
            return await match_file(request, gid, "sgf")


def _r4(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


__all__ = ["WebGame", "GameStore", "ACTIONS"]
