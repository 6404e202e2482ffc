"""The cube-decision head: double or not, take or pass, from five probabilities, cube and score.

For the player on roll before the roll, three cubeful equities are compared, as GNU Backgammon
does: no double (ND), double/take (DT: the cube doubled and owned by the opponent) and double/pass
(DP: one cube won now). Then

* DT >= ND and DP >= ND: a double; the opponent takes when DT < DP (the doubler gets the smaller),
  so the action is ``"double_take"`` or ``"double_pass"``;
* otherwise no double: ``"too_good"`` when playing on beats what the double would bring (ND above
  both DP and DT, or above DP where the opponent would pass), else ``"no_double"``. A position
  without gammon chances is never too good: then a double that would be passed is a double/pass.

Equities are normalised like GNU Backgammon's: money per unit of the current cube (DP = +1), match
play as normalised equity at the current cube, with the match winning chances as well.

>>> from bgnet.engine.state import MatchContext
>>> d = decide_context((0.80, 0.10, 0.0, 0.02, 0.0), MatchContext())
>>> d.action, d.double, d.take
('double_pass', True, False)
>>> decide_context((0.55, 0.15, 0.01, 0.12, 0.01), MatchContext()).action
'no_double'
"""
from __future__ import annotations

from dataclasses import dataclass

from bgnet.cube.cubeful import (
    CENTRED,
    MINE,
    THEIRS,
    MatchScore,
    check_probabilities,
    match_cubeful,
    match_cubeless,
    money_cubeful,
    money_cubeless,
    resolve_efficiency,
)
from bgnet.cube.met import MatchEquityTable, load_met
from bgnet.engine.state import CENTERED, MatchContext

ACTIONS = ("no_double", "double_take", "double_pass", "too_good")


@dataclass(frozen=True)
class CubeDecision:
    """The proper cube action for the player on roll, and what it rests on.

    ``no_double``, ``double_take`` and ``double_pass`` are cubeful equities (money: per unit of the
    current cube; match: normalised equity); ``double_take``/``double_pass`` are None when the
    player may not double (cube owned by the opponent, dead, Crawford game). The ``mwc_*`` fields
    give match winning chances in match play (None for money). ``take_point`` is the smallest
    winning chance with which the opponent should take, at this position's gammon rates.
    """

    action: str
    double: bool
    take: bool
    no_double: float
    double_take: float | None
    double_pass: float | None
    take_point: float | None
    cubeless_equity: float
    efficiency: float
    cube_available: bool
    mwc_no_double: float | None = None
    mwc_double_take: float | None = None
    mwc_double_pass: float | None = None

    @property
    def equity(self) -> float:
        """Cubeful equity of the proper action."""
        # A double's equities are None only when the cube is not available, and then the action
        # is no_double.
        if self.action == "double_take":
            assert self.double_take is not None, "a double_take decision has its equity"
            return self.double_take
        if self.action == "double_pass":
            assert self.double_pass is not None, "a double_pass decision has its equity"
            return self.double_pass
        return self.no_double

    @property
    def mwc(self) -> float | None:
        """Match winning chances of the proper action (None in money play)."""
        if self.mwc_no_double is None:
            return None
        return {"double_take": self.mwc_double_take,
                "double_pass": self.mwc_double_pass}.get(self.action, self.mwc_no_double)


def cube_action(nd: float, dt: float, dp: float, gammons_possible: bool) -> str:
    """The action from the three equities (GNU Backgammon's case analysis, in four outcomes).

    >>> cube_action(0.3, 0.5, 1.0, True), cube_action(0.6, 1.2, 1.0, True)
    ('double_take', 'double_pass')
    >>> cube_action(1.1, 1.4, 1.0, True), cube_action(1.1, 1.4, 1.0, False)
    ('too_good', 'double_pass')
    """
    if dt >= nd and dp >= nd:
        return "double_take" if dp > dt else "double_pass"
    if nd > dt and dt <= dp and dp >= nd:
        return "no_double"  # the opponent would take, and the take is worse for me than playing on
    if not gammons_possible:
        # Playing on can only be "too good" for the gammons it may win.
        return "double_pass" if dt > dp else "no_double"
    return "too_good"


def relative_owner(ctx: MatchContext) -> str:
    """Who owns the cube seen from the player on roll: CENTRED, MINE or THEIRS."""
    if ctx.cube_owner == CENTERED:
        return CENTRED
    if ctx.cube_owner not in (0, 1):
        raise ValueError(f"cube owner must be -1 (centred), 0 or 1; got {ctx.cube_owner}")
    return MINE if ctx.cube_owner == ctx.player_on_roll else THEIRS


def _check_context(ctx: MatchContext) -> None:
    if ctx.cube_value < 1 or ctx.cube_value & (ctx.cube_value - 1):
        raise ValueError(f"the cube value must be a power of two; got {ctx.cube_value}")
    if ctx.player_on_roll not in (0, 1):
        raise ValueError(f"player on roll must be 0 or 1; got {ctx.player_on_roll}")
    if ctx.match_length < 0:
        raise ValueError(f"match length must be 0 (money) or positive; got {ctx.match_length}")
    if not ctx.is_money and min(ctx.away(0), ctx.away(1)) < 1:
        raise ValueError(f"the match is over at score {ctx.score} of a {ctx.match_length}-point "
                         "match")


