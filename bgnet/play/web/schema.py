"""The shapes of what ``bgnet serve`` takes and answers, as pydantic models, so that
``/openapi.json`` describes every request body and every answer and a client can be generated
from it.

Request bodies (:class:`NewGame`, :class:`GameAction`) are checked strictly: unknown fields,
numbers given as strings and values out of range are refused with a 400 answer that names the
field. Answers are described field by field; the routes that build large answers themselves
(wildbg's ``/move``) are described by the same models without being re-checked on the way out.

Probabilities are cubeless, in GNU Backgammon's order, from the view of the side the answer
names (after a move: the mover's, the opponent to roll next). Points are numbered from the
mover's side: 1..24, 25 the bar, 0 off.
"""
from __future__ import annotations

from typing import Any, Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator, model_validator

from bgnet.engine.state import MAX_MATCH_LENGTH
from bgnet.formats.names import MAX_NAME, player_name
from bgnet.play.web.service import ApiError

MAX_MATCH = MAX_MATCH_LENGTH  # GNU Backgammon's limit, as everywhere in bgnet


class _Answer(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class _Request(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class Message(_Answer):
    """What every refused request gets: a sentence that says what is wrong."""

    message: str = Field(description="what is wrong with the request, or why the server cannot answer")


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": Message, "description": "the request cannot be used (the message says why)"},
    404: {"model": Message, "description": "no such game, action or page"},
    413: {"model": Message, "description": "the request body is over the size limit"},
    503: {"model": Message, "description": "too many bot calls are waiting: try again shortly"},
    504: {"model": Message, "description": "the bot took longer than the server's time limit"},
}


# ---------------------------------------------------------------------------------------------
# moves and probabilities


class Probabilities(_Answer):
    win: float = Field(description="any win")
    win_gammon: float = Field(description="a gammon or backgammon win")
    win_backgammon: float
    lose_gammon: float = Field(description="a gammon or backgammon loss")
    lose_backgammon: float


class Step(_Answer):
    from_: int = Field(alias="from", ge=0, le=25, description="the point a checker leaves (25: the bar)")
    to: int = Field(ge=0, le=25, description="the point it reaches (0: borne off)")


class RankedMove(_Answer):
    rank: int = Field(description="1 for the best")
    notation: str = Field(description="standard notation, e.g. 8/5 6/5")
    play: list[Step] = Field(description="one step per die played")
    next_position_id: str = Field(description="the Position ID after the move, the opponent on roll")
    value: float | None = Field(None, description="the move's value by the measure the list is ranked "
                                                  "by (the answer's ranked_by): EMG at the score in a "
                                                  "match, cubeful money equity with a cube, cubeless "
                                                  "money equity without one")
    match_winning_chances: float | None = Field(None, description="the mover's match winning chances "
                                                                  "after the move (match play only)")
    equity: float | None = Field(description="cubeless money equity after the move (mover's view); "
                                             "null when the bot cannot evaluate and no judge is installed")
    probabilities: Probabilities | None
    ply: int | None = Field(description="the search depth these values come from (every move listed "
                                        "is valued at the same depth)")


class Moves(_Answer):
    position_id: str
    dice: list[int] = Field(min_length=2, max_length=2)
    ply: int | None = Field(description="the search depth of every value in the list")
    legal_moves: int = Field(description="how many legal moves the position has (the list may be shorter)")
    bot: str
    evaluator: str | None = Field(description="whose probabilities these are")
    ranked_by: str = Field("cubeless money equity",
                           description="what the moves are ranked by: the match's own measure where "
                                       "the cube and score are given (a Match ID or XGID)")
    ranked_by_why: str = Field("", description="why the moves are ranked by that measure: a bare "
                                               "Position ID carries no cube or score, an XGID "
                                               "always does")
    moves: list[RankedMove]


class Evaluation(_Answer):
    position_id: str
    ply: int | None
    evaluator: str
    probabilities: Probabilities = Field(description="of the side on roll, before it rolls")
    equity: float = Field(description="cubeless money equity of the side on roll")


class CubeEquities(_Answer):
    no_double: float | None
    double_take: float | None
    double_pass: float | None


class CubeAnswer(_Answer):
    position_id: str
    ply: int | None
    evaluator: str
    action: str = Field(description="no_double, double_take, double_pass or too_good")
    double: bool = Field(description="whether the side on roll should double")
    take: bool = Field(description="whether the opponent should take a double")
    cube_available: bool
    equities: CubeEquities = Field(description="cubeful equities of the side on roll (money: per unit "
                                               "of the cube in play; match: normalised)")
    take_point: float | None
    cubeless_equity: float | None
    match_winning_chances: CubeEquities | None = Field(description="match play only")
    probabilities: Probabilities


class BotInfo(_Answer):
    name: str
    kind: str = Field(description="the bot's class, e.g. NetBot")
    ply: int | None = Field(description="the depth requests get when they name none")
    plies: list[int] | None = Field(description="the depths a request may ask for (null: one fixed depth)")
    evaluator: str | None
    encoding: str | None = Field(description="the net's input encoding")
    games_trained: int | None
    strength: dict | None = Field(description="the strength measured when the bot was made")
    cube: dict | None = Field(description="the cube settings: match equity table, cube efficiency")
    exported: str | None
    bgnet_version: str | None
    can_evaluate: bool


class Health(_Answer):
    ok: bool
    waiting: int = Field(description="bot calls queued or running now")
    games: int = Field(description="the page's games kept now")
    restored: int = Field(description="games restored from the server's database when it started")
    saved: bool = Field(description="whether games are written to a database (kept across restarts)")


# wildbg's names


class WildbgProbabilities(_Answer):
    win: float
    winG: float
    winBg: float
    loseG: float
    loseBg: float


class WildbgMove(_Answer):
    play: list[Step] = Field(description="empty when no move is legal")
    probabilities: WildbgProbabilities


class WildbgMoves(_Answer):
    moves: list[WildbgMove] = Field(description="every legal move, best first")


class WildbgCube(_Answer):
    double: bool
    accept: bool


class WildbgEval(_Answer):
    cube: WildbgCube
    probabilities: WildbgProbabilities


# ---------------------------------------------------------------------------------------------
# the page's games


class NewGame(_Request):
    """A new money game or match against the bot."""

    match_length: StrictInt = Field(0, ge=0, le=MAX_MATCH,
                                    description=f"points to win the match, 1 to {MAX_MATCH}; 0 for a money game")
    name: str = Field("You", description=f"your name in the saved match: 1 to {MAX_NAME} printable "
                                         "characters without ':' (no line breaks, tabs or other "
                                         "control characters)")
    jacoby: StrictBool = Field(False, description="money play with the Jacoby rule (gammons count "
                                                  "only once the cube has been turned)")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return player_name(v)  # the one rule (bgnet.formats.names): its ValueError says why

    @model_validator(mode="after")
    def _jacoby_is_for_money(self):
        if self.jacoby and self.match_length:
            raise ValueError("the Jacoby rule is for money play: leave out jacoby or set "
                             "match_length to 0")
        return self


class GameAction(_Request):
    """The body of a game action; each action reads the fields it needs: ``resign`` takes
    ``kind``, ``move`` takes ``move``, ``step`` takes ``from`` and ``to``; the others none."""

    kind: Literal["single", "gammon", "backgammon"] | None = Field(
        None, description="resign: what you offer to lose (default single)")
    move: str | None = Field(None, max_length=200, description="move: the move in standard notation, "
                                                              "e.g. 24/18 13/11")
    from_: StrictInt | None = Field(None, alias="from", ge=0, le=25,
                                    description="step: the point a checker leaves (25: the bar)")
    to: StrictInt | None = Field(None, ge=0, le=25, description="step: where it goes (0: off)")


class BotStep(_Answer):
    from_: int = Field(alias="from", description="numbered from the bot's side, as its notation: "
                                                 "25 its bar, so the person's point is 25 - from")
    to: int = Field(description="numbered from the bot's side: 0 borne off")
    hit: bool = Field(description="whether the step hits one of your checkers")


class BotMove(_Answer):
    id: str = Field(description="unique within the match, to tell a new move from one already shown")
    dice: list[int] = Field(min_length=2, max_length=2)
    notation: str = Field(description="empty when the bot could not move")
    steps: list[BotStep]


class HintMove(_Answer):
    notation: str
    equity: float | None = Field(description="cubeless money equity after the move")
    cubeful_equity: float | None = Field(None, description="cubeful equity after the move, what the "
                                                           "moves are ranked by with the cube: EMG at "
                                                           "the score in a match, cubeful money "
                                                           "equity in money play")
    mwc: float | None = Field(None, description="the mover's match winning chances after the move "
                                                "(match play only)")
    probabilities: Probabilities | None


class Hint(_Answer):
    moves: list[HintMove] | None = Field(None, description="a checker play: the best moves, best first")
    legal_moves: int | None = None
    by: str | None = Field(None, description="whose values these are")
    ranked_by: str | None = Field(None, description="what the moves are ranked by (the match's own "
                                                    "measure with the cube, else cubeless equity)")
    ply: int | None = Field(None, description="the depth of every value listed")
    text: list[str] | None = Field(None, description="a cube decision: the advice, in lines")


class Names(_Answer):
    you: str
    bot: str


class Score(_Answer):
    you: int
    bot: int


class Cube(_Answer):
    value: int
    owner: Literal["you", "bot", "centre"]
    offered: int | None = Field(None, description="the value offered while a double waits for an answer")
    offered_by: Literal["you", "bot"] | None = None


class LegalMove(_Answer):
    notation: str
    steps: list[list[int]] = Field(description="(from, to) per die, numbered from your side")


class GameState(_Answer):
    """A game as the page shows it, from your side: ``points[p]`` for p = 1..24 is the count on
    your point p, your checkers positive and the bot's negative (``points[0]`` is unused)."""

    id: str
    names: Names
    match_length: int = Field(description="0 for money play")
    jacoby: bool
    score: Score
    game_number: int
    crawford: bool
    phase: str = Field(description="opening, roll, doubled, move or over")
    turn: Literal["you", "bot"] | None
    on_roll: Literal["you", "bot"] | None
    points: list[int] = Field(min_length=25, max_length=25)
    bar: Score
    off: Score
    pips: Score
    dice: list[int] | None
    dice_left: list[int] = Field(description="the dice you have not played yet")
    steps: list[list[int]] = Field(description="the steps of your move so far, (from, to)")
    steps_notation: str
    complete: bool = Field(description="whether your move so far is a whole legal move (confirm it)")
    legal_moves: list[LegalMove]
    destinations: dict[str, list[int]] = Field(
        description="for each point you may move a checker from now (25: the bar), the points it "
                    "may reach in one click (0: off)")
    bot_moves: list[BotMove] = Field(description="the bot's moves since your last action")
    cube: Cube
    may_double: bool
    position_id: str | None
    match_id: str | None
    game_over: bool
    match_over: bool
    winner: Literal["you", "bot"] | None
    points_won: int
    log: list[str] = Field(description="the last lines of the game's log")
    log_count: int = Field(description="lines written since the start, to tell the new ones")
    hint: Hint | None




# ---------------------------------------------------------------------------------------------
# query parameters


def only(*names: str):
    """A dependency that refuses query parameters other than ``names`` (400, naming them)."""
    allowed = frozenset(names)

    def check(request: Request) -> None:
        unknown = sorted(set(request.query_params) - allowed)
        if unknown:
            raise ApiError(400, f"unknown query parameter{'s' if len(unknown) > 1 else ''} "
                                f"{', '.join(unknown)}; this endpoint takes "
                                f"{', '.join(sorted(allowed, key=_natural)) or 'none'}")
    return check


def _natural(name: str):
    return (name.rstrip("0123456789"), int(name[len(name.rstrip("0123456789")):] or -1))


__all__ = ["Message", "ERRORS", "NewGame", "GameAction", "GameState", "Moves", "Evaluation",
           "CubeAnswer", "BotInfo", "Health", "WildbgMoves", "WildbgEval", "only"]
