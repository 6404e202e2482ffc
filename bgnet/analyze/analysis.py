"""Match analysis: every checker play and cube decision of a match judged by a bot.

Conventions (stated once here):

* Equities are per unit of the cube in play ("EMG", as GNU Backgammon reports them). A checker
  play is judged by the measure the player faced (:mod:`bgnet.cube.checker`): in match play the
  cube head's cubeful equity at the score (normalised match equity: +1 wins a cube's worth, -1
  loses one), in a money session cubeful money equity with the cube as it stood (the Jacoby rule
  where it applies), the value of a move being minus the opponent's cubeful equity with the
  opponent on roll (his cube action taken where he has access to the cube); with
  ``--cubeless-play`` (sessions played without the cube) by cubeless money equity. Cube
  decisions always use the cube head's cubeful equities (:mod:`bgnet.cube`) from the judge's
  probabilities, in the match's own terms (money with or without the Jacoby rule, or the score).
* An error is the equity of the best option minus the equity of the option played (0 or more). It
  is marked ``doubtful`` from 0.04, ``error`` from 0.08 and ``blunder`` from 0.16, GNU
  Backgammon's default thresholds (its "doubtful", "bad" and "very bad").
* Luck of a roll, as GNU Backgammon measures it: the roller's value after the best move of the
  roll (a roll that cannot be played: the position as it stands, the opponent on roll) minus
  its average over the 21 rolls (a double weighs 1/36, the others 2/36). The value is the one
  checker plays are judged by (below), chosen and valued at 0-ply whatever the judge's depth
  (GNU Backgammon's luck analysis is cubeful 0-ply by default): in match play cubeful match
  winning chances at the score, as normalised equity at the cube in play (EMG), in a money
  session cubeful money equity per unit of the cube, with ``--cubeless-play`` cubeless money
  equity. Every roll counts, dancing ones included, and so does a game's opening roll, against
  the opening's own average: it cannot be a double, and each of the 15 rolls the roller did not
  get would have gone to the opponent, who would then have played it (so at a score where both
  sides stand alike, the opening roll's luck is the value of the move it allows). Marked
  ``very lucky`` past +0.6, ``lucky`` past +0.3, ``unlucky`` past -0.3, ``very unlucky``
  past -0.6 (GNU Backgammon's thresholds, not reached at them). A roll's luck is also given in
  points (money: times the cube of its moment) or in MWC (match play: at the score and cube of
  its moment, ``e * (MWC(win c) - MWC(lose c)) / 2``, as errors are).
* Rates are in millipoints (thousandths of EMG) per decision: checker play per unforced move (more
  than one legal move), cube per counted cube decision (every double, take and drop, and every
  other cube decision within 0.16 of doubling or judged wrong), overall per both together, as GNU
  Backgammon counts them. The rating of an error rate follows GNU Backgammon's scale,
  :data:`RATINGS`.
* In match play every error and every roll's luck is also given in match winning chances (MWC,
  %): an equity ``e`` at the cube ``c`` is worth ``e * (MWC(win c) - MWC(lose c)) / 2`` of them, at
  the score of the decision, by the judge's match equity table.
* Cube errors are broken down by what went wrong: a double missed below the cash point (the
  opponent should have taken) or above it (should have passed), a double given below the double
  point or when too good, a wrong take, a wrong pass.
* Resignations are judged too: offering one is an error by how much more playing on is worth,
  accepting or refusing one by how much the other answer is worth; they are listed and totalled
  apart from the error rates (which count checker play and cube decisions only).
* Luck rate: the luck total per roll (every roll of the player, as GNU Backgammon divides by
  all the player's moves), in mEMG, and in match play in MWC too. Luck rating
  (:func:`luck_rating`) as GNU Backgammon rates the rate: lucky past +30 mEMG a roll, very lucky
  past +60, unlucky and very unlucky past -30 and -60. The luck-adjusted result is the result
  less the player's luck plus the opponent's: money, in points; match play, in MWC, the result
  counted game by game as GNU Backgammon counts it (each game's change of the player's match
  winning chances at the score, which adds up to +50 % for a match won from 0-0 and -50 % for
  one lost), per match.
* XG's performance rating (PR, the figure eXtreme Gammon users compare): the error (checker play
  and cube, EMG) per decision XG counts, times 500. XG leaves out the decisions it deems
  obvious: it counts a checker play when there is more than one legal move and they are not all
  as good as each other (best and worst :data:`XG_SAME_MOVE` apart or more), and a cube decision
  when the player doubled, took or passed, when not doubling was an error, or when doubling
  would have cost at most :data:`XG_CLOSE_CUBE`. Every error lies in a counted decision, so PR
  differs from the overall rate only by what it divides by (and by the factor, 500 against
  1000).
* Rating estimate (:func:`rating_difference`): the error a player gives away per game against the
  judge, ``L`` (EMG), read as the chance of winning a single game, ``(1 - L) / 2``, and put on
  the FIBS scale, where a rating difference ``D`` wins a one-point match with chance
  ``1 / (1 + 10 ** (-D / 2000))``: ``D = -2000 log10((1 + L) / (1 - L))`` rating points against
  the judge (a loss per game is taken at most 0.9, where the model ends). It is an estimate from
  one sample of games, not a measured rating.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING

import numpy as np

from bgnet.bots.base import Bot
from bgnet.bots.search import best_first, measure_score, money_score, rank_afterstates
from bgnet.engine import position_id
from bgnet.engine.movegen import generate
from bgnet.engine.state import CENTERED, MatchContext
from bgnet.nn.encode import game_results

if TYPE_CHECKING:
    from bgnet.cube import CubeDecision

DOUBTFUL, ERROR, BLUNDER = 0.04, 0.08, 0.16
LUCKY, VERY_LUCKY = 0.3, 0.6  # a roll's luck (EMG) past which it is marked, either way
CLOSE_CUBE = 0.16
XG_SAME_MOVE = 0.001  # legal moves all within this of each other: XG counts no checker decision
XG_CLOSE_CUBE = 0.2  # a cube decision XG counts: doubling within this of the right action
PR_SCALE = 500.0  # XG's performance rating: mean error (EMG) per decision it counts, times 500
# (upper bound of the error rate in millipoints per decision, rating), best first.
RATINGS = ((2.0, "Supernatural"), (5.0, "World class"), (8.0, "Expert"), (12.0, "Advanced"),
           (18.0, "Intermediate"), (26.0, "Casual player"), (35.0, "Beginner"),
           (float("inf"), "Awful!"))
CANDIDATES = 5  # moves listed with their equities for each checker play (and the one played)
# The luck rate in mEMG per roll above which (below which, unlucky) the dice are rated lucky, and
# very lucky: GNU Backgammon rates a luck rate as it marks a roll, at a tenth of the thresholds.
LUCKY_RATE, VERY_LUCKY_RATE = 30.0, 60.0
CUBE_ERRORS = ("missed double, below the cash point", "missed double, above the cash point",
               "wrong double, below the double point", "wrong double, too good",
               "wrong take", "wrong pass")
RESIGN_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def rating(rate: float) -> str:
    """The rating of an error rate in millipoints per decision (see :data:`RATINGS`).

    >>> rating(0.6), rating(29.1), rating(41.0)
    ('Supernatural', 'Beginner', 'Awful!')
    """
    for limit, name in RATINGS:
        if rate < limit:
            return name
    return RATINGS[-1][1]


def luck_rating(rate: float) -> str:
    """The rating of a luck rate in mEMG per roll: lucky past +30, very lucky past +60, unlucky
    and very unlucky past -30 and -60 (:data:`LUCKY_RATE`).

    >>> luck_rating(70.0), luck_rating(30.5), luck_rating(3.0), luck_rating(-30.0), luck_rating(-61.0)
    ('very lucky dice', 'lucky dice', 'average dice', 'average dice', 'very unlucky dice')
    """
    band = _luck_band(rate, LUCKY_RATE, VERY_LUCKY_RATE)
    return f"{band} dice" if band else "average dice"


def rating_difference(error_per_game: float) -> float:
    """Rating points (FIBS scale) against the judge of a player who gives away
    ``error_per_game`` EMG per game (see the module docstring).

    >>> round(rating_difference(0.0)), round(rating_difference(0.1))
    (0, -174)
    """
    loss = min(max(float(error_per_game), 0.0), 0.9)  # the model holds for losses well below a point
    return -2000.0 * float(np.log10((1.0 + loss) / (1.0 - loss)))


def mark(error: float) -> str:
    """``""``, ``"doubtful"``, ``"error"`` or ``"blunder"`` for an equity loss."""
    if error >= BLUNDER:
        return "blunder"
    if error >= ERROR:
        return "error"
    return "doubtful" if error >= DOUBTFUL else ""


def luck_mark(luck: float) -> str:
    """``""``, ``"lucky"``, ``"very lucky"``, ``"unlucky"`` or ``"very unlucky"`` for a roll's
    luck in EMG: past (not at) the thresholds, as GNU Backgammon marks rolls.

    >>> luck_mark(0.3), luck_mark(0.31), luck_mark(-0.61)
    ('', 'lucky', 'very unlucky')
    """
    return _luck_band(luck, LUCKY, VERY_LUCKY)


def _luck_band(value: float, lucky: float, very: float) -> str:
    """``"very lucky"``, ``"lucky"``, ``""``, ``"unlucky"`` or ``"very unlucky"``: past (not
    at) ``lucky`` or ``very`` either way."""
    if abs(value) <= lucky:
        return ""
    word = "lucky" if value > 0 else "unlucky"
    return f"very {word}" if abs(value) > very else word


# ---------------------------------------------------------------------------------------------
# the judge: a bot's probabilities at a ply


class Judge:
    """Probabilities of a bot at a search depth: of afterstates (mover's view), of positions before
    the roll, and of the best move of each of the 21 rolls (for luck). ``cubeless_play``: checker
    plays are judged by cubeless money equity (sessions played without the cube) instead of the
    measure the player faced.

    ``cache``: a net bot judging deeper than 0-ply searches with its afterstates' values kept
    through a game (:meth:`bgnet.bots.net.NetBot.with_cache`; :meth:`new_game` empties it), the
    decisions of a game meeting many of the same afterstates: the same figures, to float32
    rounding of the net's probabilities, in about half the time. Luck is measured without it."""

    def __init__(self, bot: Bot, ply: int | None = None, cubeless_play: bool = False,
                 cache: bool = True):
        self.bot = bot
        self.cubeless_play = bool(cubeless_play)
        self.ply = (bot.ply or 0) if ply is None else int(ply)
        if not (bot.can_evaluate and 0 in bot.plies):  # net bots and gnubg:N
            raise ValueError(f"{bot.name} cannot evaluate positions, so it "
                             "cannot judge plays: analyse with a net bot or gnubg:N")
        if self.ply not in bot.plies:
            raise ValueError(f"{bot.name} evaluates at {', '.join(map(str, bot.plies))} ply; "
                             f"it cannot judge at {self.ply}-ply")
        self.searcher: Bot = bot.with_cache() if cache and self.ply > 0 else bot

    def new_game(self) -> None:
        """A game begins: forget the afterstates the search kept (they seldom recur in another
        game, and a game's figures then never depend on the games judged before it)."""
        self.searcher.clear_cache()

    def _after_probs(self, after: np.ndarray, ply: int) -> np.ndarray:
        return np.asarray(self.searcher.afterstate_probabilities(after, ply), np.float64)

    def moves(self, after: np.ndarray, played: int, measure=None) -> np.ndarray:
        """Mover's probabilities float64[M, 5] of all legal afterstates: at 0-ply for all, at the
        judge's ply for the best few and the one played, by the one search
        (:func:`bgnet.bots.search.rank_afterstates`: its move filter, by ``measure``, a
        :class:`bgnet.cube.checker.MoveMeasure`, cubeless equity without one; all of them at
        the judge's ply at once)."""
        p = self._after_probs(after, 0)
        if self.ply == 0:
            return p
        score = money_score if measure is None else measure_score(measure, after)
        rank_afterstates(self.searcher, after, p, self.ply, score=score, also=[played],
                         filter_1ply=False)
        return p

    def position(self, board: np.ndarray) -> np.ndarray:
        """Probabilities float64[5] of the side on roll, before it rolls, at the judge's ply."""
        b = np.ascontiguousarray(board, np.int8).reshape(1, 2, 25)
        return np.asarray(self.searcher.evaluate(b, self.ply), np.float64).reshape(5)

    def measure(self, ctx: MatchContext):
        """The measure a checker play is valued by in ``ctx`` (the module docstring): a
        :class:`bgnet.cube.checker.MoveMeasure` for the player on roll of ``ctx``."""
        from bgnet.cube.checker import measure_for

        met, eff = self.bot.cube_settings()
        return measure_for(ctx.replace(dice=(0, 0)), met, eff, cubeless_play=self.cubeless_play)

    def values(self, probs: np.ndarray, after: np.ndarray, ctx: MatchContext, measure=None) -> np.ndarray:
        """The mover's value float64[M] of each afterstate from its probabilities, by the
        measure of ``ctx``; a finished game by the rules."""
        measure = self.measure(ctx) if measure is None else measure
        out = measure.values(probs, after)
        results = game_results(after)
        met = self.bot.cube_settings()[0]
        for j in np.flatnonzero(results):
            out[j] = float(results[j]) if self.cubeless_play else _win_value(ctx, int(results[j]), met)
        return out

    def roll_values(self, board: np.ndarray, ctx: MatchContext) -> np.ndarray:
        """For the side on roll in ``board`` (``ctx``'s player on roll): the value float64[21] of
        its best move for each roll of :data:`bgnet.engine.movegen.ROLLS`, chosen and valued at
        0-ply by the measure of ``ctx`` (a roll that cannot be played: the position as it stands,
        the opponent on roll). The 21 rolls' afterstates are generated and evaluated in one
        batch, each distinct afterstate once."""
        from bgnet.engine.board import unique_boards
        from bgnet.engine.movegen import ROLLS, generate_batch

        board = np.ascontiguousarray(board, np.int8).reshape(1, 2, 25)
        after, _, off = generate_batch(np.repeat(board, len(ROLLS), axis=0), ROLLS)
        first, inverse = unique_boards(after)
        distinct = after[first]
        probs = np.asarray(self.bot.afterstate_probabilities(distinct, 0, parents=board), np.float64)
        values = self.values(probs, distinct, ctx)[inverse]
        return np.maximum.reduceat(values, off[:-1])


# ---------------------------------------------------------------------------------------------
# decisions


@dataclass
class Decision:
    """One judged decision. ``kind``: ``move`` (checker play), ``double`` / ``no_double`` (the
    player on roll's cube decision), ``take`` / ``drop`` (the answer to a double). ``position_id``
    has the deciding player on roll (for a take or drop: the doubler on roll, as GNU Backgammon
    shows it); ``error`` = ``best_equity - played_equity`` (see the module docstring)."""

    game: int
    number: int  # the decision's index within its game
    player: int
    kind: str
    position_id: str
    match_id: str
    played: str
    best: str
    played_equity: float
    best_equity: float
    error: float
    mark: str
    dice: tuple | None = None
    forced: bool = False
    counted: bool = True  # counts in the rates (unforced move; close or actual cube decision)
    luck: float | None = None
    luck_mark: str = ""
    cube: int = 1  # the cube's value before the decision
    cube_owner: int = CENTERED  # who owned it: CENTERED (-1), player 0 or 1
    score: tuple = (0, 0)  # before the game (players 0, 1)
    candidates: list = field(default_factory=list)  # [text, equity] best first (the options)
    error_kind: str = ""  # cube errors: one of CUBE_ERRORS
    mwc: float | None = None  # match play: the player's MWC with the best choice
    error_mwc: float | None = None  # match play: the error in MWC
    luck_points: float | None = None  # money: the roll's luck at the cube of its moment
    luck_mwc: float | None = None  # match play: the roll's luck in MWC
    pr_counted: bool = False  # a decision XG counts in its performance rating (module docstring)


@dataclass
class PlayerSummary:
    """One player's figures (see the module docstring for the units)."""

    name: str
    moves: int = 0
    unforced_moves: int = 0
    checker_error: float = 0.0
    checker_marks: dict = field(default_factory=lambda: {"doubtful": 0, "error": 0, "blunder": 0})
    cube_decisions: int = 0
    close_cube_decisions: int = 0
    cube_error: float = 0.0
    cube_marks: dict = field(default_factory=lambda: {"doubtful": 0, "error": 0, "blunder": 0})
    doubles: int = 0
    takes: int = 0
    drops: int = 0
    luck: float = 0.0
    rolls: int = 0
    luck_marks: dict = field(default_factory=lambda: {"very lucky": 0, "lucky": 0, "unlucky": 0,
                                                      "very unlucky": 0})
    cube_errors: dict = field(default_factory=lambda: {k: {"count": 0, "error": 0.0} for k in CUBE_ERRORS})
    resign_decisions: int = 0
    resign_error: float = 0.0
    resign_marks: dict = field(default_factory=lambda: {"doubtful": 0, "error": 0, "blunder": 0})
    pr_decisions: int = 0  # the decisions XG counts in its performance rating
    checker_error_mwc: float = 0.0  # match play: in MWC (0..1)
    cube_error_mwc: float = 0.0
    luck_mwc: float = 0.0
    luck_points: float = 0.0  # money play: luck at the cube of each roll's moment
    result_mwc: float = 0.0  # match play: MWC won over the games (each game's change of MWC)
    games: int = 0
    points_won: int = 0  # money: points won; match: points scored
    points_lost: int = 0
    matches: int = 0  # match play: matches played to their end (an unfinished one is not counted), and won
    matches_won: int = 0

    @property
    def checker_rate(self) -> float:
        return 1000.0 * self.checker_error / self.unforced_moves if self.unforced_moves else 0.0

    @property
    def cube_rate(self) -> float:
        return 1000.0 * self.cube_error / self.close_cube_decisions if self.close_cube_decisions else 0.0

    @property
    def overall_rate(self) -> float:
        n = self.unforced_moves + self.close_cube_decisions
        return 1000.0 * (self.checker_error + self.cube_error) / n if n else 0.0

    @property
    def performance_rating(self) -> float:
        """XG's performance rating (PR): the error per decision it counts, times 500."""
        error = self.checker_error + self.cube_error
        return PR_SCALE * error / self.pr_decisions if self.pr_decisions else 0.0

    @property
    def luck_rate(self) -> float:
        return 1000.0 * self.luck / self.rolls if self.rolls else 0.0

    @property
    def luck_rate_mwc(self) -> float:
        """Match play: the luck per roll in MWC (0..1)."""
        return self.luck_mwc / self.rolls if self.rolls else 0.0

    @property
    def luck_rating(self) -> str:
        return luck_rating(self.luck_rate)

    @property
    def error_per_game(self) -> float:
        """EMG given away per game (checker play and cube)."""
        return (self.checker_error + self.cube_error) / self.games if self.games else 0.0

    @property
    def rating_estimate(self) -> float:
        """Rating points against the judge (:func:`rating_difference`)."""
        return rating_difference(self.error_per_game)

    def add_luck(self, luck: float, points: float | None, mwc: float | None) -> None:
        """One roll's luck: of a move's roll, or of a roll that could not be played (it has no
        decision, and leaving it out would leave out the unluckiest rolls of all)."""
        self.luck += luck
        self.rolls += 1
        if luck_mark(luck):
            self.luck_marks[luck_mark(luck)] += 1
        if points is not None:
            self.luck_points += points
        if mwc is not None:
            self.luck_mwc += mwc

    def add(self, d: Decision) -> None:
        self.pr_decisions += d.pr_counted
        if d.kind in ("resign", "accept", "reject"):
            self.resign_decisions += 1
            self.resign_error += d.error
            if d.mark:
                self.resign_marks[d.mark] += 1
            return
        if d.kind == "move":
            if d.error_mwc is not None and not d.forced:
                self.checker_error_mwc += d.error_mwc
            self.moves += 1
            if not d.forced:
                self.unforced_moves += 1
                self.checker_error += d.error
            if d.mark:
                self.checker_marks[d.mark] += 1
            if d.luck is not None:
                self.add_luck(d.luck, d.luck_points, d.luck_mwc)
            return
        self.cube_decisions += 1
        self.doubles += d.kind == "double"
        self.takes += d.kind == "take"
        self.drops += d.kind == "drop"
        if d.counted:
            self.close_cube_decisions += 1
            self.cube_error += d.error
            if d.error_mwc is not None:
                self.cube_error_mwc += d.error_mwc
        if d.mark:
            self.cube_marks[d.mark] += 1
        if d.error_kind:
            self.cube_errors[d.error_kind]["count"] += 1
            self.cube_errors[d.error_kind]["error"] += d.error

    def merge(self, other: PlayerSummary) -> None:
        """Add ``other``'s figures (the same player in another file) to these."""
        for f in fields(self):
            if f.name == "name":
                continue
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name == "cube_errors":
                for k, v in theirs.items():
                    mine[k]["count"] += v["count"]
                    mine[k]["error"] += v["error"]
            elif isinstance(mine, dict):
                for k, v in theirs.items():
                    mine[k] = mine.get(k, 0) + v
            else:
                setattr(self, f.name, mine + theirs)

    def luck_adjusted(self, opponent: PlayerSummary, match: bool) -> float:
        """The result with both players' luck taken out: money, points won less points lost, less
        the luck (in points) of this player less the opponent's; match play, the MWC won over the
        games (+0.5 for a match won from 0-0) less the net luck in MWC, per match."""
        if match:
            return (self.result_mwc - (self.luck_mwc - opponent.luck_mwc)) / max(self.matches, 1)
        return (self.points_won - self.points_lost) - (self.luck_points - opponent.luck_points)

    @property
    def result(self) -> float:
        """Match play: the MWC won per match (+0.5 for a match won from 0-0, -0.5 for one lost)."""
        return self.result_mwc / max(self.matches, 1)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(checker_rate=self.checker_rate, cube_rate=self.cube_rate,
                 overall_rate=self.overall_rate, luck_rate=self.luck_rate,
                 checker_rating=rating(self.checker_rate), cube_rating=rating(self.cube_rate),
                 overall_rating=rating(self.overall_rate), luck_rating=self.luck_rating,
                 error_per_game=self.error_per_game, rating_estimate=self.rating_estimate,
                 performance_rating=self.performance_rating, luck_rate_mwc=self.luck_rate_mwc)
        return d


@dataclass
class Analysis:
    """A whole match analysed: the judge, the players' summaries, every decision, and the
    equity (money) or match winning chances (match) of player 0 before each decision, for the
    graph."""

    file: str
    bot: str
    ply: int
    match_length: int
    players: list
    decisions: list
    graph: list = field(default_factory=list)  # (decision index, game, player 0's equity or MWC)
    games: list = field(default_factory=list)  # per game: its record, move by move (GameLog)
    jacoby: bool = False
    unfinished: str = ""  # why the file stops before its match does (MatchRecord.unfinished)

    def describe(self) -> str:
        """What was analysed, in a few words: "7 point match" or "money session", and
        "unfinished" with the reason when the file stops before the match does."""
        kind = f"{self.match_length} point match" if self.match_length else "money session"
        return kind + (f", unfinished: {self.unfinished}" if self.unfinished else "")

    def biggest(self, n: int = 10) -> list:
        """The ``n`` biggest errors, largest first."""
        errs = [d for d in self.decisions if d.error > 0]
        return sorted(errs, key=lambda d: -d.error)[:n]

    def luck_adjusted(self) -> list[float | None]:
        """Each player's luck-adjusted result (:meth:`PlayerSummary.luck_adjusted`); None for a
        match that stops before its end, which has no result to adjust."""
        p0, p1 = self.players
        match = bool(self.match_length)
        if match and self.unfinished:
            return [None, None]
        return [p0.luck_adjusted(p1, match), p1.luck_adjusted(p0, match)]

    def to_dict(self, top: int = 10) -> dict:
        return {"file": self.file, "bot": self.bot, "ply": self.ply, "match_length": self.match_length,
                "jacoby": self.jacoby, "unfinished": self.unfinished,
                "players": [dict(p.to_dict(), luck_adjusted_result=r)
                            for p, r in zip(self.players, self.luck_adjusted())],
                "biggest_errors": [asdict(d) for d in self.biggest(top)],
                "decisions": [asdict(d) for d in self.decisions],
                "games": [asdict(g) for g in self.games],
                "graph": [{"decision": i, "game": g, "value": v} for i, g, v in self.graph]}


@dataclass
class GameLog:
    """One game move by move: ``rows`` are (player, what was done, decision index or None), in
    order; the result at the end."""

    number: int
    score: tuple
    rows: list = field(default_factory=list)  # {"player", "kind", "dice", "text", "decision"}
    winner: int | None = None
    points: int = 0
    end: str = ""


@dataclass
class Report:
    """Several analyses together (the files of one session or of one ``eval --save-mat``) with
    each player's figures added up over all of them, players matched by name."""

    analyses: list

    @property
    def players(self) -> list:
        """The totals, one :class:`PlayerSummary` per name, in the order the files name them."""
        totals: dict[str, PlayerSummary] = {}
        for a in self.analyses:
            for p in a.players:
                t = totals.setdefault(p.name, PlayerSummary(p.name))
                t.merge(p)
        return list(totals.values())

    @property
    def match(self) -> bool:
        return any(a.match_length for a in self.analyses)

    def luck_adjusted(self) -> dict[str, float | None]:
        """Per name: the luck-adjusted result over all files (money: points; match: share of the
        matches won, net of luck, over the matches played to their end; None without one)."""
        out: dict[str, list[float]] = {}
        for a in self.analyses:
            for p, r in zip(a.players, a.luck_adjusted()):
                values = out.setdefault(p.name, [])
                if r is not None:
                    values.append(r)
        if self.match:
            return {k: float(np.mean(v)) if v else None for k, v in out.items()}
        return {k: float(np.sum(v)) for k, v in out.items()}

    def biggest(self, n: int = 10) -> list:
        """The ``n`` biggest errors over all files: (analysis, decision), largest first."""
        errs = [(a, d) for a in self.analyses for d in a.decisions if d.error > 0]
        return sorted(errs, key=lambda x: -x[1].error)[:n]

    def to_dict(self, top: int = 10) -> dict:
        first = self.analyses[0]
        adjusted = self.luck_adjusted()
        return {"files": [a.to_dict(top) for a in self.analyses], "bot": first.bot, "ply": first.ply,
                "players": [dict(p.to_dict(), luck_adjusted_result=adjusted[p.name])
                            for p in self.players],
                "biggest_errors": [dict(asdict(d), file=a.file) for a, d in self.biggest(top)]}


# ---------------------------------------------------------------------------------------------
# walking through a match


def _ctx(record, game, cube: int, owner: int, on_roll: int, dice=(0, 0)) -> MatchContext:
    return MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=on_roll, turn=on_roll,
                        crawford=bool(game.crawford), dice=tuple(dice), match_length=record.length,
                        score=tuple(game.score), jacoby=bool(record.jacoby))


