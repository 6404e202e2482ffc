"""What the three environments share: the action encoding, the observations and their bounds,
the dice, and many games of an agent against a bot advanced together.

Actions. An action is a whole move: an index into the legal afterstates of the turn, ordered
canonically (:func:`legal_afterstates`). The afterstates of a position are sorted by the mover's
checkers after the move, read from the bar (index 24) down to the 1-point, fewest first, then by
the opponent's checkers read the same way; so the order depends on the position and the dice
alone (3-1 and 1-3 give the same list), not on how a generator finds the moves. The legal actions
of a turn are always ``0 .. n - 1``; a turn with no legal move has one action, 0, which passes.
The action space has :data:`MAX_ACTIONS` entries: no position has more distinct afterstates (see
the constant).

Observations. ``observation`` is float32: the position from the side of the player it is given
to (its checkers first, as if it were on roll), in one of bgnet's input encodings
(:data:`bgnet.nn.encode.ENCODINGS`: Tesauro's 198 raw inputs, or bgnet's 221 ``extended`` and 227
``contact`` ones), then :data:`DICE_UNITS` units for the dice of that player's roll: a one-hot of
the higher die, then a one-hot of the lower (both on the same unit for a double; all zero when the
player is not about to move). ``action_mask`` is int8, 1 for each legal action.

Rewards are the points of a finished game from the agent's side: +1, +2, +3 for a single game, a
gammon, a backgammon won, the negatives for one lost; 0 on every other step. Cubeless money play.

>>> after, steps, offsets = legal_afterstates(np.stack([start_position()] * 2), np.array([[3, 1], [1, 3]]))
>>> offsets.tolist(), bool((after[:16] == after[16:]).all())
([0, 16, 32], True)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from bgnet.bots.base import Bot
from bgnet.bots.simple import RandomBot
from bgnet.engine.api import generate_kept, own_workspace
from bgnet.engine.board import game_result, start_position
from bgnet.engine.movegen import generate_batch
from bgnet.nn.encode import (
    CONTACT_PER_SIDE,
    CONTACT_START,
    EXTRA_PER_SIDE,
    EXTRA_START,
    TESAURO_SIDE,
    encode,
    encode_compiled,
    encoding_kind,
    num_features,
)

# No position has more distinct legal afterstates than this. A play of a double is four steps,
# each moving one of the mover's 15 checkers; the afterstate follows from how many of the four
# steps each checker takes (its path, and so what it hits, is then fixed), a multiset of 4 out of
# 15: C(18, 4) = 3060. Checkers on the same point are interchangeable, so the true maximum is
# lower: the most found by searching positions (tools/max_moves.py) is 2,226, for 1-1 with
# fifteen lone checkers spread out. A play of two different dice is at most 15 x 15 checker pairs
# plus 15 single checkers playing the two dice in either order, far fewer. GNU Backgammon sizes its
# move lists by the same bound.
MAX_ACTIONS = 3060
DICE_UNITS = 12  # one-hot of the higher die, then of the lower
_START = start_position()  # a constant of the compiled code


def roll_dice(rng: np.random.Generator, n: int) -> np.ndarray:
    """int64[n, 2] rolls, the higher die first."""
    d = rng.integers(1, 7, size=(n, 2))
    return np.stack([d.max(axis=1), d.min(axis=1)], axis=1)


class DiceStream:
    """Rolls one at a time, drawn from ``rng`` in blocks (a draw from a generator costs
    microseconds whatever its size): the same generator state gives the same rolls. The blocks
    start small and double up to :attr:`MOST`, so a stream made for one game (an environment
    makes one at each reset) draws about what that game uses."""

    FIRST, MOST = 64, 1024  # rolls in the first block, in the largest

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._rolls: list[list[int]] = []  # the block's rolls, higher die first, in the order drawn
        self._next = 0
        self._size = self.FIRST

    def roll(self) -> list[int]:
        """``[higher, lower]``, a fresh list each call."""
        i = self._next
        if i == len(self._rolls):
            dice = self.rng.integers(1, 7, size=(self._size, 2), dtype=np.int8)
            dice.sort(axis=1)
            self._rolls = dice[:, ::-1].tolist()  # a list per roll: each handed out once
            self._size = min(2 * self._size, self.MOST)
            i = 0
        self._next = i + 1
        return self._rolls[i]


def opening_rolls(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(dice int64[n, 2], first bool[n])`` of ``n`` opening rolls: each player rolls one die, a
    tie is rolled again, and the higher die's player starts with both numbers. ``first`` is True
    where the first player (the agent, or ``player_0``) rolled the higher die."""
    mine = rng.integers(1, 7, size=n)
    theirs = (mine - 1 + rng.integers(1, 6, size=n)) % 6 + 1  # uniform over the five others
    dice = np.stack([np.maximum(mine, theirs), np.minimum(mine, theirs)], axis=1)
    return dice, mine > theirs


