"""Checker play by the match's own measure: each move valued by the cubeful equity it leaves.

A move leaves the opponent on roll, with the cube as it stands. Its value to the mover is found
from the mover's cubeless probabilities of that afterstate with the cube head's model
(:mod:`bgnet.cube.cubeful`):

* the probabilities are seen from the opponent's side, who is on roll before his roll;
* where the opponent has access to the cube he takes his proper cube action
  (:func:`bgnet.cube.decide_context`: no double, double/take, double/pass or too good), and the
  cubeful value of that action is what the position is worth to him;
* the mover gets the rest: minus it in money play (cubeful equity per unit of the current cube,
  the Jacoby rule where it applies), one minus it in a match (match winning chances at the
  score, cube value and owner), written as normalised equity at the current cube (EMG, as GNU
  Backgammon shows a move's equity in a match), so that values and move filters keep one scale.

Without a cube (cubeless money games, or the cubeless choice asked for) a move's value is the
cubeless money equity ``2 win - 1 + wg - lg + wbg - lbg``, as before.

:class:`MoveMeasure` computes this for a batch of afterstates in one compiled call, each
afterstate with the context of the position it was played from (grouped: each distinct score,
cube and owner is prepared once and cached). :func:`reference_value` computes the same number
the slow way, through :func:`bgnet.cube.decide_context`; the tests hold the two together, and GNU
Backgammon's own cubeful checker play against both.

>>> from bgnet.engine.state import MatchContext
>>> import numpy as np
>>> after = np.zeros((1, 2, 25), np.int8); after[0, 0, 5] = after[0, 1, 5] = 15  # a bear-off
>>> p = np.array([[0.72, 0.0, 0.0, 0.0, 0.0]])                                  # mover's view
>>> dmp = MatchContext(match_length=7, score=(6, 6))                            # DMP: 1-away, 1-away
>>> round(float(measure_for(dmp).values(p, after)[0]), 4)                      # 2 * 0.72 - 1
0.44
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numba import njit

from bgnet.cube.cubeful import CubeEfficiency, MatchScore
from bgnet.cube.met import MatchEquityTable, load_met
from bgnet.engine.board import race_of_sides
from bgnet.engine.state import CENTERED, MatchContext

CUBELESS, MONEY, MATCH = 0, 1, 2
_CENTRED, _MINE, _THEIRS = 0, 1, 2  # cube ownership seen by the opponent, on roll after the move
_ND, _DT, _DP, _TG = 0, 1, 2, 3
_EPS = 1e-7
# Columns of a group's parameters.
P_KIND, P_OWNER, P_MAY, P_JACOBY, P_OPP_AWAY, P_MY_AWAY, P_CRAWFORD, P_CUBE = range(8)
_NPARAMS = 8


# ----------------------------------------------------------------------------------------------
# the compiled arithmetic: a port of bgnet.cube.cubeful, checked against it by the tests
#
# Match tables: T[0] the opponent's MWC after he wins k points (k <= his away), T[1] after he
# loses k (k <= my away), T[2] my MWC after I win k, T[3] after I lose k. View 0 is the opponent
# (on roll), view 1 the mover. aw = (opponent's away, mover's away).


@njit(cache=True, inline="always")
def _line(p, x0, y0, x1, y1):
    if x1 != x0:
        return y0 + (y1 - y0) * (p - x0) / (x1 - x0)
    return y1


@njit(cache=True, inline="always")
def _chance(v):
    return min(1.0, max(0.0, v))


@njit(cache=True, inline="always")
def _vwin(T, a0, a1, k, pts):
    """View ``k``'s MWC after it wins ``pts`` points."""
    return T[2 * k, min(pts, a0 if k == 0 else a1)]


@njit(cache=True, inline="always")
def _vlose(T, a0, a1, k, pts):
    """View ``k``'s MWC after its opponent wins ``pts`` points."""
    return T[2 * k + 1, min(pts, a1 if k == 0 else a0)]


