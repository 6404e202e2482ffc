"""Head-to-head matches between two bots: cubeless money games, played in batches, duplicate dice.

Many games advance together: on every ply each bot's ``choose_moves`` is called once, for all the
games where it is on roll, and finished games are replaced by new ones until all are played.

Duplicate dice: game sequence k is a fixed list of rolls, the opening roll first (two different
dice, one per seat; the higher die's seat starts and plays both), then one roll per later turn,
indexed by the turn number. Games 2k and 2k+1 use sequence k with the bots in opposite seats, so
each bot sees exactly the rolls the other saw, which removes much of the luck from the result.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

import numpy as np
from numba import njit

from bgnet.bots.base import Bot
from bgnet.bots.simple import terminal_points
from bgnet.engine.board import start_position
from bgnet.measure import workers as worker_pool
from bgnet.measure.stats import counted, mean_ci95, paired_mean_ci95, ppg_text

DICE_BLOCK = 64  # rolls are drawn in blocks of this many turns, when a game first needs them
MAX_TURNS = 20_000  # a game this long means a bot is not making progress


class DiceSequences:
    """The rolls of ``n`` game sequences, reproducible from ``seed`` and made on demand.

    Turn 0 is the opening roll: two different dice, seat X's die first. Turns 1, 2, ... are
    ordinary rolls. Block b of turns is drawn from its own generator seeded with ``(seed, b)``, so
    a sequence never depends on how far the other games have got.
    """

    def __init__(self, n: int, seed: int = 0):
        if n < 1:
            raise ValueError("need at least one dice sequence")
        self.n, self.seed = n, int(seed)
        self.table = np.empty((n, 0, 2), np.int8)

    def _grow(self) -> None:
        b = self.table.shape[1] // DICE_BLOCK
        rng = np.random.default_rng([self.seed, b])
        block = rng.integers(1, 7, size=(self.n, DICE_BLOCK, 2), dtype=np.int8)
        if b == 0:
            # Opening roll: seat Y's die is uniform over the five values seat X did not roll,
            # which is the distribution of re-rolling ties.
            x = block[:, 0, 0].astype(np.int64)
            y = (x - 1 + rng.integers(1, 6, size=self.n)) % 6 + 1
            block[:, 0, 1] = y
        self.table = np.concatenate([self.table, block], axis=1)

    def get(self, seq: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """Rolls int64[len(seq), 2] of sequences ``seq`` at turns ``turn``."""
        if len(turn) and int(turn.max()) >= MAX_TURNS:
            raise RuntimeError(f"a game lasted {MAX_TURNS} turns: a bot is not making progress")
        while len(turn) and int(turn.max()) >= self.table.shape[1]:
            self._grow()
        return self.table[seq, turn].astype(np.int64)

    def opening(self, seq: np.ndarray) -> np.ndarray:
        """Opening dice (seat X's, seat Y's) of sequences ``seq``."""
        return self.get(seq, np.zeros(len(seq), np.int64))


def seating(game: np.ndarray, duplicate: bool) -> tuple[np.ndarray, np.ndarray]:
    """Dice sequence of each game and whether bot A sits in seat X.

    With duplicate dice game 2k and 2k+1 share sequence k, A in seat X in the even game and in
    seat Y in the odd one. Without, every game has its own sequence and A is always seat X (the
    opening roll decides who starts, so each side still starts half the games).
    """
    game = np.asarray(game, np.int64)
    if duplicate:
        return game // 2, game % 2 == 0
    return game, np.ones(len(game), bool)


@dataclass
class MatchResult:
    """Outcome of a match, from bot A's side. Rates are fractions of all games; a gammon rate
    counts gammons and backgammons, a backgammon rate backgammons only."""

    bot_a: str
    bot_b: str
    games: int
    wins: int
    win_rate: float
    ppg: float
    ppg_ci95: float
    gammon_rate_a: float
    backgammon_rate_a: float
    gammon_rate_b: float
    backgammon_rate_b: float
    histogram: dict[str, int]
    mean_plies: float
    seconds: float
    games_per_second: float
    seed: int
    duplicate: bool
    points: np.ndarray = field(repr=False, compare=False)  # A's points, game by game

    def to_dict(self) -> dict:
        """Every field except the per-game points, as plain JSON-friendly values."""
        d = asdict(self)
        d.pop("points")
        return d

    def to_json(self, path: str | None = None, indent: int = 2) -> str:
        """The summary as JSON text; also written to ``path`` when one is given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    def summary(self) -> str:
        """A few human-readable lines."""
        h = self.histogram
        return "\n".join([
            f"{self.bot_a} vs {self.bot_b}: {counted(self.games, 'game')}"
            f" ({'duplicate dice' if self.duplicate else 'independent dice'}, seed {self.seed})",
            f"  {self.bot_a} points per game: "
            f"{ppg_text(self.ppg, self.ppg_ci95, self.games // 2 if self.duplicate else self.games)}",
            f"  wins {self.wins} ({100 * self.win_rate:.1f} %)",
            f"  gammons {100 * self.gammon_rate_a:.1f} % / {100 * self.gammon_rate_b:.1f} %,"
            f" backgammons {100 * self.backgammon_rate_a:.1f} % / {100 * self.backgammon_rate_b:.1f} %"
            f" ({self.bot_a} / {self.bot_b})",
            "  results: " + ", ".join(f"{k} {v}" for k, v in h.items()),
            f"  {self.mean_plies:.1f} plies a game, {self.games_per_second:.1f} games/s"
            f" ({self.seconds:.1f} s)",
        ])


