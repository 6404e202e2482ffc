"""Cube decisions one roll ahead, cubeful at every roll: GNU Backgammon's way of searching the cube.

A decision at 0 ply turns the player's cubeless probabilities into cubeful equities with
Janowski's model (:mod:`bgnet.cube.cubeful`). One roll ahead there are two ways to go on:

* average the probabilities over the 21 rolls first and apply the model once (the cheap way);
* apply the model after each roll, to the position the opponent then has on roll, with his own
  cube action there (he doubles where doubling is right for him), and average those cubeful
  equities: what GNU Backgammon's cubeful search does at 1 ply.

The second keeps what the first averages away: the model is not linear in the probabilities
(it bends at take and cash points), so the rolls after which the player would have lost his
market, or after which the opponent doubles him out (his equity then capped at losing the cube),
count as they fall rather than through their average. This module does the second, from the mover's
probabilities after his best move for each roll (the search supplies them). For each roll the
opponent on roll is valued in the two cube states that matter, the cube as it is (no double) and
the cube doubled and his (double/take); his value is that of his proper cube action there
(:attr:`bgnet.cube.CubeDecision.equity`). The player's decision compares their averages with
double/pass, as at 0 ply (:func:`bgnet.cube.cube_action`).
"""
from __future__ import annotations

import numpy as np

from bgnet.cube.cubeful import (
    THEIRS,
    CubeEfficiency,
    MatchScore,
    match_cubeful,
    money_cubeful,
    resolve_efficiency,
)
from bgnet.cube.decision import CubeDecision, cube_action, relative_owner
from bgnet.cube.met import load_met
from bgnet.engine.state import MatchContext


def _flip(p) -> tuple[float, float, float, float, float]:
    """The opponent's probabilities from the mover's (gnubg order)."""
    win, wg, wbg, lg, lbg = (float(v) for v in p)
    return 1.0 - win, lg, lbg, wg, wbg


def _leaf_efficiencies(after: np.ndarray, efficiency) -> np.ndarray:
    """Janowski's x for each afterstate's position, the opponent on roll there."""
    leaves = np.ascontiguousarray(np.asarray(after)[:, ::-1])  # [mover, opponent]
    if efficiency is None:
        efficiency = CubeEfficiency()
    if isinstance(efficiency, CubeEfficiency):
        return efficiency.for_boards(leaves)
    return np.full(len(leaves), resolve_efficiency(efficiency))


def _leaf_value(p_mover, x: float, ctx: MatchContext, met) -> float:
    """The mover's value after his move (his probabilities ``p_mover``, efficiency ``x`` there),
    the opponent on roll in ``ctx`` with his proper cube action: MWC in a match, points per
    unit of ``ctx``'s cube in money play. The equities are :func:`bgnet.cube.decide_context`'s,
    without the take point it also finds (the search needs 42 of these a decision)."""
    q = _flip(p_mover)
    owner = relative_owner(ctx)
    if ctx.is_money:
        nd = money_cubeful(q, owner, x, ctx.jacoby)
        if not ctx.may_double(ctx.player_on_roll):
            return -nd
        dt, dp = 2.0 * money_cubeful(q, THEIRS, x), 1.0
        return -_value(cube_action(nd, dt, dp, q[1] > 0.0), nd, dt, dp)
    them = ctx.player_on_roll
    score = MatchScore(ctx.away(them), ctx.away(1 - them), ctx.crawford, met)
    nd = match_cubeful(q, score, ctx.cube_value, owner, x)
    if not ctx.may_double(them):
        return 1.0 - nd
    dt = match_cubeful(q, score, 2 * ctx.cube_value, THEIRS, x)
    dp = score.win(ctx.cube_value)
    return 1.0 - _value(cube_action(nd, dt, dp, q[1] > 0.0), nd, dt, dp)


def _value(action: str, nd: float, dt: float, dp: float) -> float:
    """What the player on roll gets by ``action`` (:attr:`bgnet.cube.CubeDecision.equity`)."""
    return {"double_take": dt, "double_pass": dp}.get(action, nd)


def decide_after_rolls(p_rolls: np.ndarray, weights: np.ndarray, after: np.ndarray,
                       ctx: MatchContext, base: CubeDecision, *, met=None,
                       efficiency=None) -> CubeDecision:
    """The cube decision for the player on roll in ``ctx``, one roll ahead and cubeful.

    ``p_rolls`` float[R, 5]: the player's probabilities after his best move for each roll
    (``weights`` their chances, summing to 1), ``after`` int8[R, 2, 25] those afterstates.
    ``base`` is his decision from probabilities averaged over the rolls: its take point and
    cubeless equity are kept, the equities and the action are this search's.
    """
    if not base.cube_available:
        return base
    me, them = ctx.player_on_roll, 1 - ctx.player_on_roll
    table = None if ctx.is_money else load_met(met)
    no_double = ctx.replace(player_on_roll=them)
    doubled = ctx.replace(player_on_roll=them, cube_value=2 * ctx.cube_value, cube_owner=them)
    nd = dt = 0.0
    for p, w, x in zip(p_rolls, weights, _leaf_efficiencies(after, efficiency)):
        nd += float(w) * _leaf_value(p, float(x), no_double, table)
        dt += float(w) * _leaf_value(p, float(x), doubled, table)
    gammons = float(np.max(p_rolls[:, 1])) > 0.0  # as at 0 ply: can the player win a gammon
    if ctx.is_money:
        nd_eq, dt_eq, dp_eq = nd, 2.0 * dt, 1.0
        action = cube_action(nd_eq, dt_eq, dp_eq, gammons)
        return _decision(base, action, nd_eq, dt_eq, dp_eq)
    assert table is not None
    score = MatchScore(ctx.away(me), ctx.away(them), ctx.crawford, table)
    cube = ctx.cube_value
    dp = score.win(cube)
    action = cube_action(nd, dt, dp, gammons)
    eq = lambda m: score.to_equity(m, cube)  # noqa: E731
    return _decision(base, action, eq(nd), eq(dt), eq(dp), nd, dt, dp)


def _decision(base: CubeDecision, action: str, nd: float, dt: float, dp: float,
              mwc_nd=None, mwc_dt=None, mwc_dp=None) -> CubeDecision:
    return CubeDecision(action, action.startswith("double"), dt < dp, nd, dt, dp, base.take_point,
                        base.cubeless_equity, base.efficiency, True, mwc_nd, mwc_dt, mwc_dp)

