"""The table's rules without a terminal or a page: decisions, refusals and the events they emit."""
from __future__ import annotations

import numpy as np
import pytest

from bgnet.bots.base import Bot
from bgnet.bots.simple import RandomBot
from bgnet.engine.board import start_position
from bgnet.engine.game import DOUBLED, MOVE, ROLL, Match
from bgnet.play.advisor import Advisor
from bgnet.play.table import (
    BOT,
    HUMAN,
    CannotMove,
    CubeHint,
    Doubled,
    Dropped,
    GameOver,
    GameStarted,
    MatchOver,
    MoveHint,
    Played,
    Refusal,
    ResignationAnswered,
    Rolled,
    Table,
    Took,
)


class Dice:
    """Scripted dice: each roll the next pair (a stand-in for the match's random generator)."""

    def __init__(self, *rolls):
        self.rolls = list(rolls)

    def integers(self, low, high, size=None):
        return np.array(self.rolls.pop(0))


class CubeAdvisor(Advisor):
    """A bot that plays random moves, doubles whenever it may and takes (or drops) every double."""

    def __init__(self, take: bool = True):
        super().__init__(RandomBot(1), judge=None)
        self.take = take

    def wants_double(self, board, ctx) -> bool:
        return ctx.may_double(ctx.player_on_roll)

    def wants_take(self, doubler_board, ctx) -> bool:
        return self.take


def side(**points) -> np.ndarray:
    """One side's checkers, e.g. side(p6=3): counts on its own points."""
    s = np.zeros(25, np.int8)
    for name, n in points.items():
        s[int(name[1:]) - 1] = n
    return s


def table_at(board, *rolls, advisor=None, match: Match | None = None, on_roll=HUMAN, **kw):
    """A table whose game starts from ``board`` (the person's view, ``[bot, person]``) with
    ``on_roll`` about to roll and the dice ``rolls``; returns (table, events seen)."""
    seen = []
    table = Table(advisor or Advisor(RandomBot(1), judge=None), rng=Dice(*rolls),
                  on_event=seen.append, **kw)
    if match is not None:
        match.rng = table.match.rng
        table.match = match
    view = np.asarray(board) if on_roll == HUMAN else np.asarray(board)[::-1]
    table.start_game(table.match.new_game(board=view, player_on_roll=on_roll))
    return table, seen


def test_a_whole_game_with_scripted_dice_and_the_events_it_tells():
    # The person has two checkers on their 6 point; the bot all fifteen on its 1 point.
    table, seen = table_at(np.stack([side(p1=15), side(p6=2)]), (6, 5), (3, 2), (1, 1))
    game = table.game
    assert game.phase == ROLL and game.turn == HUMAN  # money play: the person may double first
    table.roll()
    assert game.phase == MOVE and table.game.dice == (6, 5)
    table.move("6/off 6/1")  # the bot answers at once: it bears off two
    assert game.phase == ROLL and game.turn == HUMAN
    table.roll()  # 1-1 bears the last checker off: a single game (the bot has borne off)
    table.move("1/off")
    assert game.over and game.winner == HUMAN and game.points == 1
    assert [type(e) for e in seen] == [GameStarted, Rolled, Played, Played, Rolled, Played,
                                       GameOver, MatchOver]
    assert [e.text for e in seen] == [
        "Game 1", "You roll 6-5.", "You play 6/1 6/off.", "random-1 rolls 3-2 and plays 1/off(2).",
        "You roll 1-1.", "You play 1/off.",
        "You win a single game: 1 point.\nSession: You 1, random-1 0.", "The session is over."]
    assert seen[3].player == BOT and seen[3].dice == (3, 2)
    assert table.match.over


def test_the_bot_name_is_the_one_a_mat_file_can_hold():
    bot = RandomBot(1)
    bot.name = "gnubg: 2-ply"
    table = Table(Advisor(bot, judge=None))
    assert table.bot_name == "gnubg- 2-ply" and table.match.names == ("You", "gnubg- 2-ply")


def test_a_turn_without_a_legal_move_passes_and_is_told_before_it_does():
    # The person is on the bar against a closed board: 6-6 cannot enter.
    closed = side(p1=2, p2=2, p3=2, p4=2, p5=2, p6=2, p13=3)
    seen_phase = []
    table, seen = table_at(np.stack([closed, side(p25=1, p6=14)]), (6, 6), (1, 2))
    table.on_event = lambda e: (seen.append(e), seen_phase.append(table.game.phase))
    table.roll()
    kinds = [type(e) for e in seen]
    assert kinds[-3:] == [Rolled, CannotMove, Played] and seen[-2].text == "You cannot move with 6-6."
    assert seen_phase[-2] == MOVE  # told while the dice are still there to see