@njit(cache=True)
def _money_cubeful(win, wg, wbg, lg, lbg, owner, x, jacoby):
    single = 2.0 * win - 1.0
    dead = single if (jacoby and owner == _CENTRED) else single + wg - lg + wbg - lbg
    if win <= _EPS or win >= 1.0 - _EPS:
        return dead
    w = 1.0 + (wg + wbg) / win
    l = 1.0 + (lg + lbg) / (1.0 - win)
    take = (l - 0.5) / (w + l + 0.5)
    cash = (l + 1.0) / (w + l + 0.5)
    if owner == _CENTRED:
        if win < take:
            live = -1.0 if jacoby else _line(win, 0.0, -l, take, -1.0)
        elif win < cash:
            live = _line(win, take, -1.0, cash, 1.0)
        else:
            live = 1.0 if jacoby else _line(win, cash, 1.0, 1.0, w)
    elif owner == _MINE:
        live = _line(win, 0.0, -l, cash, 1.0) if win < cash else _line(win, cash, 1.0, 1.0, w)
    else:
        live = _line(win, 0.0, -l, take, -1.0) if win < take else _line(win, take, -1.0, 1.0, w)
    return (1.0 - x) * dead + x * live


@njit(cache=True)
def _result_mwc(T, a0, a1, k, winner, points, g, b):
    if winner == 0:
        return ((1.0 - g - b) * _vwin(T, a0, a1, k, points) + g * _vwin(T, a0, a1, k, 2 * points)
                + b * _vwin(T, a0, a1, k, 3 * points))
    return ((1.0 - g - b) * _vlose(T, a0, a1, k, points) + g * _vlose(T, a0, a1, k, 2 * points)
            + b * _vlose(T, a0, a1, k, 3 * points))


@njit(cache=True)
def _match_cubeless_mwc(win, wg, wbg, lg, lbg, T, a0, a1, cube):
    """View 0's dead-cube MWC: normalised cubeless equity with the table's gammon prices, to MWC."""
    hi = _vwin(T, a0, a1, 0, cube)
    lo = _vlose(T, a0, a1, 0, cube)
    half = 0.5 * (hi - lo)
    gw = gl = bw = bl = 0.0
    if half > _EPS:
        centre = 0.5 * (hi + lo)
        gw = (_vwin(T, a0, a1, 0, 2 * cube) - centre) / half - 1.0
        gl = (centre - _vlose(T, a0, a1, 0, 2 * cube)) / half - 1.0
        bw = (_vwin(T, a0, a1, 0, 3 * cube) - centre) / half - (gw + 1.0)
        bl = (centre - _vlose(T, a0, a1, 0, 3 * cube)) / half - (gl + 1.0)
        gw, gl, bw, bl = max(gw, 0.0), max(gl, 0.0), max(bw, 0.0), max(bl, 0.0)
    eq = 2.0 * win - 1.0 + wg * gw - lg * gl + wbg * bw - lbg * bl
    return _chance(0.5 * (eq * (hi - lo) + hi + lo))


@njit(cache=True)
def _cash_points(g0, b0, g1, b1, T, a0, a1, cube):
    """Live-cube cash points (view 0's, view 1's), each in that view's own winning chances;
    ``g0``, ``b0`` are the gammon-only and backgammon shares of view 0's wins, ``g1``, ``b1``
    of view 1's. Worked down from the highest cube either side can still use, each level's from
    the level above (kept in scalars: no arrays on the hot path)."""
    n0, n1 = a0 - 1, a1 - 1
    top, levels = cube, 0
    while n0 >= 2 * top and n1 >= 2 * top:
        top, levels = 2 * top, levels + 1
    above0 = above1 = 0.0  # the cash points of the level above (read only below the top)
    value = top
    for _level in range(levels, -1, -1):
        here0 = here1 = 0.0
        for k in range(2):
            gm, bm, gt, bt = (g0, b0, g1, b1) if k == 0 else (g1, b1, g0, b0)
            dp = _vwin(T, a0, a1, k, value)
            if n0 < 2 * value or n1 < 2 * value:
                ak = n0 if k == 0 else n1
                ao = n1 if k == 0 else n0
                prime = 2 * value if (ak < 2 * value and 2 * value <= ao) else value
                dtw = _result_mwc(T, a0, a1, k, 0, 2 * prime, gm, bm)
                dtl = _result_mwc(T, a0, a1, k, 1, 2 * prime, gt, bt)
                cash = (dtl - dp) / (dtl - dtw) if dtl != dtw else 1.0
            else:
                redouble_pass = _vlose(T, a0, a1, k, 2 * value)
                dtw = _result_mwc(T, a0, a1, k, 0, 2 * value, gm, bm)
                cash = 1.0 - (above1 if k == 0 else above0) * (dp - dtw) / (redouble_pass - dtw)
            if k == 0:
                here0 = cash
            else:
                here1 = cash
        above0, above1 = here0, here1
        value //= 2
    return above0, above1


