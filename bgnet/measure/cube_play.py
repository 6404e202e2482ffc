"""Play with the doubling cube: whole matches to N points, and money games with the cube.

The rules come from :class:`bgnet.engine.game.Match` and :class:`~bgnet.engine.game.Game`
(opening roll, cube access, dead cubes, the Crawford game, Jacoby); the bots supply the
decisions:

* **Doubling.** Before each roll where the rules let the player on roll double, his bot values
  the position and decides (``bot.cube_decisions``: five cubeless probabilities turned by
  :func:`bgnet.cube.decide_context`, with the cube and the score, into a cube action; a 0-ply net
  bot values its close decisions again at 1-ply). It doubles when that action is
  ``double_take`` or ``double_pass``; ``no_double`` and ``too_good`` play on.
* **Taking.** The other player answers with *his own* bot's view: his bot values the same
  position (the doubler on roll, as when the double was offered) and the same decision is made
  from those probabilities; he takes when its ``take`` says so (double/take worth less to the
  doubler than double/pass). The doubler's analysis is never used for the answer, so a strong
  taker is not misled by a weak doubler's estimate.
* **Moves.** ``bot.choose_moves`` for the position, dice and context (cube value and
  owner, score): a net bot ranks its moves by the match's own measure
  (:mod:`bgnet.cube.checker`: cubeful match winning chances at the score, cubeful money equity);
  bots that do not know the cube (pubeval, random, ``gnubg:N`` through ``gnubg_nn``) play their
  usual move. ``cubeless_play`` gives no context (the cubeless choice) instead,
  as do money games without the cube. A forced move (one legal afterstate) or no move is played
  without asking.

A bot without ``evaluate`` (random, pubeval) never doubles and takes every double. Each bot's own
cube settings (``bot.cube_settings()``: match equity table and cube efficiency) are used unless
``met``/``efficiency`` are given, which then apply to both.

Many matches (or games) are in flight at once: on each step every bot is asked once for all the
positions where it must decide, so batched bots (nets) play fast. Match ``i`` draws its dice
from its own generator seeded with ``(seed, i)``, so with deterministic bots every match is
reproducible whatever the batch size. Duplicate dice are not used for matches: cube actions
and scores make two matches with mirrored dice diverge at once, so the pairing would remove
little of the luck; the match win rate gets a Wilson interval from independent matches.
Money games can use duplicate dice (:class:`bgnet.measure.match.DiceSequences`, turn by turn,
games 2k and 2k+1 with the seats swapped) exactly as :func:`bgnet.measure.match.play_games`;
with ``cube=False`` they are the same cubeless games it plays, only recorded.

Player 0 of every match and game is bot A (the left column of a ``.mat`` file).
"""
from __future__ import annotations

import time

import numpy as np

from bgnet.bots.base import Bot
from bgnet.cube import load_met
from bgnet.engine.game import MAX_CUBE, MOVE, ROLL, Game, GameRecord, Match, MatchRecord, RuleError
from bgnet.measure.match import MAX_TURNS, DiceSequences, seating
from bgnet.measure.results import (
    COLUMNS,
    CubeStats,
    MatchPlayResult,
    MoneyCubeResult,
    game_rates,
    game_row,
    mat_names,
    money_session,
)
from bgnet.measure.stats import mean_ci95, paired_mean_ci95, wilson_ci95


def can_evaluate(bot: Bot) -> bool:
    """Whether ``bot`` values positions (:attr:`Bot.can_evaluate`), so it can use the cube."""
    return bot.can_evaluate


class CubePlayer:
    """A bot with what its cube decisions need, loaded once."""

    def __init__(self, bot: Bot, met=None, efficiency=None, cube_ply: int | None = None):
        self.bot = bot
        self.cube_ply = cube_ply  # the depth of its cube decisions; None: the bot's own
        self.name = bot.name
        self.cubes = can_evaluate(bot)
        own_met, own_efficiency = bot.cube_settings()
        self.met = load_met(met if met is not None else own_met)
        self.efficiency = efficiency if efficiency is not None else own_efficiency

    def decisions(self, boards: np.ndarray, contexts) -> list:
        """The bot's cube decisions (:meth:`bgnet.bots.base.Bot.cube_decisions`)."""
        return self.bot.cube_decisions(boards, contexts, self.cube_ply, met=self.met,
                                       efficiency=self.efficiency)