def test_an_illegal_hop_is_refused_with_its_reason_and_changes_nothing():
    table, seen = table_at(start_position(), (6, 5), (3, 1))
    table.roll()
    before = (table.game.board.tobytes(), len(seen))
    refusals = {(24, 19): "Illegal move: point 19 is blocked (the opponent has 5 checkers there).",
                (5, 8): "Illegal move: checkers move from higher points to lower ones; point 5 "
                        "to point 8 goes the wrong way.",
                (6, 5): "Illegal move: the dice 6-5 cannot move a checker 1 pips.",
                (8, 0): "Illegal move: you cannot bear off while checkers are outside your home "
                        "board."}
    for (a, b), why in refusals.items():
        with pytest.raises(Refusal) as e:
            table.step(a, b)
        assert str(e.value) == why
    assert table.steps == [] and (table.game.board.tobytes(), len(seen)) == before
    table.step(13, 7)
    assert table.dice_left() == [5] and table.destinations() == {13: [8], 8: [3], 7: [2]}
    with pytest.raises(Refusal, match=r"not finished: play the 5 too"):
        table.confirm()
    table.undo()
    assert table.steps == [] and table.clicked_move() is None
    table.step(24, 13)  # one checker by both dice, through point 18
    assert table.clicked_move() is not None
    table.confirm()
    assert [(type(e), e.player) for e in seen[-2:]] == [(Played, HUMAN), (Played, BOT)]
    assert seen[-2].text == "You play 24/13." and table.steps == []


def test_a_typed_move_is_refused_in_the_terminals_words():
    table, _ = table_at(start_position(), (6, 5))
    with pytest.raises(Refusal, match="there is no double to answer"):
        table.take()
    table.roll()
    with pytest.raises(Refusal, match="you can double only before rolling"):
        table.double()
    with pytest.raises(Refusal, match=r"^Illegal move: .*Try again \(hint lists the legal moves\)\.$"):
        table.move("24/1")
    for typed in ("roll", "", "  "):  # Enter pressed again, as if to roll, is told the same
        with pytest.raises(Refusal, match=r"^You have rolled 6-5: play your move \(hint"):
            table.move(typed)


def test_cube_actions_at_a_crawford_score():
    race = np.stack([side(p6=3, p5=3, p4=3, p3=3, p2=3), side(p6=3, p5=3, p4=3, p3=3, p2=3)])
    # The Crawford game: nobody doubles; the person's dice are rolled for them.
    table, seen = table_at(race, (4, 2), advisor=CubeAdvisor(), match_length=3,
                           match=Match(3, score=(2, 0), crawford_played=False))
    assert table.game.crawford and "Crawford game: no doubling" in seen[0].text
    assert isinstance(seen[-1], Rolled) and table.game.phase == MOVE
    with pytest.raises(Refusal, match="you can double only before rolling"):
        table.double()
    # After it the trailer doubles at once; the person takes, and owns a dead cube.
    table, seen = table_at(race, (4, 2), (3, 1), advisor=CubeAdvisor(), match_length=3, on_roll=BOT,
                           match=Match(3, score=(2, 0), crawford_played=True))
    assert [e.text for e in seen[1:]] == ["random-1 doubles to 2."] and table.game.phase == DOUBLED
    table.take()
    assert isinstance(seen[-3], Took) and seen[-3].text == "You take: the cube is at 2 and yours."
    assert table.game.cube_value == 2 and table.game.cube_owner == HUMAN
    assert isinstance(seen[-2], Played) and seen[-2].player == BOT  # the bot rolls and plays on
    assert isinstance(seen[-1], Rolled)  # the person's cube is dead at 2-0: no double to offer
    # A drop there gives the bot its point.
    table, seen = table_at(race, advisor=CubeAdvisor(), match_length=3, on_roll=BOT,
                           match=Match(3, score=(2, 0), crawford_played=True))
    table.drop()
    assert [type(e) for e in seen[-3:]] == [Doubled, Dropped, GameOver]
    assert seen[-1].text == "random-1 wins 1 point.\nScore: You 2, random-1 1 (to 3)."
    assert table.match.score == (2, 1) and not table.match.over


