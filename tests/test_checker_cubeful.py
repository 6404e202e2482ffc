"""Checker play by the match's own measure (:mod:`bgnet.cube.checker`).

Three kinds of evidence that a move is valued by the cubeful equity it leaves:

* the compiled :class:`MoveMeasure` equals :func:`reference_value`, the slow way through
  :func:`bgnet.cube.decide_context`, on random afterstates in every kind of context;
* scores where the right move follows from the probabilities by hand: double match point (a
  win is the match, gammons count nothing), the Crawford game (the leader saves gammons, the
  trailer's gammon wins the match), a dead cube post-Crawford; and the cube's owner changing the
  choice the way the slow way says it should;
* GNU Backgammon's own ``hint`` at the score, on positions where its cubeful choice is not its
  cubeless one: fed gnubg's probabilities for each move, bgnet ranks them as gnubg does.

Positions are written with the mover on roll in ``board[1]``; the contexts give player 1 the
roll, so a score ``(opponent's, mover's)``.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import selfplay_positions

import bgnet
from bgnet.bots.search import rank_moves
from bgnet.cube.checker import MoveMeasure, describe, measure_for, reference_value
from bgnet.engine import legal_moves
from bgnet.engine.board import swap
from bgnet.engine.position_id import board_from_position_id, position_id
from bgnet.engine.state import CENTERED, MatchContext
from bgnet.formats.match_id import match_context_from_id, match_id
from bgnet.nn.probs import equity as cubeless_equity

ME, OPP = 1, 0  # the mover is player 1 throughout
GNUBG = "/usr/games/gnubg"


def money(cube: int = 1, owner: int = CENTERED, jacoby: bool = False) -> MatchContext:
    return MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=ME, turn=ME,
                        jacoby=jacoby)


def match(my_away: int, opp_away: int, cube: int = 1, owner: int = CENTERED,
          crawford: bool = False, length: int = 7) -> MatchContext:
    return MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=ME, turn=ME,
                        crawford=crawford, match_length=length,
                        score=(length - opp_away, length - my_away))


def all_contexts() -> list[MatchContext]:
    """Money (centred, Jacoby, cube 2..8 owned either way) and 7-point matches at every score,
    cube 1..8 centred or owned either way, the Crawford games; post-Crawford scores come with
    them (a 1-away side outside the Crawford game)."""
    cubes = [(1, CENTERED)] + [(c, o) for c in (2, 4, 8) for o in (ME, OPP)]
    out = [money(), money(jacoby=True)] + [money(c, o) for c, o in cubes[1:]]
    out += [money(c, o, jacoby=True) for c, o in cubes[1:3]]
    for my_away in range(1, 8):
        for opp_away in range(1, 8):
            out += [match(my_away, opp_away, c, o) for c, o in cubes]
    out += [match(1, a, crawford=True) for a in range(1, 8)]
    out += [match(a, 1, crawford=True) for a in range(2, 8)]
    return out


def random_probs(rng, n: int) -> np.ndarray:
    """``n`` consistent probability rows (wins, gammons within wins, backgammons within gammons),
    a quarter of them without gammons, a few certain wins and losses among them."""
    w = rng.uniform(0.0, 1.0, n)
    w[:3] = (0.0, 1.0, 0.5)
    wg = w * rng.uniform(0.0, 0.6, n)
    lg = (1.0 - w) * rng.uniform(0.0, 0.6, n)
    plain = rng.random(n) < 0.25
    wg[plain] = lg[plain] = 0.0
    return np.stack([w, wg, wg * rng.uniform(0, 0.3, n), lg, lg * rng.uniform(0, 0.3, n)], 1)


@pytest.fixture(scope="module")
def afterstates() -> np.ndarray:
    """Boards from self-play (contact, races, bear-offs), read as afterstates ``[opponent, mover]``."""
    return np.array([b for b, _, _ in selfplay_positions(5, 400)])


@pytest.fixture(scope="module")
def bot():
    return bgnet.load_bot()


@pytest.fixture(scope="module")
def positions():
    """(board, d1, d2) met in self-play, the mover on roll."""
    return selfplay_positions(11, 300)


# ----------------------------------------------------------------------------------------------
# the compiled measure and the slow way


def test_compiled_measure_equals_the_slow_way(afterstates):
    rng = np.random.default_rng(3)
    contexts = all_contexts()
    assert len(contexts) > 350
    for ctx in contexts:
        probs = random_probs(rng, 6)
        after = afterstates[rng.integers(len(afterstates), size=6)]
        got = measure_for(ctx).values(probs, after)
        want = [reference_value(p, ctx, a) for p, a in zip(probs, after)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=str(ctx))


def test_one_call_for_many_contexts_equals_one_context_at_a_time(afterstates):
    rng = np.random.default_rng(4)
    contexts = all_contexts()
    parent_of = rng.integers(len(contexts), size=2000)
    probs = random_probs(rng, len(parent_of))
    after = afterstates[rng.integers(len(afterstates), size=len(parent_of))]
    got = MoveMeasure(contexts).values(probs, after, parent_of)
    for k, ctx in enumerate(contexts):
        rows = parent_of == k
        np.testing.assert_array_equal(got[rows], measure_for(ctx).values(probs[rows], after[rows]))


def test_the_same_context_seen_by_either_player_values_alike(afterstates):
    rng = np.random.default_rng(5)
    probs = random_probs(rng, 50)
    after = afterstates[:50]
    for ctx in all_contexts()[::7]:
        owner = ctx.cube_owner if ctx.cube_owner == CENTERED else 1 - ctx.cube_owner
        mirrored = ctx.replace(player_on_roll=OPP, turn=OPP, cube_owner=owner, score=ctx.score[::-1])
        np.testing.assert_array_equal(measure_for(ctx).values(probs, after),
                                      measure_for(mirrored).values(probs, after))


def test_without_a_cube_the_measure_is_cubeless_money_equity(afterstates):
    probs = random_probs(np.random.default_rng(6), 40)
    after = afterstates[:40]
    want = cubeless_equity(probs)
    for measure in (measure_for(None), measure_for(match(3, 5), cubeless_play=True)):
        assert measure.cubeless
        np.testing.assert_allclose(measure.values(probs, after), want, atol=1e-12)
    assert not measure_for(money()).cubeless and not measure_for(match(3, 5)).cubeless


def test_bad_contexts_are_refused():
    with pytest.raises(ValueError, match="power of two"):
        measure_for(money(cube=3))
    with pytest.raises(ValueError, match="match is over"):
        measure_for(match(0, 3))
    with pytest.raises(ValueError, match="parent_of"):
        MoveMeasure([money(), match(2, 2)]).values(np.full((2, 5), 0.1), np.zeros((2, 2, 25)))


def test_describe_names_the_measure():
    assert "EMG" in describe(match(2, 4)) and "MWC" in describe(match(2, 4))
    assert describe(money(2, OPP)) == "cubeful money equity"
    assert describe(None) == describe(match(2, 4), cubeless_play=True) == "cubeless money equity"


# ----------------------------------------------------------------------------------------------
# right answers known by hand


def _mwc(measure: MoveMeasure, probs, after) -> np.ndarray:
    return np.array([measure.to_mwc(v) for v in measure.values(probs, after)])


def test_double_match_point_values_a_move_by_its_winning_chances_alone(afterstates):
    probs = random_probs(np.random.default_rng(7), 60)
    after = afterstates[:60]
    for ctx in (match(1, 1), match(1, 1, length=1), match(2, 1, cube=2, owner=OPP),
                match(1, 2, cube=2, owner=ME)):
        # Every game ends the match: gammons and the cube count for nothing.
        np.testing.assert_allclose(_mwc(measure_for(ctx), probs, after), probs[:, 0], atol=1e-12)


def test_the_crawford_game_saves_gammons_for_the_leader_and_wins_them_for_the_trailer(afterstates):
    probs = random_probs(np.random.default_rng(8), 60)
    after = afterstates[:60]
    w, wg, lg = probs[:, 0], probs[:, 1], probs[:, 3]
    # The leader 1-away, the trailer 2-away, no cube: a single loss leaves double match point
    # (MWC one half), a gammon loss loses the match, any win wins it.
    np.testing.assert_allclose(_mwc(measure_for(match(1, 2, crawford=True)), probs, after),
                               w + 0.5 * (1.0 - w - lg), atol=1e-12)
    # The trailer's view: a single win leaves double match point, a gammon wins the match.
    np.testing.assert_allclose(_mwc(measure_for(match(2, 1, crawford=True)), probs, after),
                               0.5 * (w - wg) + wg, atol=1e-12)


def _chosen_value(bot, board, d1, d2, ctx, value_of) -> tuple[float, float, bool]:
    """(the hand value of the bot's choice in ``ctx``, the best hand value among the legal moves,
    whether the cubeless choice differs): the bot's 0-ply probabilities of each move are valued by
    ``value_of``, the mover's probabilities in, a number out."""
    ranked = rank_moves(bot, board, d1, d2, ply=0)
    values = {m.after.tobytes(): value_of(m.probabilities) for m in ranked}
    chosen = bot.choose_moves(board[None], np.array([[d1, d2]]), ctx)[0][0]
    cubeless = ranked[0].after
    return values[chosen.tobytes()], max(values.values()), not np.array_equal(chosen, cubeless)


