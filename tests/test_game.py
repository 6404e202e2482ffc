"""Game and match mechanics: opening roll, moves, cube, resignations, scoring, Crawford, Jacoby."""
from __future__ import annotations

import numpy as np
import pytest

from bgnet.engine.board import start_position, swap
from bgnet.engine.game import RESIGN_NAMES, Game, Match, RuleError, play_random_game
from bgnet.engine.movegen import generate
from bgnet.engine.position_id import position_id
from bgnet.engine.state import CENTERED, GAME_DROPPED, GAME_OVER, GAME_PLAYING, GAME_RESIGNED
from bgnet.formats.match_id import match_context_from_id, match_id


def side(**points) -> np.ndarray:
    """One side's 25 slots from ``p<N>=count`` (own point numbers) and ``bar=count``."""
    s = np.zeros(25, np.int8)
    for k, v in points.items():
        s[24 if k == "bar" else int(k[1:]) - 1] = v
    return s


def last_checker_game(loser: np.ndarray, **kw) -> Game:
    """Player 1 to roll with one checker left on its 1-point against ``loser`` (player 0)."""
    board = np.stack([loser, side(p1=1)])
    return Game(board=board, player_on_roll=1, seed=0, **kw)


def bear_off_last(g: Game) -> None:
    g.roll((2, 1))
    after, _ = g.legal_moves()
    g.play(after[0])


# ---------------------------------------------------------------------------------------------
# opening and turns


def test_opening_roll_never_ties_and_higher_starts():
    for seed in range(40):
        g = Game(seed=seed)
        starter, dice = g.opening_roll()
        assert dice[0] > dice[1], "the starter plays its own (higher) die first"
        assert g.player_on_roll == starter and g.dice == dice
        assert g.phase == "move" and len(g.legal_moves()[0]) > 0


def test_opening_roll_given_dice():
    g = Game()
    assert g.opening_roll((2, 5)) == (1, (5, 2))
    with pytest.raises(RuleError, match="once"):
        g.opening_roll((3, 1))
    with pytest.raises(RuleError, match="tie"):
        Game().opening_roll((4, 4))
    with pytest.raises(ValueError, match="1 to 6"):
        Game().opening_roll((0, 4))


def test_moves_and_turns_alternate():
    g = Game(seed=5)
    g.opening_roll((3, 1))  # player 0 starts with 3-1
    g.play("8/5 6/5")
    assert g.player_on_roll == 1 and g.phase == "roll"
    # Player 1 sees player 0's 5-point made: the mirror of a plain starting side.
    assert g.board[0, 4] == 2 and g.board[0, 5] == 4
    g.roll((6, 4))
    g.play([(24, 18), (13, 9)])
    moves = g.record.moves()
    assert [(p, d, sorted(st)) for p, d, st in moves] == [
        (0, (3, 1), [(6, 5), (8, 5)]), (1, (6, 4), [(13, 9), (24, 18)])]
    assert [a.notation for a in g.record.actions] == ["8/5 6/5", "24/18 13/9"]
    # The board after is the same whichever form the move was given in.
    h = Game(seed=5)
    h.opening_roll((3, 1))
    after, _ = generate(start_position(), 3, 1)
    target = next(a for a in after if a[1, 4] == 2 and a[1, 7] == 2)
    h.play(target)
    assert np.array_equal(h.board, swap(target))


def test_text_moves_with_the_low_die_first():
    for dice, text in (((1, 6), "13/7 8/7"), ((2, 4), "8/4 6/4"), ((3, 5), "8/3 6/3")):
        g = Game(board=start_position(), player_on_roll=0)
        g.roll(dice)
        g.play(text)
        assert g.record.actions[-1].notation == text