def cube_players(bot_a: Bot, bot_b: Bot, met, efficiency, cube_ply: int | None):
    """The two sides of a game with the cube. ``cube_ply`` (None: each bot's own choice) is the
    depth of the cube decisions of a bot that searches (a net bot); one that does not keeps its
    own."""
    def player(bot: Bot) -> CubePlayer:
        return CubePlayer(bot, met, efficiency, cube_ply if bot.searches else None)

    return player(bot_a), player(bot_b)


# ---------------------------------------------------------------------------------------------
# games in flight


class _MatchSlot:
    """One match being played: its games one after another, dice from its own generator."""

    def __init__(self, index: int, length: int, seed: int, names, max_cube: int):
        self.index = index
        self.match = Match(length, rng=np.random.default_rng([seed, index]), names=names,
                           max_cube=max_cube)
        self.turns = 0
        self.game = self._start()

    def _start(self) -> Game:
        game = self.match.new_game()
        game.opening_roll()
        self.turns = 0
        return game

    def roll(self) -> None:
        _check_turns(self.turns)
        self.game.roll()

    def next_game(self) -> bool:
        """After a game: start the next one (True) or report the match over (False)."""
        if self.match.over:
            return False
        self.game = self._start()
        return True


class _MoneySlot:
    """One money game, its rolls from a dice sequence indexed by the turn (duplicate dice)."""

    def __init__(self, index: int, dice: DiceSequences, duplicate: bool, jacoby: bool,
                 max_cube: int):
        seq, a_is_x = seating(np.array([index]), duplicate)
        self.index, self.dice, self.seq = index, dice, seq
        self.game = Game(jacoby=jacoby, number=index + 1, max_cube=max_cube)
        x, y = (int(v) for v in dice.opening(seq)[0])
        self.game.opening_roll((x, y) if a_is_x[0] else (y, x))  # (A's die, B's die)
        self.turns = 0

    def roll(self) -> None:
        d = self.dice.get(self.seq, np.array([self.turns]))[0]  # raises after MAX_TURNS turns
        self.game.roll((int(d[0]), int(d[1])))

    def next_game(self) -> bool:
        return False


def _check_turns(turns: int) -> None:
    if turns >= MAX_TURNS:
        raise RuntimeError(f"a game lasted {MAX_TURNS} turns: a bot is not making progress")


def _cube_step(slots, players, cube: bool) -> None:
    """Before the roll: each player on roll may double, and the opponent answers."""
    if not cube:
        return
    for p in (0, 1):
        doubler, taker = players[p], players[1 - p]
        if not doubler.cubes:
            continue
        group = [s for s in slots if s.game.player_on_roll == p and s.game.may_double()]
        if not group:
            continue
        boards = np.stack([s.game.board for s in group])
        contexts = [s.game.context() for s in group]
        offered = []
        for s, ctx, board, d in zip(group, contexts, boards, doubler.decisions(boards, contexts)):
            if d.double:
                s.game.double()
                offered.append((s, ctx, board))
        _answer(offered, taker)


def _answer(offered, taker: CubePlayer) -> None:
    """The taker's answers, from his own evaluation of the doubled position (see the module
    docstring); a bot that cannot evaluate takes."""
    if not offered:
        return
    if not taker.cubes:
        for s, _, _ in offered:
            s.game.take()
        return
    answers = taker.decisions(np.stack([b for _, _, b in offered]), [c for _, c, _ in offered])
    for (s, _, _), d in zip(offered, answers):
        if d.take:
            s.game.take()
        else:
            s.game.drop()


