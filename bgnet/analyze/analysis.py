"""Match analysis: every checker play and cube decision of a match judged by a bot.

Conventions (stated once here):

* Equities are per unit of the cube in play ("EMG", as GNU Backgammon reports them): in a money
  session checker plays are valued by cubeless money equity; in match play by the cube head's
  cubeful equity at the score (normalised match equity: +1 wins a cube's worth, -1 loses one), the
  value of a move being minus the opponent's cubeful equity with the opponent on roll. Cube
  decisions always use the cube head's cubeful equities (:mod:`bgnet.cube`) from the judge's
  probabilities, in the match's own terms (money with or without the Jacoby rule, or the score).
* An error is the equity of the best option minus the equity of the option played (0 or more). It
  is marked ``doubtful`` from 0.04, ``error`` from 0.08 and ``blunder`` from 0.16, GNU
  Backgammon's default thresholds (its "doubtful", "bad" and "very bad").
* Luck of a roll: the judge's cubeless equity (0-ply) after the best move of the roll taken minus
  its average over all 21 rolls, from the roller's view; marked ``very lucky`` from +0.6,
  ``lucky`` from +0.3, ``unlucky`` from -0.3, ``very unlucky`` from -0.6.
* Rates are in millipoints (thousandths of EMG) per decision: checker play per unforced move (more
  than one legal move), cube per counted cube decision (every double, take and drop, and every
  other cube decision within 0.16 of doubling or judged wrong), overall per both together, as GNU
  Backgammon counts them. The rating of an error rate follows GNU Backgammon's scale,
  :data:`RATINGS`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from bgnet.bots.base import Bot
from bgnet.engine import position_id
from bgnet.engine.movegen import generate
from bgnet.engine.state import CENTERED, MatchContext
from bgnet.nn.encode import game_results
from bgnet.nn.probs import equity, flip, terminal_probs_batch

if TYPE_CHECKING:
    from bgnet.bots.net import NetBot
    from bgnet.cube import CubeDecision

DOUBTFUL, ERROR, BLUNDER = 0.04, 0.08, 0.16
LUCKY, VERY_LUCKY = 0.3, 0.6
CLOSE_CUBE = 0.16
# (upper bound of the error rate in millipoints per decision, rating), best first.
RATINGS = ((2.0, "Supernatural"), (5.0, "World class"), (8.0, "Expert"), (12.0, "Advanced"),
           (18.0, "Intermediate"), (26.0, "Casual player"), (35.0, "Beginner"),
           (float("inf"), "Awful!"))
MOVE_FILTER = (8, 0.16)  # deeper plies judge at most 8 moves within 0.16 of the best, and the one played


def rating(rate: float) -> str:
    """The rating of an error rate in millipoints per decision (see :data:`RATINGS`).

    >>> rating(0.6), rating(29.1), rating(41.0)
    ('Supernatural', 'Beginner', 'Awful!')
    """
    for limit, name in RATINGS:
        if rate < limit:
            return name
    return RATINGS[-1][1]


def mark(error: float) -> str:
    """``""``, ``"doubtful"``, ``"error"`` or ``"blunder"`` for an equity loss."""
    if error >= BLUNDER:
        return "blunder"
    if error >= ERROR:
        return "error"
    return "doubtful" if error >= DOUBTFUL else ""


def luck_mark(luck: float) -> str:
    if luck >= VERY_LUCKY:
        return "very lucky"
    if luck >= LUCKY:
        return "lucky"
    if luck <= -VERY_LUCKY:
        return "very unlucky"
    return "unlucky" if luck <= -LUCKY else ""


# ---------------------------------------------------------------------------------------------
# the judge: a bot's probabilities at a ply


class Judge:
    """Probabilities of a bot at a search depth: of afterstates (mover's view), of positions before
    the roll, and of the best move of each of the 21 rolls (for luck)."""

    def __init__(self, bot: Bot, ply: int | None = None):
        from bgnet.bots.gnubg_bots import GnubgBot

        self.bot = bot
        self.ply = getattr(bot, "ply", 0) if ply is None else int(ply)
        self.gnubg = bot._g if isinstance(bot, GnubgBot) else None
        self.ev = getattr(bot, "eval", None)
        if self.gnubg is None and self.ev is None:
            raise ValueError(f"{getattr(bot, 'name', 'this bot')} cannot evaluate positions, so it "
                             "cannot judge plays: analyse with a net bot or gnubg:N")

    def _after_probs(self, after: np.ndarray, ply: int) -> np.ndarray:
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)
        if self.gnubg is not None:
            g = self.gnubg
            p = flip(np.array([g.probabilities(a[::-1].tolist(), ply) for a in after],
                              np.float64).reshape(-1, 5))
            res = game_results(after)
            if (res > 0).any():
                p[res > 0] = terminal_probs_batch(res[res > 0])
            return p
        assert self.ev is not None  # __init__ refused a bot that is neither gnubg nor has a net
        if ply == 0:
            return np.asarray(self.ev.afterstates(after), np.float64)
        return np.asarray(self._net_bot()._afterstate_value(after, ply), np.float64)

    def _net_bot(self) -> NetBot:
        """The judged bot when it is not GNU Backgammon's: only net bots have the ``eval`` that
        __init__ required, so the bot searches at a ply of its own."""
        return cast("NetBot", self.bot)

    def moves(self, after: np.ndarray, played: int) -> np.ndarray:
        """Mover's probabilities float64[M, 5] of all legal afterstates: at 0-ply for all, at the
        judge's ply for the best few (:data:`MOVE_FILTER`) and the one played."""
        p = self._after_probs(after, 0)
        if self.ply == 0:
            return p
        eq = np.asarray(equity(p))
        order = np.argsort(-eq, kind="stable")
        keep, margin = MOVE_FILTER
        cand = [int(j) for j in order[:keep] if eq[j] >= eq[order[0]] - margin]
        if played not in cand:
            cand.append(played)
        p[cand] = self._after_probs(after[cand], self.ply)
        return p

    def position(self, board: np.ndarray) -> np.ndarray:
        """Probabilities float64[5] of the side on roll, before it rolls, at the judge's ply."""
        b = np.ascontiguousarray(board, np.int8).reshape(1, 2, 25)
        if self.gnubg is not None:
            return np.asarray(self.gnubg.probabilities(b[0].tolist(), self.ply), np.float64)
        return np.asarray(self._net_bot().evaluate(b, self.ply) if hasattr(self.bot, "_expected_over_rolls")
                          else self.bot.evaluate(b), np.float64).reshape(5)

    def roll_equities(self, board: np.ndarray) -> np.ndarray:
        """Cubeless equity float64[21] of the roller after its best 0-ply move, per roll of
        :data:`bgnet.analyze.rollout.ROLLS`."""
        from bgnet.analyze.rollout import ROLLS, all_rolls

        if self.gnubg is None:
            p21, _ = all_rolls(self.ev, np.ascontiguousarray(board, np.int8).reshape(1, 2, 25))
            return np.asarray(equity(p21[0]), np.float64)
        from bgnet.engine.sampling import play_steps

        out = np.empty(len(ROLLS))
        for k, (d1, d2) in enumerate(ROLLS.tolist()):
            steps = np.full((1, 4, 2), -1, np.int8)
            for i, (a, b) in enumerate(self.gnubg.best_move(board.tolist(), d1, d2, 0)):
                steps[0, i] = a, b
            out[k] = float(equity(self._after_probs(play_steps(board[None], steps), 0)[0]))
        return out


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
    def luck_rate(self) -> float:
        return 1000.0 * self.luck / self.rolls if self.rolls else 0.0

    def add(self, d: Decision) -> None:
        if d.kind == "move":
            self.moves += 1
            if not d.forced:
                self.unforced_moves += 1
                self.checker_error += d.error
            if d.mark:
                self.checker_marks[d.mark] += 1
            if d.luck is not None:
                self.luck += d.luck
                self.rolls += 1
                if d.luck_mark:
                    self.luck_marks[d.luck_mark] += 1
            return
        self.cube_decisions += 1
        self.doubles += d.kind == "double"
        self.takes += d.kind == "take"
        self.drops += d.kind == "drop"
        if d.counted:
            self.close_cube_decisions += 1
            self.cube_error += d.error
        if d.mark:
            self.cube_marks[d.mark] += 1

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(checker_rate=self.checker_rate, cube_rate=self.cube_rate,
                 overall_rate=self.overall_rate, luck_rate=self.luck_rate,
                 checker_rating=rating(self.checker_rate), cube_rating=rating(self.cube_rate),
                 overall_rating=rating(self.overall_rate))
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

    def biggest(self, n: int = 10) -> list:
        """The ``n`` biggest errors, largest first."""
        errs = [d for d in self.decisions if d.error > 0]
        return sorted(errs, key=lambda d: -d.error)[:n]

    def to_dict(self, top: int = 10) -> dict:
        return {"file": self.file, "bot": self.bot, "ply": self.ply, "match_length": self.match_length,
                "players": [p.to_dict() for p in self.players],
                "biggest_errors": [asdict(d) for d in self.biggest(top)],
                "decisions": [asdict(d) for d in self.decisions],
                "graph": [{"decision": i, "game": g, "value": v} for i, g, v in self.graph]}


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
    """Equity of each afterstate for the mover (module docstring: cubeless money, cubeful match)."""
    probs = judge.moves(after, played)
    if ctx.is_money:
        return np.asarray(equity(probs), np.float64)
    from bgnet.cube import decide_context

    met, eff = judge.bot.cube_settings()
    other = 1 - ctx.player_on_roll
    octx = ctx.replace(player_on_roll=other, turn=other, dice=(0, 0))
    out = np.empty(len(after))
    for j, (a, p) in enumerate(zip(after, probs)):
        r = game_results(a[None])[0]
        if r > 0:
            out[j] = _win_value(ctx, int(r))
            continue
        out[j] = -decide_context(tuple(_valid(flip(p))), octx, a[::-1], met=met, efficiency=eff).equity
    return out


def _win_value(ctx: MatchContext, result: int) -> float:
    """Normalised match equity of winning ``result`` (1, 2, 3) games at the current cube."""
    from bgnet.cube.cubeful import MatchScore
    from bgnet.cube.met import load_met

    me = ctx.player_on_roll
    score = MatchScore(ctx.away(me), ctx.away(1 - me), ctx.crawford, load_met(None))
    return score.to_equity(score.win(result * ctx.cube_value), ctx.cube_value)


def analyse_record(record, judge: Judge, name: str = "", progress=None) -> Analysis:
    """Judge every decision of a :class:`bgnet.engine.game.MatchRecord`."""
    from bgnet.analyze.rollout import ROLL_INDEX, ROLL_WEIGHTS
    from bgnet.engine.notation import format_move
    from bgnet.formats.match_id import match_id

    players = [PlayerSummary(record.names[0]), PlayerSummary(record.names[1])]
    decisions: list[Decision] = []
    graph: list = []
    for game in record.games:
        cube, owner = 1, CENTERED
        first_move = True
        doubled = False
        # (doubler, board of the doubler, CubeDecision) while a double waits
        pending: tuple[int, np.ndarray, CubeDecision] | None = None
        number = 0
        for act in game.actions:
            p = act.player
            board = np.ascontiguousarray(act.board, np.int8)
            if act.kind in ("double", "move") and not first_move and not doubled:
                ctx = _ctx(record, game, cube, owner, p)
                if ctx.may_double(p):
                    d, _ = _cube_equities(judge, board, ctx)
                    _graph_point(graph, len(decisions), game, ctx, d, p, record)
                    dec = _cube_decision(d, act.kind == "double", game.number, number, p, board, ctx)
                    decisions.append(dec)
                    players[p].add(dec)
                    number += 1
                    if act.kind == "double":
                        pending = (p, board, d)
            if act.kind == "double":
                doubled = True
                if pending is None:  # a double the rules allowed but the judge could not weigh
                    ctx = _ctx(record, game, cube, owner, p)
                    pending = (p, board, _cube_equities(judge, board, ctx)[0])
            elif act.kind in ("take", "drop"):
                assert pending is not None  # a take or drop answers the double just recorded
                doubler, dboard, d = pending
                ctx = _ctx(record, game, cube, owner, doubler)
                dec = _answer(d, act.kind, game.number, number, p, dboard, ctx)
                decisions.append(dec)
                players[p].add(dec)
                number += 1
                if act.kind == "take":
                    cube, owner = cube * 2, p
                pending = None
            elif act.kind == "move":
                ctx = _ctx(record, game, cube, owner, p, act.dice)
                after, steps = generate(board, *act.dice)
                if len(after) == 0:
                    first_move, doubled = False, False
                    continue
                played = _played_index(board, after, act.steps)
                values = _move_values(judge, board, after, played, ctx)
                best = int(np.argmax(values))
                err = max(0.0, float(values[best] - values[played]))
                luck = None
                if not first_move:  # the opening roll is nobody's luck to judge here
                    eqs = judge.roll_equities(board)
                    luck = float(eqs[ROLL_INDEX[act.dice[0], act.dice[1]]] - np.dot(ROLL_WEIGHTS, eqs))
                forced = len(after) == 1
                dec = Decision(game.number, number, p, "move", position_id(board), match_id(ctx),
                               format_move(steps[played], board), format_move(steps[best], board),
                               float(values[played]), float(values[best]), 0.0 if forced else err,
                               "" if forced else mark(err), tuple(int(x) for x in act.dice), forced,
                               not forced, luck, luck_mark(luck) if luck is not None else "")
                decisions.append(dec)
                players[p].add(dec)
                number += 1
                first_move, doubled = False, False
                if progress is not None:
                    progress(1)
    return Analysis(name, getattr(judge.bot, "name", "bot"), judge.ply, record.length, players,
                    decisions, graph)


def _played_index(board, after, steps) -> int:
    from bgnet.engine.sampling import apply_steps

    target = apply_steps(board, steps)
    hit = np.flatnonzero((after == target[None]).all(axis=(1, 2)))
    if len(hit) == 0:
        raise ValueError("a recorded move is not among the legal moves of its position")
    return int(hit[0])


def _graph_point(graph, index, game, ctx, d, player, record) -> None:
    """Player 0's cubeful equity (money) or MWC (match) before a cube decision."""
    if ctx.is_money:
        v = d.no_double * ctx.cube_value
        graph.append((index, game.number, v if player == 0 else -v))
    elif d.mwc_no_double is not None:
        graph.append((index, game.number, d.mwc_no_double if player == 0 else 1.0 - d.mwc_no_double))


def _cube_decision(d, doubled: bool, game: int, number: int, player: int, board, ctx) -> Decision:
    """The player on roll's double / no double, against the cube head's equities."""
    from bgnet.formats.match_id import match_id

    double_value = min(d.double_take, d.double_pass)
    best = max(d.no_double, double_value)
    played = double_value if doubled else d.no_double
    err = max(0.0, best - played)
    close = doubled or err > 0 or abs(d.no_double - double_value) < CLOSE_CUBE
    best_name = "double" if double_value > d.no_double else "no double"
    return Decision(game, number, player, "double" if doubled else "no_double", position_id(board),
                    match_id(ctx), "double" if doubled else "no double", best_name, float(played),
                    float(best), err, mark(err), counted=close)


def _answer(d, kind: str, game: int, number: int, player: int, doubler_board, ctx) -> Decision:
    """The taker's take or drop: its equities are minus the doubler's double/take and
    double/pass."""
    from bgnet.formats.match_id import match_id

    take, drop = -d.double_take, -d.double_pass
    played = take if kind == "take" else drop
    best = max(take, drop)
    err = max(0.0, best - played)
    return Decision(game, number, player, kind, position_id(doubler_board),
                    match_id(ctx.replace(double_offered=True, turn=player)), kind,
                    "take" if take >= drop else "drop", float(played), float(best), err, mark(err))


def analyse_file(path, judge: Judge, progress: bool = False, jacoby: bool = False) -> Analysis:
    """Read a ``.mat`` file (:func:`bgnet.formats.mat.load_mat`) and analyse it. A file that cannot
    be read raises :class:`bgnet.errors.BadInputFile` naming the line."""
    from bgnet.errors import BadInputFile
    from bgnet.formats.mat import load_mat

    try:
        record = load_mat(path, jacoby=jacoby)
    except FileNotFoundError:
        raise BadInputFile(f"no such file: {str(path)!r}") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise BadInputFile(f"cannot read {str(path)!r}: {e}") from None
    except ValueError as e:
        raise BadInputFile(f"{path}: {e}") from None
    if not record.games:
        raise BadInputFile(f"{path}: the file holds no game")
    bar = None
    if progress:
        from tqdm import tqdm

        total = sum(1 for g in record.games for a in g.actions if a.kind == "move")
        bar = tqdm(total=total, desc="analyse", unit="move", smoothing=0.1)
    try:
        return analyse_record(record, judge, str(path), bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()


def format_summary(a: Analysis, top: int = 10) -> str:
    """The per-player summary and the biggest mistakes, as text."""
    p0, p1 = a.players
    rows = [
        ("Unforced moves", f"{p0.unforced_moves}", f"{p1.unforced_moves}"),
        ("Checker-play errors: doubtful / error / blunder",
         "{doubtful} / {error} / {blunder}".format(**p0.checker_marks),
         "{doubtful} / {error} / {blunder}".format(**p1.checker_marks)),
        ("Checker-play error total (EMG)", f"{p0.checker_error:.3f}", f"{p1.checker_error:.3f}"),
        ("Checker-play error rate (mEMG / move)", f"{p0.checker_rate:.1f}", f"{p1.checker_rate:.1f}"),
        ("Checker-play rating", rating(p0.checker_rate), rating(p1.checker_rate)),
        ("Cube decisions (close or actual)", f"{p0.close_cube_decisions}", f"{p1.close_cube_decisions}"),
        ("Doubles / takes / drops", f"{p0.doubles} / {p0.takes} / {p0.drops}",
         f"{p1.doubles} / {p1.takes} / {p1.drops}"),
        ("Cube errors: doubtful / error / blunder",
         "{doubtful} / {error} / {blunder}".format(**p0.cube_marks),
         "{doubtful} / {error} / {blunder}".format(**p1.cube_marks)),
        ("Cube error total (EMG)", f"{p0.cube_error:.3f}", f"{p1.cube_error:.3f}"),
        ("Cube error rate (mEMG / decision)", f"{p0.cube_rate:.1f}", f"{p1.cube_rate:.1f}"),
        ("Overall error rate (mEMG / decision)", f"{p0.overall_rate:.1f}", f"{p1.overall_rate:.1f}"),
        ("Overall rating", rating(p0.overall_rate), rating(p1.overall_rate)),
        ("Luck total (EMG)", f"{p0.luck:+.3f}", f"{p1.luck:+.3f}"),
        ("Luck rate (mEMG / roll)", f"{p0.luck_rate:+.1f}", f"{p1.luck_rate:+.1f}"),
    ]
    kind = f"{a.match_length} point match" if a.match_length else "money session"
    lines = [f"{a.file}: {kind}, judged by {a.bot} at {a.ply}-ply",
             f"{'':46s}{p0.name[:18]:>20s}{p1.name[:18]:>20s}"]
    lines += [f"{label:46s}{x:>20s}{y:>20s}" for label, x, y in rows]
    big = a.biggest(top)
    if big:
        lines.append("")
        lines.append("Biggest mistakes:")
        for d in big:
            who = a.players[d.player].name
            dice = f" {d.dice[0]}{d.dice[1]}" if d.dice else ""
            lines.append(f"  {d.error:6.3f} {d.mark:9s} game {d.game}, {who}:{dice} played {d.played!r}, "
                         f"best {d.best!r}  ({d.position_id}:{d.match_id})")
    return "\n".join(lines)
