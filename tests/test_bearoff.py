"""The bear-off database: ranking, tables against GNU Backgammon's own bear-off databases and
against hand counts and brute force, the cache, the evaluators' use of it, and self-play targets.

GNU Backgammon (gnubg_nn) evaluates pure bear-off positions with its own databases: an exact
two-sided table for up to 6 checkers a side, and one-sided turn distributions (15 checkers on six
points, the expected-turns policy) otherwise. Its tables hold 16-bit numbers, so agreement is to
about 1e-4; one-sided distributions also differ where two moves have expected turn counts a few
1e-5 apart (the 16-bit table picks the other one), which moves some probability between
neighbouring turn counts but not the expected count.
"""
from __future__ import annotations

import itertools
import warnings
from functools import cache

import numpy as np
import pytest

from bgnet.bearoff import (
    BearoffDatabase,
    bearoff_probabilities,
    get_database,
    index_of,
    is_bearoff,
    num_positions,
    one_sided_probabilities,
    position_of,
)
from bgnet.bearoff import cache as bcache
from bgnet.bearoff.build import ROLLS, TURNS, boards_for, build_two_sided, successor_batch
from bgnet.bearoff.index import all_positions
from bgnet.engine.board import game_result, start_position
from bgnet.engine.movegen import generate
from bgnet.engine.sampling import apply_steps

gnubg_nn = pytest.importorskip("gnubg_nn")

N_ALL = num_positions(15)


@pytest.fixture(scope="module")
def db():
    return get_database()


def random_bearoff_boards(rng, n, hi_me=N_ALL, hi_opp=N_ALL):
    """Bear-off boards whose sides are uniform over the one-sided positions below the limits."""
    b = np.zeros((n, 2, 25), np.int8)
    b[:, 1, :6] = position_of(rng.integers(1, hi_me, n))
    b[:, 0, :6] = position_of(rng.integers(1, hi_opp, n))
    return b


def gnubg_probs(boards):
    return np.array([gnubg_nn.probabilities(b.tolist(), 0) for b in boards])


# ---------------------------------------------------------------------------------------------
# Ranking


def test_index_is_a_bijection_with_fewer_checkers_first():
    pos = all_positions()
    assert pos.shape == (54264, 6) == (N_ALL, 6)
    assert len(np.unique(pos, axis=0)) == N_ALL
    assert np.array_equal(index_of(pos), np.arange(N_ALL))
    totals = pos.astype(int).sum(axis=1)
    assert totals.min() == 0 and totals.max() == 15 and np.all(np.diff(totals) >= 0)
    for k in range(16):
        assert (totals <= k).sum() == num_positions(k)
    rng = np.random.default_rng(0)
    for i in rng.integers(0, N_ALL, 50):
        assert index_of(position_of(int(i))) == i


def test_index_rejects_bad_counts():
    for bad, word in [([1, 2, 3], "6 entries"), ([0, 0, 0, 0, 0, 16], "at most 15"),
                      ([-1, 0, 0, 0, 0, 1], "negative"), ([0.5, 0, 0, 0, 0, 0], "whole")]:
        with pytest.raises(ValueError, match=word):
            index_of(bad)
    with pytest.raises(ValueError, match="indices run from 0"):
        position_of(N_ALL)


# ---------------------------------------------------------------------------------------------
# The moves the tables are built from


def test_build_moves_are_gnubgs_moves():
    """Every (position, roll) of a random sample: the mover positions the build uses are exactly
    those of gnubg_nn.moves on the same full board."""
    rng = np.random.default_rng(1)
    pos = all_positions()
    idx = rng.integers(1, N_ALL, 150)
    succ, off = successor_batch(idx, pos)
    boards = boards_for(pos[idx])
    for k, b in enumerate(boards):
        for r, (d1, d2) in enumerate(ROLLS):
            mine = set(succ[off[21 * k + r]:off[21 * k + r + 1]].tolist())
            ref = {index_of(np.asarray(gnubg_nn.board_from_position_key(key)[1][:6]))
                   for key in gnubg_nn.moves(b.tolist(), int(d1), int(d2))}
            assert mine == ref, (pos[idx[k]].tolist(), d1, d2)


# ---------------------------------------------------------------------------------------------
# One-sided tables