def _cube_equities(judge: Judge, board: np.ndarray, ctx: MatchContext):
    """(CubeDecision, probabilities) for the side on roll in ``board`` (before its roll)."""
    from bgnet.cube import decide_context

    p = _valid(judge.position(board))
    met, eff = judge.bot.cube_settings()
    return decide_context(tuple(p), ctx, board, met=met, efficiency=eff), p


def _valid(p: np.ndarray) -> np.ndarray:
    """Probabilities made consistent (gammons within wins) for the cube head."""
    p = np.clip(np.asarray(p, np.float64), 0.0, 1.0)
    p[1] = min(p[1], p[0])
    p[2] = min(p[2], p[1])
    p[3] = min(p[3], 1.0 - p[0])
    p[4] = min(p[4], p[3])
    return p


def _move_values(judge: Judge, board, after, played, ctx: MatchContext) -> np.ndarray:
    """Value of each afterstate for the mover, by the measure the player faced in ``ctx`` (the
    module docstring), or by cubeless money equity when the judge is told the session was played
    without the cube: one compiled call of :class:`bgnet.cube.checker.MoveMeasure`."""
    measure = judge.measure(ctx)
    return judge.values(judge.moves(after, played, measure), after, ctx, measure)


def _win_value(ctx: MatchContext, result: int, met=None) -> float:
    """Equity per unit of the cube of winning ``result`` (1, 2, 3) games at the current cube:
    money (a single game with the Jacoby rule and a centred cube) or normalised match equity."""
    if ctx.is_money:
        return 1.0 if ctx.jacoby and ctx.cube_owner == CENTERED else float(result)
    score = _score(ctx, met)
    return score.to_equity(score.win(result * ctx.cube_value), ctx.cube_value)