def test_illegal_moves_are_refused():
    g = Game(seed=1)
    g.opening_roll((6, 5))
    with pytest.raises(RuleError, match="not a legal move"):
        g.play([(13, 7), (13, 7)])  # two sixes with 6-5
    with pytest.raises(RuleError, match="not a legal move"):
        g.play(start_position())
    with pytest.raises(RuleError, match="must play"):
        g.play(None)
    with pytest.raises(ValueError):
        g.play("6/off")
    with pytest.raises(RuleError, match="roll"):
        Game(board=start_position(), player_on_roll=0).legal_moves()


def test_a_blocked_player_passes():
    # Player 1 on the bar against a closed board: no move with any roll.
    closed = side(p1=2, p2=2, p3=2, p4=2, p5=2, p6=2, p13=3)
    g = Game(board=np.stack([closed, side(bar=1, p6=14)]), player_on_roll=1, seed=0)
    g.roll((6, 6))
    assert len(g.legal_moves()[0]) == 0
    with pytest.raises(RuleError, match="no move is possible"):
        g.play([(25, 19)])
    g.play(None)
    assert g.player_on_roll == 0 and g.record.actions[-1].steps == ()


def test_actor_checks():
    g = Game(seed=2)
    g.opening_roll((5, 3))
    with pytest.raises(RuleError, match="player 0's turn"):
        g.play("8/3 6/3", player=1)
    g.play("8/3 6/3", player=0)
    with pytest.raises(RuleError, match="double"):
        g.take()


# ---------------------------------------------------------------------------------------------
# the cube


def test_double_take_redouble_drop():
    g = Game(seed=3)
    g.opening_roll((4, 2))
    g.play("8/4 6/4")
    g.double()  # player 1 doubles before rolling
    ctx = g.context()
    assert ctx.double_offered and ctx.turn == 0 and ctx.player_on_roll == 1
    with pytest.raises(RuleError, match="answer"):
        g.roll()
    g.take()
    assert (g.cube_value, g.cube_owner, g.phase, g.player_on_roll) == (2, 0, "roll", 1)
    with pytest.raises(RuleError, match="opponent owns the cube"):
        g.double()
    g.roll((1, 2))
    g.play(g.legal_moves()[0][0])
    g.double()  # player 0 owns the cube and redoubles to 4
    g.drop()
    assert g.over and g.winner == 0 and g.points == 2 and g.end == "drop"
    assert g.context().game_state == GAME_DROPPED
    kinds = [a.kind for a in g.record.actions]
    assert kinds == ["move", "double", "take", "move", "double", "drop"]
    assert [a.cube for a in g.record.actions if a.kind in ("double", "take")] == [2, 2, 4]


def test_no_double_after_rolling_or_in_the_opening():
    g = Game(seed=4)
    with pytest.raises(RuleError, match="opening roll"):
        g.double()
    g.opening_roll((6, 1))
    with pytest.raises(RuleError, match="before rolling"):
        g.double()


def test_cube_limit():
    g = Game(board=start_position(), player_on_roll=0, cube_value=32, cube_owner=0)
    g.double()
    g.take()
    assert g.cube_value == 64
    g.roll((3, 1))
    g.play("8/5 6/5")
    assert g.player_on_roll == 1 and g.cube_owner == 1
    assert not g.may_double()
    with pytest.raises(RuleError, match="most allowed is 64"):
        g.double()


def test_crawford_game_forbids_doubling():
    g = Game(board=start_position(), player_on_roll=0, match_length=5, score=(4, 2), crawford=True)
    with pytest.raises(RuleError, match="no doubling in the Crawford game"):
        g.double()
    post = Game(board=start_position(), player_on_roll=1, match_length=5, score=(4, 2))
    post.double()  # post-Crawford: the trailer doubles at once
    assert post.context().double_offered


# ---------------------------------------------------------------------------------------------
# results and points


# The loser's own points 19-24 are the winner's home board.
@pytest.mark.parametrize("loser, result", [
    (side(p6=1), 1),  # 14 borne off: single
    (side(p1=13, p7=2), 2),  # none off, none in the winner's home board: gammon
    (side(p1=14, p19=1), 3),  # a checker in the winner's home board: backgammon
    (side(p1=14, bar=1), 3),  # a checker on the bar: backgammon
])
def test_single_gammon_backgammon(loser, result):
    g = last_checker_game(loser)
    bear_off_last(g)
    assert g.over and g.winner == 1 and g.result == result and g.points == result
    assert g.end == "bearoff" and g.context().game_state == GAME_OVER