def _move_step(slots, players, cubeful: bool) -> None:
    """The players on roll play their dice: one ``choose_moves`` call per bot, given each
    position's context where the cube is in play (``cubeful``), else none."""
    by_player = ([s for s in slots if s.game.player_on_roll == 0],
                 [s for s in slots if s.game.player_on_roll == 1])  # before anyone plays
    for p in (0, 1):
        ask = []
        for s in by_player[p]:
            after, _ = s.game.legal_moves()
            if len(after) <= 1:  # no choice to make
                s.game.play(after[0] if len(after) else None)
                s.turns += 1
            else:
                ask.append(s)
        if not ask:
            continue
        boards = np.stack([s.game.board for s in ask])
        dice = np.array([s.game.dice for s in ask], np.int64)
        # each position's cube and score where they count: the mover's measure of a move
        contexts = [s.game.context() for s in ask] if cubeful else None
        chosen = players[p].bot.choose_moves(boards, dice, contexts)[0]
        for s, after in zip(ask, chosen):
            try:
                s.game.play(after)
            except RuleError as e:
                raise RuleError(f"{players[p].name} chose an illegal move: {e}") from None
            s.turns += 1



def _run(make_slot, total: int, players, cube: bool, batch: int, bar, on_game, on_done,
         cubeless_play: bool = False) -> None:
    """Play ``total`` slots, ``batch`` at a time, to the end: ``on_game(slot, game)`` after
    every game, ``on_done(slot)`` when a slot has nothing left to play. Checker plays are
    chosen with each position's cube and score where the cube is in play, unless ``cubeless_play``."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1; got {batch}")
    active: list[_MatchSlot | _MoneySlot] = []
    started = 0
    while active or started < total:
        while len(active) < batch and started < total:
            active.append(make_slot(started))
            started += 1
        _cube_step([s for s in active if s.game.phase == ROLL], players, cube)
        for s in active:
            if s.game.phase == ROLL:
                s.roll()
        _move_step([s for s in active if s.game.phase == MOVE], players, cube and not cubeless_play)
        still = []
        for s in active:
            if not s.game.over:
                still.append(s)
                continue
            on_game(s, s.game)
            if s.next_game():
                still.append(s)
            else:
                on_done(s)
                if bar is not None:
                    bar.update(1)
        active = still


# ---------------------------------------------------------------------------------------------
# the two entry points


def play_matches(bot_a: Bot, bot_b: Bot, length: int, matches: int, seed: int = 0,
                 progress: bool = True, *, batch: int = 256, keep_records: bool = False,
                 met=None, efficiency=None, max_cube: int = MAX_CUBE,
                 cubeless_play: bool = False, cube_ply: int | None = None) -> MatchPlayResult:
    """Play ``matches`` matches to ``length`` points between A (player 0) and B.

    ``batch`` matches are in flight at once. ``keep_records`` keeps every game's record (for
    :meth:`MatchPlayResult.save_mat`; it costs memory on long runs). ``met`` (a table, a shipped
    name or a GNU Backgammon XML file) and ``efficiency`` override both bots' cube settings.
    Bots choose their checker plays with the score and cube known
    (:meth:`bgnet.bots.base.Bot.choose_moves` with contexts); ``cubeless_play`` asks both for
    their cubeless choice instead, for comparison. ``cube_ply`` sets the depth of the cube
    decisions of bots that search (see :func:`cube_players`).
    """
    length, matches = _positive(length, "the match length"), _positive(matches, "matches")
    players = cube_players(bot_a, bot_b, met, efficiency, cube_ply)
    bar = _bar(matches, f"{players[0].name} vs {players[1].name}", "match", progress)
    t0 = time.perf_counter()
    try:
        rows, winners, records = _match_range(players, length, 0, matches, seed, batch, max_cube,
                                              cubeless_play, keep_records, bar)
    finally:
        if bar is not None:
            bar.close()
    return _match_result(players[0].name, players[1].name, length, rows, winners, records,
                         time.perf_counter() - t0, seed)


def play_matches_parallel(spec_a: str, spec_b: str, length: int, matches: int, workers: int,
                          seed: int = 0, progress: bool = True, *, batch: int = 256,
                          keep_records: bool = False, max_cube: int = MAX_CUBE,
                          cubeless_play: bool = False, cube_ply: int | None = None,
                          device: str = "cpu") -> MatchPlayResult:
    """:func:`play_matches` with the matches shared among ``workers`` processes, each loading
    the bots from their specs (as ``bgnet eval`` names them) with their own cube settings. Match
    ``i`` rolls the dice it rolls in one process, so the result, and the records
    ``keep_records`` keeps (in match order), are the same match for match; only the time
    differs."""
    from concurrent.futures import as_completed

    from bgnet.measure import workers as worker_pool

    length, matches = _positive(length, "the match length"), _positive(matches, "matches")
    n_workers = worker_pool.check_count(workers)
    step = max(1, -(-matches // (8 * n_workers)))  # several parts a worker: they finish together
    parts = [(lo, min(lo + step, matches)) for lo in range(0, matches, step)]
    rows: list[list[tuple]] = [[] for _ in range(matches)]
    winners = np.full(matches, -1, np.int64)
    records: list[MatchRecord | None] | None = [None] * matches if keep_records else None
    names = (spec_a, spec_b)
    bar = _bar(matches, f"{spec_a} vs {spec_b}", "match", progress)
    t0 = time.perf_counter()
    with worker_pool.pool(n_workers, (spec_a, spec_b), device) as pool:
        jobs = [pool.submit(_worker_matches, length, lo, hi, seed, batch, max_cube, cubeless_play,
                            cube_ply, keep_records) for lo, hi in parts]
        try:
            for job in as_completed(jobs):
                lo, part_rows, part_winners, part_records, names = job.result()
                rows[lo:lo + len(part_rows)] = part_rows
                winners[lo:lo + len(part_winners)] = part_winners
                if records is not None:
                    records[lo:lo + len(part_winners)] = part_records
                if bar is not None:
                    bar.update(len(part_winners))
        finally:
            if bar is not None:
                bar.close()
    return _match_result(names[0], names[1], length, rows, winners, records,
                         time.perf_counter() - t0, seed)


def _worker_matches(length: int, first: int, last: int, seed: int, batch: int, max_cube: int,
                    cubeless_play: bool, cube_ply: int | None, keep_records: bool = False):
    from bgnet.measure import workers as worker_pool

    bot_a, bot_b = worker_pool.bots()
    players = cube_players(bot_a, bot_b, None, None, cube_ply)
    rows, winners, records = _match_range(players, length, first, last, seed, batch, max_cube,
                                          cubeless_play, keep_records, None)
    return first, rows, winners, records, (players[0].name, players[1].name)


def _match_range(players, length: int, first: int, last: int, seed: int, batch: int,
                 max_cube: int, cubeless_play: bool, keep_records: bool, bar):
    """Matches ``first`` to ``last - 1`` (match ``i`` rolls the dice of ``(seed, i)``): per match
    its games' rows, the winner of each, and the records when ``keep_records``."""
    names = mat_names(players[0].name, players[1].name)
    n = last - first
    rows: list[list[tuple]] = [[] for _ in range(n)]  # per match: the order does not depend on batching
    winners = np.full(n, -1, np.int64)
    records: list[MatchRecord | None] | None = [None] * n if keep_records else None

    def done(slot: _MatchSlot) -> None:
        assert slot.match.winner is not None, "a slot is done when its match is over"
        winners[slot.index - first] = slot.match.winner
        if records is not None:
            records[slot.index - first] = slot.match.record()

    _run(lambda i: _MatchSlot(first + i, length, seed, names, max_cube), n, players, True, batch,
         bar, lambda s, g: rows[s.index - first].append(game_row(g)), done, cubeless_play)
    return rows, winners, records