def _score(ctx: MatchContext, met=None):
    """The match score seen by the player on roll of ``ctx`` (match play only)."""
    from bgnet.cube.cubeful import MatchScore
    from bgnet.cube.met import load_met

    me = ctx.player_on_roll
    return MatchScore(ctx.away(me), ctx.away(1 - me), ctx.crawford, load_met(met))


def _mwc_per_equity(ctx: MatchContext, met=None) -> float | None:
    """MWC (0..1) that one unit of normalised equity is worth for the player on roll of ``ctx``
    at its cube; None in money play."""
    if ctx.is_money or min(ctx.away(0), ctx.away(1)) < 1:
        return None
    score = _score(ctx, met)
    return 0.5 * (score.win(ctx.cube_value) - score.lose(ctx.cube_value))


def _resign_value(ctx: MatchContext, kind: int) -> float:
    """The resigner's equity (normalised, per unit of the cube) when a resignation of ``kind``
    is accepted; ``ctx`` has the resigner on roll."""
    if ctx.is_money:
        if ctx.jacoby and ctx.cube_value == 1:
            kind = 1
        return -float(kind)
    score = _score(ctx)
    return score.to_equity(score.lose(kind * ctx.cube_value), ctx.cube_value)


def analyse_record(record, judge: Judge, name: str = "", progress=None, workers: int = 1,
                   spec: str | None = None) -> Analysis:
    """Judge every decision of a :class:`bgnet.engine.game.MatchRecord`, game by game
    (:func:`analyse_game`). ``workers`` > 1: the games are shared among that many processes, each
    loading the judge's bot from ``spec`` (its spec, as :func:`bgnet.bots.load_bot` takes it);
    the figures are those of one process. ``progress`` is called with the number of moves
    judged (with workers, a game's at once)."""
    if workers > 1 and len(record.games) > 1:
        if spec is None:
            raise ValueError("analysing in several processes needs the judge's bot spec")
        parts = _games_in_workers(record, judge, spec, workers, progress)
    else:
        parts = [analyse_game(record, game, judge, progress) for game in record.games]
    players = [PlayerSummary(record.names[0]), PlayerSummary(record.names[1])]
    decisions: list[Decision] = []
    graph: list = []
    logs: list[GameLog] = []
    met = judge.bot.cube_settings()[0]
    for game, part in zip(record.games, parts):
        offset = len(decisions)  # a game's decisions are numbered from 0 in its part
        decisions += part.decisions
        graph += [(i + offset, number, value) for i, number, value in part.graph]
        for row in part.log.rows:
            if row["decision"] is not None:
                row["decision"] += offset
        logs.append(part.log)
        for p in (0, 1):
            players[p].merge(part.players[p])
            players[p].games += 1
            if record.length and game.winner is not None:
                players[p].result_mwc += (_game_mwc(record, game, met, p, after=True)
                                          - _game_mwc(record, game, met, p, after=False))
            if game.winner == p:
                players[p].points_won += game.points
            elif game.winner is not None:
                players[p].points_lost += game.points
    unfinished = record.unfinished()
    if record.length and record.games and not unfinished:
        final = record.final_score()
        for p in (0, 1):
            players[p].matches = 1
            players[p].matches_won = int(final[p] >= record.length)
    return Analysis(name, judge.bot.name, judge.ply, record.length, players,
                    decisions, graph, logs, bool(record.jacoby), unfinished)


