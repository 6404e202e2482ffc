"""A move built one checker at a time, as a person clicks it: checker on ``a``, then ``b``.

The steps clicked so far are a *partial move*. A new hop ``a -> b`` is accepted when some
order of the unused dice carries one checker from ``a`` to ``b`` by legal single steps and the
result can still be completed to one of the legal moves (so the maximum-dice and higher-die
rules hold). A partial move is complete when it is one of the legal moves. Refusals raise
:class:`~bgnet.engine.notation.IllegalMoveError` in the words the terminal uses.

Points are numbered from the mover's side: 25 is the bar, 0 is off. Boards are
``[opponent, mover]`` as everywhere in bgnet.
"""
from __future__ import annotations

import itertools

import numpy as np

from bgnet.engine.notation import IllegalMoveError, move_checker, replay_hop, step_reason

BAR, OFF = 25, 0


def dice_of(d1: int, d2: int) -> list[int]:
    """The dice to play: four of a double, else the two."""
    return [d1] * 4 if d1 == d2 else sorted((d1, d2), reverse=True)


def _target(pos: int, die: int) -> int:
    return max(pos - die, OFF)


def _step_ok(me, opp, pos: int, die: int) -> bool:
    return me[pos - 1] > 0 and step_reason(me, opp, pos, _target(pos, die), die) is None


def replay(board: np.ndarray, steps) -> tuple[np.ndarray, np.ndarray]:
    """(mover, opponent) int64 sides after the single-die ``steps`` [(from, to, die), ...]."""
    me, opp = board[1].astype(np.int64).copy(), board[0].astype(np.int64).copy()
    for a, b, _ in steps:
        move_checker(me, opp, a, b)
    return me, opp


def _key(me, opp) -> bytes:
    return np.stack([opp, me]).astype(np.int8).tobytes()


def legal_keys(after_all: np.ndarray) -> set[bytes]:
    return {np.ascontiguousarray(a, np.int8).tobytes() for a in after_all}


def completable(me, opp, dice: list[int], goals: set[bytes], _seen=None) -> bool:
    """Whether some sequence of single steps with ``dice`` (any order, any number of them)
    reaches one of the legal afterstates ``goals``."""
    seen = set() if _seen is None else _seen
    key = _key(me, opp)
    if key in goals:
        return True
    state = (key, tuple(sorted(dice)))
    if state in seen or not dice:
        return False
    seen.add(state)
    for die in dict.fromkeys(dice):
        rest = list(dice)
        rest.remove(die)
        for pos in range(25, 0, -1):
            if _step_ok(me, opp, pos, die):
                m2, o2 = me.copy(), opp.copy()
                move_checker(m2, o2, pos, _target(pos, die))
                if completable(m2, o2, rest, goals, seen):
                    return True
    return False


def unused(dice: list[int], steps) -> list[int]:
    rest = list(dice)
    for *_, die in steps:
        rest.remove(die)
    return rest


def add_hop(board: np.ndarray, d1: int, d2: int, steps: list, a: int, b: int,
            after_all: np.ndarray) -> list:
    """``steps`` + the single-die steps of the hop ``a -> b``; IllegalMoveError when no order of
    the unused dice makes it, or when it leaves a move that cannot be finished legally."""
    if not (0 <= b < a <= 25):
        raise IllegalMoveError(f"checkers move from higher points to lower ones; "
                               f"{_name(a)} to {_name(b)} goes the wrong way")
    goals = legal_keys(after_all)
    me, opp = replay(board, steps)
    rest = unused(dice_of(d1, d2), steps)
    if not rest:
        raise IllegalMoveError("all the dice are played: confirm the move or undo it")
    blocked_by_rule = None
    for n in range(1, len(rest) + 1):
        for combo in dict.fromkeys(itertools.permutations(rest, n)):
            path = _path(me, opp, a, b, combo)
            if path is None:
                continue
            m2, o2 = replay_on(me, opp, path)
            left = list(rest)
            for _, _, die in path:
                left.remove(die)
            if completable(m2, o2, left, goals):
                return list(steps) + path
            blocked_by_rule = True
    if blocked_by_rule:
        _rule_refusal(d1, d2)
    raise IllegalMoveError(_why_not(me, opp, a, b, rest, int(board[1, a - 1]), d1, d2))


def replay_on(me, opp, path):
    m2, o2 = me.copy(), opp.copy()
    for x, y, _ in path:
        move_checker(m2, o2, x, y)
    return m2, o2


def _path(me, opp, a: int, b: int, combo) -> list | None:
    """The single steps of one checker from ``a`` to ``b`` with the dice ``combo`` in order."""
    m, o = me.copy(), opp.copy()
    pos, path = a, []
    for k, die in enumerate(combo):
        nxt = _target(pos, die)
        if nxt == OFF and k < len(combo) - 1:
            return None  # off before its dice are used
        if m[pos - 1] <= 0 or step_reason(m, o, pos, nxt, die) is not None:
            return None
        move_checker(m, o, pos, nxt)
        path.append((pos, nxt, die))
        pos = nxt
    return path if pos == b else None


def _rule_refusal(d1: int, d2: int):
    roll = f"{max(d1, d2)}-{min(d1, d2)}"
    if d1 != d2:
        raise IllegalMoveError(f"after that the rest of {roll} cannot be played, but a move "
                               f"that plays more of it is possible (both dice, or the higher die)")
    raise IllegalMoveError(f"after that the rest of {roll} cannot be played, but a move that "
                           "plays more of it is possible")


def _why_not(me, opp, a, b, rest, had, d1, d2) -> str:
    """Why no order of the unused dice carries a checker from a to b."""
    roll = f"{max(d1, d2)}-{min(d1, d2)}"
    need = a - b
    combos = [c for n in range(1, len(rest) + 1)
              for c in dict.fromkeys(itertools.combinations(sorted(rest, reverse=True), n))
              if (sum(c) == need if b != OFF else sum(c) >= need)]
    if not combos:
        if b == OFF:
            return f"the dice {roll} cannot bear off a checker from point {a}"
        return f"the dice {roll} cannot move a checker {need} pips"
    reasons = []
    for combo in combos:
        reason = replay_hop(me.copy(), opp.copy(), a, b, combo, had)
        if reason and reason not in reasons:
            reasons.append(reason)
    return reasons[0] if reasons else f"that is not a legal move with {roll}"


def _name(p: int) -> str:
    return "the bar" if p == BAR else "off" if p == OFF else f"point {p}"


def is_complete(board: np.ndarray, steps, after_all: np.ndarray) -> np.ndarray | None:
    """The legal afterstate the partial move has reached, or None."""
    me, opp = replay(board, steps)
    key = _key(me, opp)
    for a in after_all:
        if np.ascontiguousarray(a, np.int8).tobytes() == key:
            return a
    return None


def display_board(board: np.ndarray, steps) -> np.ndarray:
    """The board ``[opponent, mover]`` with the partial move applied."""
    me, opp = replay(board, steps)
    return np.stack([opp, me]).astype(np.int8)
