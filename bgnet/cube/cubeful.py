"""Cubeful equity from cubeless probabilities: Janowski's interpolation, for money and match play.

The five probabilities are GNU Backgammon's, for the player on roll before the roll: win, win
gammon, win backgammon, lose gammon, lose backgammon (gammons include backgammons).

Janowski's model: the cubeful equity is ``(1 - x) * dead + x * live``, where *dead* is the equity
with a dead cube (the cubeless equity at the current cube and score) and *live* is the equity of a
perfectly efficient cube, piecewise linear in the winning chances between the points where the cube
changes hands (take point, cash point). ``x`` is the cube efficiency (:class:`CubeEfficiency`).

* Money: equity per unit of the current cube. With a live cube the opponent's take point is
  ``(L - 1/2) / (W + L + 1/2)`` and the cash point ``(L + 1) / (W + L + 1/2)``, W and L being the
  average value of a win and a loss (R. Janowski, "Take-points in money games", 1993).
* Match: match winning chances (MWC). The values of winning and losing 1, 2 or 3 cubes come from
  the match equity table at the score; the live-cube cash points are found level by level from the
  last cube value that can still matter down to the current one (a doubled cube that would be dead
  gives a dead-cube cash point; a live one, the cash point implied by the taker's own cash point one
  level up). This is the method GNU Backgammon uses at 0 ply (J. Thyssen's notes on cubeful
  equities in match play), so bgnet's decisions can be checked against it.

Relative cube ownership is one of :data:`CENTRED`, :data:`MINE` (the player on roll owns it) and
:data:`THEIRS`.

>>> p = (0.70, 0.0, 0.0, 0.0, 0.0)   # a gammonless race: cubeless equity +0.40
>>> round(money_cubeful(p, CENTRED, 0.0), 4), round(money_cubeful(p, CENTRED, 1.0), 4)
(0.4, 0.6667)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from bgnet.cube.met import MatchEquityTable

CENTRED, MINE, THEIRS = "centred", "mine", "theirs"
OWNERS = (CENTRED, MINE, THEIRS)
_EPS = 1e-7


def check_probabilities(probabilities) -> tuple[float, float, float, float, float]:
    """The five probabilities as floats, or ValueError saying what is wrong with them.

    >>> check_probabilities([0.5, 0.1, 0.0, 0.1, 0.0])
    (0.5, 0.1, 0.0, 0.1, 0.0)
    """
    try:
        p = tuple(float(v) for v in probabilities)
    except (TypeError, ValueError):
        raise ValueError("probabilities must be five numbers (win, win gammon, win backgammon, "
                         "lose gammon, lose backgammon)") from None
    if len(p) != 5:
        raise ValueError(f"probabilities must be five numbers in gnubg order; got {len(p)}")
    if not all(math.isfinite(v) and -1e-6 <= v <= 1 + 1e-6 for v in p):
        raise ValueError(f"probabilities must lie in [0, 1]; got {p}")
    win, wg, wbg, lg, lbg = (min(max(v, 0.0), 1.0) for v in p)
    tol = 1e-5
    if wg > win + tol or lg > 1.0 - win + tol or wbg > wg + tol or lbg > lg + tol:
        raise ValueError("inconsistent probabilities: need win gammon <= win, lose gammon <= "
                         f"1 - win and backgammons <= gammons; got {p}")
    return win, wg, wbg, lg, lbg


# ----------------------------------------------------------------------------------------------
# Cube efficiency


@dataclass(frozen=True)
class CubeEfficiency:
    """Janowski's cube efficiency x by kind of position, as GNU Backgammon sets it at 0 ply.

    Contact 0.68; race ``race_coefficient + race_factor * pips`` (pips of the player on roll)
    kept within [race_min, race_max], 0.6 to 0.7; all checkers home on both sides 0.6; game over 0.

    >>> eff = CubeEfficiency()
    >>> eff.contact, eff.race(40), eff.race(100), eff.race(150)
    (0.68, 0.6, 0.675, 0.7)
    """

    contact: float = 0.68
    race_coefficient: float = 0.55
    race_factor: float = 0.00125
    race_min: float = 0.6
    race_max: float = 0.7
    bearoff: float = 0.6

    def __post_init__(self):
        for name in ("contact", "race_min", "race_max", "bearoff"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"cube efficiency {name} must lie in [0, 1]; got {v}")
        if self.race_min > self.race_max:
            raise ValueError("race_min must not exceed race_max")

    def race(self, pips: int) -> float:
        """Efficiency in a race where the player on roll has ``pips`` to go."""
        return float(self._races(np.array([pips]))[0])

    def _races(self, pips: np.ndarray) -> np.ndarray:
        x = self.race_coefficient + self.race_factor * pips
        return np.round(np.clip(x, self.race_min, self.race_max), 10)

    def for_board(self, board) -> float:
        """Efficiency for a position (``[opponent, player on roll]``, bgnet's board layout)."""
        from bgnet.engine.board import as_board

        return float(self.for_boards(as_board(board)[None])[0])

    def for_boards(self, boards) -> np.ndarray:
        """:meth:`for_board` of many positions at once (int8[N, 2, 25]): float64[N]. Contact,
        a race by the pips of the player on roll, a bear-off (all checkers home on both sides),
        0 where the game is over: nothing left for the cube to do."""
        from bgnet.engine.board import race_mask

        b = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
        wide = b.astype(np.int64)
        over = (wide[:, 0].sum(axis=1) == 0) | (wide[:, 1].sum(axis=1) == 0)
        home = wide[:, :, 6:].sum(axis=(1, 2)) == 0
        pips = (wide[:, 1] * np.arange(1, 26)).sum(axis=1)
        x = np.where(home, self.bearoff, self._races(pips))
        x = np.where(race_mask(b), x, self.contact)
        return np.where(over, 0.0, x)


def resolve_efficiency(efficiency, board=None) -> float:
    """A number x from a float, a :class:`CubeEfficiency` (with the board when there is one), or
    None (GNU Backgammon's settings)."""
    if efficiency is None:
        efficiency = CubeEfficiency()
    if isinstance(efficiency, CubeEfficiency):
        return efficiency.for_board(board) if board is not None else efficiency.contact
    x = float(efficiency)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"cube efficiency must lie in [0, 1]; got {efficiency}")
    return x