@dataclass
class GamePart:
    """One game judged on its own: the players' figures of this game alone, its decisions and
    graph points (decision indices counted from the game's first decision) and its log."""

    players: list
    decisions: list
    graph: list
    log: GameLog


def analyse_game(record, game, judge: Judge, progress=None) -> GamePart:
    """Judge every decision of one game of ``record`` (:class:`GamePart`); what the judge's
    search kept from another game is forgotten first, so the figures depend on this game alone."""
    judge.new_game()
    players = [PlayerSummary(record.names[0]), PlayerSummary(record.names[1])]
    decisions: list[Decision] = []
    graph: list = []
    log = GameLog(game.number, tuple(game.score), winner=game.winner, points=game.points, end=game.end)
    _GameWalk(record, game, judge, judge.bot.cube_settings()[0], players, decisions, graph, log,
              progress).run()
    return GamePart(players, decisions, graph, log)


_WORKER_JUDGES: dict = {}  # in a worker process: (ply, cubeless_play) -> its Judge


def _game_in_worker(record, index: int, ply: int, cubeless_play: bool) -> GamePart:
    """A worker process's part: game ``index`` of ``record``, judged by the bot it loaded."""
    from bgnet.measure import workers

    judge = _WORKER_JUDGES.get((ply, cubeless_play))
    if judge is None:
        judge = _WORKER_JUDGES[ply, cubeless_play] = Judge(workers.bots()[0], ply, cubeless_play)
    return analyse_game(record, record.games[index], judge)