@njit(cache=True)
def _match_cubeful(win, wg, wbg, lg, lbg, T, a0, a1, crawford, cube, owner, x):
    """View 0's cubeful MWC (Janowski), as :func:`bgnet.cube.cubeful.match_cubeful`."""
    dead = _match_cubeless_mwc(win, wg, wbg, lg, lbg, T, a0, a1, cube)
    if (a0 <= cube and a1 <= cube) or crawford or (a0 == 2 and a1 == 2):
        return dead
    g0 = b0 = g1 = b1 = 0.0  # gammon-only and backgammon shares of my wins, of my losses
    if win > 0.0:
        g0, b0 = (wg - wbg) / win, wbg / win
    if win < 1.0:
        g1, b1 = (lg - lbg) / (1.0 - win), lbg / (1.0 - win)
    my_cash, their_cash = _cash_points(g0, b0, g1, b1, T, a0, a1, cube)
    lose_all = _result_mwc(T, a0, a1, 0, 1, cube, g1, b1)
    win_all = _result_mwc(T, a0, a1, 0, 0, cube, g0, b0)
    cash_win = _vwin(T, a0, a1, 0, cube)
    cash_lose = _vlose(T, a0, a1, 0, cube)
    their_tg = 1.0 - their_cash
    if owner != _MINE and win <= their_tg:
        live = _line(win, 0.0, lose_all, their_tg, cash_lose) if their_tg > 0.0 else lose_all
    elif owner == _THEIRS:
        live = _line(win, their_tg, cash_lose, 1.0, win_all)
    elif owner == _MINE and win <= my_cash:
        live = _line(win, 0.0, lose_all, my_cash, cash_win) if my_cash > 0.0 else lose_all
    elif owner == _CENTRED and win < my_cash:
        live = _line(win, their_tg, cash_lose, my_cash, cash_win)
    else:
        live = _line(win, my_cash, cash_win, 1.0, win_all) if my_cash < 1.0 else win_all
    return _chance((1.0 - x) * dead + x * live)


@njit(cache=True, inline="always")
def _action(nd, dt, dp, gammons):
    """:func:`bgnet.cube.decision.cube_action`, as a code."""
    if dt >= nd and dp >= nd:
        return _DT if dp > dt else _DP
    if nd > dt and dt <= dp and dp >= nd:
        return _ND
    if not gammons:
        return _DP if dt > dp else _ND
    return _TG


@njit(cache=True, inline="always")
def _pick(action, nd, dt, dp):
    if action == _DT:
        return dt
    if action == _DP:
        return dp
    return nd


@njit(cache=True)
def _efficiency(after, eff):
    """Cube efficiency of the position an afterstate leaves, the opponent (``after[0]``) on roll:
    :meth:`bgnet.cube.cubeful.CubeEfficiency.for_board`, or the fixed ``eff[0]`` when it is not
    negative."""
    if eff[0] >= 0.0:
        return eff[0]
    n_opp = n_me = 0
    home = True
    pips = 0
    for i in range(25):
        n_opp += after[0, i]
        n_me += after[1, i]
        pips += (i + 1) * after[0, i]
        if i >= 6 and (after[0, i] > 0 or after[1, i] > 0):
            home = False
    if n_opp == 0 or n_me == 0:
        return 0.0
    if not race_of_sides(after[0], after[1]):
        return eff[1]
    if home:
        return eff[6]
    x = eff[2] + eff[3] * pips
    return round(min(max(x, eff[4]), eff[5]), 10)