def summarize(points: np.ndarray, plies: np.ndarray, seconds: float, name_a: str, name_b: str,
              seed: int, duplicate: bool) -> MatchResult:
    """Build a :class:`MatchResult` from A's points per game."""
    points = np.asarray(points, np.int64)
    n = len(points)
    ppg, ci = paired_mean_ci95(points) if duplicate else mean_ci95(points)
    hist = {f"{v:+d}": int((points == v).sum()) for v in (3, 2, 1, -1, -2, -3)}
    return MatchResult(
        bot_a=name_a, bot_b=name_b, games=n, wins=int((points > 0).sum()),
        win_rate=float((points > 0).mean()), ppg=ppg, ppg_ci95=ci,
        gammon_rate_a=float((points >= 2).mean()), backgammon_rate_a=float((points == 3).mean()),
        gammon_rate_b=float((points <= -2).mean()), backgammon_rate_b=float((points == -3).mean()),
        histogram=hist, mean_plies=float(np.mean(plies)), seconds=float(seconds),
        games_per_second=float(n / seconds) if seconds > 0 else float("inf"),
        seed=int(seed), duplicate=bool(duplicate), points=points,
    )


@njit(cache=True)
def _swap_sides(after, out, rows):
    """``out[rows[r]] = after[r]`` with the two sides exchanged (the opponent is now on roll)."""
    for r in range(rows.shape[0]):
        for i in range(25):
            out[rows[r], 0, i] = after[r, 1, i]
            out[rows[r], 1, i] = after[r, 0, i]