def _games_in_workers(record, judge: Judge, spec: str, count: int, progress) -> list[GamePart]:
    """Every game of ``record`` judged in ``count`` processes, the longest games first (the last
    to finish is then a short one); the parts in the games' order."""
    from concurrent.futures import as_completed

    from bgnet.measure import workers

    moves = [sum(1 for a in game.actions if a.kind == "move") for game in record.games]
    order = sorted(range(len(record.games)), key=lambda i: -len(record.games[i].actions))
    parts: list = [None] * len(record.games)
    with workers.pool(min(count, len(record.games)), (spec,), "cpu") as pool:
        futures = {pool.submit(_game_in_worker, record, i, judge.ply, judge.cubeless_play): i
                   for i in order}
        for done in as_completed(futures):
            i = futures[done]
            parts[i] = done.result()
            if progress is not None:
                progress(moves[i])
    return parts


class _GameWalk:
    """One game's actions in order, each decision judged and written to the game's log."""

    def __init__(self, record, game, judge, met, players, decisions, graph, log, progress):
        self.record, self.game, self.judge, self.met = record, game, judge, met
        self.players, self.decisions, self.graph, self.log = players, decisions, graph, log
        self.progress = progress
        self.cube, self.owner = 1, CENTERED
        self.number = 0

    def ctx(self, player: int, dice=(0, 0)) -> MatchContext:
        return _ctx(self.record, self.game, self.cube, self.owner, player, dice)

    def add(self, dec: Decision, ctx: MatchContext) -> int:
        """Record ``dec`` (of the player on roll of ``ctx``, or of the one answering)."""
        dec.cube, dec.cube_owner, dec.score = self.cube, self.owner, tuple(self.game.score)
        self.decisions.append(dec)
        self.players[dec.player].add(dec)
        self.number += 1
        return len(self.decisions) - 1

    def row(self, player: int, kind: str, text: str, dice=None, decision: int | None = None,
            luck: float | None = None) -> None:
        """One line of the game's log; ``luck`` for a roll that has no decision to carry it."""
        self.log.rows.append({"player": player, "kind": kind, "text": text,
                              "dice": list(dice) if dice else None, "decision": decision})
        if luck is not None:
            self.log.rows[-1]["luck"] = luck

    def run(self) -> None:
        from bgnet.engine.notation import format_move
        from bgnet.formats.match_id import match_id

        judge, game = self.judge, self.game
        first_move, doubled = True, False
        # (doubler, board of the doubler, CubeDecision) while a double waits
        pending: tuple[int, np.ndarray, CubeDecision] | None = None
        resigned: tuple[int, int, float, float] | None = None  # (resigner, kind, play on, resign)
        for act in game.actions:
            p = act.player
            board = np.ascontiguousarray(act.board, np.int8)
            if act.kind in ("double", "move") and not first_move and not doubled:
                ctx = self.ctx(p)
                if ctx.may_double(p):
                    d, _ = _cube_equities(judge, board, ctx)
                    dec = _cube_decision(d, act.kind == "double", game.number, self.number, p, board, ctx)
                    self._in_mwc(dec, ctx, d.mwc_no_double if act.kind != "double" else None)
                    i = self.add(dec, ctx)
                    if act.kind != "double":
                        self.row(p, "no_double", "no double", decision=i)
                    else:
                        self.row(p, "double", f"doubles to {2 * self.cube}", decision=i)
                    if act.kind == "double":
                        pending = (p, board, d)
            if act.kind == "double":
                doubled = True
                if pending is None:  # a double the rules allowed but the judge could not weigh
                    ctx = self.ctx(p)
                    pending = (p, board, _cube_equities(judge, board, ctx)[0])
                    self.row(p, "double", f"doubles to {2 * self.cube}")
            elif act.kind in ("take", "drop"):
                assert pending is not None  # a take or drop answers the double just recorded
                doubler, dboard, d = pending
                ctx = self.ctx(doubler)
                dec = _answer(d, act.kind, game.number, self.number, p, dboard, ctx)
                self._in_mwc(dec, ctx.replace(player_on_roll=p, turn=p), None)
                i = self.add(dec, ctx)
                self.row(p, act.kind, "takes" if act.kind == "take" else "drops", decision=i)
                if act.kind == "take":
                    self.cube, self.owner = self.cube * 2, p
                pending = None
            elif act.kind == "resign":
                ctx = self.ctx(p)
                play_on = _cube_equities(judge, board, ctx)[0].equity
                value = _resign_value(ctx, act.resign)
                err = max(0.0, play_on - value)
                offer = f"resign {RESIGN_NAMES[act.resign]}"
                dec = Decision(game.number, self.number, p, "resign", position_id(board), match_id(ctx),
                               offer, offer if value >= play_on else "play on", value, max(value, play_on),
                               err, mark(err), counted=False,
                               candidates=[[offer, value], ["play on", play_on]])
                self._in_mwc(dec, ctx, None)
                i = self.add(dec, ctx)
                self.row(p, "resign", f"offers to resign {RESIGN_NAMES[act.resign]}", decision=i)
                resigned = (p, act.resign, play_on, value)
            elif act.kind in ("accept", "reject") and resigned is not None:
                resigner, kind, play_on, value = resigned
                accept, refuse = -value, -play_on  # the answering player's equities
                played = accept if act.kind == "accept" else refuse
                best = max(accept, refuse)
                err = max(0.0, best - played)
                ctx = self.ctx(p)
                dec = Decision(game.number, self.number, p, act.kind, position_id(board), match_id(ctx),
                               act.kind, "accept" if accept >= refuse else "reject", played, best, err,
                               mark(err), counted=False, candidates=[["accept", accept], ["reject", refuse]])
                self._in_mwc(dec, ctx, None)
                i = self.add(dec, ctx)
                self.row(p, act.kind, "accepts" if act.kind == "accept" else "rejects", decision=i)
                resigned = None
            elif act.kind == "move":
                ctx = self.ctx(p, act.dice)
                after, steps = generate(board, *act.dice)
                luck = self.roll_luck(p, board, act.dice)
                luck_points, luck_mwc = self.luck_units(luck, ctx)
                if len(after) == 0:
                    self.row(p, "move", "cannot move", dice=act.dice, luck=luck)
                    self.players[p].add_luck(luck, luck_points, luck_mwc)
                    first_move, doubled = False, False
                    continue
                played = _played_index(board, after, act.steps)
                values = _move_values(judge, board, after, played, ctx)
                ranked = best_first(values)
                best = ranked[0]
                err = max(0.0, float(values[best] - values[played]))
                forced = len(after) == 1
                order = ranked[:CANDIDATES]
                if played not in order:
                    order.append(played)
                dec = Decision(game.number, self.number, p, "move", position_id(board), match_id(ctx),
                               format_move(steps[played], board), format_move(steps[best], board),
                               float(values[played]), float(values[best]), 0.0 if forced else err,
                               "" if forced else mark(err), tuple(int(x) for x in act.dice), forced,
                               not forced, luck, luck_mark(luck),
                               candidates=[[format_move(steps[j], board), float(values[j])] for j in order],
                               luck_points=luck_points, luck_mwc=luck_mwc,
                               pr_counted=not forced and float(values.max() - values.min()) >= XG_SAME_MOVE)
                scale = _mwc_per_equity(ctx, self.met)
                self._in_mwc(dec, ctx, None if scale is None else
                             _score(ctx, self.met).to_mwc(float(values[best]), self.cube))
                i = self.add(dec, ctx)
                self.row(p, "move", dec.played, dice=act.dice, decision=i)
                first_move, doubled = False, False
                if self.progress is not None:
                    self.progress(1)
        self.end_point()

    def roll_luck(self, p: int, board: np.ndarray, dice) -> float:
        """The luck of player ``p``'s roll ``dice`` in ``board`` (the module docstring), and a
        point of the graph: the roller's expected value before the roll."""
        from bgnet.analyze.rollout import ROLL_INDEX
        from bgnet.engine.board import start_position
        from bgnet.engine.movegen import ROLL_WEIGHTS, ROLLS

        ctx = self.ctx(p)
        mine = self.judge.roll_values(board, ctx)
        if dice[0] != dice[1] and np.array_equal(board, start_position()):
            # The opening roll: a double cannot come, and a roll the player does not get goes to
            # the opponent, who then plays it from the same starting position.
            theirs = self.judge.roll_values(board, self.ctx(1 - p))
            distinct = ROLLS[:, 0] != ROLLS[:, 1]
            expected = float((mine[distinct].sum() - theirs[distinct].sum()) / (2 * distinct.sum()))
        else:
            expected = float(np.dot(ROLL_WEIGHTS, mine))
        self.graph_point(p, ctx, expected)
        return float(mine[ROLL_INDEX[dice[0], dice[1]]] - expected)

    def luck_units(self, luck: float, ctx: MatchContext) -> tuple[float | None, float | None]:
        """(points, MWC) of a roll's luck: money, at the cube of its moment; match, in match
        winning chances at the score and cube."""
        scale = _mwc_per_equity(ctx, self.met)
        if scale is None:
            return luck * self.cube, None
        return None, luck * scale

    def graph_point(self, p: int, ctx: MatchContext, value: float) -> None:
        """Player 0's equity in points (money) or MWC (match) of the value ``value`` (normalised,
        per unit of the cube) of the player ``p`` on roll of ``ctx``."""
        if _mwc_per_equity(ctx, self.met) is None:
            mine = value * self.cube
            self.graph.append((len(self.decisions), self.game.number, mine if p == 0 else -mine))
        else:
            mwc = _score(ctx, self.met).to_mwc(value, self.cube)
            self.graph.append((len(self.decisions), self.game.number, mwc if p == 0 else 1.0 - mwc))

    def end_point(self) -> None:
        """Match play: player 0's MWC after the game, the last point of its graph."""
        game = self.game
        if not self.record.length or game.winner is None:
            return
        self.graph.append((len(self.decisions), game.number,
                           _game_mwc(self.record, game, self.met, player=0, after=True)))

    def _in_mwc(self, dec: Decision, ctx: MatchContext, mwc: float | None) -> None:
        """Match play: the error in MWC, and the deciding player's MWC with the best choice."""
        scale = _mwc_per_equity(ctx, self.met)
        if scale is None:
            return
        dec.error_mwc = dec.error * scale
        if mwc is None:
            mwc = _score(ctx, self.met).to_mwc(dec.best_equity, ctx.cube_value)
        dec.mwc = float(mwc)