@njit(cache=True)
def row_value(p, after, prm, T, eff):
    """The mover's value of one afterstate from his probabilities ``p`` (see the module
    docstring), with the group's parameters ``prm`` and match tables ``T``."""
    # The probabilities clamped to be consistent, as the cube head expects them.
    w = min(max(float(p[0]), 0.0), 1.0)
    wg = min(max(float(p[1]), 0.0), w)
    wbg = min(max(float(p[2]), 0.0), wg)
    lg = min(max(float(p[3]), 0.0), 1.0 - w)
    lbg = min(max(float(p[4]), 0.0), lg)
    kind = prm[P_KIND]
    if kind == CUBELESS:
        return 2.0 * w - 1.0 + wg - lg + wbg - lbg
    # The opponent's view: he wins what I lose.
    ow, owg, owbg, olg, olbg = 1.0 - w, lg, lbg, wg, wbg
    x = _efficiency(after, eff)
    owner, may = prm[P_OWNER], prm[P_MAY] != 0
    gammons = owg > 0.0
    if kind == MONEY:
        nd = _money_cubeful(ow, owg, owbg, olg, olbg, owner, x, prm[P_JACOBY] != 0)
        v = nd
        if may:
            dt = 2.0 * _money_cubeful(ow, owg, owbg, olg, olbg, _THEIRS, x, False)
            v = _pick(_action(nd, dt, 1.0, gammons), nd, dt, 1.0)
        return -v
    a0, a1, crawford, cube = prm[P_OPP_AWAY], prm[P_MY_AWAY], prm[P_CRAWFORD] != 0, prm[P_CUBE]
    nd = _match_cubeful(ow, owg, owbg, olg, olbg, T, a0, a1, crawford, cube, owner, x)
    v = nd
    if may:
        dt = _match_cubeful(ow, owg, owbg, olg, olbg, T, a0, a1, crawford, 2 * cube, _THEIRS, x)
        dp = _vwin(T, a0, a1, 0, cube)
        v = _pick(_action(nd, dt, dp, gammons), nd, dt, dp)
    mwc = 1.0 - v  # mine
    hi = _vwin(T, a0, a1, 1, cube)
    lo = _vlose(T, a0, a1, 1, cube)
    return (2.0 * mwc - hi - lo) / (hi - lo) if hi > lo else 0.0


@njit(cache=True)
def _values(probs, after, group, params, tables, eff, out):
    for r in range(probs.shape[0]):
        g = group[r]
        out[r] = row_value(probs[r], after[r], params[g], tables[g], eff)
    return out


@njit(cache=True)
def _values_one(probs, after, prm, T, eff, out):
    for r in range(probs.shape[0]):
        out[r] = row_value(probs[r], after[r], prm, T, eff)
    return out


# ----------------------------------------------------------------------------------------------
# preparing a context


def _efficiency_row(efficiency) -> np.ndarray:
    """float64[7]: a fixed efficiency (first entry, not negative), or -1 and the fields of a
    :class:`CubeEfficiency` (None: GNU Backgammon's)."""
    if efficiency is None:
        efficiency = CubeEfficiency()
    if isinstance(efficiency, CubeEfficiency):
        e = efficiency
        return np.array([-1.0, e.contact, e.race_coefficient, e.race_factor, e.race_min,
                         e.race_max, e.bearoff], np.float64)
    x = float(efficiency)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"cube efficiency must lie in [0, 1]; got {efficiency}")
    return np.array([x, x, x, 0.0, x, x, x], np.float64)


def context_key(ctx: MatchContext | None, cubeless_play: bool = False) -> tuple:
    """The parameters of the measure for moves played in ``ctx`` (the mover on roll): a tuple of
    :data:`_NPARAMS` ints. None, or ``cubeless_play``, gives the cubeless measure."""
    if ctx is None or cubeless_play:
        return (CUBELESS,) + (0,) * (_NPARAMS - 1)
    return _key(ctx.cube_value, ctx.cube_owner, ctx.player_on_roll, ctx.crawford,
                ctx.match_length, tuple(ctx.score), ctx.jacoby)