def test_points_times_cube():
    loser = side(p1=13, p7=2)  # gammon
    g = last_checker_game(loser, cube_value=4, cube_owner=1, match_length=11, score=(3, 2))
    bear_off_last(g)
    assert g.points == 8


def test_jacoby_rule():
    gammon = side(p1=13, p7=2)
    # Money, Jacoby, cube never turned: the gammon counts single.
    g = last_checker_game(gammon, jacoby=True)
    bear_off_last(g)
    assert (g.result, g.points) == (2, 1)
    # Once the cube is turned the gammon counts.
    g = last_checker_game(gammon, jacoby=True, cube_value=2, cube_owner=0)
    bear_off_last(g)
    assert g.points == 4
    # Without Jacoby, or in a match, gammons count whatever the cube.
    for kw in ({"jacoby": False}, {"jacoby": True, "match_length": 7}):
        g = last_checker_game(gammon, **kw)
        bear_off_last(g)
        assert g.points == 2


def test_resignations():
    g = Game(seed=6)
    g.opening_roll((5, 2))
    g.play("13/8 13/11")
    g.resign("gammon")  # player 1, whose turn it is, offers a gammon
    ctx = g.context()
    assert ctx.resignation == 2 and ctx.turn == 0
    with pytest.raises(RuleError, match="resignation is offered"):
        g.roll()
    g.reject_resignation()
    g.roll((1, 1))
    g.resign(1, player=0)  # the opponent may offer too
    g.accept_resignation()
    assert g.winner == 1 and g.points == 1 and g.end == "resign"
    # The roll that was never played stays in the record, before the resignation.
    assert [(a.kind, a.dice) for a in g.record.actions[-3:]] == [("roll", (1, 1)), ("resign", (0, 0)),
                                                                ("accept", (0, 0))]
    assert g.context().game_state == GAME_RESIGNED
    with pytest.raises(ValueError, match="1 .*2 .*3"):
        Game(board=start_position(), player_on_roll=0).resign(4)
    # With Jacoby and a centred cube a gammon resignation is worth one point.
    j = Game(board=start_position(), player_on_roll=0, jacoby=True)
    j.resign(2)
    j.accept_resignation()
    assert j.points == 1


def test_random_games_end_properly():
    rng = np.random.default_rng(8)
    for _ in range(3):
        g = play_random_game(Game(rng=rng), rng, p_double=0.1, p_take=0.8)
        assert g.over and g.winner in (0, 1)
        if g.end == "bearoff":
            assert g.board_for(g.winner)[1].sum() == 0
            assert g.points == g.result * g.cube_value
        else:
            assert g.end == "drop" and g.points * 2 == [a.cube for a in g.record.actions][-2]
        with pytest.raises(RuleError, match="over"):
            g.roll()


# ---------------------------------------------------------------------------------------------
# matches


def finish(match: Match, winner: int, kind: int) -> None:
    """End the next game of ``match`` by a resignation of ``kind`` to ``winner``."""
    g = match.new_game()
    g.opening_roll((6, 1) if winner == 0 else (1, 6))  # the winner starts
    g.play(g.legal_moves()[0][0])
    g.resign(kind, player=1 - winner)
    g.accept_resignation()


