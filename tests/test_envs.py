"""The Gymnasium and PettingZoo environments (bgnet.envs): the libraries' own checkers, autoreset,
seeding, rewards, and legal masks against GNU Backgammon's move generator."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pettingzoo = pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402

from bgnet.bots.simple import RandomBot  # noqa: E402
from bgnet.engine.board import start_position  # noqa: E402
from bgnet.engine.movegen import generate  # noqa: E402
from bgnet.engine.position_id import board_from_position_id  # noqa: E402
from bgnet.engine.sampling import random_chooser, sample_positions  # noqa: E402
from bgnet.envs import (  # noqa: E402
    ENV_ID,
    MAX_ACTIONS,
    BackgammonEnv,
    BackgammonVectorEnv,
    IllegalAction,
    aec,
    legal_afterstates,
    observation_bounds,
    observations,
)
from bgnet.envs.core import canonical_order  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def random_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (0 where no action is legal)."""
    counts = masks.sum(axis=1)
    return (rng.random(len(masks)) * np.maximum(counts, 1)).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# the libraries' own checkers


@pytest.mark.parametrize("encoding", ["tesauro", "contact"])
def test_gymnasium_env_checker_passes(encoding):
    env = gym.make(ENV_ID, encoding=encoding)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker reports its findings as warnings
        check_env(env.unwrapped)
    env.close()


def test_pettingzoo_api_test_and_seed_test_pass():
    api_test(aec.env(), num_cycles=400)
    seed_test(aec.env, num_cycles=400)


def test_gymnasiums_sync_vector_env_stacks_the_single_env():
    envs = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync")
    obs, info = envs.reset(seed=1)
    obs, *_, info = envs.step(np.zeros(2, np.int64))
    assert obs["action_mask"].shape == (2, MAX_ACTIONS) and info["dice"].shape == (2, 2)
    envs.close()


def test_make_vec_builds_the_vector_env_and_says_its_autoreset_mode():
    envs = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(envs.unwrapped, BackgammonVectorEnv)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    envs.close()


# ---------------------------------------------------------------------------------------------
# actions and observations


def test_actions_are_the_canonically_ordered_afterstates():
    boards = np.stack([start_position()] * 2)
    after, _, offsets = legal_afterstates(boards, np.array([[3, 1], [1, 3]]))
    first, second = after[offsets[0]:offsets[1]], after[offsets[1]:offsets[2]]
    assert (first == second).all()  # 3-1 and 1-3: one list
    mine = lambda rows: [tuple(r[1, ::-1]) + tuple(r[0, ::-1]) for r in rows]  # noqa: E731
    assert mine(first) == sorted(mine(first)) and len(set(mine(first))) == len(first)
    reference = {a.tobytes() for a in generate(start_position(), 3, 1)[0]}
    assert {a.tobytes() for a in first} == reference


def test_every_segment_is_sorted_small_or_large():
    boards, dice = sample_positions(400, seed=8)
    dice[::2, 1] = dice[::2, 0]  # doubles: many segments past the insertion sort's 24 rows
    after, _, offsets = legal_afterstates(boards, dice)
    key = lambda r: tuple(r[1, ::-1]) + tuple(r[0, ::-1])  # noqa: E731
    assert (np.diff(offsets) > 24).sum() > 20
    for i in range(len(boards)):
        keys = [key(r) for r in after[offsets[i]:offsets[i + 1]]]
        assert all(a < b for a, b in zip(keys, keys[1:])), i


def test_segments_in_any_order_are_sorted():
    # The generator finds afterstates nearly in the canonical order, which insertion sorts
    # cheaply; rows shuffled or reversed within each segment take the merging path.
    boards, dice = sample_positions(200, seed=9)
    dice[::2, 1] = dice[::2, 0]
    after, _, offsets = legal_afterstates(boards, dice)
    rng = np.random.default_rng(9)
    shuffled = np.concatenate([rng.permutation(np.arange(lo, hi)) if i % 2 else np.arange(lo, hi)[::-1]
                               for i, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:]))])
    order = canonical_order(after[shuffled], offsets)
    assert (shuffled[order] == np.arange(len(after))).all()


def test_the_most_moves_found_fit_the_action_space():
    # The most distinct moves tools/max_moves.py found (GNU Backgammon counts as many).
    b = board_from_position_id("AAAA/3+UUkopKQ")
    after, _, offsets = legal_afterstates(b[None], np.array([[1, 1]]))
    assert len(after) == 2226 <= MAX_ACTIONS
    order = canonical_order(after, offsets)
    assert (order == np.arange(len(after))).all()  # already sorted: sorting is stable


