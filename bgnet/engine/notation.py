"""Move notation: write a move the way GNU Backgammon does, and read the moves people type.

Points are numbered from the mover's side (1..24), ``bar`` is where a hit checker waits and ``off``
is borne off; GNU Backgammon's step numbering (25 = bar, 0 = off) is what
:func:`bgnet.engine.movegen.generate` gives.

Writing (:func:`format_move`) follows GNU Backgammon's style; on every legal move of thousands of
random self-play positions it gives exactly the string of ``gnubg.move_tuple_to_string``:

* steps are taken from the highest starting point down (then the highest end first), and one
  checker's consecutive steps are merged into one part ("13/10 10/4" is "13/4"); a point on the way
  where it hits stays visible with its mark ("13/10*/4");
* a ``*`` marks a landing that sends an opponent blot to the bar: only the first of several
  checkers landing on that blot ("6/1* 3/1");
* parts keep the order of their first steps, so a merged part is not moved ("24/15 24/21"), and
  parts with the same start and end are written once with their count ("8/5(2)", "24/23*/22(2)");
* no move (the dice cannot be played) is the empty string ``""``, as GNU Backgammon writes it.

Reading (:func:`parse_move`) accepts parts in any order separated by spaces (or commas), ``/`` or
``-`` between points, ``bar``/``b``/``25`` for the bar, ``off``/``o``/``0`` for off, optional ``*``
hit marks, ``(n)`` repeats or the same part written again ("8/5 8/5"), one checker using several
dice ("13/7" or "13/10/7"), in any case and with extra spaces. A text is accepted when it describes
the result of a legal move with hops the dice can make; it returns the index of that move in
:func:`~bgnet.engine.movegen.generate`'s list. Anything else raises :class:`IllegalMoveError`
saying why.

>>> from bgnet.engine.board import start_position
>>> from bgnet.engine.movegen import generate
>>> b = start_position()
>>> after, steps = generate(b, 3, 1)
>>> i = parse_move("8/5 6/5", b, 3, 1)
>>> format_move(steps[i], b)
'8/5 6/5'
>>> parse_move("24/21 21/20", b, 3, 1) == parse_move("24/20", b, 3, 1)
True
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from bgnet.engine.board import as_board, check_die
from bgnet.engine.movegen import generate
from bgnet.errors import BadArgument, quoted

BAR_POINT = 25
OFF_POINT = 0


class IllegalMoveError(BadArgument):
    """A typed move that is not legal in the position; the message says why in plain words (a
    person's mistake: a ``ValueError`` too, exit 2 on a command line)."""


# ---------------------------------------------------------------------------------------------
# writing


def _point_name(p: int) -> str:
    return "bar" if p == BAR_POINT else "off" if p == OFF_POINT else str(p)


def _steps_list(steps) -> list[tuple[int, int]]:
    """(from, to) pairs of a move, without the -1 padding; checks each pair."""
    pairs = []
    for pair in np.asarray(steps, dtype=np.int64).reshape(-1, 2).tolist():
        a, b = pair
        if a == -1 and b == -1:
            continue
        if not (1 <= a <= 25 and 0 <= b <= 24 and b < a):
            raise ValueError(f"a step goes from 1..25 (25 = bar) down to 0..24 (0 = off); got {a}/{b}")
        pairs.append((a, b))
    if len(pairs) > 4:
        raise ValueError(f"a move has at most 4 steps; got {len(pairs)}")
    return pairs


def _opponent_blots(board) -> set[int]:
    """Mover's points (1..24) where the opponent has exactly one checker."""
    opp = np.asarray(board)[0]
    return {p for p in range(1, 25) if opp[24 - p] == 1}


def _chains(pairs: list[tuple[int, int]], blots: set[int]) -> list[list[tuple[int, bool]]]:
    """Group steps into the paths of single checkers, each point with whether it hit there.

    Steps are taken highest start first (then highest end) and each is appended to the first
    path that ends where it starts. Merging two steps that were in fact made by different
    checkers (one arriving at a point, another leaving it) describes the same position, so it
    is always safe. A landing hits when the opponent's blot is still there: only the first of
    several checkers landing on one blot hits it.

    >>> _chains([(24, 21), (24, 21), (21, 18)], set())
    [[(24, False), (21, False), (18, False)], [(24, False), (21, False)]]
    """
    paths: list[list[tuple[int, bool]]] = []
    standing = set(blots)
    for a, b in sorted(pairs, key=lambda s: (-s[0], -s[1])):
        hit = b in standing
        standing.discard(b)
        for path in paths:
            if path[-1][0] == a:
                path.append((b, hit))
                break
        else:
            paths.append([(a, False), (b, hit)])
    return paths


def format_move(steps, board) -> str:
    """Standard notation of a move from its (from, to) steps and the position before it.

    ``steps`` is an int array ``[k, 2]`` (``-1`` rows are padding) or a list of pairs, numbered
    from the mover's side (25 = bar, 0 = off); ``board`` is ``[opponent, player on roll]``.

    >>> from bgnet.engine.board import start_position
    >>> format_move([(24, 18), (18, 14)], start_position())
    '24/14'
    >>> format_move([(8, 5), (8, 5), (6, 5), (6, 5)], start_position())
    '8/5(2) 6/5(2)'
    >>> format_move([], start_position())
    ''
    """
    blots = _opponent_blots(board)
    shown: dict[tuple[int, int], list] = {}  # (start, end) -> [text of the first, count]
    for path in _chains(_steps_list(steps), blots):
        # Points on the way are shown only where the checker hit. With doubles, checkers with the
        # same start and end took the same path; the first one to pass a blot hit it, and the
        # group is written as that first one, counted: "24/23*/22(2)".
        ends = (path[0][0], path[-1][0])
        if ends in shown:
            shown[ends][1] += 1
            continue
        keep = [path[0]] + [q for q in path[1:-1] if q[1]] + [path[-1]]
        shown[ends] = ["/".join(_point_name(p) + ("*" if hit else "") for p, hit in keep), 1]
    return " ".join(text + (f"({n})" if n > 1 else "") for text, n in shown.values())


@njit(cache=True, inline="always")
def _write_point(p, hit, out, pos):
    if p == BAR_POINT:
        out[pos], out[pos + 1], out[pos + 2] = 98, 97, 114  # "bar"
        pos += 3
    elif p == OFF_POINT:
        out[pos], out[pos + 1], out[pos + 2] = 111, 102, 102  # "off"
        pos += 3
    else:
        if p >= 10:
            out[pos] = 48 + p // 10
            pos += 1
        out[pos] = 48 + p % 10
        pos += 1
    if hit:
        out[pos] = 42  # "*"
        pos += 1
    return pos


@njit(cache=True)
def write_move(steps, opp, out, pos, sc):
    """:func:`format_move` compiled: write the notation of ``steps`` (int[4, 2], -1 padded, as
    the move generator gives them) for a mover whose opponent's side is ``opp`` (``board[0]``)
    as ASCII bytes into ``out`` from ``pos``; returns the position after the text (at most 60
    bytes). ``sc`` is int64 scratch of at least 40 entries (kept by the caller, so that nothing
    is allocated per move). The same text as :func:`format_move`, step for step."""
    # sc[0:4], sc[4:8]: the steps' starts and ends, highest start first (then highest end).
    n = 0
    for k in range(4):
        if steps[k, 0] >= 0:
            sc[n] = steps[k, 0]
            sc[4 + n] = steps[k, 1]
            n += 1
    for i in range(1, n):
        j = i
        while j > 0 and (sc[j] > sc[j - 1] or (sc[j] == sc[j - 1] and sc[4 + j] > sc[3 + j])):
            sc[j], sc[j - 1] = sc[j - 1], sc[j]
            sc[4 + j], sc[3 + j] = sc[3 + j], sc[4 + j]
            j -= 1
    # Chains of one checker: path q's points at sc[8 + 5q:], its length at sc[28 + q], the
    # points where it hit as bits of sc[32 + q]. Only the first landing on a blot hits it.
    hit_points = 0
    npaths = 0
    for k in range(n):
        frm, to = sc[k], sc[4 + k]
        hit = to >= 1 and opp[24 - to] == 1 and not (hit_points >> to) & 1
        if hit:
            hit_points |= 1 << to
        q = 0
        while q < npaths and sc[8 + 5 * q + sc[28 + q] - 1] != frm:
            q += 1
        if q == npaths:
            sc[8 + 5 * q] = frm
            sc[28 + q] = 1
            sc[32 + q] = 0
            npaths += 1
        sc[8 + 5 * q + sc[28 + q]] = to
        if hit:
            sc[32 + q] |= 1 << sc[28 + q]
        sc[28 + q] += 1
    # Paths with the same start and end are written once (the first), with their count sc[36 + q].
    for q in range(npaths):
        sc[36 + q] = 0
        first = q
        end_q = sc[8 + 5 * q + sc[28 + q] - 1]
        for r in range(q):
            if sc[36 + r] > 0 and sc[8 + 5 * r] == sc[8 + 5 * q] and sc[8 + 5 * r + sc[28 + r] - 1] == end_q:
                first = r
                break
        sc[36 + first] += 1
    started = False
    for q in range(npaths):
        if sc[36 + q] == 0:
            continue
        if started:
            out[pos] = 32  # " "
            pos += 1
        started = True
        last = sc[28 + q] - 1
        hits = sc[32 + q]
        pos = _write_point(sc[8 + 5 * q], False, out, pos)
        for i in range(1, last + 1):
            hit = (hits >> i) & 1 == 1
            if i < last and not hit:
                continue  # points on the way show only where the checker hit
            out[pos] = 47  # "/"
            pos = _write_point(sc[8 + 5 * q + i], hit, out, pos + 1)
        if sc[36 + q] > 1:
            out[pos], out[pos + 1], out[pos + 2] = 40, 48 + sc[36 + q], 41  # "(n)"
            pos += 3
    return pos


# ---------------------------------------------------------------------------------------------
# reading: text -> parts


@dataclass(frozen=True)
class _Part:
    """One checker's path as typed: points from start to end, and which carried a ``*``."""

    points: tuple[int, ...]
    marks: frozenset[int]


_EXPECTED = ("write a move as from/to parts separated by spaces, e.g. '24/18 13/11', 'bar/22*', "
             "'6/off' or '8/5(2)'")
# ASCII digits, a few of them: \d and int() would take other scripts' digits and huge numbers
_POINT_RE = re.compile(r"^(bar|b|off|o|[0-9]{1,3})(\*?)$")
_REPEAT_RE = re.compile(r"^(.*?)\(([0-9]{1,3})\)$")
_PASS_WORDS = {"", "pass", "no move", "none", "-"}


def _parse_point(token: str, part: str) -> tuple[int, bool]:
    m = _POINT_RE.match(token)
    if not m:
        raise IllegalMoveError(
            f"cannot read {quoted(token, 40)} in {quoted(part, 60)} as a point: use 1 to 24, bar or off; "
            f"{_EXPECTED}")
    word, star = m.groups()
    if word in ("bar", "b"):
        p = BAR_POINT
    elif word in ("off", "o"):
        p = OFF_POINT
    else:
        p = int(word)
        if p > 25:
            raise IllegalMoveError(f"there is no point {p}: points are 1 to 24 (25 is the bar, 0 is off)")
    return p, bool(star)


def _parse_part(part: str) -> list[_Part]:
    """'13/10*/4(2)' -> two _Part((13, 10, 4), {10})."""
    repeat = 1
    m = _REPEAT_RE.match(part)
    if m:
        part, repeat = m.group(1), int(m.group(2))
        if not 1 <= repeat <= 4:
            raise IllegalMoveError(f"a part can be repeated 1 to 4 times; got ({repeat})")
    tokens = re.split(r"[/\-]", part)
    if len(tokens) < 2 or any(t == "" for t in tokens):
        raise IllegalMoveError(f"cannot read {quoted(part, 60)}: {_EXPECTED}")
    points, marks = [], set()
    for t in tokens:
        p, star = _parse_point(t, part)
        points.append(p)
        if star:
            marks.add(p)
    for a, b in zip(points, points[1:]):
        if a == OFF_POINT:
            raise IllegalMoveError(f"in {quoted(part, 60)} a checker moves on after bearing off")
        if b == BAR_POINT:
            raise IllegalMoveError(f"in {quoted(part, 60)} a checker moves to the bar; checkers only enter "
                                   "from it")
        if b >= a:
            raise IllegalMoveError(
                f"in {quoted(part, 60)} a checker moves from {_point_name(a)} to {_point_name(b)}: checkers "
                "move from higher points to lower ones (your 24-point towards your 1-point)"
            )
    return [_Part(tuple(points), frozenset(marks))] * repeat


def _parse_text(text: str) -> list[_Part]:
    """The typed parts of a move text, in the order typed."""
    t = text.strip().lower()
    # Accept "8/5 (2)" and "bar / 22" as well as the compact forms.
    t = re.sub(r"\s*\(\s*(\d+)\s*\)", r"(\1)", t)
    t = re.sub(r"\s*/\s*", "/", t)
    t = re.sub(r"\s+\*", "*", t)
    t = re.sub(r"(?<=[\w*])\s*-\s*(?=\w)", "-", t)
    parts: list[_Part] = []
    for token in re.split(r"[\s,]+", t):
        if token:
            parts.extend(_parse_part(token))
    return parts


# ---------------------------------------------------------------------------------------------
# reading: parts -> a legal move


def _dice_list(d1: int, d2: int) -> list[int]:
    try:
        d1, d2 = check_die(d1), check_die(d2)
    except ValueError:
        raise ValueError(f"dice are whole numbers from 1 to 6; got {d1!r} and {d2!r}") from None
    return [d1] * 4 if d1 == d2 else [max(d1, d2), min(d1, d2)]


def _mover_after(board: np.ndarray, parts: list[_Part]) -> np.ndarray | None:
    """The mover's side after the typed parts (None if a checker would be missing)."""
    me = board[1].astype(np.int64).copy()
    for part in parts:
        a, b = part.points[0], part.points[-1]
        me[a - 1] -= 1
        if b != OFF_POINT:
            me[b - 1] += 1
    return None if (me < 0).any() else me


def _hits(board: np.ndarray, after: np.ndarray) -> frozenset[int]:
    """Mover's points where a move sent an opponent checker to the bar."""
    return frozenset(p for p in range(1, 25) if board[0, 24 - p] == 1 and after[0, 24 - p] == 0)


def _pick(board, after_all, steps_all, candidates: list[int], parts: list[_Part]) -> int:
    """Choose among legal moves that leave the mover's checkers the same: they differ in hits.

    Every typed landing point holding a blot is surely hit, and so is every marked blot; the
    move hitting exactly those wins, else the only move hitting at least those. Otherwise the
    text does not say which, and the error lists the moves it could mean.
    """
    if len(candidates) == 1:
        return candidates[0]
    blots = _opponent_blots(board)
    required = set()
    for part in parts:
        required |= {p for p in part.points[1:] if p in blots}
        required |= {p for p in part.marks if p in blots}
    hits = {i: _hits(board, after_all[i]) for i in candidates}
    pool = [i for i in candidates if hits[i] >= required] or candidates
    exact = [i for i in pool if hits[i] == required]
    if len(exact) == 1:
        return exact[0]
    if len(pool) == 1:
        return pool[0]
    options = " or ".join(format_move(steps_all[i], board) for i in pool)
    raise IllegalMoveError(f"that can be played hitting different checkers: type {options}")


def parse_move(text: str, board, d1: int, d2: int) -> int | None:
    """Index of the typed move in ``generate(board, d1, d2)``'s list of legal moves.

    ``board`` is ``[opponent, player on roll]`` (a bad board raises ValueError, as do dice outside
    1..6). When no move is legal the turn passes: an empty
    text (or "pass") returns None and anything else raises :class:`IllegalMoveError`. Hit marks
    are optional; they only choose between moves that differ in what they hit.

    >>> from bgnet.engine.board import start_position
    >>> b = start_position()
    >>> parse_move("13/11 24/18", b, 6, 2) == parse_move("24/18 13/11", b, 6, 2)
    True
    >>> try:
    ...     parse_move("13/7", b, 6, 4)
    ... except IllegalMoveError as e:
    ...     print(e)
    both dice can be played, so you must play both
    """
    if not isinstance(text, str):
        raise IllegalMoveError(f"a move is text such as '24/18 13/11'; got {type(text).__name__}")
    board = as_board(board)
    dice = _dice_list(d1, d2)
    after_all, steps_all = generate(board, d1, d2)
    words = " ".join(text.lower().split())
    if len(after_all) == 0:
        if words in _PASS_WORDS:
            return None
        raise IllegalMoveError(f"you have no legal move with {_roll(dice)}: the turn passes")
    if words in _PASS_WORDS:
        raise IllegalMoveError(f"you have a legal move with {_roll(dice)}, so you must play it")
    parts = _parse_text(text)
    me = _mover_after(board, parts)
    if me is not None:
        candidates = np.flatnonzero((after_all[:, 1] == me).all(axis=1)).tolist()
        if candidates and _dice_fit(parts, dice) is not None:
            return _pick(board, after_all, steps_all, candidates, parts)
    raise IllegalMoveError(_explain(board, dice, parts, after_all, steps_all))


def _and_list(items) -> str:
    """'1', '1 and 2', '1, 2 and 3'."""
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _roll(dice: list[int]) -> str:
    return f"{dice[0]}-{dice[1]}"


# ---------------------------------------------------------------------------------------------
# why a move is illegal


def _hop_ok(dist_or_point: int, off: bool, combo: tuple[int, ...]) -> bool:
    """Can the dice in ``combo`` (one checker, in some order) cover one typed hop?"""
    total = sum(combo)
    if not off:
        return total == dist_or_point
    # Bearing off: only the last die may be more than needed.
    return total >= dist_or_point and total - max(combo) < dist_or_point


def _hops(parts: list[_Part]) -> list[tuple[int, bool]]:
    """Every typed hop as (pips needed, ends off the board)."""
    out = []
    for part in parts:
        for a, b in zip(part.points, part.points[1:]):
            out.append((a if b == OFF_POINT else a - b, b == OFF_POINT))
    return out


def _dice_fit(parts: list[_Part], dice: list[int]) -> list[tuple[int, ...]] | None:
    """Assign disjoint groups of dice to the typed hops; None when they cannot be covered."""
    hops = _hops(parts)
    n = len(dice)

    def assign(k: int, free: tuple[int, ...]) -> list[tuple[int, ...]] | None:
        if k == len(hops):
            return []
        need, off = hops[k]
        for r in range(1, len(free) + 1):
            for idx in itertools.combinations(range(len(free)), r):
                combo = tuple(free[i] for i in idx)
                if _hop_ok(need, off, combo):
                    rest = assign(k + 1, tuple(free[i] for i in range(len(free)) if i not in idx))
                    if rest is not None:
                        return [combo] + rest
        return None

    if len(hops) > n:
        return None
    return assign(0, tuple(dice))


def _explain(board, dice, parts, after_all, steps_all) -> str:
    """The first rule the typed move breaks, in plain words."""
    roll = _roll(dice)
    if not parts:
        return _EXPECTED
    # A single hop the dice cannot make at all.
    for need, off in _hops(parts):
        if not any(_hop_ok(need, off, c) for r in range(1, len(dice) + 1)
                   for c in set(itertools.combinations(dice, r))):
            if off:
                return f"the dice {roll} cannot bear off a checker from point {need}"
            return f"the dice {roll} cannot move a checker {need} pips"
    fit = _dice_fit(parts, dice)
    if fit is None:
        hops = _hops(parts)
        if len(hops) > len(dice):
            return f"that is {len(hops)} moves, but {roll} gives only {len(dice)}"
        pips = [need for need, _ in hops]
        if sum(pips) > sum(dice) and not any(off for _, off in hops):
            return f"that moves {sum(pips)} pips, but {roll} gives only {sum(dice)}"
        return f"the dice {roll} cannot make moves of {_and_list(pips)} pips together"
    reason = _replay(board, dice, parts, fit)
    if reason:
        return reason
    return _count_reason(dice, fit, steps_all) or f"that is not a legal move with {roll}"


def _count_reason(dice, fit, steps_all) -> str | None:
    """The move is playable step by step but uses too few dice (or the wrong one)."""
    used = sum(len(c) for c in fit)
    most = int((steps_all[0, :, 0] >= 0).sum())
    if dice[0] == dice[1]:
        if used < most:
            return f"{most} of the {dice[0]}s can be played, so you must play {most} (you played {used})"
        return None
    if most == 2 and used < 2:
        return "both dice can be played, so you must play both"
    if most == 1 and len(fit) == 1 and fit[0] == (dice[1],):
        # The lower die alone replays fine, yet it is not legal: the higher one can be played.
        return f"when only one die can be played you must play the higher ({dice[0]})"
    return None


def _replay(board, dice, parts, fit) -> str | None:
    """Play the typed hops one die at a time; say what stops them, or None if nothing does."""
    me = board[1].astype(np.int64).copy()
    opp = board[0].astype(np.int64).copy()
    # Entering from the bar comes first, then the other parts from the back of the board.
    order = sorted(range(len(parts)), key=lambda i: -parts[i].points[0])
    hop_dice = iter(_split_by_part(parts, fit))
    per_part = {i: next(hop_dice) for i in range(len(parts))}
    for i in order:
        part = parts[i]
        for (a, b), combo in zip(zip(part.points, part.points[1:]), per_part[i]):
            reason = replay_hop(me, opp, a, b, combo, int(board[1, a - 1]))
            if reason:
                return reason
    return None


def _split_by_part(parts, fit):
    """Dice groups of :func:`_dice_fit` (one per hop) regrouped per typed part."""
    k = 0
    for part in parts:
        n = len(part.points) - 1
        yield fit[k:k + n]
        k += n


def replay_hop(me, opp, a: int, b: int, combo: tuple[int, ...], had: int) -> str | None:
    """Move one checker from a to b with the dice in ``combo``, checking each die's step.

    ``had`` is how many checkers stood on ``a`` before the move (for the message).
    """
    if me[a - 1] <= 0:
        where = "on the bar" if a == BAR_POINT else f"on point {a}"
        if had > 0:
            return f"you have only {had} checker{'s' if had > 1 else ''} {where}"
        return f"you have no checker {where}"
    # With several dice the stops on the way are unknown: try each order; if all fail, report
    # what stopped the order(s) that got furthest.
    failures: dict[str, int] = {}
    for order in dict.fromkeys(itertools.permutations(combo)):
        trial_me, trial_opp = me.copy(), opp.copy()
        pos, reason, k = a, None, 0
        for k, die in enumerate(order):
            last = k == len(order) - 1
            nxt = OFF_POINT if (b == OFF_POINT and (last or pos - die <= 0)) else pos - die
            if b == OFF_POINT and nxt == OFF_POINT and not last:
                reason = f"the checker from {_point_name(a)} is off before all its dice are used"
            else:
                reason = step_reason(trial_me, trial_opp, pos, nxt, die)
            if reason:
                break
            move_checker(trial_me, trial_opp, pos, nxt)
            pos = nxt
        if reason is None:
            me[:], opp[:] = trial_me, trial_opp
            return None
        failures.setdefault(reason, k)
    furthest = max(failures.values())
    return " and ".join(r for r, k in failures.items() if k == furthest)


def step_reason(me, opp, a: int, b: int, die: int) -> str | None:
    """Why one die's step from a to b is not allowed now, or None."""
    if a != BAR_POINT and me[24] > 0:
        return f"you must enter your checker{'s' if me[24] > 1 else ''} from the bar first"
    if b == OFF_POINT:
        if me[6:25].sum() > 0:
            return "you cannot bear off while checkers are outside your home board"
        if die > a and me[a:6].sum() > 0:
            higher = max(p for p in range(a + 1, 7) if me[p - 1] > 0)
            return (f"you cannot bear off from point {a} with a {die} while you have a checker on "
                    f"point {higher}: move it first")
        return None
    j = 24 - b  # the opponent's index of my point b
    if opp[j] >= 2:
        return f"point {b} is blocked (the opponent has {int(opp[j])} checkers there)"
    return None


def move_checker(me, opp, a: int, b: int) -> None:
    me[a - 1] -= 1
    if b != OFF_POINT:
        me[b - 1] += 1
        if opp[24 - b] == 1:
            opp[24 - b] = 0
            opp[24] += 1
