"""Tesauro's pubeval: the public linear evaluator that is backgammon's classic yardstick.

Gerald Tesauro published pubeval (1993) as a benchmark opponent: a weighted sum of 122 inputs
of the position after a move, one weight vector for races and one for contact positions. Its
weights are public figures, given below as published; the move it plays is the legal move whose
afterstate scores highest. The weights (race or contact) are those of the position BEFORE the
move, as Tesauro prescribes, so a move that breaks contact is still judged by the contact
weights.

The inputs, from the mover's side (a point's count is the mover's checkers, or minus the
opponent's): for each of the mover's points 24 down to 1, five inputs (an opponent's blot; a
blot of the mover's; a point made; a third checker; half of each checker beyond three); then
half the opponent's checkers on the bar and the mover's borne-off checkers over 15. A move
that bears off the last checker scores above any other.

Everything is batched and compiled: one call to the move generator for all positions, one
compiled pass scoring every afterstate in single precision, summed in the published order (the
figures then agree with GNU Backgammon's ``gnubg_nn.pub_best_move`` move for move; a test checks
it where that package is installed), and a compiled argmax per position. Nothing here needs GNU
Backgammon.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.bots.base import Bot
from bgnet.bots.search import segment_argmax
from bgnet.bots.simple import as_batch
from bgnet.engine.board import race_mask
from bgnet.engine.movegen import generate_batch

RACE_WEIGHTS = np.array([
    0.00000, -0.17160, 0.27010, 0.29906, -0.08471, 0.00000, -1.40375, -1.05121, 0.07217, -0.01351,
    0.00000, -1.29506, -2.16183, 0.13246, -1.03508, 0.00000, -2.29847, -2.34631, 0.17253, 0.08302,
    0.00000, -1.27266, -2.87401, -0.07456, -0.34240, 0.00000, -1.34640, -2.46556, -0.13022,
    -0.01591, 0.00000, 0.27448, 0.60015, 0.48302, 0.25236, 0.00000, 0.39521, 0.68178, 0.05281,
    0.09266, 0.00000, 0.24855, -0.06844, -0.37646, 0.05685, 0.00000, 0.17405, 0.00430, 0.74427,
    0.00576, 0.00000, 0.12392, 0.31202, -0.91035, -0.16270, 0.00000, 0.01418, -0.10839, -0.02781,
    -0.88035, 0.00000, 1.07274, 2.00366, 1.16242, 0.22520, 0.00000, 0.85631, 1.06349, 1.49549,
    0.18966, 0.00000, 0.37183, -0.50352, -0.14818, 0.12039, 0.00000, 0.13681, 0.13978, 1.11245,
    -0.12707, 0.00000, -0.22082, 0.20178, -0.06285, -0.52728, 0.00000, -0.13597, -0.19412,
    -0.09308, -1.26062, 0.00000, 3.05454, 5.16874, 1.50680, 5.35000, 0.00000, 2.19605, 3.85390,
    0.88296, 2.30052, 0.00000, 0.92321, 1.08744, -0.11696, -0.78560, 0.00000, -0.09795, -0.83050,
    -1.09167, -4.94251, 0.00000, -1.00316, -3.66465, -2.56906, -9.67677, 0.00000, -2.77982,
    -7.26713, -3.40177, -12.32252, 0.00000, 3.42040,
], np.float32)
CONTACT_WEIGHTS = np.array([
    0.25696, -0.66937, -1.66135, -2.02487, -2.53398, -0.16092, -1.11725, -1.06654, -0.92830,
    -1.99558, -1.10388, -0.80802, 0.09856, -0.62086, -1.27999, -0.59220, -0.73667, 0.89032,
    -0.38933, -1.59847, -1.50197, -0.60966, 1.56166, -0.47389, -1.80390, -0.83425, -0.97741,
    -1.41371, 0.24500, 0.10970, -1.36476, -1.05572, 1.15420, 0.11069, -0.38319, -0.74816, -0.59244,
    0.81116, -0.39511, 0.11424, -0.73169, -0.56074, 1.09792, 0.15977, 0.13786, -1.18435, -0.43363,
    1.06169, -0.21329, 0.04798, -0.94373, -0.22982, 1.22737, -0.13099, -0.06295, -0.75882,
    -0.13658, 1.78389, 0.30416, 0.36797, -0.69851, 0.13003, 1.23070, 0.40868, -0.21081, -0.64073,
    0.31061, 1.59554, 0.65718, 0.25429, -0.80789, 0.08240, 1.78964, 0.54304, 0.41174, -1.06161,
    0.07851, 2.01451, 0.49786, 0.91936, -0.90750, 0.05941, 1.83120, 0.58722, 1.28777, -0.83711,
    -0.33248, 2.64983, 0.52698, 0.82132, -0.58897, -1.18223, 3.35809, 0.62017, 0.57353, -0.07276,
    -0.36214, 4.37655, 0.45481, 0.21746, 0.10504, -0.61977, 3.54001, 0.04612, -0.18108, 0.63211,
    -0.87046, 2.47673, -0.48016, -1.27157, 0.86505, -1.11342, 1.24612, -0.82385, -2.77082, 1.23606,
    -1.59529, 0.10438, -1.30206, -4.11520, 5.62596, -2.75800,
], np.float32)
WON = np.float32(99999999.0)  # the score of a move that bears off the last checker


@njit(cache=True)
def afterstate_scores(after, race, race_weights, contact_weights):
    """float32[M]: pubeval's score of each afterstate ``after[r]`` (written ``[opponent,
    mover]``), with the race weights where ``race[r]`` (the position before the move was a race)
    and the contact weights elsewhere."""
    out = np.empty(after.shape[0], np.float32)
    x = np.zeros(122, np.float32)
    for r in range(after.shape[0]):
        me = after[r, 1]
        opp = after[r, 0]
        on_board = 0
        for i in range(25):
            on_board += me[i]
        if on_board == 0:
            out[r] = WON
            continue
        x[:] = 0.0
        for k in range(24):
            point = 24 - k  # the mover's point, 24 first
            n = np.int32(me[point - 1]) - np.int32(opp[24 - point])
            if n == -1:
                x[5 * k] = 1.0
            elif n == 1:
                x[5 * k + 1] = 1.0
            elif n >= 2:
                x[5 * k + 2] = 1.0
                if n == 3:
                    x[5 * k + 3] = 1.0
                elif n >= 4:
                    x[5 * k + 4] = np.float32(n - 3) / np.float32(2.0)
        x[120] = np.float32(opp[24]) / np.float32(2.0)
        x[121] = np.float32(15 - on_board) / np.float32(15.0)
        w = race_weights if race[r] else contact_weights
        score = np.float32(0.0)
        for i in range(122):
            score += w[i] * x[i]
        out[r] = score
    return out


class PubevalBot(Bot):
    """Tesauro's pubeval (see the module docstring): it chooses moves and values nothing else."""

    name = "pubeval"

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, contexts=None,
                     ply: int | None = None):
        self.check_fixed_ply(ply)
        boards, dice = as_batch(boards, dice)
        after, steps, offsets = generate_batch(boards, dice)
        race = np.repeat(race_mask(boards), np.diff(offsets))
        scores = afterstate_scores(after, race, RACE_WEIGHTS, CONTACT_WEIGHTS)
        pick = segment_argmax(scores, offsets)
        return after[pick], steps[pick]