@pytest.mark.parametrize("encoding", ["tesauro", "extended", "contact"])
def test_observations_stay_within_their_bounds(encoding):
    low, high = observation_bounds(encoding)
    extremes = []
    for on_bar, stack in [(15, 0), (0, 15), (7, 8)]:
        b = np.zeros((2, 25), np.int8)
        b[1, 24], b[1, 23] = on_bar, stack  # far back
        b[0, 24], b[0, 0] = stack, on_bar
        extremes.append(b)
    gone = np.zeros((2, 25), np.int8)
    gone[0, 20] = 15  # the side on roll has borne everything off
    extremes.append(gone)
    boards, dice = sample_positions(2000, seed=4)
    boards = np.concatenate([boards, np.stack(extremes)])
    dice = np.concatenate([dice, np.zeros((len(extremes), 2), np.int64)])
    obs = observations(boards, dice, encoding)
    assert obs.dtype == np.float32 and (obs >= low).all() and (obs <= high).all()
    units = obs[:2000, -12:]
    assert (units.sum(axis=1) == 2).all()  # one unit per die


def test_every_step_offers_the_legal_moves_of_gnubg():
    """The environment's masks and afterstates, on the positions its own games reach, against
    GNU Backgammon's generator."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    env = BackgammonVectorEnv(48)
    obs, _ = env.reset(seed=11)
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(60):
        games = env.unwrapped.games
        after, offsets = env.afterstates()
        for i in np.flatnonzero(games.live):
            rows = after[offsets[i]:offsets[i + 1]]
            assert obs["action_mask"][i].sum() == len(rows) and obs["action_mask"][i, :len(rows)].all()
            assert _matches_gnubg(gnubg_nn, games.boards[i], games.dice[i], rows)
            checked += 1
        obs, *_ = env.step(random_legal(rng, obs["action_mask"]))
    assert checked > 2500


def _matches_gnubg(gnubg_nn, board, dice, rows) -> bool:
    ref = gnubg_nn.moves(board.tolist(), int(dice[0]), int(dice[1]), 1)
    if not ref:  # no legal move: the one action passes
        return len(rows) == 1 and (rows[0] == board).all()
    mine = [gnubg_nn.key_of_board(r.tolist()) for r in rows]
    return len(set(mine)) == len(mine) and set(mine) == {key for key, _ in ref}


@pytest.mark.slow
@pytest.mark.gnubg
def test_legal_masks_equal_gnubg_on_100000_positions():
    gnubg_nn = pytest.importorskip("gnubg_nn")
    from bgnet.measure.reference_play import describe_cases, mixed_chooser, pubeval_chooser

    parts = [sample_positions(60_000, seed=21, chooser=random_chooser),
             sample_positions(30_000, seed=22, chooser=pubeval_chooser),
             sample_positions(10_000, seed=23, chooser=mixed_chooser(0.2))]
    boards = np.concatenate([p[0] for p in parts])
    dice = np.concatenate([p[1] for p in parts])
    after, _, offsets = legal_afterstates(boards, dice)
    bad = [i for i in range(len(boards))
           if not _matches_gnubg(gnubg_nn, boards[i], dice[i], after[offsets[i]:offsets[i + 1]])]
    assert bad == [], f"{len(bad)} positions differ, the first {bad[:5]}"
    counts = np.diff(offsets)
    assert counts.max() <= MAX_ACTIONS
    cases = describe_cases(boards, dice)
    cases["forced"] = int((counts == 1).sum()) - cases["no_move"]
    print(f"\n{len(boards)} positions, most legal moves {counts.max()}: {cases}")
    for case in ("bear_off", "bear_off_with_contact", "one_die_only", "no_move", "partial_doubles",
                 "forced", "on_bar", "closed_out"):
        assert cases[case] >= 50, (case, cases)


# ---------------------------------------------------------------------------------------------
# autoreset, seeding, rewards


def test_next_step_autoreset_starts_a_new_game_and_ignores_the_action():
    env = BackgammonVectorEnv(6)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    ended = np.zeros(6, bool)
    restarts = 0
    for _ in range(3000):
        actions = random_legal(rng, obs["action_mask"])
        actions[ended] = MAX_ACTIONS - 1  # never legal: it must be ignored
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert not truncated.any() and "illegal_action" not in info
        for i in np.flatnonzero(ended):
            assert rewards[i] == 0 and not terminated[i]
            assert obs["action_mask"][i].sum() >= 1 and obs["observation"][i, -12:].sum() == 2
            mine = env.unwrapped.games.boards[i, 1]
            assert (mine == start_position()[1]).all()  # a new game: the agent has not moved yet
            restarts += 1
        for i in np.flatnonzero(terminated):
            assert abs(rewards[i]) in (1, 2, 3)
            assert obs["action_mask"][i].sum() == 0 and obs["observation"][i, -12:].sum() == 0
        ended = terminated
        if restarts >= 12:
            break
    assert restarts >= 12


def test_same_step_autoreset_puts_the_last_observation_in_info():
    env = BackgammonVectorEnv(6, autoreset_mode="SameStep")
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    obs, _ = env.reset(seed=6)
    rng = np.random.default_rng(6)
    seen = 0
    for _ in range(3000):
        obs, rewards, terminated, _, info = env.step(random_legal(rng, obs["action_mask"]))
        for i in np.flatnonzero(terminated):
            assert info["_final_obs"][i] and info["final_obs"][i]["action_mask"].sum() == 0
            assert obs["action_mask"][i].sum() >= 1  # already the next game
            seen += 1
        if seen >= 5:
            break
    assert seen >= 5


def _trajectory(seed: int, steps: int = 150, opponent: str = "random") -> list:
    env = BackgammonVectorEnv(4, opponent=opponent)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [obs["observation"]]
    for _ in range(steps):
        obs, rewards, terminated, _, _ = env.step(random_legal(rng, obs["action_mask"]))
        out += [obs["observation"], rewards, terminated]
    return out


def test_the_same_seed_gives_the_same_games():
    a, b, c = _trajectory(7), _trajectory(7), _trajectory(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


class _RandomByItsMoves(RandomBot):
    """The random bot, but not the random bot's type: the vector environment asks it for its
    moves through ``choose_moves`` instead of playing it inside its compiled step."""


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_the_compiled_random_opponent_plays_the_random_bots_own_games(mode):
    def play(bot):
        env = BackgammonVectorEnv(8, opponent=bot, autoreset_mode=mode)
        obs, _ = env.reset(seed=11)
        rng = np.random.default_rng(11)
        out = [obs["observation"], obs["action_mask"]]
        ended = 0
        for _ in range(300):
            obs, rewards, terminated, _, info = env.step(random_legal(rng, obs["action_mask"]))
            out += [obs["observation"], obs["action_mask"], rewards, terminated, env.afterstates()[0]]
            out += [info["final_obs"][i]["observation"] for i in np.flatnonzero(info.get("_final_obs", []))]
            ended += int(terminated.sum())
        return out, ended

    fast, ended = play(RandomBot())
    slow, _ = play(_RandomByItsMoves())
    assert ended >= 10  # games ended and restarted, the bot's opening moves included
    assert len(fast) == len(slow) and all(np.array_equal(a, b) for a, b in zip(fast, slow))


def test_a_seeded_single_env_replays_its_game():
    def play(seed):
        env = gym.make(ENV_ID, opponent="random")
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        moves = [info["dice"].tolist()]
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(rng.integers(obs["action_mask"].sum())))
            moves.append(obs["observation"].tobytes())
        return moves, reward

    assert play(3) == play(3)
    assert play(3) != play(4)


@pytest.mark.parametrize("opp_side, points", [
    ({20: 15}, 3),  # the opponent bore none off and has checkers in the winner's home: backgammon
    ({10: 15}, 2),  # none off: gammon
    ({10: 14}, 1),  # one off: a single game
])
def test_a_won_game_pays_its_points(opp_side, points):
    env = BackgammonEnv()
    board = np.zeros((2, 25), np.int8)
    board[1, 0] = 1  # the agent's last checker, on its 1-point
    for index, count in opp_side.items():
        board[0, index] = count
    env.reset(seed=0, options={"position": board, "dice": (6, 5)})
    obs, reward, terminated, truncated, _ = env.step(0)
    assert (reward, terminated, truncated) == (points, True, False)
    assert obs["action_mask"].sum() == 0
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_a_lost_game_costs_its_points():
    """The opponent bears off its last checker in its reply: the agent loses a gammon."""
    env = BackgammonEnv()
    board = np.zeros((2, 25), np.int8)
    board[1, 10] = 14  # the agent: 15 checkers, none off, on its 11- and 12-points
    board[1, 11] = 1
    board[0, 0] = 1  # the opponent's last checker
    obs, _ = env.reset(seed=0, options={"position": board, "dice": (1, 1)})
    assert obs["observation"][-12] == 1 and obs["observation"][-6] == 1  # the dice given: 1-1
    _, reward, terminated, _, _ = env.step(0)
    assert (reward, terminated) == (-2.0, True)


def test_a_step_before_reset_is_refused():
    with pytest.raises(gym.error.ResetNeeded):
        BackgammonEnv().step(0)
    with pytest.raises(gym.error.ResetNeeded):
        BackgammonVectorEnv(2).step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        aec.env().step(0)


def test_an_illegal_action_loses_or_raises():
    env = BackgammonEnv()
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step(MAX_ACTIONS - 1)
    assert (reward, terminated, info.get("illegal_action")) == (-1.0, True, True)
    strict = BackgammonEnv(illegal_action="raise")
    strict.reset(seed=1)
    with pytest.raises(IllegalAction, match="is not legal"):
        strict.step(MAX_ACTIONS - 1)
    two = aec.raw_env()
    two.reset(seed=2)
    mover = two.agent_selection
    two.step(MAX_ACTIONS - 1)
    other = [a for a in two.possible_agents if a != mover][0]
    assert two.rewards == {mover: -1, other: 1} and all(two.terminations.values())
    with pytest.raises(ValueError, match="illegal_action"):
        BackgammonEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="from 1 to 6"):
        env.reset(options={"position": "4HPwATDgc/ABMA", "dice": (7, 1)})
    with pytest.raises(ValueError):
        env.reset(options={"position": "not an ID"})


def test_observations_handed_out_are_never_changed_after():
    # The environments hand out each turn's own arrays without a copy: a later step, or another
    # call in the same turn, must not change what was handed out.
    two = aec.env()
    two.reset(seed=4)
    first = two.last()[0]
    again = two.observe(two.agent_selection)
    assert first["observation"] is not again["observation"] and first["action_mask"] is not again["action_mask"]
    kept = {k: v.copy() for k, v in first.items()}
    again["action_mask"][:] = 0
    for _ in range(6):
        two.step(0)
    assert all(np.array_equal(first[k], kept[k]) for k in kept)
    one = BackgammonEnv()
    obs, _ = one.reset(seed=4)
    kept = {k: v.copy() for k, v in obs.items()}
    for _ in range(3):
        one.step(0)
    assert all(np.array_equal(obs[k], kept[k]) for k in kept)


def test_aec_rewards_are_zero_sum_points():
    env = aec.env()
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    totals = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated:
            env.step(None)
            continue
        assert len(info["afterstates"]) == obs["action_mask"].sum()
        env.step(int(rng.integers(obs["action_mask"].sum())))
    assert sorted(totals.values()) in ([-1, 1], [-2, 2], [-3, 3])


# ---------------------------------------------------------------------------------------------
# opponents, rendering, the example


@pytest.mark.parametrize("spec", ["bgnet-default", "pubeval", "gnubg:0"])
def test_a_bot_is_an_opponent_by_its_spec(spec):
    if spec != "bgnet-default":
        pytest.importorskip("gnubg_nn")
    env = gym.make(ENV_ID, opponent=spec)
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(2)
    done = False
    while not done:
        obs, reward, done, _, _ = env.step(int(rng.integers(obs["action_mask"].sum())))
    assert reward in (-3, -2, -1, 1, 2, 3)
    env.close()


class _ByItsBatch:
    """A bot's ``choose_moves`` alone, without its one-call decision (``quick_choice``)."""

    def __init__(self, bot):
        self.bot, self.name = bot, bot.name

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        return self.bot.choose_moves(boards, dice, contexts, ply)

    def quick_choice(self, board, d1, d2, ply, ctx=None):
        return None