def _match_result(name_a: str, name_b: str, length: int, rows, winners: np.ndarray, records,
                  seconds: float, seed: int) -> MatchPlayResult:
    matches = len(winners)
    table = np.array([row for match in rows for row in match], np.int64).reshape(-1, len(COLUMNS))
    wins = int((winners == 0).sum())
    return MatchPlayResult(
        bot_a=name_a, bot_b=name_b, length=length, matches=matches, wins=wins,
        win_rate=wins / matches, win_rate_ci95=wilson_ci95(wins, matches), games=len(table),
        games_per_match=len(table) / matches,
        crawford_games=int(table[:, COLUMNS.index("crawford")].sum()), **game_rates(table),
        cube=CubeStats.from_rows(table), seconds=seconds,
        matches_per_second=_per_second(matches, seconds),
        games_per_second=_per_second(len(table), seconds), seed=int(seed), winners=winners,
        rows=table, records=records)


def play_money_cube(bot_a: Bot, bot_b: Bot, games: int, seed: int = 0, jacoby: bool = False,
                    progress: bool = True, *, duplicate: bool = True, cube: bool = True,
                    batch: int = 256, keep_records: bool = False, met=None, efficiency=None,
                    max_cube: int = MAX_CUBE, cubeless_play: bool = False,
                    cube_ply: int | None = None) -> MoneyCubeResult:
    """Play ``games`` money games between A (player 0) and B, with the cube unless ``cube`` is
    False, under the Jacoby rule if ``jacoby``. With the cube, checker plays are chosen by
    cubeful equity (cube value and owner known) unless ``cubeless_play``.

    With ``duplicate`` (the default) ``games`` must be even: games 2k and 2k+1 roll the same dice
    turn by turn with the seats swapped, as :func:`bgnet.measure.match.play_games` does (the
    same dice for the same seed), and the interval comes from the pair means. ``keep_records``
    keeps the games as one money session for :meth:`MoneyCubeResult.save_mat`. ``cube_ply``
    as in :func:`play_matches`.
    """
    games = _check_money(games, duplicate, jacoby, cube)
    players = cube_players(bot_a, bot_b, met, efficiency, cube_ply)
    bar = _bar(games, f"{players[0].name} vs {players[1].name}", "game", progress)
    t0 = time.perf_counter()
    try:
        rows, kept = _money_range(players, games, 0, games, seed, jacoby, duplicate, cube, batch,
                                  max_cube, cubeless_play, keep_records, bar)
    finally:
        if bar is not None:
            bar.close()
    return _money_result(players[0].name, players[1].name, rows, kept, time.perf_counter() - t0,
                         seed, jacoby, duplicate, cube)


