"""bgnet's environments beside OpenSpiel's backgammon and pgx's, random legal actions, one core.

Printed side by side in one run, the process pinned to one core with one thread for numba and
XLA, every figure in CPU time of this process:

* games per second of the vector environment (``BackgammonVectorEnv``, random actions drawn from
  its masks, the random bot as the opponent: both sides play random legal moves), of OpenSpiel's
  ``pyspiel.load_game("backgammon")`` through its Python API (random legal actions, dice drawn
  from its chance outcomes), and of pgx's backgammon on the CPU (jit, vmap over a batch, random
  actions from its masks);
* the PettingZoo AEC environment's cost per step (``agent_iter``, ``last``, ``step``: one whole
  turn, its roll included) and per game, beside OpenSpiel's per turn (a chance step and the one or
  two decisions that play the roll), per decision (``legal_actions``, ``apply_action``: up to two
  checkers) and per game;
* the single environment with a bgnet bot as the opponent beside the bot's own decision on the
  same positions (its ``choose_moves``, and its one-call decision ``quick_choice`` where it has
  one, which the environment asks first), and the vector environment's cost per game and step
  beside the bot's batched decision.

    python3 benchmarks/bench_envs.py                  # about three minutes, pgx's compilation included
    python3 benchmarks/bench_envs.py --seconds 2 --rounds 1 --skip-pgx
"""
from __future__ import annotations

import argparse
import os
import random
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

# CPU time of this process, which is pinned to one core: on a machine shared with other work it
# counts what each side costs, not how long it waited for the core.
clock = time.process_time


def legal_counts(obs) -> np.ndarray:
    """The number of legal actions of each game: the legal ones are the first n of the mask, so
    n is the first 0 of its row (argmin of a bool array stops there; counting the whole
    3,060-wide rows would cost this loop more than a step of the environment)."""
    return obs["action_mask"].view(bool).argmin(axis=1)


def vector_env_games(num_envs: int, seconds: float) -> tuple[float, float]:
    """(games/s, µs per game-step) of the vector environment with random masked actions."""
    from bgnet.envs import BackgammonVectorEnv

    env = BackgammonVectorEnv(num_envs, opponent="random")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)

    def step(obs):
        actions = (rng.random(num_envs) * np.maximum(legal_counts(obs), 1)).astype(np.int64)
        return env.step(actions)

    for _ in range(30):  # compile and settle outside the timing
        obs = step(obs)[0]
    games = steps = 0
    start = clock()
    while clock() - start < seconds:
        obs, _, terminated, _, _ = step(obs)
        games += int(terminated.sum())
        steps += 1
    elapsed = clock() - start
    return games / elapsed, elapsed / (steps * num_envs) * 1e6


def engine_games(num_games: int, seconds: float) -> float:
    """Games/s of the bare engine: generate_batch and a random pick, no environment around it."""
    from bgnet.bots.simple import terminal_points
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import generate_batch

    rng = np.random.default_rng(0)
    boards = np.repeat(start_position()[None], num_games, axis=0)
    games = 0
    start = None
    for k in range(10**9):
        if k == 30:
            start, games = clock(), 0
        if start is not None and clock() - start >= seconds:
            break
        after, _, offsets = generate_batch(boards, rng.integers(1, 7, (num_games, 2)))
        pick = offsets[:-1] + (rng.random(num_games) * np.diff(offsets)).astype(np.int64)
        chosen = after[pick]
        done = terminal_points(chosen) > 0
        boards = np.ascontiguousarray(chosen[:, ::-1])
        boards[done] = start_position()
        games += int(done.sum())
    return games / (clock() - start)


def openspiel_games(seconds: float) -> tuple[float, float, float, float] | str:
    """(games/s, µs per decision, decisions per game, µs per turn) through OpenSpiel's Python API.
    A turn is a roll (a chance node) and the decisions that play it: one, or two for a double."""
    try:
        import pyspiel
    except ImportError:
        return "not installed (pip install open_spiel)"
    game = pyspiel.load_game("backgammon")
    rng = random.Random(0)
    games = decisions = turns = 0
    start = clock()
    while clock() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
                turns += 1
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        games += 1
    elapsed = clock() - start
    return games / elapsed, elapsed / decisions * 1e6, decisions / games, elapsed / turns * 1e6