@lru_cache(maxsize=8192)
def _key(cube_value: int, cube_owner: int, player_on_roll: int, crawford: bool,
         match_length: int, score: tuple, jacoby: bool) -> tuple:
    ctx = MatchContext(cube_value=cube_value, cube_owner=cube_owner,
                       player_on_roll=player_on_roll, turn=player_on_roll, crawford=crawford,
                       match_length=match_length, score=score, jacoby=jacoby)
    me = ctx.player_on_roll
    if me not in (0, 1):
        raise ValueError(f"player on roll must be 0 or 1; got {me}")
    opp = 1 - me
    if ctx.cube_value < 1 or ctx.cube_value & (ctx.cube_value - 1):
        raise ValueError(f"the cube value must be a power of two; got {ctx.cube_value}")
    owner = (_CENTRED if ctx.cube_owner == CENTERED else _MINE if ctx.cube_owner == opp
             else _THEIRS)
    octx = ctx.replace(player_on_roll=opp, turn=opp, dice=(0, 0), double_offered=False)
    may = int(octx.may_double(opp))
    if ctx.is_money:
        return (MONEY, owner, may, int(ctx.jacoby), 0, 0, 0, ctx.cube_value)
    if min(ctx.away(0), ctx.away(1)) < 1:
        raise ValueError(f"the match is over at score {ctx.score} of a {ctx.match_length}-point "
                         "match")
    return (MATCH, owner, may, 0, ctx.away(opp), ctx.away(me), int(ctx.crawford), ctx.cube_value)


@lru_cache(maxsize=4096)
def _tables(met: MatchEquityTable, opp_away: int, my_away: int, crawford: bool) -> np.ndarray:
    """float64[4, width] (see the compiled part's comment); zeros in money play."""
    if opp_away < 1:
        return np.zeros((4, 1))
    theirs = MatchScore(opp_away, my_away, crawford, met)
    mine = MatchScore(my_away, opp_away, crawford, met)
    rows = (theirs.results[0], theirs.results[1], mine.results[0], mine.results[1])
    out = np.zeros((4, max(opp_away, my_away) + 1))
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


class MoveMeasure:
    """Values of afterstates for their movers, each position with its own context (see the
    module docstring). ``contexts``: one :class:`~bgnet.engine.state.MatchContext` (the mover on
    roll) or None per position, or one for all; ``cubeless_play`` values every move cubelessly;
    ``met`` and ``efficiency`` as :func:`bgnet.cube.decide_context` takes them."""

    def __init__(self, contexts, met: MatchEquityTable | str | None = None, efficiency=None,
                 cubeless_play: bool = False):
        self.met = load_met(met)
        self.eff = _efficiency_row(efficiency)
        many = isinstance(contexts, Sequence) and not isinstance(contexts, MatchContext)
        keys = ([context_key(c, cubeless_play) for c in contexts] if many
                else [context_key(contexts, cubeless_play)])
        index: dict[tuple, int] = {}
        self.position_group = np.array([index.setdefault(k, len(index)) for k in keys], np.int64)
        self.params = np.array(list(index), np.int64).reshape(-1, _NPARAMS)
        tabs = [_tables(self.met, int(k[P_OPP_AWAY]), int(k[P_MY_AWAY]), bool(k[P_CRAWFORD]))
                for k in index]
        width = max(t.shape[1] for t in tabs)
        self.tables = np.zeros((len(tabs), 4, width))
        for g, t in enumerate(tabs):
            self.tables[g, :, :t.shape[1]] = t
        self.single = not many
        self._cubeless = bool((self.params[:, P_KIND] == CUBELESS).all())
        self._kernel = ((np.ascontiguousarray(self.params[0]), np.ascontiguousarray(self.tables[0]),
                         self.eff) if len(self.params) == 1 else None)

    @property
    def cubeless(self) -> bool:
        """Whether every position is valued by cubeless money equity."""
        return self._cubeless

    def values(self, probs, after, parent_of=None) -> np.ndarray:
        """float64[N]: the mover's value of each afterstate ``after[k]`` (``[opponent, mover]``)
        from his probabilities ``probs[k]``; ``parent_of[k]`` is the position it was played from
        (not needed with a single context)."""
        probs = np.ascontiguousarray(probs)
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)
        out = np.empty(len(probs), np.float64)
        if len(self.params) == 1:
            return _values_one(probs, after, self.params[0], self.tables[0], self.eff, out)
        if parent_of is None:
            raise ValueError("afterstates of positions with different contexts need parent_of")
        group = self.position_group[np.asarray(parent_of, np.int64)]
        return _values(probs, after, group, self.params, self.tables, self.eff, out)

    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(parameters, tables, efficiency) of a measure with one context, as compiled code that
        values moves itself takes them (:func:`row_value`; the 0-ply choice of
        :mod:`bgnet.bots.zero_ply`)."""
        if self._kernel is None:
            raise ValueError("a measure of positions with different contexts has no single "
                             "set of parameters")
        return self._kernel

    def to_mwc(self, value: float, position: int = 0) -> float | None:
        """The mover's match winning chances of a value of :meth:`values` (None in money play)."""
        k = self.params[self.position_group[position]]
        if k[P_KIND] != MATCH:
            return None
        t = self.tables[self.position_group[position]]
        cube, a0, a1 = int(k[P_CUBE]), int(k[P_OPP_AWAY]), int(k[P_MY_AWAY])
        hi, lo = t[2, min(cube, a1)], t[3, min(cube, a0)]
        return float(min(1.0, max(0.0, 0.5 * (value * (hi - lo) + hi + lo))))