def _played_index(board, after, steps) -> int:
    from bgnet.engine.sampling import apply_steps

    target = apply_steps(board, steps)
    hit = np.flatnonzero((after == target[None]).all(axis=(1, 2)))
    if len(hit) == 0:
        raise ValueError("a recorded move is not among the legal moves of its position")
    return int(hit[0])


def _game_mwc(record, game, met, player: int, after: bool) -> float:
    """``player``'s match winning chances at the score before ``game`` or, ``after``, at the
    score its result left (by the table ``met``)."""
    from bgnet.cube.cubeful import MatchScore
    from bgnet.cube.met import load_met

    table = load_met(met)
    my, opp = record.length - game.score[player], record.length - game.score[1 - player]
    if max(my, opp) > table.length:
        table = table.extended(max(my, opp))
    if not after or game.winner is None:
        return table.mwc(my, opp, post_crawford=not game.crawford and min(my, opp) == 1)
    score = MatchScore(my, opp, bool(game.crawford), table)
    return score.win(game.points) if game.winner == player else score.lose(game.points)


def _cube_decision(d, doubled: bool, game: int, number: int, player: int, board, ctx) -> Decision:
    """The player on roll's double / no double, against the cube head's equities."""
    from bgnet.formats.match_id import match_id

    double_value = min(d.double_take, d.double_pass)
    best = max(d.no_double, double_value)
    played = double_value if doubled else d.no_double
    err = max(0.0, best - played)
    close = doubled or err > 0 or abs(d.no_double - double_value) < CLOSE_CUBE
    # XG's count: every double; a position not doubled where doubling was right or within
    # XG_CLOSE_CUBE of right.
    xg_close = doubled or err > 0 or d.no_double - double_value <= XG_CLOSE_CUBE
    best_name = "double" if double_value > d.no_double else "no double"
    kind = ""
    if err > 0:
        if doubled:
            kind = CUBE_ERRORS[3] if d.action == "too_good" else CUBE_ERRORS[2]
        else:
            kind = CUBE_ERRORS[1] if d.double_pass <= d.double_take else CUBE_ERRORS[0]
    options = [["no double", float(d.no_double)], ["double, take", float(d.double_take)],
               ["double, pass", float(d.double_pass)]]
    return Decision(game, number, player, "double" if doubled else "no_double", position_id(board),
                    match_id(ctx), "double" if doubled else "no double", best_name, float(played),
                    float(best), err, mark(err), counted=close, error_kind=kind,
                    candidates=sorted(options, key=lambda o: -o[1]), pr_counted=xg_close)