# ---------------------------------------------------------------------------------------------
# the canonical order of afterstates


@njit(cache=True)
def _sort_keys(after):
    """int64[M, 2] sort keys: the first 30 of the 50 counts of each afterstate (the mover's from
    the bar down to the 1-point, then the opponent's bar and points 24..20) as 4-bit digits, 15 to
    a word, the first count the most significant, so that comparing keys word by word compares
    the counts in that order. The opponent's other counts are compared where the keys tie
    (:func:`_less`): rarely, as the afterstates of a position differ in them only by hits."""
    m = after.shape[0]
    keys = np.empty((m, 2), np.int64)
    for r in range(m):
        me = after[r, 1]
        w0 = np.int64(0)
        for i in range(24, 9, -1):  # the mover's bar and points 24..10
            w0 = (w0 << 4) | me[i]
        w1 = np.int64(0)
        for i in range(9, -1, -1):  # its points 9..1
            w1 = (w1 << 4) | me[i]
        opp = after[r, 0]
        for i in range(24, 19, -1):  # the opponent's bar and points 24..20
            w1 = (w1 << 4) | opp[i]
        keys[r, 0], keys[r, 1] = w0, w1
    return keys


@njit(cache=True, inline="always")
def _less(keys, after, a, b):
    """Whether row ``a`` of ``after`` comes before row ``b``: by their keys, then by the
    opponent's points 19..1."""
    if keys[a, 0] != keys[b, 0]:
        return keys[a, 0] < keys[b, 0]
    if keys[a, 1] != keys[b, 1]:
        return keys[a, 1] < keys[b, 1]
    for i in range(19, -1, -1):
        if after[a, 0, i] != after[b, 0, i]:
            return after[a, 0, i] < after[b, 0, i]
    return False


@njit(cache=True)
def canonical_order(after, offsets):
    """int64[M]: the rows of ``after`` with each position's afterstates (rows ``offsets[n]:
    offsets[n + 1]``) in the canonical order. The move generator finds them nearly in that order
    (about 1 pair in 25 out of order, most segments in order), so each segment is sorted by
    insertion, which costs a pass and a shift per pair out of order; a segment that needs many
    shifts is finished by merging instead, so no order of the input costs more than that."""
    keys = _sort_keys(after)
    m = after.shape[0]
    order = np.arange(m)
    tmp = np.empty(0, np.int64)
    for i in range(offsets.shape[0] - 1):
        lo, hi = offsets[i], offsets[i + 1]
        if hi - lo < 2:
            continue
        if not _insertion_sort(keys, after, order, lo, hi, 4 * (hi - lo) + 64):
            if tmp.shape[0] < m:
                tmp = np.empty(m, np.int64)
            _merge_sort(keys, after, order, tmp, lo, hi)
    return order


@njit(cache=True)
def _insertion_sort(keys, after, order, lo, hi, most_shifts):
    """Sorts ``order[lo:hi]`` by insertion: True, or False once it has shifted more than
    ``most_shifts`` rows (``order[lo:hi]`` is then a permutation of its rows, partly sorted)."""
    shifts = 0
    for r in range(lo + 1, hi):
        x = order[r]
        j = r - 1
        while j >= lo and _less(keys, after, x, order[j]):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
        shifts += r - 1 - j
        if shifts > most_shifts:
            return False
    return True


@njit(cache=True)
def _merge_sort(keys, after, order, tmp, lo, hi):
    width = 1
    n = hi - lo
    while width < n:
        for start in range(lo, hi, 2 * width):
            mid = min(start + width, hi)
            end = min(start + 2 * width, hi)
            a, b, k = start, mid, start
            while a < mid and b < end:
                if _less(keys, after, order[b], order[a]):
                    tmp[k] = order[b]
                    b += 1
                else:
                    tmp[k] = order[a]
                    a += 1
                k += 1
            while a < mid:
                tmp[k] = order[a]
                a += 1
                k += 1
            while b < end:
                tmp[k] = order[b]
                b += 1
                k += 1
        order[lo:hi] = tmp[lo:hi]
        width *= 2