def test_the_person_doubles_and_the_bot_takes_or_drops():
    race = np.stack([side(p6=3, p5=3, p4=3, p3=3, p2=3), side(p6=3, p5=3, p4=3, p3=3, p2=3)])
    table, seen = table_at(race, (3, 1), advisor=CubeAdvisor(take=False))
    table.double()
    assert [e.text for e in seen[1:]] == [
        "You double to 2.", "random-1 drops.", "You win 1 point.\nSession: You 1, random-1 0.",
        "The session is over."]
    table, seen = table_at(race, (3, 1), advisor=CubeAdvisor(take=True), games=None)
    table.double()
    assert seen[2].text == "random-1 takes: the cube is at 2, random-1 owns it."
    assert table.game.cube_owner == BOT and isinstance(seen[-1], Rolled)
    with pytest.raises(Refusal, match="you can double only before rolling"):
        table.double()


def test_jacoby_money_play_counts_a_gammon_one_without_the_cube_turned():
    table, seen = table_at(np.stack([side(p19=15), side(p1=1)]), (2, 1), jacoby=True)
    table.roll()
    table.move("1/off")
    over = next(e for e in seen if isinstance(e, GameOver))
    assert (over.result, over.points) == (3, 1)  # a backgammon, worth one point
    assert over.text.startswith("You win a backgammon: 1 point.")


def test_a_resignation_is_rejected_then_accepted():
    # The person's checkers are all in the bot's home board: the bot may still win a backgammon.
    table, seen = table_at(np.stack([side(p1=15), side(p19=3, p20=3, p21=3, p22=3, p23=3)]))
    table.resign(1)
    assert isinstance(seen[-1], ResignationAnswered) and not seen[-1].accepted
    assert seen[-1].text == "random-1 rejects your resignation of a single game: play on."
    assert not table.game.over and table.game.turn == HUMAN
    table.resign(3)
    assert [type(e) for e in seen[-3:]] == [ResignationAnswered, GameOver, MatchOver]
    assert seen[-3].text == "random-1 accepts your resignation of a backgammon."
    assert table.game.end == "resign" and table.game.winner == BOT and table.game.points == 3
    with pytest.raises(Refusal, match="the game is over"):
        table.resign(1)


def test_hints_answer_without_changing_the_game_or_telling_anything():
    table, seen = table_at(start_position(), (6, 5))
    cube = table.hint()
    assert isinstance(cube, CubeHint)
    assert cube.text == "No cube advice: the bot has no evaluation of positions."
    table.roll()
    told = len(seen)
    hint = table.hint(2)
    assert isinstance(hint, MoveHint) and len(hint.moves) == 7 and len(seen) == told
    assert hint.text.split("\n")[:2] == ["7 legal moves; the best 2 by legal order (no evaluator):",
                                         "  1. 24/13"]


def test_a_game_from_the_opening_saved_by_the_name_of_the_file(tmp_path):
    from bgnet.formats.mat import load_mat
    from bgnet.formats.sgf import read_sgf

    table = Table(Advisor(RandomBot(2), judge=None), seed=5)
    table.start_game()
    game = table.game
    while not game.over:
        if game.phase == MOVE:
            table.move(table.hint().moves[0].notation)
        elif game.phase == ROLL:
            table.roll()
        else:
            table.take()
    mat, sgf = table.save(tmp_path / "m.mat"), table.save(tmp_path / "m.SGF")
    def moves(record):
        return [(p, tuple(sorted(d)), steps) for p, d, steps in record.games[0].moves()]

    want = moves(table.match.record())
    assert len(want) > 10 and moves(load_mat(mat)) == want
    assert moves(read_sgf(sgf.read_text())) == want
    assert table.match_text("sgf") == sgf.read_text() and table.match_text() == mat.read_text()


# ---------------------------------------------------------------------------------------------
# the table as data: snapshot and restore


class FirstMoveBot(Bot):
    """Plays the first legal move the generator lists: the same move in the same position."""

    name = "first"

    def choose_move(self, board, d1, d2):
        from bgnet.engine.movegen import generate

        after, _ = generate(board, d1, d2)
        return after[0] if len(after) else board


class PositionAdvisor(Advisor):
    """A bot whose every decision is a function of the position alone, so that a restored table
    decides as the original would; it doubles, takes and accepts resignations now and then."""

    def __init__(self):
        super().__init__(FirstMoveBot(), judge=None)

    @staticmethod
    def _hash(board) -> int:
        import zlib

        return zlib.crc32(np.ascontiguousarray(board).tobytes())

    def wants_double(self, board, ctx) -> bool:
        return ctx.may_double(ctx.player_on_roll) and self._hash(board) % 4 == 0

    def wants_take(self, doubler_board, ctx) -> bool:
        return self._hash(doubler_board) % 3 != 0

    def accepts_resignation(self, resigner_board, kind, value_of) -> bool:
        return self._hash(resigner_board) % 2 == 0