@lru_cache(maxsize=1024)
def _measure_cached(ctx: MatchContext | None, met, efficiency, cubeless_play: bool) -> MoveMeasure:
    return MoveMeasure(ctx, met, efficiency, cubeless_play)


def measure_for(ctx: MatchContext | None, met: MatchEquityTable | str | None = None,
                efficiency=None, cubeless_play: bool = False) -> MoveMeasure:
    """The measure for the moves of one position played in ``ctx`` (cached: contexts, tables and
    efficiencies are immutable)."""
    try:
        return _measure_cached(ctx, met, efficiency, cubeless_play)
    except TypeError:  # something unhashable (an efficiency given as a list, say)
        return MoveMeasure(ctx, met, efficiency, cubeless_play)


def describe(ctx: MatchContext | None, cubeless_play: bool = False) -> str:
    """What moves are ranked by in ``ctx``, in words, for hints and reports.

    >>> describe(MatchContext(match_length=7, score=(3, 5)))
    'cubeful equity at the score (EMG; MWC beside it)'
    >>> describe(MatchContext()), describe(None)
    ('cubeful money equity', 'cubeless money equity')
    """
    kind = context_key(ctx, cubeless_play)[P_KIND]
    if kind == MATCH:
        return "cubeful equity at the score (EMG; MWC beside it)"
    return "cubeful money equity" if kind == MONEY else "cubeless money equity"


def reference_value(probs, ctx: MatchContext, after, met=None, efficiency=None) -> float:
    """The mover's value of one afterstate, computed the slow way through
    :func:`bgnet.cube.decide_context` (what :class:`MoveMeasure` computes in one compiled call)."""
    from bgnet.cube.decision import decide_context

    me, opp = ctx.player_on_roll, 1 - ctx.player_on_roll
    octx = ctx.replace(player_on_roll=opp, turn=opp, dice=(0, 0), double_offered=False)
    w, wg, wbg, lg, lbg = (float(v) for v in probs)
    q = (1.0 - w, lg, lbg, wg, wbg)  # the opponent's view
    d = decide_context(q, octx, np.asarray(after)[::-1], met=met, efficiency=efficiency)
    if ctx.is_money:
        return -d.equity
    mine = MatchScore(ctx.away(me), ctx.away(opp), ctx.crawford, load_met(met))
    assert d.mwc is not None, "a match decision has its match winning chances"
    return mine.to_equity(1.0 - d.mwc, ctx.cube_value)
