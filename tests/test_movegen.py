"""Move generation checked against GNU Backgammon's (gnubg_nn.moves) and against the rules."""
import numpy as np
import pytest

from bgnet.engine.board import game_result, start_position
from bgnet.engine.movegen import generate, generate_batch
from bgnet.engine.sampling import random_chooser, sample_positions

gnubg_nn = pytest.importorskip("gnubg_nn")
from bgnet.measure.reference_play import compare_moves, describe_cases, gnubg_chooser, mixed_chooser, pubeval_chooser  # noqa: E402


@pytest.fixture(scope="module")
def positions():
    parts = [sample_positions(1500, seed=11, chooser=random_chooser),
             sample_positions(1500, seed=12, chooser=pubeval_chooser),
             sample_positions(1000, seed=13, chooser=gnubg_chooser),
             sample_positions(1000, seed=14, chooser=mixed_chooser(0.15))]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def test_same_afterstates_as_gnubg_on_5000_positions(positions):
    boards, dice = positions
    assert len(boards) >= 5000
    assert compare_moves(boards, dice) == []


# Four kinds of self-play (weak and strong, and strong with some random moves mixed in), so that
# bar entries, closed boards, bear-offs with contact, doubles, one-die-only and no-move cases all
# come up: (chooser, seed, share of the positions).
VERIFIED_SOURCES = {"random": (random_chooser, 0, 0.3), "pubeval": (pubeval_chooser, 1, 0.3),
                    "gnubg": (gnubg_chooser, 2, 0.2), "gnubg+10% random": (mixed_chooser(0.1), 3, 0.2)}


@pytest.mark.slow
@pytest.mark.gnubg
def test_same_afterstates_as_gnubg_on_200000_positions():
    """The whole verification of the engine against GNU Backgammon (about a minute): every legal
    afterstate of 200,000 positions, as sets, and every hard case of the rules met often."""
    differences, cases = {}, {}
    for name, (chooser, seed, share) in VERIFIED_SOURCES.items():
        boards, dice = sample_positions(int(200_000 * share), seed=seed, chooser=chooser)
        bad = compare_moves(boards, dice)
        if bad:
            differences[name] = [(boards[i].tolist(), dice[i].tolist()) for i in bad[:5]]
        for case, count in describe_cases(boards, dice).items():
            cases[case] = cases.get(case, 0) + count
    assert differences == {}, differences
    assert cases["positions"] == 200_000
    for case in ("doubles", "on_bar", "closed_out", "bear_off_with_contact", "no_move",
                 "one_die_only", "partial_doubles", "hits_possible"):
        assert cases[case] >= 500, (case, cases)


def test_sample_covers_the_hard_rules(positions):
    cases = describe_cases(*positions)
    # Every special rule must be exercised by the comparison above, not just ordinary moves.
    for case in ("doubles", "on_bar", "closed_out", "bear_off_with_contact", "no_move",
                 "one_die_only", "partial_doubles", "hits_possible"):
        assert cases[case] >= 10, (case, cases)


def test_opening_roll_counts_match_gnubg():
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            after, _ = generate(start_position(), d1, d2)
            assert len(after) == len(gnubg_nn.moves(start_position().tolist(), d1, d2, 1))


def test_many_moves_position_with_doubles():
    b = np.zeros((2, 25), np.int8)
    b[1, [5, 7, 9, 11, 13, 15, 17, 19, 21, 23]] = [1, 2, 1, 2, 1, 2, 2, 1, 2, 1]
    b[0, [0, 1]] = 1
    dice = np.array([[d, d] for d in range(1, 7)])
    assert compare_moves(np.stack([b] * 6), dice) == []
    assert len(generate(b, 1, 1)[0]) > 500


def test_higher_die_rule():
    # Entering from the bar: 3 enters on 22 and then 1 is blocked; 1 enters on 24 and 3 is blocked.
    b = np.zeros((2, 25), np.int8)
    b[0, [1, 2, 3, 4, 5, 6, 8, 10]] = [2, 1, 2, 2, 3, 2, 2, 1]
    b[1, 0], b[1, 24] = 6, 1
    after, steps = generate(b, 3, 1)
    assert [tuple(s) for s in steps[0] if s[0] >= 0] == [(25, 22)]
    assert len(after) == 1


def test_no_move_passes():
    b = np.zeros((2, 25), np.int8)
    b[0, :6] = 2  # closed board
    b[0, 6] = 3
    b[1, 24], b[1, 10] = 1, 14
    after, steps = generate(b, 6, 6)
    assert len(after) == 0
    a2, s2, off = generate_batch(b[None], np.array([[6, 6]]))
    assert off.tolist() == [0, 1] and (a2[0] == b).all() and (s2[0] == -1).all()


def test_rules_invariants_on_random_positions():
    boards, dice = sample_positions(2000, seed=5)
    after, steps, off = generate_batch(boards, dice)
    for i in range(len(boards)):
        rows = after[off[i]:off[i + 1]]
        assert (rows[:, 1].sum(axis=1) <= 15).all()
        # checkers are conserved: on board + borne off stays 15 for the mover, and the opponent
        # only loses checkers to its bar
        assert (rows[:, 0].sum(axis=1) == boards[i, 0].sum()).all()
        for r in rows:
            both = [(k) for k in range(24) if r[1, k] > 0 and r[0, 23 - k] > 0]
            assert both == []
            assert (r >= 0).all()
        # distinct
        assert len({r.tobytes() for r in rows}) == len(rows)


def test_game_result_kinds():
    b = np.zeros((2, 25), np.int8)
    b[0, 3] = 15
    assert game_result(b) == 2
    b[0, 3], b[0, 20] = 14, 1
    assert game_result(b) == 3
    b[0, 20] = 0
    assert game_result(b) == 1


def test_unique_boards_finds_exactly_the_repeats_among_afterstates():
    from bgnet.engine.board import unique_boards
    from bgnet.engine.sampling import sample_positions

    boards, _ = sample_positions(60, seed=4)
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], np.int8)
    after, _, off = generate_batch(np.repeat(boards, 21, axis=0), np.tile(rolls, (60, 1)))
    reference = np.unique(after.reshape(len(after), -1), axis=0)
    first, inverse = unique_boards(after)
    assert len(first) == len(reference) < len(after)  # rolls of equal sums meet
    assert np.array_equal(after[first][inverse], after)
    assert (np.diff(first) > 0).all() and (inverse[first] == np.arange(len(first))).all()
    # Within groups (a position's 21 rolls), repeats across groups are kept.
    g_first, g_inverse = unique_boards(after, off[::21])
    assert len(first) <= len(g_first) < len(after)
    assert np.array_equal(after[g_first][g_inverse], after)
    for lo, hi in zip(off[::21][:-1], off[::21][1:]):
        assert len(set(g_inverse[lo:hi].tolist())) == len(np.unique(after[lo:hi].reshape(hi - lo, -1), axis=0))
    with pytest.raises(ValueError, match="groups must rise"):
        unique_boards(after, np.array([0, 5]))