def pgx_games(num_envs: int, seconds: float) -> tuple[float, float] | str:
    """(games/s, seconds to compile) of pgx's backgammon on the CPU, vmapped and jitted."""
    try:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental import auto_reset
    except ImportError:
        return "not installed (pip install pgx, which needs jax)"
    env = pgx.make("backgammon")
    step_all = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def play(state, key):
        k1, k2 = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k1, logits, axis=-1)
        state = step_all(state, action, jax.random.split(k2, num_envs))
        return state, state.terminated.sum()

    t = time.perf_counter()
    key = jax.random.PRNGKey(0)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(key, num_envs))
    state, done = play(state, key)
    done.block_until_ready()
    compile_s = time.perf_counter() - t
    games = 0
    start = clock()
    while clock() - start < seconds:
        key, sub = jax.random.split(key)
        state, done = play(state, sub)
        games += int(done)
    return games / (clock() - start), compile_s


def aec_steps(seconds: float) -> tuple[float, float]:
    """(µs per step, games/s) of the PettingZoo AEC environment with random masked actions."""
    from bgnet.envs import aec

    env = aec.env()
    rng = random.Random(0)
    games = steps = 0
    start = None
    while start is None or clock() - start < seconds:
        env.reset(seed=games)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(rng.randrange(int(np.count_nonzero(obs["action_mask"]))))
            steps += 1
        games += 1
        if start is None and games == 3:  # compiled and settled
            start, games, steps = clock(), 0, 0
    elapsed = clock() - start
    return elapsed / steps * 1e6, games / elapsed


class Recording:
    """A bot that records the positions it is asked to play, for timing it alone afterwards:
    batches through ``choose_moves``, single positions through its one-call decision
    (``quick_choice``, which the single environment asks first)."""

    def __init__(self, bot):
        self.bot, self.boards, self.dice, self.singles = bot, [], [], []
        self.name = bot.name

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        self.boards.append(np.array(boards))
        self.dice.append(np.array(dice))
        return self.bot.choose_moves(boards, dice, contexts, ply)

    def quick_choice(self, board, d1, d2, ply, ctx=None):
        quick = self.bot.quick_choice(board, d1, d2, ply, ctx)
        if quick is not None:
            self.singles.append((board.copy(), d1, d2))
        return quick

    def close(self):
        self.bot.close()