def _answer(d, kind: str, game: int, number: int, player: int, doubler_board, ctx) -> Decision:
    """The taker's take or drop: its equities are minus the doubler's double/take and
    double/pass."""
    from bgnet.formats.match_id import match_id

    take, drop = -d.double_take, -d.double_pass
    played = take if kind == "take" else drop
    best = max(take, drop)
    err = max(0.0, best - played)
    error_kind = "" if err <= 0 else (CUBE_ERRORS[4] if kind == "take" else CUBE_ERRORS[5])
    return Decision(game, number, player, kind, position_id(doubler_board),
                    match_id(ctx.replace(double_offered=True, turn=player)), kind,
                    "take" if take >= drop else "drop", float(played), float(best), err, mark(err),
                    error_kind=error_kind, pr_counted=True,
                    candidates=sorted([["take", float(take)], ["drop", float(drop)]], key=lambda o: -o[1]))


def analyse_file(path, judge: Judge, progress: bool = False, jacoby: bool = False,
                 workers: int = 1, spec: str | None = None) -> Analysis:
    """Read a ``.mat`` or ``.sgf`` file (:func:`bgnet.analyze.inputs.read_match_file`) and analyse
    it (:func:`analyse_match`). A file that cannot be read raises :class:`bgnet.errors.BadInputFile`
    naming the line; one that stops before its match does is analysed as far as it goes, and the
    analysis says why it is unfinished (:attr:`Analysis.unfinished`)."""
    from bgnet.analyze.inputs import read_match_file

    record, _ = read_match_file(path, jacoby=jacoby)
    return analyse_match(record, judge, str(path), progress, workers=workers, spec=spec)


def analyse_match(record, judge: Judge, name: str, progress: bool = False, workers: int = 1,
                  spec: str | None = None) -> Analysis:
    """:func:`analyse_record`, with a progress bar over its moves when ``progress`` (and its games
    shared among ``workers`` processes, each loading the bot ``spec``)."""
    bar = None
    if progress:
        from tqdm import tqdm

        total = sum(1 for g in record.games for a in g.actions if a.kind == "move")
        bar = tqdm(total=total, desc="analyse", unit="move", smoothing=0.1)
    try:
        return analyse_record(record, judge, name, bar.update if bar is not None else None,
                              workers=workers, spec=spec)
    finally:
        if bar is not None:
            bar.close()