def play_money_cube_parallel(spec_a: str, spec_b: str, games: int, workers: int, seed: int = 0,
                             jacoby: bool = False, progress: bool = True, *,
                             duplicate: bool = True, cube: bool = True, batch: int = 256,
                             keep_records: bool = False, max_cube: int = MAX_CUBE,
                             cubeless_play: bool = False, cube_ply: int | None = None,
                             device: str = "cpu") -> MoneyCubeResult:
    """:func:`play_money_cube` with the games shared among ``workers`` processes, each loading
    the bots from their specs (as ``bgnet eval`` names them) with their own cube settings. The
    parts are whole duplicate pairs, and game ``i`` rolls the dice it rolls in one process, so
    the result, and the session ``keep_records`` keeps (its games in order), are the same game
    for game; only the time differs."""
    from concurrent.futures import as_completed

    from bgnet.measure import workers as worker_pool

    games = _check_money(games, duplicate, jacoby, cube)
    n_workers = worker_pool.check_count(workers)
    # Parts of whole pairs, several a worker so that the last ones finish together.
    step = max(2, -(-games // (8 * n_workers)) // 2 * 2)
    parts = [(lo, min(lo + step, games)) for lo in range(0, games, step)]
    rows = np.zeros((games, len(COLUMNS)), np.int64)
    kept: list[GameRecord | None] | None = [None] * games if keep_records else None
    names = (spec_a, spec_b)
    bar = _bar(games, f"{spec_a} vs {spec_b}", "game", progress)
    t0 = time.perf_counter()
    with worker_pool.pool(n_workers, (spec_a, spec_b), device) as pool:
        jobs = [pool.submit(_worker_money, games, lo, hi, seed, jacoby, duplicate, cube, batch,
                            max_cube, cubeless_play, cube_ply, keep_records) for lo, hi in parts]
        try:
            for job in as_completed(jobs):
                lo, part_rows, part_kept, names = job.result()
                rows[lo:lo + len(part_rows)] = part_rows
                if kept is not None:
                    kept[lo:lo + len(part_rows)] = part_kept
                if bar is not None:
                    bar.update(len(part_rows))
        finally:
            if bar is not None:
                bar.close()
    return _money_result(names[0], names[1], rows, kept, time.perf_counter() - t0, seed, jacoby,
                         duplicate, cube)


def _worker_money(games: int, first: int, last: int, seed: int, jacoby: bool, duplicate: bool,
                  cube: bool, batch: int, max_cube: int, cubeless_play: bool, cube_ply: int | None,
                  keep_records: bool):
    from bgnet.measure import workers as worker_pool

    bot_a, bot_b = worker_pool.bots()
    players = cube_players(bot_a, bot_b, None, None, cube_ply)
    rows, kept = _money_range(players, games, first, last, seed, jacoby, duplicate, cube, batch,
                              max_cube, cubeless_play, keep_records, None)
    return first, rows, kept, (players[0].name, players[1].name)


def _check_money(games, duplicate: bool, jacoby: bool, cube: bool) -> int:
    games = _positive(games, "games")
    if duplicate and games % 2:
        raise ValueError(f"with duplicate dice games come in pairs: the number of games must be "
                         f"even; got {games}")
    if jacoby and not cube:
        raise ValueError("the Jacoby rule needs the cube: without it gammons would never count")
    return games


def _money_range(players, games: int, first: int, last: int, seed: int, jacoby: bool,
                 duplicate: bool, cube: bool, batch: int, max_cube: int, cubeless_play: bool,
                 keep_records: bool, bar):
    """Games ``first`` to ``last - 1`` of ``games`` (game ``i`` rolls the dice it rolls among
    all of them): their rows, and their records when ``keep_records``."""
    dice = DiceSequences(games // 2 if duplicate else games, seed)
    n = last - first
    rows = np.zeros((n, len(COLUMNS)), np.int64)
    kept: list[GameRecord | None] | None = [None] * n if keep_records else None

    def game_over(slot: _MoneySlot, game: Game) -> None:
        rows[slot.index - first] = game_row(game)
        if kept is not None:
            kept[slot.index - first] = game.record

    _run(lambda i: _MoneySlot(first + i, dice, duplicate, jacoby, max_cube), n, players, cube,
         batch, bar, game_over, lambda s: None, cubeless_play)
    return rows, kept


def _money_result(name_a: str, name_b: str, rows: np.ndarray, kept, seconds: float, seed: int,
                  jacoby: bool, duplicate: bool, cube: bool) -> MoneyCubeResult:
    games = len(rows)
    winner, pts = rows[:, 0], rows[:, 1]
    points = np.where(winner == 0, pts, -pts)
    ppg, ci = paired_mean_ci95(points) if duplicate else mean_ci95(points)
    values = sorted(set(points.tolist()) | {1, 2, 3, -1, -2, -3}, reverse=True)
    names = mat_names(name_a, name_b)
    return MoneyCubeResult(
        bot_a=name_a, bot_b=name_b, games=games, wins=int((points > 0).sum()),
        win_rate=float((points > 0).mean()), ppg=ppg, ppg_ci95=ci, cube_play=bool(cube),
        jacoby=bool(jacoby), duplicate=bool(duplicate),
        histogram={f"{v:+d}": int((points == v).sum()) for v in values}, **game_rates(rows),
        cube=CubeStats.from_rows(rows), seconds=seconds,
        games_per_second=_per_second(games, seconds), seed=int(seed), points=points, rows=rows,
        records=None if kept is None else [money_session(kept, names, jacoby)])


def _positive(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{what} must be a whole number of at least 1; got {value!r}")
    return int(value)


def _per_second(n: int, seconds: float) -> float:
    return float(n / seconds) if seconds > 0 else float("inf")


def _bar(total: int, desc: str, unit: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, smoothing=0.1)