def checkers_on_the_one_point(n: int) -> np.ndarray:
    """By hand: n checkers on the 1-point; every roll bears off 2 (a double 4), no choices."""
    p = np.zeros((n + 1, TURNS))
    p[0, 0] = 1.0
    for r in range(1, n + 1):
        for t in range(1, TURNS):
            p[r, t] = 30 / 36 * p[max(r - 2, 0), t - 1] + 6 / 36 * p[max(r - 4, 0), t - 1]
    return p[n]


def test_a_sure_win_has_no_negative_chance_of_losing_a_gammon(db):
    """Four checkers left against fourteen: the win's sum of products passes 1 by rounding, and
    the lose-gammon chance, bounded by 1 - win, must stay at 0 (it was -1.6e-8)."""
    board = np.zeros((2, 25), np.int8)
    board[0, :6] = [2, 0, 0, 3, 5, 4]
    board[1, :6] = [2, 1, 0, 1, 0, 0]
    p = db.probabilities(board[None])[0]
    assert p[0] == pytest.approx(1.0) and (p >= 0).all() and (p <= 1).all()


def test_hand_counted_positions(db):
    one = db.turn_distribution([1, 0, 0, 0, 0, 0])
    assert one[1] == 1.0 and db.expected_turns([1, 0, 0, 0, 0, 0]) == 1.0
    # One checker on the 6-point: off at once with any 6 (11 rolls), a sum of 6 or more without a
    # 6 (12 rolls) or a double of 2s to 5s (4 rolls): 27 of 36; always off on the next turn.
    six = db.turn_distribution([0, 0, 0, 0, 0, 1])
    assert np.allclose(six[:3], [0, 27 / 36, 9 / 36]) and np.isclose(db.expected_turns([0, 0, 0, 0, 0, 1]), 1.25)
    # Two on the 6-point: both off in one turn only with a double of 3s or more.
    two = db.turn_distribution([0, 0, 0, 0, 0, 2])
    assert np.isclose(two[1], 4 / 36)
    assert np.isclose(db.expected_turns([0, 0, 0, 0, 0, 2]), (two * np.arange(TURNS)).sum())
    for n in (2, 5, 15):
        assert np.allclose(db.turn_distribution([n, 0, 0, 0, 0, 0]), checkers_on_the_one_point(n), atol=1e-6)
    # Gammon table: with 15 checkers on the 1-point the first checker is off on the first turn.
    assert db.first_off_distribution([15, 0, 0, 0, 0, 0])[1] == 1.0
    with pytest.raises(ValueError, match="all 15 checkers"):
        db.first_off_distribution([14, 0, 0, 0, 0, 0])


def test_one_sided_distributions_match_gnubgs_table(db):
    """All 54,263 positions against gnubg's one-sided table (entries for n = 1, 2, ...)."""
    pos = all_positions()
    ref = np.zeros((N_ALL, TURNS))
    for i in range(1, N_ALL):
        r = gnubg_nn.bearoff_probabilities(tuple(int(c) for c in pos[i]))
        ref[i, 1:1 + len(r)] = r
    mine = db.dist[1:].astype(np.float64)
    ref = ref[1:]
    diff = np.abs(mine - ref)
    mean_turns_diff = np.abs((mine - ref) @ np.arange(TURNS))
    print(f"\none-sided distributions vs gnubg: max |dP| {diff.max():.2e}, mean {diff.mean():.2e}, "
          f"rows off by > 1e-4: {(diff.max(axis=1) > 1e-4).sum()}; max |d E[turns]| {mean_turns_diff.max():.2e}")
    assert diff.mean() < 5e-6
    assert mean_turns_diff.max() < 5e-4  # 16-bit rounding of up to ~20 entries, times n
    assert diff.max() < 5e-3  # near-ties between moves (see the module docstring)


# ---------------------------------------------------------------------------------------------
# Race probabilities against GNU Backgammon's evaluation


def test_exact_small_positions_match_gnubgs_two_sided_table(db):
    rng = np.random.default_rng(2)
    b = random_bearoff_boards(rng, 300, num_positions(6), num_positions(6))
    d = np.abs(db.probabilities(b) - gnubg_probs(b))
    print(f"\nexact (<= 6 checkers a side) vs gnubg 0-ply: win max {d[:, 0].max():.1e}, mean {d[:, 0].mean():.1e}")
    assert d.max() < 1e-4