_NO_MATCH = "- (unfinished)"  # a result where no match was played to its end


def summary_rows(players: list, match: bool, adjusted: list) -> list[tuple[str, list[str]]]:
    """The summary table: (label, one value per player) rows, for the text and the HTML page.
    ``adjusted``: each player's luck-adjusted result."""

    def each(f):
        return [f(p) for p in players]

    def marks(m):
        return f"{m['doubtful']} / {m['error']} / {m['blunder']}"

    def emg(x, mwc):
        return f"{x:.3f}" + (f" ({100 * mwc:.2f} %)" if match else "")

    unit = "EMG (MWC)" if match else "EMG"
    rows = [
        ("Games", each(lambda p: f"{p.games}")),
        ("Unforced moves", each(lambda p: f"{p.unforced_moves}")),
        ("Checker-play errors: doubtful / error / blunder", each(lambda p: marks(p.checker_marks))),
        (f"Checker-play error total, {unit}", each(lambda p: emg(p.checker_error, p.checker_error_mwc))),
        ("Checker-play error rate (mEMG / move)", each(lambda p: f"{p.checker_rate:.1f}")),
        ("Checker-play rating", each(lambda p: rating(p.checker_rate) if p.unforced_moves else "-")),
        ("Cube decisions (close or actual)", each(lambda p: f"{p.close_cube_decisions}")),
        ("Doubles / takes / drops", each(lambda p: f"{p.doubles} / {p.takes} / {p.drops}")),
        ("Cube errors: doubtful / error / blunder", each(lambda p: marks(p.cube_marks))),
    ]
    for kind in CUBE_ERRORS:
        rows.append((f"  {kind[0].upper() + kind[1:]}: count (EMG)",
                     each(lambda p, k=kind: f"{p.cube_errors[k]['count']} ({p.cube_errors[k]['error']:.3f})")))
    rows += [
        (f"Cube error total, {unit}", each(lambda p: emg(p.cube_error, p.cube_error_mwc))),
        ("Cube error rate (mEMG / decision)", each(lambda p: f"{p.cube_rate:.1f}")),
        ("Overall error rate (mEMG / decision)", each(lambda p: f"{p.overall_rate:.1f}")),
        ("Overall rating", each(lambda p: rating(p.overall_rate)
                                if p.unforced_moves + p.close_cube_decisions else "-")),
        ("Performance rating, XG's PR (decisions it counts)",
         each(lambda p: f"{p.performance_rating:.1f} ({p.pr_decisions})" if p.pr_decisions else "-")),
        ("Error per game (EMG)", each(lambda p: f"{p.error_per_game:.3f}")),
        ("Rating estimate (FIBS points against the judge)", each(lambda p: signed(p.rating_estimate, 0))),
        ("Resignations judged: decisions (error, EMG)",
         each(lambda p: f"{p.resign_decisions} ({p.resign_error:.3f})")),
        ("Rolls: very lucky / lucky / unlucky / very unlucky",
         each(lambda p: " / ".join(str(p.luck_marks[k]) for k in ("very lucky", "lucky", "unlucky",
                                                                  "very unlucky")))),
        ("Luck total, EMG" + (" (MWC)" if match else ", points"),
         each(lambda p: signed(p.luck, 3) + (f" ({signed(100 * p.luck_mwc, 2)} %)" if match
                                             else f", {signed(p.luck_points, 2)}"))),
        ("Luck rate, mEMG" + (" (MWC)" if match else "") + " / roll",
         each(lambda p: signed(p.luck_rate, 1) + (f" ({signed(100 * p.luck_rate_mwc, 3)} %)" if match
                                                  else ""))),
        ("Luck rating", each(lambda p: p.luck_rating)),
    ]
    if match:
        rows += [("Matches won", each(lambda p: f"{p.matches_won} of {p.matches}")),
                 ("Result, MWC from even (per match)",
                  each(lambda p: f"{signed(100 * p.result, 2)} %" if p.matches else _NO_MATCH)),
                 ("Luck-adjusted result, MWC from even (per match)",
                  [f"{signed(100 * r, 2)} %" if r is not None else _NO_MATCH for r in adjusted])]
    else:
        rows += [("Result (points)", each(lambda p: f"{p.points_won - p.points_lost:+d}")),
                 ("Luck-adjusted result (points)", [signed(r or 0.0, 2) for r in adjusted])]
    return rows


def signed(x: float, places: int) -> str:
    """``x`` with its sign and ``places`` decimals, a value that rounds to zero shown as +0, never
    as -0.

    >>> signed(-0.0004, 3), signed(-0.4, 0), signed(1.25, 1), signed(-2.0, 2)
    ('+0.000', '+0', '+1.2', '-2.00')
    """
    return f"{round(x, places) + 0.0:+.{places}f}"


def _table(players: list, rows) -> list[str]:
    lines = [f"{'':52s}" + "".join(f"{p.name[:18]:>22s}" for p in players)]
    lines += [f"{label:52s}" + "".join(f"{x:>22s}" for x in xs) for label, xs in rows]
    return lines


def _mistake(d: Decision, who: str, where: str = "") -> str:
    dice = f" {d.dice[0]}{d.dice[1]}" if d.dice else ""
    return (f"  {d.error:6.3f} {d.mark:9s} {where}game {d.game}, {who}:{dice} played {d.played!r}, "
            f"best {d.best!r}  ({d.position_id}:{d.match_id})")


def format_summary(a, top: int = 10) -> str:
    """The per-player summary and the biggest mistakes, as text: of one :class:`Analysis`, or of
    a :class:`Report` (each file in a line, then the totals)."""
    if isinstance(a, Report):
        return _format_report(a, top)
    lines = [f"{a.file}: {a.describe()}, judged by {a.bot} at {a.ply}-ply"]
    lines += _table(a.players, summary_rows(a.players, bool(a.match_length), a.luck_adjusted()))
    big = a.biggest(top)
    if big:
        lines.append("")
        lines.append("Biggest mistakes:")
        lines += [_mistake(d, a.players[d.player].name) for d in big]
    return "\n".join(lines)


def _format_report(r: Report, top: int) -> str:
    first = r.analyses[0]
    lines = [f"{len(r.analyses)} files judged by {first.bot} at {first.ply}-ply:"]
    for a in r.analyses:
        p0, p1 = a.players
        lines.append(f"  {a.file}: {a.describe()}, {p0.name} {p0.points_won} - {p1.name} {p1.points_won}; "
                     f"error rates {p0.overall_rate:.1f} / {p1.overall_rate:.1f} mEMG")
    players = r.players
    adjusted = r.luck_adjusted()
    lines.append("")
    lines.append("Totals over all files:")
    lines += _table(players, summary_rows(players, r.match, [adjusted[p.name] for p in players]))
    big = r.biggest(top)
    if big:
        lines.append("")
        lines.append("Biggest mistakes:")
        lines += [_mistake(d, a.players[d.player].name, f"{a.file}, ") for a, d in big]
    return "\n".join(lines)
