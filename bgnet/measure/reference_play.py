"""Choosers that let GNU Backgammon's engines pick moves in :func:`bgnet.engine.sampling.sample_positions`.

They need the optional reference packages (``pip install 'bgnet[ref]'``) and exist to draw
realistic positions for verification and benchmarks: gnubg 0-ply and pubeval play the way strong
and weak players do, so their games visit closed boards, bear-offs against anchors, and so on.
"""
from __future__ import annotations

import numpy as np

from bgnet.engine.sampling import apply_steps


def _gnubg():
    try:
        import gnubg_nn
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("GNU Backgammon's Python packages are needed: pip install 'bgnet[ref]'") from e
    return gnubg_nn


def _index_of(after: np.ndarray, target: np.ndarray) -> int:
    hits = np.flatnonzero((after == target).all(axis=(1, 2)))
    if len(hits) != 1:
        raise RuntimeError("the reference program's move is not among bgnet's legal moves")
    return int(hits[0])


def gnubg_chooser(board, d1, d2, after, steps, rng) -> int:
    """GNU Backgammon 0-ply's choice."""
    pairs = _gnubg().best_move(board.tolist(), d1, d2, 0)
    return _index_of(after, apply_steps(board, pairs))


def pubeval_chooser(board, d1, d2, after, steps, rng) -> int:
    """Tesauro's pubeval (through gnubg_nn): flat 0-based from/to list, 24 = bar, -1 = off."""
    flat = _gnubg().pub_best_move(board.tolist(), d1, d2)
    pairs = [(flat[i] + 1, flat[i + 1] + 1) for i in range(0, len(flat), 2)]
    return _index_of(after, apply_steps(board, pairs))


def mixed_chooser(p_random: float = 0.1):
    """gnubg 0-ply most of the time, a random legal move otherwise: strong-looking games that still
    reach odd positions (checkers trapped on the bar, bear-offs with contact)."""
    def choose(board, d1, d2, after, steps, rng) -> int:
        if rng.random() < p_random:
            return int(rng.integers(len(after)))
        return gnubg_chooser(board, d1, d2, after, steps, rng)
    return choose


def gnubg_afterstate_keys(board: np.ndarray, d1: int, d2: int) -> set[str]:
    """The position keys of every legal afterstate according to ``gnubg_nn.moves``."""
    return {key for key, _ in _gnubg().moves(board.tolist(), d1, d2, 1)}


def compare_moves(boards: np.ndarray, dice: np.ndarray) -> list[int]:
    """Indices of positions where bgnet's legal afterstates differ from gnubg's (as sets)."""
    from bgnet.engine.movegen import generate_batch

    g = _gnubg()
    after, steps, offsets = generate_batch(boards, dice)
    bad = []
    for i in range(len(boards)):
        rows = after[offsets[i]:offsets[i + 1]]
        passes = len(rows) == 1 and steps[offsets[i], 0, 0] == -1
        mine = set() if passes else {g.key_of_board(r.tolist()) for r in rows}
        if mine != gnubg_afterstate_keys(boards[i], int(dice[i, 0]), int(dice[i, 1])):
            bad.append(i)
    return bad


def describe_cases(boards: np.ndarray, dice: np.ndarray) -> dict[str, int]:
    """How many positions fall in each hard case of the rules (for coverage reports)."""
    from bgnet.engine.movegen import generate_batch

    after, steps, offsets = generate_batch(boards, dice)
    counts = dict.fromkeys(["positions", "doubles", "on_bar", "closed_out", "bear_off",
                            "bear_off_with_contact", "no_move", "one_die_only",
                            "partial_doubles", "hits_possible"], 0)
    for i, b in enumerate(boards):
        me, opp = b[1], b[0]
        d1, d2 = int(dice[i, 0]), int(dice[i, 1])
        first = steps[offsets[i]]
        used = int((first[:, 0] >= 0).sum())
        counts["positions"] += 1
        counts["doubles"] += d1 == d2
        counts["on_bar"] += me[24] > 0
        counts["closed_out"] += me[24] > 0 and bool((opp[:6] >= 2).all())
        home = me[6:].sum() == 0
        counts["bear_off"] += bool(home)
        counts["bear_off_with_contact"] += bool(home and opp[18:].sum() > 0)
        counts["no_move"] += used == 0
        counts["one_die_only"] += d1 != d2 and used == 1
        counts["partial_doubles"] += d1 == d2 and 0 < used < 4
        rows = after[offsets[i]:offsets[i + 1]]
        counts["hits_possible"] += bool((rows[:, 0, 24] > opp[24]).any())
    return counts