def test_crawford_and_post_crawford():
    m = Match(5, seed=1)
    finish(m, 0, 2)  # 2-0
    finish(m, 1, 1)  # 2-1
    assert not m.next_is_crawford
    finish(m, 0, 2)  # 4-1: player 0 reaches 4 = length - 1
    assert m.score == (4, 1) and m.next_is_crawford
    assert m.context().crawford
    g = m.new_game()
    assert g.crawford and not g.may_double(0) and not g.may_double(1)
    g.opening_roll((2, 1))
    assert match_context_from_id(match_id(g.context())).crawford
    g.play(g.legal_moves()[0][0])
    with pytest.raises(RuleError, match="no doubling in the Crawford game"):
        g.double()
    g.resign(1, player=0)  # the trailer wins the Crawford game: 4-2
    g.accept_resignation()
    assert m.score == (4, 2) and m.post_crawford and not m.next_is_crawford
    g = m.new_game()  # post-Crawford: the trailer may double, the leader's cube is dead
    assert not g.crawford
    g.opening_roll((6, 1))
    g.play(g.legal_moves()[0][0])
    g.double()  # player 1
    g.take()
    g.roll((3, 1))
    g.play(g.legal_moves()[0][0])
    with pytest.raises(RuleError, match="cube is dead"):
        g.double()  # player 0 owns the cube but needs 1 point
    g.resign(1, player=0)  # 4-4
    g.accept_resignation()
    assert m.score == (4, 4) and not m.next_is_crawford  # no second Crawford game
    g = m.new_game()
    assert not g.crawford and not g.may_double(0) and not g.may_double(1)
    assert g.opening_roll((1, 2))[0] == 1
    g.resign(2, player=1)
    g.accept_resignation()
    assert m.over and m.winner == 0 and m.score == (6, 4)
    with pytest.raises(RuleError, match="match is over"):
        m.new_game()


def test_crawford_when_jumping_to_one_away():
    m = Match(7, seed=2)
    finish(m, 1, 3)  # 0-3
    finish(m, 1, 3)  # 0-6: first reaches 6 by a backgammon
    assert m.next_is_crawford
    m2 = Match(3, seed=2)
    finish(m2, 0, 3)  # straight to 3: the match is won, no Crawford game
    assert m2.over and not m2.next_is_crawford


def test_one_point_match_has_no_crawford_game():
    m = Match(1, seed=3)
    g = m.new_game()
    assert not g.crawford


def test_money_session():
    m = Match(0, seed=4, jacoby=True, max_games=2)
    finish(m, 1, 2)
    assert m.score == (0, 1) and not m.over  # Jacoby: gammon single with a centred cube
    finish(m, 0, 3)
    assert m.score == (1, 1) and m.over and m.winner is None
    assert m.context().jacoby and m.context().is_money


def test_context_follows_the_game():
    m = Match(7, seed=5, names=("a", "b"))
    assert m.context().game_state == 0
    g = m.new_game()
    g.opening_roll((3, 5))
    ctx = m.context()
    assert (ctx.player_on_roll, ctx.turn, ctx.dice, ctx.game_state, ctx.match_length) == \
        (1, 1, (5, 3), GAME_PLAYING, 7)
    g.play(g.legal_moves()[0][0])
    g.double()
    ctx = match_context_from_id(match_id(m.context()))
    assert (ctx.double_offered, ctx.player_on_roll, ctx.turn, ctx.cube_value) == (True, 0, 1, 1)
    g.take()
    ctx = m.context()
    assert (ctx.cube_value, ctx.cube_owner, ctx.double_offered) == (2, 1, False)
    assert m.record().names == ("a", "b") and m.record().games[0].number == 1


def test_setup_errors():
    with pytest.raises(ValueError, match="1-away"):
        Game(match_length=7, score=(3, 3), crawford=True)
    with pytest.raises(ValueError, match="match is over"):
        Game(match_length=7, score=(7, 3))
    with pytest.raises(ValueError, match="centred"):
        Game(cube_value=2, cube_owner=CENTERED)
    for length in (-1, 65, 10 ** 30):  # one bound on a match's length, GNU Backgammon's
        with pytest.raises(ValueError, match="a match is 1 to 64 points long"):
            Match(length)
        with pytest.raises(ValueError, match="a match is 1 to 64 points long"):
            Game(match_length=length)
    assert Match(64).length == 64