def _person_decides(table: Table, person: np.random.Generator) -> None:
    """One decision of a person who doubles, resigns, clicks and types at random."""
    from bgnet.engine.notation import format_move

    g = table.game
    r = person.random()
    try:
        if g.phase == ROLL:
            if r < 0.04:
                table.resign(int(person.integers(1, 4)))
            elif r < 0.2 and g.may_double(HUMAN):
                table.double()
            else:
                table.roll()
        elif g.phase == DOUBLED:
            table.take() if r < 0.8 else table.drop()
        elif table.clicked_move() is not None:
            table.confirm()
        elif r < 0.04:
            table.resign(int(person.integers(1, 4)))
        elif r < 0.5 and table.destinations():
            hops = sorted((a, b) for a, ends in table.destinations().items() for b in ends)
            table.step(*hops[int(person.integers(len(hops)))])
        else:
            _, steps = g.legal_moves()
            pick = steps[int(person.integers(len(steps)))]
            table.move(format_move([(int(a), int(b)) for a, b in pick if a >= 0], g.board))
    except Refusal:
        pass  # a double the rules refuse now, a resignation at the wrong moment: the game is as it was


def _played(seed: int, length: int, restore: bool) -> Table:
    """A match (or a money session of 3 games) of a random person against PositionAdvisor;
    with ``restore``, the table goes through JSON and is restored after every decision."""
    import json

    person = np.random.default_rng(seed + 1000)
    advisor = PositionAdvisor()
    table = Table(advisor, match_length=length, games=3, seed=seed, name="Ann")
    table.start_game()
    for _ in range(5000):
        if table.match.over:
            break
        if table.game.over:
            table.start_game()
        else:
            _person_decides(table, person)
        if restore:
            data = json.loads(json.dumps(table.snapshot()))
            table = Table.restore(advisor, data)
            assert table.snapshot() == data
    assert table.match.over
    return table


@pytest.mark.parametrize("seed, length", [(1, 5), (2, 0), (3, 3), (4, 7)])
def test_a_table_restored_after_every_decision_plays_the_same_match(seed, length):
    kept, restored = _played(seed, length, False), _played(seed, length, True)
    assert restored.match_text("mat") == kept.match_text("mat")
    assert restored.snapshot() == kept.snapshot()
    kinds = {a.kind for g in kept.match.games for a in g.record.actions}
    assert {"move", "double", "take", "resign"} <= kinds  # the record exercised the cube and resignations


def test_a_resignation_after_the_opening_roll_is_restored():
    """The person starts, resigns before moving, the bot rejects: the record begins with the
    resignation, and the opening roll comes back from the roll not yet played."""
    import json

    class Rejecting(PositionAdvisor):
        def accepts_resignation(self, resigner_board, kind, value_of) -> bool:
            return False

    for seed in range(40):
        table = Table(Rejecting(), match_length=3, seed=seed)
        table.start_game()
        if table.game.phase == MOVE and table.game.turn == HUMAN:
            break
    table.resign(1)
    assert [a.kind for a in table.game.record.actions] == ["resign", "reject"]
    data = json.loads(json.dumps(table.snapshot()))
    back = Table.restore(table.advisor, data)
    assert back.snapshot() == data and back.game.dice == table.game.dice


def test_data_that_does_not_replay_is_refused():
    import copy

    from bgnet.engine.notation import format_move

    table = Table(PositionAdvisor(), match_length=3, seed=5)
    table.start_game()
    while table.game.phase != MOVE:
        table.roll()
    g = table.game
    table.move(format_move([(int(a), int(b)) for a, b in g.legal_moves()[1][0] if a >= 0], g.board))
    data = table.snapshot()
    moved = copy.deepcopy(data)
    first_move = next(a for a in moved["games"][0] if a[1] == "move")
    first_move[3] = [[24, 1]]  # a move the dice do not make
    other = copy.deepcopy(data)
    other["moment"]["score"] = [1, 0]
    for bad, words in ((moved, "cannot be played again"), (other, "do not reach the moment"),
                       ({**data, "format": "x"}, "format tag"), ({**data, "version": 9}, "version 9"),
                       ({**data, "games": "xx"}, "cannot be played again"),
                       ({**data, "name": "A\rB"}, "cannot be played again")):
        with pytest.raises(ValueError, match=words):
            Table.restore(table.advisor, bad)