def test_one_sided_race_probabilities_match_gnubg(db):
    """Random pairs of positions (some with 15 checkers, so gammons), the one-sided
    approximation against gnubg 0-ply (its one-sided database where a side has over 6 checkers)."""
    rng = np.random.default_rng(3)
    b = random_bearoff_boards(rng, 400)
    # Gammons: a side with all 15 checkers, on its points 4-6 only, against one with 3 or fewer.
    pos = all_positions()
    high = np.flatnonzero((pos.sum(axis=1) == 15) & (pos[:, :3].sum(axis=1) == 0))
    b[:100, 0, :6] = pos[rng.choice(high, 100)]
    b[:100, 1, :6] = position_of(rng.integers(1, num_positions(3), 100))
    b[100:200] = b[:100, ::-1]
    ref = gnubg_probs(b)
    d = np.abs(db.probabilities(b, exact=False) - ref)
    names = ("win", "win gammon", "win bg", "lose gammon", "lose bg")
    print("\none-sided vs gnubg 0-ply (400 positions): "
          + "; ".join(f"{n} max {d[:, j].max():.1e} mean {d[:, j].mean():.1e}" for j, n in enumerate(names)))
    assert ref[:, 1].max() > 0.1 and ref[:, 3].max() > 0.1  # the sample does hold gammons
    assert d[:, 0].max() < 2e-3 and d[:, 0].mean() < 1e-4
    assert d[:, [1, 3]].max() < 1e-3 and d[:, [1, 3]].mean() < 2e-5
    assert d[:, [2, 4]].max() == 0.0
    # The shared database (exact where both sides have few checkers) on the same boards.
    d = np.abs(bearoff_probabilities(b) - ref)
    print(f"database (exact for <= {db.k} a side) vs gnubg: win max {d[:, 0].max():.1e}, mean {d[:, 0].mean():.1e}")
    assert d[:, 0].mean() < 2e-4


def test_database_moves_agree_with_gnubg(db):
    rng = np.random.default_rng(4)
    b = random_bearoff_boards(rng, 300)
    b[:100] = random_bearoff_boards(rng, 100, num_positions(7), num_positions(7))
    agree = total = 0
    for x in b:
        d1, d2 = (int(v) for v in rng.integers(1, 7, 2))
        if len(generate(x, d1, d2)[0]) < 2:
            continue
        total += 1
        mine, _ = db.best_move(x, d1, d2)
        agree += np.array_equal(mine, apply_steps(x, gnubg_nn.best_move(x.tolist(), d1, d2, 0)))
    print(f"\nbest move agrees with gnubg_nn.best_move(.., 0) in {agree} of {total} decisions")
    assert total > 150 and agree >= 0.97 * total


@pytest.mark.slow
def test_full_check_against_gnubg(db):
    """Larger samples: probabilities of 4,000 positions and the moves of 3,000 decisions."""
    rng = np.random.default_rng(12)
    b = random_bearoff_boards(rng, 4000)
    b[:1000] = random_bearoff_boards(rng, 1000, num_positions(6), num_positions(6))
    ref = gnubg_probs(b)
    d1 = np.abs(db.probabilities(b[:1000]) - ref[:1000])
    d2 = np.abs(db.probabilities(b[1000:], exact=False) - ref[1000:])
    print(f"\nexact vs gnubg (1,000): max {d1.max():.1e}; one-sided vs gnubg (3,000): max {d2.max():.1e}, "
          f"mean win {d2[:, 0].mean():.1e}")
    assert d1.max() < 1e-4 and d2.max() < 3e-3 and d2[:, 0].mean() < 1e-4
    agree = total = 0
    for x in random_bearoff_boards(rng, 3000):
        r1, r2 = (int(v) for v in rng.integers(1, 7, 2))
        if len(generate(x, r1, r2)[0]) < 2:
            continue
        total += 1
        agree += np.array_equal(db.best_move(x, r1, r2)[0],
                                apply_steps(x, gnubg_nn.best_move(x.tolist(), r1, r2, 0)))
    print(f"best move agrees with gnubg in {agree} of {total} decisions")
    assert agree >= 0.99 * total


# ---------------------------------------------------------------------------------------------
# Two-sided table


@cache
def brute_force(me: tuple, opp: tuple) -> float:
    """P(side on roll wins), by plain recursion over the 36 rolls and the engine's moves."""
    if sum(opp) == 0:
        return 0.0
    board = np.zeros((2, 25), np.int8)
    board[1, :6], board[0, :6] = me, opp
    total = 0.0
    for d1, d2 in itertools.product(range(1, 7), repeat=2):
        after, _ = generate(board, d1, d2)
        total += max(1.0 if game_result(a) else 1.0 - brute_force(tuple(opp), tuple(int(c) for c in a[1, :6]))
                     for a in after)
    return total / 36.0