def play_games(bot_a: Bot, bot_b: Bot, games: int, seed: int = 0, duplicate: bool = True,
               batch: int = 2048, progress: bool = True) -> MatchResult:
    """Play ``games`` cubeless money games between two bots; the result is from A's side.

    ``batch`` games are in flight at once. With ``duplicate`` (the default) ``games`` must be
    even: the games come in pairs sharing their dice with the seats swapped, and the confidence
    interval is computed from the pair means. ``seed`` fixes the dice (and so, for deterministic
    bots, every game).
    """
    games = _check_match(games, duplicate, batch)
    bar = _progress_bar(games, f"{_name(bot_a)} vs {_name(bot_b)}", progress)
    t0 = time.perf_counter()
    try:
        points, plies = play_range(bot_a, bot_b, games, 0, games, seed, duplicate, batch,
                                   bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    return summarize(points, plies, seconds, _name(bot_a), _name(bot_b), seed, duplicate)


def _check_match(games: int, duplicate: bool, batch: int) -> int:
    """The number of games, refused where it (or the batch) cannot make a match."""
    games = int(games)
    if games < 1:
        raise ValueError(f"a match needs at least one game; got {games}")
    if duplicate and games % 2:
        raise ValueError(f"with duplicate dice games come in pairs: the number of games must be even; got {games}")
    if batch < 1:
        raise ValueError(f"batch must be at least 1; got {batch}")
    return games


def play_range(bot_a: Bot, bot_b: Bot, games: int, first: int, last: int, seed: int = 0,
               duplicate: bool = True, batch: int = 2048, on_done=None) -> tuple[np.ndarray, np.ndarray]:
    """Games ``first`` to ``last - 1`` of a match of ``games``: A's points and the plies of each.

    A part played alone gets the dice, and so the games, it gets in the whole match, which is
    what lets :func:`play_games_parallel` split a match among processes. ``on_done(k)`` is called
    as games finish.
    """
    n_seq = games // 2 if duplicate else games
    dice = DiceSequences(n_seq, seed)  # the whole match's dice, whatever part of it is played here
    slots = min(batch, last - first)
    board = np.empty((slots, 2, 25), np.int8)
    a_on_roll = np.zeros(slots, bool)
    turn = np.zeros(slots, np.int64)
    game_of = np.full(slots, -1, np.int64)
    seq_of = np.zeros(slots, np.int64)
    points = np.zeros(last - first, np.int8)
    plies = np.zeros(last - first, np.int32)
    start = start_position()

    def begin(slot_idx: np.ndarray, first_game: int) -> None:
        g = np.arange(first_game, first_game + len(slot_idx))
        seq, a_is_x = seating(g, duplicate)
        op = dice.opening(seq)
        board[slot_idx] = start
        turn[slot_idx] = 0
        game_of[slot_idx] = g
        seq_of[slot_idx] = seq
        a_on_roll[slot_idx] = a_is_x == (op[:, 0] > op[:, 1])  # the higher die's seat starts

    begin(np.arange(slots), first)
    next_game = first + slots
    while True:
        act = np.flatnonzero(game_of >= 0)
        if len(act) == 0:
            break
        rolls = dice.get(seq_of[act], turn[act])
        after = np.empty((len(act), 2, 25), np.int8)
        mine = a_on_roll[act]
        for bot, sel in ((bot_a, mine), (bot_b, ~mine)):
            if sel.any():
                after[sel] = bot.choose_moves(board[act[sel]], rolls[sel])[0]
        won = terminal_points(after)
        done = won > 0
        fin = act[done]
        g = game_of[fin]
        points[g - first] = np.where(a_on_roll[fin], 1, -1) * won[done]
        plies[g - first] = turn[fin] + 1
        go = act[~done]
        _swap_sides(after[~done], board, go)
        a_on_roll[go] = ~a_on_roll[go]
        turn[go] += 1
        game_of[fin] = -1
        refill = fin[: last - next_game]
        if len(refill):
            begin(refill, next_game)
            next_game += len(refill)
        if on_done is not None and len(fin):
            on_done(len(fin))
    return points, plies


def _name(bot: Bot) -> str:
    return bot.name


def _progress_bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="game", smoothing=0.1)


# ---------------------------------------------------------------------------------------------
# One match split among processes

def _worker_play(games: int, first: int, last: int, seed: int, duplicate: bool, batch: int):
    bot_a, bot_b = worker_pool.bots()
    points, plies = play_range(bot_a, bot_b, games, first, last, seed, duplicate, batch)
    return first, points, plies, _name(bot_a), _name(bot_b)


def play_games_parallel(spec_a: str, spec_b: str, games: int, workers: int, seed: int = 0,
                        duplicate: bool = True, batch: int = 2048, progress: bool = True,
                        device: str = "cpu") -> MatchResult:
    """:func:`play_games` with the games shared among ``workers`` processes, each loading the
    bots from their specs (as ``bgnet eval`` names them). Every game gets the dice it gets in one
    process, so the result is the same game for game; only the time differs.
    """
    from concurrent.futures import as_completed

    games = _check_match(games, duplicate, batch)
    n_workers = worker_pool.check_count(workers)
    # Parts of whole pairs, several per worker so that the last ones finish together.
    step = max(2, -(-games // (8 * n_workers)) // 2 * 2)
    parts = [(lo, min(lo + step, games)) for lo in range(0, games, step)]
    points = np.zeros(games, np.int64)
    plies = np.zeros(games, np.int32)
    bar = _progress_bar(games, f"{spec_a} vs {spec_b}", progress)
    t0 = time.perf_counter()
    with worker_pool.pool(n_workers, (spec_a, spec_b), device) as pool:
        jobs = [pool.submit(_worker_play, games, lo, hi, seed, duplicate, batch) for lo, hi in parts]
        try:
            for job in as_completed(jobs):
                lo, p, n, name_a, name_b = job.result()
                points[lo:lo + len(p)], plies[lo:lo + len(n)] = p, n
                if bar is not None:
                    bar.update(len(p))
        finally:
            if bar is not None:
                bar.close()
    seconds = time.perf_counter() - t0
    return summarize(points, plies, seconds, name_a, name_b, seed, duplicate)