def test_the_single_env_plays_a_net_bots_own_moves_by_its_one_call_decision():
    from bgnet.bots.load import load_bot

    bot = load_bot("bgnet-default")

    def play(opponent):
        env = BackgammonEnv(opponent=bot)
        env.bot = opponent
        out = []
        for seed in range(3):
            obs, _ = env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            done = False
            while not done:
                obs, reward, done, _, _ = env.step(int(rng.integers(obs["action_mask"].sum())))
                out += [obs["observation"].tobytes(), reward]
        return out

    assert bot.quick_choice(start_position(), 3, 1, None) is not None  # the one-call path is taken
    assert play(bot) == play(_ByItsBatch(bot))


def test_render_draws_the_board():
    env = gym.make(ENV_ID, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "agent" in text and "random" in text and "rolled" in text
    two = aec.env(render_mode="ansi")
    two.reset(seed=0)
    assert "player_0" in two.render()


@pytest.mark.slow  # a fresh interpreter each: torch, the bots and the compiled code to load
@pytest.mark.parametrize("script, args, words", [
    ("train_vector_td.py", ["--tiny"], "vs random"),
    ("play_vs_bgnet_deep.py", ["--quiet", "--seed", "1"], "against bgnet-deep"),
])
def test_the_examples_run(script, args, words):
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's bgnet, whatever is installed
    done = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args],
                          capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert words in done.stdout