def _crossing(f, target: float, knots) -> float:
    """Where the increasing piecewise-linear ``f`` (linear between ``knots``) reaches ``target``
    on [0, 1]; 0 or 1 when it stays above or below. The ends are taken a hair inside so that the
    gammon rates stay defined."""
    lo, hi = 1e-9, 1.0 - 1e-9
    pts = sorted({lo, hi, *(k for k in knots if lo < k < hi)})
    vals = [f(p) for p in pts]
    if vals[0] >= target:
        return 0.0
    for (p0, v0), (p1, v1) in zip(zip(pts, vals), zip(pts[1:], vals[1:])):
        if v1 >= target:
            return p0 + (p1 - p0) * (target - v0) / (v1 - v0) if v1 > v0 else p1
    return 1.0


def _with_win(probabilities, win: float):
    """The probabilities with the winning chance moved to ``win``, gammon rates kept."""
    p, wg, wbg, lg, lbg = probabilities
    up = win / p if p > 0 else 0.0
    down = (1.0 - win) / (1.0 - p) if p < 1 else 0.0
    return win, wg * up, wbg * up, lg * down, lbg * down


def decide_context(probabilities, ctx: MatchContext, position=None, *,
                   met: MatchEquityTable | str | None = None, efficiency=None) -> CubeDecision:
    """The cube decision for the player on roll in ``ctx`` (see the module docstring).

    ``position`` (a board, ``[opponent, player on roll]``) sets the cube efficiency by kind of
    position (contact, race, bear-off); without it the contact value is used. ``efficiency`` may
    be a number or a :class:`~bgnet.cube.cubeful.CubeEfficiency`; ``met`` a table or its name.
    """
    probs = check_probabilities(probabilities)
    _check_context(ctx)
    x = resolve_efficiency(efficiency, position)
    owner = relative_owner(ctx)
    available = ctx.may_double(ctx.player_on_roll)
    gammons = probs[1] > 0.0
    if ctx.is_money:
        return _money_decision(probs, ctx, owner, x, available, gammons)
    return _match_decision(probs, ctx, owner, x, available, gammons, load_met(met))


def _money_decision(probs, ctx, owner, x, available, gammons) -> CubeDecision:
    nd = money_cubeful(probs, owner, x, ctx.jacoby)
    cubeless = money_cubeless(probs, ctx.jacoby and owner == CENTRED)
    if not available:
        return CubeDecision("no_double", False, True, nd, None, None, None, cubeless, x, False)
    dt_at = lambda p: 2.0 * money_cubeful(p, THEIRS, x)  # noqa: E731  (no Jacoby once turned)
    dt, dp = dt_at(probs), 1.0
    tp = 1.0 - _crossing(lambda w: dt_at(_with_win(probs, w)), dp, _money_kinks(probs))
    action = cube_action(nd, dt, dp, gammons)
    return CubeDecision(action, action.startswith("double"), dt < dp, nd, dt, dp, tp, cubeless,
                        x, True)


def _money_kinks(probs) -> list[float]:
    from bgnet.cube.cubeful import money_points

    return [money_points(probs)[0]] if 0.0 < probs[0] < 1.0 else []


def _match_decision(probs, ctx, owner, x, available, gammons, met) -> CubeDecision:
    me = ctx.player_on_roll
    score = MatchScore(ctx.away(me), ctx.away(1 - me), ctx.crawford, met)
    cube = ctx.cube_value
    nd_mwc = match_cubeful(probs, score, cube, owner, x)
    cubeless = match_cubeless(probs, score, cube)
    eq = lambda m: score.to_equity(m, cube)  # noqa: E731
    if not available:
        return CubeDecision("no_double", False, True, eq(nd_mwc), None, None, None, cubeless, x,
                            False, nd_mwc)
    dt_at = lambda p: match_cubeful(p, score, 2 * cube, THEIRS, x)  # noqa: E731
    dt_mwc, dp_mwc = dt_at(probs), score.win(cube)
    kinks = _match_kinks(probs, score, 2 * cube)
    tp = 1.0 - _crossing(lambda w: dt_at(_with_win(probs, w)), dp_mwc, kinks)
    action = cube_action(nd_mwc, dt_mwc, dp_mwc, gammons)
    return CubeDecision(action, action.startswith("double"), dt_mwc < dp_mwc, eq(nd_mwc),
                        eq(dt_mwc), eq(dp_mwc), tp, cubeless, x, True, nd_mwc, dt_mwc, dp_mwc)


def _match_kinks(probs, score: MatchScore, cube: int) -> list[float]:
    """Where the double/take MWC curve bends: the taker's cash point (in my winning chances)."""
    from bgnet.cube.cubeful import match_cash_points

    if score.cube_dead(cube):
        return []
    return [1.0 - match_cash_points(probs, score, cube)[1]]


def decide(probabilities, match_id: str, position_id: str | None = None, *,
           met: MatchEquityTable | str | None = None, efficiency=None) -> CubeDecision:
    """The cube decision for the player on roll, from a GNU Backgammon Match ID.

    ``probabilities``: the five cubeless probabilities (gnubg order) for the player on roll;
    ``match_id``: cube value and owner, player on roll, score, match length (0 = money), Crawford
    and, in money play, the Jacoby rule (bit 66 clear = Jacoby on, as GNU Backgammon 1.07 writes);
    ``position_id``: optional GNU Backgammon Position ID, used for the cube efficiency.

    >>> decide((0.80, 0.10, 0.0, 0.02, 0.0), "cAkAAAAAAAAE").action   # money, centred, no Jacoby
    'double_pass'
    """
    try:
        from bgnet.formats.match_id import match_context_from_id
    except ImportError as e:  # pragma: no cover - the reader ships with bgnet
        raise ImportError("bgnet.formats.match_id is needed to read Match IDs") from e
    ctx = match_context_from_id(match_id)
    board = None
    if position_id is not None:
        from bgnet.engine.position_id import board_from_position_id

        board = board_from_position_id(position_id)
    return decide_context(probabilities, ctx, board, met=met, efficiency=efficiency)