@njit(cache=True)
def _rows(rows, order):
    """``rows[order]``, copied as flat bytes (faster than numba's copy of a sub-array per row)."""
    m = order.shape[0]
    width = rows.size // max(rows.shape[0], 1)
    flat = rows.reshape(rows.shape[0], width)
    out = np.empty((m, width), rows.dtype)
    for r in range(m):
        src = order[r]
        for k in range(width):
            out[r, k] = flat[src, k]
    return out.reshape((m,) + rows.shape[1:])


@njit(cache=True)
def _permute_rows(rows, order):
    """``rows[:] = rows[order]`` in place, cycle by cycle: only the rows out of place move (the
    canonical order leaves most where the generator put them)."""
    m = order.shape[0]
    width = rows.size // max(m, 1)
    flat = rows.reshape(m, width)
    held = np.empty(width, rows.dtype)
    placed = np.zeros(m, np.bool_)
    for start in range(m):
        if placed[start] or order[start] == start:
            continue
        for k in range(width):
            held[k] = flat[start, k]
        r = start
        while True:
            placed[r] = True
            src = order[r]
            if src == start:
                for k in range(width):
                    flat[r, k] = held[k]
                break
            for k in range(width):
                flat[r, k] = flat[src, k]
            r = src
    return rows


def legal_afterstates(boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The legal afterstates of ``boards`` (int8[N, 2, 25], the mover in ``board[1]``) with
    ``dice`` (int[N, 2]) in the canonical order: ``(after int8[M, 2, 25], steps int8[M, 4, 2],
    offsets int64[N + 1])``, action ``a`` of position ``n`` being row ``offsets[n] + a``. A position
    with no legal move has one row, itself, with empty steps: the pass."""
    after, steps, offsets = generate_batch(np.ascontiguousarray(boards, np.int8),
                                           np.ascontiguousarray(dice, np.int64))
    order = canonical_order(after, offsets)  # the generator's arrays are fresh: sorted in place
    return _permute_rows(after, order), _permute_rows(steps, order), offsets


# ---------------------------------------------------------------------------------------------
# observations


def observation_size(encoding: str) -> int:
    """Length of the ``observation`` vector: the encoding's features and the dice units."""
    return num_features(encoding) + DICE_UNITS


def observation_bounds(encoding: str) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float32 bounds of every unit of the ``observation`` vector: the largest
    value each feature of :mod:`bgnet.nn.encode` can take with 15 checkers a side.

    >>> low, high = observation_bounds("tesauro")
    >>> float(high[3]), float(high[96]), float(high[97]), len(high)
    (6.0, 7.5, 1.0, 210)
    """
    size = num_features(encoding)
    low = np.zeros(size + DICE_UNITS, np.float32)
    high = np.ones(size + DICE_UNITS, np.float32)
    for base in (0, TESAURO_SIDE):
        high[base + 3:base + 96:4] = (15 - 3) / 2  # checkers beyond the third on a point
        high[base + 96] = 15 / 2  # the bar
    if size > EXTRA_START:
        most_pips = 15 * 25
        for base in (EXTRA_START, EXTRA_START + EXTRA_PER_SIDE):
            high[base + 0] = most_pips / 167.0
            high[base + 1] = 15 / 5.0  # blots
            high[base + 6] = 6 / 3.0  # anchors
            high[base + 7] = 15 / 5.0  # checkers back
            high[base + 10] = 15 * 4 / 30.0  # crossovers
        lead = EXTRA_START + 2 * EXTRA_PER_SIDE
        low[lead], high[lead] = -most_pips / 100.0, most_pips / 100.0
    if size > CONTACT_START:
        for base in (CONTACT_START, CONTACT_START + CONTACT_PER_SIDE):
            high[base + 2] = 15 * 26 / 167.0  # contact left: at most 26 pips a checker
    return low, high


def observations(boards: np.ndarray, dice: np.ndarray, encoding: str) -> np.ndarray:
    """float32[N, F + 12] observations of ``boards`` (the observing player in ``board[1]``) with
    the dice of its roll (``dice[n]`` = (0, 0): not about to move, the dice units stay zero)."""
    n = len(boards)
    features = num_features(encoding)
    out = np.zeros((n, features + DICE_UNITS), np.float32)
    if n:
        out[:, :features] = encode(boards, encoding)
        _dice_units(np.ascontiguousarray(dice, np.int64), out, features)
    return out


@njit(cache=True)
def _dice_units(dice, out, at):
    for i in range(dice.shape[0]):
        hi, lo = max(dice[i, 0], dice[i, 1]), min(dice[i, 0], dice[i, 1])
        if lo > 0:
            out[i, at + hi - 1] = 1.0
            out[i, at + 6 + lo - 1] = 1.0


def observe_one(board: np.ndarray, dice: np.ndarray, legal: int, encoding: str) -> dict[str, np.ndarray]:
    """The observation of one player: ``board`` from its side, the dice of its roll ((0, 0) when
    it is not about to move) and its number of legal actions (0 when it is not on roll)."""
    features = num_features(encoding)
    obs = np.zeros(features + DICE_UNITS, np.float32)
    obs[:features] = encode(board, encoding)[0]
    if dice[0]:
        obs[features + dice[0] - 1] = 1.0
        obs[features + 6 + dice[1] - 1] = 1.0
    return {"observation": obs, "action_mask": legal_mask(legal)}


# ---------------------------------------------------------------------------------------------
# one player's turn


class Turns:
    """One game's turns, each in one compiled call (the environments that play one game).

    Between calls ``board`` is the position (int8[2, 25], the player on roll in ``board[1]``),
    ``dice`` its roll (higher first; (0, 0) once the game is over), ``after`` its legal
    afterstates in the canonical order (the position itself when no move is legal), ``obs`` the
    player's observation vector and ``mask`` its legal actions: ``after``, ``obs`` and ``mask``
    are fresh arrays each turn, made by the compiled call, so :meth:`observation` hands them out
    without a copy. ``board`` and ``dice`` are updated in place. The kernels use the engine's
    kept buffers: a batch of one would set its tables up each time.
    """

    def __init__(self, encoding: str):
        self.kind, self.features = encoding_kind(encoding), num_features(encoding)
        self.board = start_position()
        self.dice = np.zeros(2, np.int64)
        self.after = np.zeros((0, 2, 25), np.int8)
        self.obs = np.zeros(self.features + DICE_UNITS, np.float32)
        self.mask = np.zeros(MAX_ACTIONS, np.int8)
        self._handed = False  # whether observation() has handed out this turn's arrays
        ws = own_workspace()
        self._kept = (ws.boards, ws.moves, ws.ints, self.kind, self.features)

    def start(self, board: np.ndarray, dice) -> None:
        """``board`` (the player on roll in ``board[1]``) with ``dice`` (higher first): its turn."""
        self.board[:] = board
        self.dice[0], self.dice[1] = dice[0], dice[1]
        self.after, self.obs, self.mask = _turn(self.board, self.dice[0], self.dice[1], *self._kept)
        self._handed = False
        self._check()

    def move(self, action: int, roll) -> int:
        """The player on roll plays ``after[action]`` (a legal action). Returns the points it wins
        by it (the game is then over, ``board`` its last position from the winner's side), or 0:
        the other player is on roll with ``roll`` (higher first), and ``after``, ``obs``,
        ``mask`` are its."""
        points, after, obs, mask = _move_then_turn(self.after, action, self.board, self.dice, roll[0], roll[1],
                                                   *self._kept)
        self.after = after
        if not points:
            self.obs, self.mask, self._handed = obs, mask, False
            if not len(after):
                self._check()
        return points

    def observation(self) -> dict[str, np.ndarray]:
        """The player on roll's observation dict: this turn's own arrays the first time it is
        asked (nothing else holds them: no copy), copies after, so every call gives arrays of
        its own."""
        if self._handed:
            return {"observation": self.obs.copy(), "action_mask": self.mask.copy()}
        self._handed = True
        return {"observation": self.obs, "action_mask": self.mask}

    def end(self, board: np.ndarray | None = None) -> None:
        """The game is over, in ``board`` if given."""
        if board is not None:
            self.board[:] = board
        self.dice[:] = 0
        self.after = self.after[:0]

    def _check(self) -> None:
        if len(self.after) == 0:  # more candidates than the kept buffers hold: the batch kernel
            self.after = legal_afterstates(self.board[None], self.dice[None])[0]
            self.mask[:len(self.after)] = 1


@njit(cache=True)
def _turn(board, d1, d2, boards, moves, ints, kind, features):
    """``(after, obs, mask)``: the legal afterstates of ``board`` with ``d1``, ``d2`` in the
    canonical order (none when the kept buffers are too small), the player's observation and its
    legal actions, all fresh arrays."""
    obs = np.zeros(features + DICE_UNITS, np.float32)
    encode_compiled(board.reshape(1, 2, 25), kind, 1, obs[:features].reshape(1, features))
    obs[features + d1 - 1] = 1.0
    obs[features + 6 + d2 - 1] = 1.0
    mask = np.zeros(MAX_ACTIONS, np.int8)
    n = generate_kept(board, d1, d2, boards, moves, ints)
    if n < 0:
        return np.empty((0, 2, 25), np.int8), obs, mask
    mask[:n] = 1
    offsets = np.array([0, n], np.int64)
    return _rows(boards[:n], canonical_order(boards[:n], offsets)), obs, mask


@njit(cache=True)
def _move_then_turn(after, action, board, dice, d1, d2, boards, moves, ints, kind, features):
    """``after[action]`` played: ``(points, after, obs, mask)``, the points it wins (the game
    over, ``board`` that afterstate; the arrays empty) or 0 and the next player's turn (``board``
    swapped, ``dice`` ``(d1, d2)``) as :func:`_turn` gives it."""
    points = game_result(after[action])
    if points:
        for p in range(25):
            board[0, p] = after[action, 0, p]
            board[1, p] = after[action, 1, p]
        dice[0] = dice[1] = 0
        return points, after[:0], np.empty(0, np.float32), np.empty(0, np.int8)
    for p in range(25):
        board[0, p] = after[action, 1, p]
        board[1, p] = after[action, 0, p]
    dice[0], dice[1] = d1, d2
    next_after, obs, mask = _turn(board, d1, d2, boards, moves, ints, kind, features)
    return 0, next_after, obs, mask


_MASK_TEMPLATE = np.concatenate([np.ones(MAX_ACTIONS, np.int8), np.zeros(MAX_ACTIONS, np.int8)])


def legal_mask(legal: int) -> np.ndarray:
    """int8[MAX_ACTIONS]: 1 for the first ``legal`` actions (a fresh array)."""
    return _MASK_TEMPLATE[MAX_ACTIONS - legal:2 * MAX_ACTIONS - legal].copy()


# ---------------------------------------------------------------------------------------------
# an agent against a bot, many games at once


class IllegalAction(ValueError):
    """An action outside the legal ones of the turn, where the environment was asked to refuse it
    (``illegal_action="raise"``)."""


ILLEGAL_ACTION_RULES = ("lose", "raise")


def check_illegal_action_rule(rule: str) -> str:
    if rule not in ILLEGAL_ACTION_RULES:
        raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_ACTION_RULES)}; got {rule!r}")
    return rule


def seed_bot(bot: Bot, rng: np.random.Generator) -> None:
    """Give a bot that draws random numbers (the random bot) a generator drawn from ``rng``, so
    that a seeded environment replays its games exactly. Other bots choose deterministically."""
    if isinstance(bot, RandomBot):
        bot.rng = np.random.default_rng(int(rng.integers(2**63)))


class AgentGames:
    """``n`` money games of an agent against a bot, advanced together.

    Between calls every game waits for the agent: ``boards[i]`` is the position from the agent's
    side (its checkers in ``board[1]``), ``dice[i]`` its roll and rows ``offsets[i]:offsets[i + 1]``
    of ``after`` its legal afterstates in the canonical order. A finished game keeps its last
    position (still from the agent's side), dice (0, 0) and no legal action until it is restarted.

    A step is a few compiled calls over all games, no Python loop over them: the agent's moves
    (:func:`_agent_moves`), the bot's replies, the next turns with their observations and masks
    (:func:`_next_turns`). The bot plays through its batched ``choose_moves``: one call for every
    game where it is on roll, so a net bot evaluates all their afterstates in one batch. The
    random bot is played inside the compiled step instead (:func:`_random_replies`), drawing
    from its generator exactly what its ``choose_moves`` would, so its games are the same.
    """

    def __init__(self, n: int, bot: Bot, encoding: str = "tesauro", illegal_action: str = "lose"):
        if n < 1:
            raise ValueError(f"the number of games must be 1 or more; got {n}")
        self.kind, self.features = encoding_kind(encoding), num_features(encoding)
        self.n, self.bot, self.encoding = n, bot, encoding
        self.illegal_action = check_illegal_action_rule(illegal_action)
        self.boards = np.repeat(start_position()[None], n, axis=0)
        self.dice = np.zeros((n, 2), np.int64)
        self.live = np.zeros(n, bool)
        self.after = np.zeros((0, 2, 25), np.int8)
        self.offsets = np.zeros(n + 1, np.int64)
        self._obs = np.zeros((n, self.features + DICE_UNITS), np.float32)
        self._masks = np.zeros((n, MAX_ACTIONS), np.int8)
        self._to_bot = np.zeros((n, 2, 25), np.int8)  # the positions the bot replies to
        self._going = np.zeros(n, np.int64)  # the games they are in

    @property
    def counts(self) -> np.ndarray:
        """int64[n]: the number of legal actions of each game (0 once it is over)."""
        return np.where(self.live, np.diff(self.offsets), 0)

    def restart(self, which: np.ndarray, rng: np.random.Generator) -> None:
        """New games in the slots ``which`` (bool[n]): the opening roll, and the bot's first move
        where its die is the higher. Call :meth:`prepare` after."""
        which = np.asarray(which, bool)
        k = int(np.count_nonzero(which))
        if not k:
            return
        slots = np.flatnonzero(which)
        if type(self.bot) is RandomBot:
            # The draws of opening_rolls and roll_dice below, in the same order, ordered in the
            # compiled call: a handful of games restart at each step, so numpy's calls are most
            # of the cost.
            mine, other, later = rng.integers(1, 7, size=k), rng.integers(1, 6, size=k), rng.integers(1, 7, size=(k, 2))
            uniform = self.bot.rng.random(_bot_openings(mine, other))
            after, offsets = _opening_moves()
            _random_openings(slots, mine, other, later, uniform, after, offsets, self.boards, self.dice, self.live)
            return
        dice, agent_first = opening_rolls(rng, k)
        later = roll_dice(rng, k)
        bot_first = ~agent_first
        boards = np.repeat(start_position()[None], k, axis=0)
        if bot_first.any():
            after, _ = self.bot.choose_moves(boards[bot_first], dice[bot_first])
            boards[bot_first] = after[:, ::-1]
            dice[bot_first] = later[bot_first]
        self.boards[slots] = boards
        self.dice[slots] = dice
        self.live[slots] = True

    def play(self, actions: np.ndarray, which: np.ndarray, rng: np.random.Generator):
        """The agent plays ``actions[i]`` in the games ``which``, then the bot replies where the
        game goes on. Returns ``(rewards float64[n], terminated bool[n], illegal bool[n])`` for
        those games (zeros elsewhere). Call :meth:`prepare` after."""
        actions = np.asarray(actions).reshape(-1)
        if actions.shape != (self.n,):
            raise ValueError(f"expected {self.n} actions, one per game; got shape {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions are whole numbers (indices of legal moves); got dtype {actions.dtype}")
        # Both rolls of every game are drawn, used or not: a game's dice do not depend on others.
        opp_dice = rng.integers(1, 7, size=(self.n, 2))
        my_dice = rng.integers(1, 7, size=(self.n, 2))
        rewards = np.zeros(self.n)
        terminated = np.zeros(self.n, bool)
        illegal = np.zeros(self.n, bool)
        stop = self.illegal_action == "raise"
        k = _agent_moves(self.after, self.offsets, self.live, np.asarray(which, bool),
                         actions.astype(np.int64, copy=False), self.boards, rewards, terminated, illegal,
                         self._to_bot, self._going, stop)
        if k < 0:
            i = -1 - k
            count = self.offsets[i + 1] - self.offsets[i] if self.live[i] else 0
            raise IllegalAction(f"action {int(actions[i])} is not legal in game {i}: it has {count} "
                                f"legal actions, 0 to {count - 1} (see action_mask)")
        if k:
            if type(self.bot) is RandomBot:
                _random_replies(self._to_bot[:k], self._going[:k], opp_dice, my_dice, self.bot.rng.random(k),
                                self.boards, self.dice, rewards, terminated)
            else:
                going = self._going[:k]
                replies, _ = self.bot.choose_moves(self._to_bot[:k].copy(), _high_first(opp_dice[going]))
                _apply_replies(np.ascontiguousarray(replies, np.int8), going, my_dice, self.boards, self.dice,
                               rewards, terminated)
        _end_games(terminated, self.live, self.dice)
        return rewards, terminated, illegal

    def prepare(self) -> None:
        """The legal afterstates of every live game's turn, its observation and mask (one
        compiled call)."""
        self._obs = np.zeros((self.n, self.features + DICE_UNITS), np.float32)  # np.zeros, not zeros_like:
        self._masks = np.zeros((self.n, MAX_ACTIONS), np.int8)  # zeroed pages, not a loop writing zeros
        self.after, self.offsets = _next_turns(self.boards, self.dice, self.live, self.kind, self.features,
                                               self._obs, self._masks)

    def observation(self) -> dict[str, np.ndarray]:
        """``{"observation": float32[n, F + 12], "action_mask": int8[n, MAX_ACTIONS]}`` of the
        last :meth:`prepare`, fresh arrays on every prepare (kept by the caller, never changed)."""
        return {"observation": self._obs, "action_mask": self._masks}

    def final_observation(self, which: np.ndarray) -> dict[str, np.ndarray]:
        """The observations of the games ``which`` (int indices) that :meth:`play` has just
        ended: their last positions, no dice, no legal action."""
        return {"observation": observations(self.boards[which], np.zeros((len(which), 2), np.int64), self.encoding),
                "action_mask": np.zeros((len(which), MAX_ACTIONS), np.int8)}


def _high_first(dice: np.ndarray) -> np.ndarray:
    return np.stack([dice.max(axis=1), dice.min(axis=1)], axis=1)


@njit(cache=True)
def _agent_moves(after, offsets, live, which, actions, boards, rewards, terminated, illegal, to_bot, going,
                 stop_at_illegal):
    """The agent's moves in the live games ``which``: an action outside the legal ones loses a
    single game (or, with ``stop_at_illegal``, nothing is played and ``-1 - i`` is returned for
    the first such game ``i``); a move that bears off the last checker wins its points; the
    other afterstates go to the bot, from its side, into ``to_bot`` (their games in ``going``).
    Returns how many."""
    n = boards.shape[0]
    if stop_at_illegal:
        for i in range(n):
            if which[i] and live[i] and not 0 <= actions[i] < offsets[i + 1] - offsets[i]:
                return -1 - i
    k = 0
    for i in range(n):
        if not (which[i] and live[i]):
            continue
        a = actions[i]
        if not 0 <= a < offsets[i + 1] - offsets[i]:
            illegal[i] = True
            rewards[i] = -1.0
            terminated[i] = True
            continue
        row = offsets[i] + a
        won = game_result(after[row])
        if won:
            rewards[i] = won
            terminated[i] = True
            for s in range(2):
                for p in range(25):
                    boards[i, s, p] = after[row, s, p]
            continue
        for p in range(25):
            to_bot[k, 0, p] = after[row, 1, p]
            to_bot[k, 1, p] = after[row, 0, p]
        going[k] = i
        k += 1
    return k


@njit(cache=True)
def _random_replies(to_bot, going, opp_dice, my_dice, uniform, boards, dice, rewards, terminated):
    """The random bot's replies, as :meth:`bgnet.bots.simple.RandomBot.choose_moves` draws them
    from ``uniform`` (its generator's next ``len(to_bot)`` numbers), applied."""
    k = to_bot.shape[0]
    rolls = np.empty((k, 2), np.int64)
    for r in range(k):
        g = going[r]
        rolls[r, 0] = max(opp_dice[g, 0], opp_dice[g, 1])
        rolls[r, 1] = min(opp_dice[g, 0], opp_dice[g, 1])
    after, _, offsets = generate_batch(to_bot, rolls)
    replies = np.empty((k, 2, 25), np.int8)
    for r in range(k):
        count = offsets[r + 1] - offsets[r]
        row = offsets[r] + np.int64(uniform[r] * count)
        for s in range(2):
            for p in range(25):
                replies[r, s, p] = after[row, s, p]
    _apply_replies(replies, going, my_dice, boards, dice, rewards, terminated)


_OPENINGS: list[tuple[np.ndarray, np.ndarray]] = []


def _opening_moves() -> tuple[np.ndarray, np.ndarray]:
    """``(after, offsets)``: the legal afterstates of the starting position for each opening roll
    (higher die, lower: 2-1, 3-1, 3-2, 4-1, ..., 6-5, :func:`_opening_index`), as
    :func:`bgnet.engine.movegen.generate_batch` lists them; made on the first call."""
    if not _OPENINGS:
        rolls = np.array([(hi, lo) for hi in range(2, 7) for lo in range(1, hi)], np.int64)
        after, _, offsets = generate_batch(np.repeat(start_position()[None], len(rolls), axis=0), rolls)
        _OPENINGS.append((after, offsets))
    return _OPENINGS[0]


@njit(cache=True, inline="always")
def _opening_index(hi, lo):
    return (hi - 1) * (hi - 2) // 2 + lo - 1


@njit(cache=True, inline="always")
def _opening_dice(mine, other):
    """The opening roll from :func:`opening_rolls`' draws: ``(higher, lower, agent first)``."""
    theirs = (mine - 1 + other) % 6 + 1
    return max(mine, theirs), min(mine, theirs), mine > theirs


@njit(cache=True)
def _bot_openings(mine, other):
    """How many of the opening rolls drawn (as :func:`opening_rolls` draws them) go to the bot."""
    k = 0
    for r in range(mine.shape[0]):
        k += not _opening_dice(mine[r], other[r])[2]
    return k


@njit(cache=True)
def _random_openings(slots, mine, other, later, uniform, opening_after, opening_offsets, boards, games_dice,
                     live):
    """New games in ``slots`` with the opening rolls drawn as :func:`opening_rolls` draws them
    (``mine``, ``other``); where the bot rolled the higher die, the random bot plays its opening
    move as its ``choose_moves`` would (drawing from ``uniform``, from the starting position's
    afterstates :func:`_opening_moves`) and the agent is on roll with ``later`` (higher first)."""
    start = _START
    j = 0
    for r in range(slots.shape[0]):
        i = slots[r]
        live[i] = True
        hi, lo, agent_first = _opening_dice(mine[r], other[r])
        if not agent_first:
            at = _opening_index(hi, lo)
            lo_row, count = opening_offsets[at], opening_offsets[at + 1] - opening_offsets[at]
            row = lo_row + np.int64(uniform[j] * count)
            j += 1
            for p in range(25):
                boards[i, 0, p] = opening_after[row, 1, p]
                boards[i, 1, p] = opening_after[row, 0, p]
            games_dice[i, 0] = max(later[r, 0], later[r, 1])
            games_dice[i, 1] = min(later[r, 0], later[r, 1])
        else:
            for p in range(25):
                boards[i, 0, p] = start[0, p]
                boards[i, 1, p] = start[1, p]
            games_dice[i, 0], games_dice[i, 1] = hi, lo


@njit(cache=True)
def _apply_replies(replies, going, my_dice, boards, dice, rewards, terminated):
    """The bot's replies (``[agent, bot_after]``) in the games ``going``: a reply that bears off
    the bot's last checker loses the agent its points; the others leave the agent on roll with
    ``my_dice``."""
    for r in range(replies.shape[0]):
        g = going[r]
        for p in range(25):
            boards[g, 0, p] = replies[r, 1, p]
            boards[g, 1, p] = replies[r, 0, p]
        lost = game_result(replies[r])
        if lost:
            rewards[g] = -lost
            terminated[g] = True
        else:
            dice[g, 0] = max(my_dice[g, 0], my_dice[g, 1])
            dice[g, 1] = min(my_dice[g, 0], my_dice[g, 1])


@njit(cache=True)
def _end_games(terminated, live, dice):
    for i in range(live.shape[0]):
        if terminated[i]:
            live[i] = False
        if not live[i]:
            dice[i, 0] = dice[i, 1] = 0


@njit(cache=True)
def _next_turns(boards, dice, live, kind, features, obs, masks):
    """The agent's turn in every live game: ``(after, offsets)``, its legal afterstates in the
    canonical order (none for a finished game); ``obs`` (float32[n, features + 12]) gets every
    game's observation and ``masks`` (int8[n, MAX_ACTIONS], zeros) its legal actions."""
    n = boards.shape[0]
    playing = 0
    for i in range(n):
        playing += live[i]
    on_roll = np.empty((playing, 2, 25), np.int8)
    rolls = np.empty((playing, 2), np.int64)
    j = 0
    for i in range(n):
        if live[i]:
            for s in range(2):
                for p in range(25):
                    on_roll[j, s, p] = boards[i, s, p]
            rolls[j, 0], rolls[j, 1] = dice[i, 0], dice[i, 1]
            j += 1
    unsorted, _, sub = generate_batch(on_roll, rolls)
    after = _permute_rows(unsorted, canonical_order(unsorted, sub))
    offsets = np.zeros(n + 1, np.int64)
    j = 0
    for i in range(n):
        count = 0
        if live[i]:
            count = sub[j + 1] - sub[j]
            j += 1
        offsets[i + 1] = offsets[i] + count
        for a in range(count):
            masks[i, a] = 1
    encode_compiled(boards, kind, 1, obs[:, :features])
    for i in range(n):
        for u in range(DICE_UNITS):
            obs[i, features + u] = 0.0
        if dice[i, 0] > 0:
            obs[i, features + dice[i, 0] - 1] = 1.0
            obs[i, features + 6 + dice[i, 1] - 1] = 1.0
    return after, offsets


class OneGame:
    """The position and roll of an environment that plays one game through a :class:`Turns`
    (``self._turns``), as read-only views for its users."""

    _turns: Turns

    @property
    def board(self) -> np.ndarray:
        return self._turns.board

    @property
    def dice(self) -> np.ndarray:
        return self._turns.dice