def _check_owner(owner: str) -> None:
    if owner not in OWNERS:
        raise ValueError(f"cube owner must be one of {OWNERS}; got {owner!r}")


def _chance(value: float) -> float:
    """``value`` clamped to [0, 1]: an MWC made of sums of products can round a certain loss to
    -1e-17 (or a certain win just past 1)."""
    return min(1.0, max(0.0, value))


def _line(p: float, x0: float, y0: float, x1: float, y1: float) -> float:
    """Value at ``p`` of the line through (x0, y0) and (x1, y1); y1 where the segment is empty."""
    return y0 + (y1 - y0) * (p - x0) / (x1 - x0) if x1 != x0 else y1


# ----------------------------------------------------------------------------------------------
# Money play


def money_cubeless(probabilities, jacoby_centred: bool = False) -> float:
    """Cubeless money equity; under the Jacoby rule with a centred cube gammons count single.

    >>> round(money_cubeless((0.6, 0.2, 0.05, 0.1, 0.01)), 4)
    0.34
    """
    win, wg, wbg, lg, lbg = probabilities
    single = 2.0 * win - 1.0
    return single if jacoby_centred else single + wg - lg + wbg - lbg


def _win_loss_values(probabilities) -> tuple[float, float]:
    """Average points of a win (W) and of a loss (L), backgammons counting three."""
    win, wg, wbg, lg, lbg = probabilities
    return 1.0 + (wg + wbg) / win, 1.0 + (lg + lbg) / (1.0 - win)


def money_points(probabilities) -> tuple[float, float]:
    """Live-cube (opponent's take point, my cash point) in my winning chances, money play.

    >>> [round(v, 4) for v in money_points((0.5, 0.0, 0.0, 0.0, 0.0))]
    [0.2, 0.8]
    """
    w, l = _win_loss_values(probabilities)
    return (l - 0.5) / (w + l + 0.5), (l + 1.0) / (w + l + 0.5)


def money_live(probabilities, owner: str, jacoby: bool = False) -> float:
    """Equity with a fully live cube (x = 1) per unit of the current cube."""
    win = probabilities[0]
    w, l = _win_loss_values(probabilities)
    take, cash = money_points(probabilities)
    if owner == CENTRED:
        # Under the Jacoby rule, outside the window the game is played for single stakes only:
        # nobody turns the cube just to make a gammon count.
        if win < take:
            return -1.0 if jacoby else _line(win, 0.0, -l, take, -1.0)
        if win < cash:
            return _line(win, take, -1.0, cash, 1.0)
        return 1.0 if jacoby else _line(win, cash, 1.0, 1.0, w)
    if owner == MINE:
        return _line(win, 0.0, -l, cash, 1.0) if win < cash else _line(win, cash, 1.0, 1.0, w)
    return _line(win, 0.0, -l, take, -1.0) if win < take else _line(win, take, -1.0, 1.0, w)