def test_two_sided_table_equals_brute_force():
    table = build_two_sided(3)
    pos = all_positions()[:num_positions(3)]
    rng = np.random.default_rng(5)
    for a, b in rng.integers(1, len(pos), (40, 2)):
        want = brute_force(tuple(int(c) for c in pos[a]), tuple(int(c) for c in pos[b]))
        assert abs(table[a, b] - want) < 1e-12, (pos[a].tolist(), pos[b].tolist())


def test_two_sided_table_is_close_to_the_one_sided_approximation(db):
    n = num_positions(db.k)
    pos = all_positions()[:n]
    rng = np.random.default_rng(6)
    a, b = rng.integers(1, n, (2, 3000))
    boards = np.zeros((3000, 2, 25), np.int8)
    boards[:, 1, :6], boards[:, 0, :6] = pos[a], pos[b]
    exact = db.probabilities(boards)[:, 0]
    approx = db.probabilities(boards, exact=False)[:, 0]
    d = exact - approx
    print(f"\nexact - one-sided (<= {db.k} a side): mean {d.mean():+.1e}, mean |d| {np.abs(d).mean():.1e}, "
          f"max |d| {np.abs(d).max():.1e}")
    assert np.array_equal(exact, db.table[a, b])
    assert np.abs(d).mean() < 5e-3 and np.abs(d).max() < 0.05


# ---------------------------------------------------------------------------------------------
# Positions, errors