@pytest.mark.parametrize("ctx, value_of", [
    (match(1, 1), lambda p: p[0]),                                      # DMP: win the game
    (match(1, 2, crawford=True), lambda p: p[0] + 0.5 * (1 - p[0] - p[3])),  # gammon-save
    (match(2, 1, crawford=True), lambda p: p[0] + p[1]),                # gammon-go
    (match(2, 1, cube=2, owner=OPP), lambda p: p[0]),                   # post-Crawford, cube dead
], ids=["dmp", "crawford-leader", "crawford-trailer", "post-crawford-dead-cube"])
def test_the_bot_plays_the_move_known_by_hand(bot, positions, ctx, value_of):
    differ = 0
    for board, d1, d2 in positions:
        if not legal_moves(position_id(board), d1, d2)[0][0]:
            continue  # no move to choose
        got, best, changed = _chosen_value(bot, board, d1, d2, ctx, value_of)
        assert got == pytest.approx(best, abs=1e-6), (position_id(board), d1, d2)
        differ += changed
    assert differ >= 3, "the score should change some choices from the cubeless ones"


def test_every_path_of_the_bot_makes_the_same_cubeful_choice(bot, positions):
    ctxs = [match(2, 1, crawford=True), match(1, 1), money(2, OPP), match(3, 5, 2, ME), money()]
    sample = positions[:120]
    boards = np.array([b for b, _, _ in sample])
    dice = np.array([(d1, d2) for _, d1, d2 in sample])
    per_position = [ctxs[i % len(ctxs)] for i in range(len(sample))]
    batch = bot.choose_moves(boards, dice, per_position)[0]
    cubeless = bot.choose_moves(boards, dice)[0]
    assert any(not np.array_equal(a, b) for a, b in zip(batch, cubeless))
    for (board, d1, d2), ctx, after in zip(sample, per_position, batch):
        pid = position_id(board)
        text, next_id = bot.best_move(pid, d1, d2, match_id=match_id(ctx.replace(dice=(d1, d2))))
        assert next_id == position_id(swap(after)), (pid, d1, d2, ctx)


