"""Rollouts: a position's value measured by playing it out many times, all trials at once.

Conventions (stated once here):

* A *root* is a position with its side on roll (``board[1]``) about to roll. Every number of a
  rollout is from the view of the root's side on roll, "the player": the five probabilities in
  GNU Backgammon's order (win, win gammon, win backgammon, lose gammon, lose backgammon; gammons
  included in wins), cubeless money equity, and cubeful equity normalised to the root's cube
  (money: points per unit of the cube; match: normalised match equity, with match winning chances
  beside it).
* A rollout of the candidate moves of a roll rolls out each move's afterstate with the opponent on
  roll, and reports it back from the mover's view.
* Trial ``t`` of a rollout gets the same dice whatever the root: the candidate moves of a roll are
  played out on the same dice streams, so their differences are measured more tightly than their
  values. The dice of a trial depend only on ``(seed, t, trials)``, so a rollout split among
  processes plays exactly the trials of one process.

Variance reduction, as the strong programs do it:

* *cycled first rolls*: trial ``t``'s first roll is the ``t mod 36``-th of the 36 combinations,
  its second the ``(t div 36) mod 36``-th of a seeded permutation of them (different for each first
  roll), so 1296 trials play every pair of opening rolls once;
* *luck correction*: each roll's luck is the evaluator's value of the roll taken (its best move,
  0-ply) minus the value averaged over all 21 rolls; the luck of every roll of the trial, seen from
  the player, is subtracted from the trial's result. Its mean over the rolls is zero by
  construction, so the corrected result has the same expectation and, with a good evaluator, a
  much smaller variance. The evaluator is the bot's own net for a net bot, else bgnet's shipped
  net (it only measures luck: the bot still plays every move).

With a cube (a cubeful rollout, a Match ID) the bot chooses every checker play of a trial by the
match's own measure at that trial's score, cube value and owner (its
:meth:`~bgnet.bots.base.Bot.choose_moves` with each trial's context, :mod:`bgnet.cube.checker`), and the
candidate moves of a roll are picked by it too; without one, or with ``cubeless_play``, by
cubeless money equity.

The hot path is batched: on each ply all live trials go through one call of the compiled move
generator for all 21 rolls and one evaluator call, in chunks of :data:`CHUNK` trials. At most
:data:`WINDOW` trials are under way at once, a new one starting as one ends, so trials end from
the first seconds on and progress is steady.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bgnet.bearoff import get_database, is_bearoff
from bgnet.bots.base import Bot
from bgnet.bots.search import best_of_rolls_by_position
from bgnet.engine.movegen import ROLL_WEIGHTS, ROLLS
from bgnet.nn.encode import game_results
from bgnet.nn.probs import OUTPUTS, equity, flip, terminal_probs_batch

if TYPE_CHECKING:
    from bgnet.cube.met import MatchEquityTable
    from bgnet.engine.state import MatchContext

# The index of every (d1, d2) among the 21 rolls.
ROLL_INDEX = np.zeros((7, 7), np.int64)
for _k, (_a, _b) in enumerate(ROLLS):
    ROLL_INDEX[_a, _b] = ROLL_INDEX[_b, _a] = _k
COMBOS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int64)  # the 36
DICE_BLOCK = 64  # later rolls are drawn in blocks of this many plies
CHUNK = 512  # trials whose 21 rolls are generated and evaluated in one call
WINDOW = 512  # trials under way at once: a batch large enough, and trials that end early
MOST_CREDIT = 0.95  # progress credited to a trial before it ends
MAX_PLIES = 2000  # a trial this long means a bot is not making progress


@dataclass(frozen=True)
class RolloutSettings:
    """How a rollout is played: ``trials``; ``truncate`` (stop after this many plies and use the
    bot's evaluation; None plays to the end); ``seed``; ``cycle`` (cycle the first two rolls);
    ``luck`` (luck correction); ``bearoff`` (stop where the bear-off database is exact and use it);
    ``cubeful`` (trials play the cube with bgnet's cube head); ``cubeless_play`` (the bot chooses
    the trials' checker plays, and the candidate moves are picked, by cubeless money equity even
    with a cube)."""

    trials: int = 1296
    truncate: int | None = None
    seed: int = 0
    cycle: bool = True
    luck: bool = True
    bearoff: bool = True
    cubeful: bool = False
    cubeless_play: bool = False

    def check(self) -> RolloutSettings:
        if isinstance(self.trials, bool) or int(self.trials) < 1:
            raise ValueError(f"a rollout needs at least one trial; got trials={self.trials!r}")
        if self.truncate is not None and int(self.truncate) < 0:
            raise ValueError(f"truncate is a number of plies, 0 or more; got {self.truncate!r}")
        if int(self.seed) < 0:
            raise ValueError(f"the seed must be 0 or more; got {self.seed!r}")
        return self


class DiceStreams:
    """The rolls of trials ``0 .. trials - 1`` (see the module docstring), made on demand."""

    def __init__(self, trials: int, seed: int, cycle: bool):
        self.trials, self.seed, self.cycle = int(trials), int(seed), bool(cycle)
        rng = np.random.default_rng([self.seed, 0x36])
        self.first = rng.permutation(36)
        self.second = np.stack([rng.permutation(36) for _ in range(36)])
        self.blocks: dict[int, np.ndarray] = {}

    def _block(self, b: int) -> np.ndarray:
        if b not in self.blocks:
            rng = np.random.default_rng([self.seed, 1 + b])
            self.blocks[b] = rng.integers(1, 7, size=(self.trials, DICE_BLOCK, 2), dtype=np.int64)
        return self.blocks[b]

    def get(self, trial: np.ndarray, ply: np.ndarray) -> np.ndarray:
        """int64[len(trial), 2]: the roll of each trial at its ply (0 = the root's first roll)."""
        out = np.empty((len(trial), 2), np.int64)
        for b in np.unique(ply // DICE_BLOCK):
            sel = ply // DICE_BLOCK == b
            out[sel] = self._block(int(b))[trial[sel], ply[sel] % DICE_BLOCK]
        if self.cycle:
            c0 = ply == 0
            out[c0] = COMBOS[self.first[trial[c0] % 36]]
            c1 = ply == 1
            t1 = trial[c1]
            out[c1] = COMBOS[self.second[self.first[t1 % 36], (t1 // 36) % 36]]
        return out


def flip_difference(d: np.ndarray) -> np.ndarray:
    """A difference of two probability vectors seen from the other side: :func:`flip` is affine
    (win' = 1 - win), so a difference flips without the constant: win' = -win, gammons swap."""
    return np.stack([-d[..., 0], d[..., 3], d[..., 4], d[..., 1], d[..., 2]], axis=-1)


def equity_difference(d: np.ndarray) -> np.ndarray:
    """Cubeless equity of a difference of probability vectors: :func:`equity` without its
    constant."""
    return np.asarray(equity(d), np.float64) + 1.0


# ---------------------------------------------------------------------------------------------
# evaluators


def luck_evaluator(bot: Bot):
    """The evaluator that measures luck for ``bot``: its own net when it has one, else the net of
    bgnet's shipped bot; None when neither exists (then no luck correction is possible)."""
    if bot.evaluator is not None:
        return bot.evaluator
    from bgnet.bots import default_bot_path

    path = default_bot_path()
    if path is None:
        return None
    from bgnet.bots.load import load_net_bot

    return load_net_bot(path).evaluator


def _reuses_luck_moves(bot: Bot, ev) -> bool:
    """Whether the bot's move for a roll is the best 0-ply move of ``ev`` (a 0-ply net bot), so
    the luck pass has already found it."""
    return bot.evaluator is ev and bot.ply == 0


# ---------------------------------------------------------------------------------------------
# cube play inside trials


@dataclass
class CubeSetup:
    """The cube and score of the roots: ``ctx`` is a :class:`bgnet.engine.state.MatchContext` with
    the root's side on roll as ``player_on_roll``; ``met`` and ``efficiency`` the cube head's
    settings (None: bgnet's defaults)."""

    ctx: MatchContext
    met: MatchEquityTable | str | None = None
    efficiency: object = None

    def score_of(self, player: int):
        """:class:`bgnet.cube.cubeful.MatchScore` seen by ``player`` (match play only)."""
        from bgnet.cube.cubeful import MatchScore
        from bgnet.cube.met import load_met

        c = self.ctx
        return MatchScore(c.away(player), c.away(1 - player), c.crawford, load_met(self.met))


def _game_points(result: int, cube: int, owner: int, ctx) -> int:
    """Points a game won by bearing off (``result`` 1, 2 or 3) is worth at cube ``cube``."""
    if ctx.is_money and ctx.jacoby and owner == -1:
        return cube  # Jacoby: gammons count single while the cube is centred
    return result * cube


# ---------------------------------------------------------------------------------------------
# the trials


@dataclass
class TrialOutcomes:
    """Per-trial results of a set of roots, from each root's player's view: ``raw[R, T, 5]`` the
    outcomes (exact for finished games, evaluated for truncated ones), ``luck[R, T, 5]`` the summed
    luck, ``cubeful[R, T]`` the cubeful result (money: points / root cube; match: MWC) with its own
    luck ``cube_luck[R, T]`` (zero without the cube), and ``plies[R, T]``."""

    raw: np.ndarray
    luck: np.ndarray
    cubeful: np.ndarray
    cube_luck: np.ndarray
    plies: np.ndarray


def expected_plies(roots: np.ndarray, truncate: int | None) -> np.ndarray:
    """float[R]: about how many plies a trial from each root lasts, for progress only: both pip
    counts over the mean roll's 8.17 pips, times 1.45 for wasted pips and hits (the mean over
    self-play games of the shipped bot from positions of every stage), at most ``truncate``."""
    pips = roots[:, :, :24].astype(np.int64) @ np.arange(1, 25) + 25 * roots[:, :, 24]
    plies = np.maximum(2.0, 1.45 * pips.sum(axis=1) / 8.17)
    return plies if truncate is None else np.minimum(plies, max(int(truncate), 1))


def play_trials(bot: Bot, roots: np.ndarray, settings: RolloutSettings, trial_ids: np.ndarray,
                cube: CubeSetup | None = None, ev=None, on_done=None,
                window: int = WINDOW) -> TrialOutcomes:
    """Play trials ``trial_ids`` of every root in ``roots`` (int8[R, 2, 25], side on roll about to
    roll) with ``bot``, at most ``window`` of them under way at once. ``ev`` measures luck (and
    makes the cube decisions); ``on_done(k)`` is called as the trials advance, ``k`` the
    progress made in trials (a fraction of a trial for each ply played, the rest of it when it
    ends: the calls add up to the number of trials)."""
    s = settings
    roots = np.ascontiguousarray(roots, np.int8).reshape(-1, 2, 25)
    trial_ids = np.asarray(trial_ids, np.int64)
    n_roots, n_trials = len(roots), len(trial_ids)
    n = n_roots * n_trials
    dice = DiceStreams(s.trials, s.seed, s.cycle)
    use_luck = s.luck and ev is not None
    # The luck's 0-ply moves are the bot's own only without a cube: with one the bot chooses by
    # the match's own measure (bgnet.cube.checker).
    by_cube = cube is not None and not s.cubeless_play
    reuse = use_luck and not by_cube and _reuses_luck_moves(bot, ev)
    db = get_database() if s.bearoff else None

    board = np.repeat(roots, n_trials, axis=0)
    trial = np.tile(trial_ids, n_roots)
    mine = np.ones(n, bool)  # the side on roll is the root's player
    ply = np.zeros(n, np.int64)
    raw = np.zeros((n, 5), np.float64)
    luck = np.zeros((n, 5), np.float64)
    live = np.zeros(n, bool)  # started and not finished
    finished = np.zeros(n, bool)
    cubeful = np.zeros(n, np.float64)
    cube_luck = np.zeros(n, np.float64)
    cube_val = np.ones(n, np.int64)
    owner = np.full(n, -1, np.int64)  # -1 centred, else the absolute player
    root_player = 0
    if cube is not None:
        root_player = cube.ctx.player_on_roll
        cube_val[:] = cube.ctx.cube_value
        owner[:] = cube.ctx.cube_owner

    # Progress in trials, a share of one credited on each ply a trial plays (by the expected
    # length of its game) and the rest when it ends, so the count moves from the first ply on.
    per_ply = np.repeat(1.0 / expected_plies(roots, s.truncate), n_trials)
    credit = np.zeros(n, np.float64)

    def report(idx: np.ndarray, new_credit) -> None:
        if on_done is not None and len(idx):
            gain = float(np.sum(new_credit - credit[idx]))
            credit[idx] = new_credit
            on_done(gain)

    def finish(idx: np.ndarray, probs_player: np.ndarray) -> None:
        raw[idx] = probs_player
        live[idx] = False
        finished[idx] = True
        report(idx, 1.0)

    # A root whose side not on roll has borne off everything is a finished game (a candidate move
    # that wins at once): the root's player has lost it.
    over = game_results(np.ascontiguousarray(board[:, ::-1]))
    if (over > 0).any():
        idx = np.flatnonzero(over > 0)
        if cube is not None:
            for i in idx:
                pts = _game_points(int(over[i]), int(cube_val[i]), int(owner[i]), cube.ctx)
                _set_cubeful(i, 1 - root_player, pts, root_player, cube, cubeful)
        finish(idx, flip(terminal_probs_batch(over[idx]).astype(np.float64)))

    # Trials start in waves of at most ``window`` at a time, trial by trial across the roots, a
    # new one as soon as one ends: the first ones end within seconds, so progress (and its
    # estimate) shows from the start, and the batches stay large.
    queue = np.arange(n).reshape(n_roots, n_trials).T.ravel()
    queue = queue[~finished[queue]]
    admitted = 0
    while True:
        room = window - int(live.sum())
        if room > 0 and admitted < len(queue):
            live[queue[admitted:admitted + room]] = True
            admitted += room
        if not live.any():
            break
        act = np.flatnonzero(live)
        if int(ply[act].max()) >= MAX_PLIES:
            raise RuntimeError(f"a trial lasted {MAX_PLIES} plies: the bot is not making progress")
        # Trials that stop here and take an evaluation instead of playing on.
        stop = np.zeros(len(act), bool)
        exact = np.zeros(len(act), bool)
        if s.truncate is not None:
            stop |= ply[act] >= s.truncate
        if db is not None:
            b = board[act]
            exact = is_bearoff(b) & (b[:, 0].sum(axis=1) <= db.k) & (b[:, 1].sum(axis=1) <= db.k)
            stop |= exact
        if stop.any():
            idx = act[stop]
            p = np.empty((len(idx), 5), np.float64)
            ex = exact[stop]
            if ex.any():
                assert db is not None  # only the database marks trials exact
                p[ex] = db.probabilities(board[idx[ex]])
            if (~ex).any():
                p[~ex] = np.asarray(bot.evaluate(np.ascontiguousarray(board[idx[~ex]])), np.float64)
            if cube is not None:
                _cube_stop(idx, p, board, mine, cube_val, owner, root_player, cube, cubeful)
            finish(idx, np.where(mine[idx, None], p, flip(p)))
            act = act[~stop]
            if len(act) == 0:
                continue
        rolls = dice.get(trial[act], ply[act])
        k = ROLL_INDEX[rolls[:, 0], rolls[:, 1]]
        before = None
        if use_luck:
            p21, chosen = best_of_rolls_by_position(ev, board[act], CHUNK)
            mean = np.einsum("nrk,r->nk", p21, ROLL_WEIGHTS)
            taken = p21[np.arange(len(act)), k]
            delta = taken - mean  # the mover's luck
            delta_player = np.where(mine[act, None], delta, flip_difference(delta))
            luck[act] += delta_player
            before = mean
            if cube is not None:
                cube_luck[act] += _cube_luck_scale(act, mine, cube_val, root_player, cube) \
                    * equity_difference(delta_player)
        if cube is not None:
            dropped = _cube_actions(act, board, before, ev, bot, mine, cube_val, owner,
                                    root_player, cube, cubeful)
            if dropped.any():
                idx = act[dropped]
                # A dropped double ends the game for the cube; its cubeless outcome is taken as
                # the position's value before the roll, so the cubeless figures stay unbiased.
                p = before[dropped] if before is not None else np.asarray(
                    ev.positions(np.ascontiguousarray(board[idx])), np.float64)
                finish(idx, np.where(mine[idx, None], p, flip(p)))
                keep = ~dropped
                act, rolls, k = act[keep], rolls[keep], k[keep]
                if reuse:
                    chosen = chosen[keep]
                if len(act) == 0:
                    continue
        if reuse:
            after = chosen[np.arange(len(act)), k]
        else:
            contexts = None
            if by_cube:
                assert cube is not None  # by_cube: the trials play the cube
                contexts = _move_contexts(cube, act, mine, cube_val, owner, root_player)
            after = bot.choose_moves(np.ascontiguousarray(board[act]), rolls, contexts)[0]
        won = game_results(after)
        done = won > 0
        if done.any():
            idx = act[done]
            p = terminal_probs_batch(won[done]).astype(np.float64)
            if cube is not None:
                _cube_game_over(idx, won[done], mine, cube_val, owner, root_player, cube, cubeful)
            ply[idx] += 1
            finish(idx, np.where(mine[idx, None], p, flip(p)))
        go = act[~done]
        board[go] = after[~done][:, ::-1]
        mine[go] = ~mine[go]
        ply[go] += 1
        report(go, np.minimum(credit[go] + per_ply[go], MOST_CREDIT))
    shape = (n_roots, n_trials)
    return TrialOutcomes(raw.reshape(shape + (5,)), luck.reshape(shape + (5,)),
                         cubeful.reshape(shape), cube_luck.reshape(shape), ply.reshape(shape))


def _mover(mine, idx, root_player):
    return np.where(mine[idx], root_player, 1 - root_player)


def _trial_ctx(cube: CubeSetup, mover: int, cube_value: int, owner: int):
    return cube.ctx.replace(cube_value=int(cube_value), cube_owner=int(owner), player_on_roll=int(mover),
                            turn=int(mover), dice=(0, 0), double_offered=False)


def _move_contexts(cube: CubeSetup, act, mine, cube_val, owner, root_player) -> list:
    """The context of each trial ``act[j]``'s mover, the cube as it stands in that trial: what
    its checker play is chosen in (one object per distinct cube, owner and mover)."""
    made: dict[tuple, MatchContext] = {}
    keys = zip(_mover(mine, act, root_player).tolist(), cube_val[act].tolist(), owner[act].tolist())
    return [made.setdefault(key, _trial_ctx(cube, *key)) for key in keys]


def _cube_luck_scale(act, mine, cube_val, root_player, cube: CubeSetup) -> np.ndarray:
    """Cubeful units per unit of cubeless money equity for each trial's luck: the cube's value
    relative to the root's (money), or half the MWC swing of a game at the current cube (match).
    Known before the roll, so the scaled luck still averages zero."""
    ctx = cube.ctx
    if ctx.is_money:
        return cube_val[act] / ctx.cube_value
    score = cube.score_of(root_player)
    return np.array([0.5 * (score.win(int(c)) - score.lose(int(c))) for c in cube_val[act]])


def _cube_actions(act, board, before, ev, bot, mine, cube_val, owner, root_player, cube,
                  cubeful) -> np.ndarray:
    """The cube head's decision for every trial whose side on roll may double; updates cube and
    owner, and returns which trials ended by a dropped double (their cubeful result set)."""
    from bgnet.cube import decide_context

    dropped = np.zeros(len(act), bool)
    movers = _mover(mine, act, root_player)
    may = np.array([_trial_ctx(cube, m, c, o).may_double(int(m))
                    for m, c, o in zip(movers, cube_val[act], owner[act])], bool)
    if not may.any():
        return dropped
    sel = np.flatnonzero(may)
    if before is not None:
        probs = before[sel]
    else:
        probs = np.asarray(ev.positions(np.ascontiguousarray(board[act[sel]])) if ev is not None
                           else bot.evaluate(np.ascontiguousarray(board[act[sel]])), np.float64)
    for j, p in zip(sel, probs):
        i = act[j]
        p = np.clip(p, 0.0, 1.0)
        p[1] = min(p[1], p[0])
        p[2] = min(p[2], p[1])
        p[3] = min(p[3], 1.0 - p[0])
        p[4] = min(p[4], p[3])
        d = decide_context(tuple(float(x) for x in p), _trial_ctx(cube, movers[j], cube_val[i], owner[i]),
                           board[i], met=cube.met, efficiency=cube.efficiency)
        if d.action == "double_take":
            cube_val[i] *= 2
            owner[i] = 1 - movers[j]
        elif d.action == "double_pass":
            dropped[j] = True
            _set_cubeful(i, movers[j], int(cube_val[i]), root_player, cube, cubeful)
    return dropped


def _set_cubeful(i, winner: int, points: int, root_player: int, cube: CubeSetup, cubeful) -> None:
    """The cubeful result of trial ``i`` when ``winner`` wins ``points``."""
    ctx = cube.ctx
    sign = 1.0 if winner == root_player else -1.0
    if ctx.is_money:
        cubeful[i] = sign * points / ctx.cube_value
    else:
        score = cube.score_of(root_player)
        cubeful[i] = score.win(points) if sign > 0 else score.lose(points)


def _cube_game_over(idx, results, mine, cube_val, owner, root_player, cube, cubeful) -> None:
    movers = _mover(mine, idx, root_player)  # the side that just bore off its last checker
    for i, m, r in zip(idx, movers, results):
        pts = _game_points(int(r), int(cube_val[i]), int(owner[i]), cube.ctx)
        _set_cubeful(i, int(m), pts, root_player, cube, cubeful)


def _cube_stop(idx, probs_mover, board, mine, cube_val, owner, root_player, cube, cubeful) -> None:
    """Cubeful value of trials stopped early (truncated or exact bear-off), from the cube head's
    cubeful equity of the proper action of the side on roll."""
    from bgnet.cube import decide_context

    movers = _mover(mine, idx, root_player)
    ctx = cube.ctx
    for i, m, p in zip(idx, movers, probs_mover):
        d = decide_context(tuple(float(x) for x in p), _trial_ctx(cube, m, cube_val[i], owner[i]),
                           board[i], met=cube.met, efficiency=cube.efficiency)
        if ctx.is_money:
            v = d.equity * cube_val[i] / ctx.cube_value  # d.equity is per unit of the trial's cube
            cubeful[i] = v if m == root_player else -v
        else:
            mwc = d.mwc
            assert mwc is not None  # a match's cube decision has its match winning chances
            cubeful[i] = mwc if m == root_player else 1.0 - mwc


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class RolloutResult:
    """One root's rollout, from its player's view (see the module docstring). ``*_se`` are
    standard errors of the means; ``diff`` and ``diff_se`` (candidate moves only): equity (cubeful
    in a cubeful rollout, else cubeless) minus the best candidate's, and the standard error of that
    difference, measured trial by trial on the shared dice."""

    position_id: str
    probabilities: list
    probabilities_se: list
    equity: float
    equity_se: float
    trials: int
    mean_plies: float
    move: str | None = None
    after_position_id: str | None = None
    cubeful_equity: float | None = None
    cubeful_equity_se: float | None = None
    mwc: float | None = None
    mwc_se: float | None = None
    diff: float | None = None
    diff_se: float | None = None
    _eq_trials: np.ndarray | None = field(default=None, repr=False, compare=False)
    _cf_trials: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        d["probabilities"] = dict(zip(OUTPUTS, self.probabilities))
        d["probabilities_se"] = dict(zip(OUTPUTS, self.probabilities_se))
        return d


def _se(x: np.ndarray) -> float:
    n = len(x)
    return float(np.std(x, ddof=1) / np.sqrt(n)) if n > 1 else float("nan")


def summarize(outcomes: TrialOutcomes, r: int, cube: CubeSetup | None, flip_view: bool = False,
              position: str = "") -> RolloutResult:
    """The result of root ``r``; ``flip_view`` reports it for the other side (a candidate move's
    afterstate is rolled out with the opponent on roll)."""
    vals = outcomes.raw[r] - outcomes.luck[r]
    if flip_view:
        vals = flip(vals)  # the mean of flipped values is the flip of the mean: flip is affine
    eq = np.asarray(equity(vals), np.float64)
    res = RolloutResult(
        position_id=position, probabilities=[float(v) for v in vals.mean(axis=0)],
        probabilities_se=[_se(vals[:, k]) for k in range(5)], equity=float(eq.mean()),
        equity_se=_se(eq), trials=int(vals.shape[0]), mean_plies=float(outcomes.plies[r].mean()),
        _eq_trials=eq,
    )
    if cube is not None:
        c = outcomes.cubeful[r] - outcomes.cube_luck[r]
        ctx = cube.ctx
        if ctx.is_money:
            c = -c if flip_view else c
            res.cubeful_equity, res.cubeful_equity_se = float(c.mean()), _se(c)
            res._cf_trials = c
        else:
            c = 1.0 - c if flip_view else c
            player = ctx.player_on_roll if not flip_view else 1 - ctx.player_on_roll
            score = cube.score_of(player)
            res.mwc, res.mwc_se = float(c.mean()), _se(c)
            hi, lo = score.win(ctx.cube_value), score.lose(ctx.cube_value)
            res.cubeful_equity = score.to_equity(res.mwc, ctx.cube_value)
            res.cubeful_equity_se = 2.0 * res.mwc_se / (hi - lo) if hi > lo else 0.0
            res._cf_trials = (2.0 * c - hi - lo) / (hi - lo) if hi > lo else np.zeros_like(c)
    return res


@dataclass
class Rollout:
    """A whole rollout: the settings, the bot, and one :class:`RolloutResult` per root (the
    position, or the candidate moves best first)."""

    bot: str
    settings: RolloutSettings
    results: list
    seconds: float
    match_id: str | None = None
    dice: tuple | None = None
    luck_evaluator: str | None = None

    @property
    def trials_per_second(self) -> float:
        total = sum(r.trials for r in self.results)
        return total / self.seconds if self.seconds > 0 else float("inf")

    def to_dict(self) -> dict:
        return {"bot": self.bot, "settings": asdict(self.settings), "match_id": self.match_id,
                "dice": list(self.dice) if self.dice else None,
                "luck_evaluator": self.luck_evaluator, "seconds": self.seconds,
                "trials_per_second": self.trials_per_second,
                "results": [r.to_dict() for r in self.results]}


# ---------------------------------------------------------------------------------------------
# the entry points


def _split_trials(trials: int, workers: int) -> list[np.ndarray]:
    parts = max(1, min(trials, 4 * workers))
    return [p for p in np.array_split(np.arange(trials), parts) if len(p)]


def run_trials(bot: Bot, roots: np.ndarray, settings: RolloutSettings, cube: CubeSetup | None = None,
               workers: int = 1, spec: str | None = None, progress: bool = False,
               desc: str = "rollout") -> TrialOutcomes:
    """All trials of all roots, in this process or shared among ``workers`` processes (each loads
    the bot from ``spec``); the same trials, and so the same outcomes, either way."""
    settings = settings.check()
    roots = np.ascontiguousarray(roots, np.int8).reshape(-1, 2, 25)
    bar = None
    if progress:
        from tqdm import tqdm

        # The mean rate since the start (no smoothing): trials end in bunches, so a smoothed rate
        # swings; this one ends at the figure the result reports. The count grows by fractions
        # of a trial (see play_trials) and is shown whole.
        bar = tqdm(total=len(roots) * settings.trials, desc=desc, unit="trial", smoothing=0,
                   bar_format="{l_bar}{bar}| {n:.0f}/{total_fmt} [{elapsed}<{remaining}, "
                              "{rate_fmt}{postfix}]")
    try:
        if workers > 1:
            if spec is None:
                raise ValueError("a rollout shared among processes needs the bot's spec")
            return _run_parallel(spec, roots, settings, cube, workers, bar)
        ev = luck_evaluator(bot) if settings.luck or settings.cubeful else None
        out = play_trials(bot, roots, settings, np.arange(settings.trials), cube, ev,
                          bar.update if bar is not None else None)
        if bar is not None:
            bar.update(bar.total - bar.n)  # the fractions' rounding: every trial has ended
        return out
    finally:
        if bar is not None:
            bar.close()


def _worker_trials(roots, settings, cube, trial_ids):
    from bgnet.measure import workers as worker_pool

    (bot,) = worker_pool.bots()
    ev = luck_evaluator(bot) if settings.luck or settings.cubeful else None
    return trial_ids, play_trials(bot, roots, settings, trial_ids, cube, ev)


def _run_parallel(spec, roots, settings, cube, workers, bar) -> TrialOutcomes:
    from concurrent.futures import as_completed

    from bgnet.measure import workers as worker_pool

    n_roots, t = len(roots), settings.trials
    out = TrialOutcomes(np.zeros((n_roots, t, 5)), np.zeros((n_roots, t, 5)), np.zeros((n_roots, t)),
                        np.zeros((n_roots, t)), np.zeros((n_roots, t), np.int64))
    with worker_pool.pool(workers, (spec,), "cpu") as pool:
        jobs = [pool.submit(_worker_trials, roots, settings, cube, ids)
                for ids in _split_trials(t, workers)]
        for job in as_completed(jobs):
            ids, part = job.result()
            for name in ("raw", "luck", "cubeful", "cube_luck", "plies"):
                getattr(out, name)[:, ids] = getattr(part, name)
            if bar is not None:
                bar.update(len(ids) * n_roots)
    return out


def _bot_name(bot: Bot, spec: str | None) -> str:
    if spec:
        return spec
    return bot.name


def rollout_position(bot: Bot, board, settings: RolloutSettings = RolloutSettings(),
                     cube: CubeSetup | None = None, workers: int = 1, spec: str | None = None,
                     progress: bool = False) -> Rollout:
    """Roll out ``board`` (side on roll in ``board[1]``, before its roll)."""
    from bgnet.engine import position_id

    board = np.ascontiguousarray(board, np.int8).reshape(2, 25)
    cube, settings = _with_cube(cube, settings)
    t0 = time.perf_counter()
    out = run_trials(bot, board[None], settings, cube, workers, spec, progress)
    seconds = time.perf_counter() - t0
    res = summarize(out, 0, cube, position=position_id(board))
    return Rollout(_bot_name(bot, spec), settings, [res], seconds, luck_evaluator=_luck_name(bot, settings))


def _with_cube(cube: CubeSetup | None, settings: RolloutSettings):
    """A cube setup means a cubeful rollout; a cubeful rollout without one is money play with the
    cube centred."""
    if cube is None and settings.cubeful:
        from bgnet.engine.state import MatchContext

        cube = CubeSetup(MatchContext())
    if cube is not None and not settings.cubeful:
        settings = RolloutSettings(**{**asdict(settings), "cubeful": True})
    return cube, settings


def _luck_name(bot: Bot, settings: RolloutSettings) -> str | None:
    if not settings.luck:
        return None
    return "the bot's own net" if bot.evaluator is not None else "bgnet's shipped net"


def candidate_moves(bot: Bot, board: np.ndarray, d1: int, d2: int, top: int = 5,
                    named: list[str] | None = None, cube: CubeSetup | None = None,
                    cubeless_play: bool = False):
    """The moves to roll out: ``(afterstate, steps, notation)`` of the ``named`` moves (standard
    notation), or of the ``top`` best at 0-ply by the bot's net (by gnubg's 0-ply net for a gnubg
    bot, by bgnet's shipped net for the others), ranked by the match's own measure at the cube
    and score of ``cube`` (:mod:`bgnet.cube.checker`), by cubeless equity without it or with
    ``cubeless_play``."""
    from bgnet.engine.movegen import generate
    from bgnet.engine.notation import format_move, parse_move

    after, steps = generate(board, d1, d2)
    if len(after) == 0:
        return []
    if named:
        picks = []
        for text in named:
            j = parse_move(text, board, d1, d2)
            if j is not None and j not in picks:
                picks.append(j)
    else:
        from bgnet.bots.search import Score, measure_score, money_score, rank_afterstates

        ranker = _ranker(bot)
        probs = np.asarray(ranker.afterstate_probabilities(after, 0), np.float64)
        score: Score
        if cube is None or cubeless_play:
            score = money_score
        else:
            from bgnet.cube.checker import measure_for

            measure = measure_for(cube.ctx.replace(dice=(0, 0)), cube.met, cube.efficiency)
            score = measure_score(measure, after)
        picks = rank_afterstates(ranker, after, probs, 0, score=score)[:max(1, int(top))]
    return [(after[j], steps[j], format_move(steps[j], board)) for j in picks]


def _ranker(bot: Bot) -> Bot:
    """The bot whose 0-ply probabilities rank the candidates: the bot itself where it evaluates
    at 0-ply (net bots, gnubg:N), else bgnet's shipped bot."""
    if bot.can_evaluate and 0 in bot.plies:
        return bot
    from bgnet.bots import default_bot_path

    path = default_bot_path()
    if path is None:
        raise ValueError(f"{bot.name} cannot rank moves and no bgnet net is "
                         "installed: name the moves to roll out")
    from bgnet.bots.load import load_net_bot

    return load_net_bot(path)


def rollout_moves(bot: Bot, board, d1: int, d2: int, settings: RolloutSettings = RolloutSettings(),
                  top: int = 5, named: list[str] | None = None, cube: CubeSetup | None = None,
                  workers: int = 1, spec: str | None = None, progress: bool = False) -> Rollout:
    """Roll out the candidate moves of ``board`` with dice ``d1, d2`` (see :func:`candidate_moves`)
    on shared dice streams; results from the mover's view, best first, each with its difference to
    the best and that difference's standard error."""
    from bgnet.engine import position_id

    board = np.ascontiguousarray(board, np.int8).reshape(2, 25)
    cube, settings = _with_cube(cube, settings)
    cands = candidate_moves(bot, board, d1, d2, top, named, cube, settings.cubeless_play)
    if not cands:
        raise ValueError(f"no legal move with {d1}{d2}: the turn passes, there is nothing to roll out")
    roots = np.stack([a[::-1] for a, _, _ in cands])
    opp_cube = None
    if cube is not None:
        other = 1 - cube.ctx.player_on_roll
        opp_cube = CubeSetup(cube.ctx.replace(player_on_roll=other, turn=other, dice=(0, 0)),
                             cube.met, cube.efficiency)
    t0 = time.perf_counter()
    out = run_trials(bot, roots, settings, opp_cube, workers, spec, progress, desc="rollout moves")
    seconds = time.perf_counter() - t0
    results = []
    for r, (after, _, text) in enumerate(cands):
        res = summarize(out, r, opp_cube, flip_view=True, position=position_id(board))
        res.move, res.after_position_id = text, position_id(after[::-1])
        results.append(res)
    results.sort(key=lambda x: -(x.cubeful_equity if x.cubeful_equity is not None else x.equity))
    best = results[0]
    for res in results:
        d = _trial_differences(res, best)
        res.diff, res.diff_se = float(d.mean()), _se(d) if res is not best else 0.0
    return Rollout(_bot_name(bot, spec), settings, results, seconds, dice=(int(d1), int(d2)),
                   luck_evaluator=_luck_name(bot, settings))


def _trial_differences(res: RolloutResult, best: RolloutResult) -> np.ndarray:
    """Trial-by-trial equity of ``res`` minus ``best`` on their shared dice: cubeful equity in a
    cubeful rollout, else cubeless."""
    if res._cf_trials is not None:
        assert best._cf_trials is not None  # candidates of one rollout are all cubeful or none
        return res._cf_trials - best._cf_trials
    assert res._eq_trials is not None and best._eq_trials is not None  # summarize sets them
    return res._eq_trials - best._eq_trials