def test_is_bearoff_and_clear_errors(db):
    b = np.zeros((5, 2, 25), np.int8)
    b[:, :, 2] = 3
    b[1, 1, 24] = 1  # on the bar
    b[2, 0, 6] = 1  # opponent on its 7-point
    b[3, 1, 2] = 0  # side on roll has borne off everything: the game is over
    b[4, 1, 2] = 15
    assert is_bearoff(b).tolist() == [True, False, False, False, True]
    assert not is_bearoff(start_position()[None])[0]
    with pytest.raises(ValueError, match="board 1 is not a bear-off position"):
        bearoff_probabilities(b)
    with pytest.raises(ValueError, match="shape"):
        is_bearoff(np.zeros((3, 25), np.int8))
    with pytest.raises(ValueError, match="k="):
        BearoffDatabase(k=11)
    p = bearoff_probabilities(b[[0, 4]])
    assert p.shape == (2, 5) and p.dtype == np.float32
    assert np.allclose(one_sided_probabilities(b[[4]])[0, [0, 2, 4]], 0.0, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Cache


def test_cache_location_and_corrupt_files(tmp_path, monkeypatch, db):
    monkeypatch.setenv("BGNET_CACHE", str(tmp_path))
    assert bcache.cache_dir() == tmp_path
    assert bcache.cache_path("x").name == f"x-v{bcache.VERSION}.npz"
    # A corrupt one-sided file is rebuilt, with a warning, into the same tables.
    bcache.cache_path("bearoff-onesided").write_bytes(b"not a table")
    with pytest.warns(RuntimeWarning, match="corrupt"):
        fresh = BearoffDatabase(k=2)
    assert np.array_equal(fresh.dist, db.dist) and np.array_equal(fresh.first, db.first)
    assert np.allclose(fresh.table, db.table[:num_positions(2), :num_positions(2)], atol=1e-7)
    # Truncated two-sided file: rebuilt too; then read back silently.
    path = bcache.cache_path("bearoff-twosided-k2")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.warns(RuntimeWarning, match="corrupt"):
        BearoffDatabase(k=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = BearoffDatabase(k=2)
    assert np.array_equal(again.table, fresh.table)


def test_unwritable_cache_only_warns(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("BGNET_CACHE", str(blocker))  # a file where a directory should be
    with pytest.warns(RuntimeWarning, match="memory only"):
        out = bcache.load_or_build("toy", lambda: {"a": np.arange(3)}, lambda a: None)
    assert out["a"].tolist() == [0, 1, 2]


# ---------------------------------------------------------------------------------------------
# Evaluators


class Constant:
    """Mixin: a 'net' answering 0.5 everywhere, so the database's rows stand out."""
    encoding, split = "tesauro", False

    def _forward(self, x, is_race):
        return np.full((len(x), 5), 0.5, np.float32)


def test_evaluator_uses_the_database_in_bearoff_positions(db):
    from bgnet.bots.evaluator import Evaluator

    ev = type("Half", (Constant, Evaluator), {})()
    rng = np.random.default_rng(7)
    bo = random_bearoff_boards(rng, 20)
    boards = np.concatenate([bo, start_position()[None]])
    p = ev.positions(boards)
    assert np.array_equal(p[:20], db.probabilities(bo)) and np.all(p[20] == 0.5)
    # Afterstates [opponent, mover]: the mover's view of the position with the opponent on roll.
    a = ev.afterstates(boards)
    assert np.allclose(a[:20], db.mover_probabilities(bo))
    assert np.allclose(a[:20, 0], 1.0 - db.probabilities(bo[:, ::-1])[:, 0])
    # A finished game is scored exactly, not by the database.
    done = bo[:2].copy()
    done[:, 1] = 0
    done[1, 0, :6] = [0, 0, 0, 0, 0, 15]
    assert ev.afterstates(done).tolist() == [[1.0, float(done[0, 0].sum() == 15), 0.0, 0.0, 0.0],
                                             [1.0, 1.0, 0.0, 0.0, 0.0]]
    ev.bearoff = False
    assert np.all(ev.positions(boards) == 0.5)


def test_net_bot_plays_bearoff_moves_from_the_database(db):
    from bgnet.bots.evaluator import Evaluator
    from bgnet.bots.net import NetBot

    bot = NetBot(type("Half", (Constant, Evaluator), {})())
    rng = np.random.default_rng(8)
    boards = random_bearoff_boards(rng, 40)
    dice = rng.integers(1, 7, (40, 2))
    chosen = bot.choose_moves(boards, dice)[0]
    for b, (d1, d2), c in zip(boards, dice, chosen):
        after, _ = generate(b, int(d1), int(d2))
        assert np.isclose(db_equity(db, c), max(db_equity(db, x) for x in after), atol=1e-6)


def db_equity(db, after):
    r = game_result(after)
    if r:
        return float(r)
    p = db.mover_probabilities(after[None])[0]
    return 2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4]


# ---------------------------------------------------------------------------------------------
# Training targets


def test_lambda_returns_with_a_database_terminal(db):
    from bgnet.train.selfplay import lambda_returns

    rng = np.random.default_rng(9)
    bo = random_bearoff_boards(rng, 1)
    final = db.mover_probabilities(bo)[0]
    values = rng.random((4, 5)).astype(np.float32)
    out = np.empty((4, 5), np.float32)
    lambda_returns(values, 4, final, 1.0, out)  # λ = 1: the terminal, seen from each side
    flip = lambda p: np.array([1 - p[0], p[3], p[4], p[1], p[2]])  # noqa: E731
    assert np.allclose(out[3], final) and np.allclose(out[2], flip(final))
    assert np.allclose(out[1], final) and np.allclose(out[0], flip(final))


def test_selfplay_games_end_at_bearoff_with_database_targets(db):
    import torch

    from bgnet.bots.torch_eval import NetEvaluator
    from bgnet.nn.model import ValueNet
    from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings

    torch.manual_seed(0)
    ev = NetEvaluator(ValueNet("tesauro", 10))
    pool = SelfPlayPool(ev, SelfPlaySettings(parallel_games=24, lam=0.7, bearoff=True), np.random.default_rng(10))
    assert ev.bearoff
    fins = [pool.step() for _ in range(300)]
    fins = [f for f in fins if len(f.results)]
    assert pool.bearoff_games > 0
    checked = 0
    for f in fins:
        ends = np.cumsum(f.lengths) - 1
        for end, res in zip(ends, f.results):
            last, target = f.boards[end], f.targets[end]
            assert not is_bearoff(last[None])[0]
            assert abs(int(res)) in (1, 2, 3)
            if target[0] in (0.0, 1.0):
                continue  # a game played out to the end (e.g. a checker still back to the last)
            # Its target is the database's value of a legal bear-off afterstate of the last move.
            afters = np.concatenate([generate(last, int(a), int(b))[0] for a, b in ROLLS])
            afters = afters[is_bearoff(afters)]
            assert len(afters)
            assert np.abs(db.mover_probabilities(afters) - target).max(axis=1).min() < 1e-6
            checked += 1
    assert checked > 0
    pool_off = SelfPlayPool(ev, SelfPlaySettings(parallel_games=4, bearoff=False), np.random.default_rng(11))
    assert not ev.bearoff and pool_off.bearoff_games == 0