def bot_opponent(spec: str, seconds: float, num_envs: int) -> dict[str, float]:
    """The environments with ``spec`` as the opponent beside the bot's own decisions."""
    from bgnet.bots.load import load_bot
    from bgnet.envs import BackgammonEnv, BackgammonVectorEnv

    bot = load_bot(spec)
    recorder = Recording(bot)
    env = BackgammonEnv(opponent=bot)
    env.bot = recorder  # the environment calls the bot through the recorder
    rng = np.random.default_rng(1)
    pick = random.Random(1)
    obs, _ = env.reset(seed=1)
    steps = 0
    start = clock()
    while clock() - start < seconds:
        obs, _, terminated, _, _ = env.step(pick.randrange(int(np.count_nonzero(obs["action_mask"]))))
        steps += 1
        if terminated:
            obs, _ = env.reset()
    env_us = (clock() - start) / steps * 1e6
    # Every position the bot was asked in the loop, as (board, d1, d2).
    positions = [(b[0], int(d[0, 0]), int(d[0, 1])) for b, d in zip(recorder.boards, recorder.dice)]
    positions += recorder.singles
    t = clock()
    for b, d1, d2 in positions:  # its batched decision, one position at a time
        bot.choose_moves(b[None], np.array([[d1, d2]], np.int64))
    bot_us = (clock() - t) / len(positions) * 1e6
    t = clock()
    for b, d1, d2 in positions:  # its fastest decision of one position, as best_move takes it
        if bot.quick_choice(b, d1, d2, None) is None:
            bot.choose_moves(b[None], np.array([[d1, d2]], np.int64))
    quick_us = (clock() - t) / len(positions) * 1e6

    venv = BackgammonVectorEnv(num_envs, opponent=bot)
    obs, _ = venv.reset(seed=2)
    batches: list[tuple[np.ndarray, np.ndarray]] = []
    venv.bot = venv.games.bot = recorder
    recorder.boards, recorder.dice = [], []
    vsteps = 0
    start = clock()
    while clock() - start < seconds:
        obs, *_ = venv.step((rng.random(num_envs) * np.maximum(legal_counts(obs), 1)).astype(np.int64))
        vsteps += 1
    vec_us = (clock() - start) / (vsteps * num_envs) * 1e6
    batches = list(zip(recorder.boards, recorder.dice))
    t = clock()
    count = 0
    for b, d in batches:
        bot.choose_moves(b, d)
        count += len(b)
    batch_us = (clock() - t) / count * 1e6
    return {"env_us": env_us, "bot_us": bot_us, "quick_us": quick_us, "vec_us": vec_us, "batch_us": batch_us}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="timing of each measure")
    ap.add_argument("--envs", type=int, default=256, help="games in flight in the vector environments")
    ap.add_argument("--core", type=int, default=None, help="the core to run on (default: the first allowed)")
    ap.add_argument("--bot", default="bgnet-default", help="the opponent of the last measure")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the first measures, the best kept")
    ap.add_argument("--skip-pgx", action="store_true")
    a = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        core = a.core if a.core is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        print(f"pinned to core {core}")
    s = a.seconds

    # Rounds in turn, each figure the best of its rounds: a load that comes and goes falls on
    # every side alike.
    vec, raw, spiels, aecs = [], [], [], []
    for _ in range(a.rounds):
        vec.append(vector_env_games(a.envs, s))
        raw.append(engine_games(a.envs, s))
        spiels.append(openspiel_games(s))
        aecs.append(aec_steps(s))
    vec_gps, vec_us = max(vec)
    raw_gps = max(raw)
    spiel = spiels[0] if isinstance(spiels[0], str) else max(spiels)
    aec_us, aec_gps = min(aecs)
    pgx_result = "skipped (--skip-pgx)" if a.skip_pgx else pgx_games(a.envs, s)

    print(f"\nrandom legal moves for both sides, one core, CPU time; best of {a.rounds} rounds of {s:g} s")
    print(f"{'':46}{'games/s':>10}")
    print(f"{'bgnet vector env, ' + str(a.envs) + ' games in flight':46}{vec_gps:10.0f}"
          f"   ({vec_us:.1f} µs per game-step: the agent's move and the reply)")
    print(f"{'bgnet engine alone (no env), same batch':46}{raw_gps:10.0f}")
    if isinstance(spiel, str):
        print(f"{'OpenSpiel backgammon':46}{spiel:>10}")
    else:
        print(f"{'OpenSpiel backgammon (Python API)':46}{spiel[0]:10.0f}")
        print(f"{'  vector env / OpenSpiel':46}{vec_gps / spiel[0]:9.1f}x   (goal: 10x)")
    if isinstance(pgx_result, str):
        print(f"{'pgx backgammon':46}  {pgx_result}")
    else:
        print(f"{'pgx backgammon, CPU, ' + str(a.envs) + ' in a vmap':46}{pgx_result[0]:10.0f}"
              f"   (after {pgx_result[1]:.0f} s of compilation)")
        print(f"{'  vector env / pgx':46}{vec_gps / max(pgx_result[0], 1e-9):9.1f}x")

    # A step of the AEC environment is a whole turn: the roll is made inside it. OpenSpiel's
    # turn is a chance step and one decision (two for a double, each moving two checkers): the
    # same work, so its cost per turn is the figure to compare; its cost per decision is printed
    # too.
    print("\none game at a time, per step")
    print(f"{'bgnet AEC env (PettingZoo), a step: a turn':46}{aec_us:8.1f} µs a step, {aec_gps:6.1f} games/s")
    if not isinstance(spiel, str):
        print(f"{'OpenSpiel, a turn (roll and its decisions)':46}{spiel[3]:8.1f} µs a turn, {spiel[0]:6.1f} games/s")
        print(f"{'  AEC per step / OpenSpiel per turn':46}{spiel[3] / aec_us:7.1f}x   (goal: 2x);"
              f"  per game {aec_gps / spiel[0]:.1f}x")
        print(f"{'OpenSpiel, a decision (up to two checkers)':46}{spiel[1]:8.1f} µs a decision"
              f"   ({spiel[2]:.0f} decisions a game)")
        print(f"{'  AEC per step / OpenSpiel per decision':46}{spiel[1] / aec_us:7.1f}x")

    b = bot_opponent(a.bot, s, a.envs)
    print(f"\nwith {a.bot} as the opponent")
    print(f"{'single env, one step (move, reply, next moves)':46}{b['env_us']:8.1f} µs")
    print(f"{'the bot alone, its decision on those positions':46}{b['bot_us']:8.1f} µs"
          f"   (env / bot {b['env_us'] / b['bot_us']:.2f}x; choose_moves, one position a call)")
    print(f"{'  its one-call decision (as best_move)':46}{b['quick_us']:8.1f} µs"
          f"   (env / bot {b['env_us'] / b['quick_us']:.2f}x; the env asks the bot this way)")
    print(f"{'vector env, per game-step':46}{b['vec_us']:8.1f} µs")
    print(f"{'the bot alone, batched, per position':46}{b['batch_us']:8.1f} µs"
          f"   (env / bot {b['vec_us'] / b['batch_us']:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