def test_cubeless_play_keeps_the_old_choice(positions):
    plain = bgnet.load_bot()
    plain.cubeless_play = True
    boards = np.array([b for b, _, _ in positions[:100]])
    dice = np.array([(d1, d2) for _, d1, d2 in positions[:100]])
    np.testing.assert_array_equal(plain.choose_moves(boards, dice, match(1, 1))[0],
                                  plain.choose_moves(boards, dice)[0])


def _choices(bot, positions, ctx) -> np.ndarray:
    boards = np.array([b for b, _, _ in positions])
    dice = np.array([(d1, d2) for _, d1, d2 in positions])
    return bot.choose_moves(boards, dice, ctx)[0]


def _best_by_the_slow_way(bot, board, d1, d2, ctx) -> list[np.ndarray]:
    """The afterstates with the best :func:`reference_value` (ties: all of them)."""
    ranked = rank_moves(bot, board, d1, d2, ply=0)
    values = np.array([reference_value(np.array(m.probabilities), ctx, m.after) for m in ranked])
    return [m.after for m, v in zip(ranked, values) if v >= values.max() - 1e-9]


@pytest.mark.parametrize("owned", [money(2, OPP), money(2, ME), match(4, 5, 2, OPP)],
                         ids=["money-theirs", "money-mine", "match-theirs"])
def test_who_owns_the_cube_changes_the_choice_as_the_slow_way_says(bot, positions, owned):
    centred = owned.replace(cube_value=1, cube_owner=CENTERED)
    a, b = _choices(bot, positions, centred), _choices(bot, positions, owned)
    changed = [i for i in range(len(positions)) if not np.array_equal(a[i], b[i])]
    assert changed, f"no position of {len(positions)} changes its move with the cube {owned}"
    for i in changed[:3]:
        board, d1, d2 = positions[i]
        for ctx, chosen in ((centred, a[i]), (owned, b[i])):
            best = _best_by_the_slow_way(bot, board, d1, d2, ctx)
            assert any(np.array_equal(chosen, x) for x in best), (position_id(board), d1, d2, ctx)


# ----------------------------------------------------------------------------------------------
# GNU Backgammon's hint at the score