def money_cubeful(probabilities, owner: str, x: float, jacoby: bool = False) -> float:
    """Janowski's cubeful money equity per unit of the current cube, for the player on roll."""
    _check_owner(owner)
    dead = money_cubeless(probabilities, jacoby and owner == CENTRED)
    win = probabilities[0]
    if win <= _EPS or win >= 1.0 - _EPS:
        return dead  # one side cannot win: the cube has no use
    return (1.0 - x) * dead + x * money_live(probabilities, owner, jacoby)


# ----------------------------------------------------------------------------------------------
# Match play


@dataclass(frozen=True)
class MatchScore:
    """The score seen by the player on roll: points each side still needs, and whether this game
    is the Crawford game. Results of this game lead to post-Crawford games when a player is already
    1-away or this is the Crawford game."""

    my_away: int
    opp_away: int
    crawford: bool
    met: MatchEquityTable

    def __post_init__(self):
        if self.my_away < 1 or self.opp_away < 1:
            raise ValueError(f"both players must still need points; got {self.my_away}-away, "
                             f"{self.opp_away}-away")
        if self.crawford and min(self.my_away, self.opp_away) != 1:
            raise ValueError("the Crawford game needs a player at 1-away")
        if max(self.my_away, self.opp_away) > self.met.length:
            object.__setattr__(self, "met", self.met.extended(max(self.my_away, self.opp_away)))

    @property
    def post(self) -> bool:
        return self.crawford or self.my_away == 1 or self.opp_away == 1

    @cached_property
    def results(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """My MWC after I win, and after I lose, 0, 1, 2, ... points in this game (capped at
        the points each side needs)."""
        return _result_tables(self.met, self.my_away, self.opp_away, self.post)

    def win(self, points: int) -> float:
        """My MWC after I win ``points`` points in this game."""
        return self.results[0][min(points, self.my_away)]

    def lose(self, points: int) -> float:
        """My MWC after the opponent wins ``points`` points in this game."""
        return self.results[1][min(points, self.opp_away)]

    def cube_dead(self, cube: int) -> bool:
        """True where GNU Backgammon evaluates cubeless: both players win the match with the cube
        as it is, the Crawford game, and 2-away against 2-away."""
        both_out = self.my_away <= cube and self.opp_away <= cube
        return both_out or self.crawford or (self.my_away == 2 and self.opp_away == 2)

    def to_mwc(self, equity: float, cube: int) -> float:
        """Normalised equity (-1 = lose a cube, +1 = win a cube) to MWC."""
        hi, lo = self.win(cube), self.lose(cube)
        return _chance(0.5 * (equity * (hi - lo) + hi + lo))

    def to_equity(self, mwc: float, cube: int) -> float:
        """MWC to normalised equity at this cube (inverse of :meth:`to_mwc`)."""
        hi, lo = self.win(cube), self.lose(cube)
        return (2.0 * mwc - hi - lo) / (hi - lo) if hi > lo else 0.0

    def gammon_prices(self, cube: int) -> tuple[float, float, float, float]:
        """Extra value of (my gammon, opponent's gammon, my backgammon, opponent's backgammon) in
        normalised equity, from the match equity table."""
        hi, lo = self.win(cube), self.lose(cube)
        half = 0.5 * (hi - lo)
        if half <= _EPS:
            return 0.0, 0.0, 0.0, 0.0
        centre = 0.5 * (hi + lo)
        wg = (self.win(2 * cube) - centre) / half - 1.0
        lg = (centre - self.lose(2 * cube)) / half - 1.0
        wb = (self.win(3 * cube) - centre) / half - (wg + 1.0)
        lb = (centre - self.lose(3 * cube)) / half - (lg + 1.0)
        return max(wg, 0.0), max(lg, 0.0), max(wb, 0.0), max(lb, 0.0)


@lru_cache(maxsize=4096)
def _result_tables(met: MatchEquityTable, my_away: int, opp_away: int, post: bool):
    """My MWC after winning, and after losing, 0, 1, 2, ... points (tabulated once per score:
    every decision looks results up many times)."""
    wins = tuple(met.mwc(my_away - k, opp_away, post) for k in range(my_away + 1))
    losses = tuple(met.mwc(my_away, opp_away - k, post) for k in range(opp_away + 1))
    return wins, losses


def match_cubeless(probabilities, score: MatchScore, cube: int) -> float:
    """Cubeless normalised equity at the score (gammons valued by the match equity table)."""
    win, wg, wbg, lg, lbg = probabilities
    gw, gl, bw, bl = score.gammon_prices(cube)
    return 2.0 * win - 1.0 + wg * gw - lg * gl + wbg * bw - lbg * bl


def _ratios(probabilities) -> tuple[tuple[float, float], tuple[float, float]]:
    """(gammon-only, backgammon) shares of my wins and of the opponent's wins."""
    win, wg, wbg, lg, lbg = probabilities
    mine = ((wg - wbg) / win, wbg / win) if win > 0.0 else (0.0, 0.0)
    theirs = ((lg - lbg) / (1.0 - win), lbg / (1.0 - win)) if win < 1.0 else (0.0, 0.0)
    return mine, theirs


def _result_mwc(score: MatchScore, winner: int, points: int, ratios) -> float:
    """My MWC when ``winner`` (0 me, 1 the opponent) wins ``points`` per single game, weighting
    single, gammon and backgammon results by the winner's ratios."""
    g, b = ratios
    value = score.win if winner == 0 else score.lose
    return (1.0 - g - b) * value(points) + g * value(2 * points) + b * value(3 * points)


def match_cash_points(probabilities, score: MatchScore, cube: int) -> tuple[float, float]:
    """Live-cube cash points (mine, the opponent's), each in that player's own winning chances.

    Work down from the highest cube that can still be turned: where a doubled cube would be dead,
    the cash point is the dead-cube one (the taker redoubles at once when that costs nothing);
    otherwise the taker's cash point one level up fixes how much the take is worth.
    """
    ratios = _ratios(probabilities)
    a = (score.my_away - 1, score.opp_away - 1)  # "normalised" aways, as in the tables
    top, levels = cube, 0
    while a[0] >= 2 * top and a[1] >= 2 * top:
        top, levels = 2 * top, levels + 1
    # Work in each player's own view: a mirrored score for the opponent.
    views = (score, MatchScore(score.opp_away, score.my_away, score.crawford, score.met))
    own = (ratios[0], ratios[1])
    cash = [[0.0] * (levels + 2) for _ in range(2)]
    value = top
    for n in range(levels, -1, -1):
        for k in (0, 1):
            view, mine, theirs = views[k], own[k], own[1 - k]
            dp = view.win(value)
            if a[0] < 2 * value or a[1] < 2 * value:
                ak, ao = a[k], a[1 - k]
                prime = 2 * value if (ak < 2 * value <= ao) else value  # automatic redouble
                dtw = _result_mwc(view, 0, 2 * prime, mine)
                dtl = _result_mwc(view, 1, 2 * prime, theirs)
                cash[k][n] = (dtl - dp) / (dtl - dtw) if dtl != dtw else 1.0
            else:
                redouble_pass = view.lose(2 * value)
                dtw = _result_mwc(view, 0, 2 * value, mine)
                taker_cash = cash[1 - k][n + 1]
                cash[k][n] = 1.0 - taker_cash * (dp - dtw) / (redouble_pass - dtw)
        value //= 2
    return cash[0][0], cash[1][0]


def match_live(probabilities, score: MatchScore, cube: int, owner: str) -> float:
    """MWC with a fully live cube (x = 1): piecewise linear in my winning chances through losing
    everything (0), the opponent cashing, my cashing, and winning everything (1)."""
    win = probabilities[0]
    mine, theirs = _ratios(probabilities)
    my_cash, their_cash = match_cash_points(probabilities, score, cube)
    lose_all = _result_mwc(score, 1, cube, theirs)
    win_all = _result_mwc(score, 0, cube, mine)
    cash_win, cash_lose = score.win(cube), score.lose(cube)
    their_tg = 1.0 - their_cash  # at or below this the opponent cashes (my winning chances)
    if owner != MINE and win <= their_tg:
        return _line(win, 0.0, lose_all, their_tg, cash_lose) if their_tg > 0.0 else lose_all
    if owner == THEIRS:
        return _line(win, their_tg, cash_lose, 1.0, win_all)
    if owner == MINE and win <= my_cash:
        return _line(win, 0.0, lose_all, my_cash, cash_win) if my_cash > 0.0 else lose_all
    if owner == CENTRED and win < my_cash:
        return _line(win, their_tg, cash_lose, my_cash, cash_win)
    return _line(win, my_cash, cash_win, 1.0, win_all) if my_cash < 1.0 else win_all


def match_cubeful(probabilities, score: MatchScore, cube: int, owner: str, x: float) -> float:
    """Janowski's cubeful MWC for the player on roll in match play."""
    _check_owner(owner)
    dead = score.to_mwc(match_cubeless(probabilities, score, cube), cube)
    if score.cube_dead(cube):
        return dead
    return _chance((1.0 - x) * dead + x * match_live(probabilities, score, cube, owner))