# ---------------------------------------------------------------------------------------------
# against GNU Backgammon: the same match played in both, compared at every moment


def _mirror_match(gnubg, seed: int, length: int, seen: set) -> int:
    """Play a random match here and the same actions in GNU Backgammon; count the moments where
    the Match ID or Position ID differ."""
    rng = np.random.default_rng(seed)
    m = Match(length, rng=rng)
    gnubg.command(f"new match {length}")
    differ = 0

    def same(tag: str) -> None:
        nonlocal differ
        seen.add(tag)
        ours = (match_id(m.context()), position_id(m.game.board))
        differ += ours != (gnubg.match_id(), gnubg.position_id(gnubg.board()))

    while not m.over:
        g = m.new_game()
        if g.crawford:
            seen.add("crawford")
        starter, dice = g.opening_roll()
        gnubg.command(f"set turn {starter}")  # gnubg made its own opening roll: replace it
        gnubg.command(f"set dice {dice[0]} {dice[1]}")
        same("opening")
        while not g.over:
            if g.phase == "roll":
                if rng.random() < 0.03:
                    k = int(rng.integers(1, 4))
                    g.resign(k)
                    gnubg.command(f"resign {RESIGN_NAMES[k].replace('single', 'normal')}")
                    same("resign")
                    if rng.random() < 0.5:
                        g.accept_resignation()
                        gnubg.command("accept")
                        seen.add("accept")
                        break
                    g.reject_resignation()
                    gnubg.command("reject")
                    same("reject")
                if g.may_double() and rng.random() < 0.08:
                    g.double()
                    gnubg.command("double")
                    same("double")
                    if rng.random() < 0.7:
                        g.take()
                        gnubg.command("take")
                        same("take")
                    else:
                        g.drop()
                        gnubg.command("drop")
                        seen.add("drop")
                        break
                d = g.roll()
                gnubg.command(f"set dice {d[0]} {d[1]}")
                same("roll")
            after, steps = g.legal_moves()
            if len(after):
                i = int(rng.integers(len(after)))
                g.play(after[i])
                gnubg.command("move " + " ".join(f"{a}/{b}" for a, b in steps[i] if a >= 0))
            else:
                g.play(None)
                gnubg.command("move")
                seen.add("pass")
            if not g.over:
                same("move")
        if g.end == "bearoff":
            seen.add(f"result {g.result}")
    return differ


@pytest.mark.gnubg
def test_same_moments_as_gnubg():
    """Random 5-point matches with doubles, takes, drops, resignations and the Crawford game:
    after every action the Match ID (cube, owner, turn, dice, score, Crawford) and the position
    agree with GNU Backgammon playing the same actions, which refuses any illegal one."""
    gnubg = pytest.importorskip("gnubg")
    for c in ("set sound enable off", "set player 0 human", "set player 1 human",
              "set automatic roll off", "set display off"):
        gnubg.command(c)
    seen: set = set()
    for seed in (0, 1, 2):
        assert _mirror_match(gnubg, seed, 5, seen) == 0, seed
    assert {"crawford", "double", "take", "drop", "resign", "accept", "reject", "pass",
            "result 1", "result 3"} <= seen


def test_replay_roll_reads_a_records_rolls_and_refuses_impossible_ones():
    g = Game()
    with pytest.raises(RuleError, match="never a double"):
        g.replay_roll(0, (3, 3))
    g.replay_roll(1, (3, 5))  # player 1 won the opening with the 5
    assert g.player_on_roll == 1 and sorted(g.dice) == [3, 5]
    g.play("8/3 6/3", player=1)
    with pytest.raises(RuleError, match="player 1 rolls 64, but it is player 0's turn"):
        g.replay_roll(1, (6, 4))
    with pytest.raises(RuleError, match="B rolls 64, but it is W's turn"):
        g.replay_roll(1, (6, 4), names=("W", "B"))
    g.replay_roll(0, (6, 4))
    assert g.player_on_roll == 0 and g.dice == (6, 4)