# (Position ID with the mover on roll, Match ID with the dice): positions from gnubg self-play
# where gnubg's 0-ply cubeful choice is not the best move by its own cubeless equity.
GNUBG_CASES = [
    ("tnsnAAButwEDQA", "cAkHAAAAAAAE"),  # money, cube centred
    ("2J6JAyDM3U0AIA", "UQnzAEAAKAAE"),  # 7-point match, 3-away v 2-away, cube 2 the mover's
    ("m3cLEAA1zwIIDg", "QYnqAGAAGAAE"),  # 4-away v 1-away post-Crawford, cube 2 the opponent's
    ("2jZHBgCoa3AwMA", "sAH7AFAAMAAE"),  # Crawford game, the mover leads 1-away v 2-away
    ("3G4CMCjs7QQGEA", "sIHyAGAAGAAE"),  # Crawford game, the mover trails 4-away v 1-away
    ("ZjuDBQjwvQ3AAA", "cIn2AEAAMAAE"),  # post-Crawford, the mover 3-away v 1-away
    ("rrNBgEG7ZcYAAg", "cInyAGAAKAAE"),  # post-Crawford, the mover 2-away v 1-away
    ("yNuDASiMz+AJQA", "cInmAFAAKAAE"),  # 2-away v 2-away
]

_NUM = r"([+-]?\d+\.\d+)"
_HINT_MOVE = re.compile(r"^ *\d+\. +Cubeful 0-ply +(.+?) +Eq\.: +" + _NUM + r".*\n\s+"
                        + r"\s+".join([_NUM] * 3) + r" - " + r"\s+".join([_NUM] * 3), re.M)


def gnubg_hints(cases) -> list[list[tuple[str, float, tuple]]]:
    """GNU Backgammon's 0-ply checker-play hint for each (Position ID, Match ID), one process:
    per case a list of (move, cubeful equity as gnubg prints it, cubeless probabilities), best
    first."""
    lines = ["set automatic roll off", "set player 0 human", "set player 1 human",
             "set output digits 5", "new session", "set evaluation chequerplay evaluation plies 0"]
    for i, (pid, mid) in enumerate(cases):
        lines += [f"bgnetcase{i}", f"set matchid {mid}", f"set board {pid}", "hint 40"]
    lines.append("bgnetcase-end")
    out = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(lines) + "\n", text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120).stdout
    parts = re.split(r"bgnetcase(\d+)", out)
    found = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    hints = []
    for i, (_, mid) in enumerate(cases):
        text = found.get(i, "")
        ids = re.findall(r"Match ID\s*:\s*(\S+)", text)
        assert ids and ids[-1][:11] == mid[:11], f"gnubg did not take the Match ID {mid}"
        moves = [(m.group(1), float(m.group(2)),
                  tuple(max(float(m.group(k)), 0.0) for k in (3, 4, 5, 7, 8)))
                 for m in _HINT_MOVE.finditer(text)]
        assert len(moves) == text.count("Cubeful 0-ply"), f"a move of gnubg's hint was not read: {text}"
        hints.append(moves)
    return hints


@pytest.mark.gnubg
@pytest.mark.skipif(not Path(GNUBG).is_file(), reason="needs the GNU Backgammon program")
def test_gnubg_ranks_moves_at_the_score_as_bgnet_does_from_its_probabilities():
    for (pid, mid), hint in zip(GNUBG_CASES, gnubg_hints(GNUBG_CASES)):
        ctx = match_context_from_id(mid)
        assert len(hint) >= 2, (pid, mid)
        moves = [name for name, _, _ in hint]
        emg = np.array([eq for _, eq, _ in hint])
        probs = np.array([p for _, _, p in hint])
        # The case is one where the score matters: gnubg's best cubeless move is another.
        assert np.argmax(cubeless_equity(probs)) != 0, (pid, mid)
        nexts = dict(legal_moves(pid, *ctx.dice))
        after = np.array([swap(board_from_position_id(nexts[m])) for m in moves])
        mine = measure_for(ctx.replace(dice=(0, 0))).values(probs, after)
        # gnubg prints 5 decimals of figures computed from 5-decimal probabilities.
        np.testing.assert_allclose(mine, emg, atol=1e-4, err_msg=f"{pid}:{mid}")
        assert moves[int(np.argmax(mine))] == moves[0], (pid, mid)


def test_the_one_call_choice_values_moves_as_the_measure_does(bot, positions):
    """The 0-ply choice in one compiled call (:func:`bgnet.bots.zero_ply.choose_zero_ply`),
    which values the moves itself, picks the move the batch path picks with the measure, in
    every kind of context."""
    from bgnet.bots.zero_ply import choose_zero_ply

    contexts = all_contexts()[::9]
    answered = differ = 0
    for k, (board, d1, d2) in enumerate(positions[:240]):
        ctx = contexts[k % len(contexts)]
        fused = choose_zero_ply(bot.evaluator, board, d1, d2, bot.move_measure(ctx))
        if fused is None:
            continue  # a pass, or a case left to the general path
        answered += 1
        want = bot.choose_moves(board[None], np.array([[d1, d2]]), contexts=ctx)[0][0]
        assert np.array_equal(fused[0], want), (position_id(board), d1, d2, ctx)
        differ += not np.array_equal(fused[0], choose_zero_ply(bot.evaluator, board, d1, d2)[0])
    assert answered > 200 and differ > 0
