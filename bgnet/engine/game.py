"""Games and matches by the rules of backgammon, independent of any bot.

A :class:`Game` holds the position, the dice, the cube and whose turn it is, and accepts the
actions the rules allow at each moment; anything else raises :class:`RuleError` (a ValueError)
saying why. A :class:`Match` plays games one after another to a length (or as a money session),
keeps the score, applies the Crawford rule, and gives a :class:`~bgnet.engine.state.MatchContext`
for any moment (for cube decisions and Match IDs).

The life of a game::

    opening_roll()            each player rolls one die; the higher plays both numbers
    then, turn after turn:
      [double() -> take() | drop()]   only before rolling, by a player with access to the cube
      roll()                          the dice
      play(move)                      an afterstate, the (from, to) steps, or text "8/5 6/5"
    resign(kind) -> accept_resignation() | reject_resignation()   at any time during play

Rules applied: a player may double only before rolling, when the cube is centred or his own, not
in the Crawford game, while the cube is below ``max_cube`` (64), and in match play only while a
win at the current cube would not already win him the match (the cube is "dead" then; GNU
Backgammon refuses such doubles too); a take doubles the cube and
gives it to the taker; a drop ends the game and the dropper pays the cube's value before the
double. A game won by bearing off scores 1, 2 (gammon: the loser has borne off none) or 3
(backgammon: and has a checker on the bar or in the winner's home board) times the cube; in money
play with the Jacoby rule, gammons and backgammons count 1 while the cube has not been turned.

Players are 0 and 1, as in GNU Backgammon's Match ID; in a ``.mat`` file player 0 is the left
column. Boards follow bgnet's convention: ``game.board`` is ``[opponent, player on roll]``.

>>> g = Game(seed=1)
>>> player, dice = g.opening_roll()
>>> after, steps = g.legal_moves()
>>> g.play(after[0])
>>> g.player_on_roll == 1 - player, g.dice
(True, (0, 0))
>>> g.double(); g.take()
>>> g.cube_value, g.cube_owner == player
(2, True)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgnet.engine.board import as_board, game_result, start_position
from bgnet.engine.movegen import generate
from bgnet.engine.state import (
    CENTERED,
    GAME_DROPPED,
    GAME_NONE,
    GAME_OVER,
    GAME_PLAYING,
    GAME_RESIGNED,
    MAX_SCORE,
    MatchContext,
    check_match_length,
)

MAX_CUBE = 64
RESIGN_NAMES = {1: "single", 2: "gammon", 3: "backgammon"}
_RESIGN_BY_NAME = {"single": 1, "normal": 1, "gammon": 2, "backgammon": 3}

# Phases of a game.
OPENING = "opening"  # before the opening roll
ROLL = "roll"  # the player on roll may double, then rolls
DOUBLED = "doubled"  # a double waits for take or drop
MOVE = "move"  # dice rolled: the player on roll must play
OVER = "over"

# How a game ended.
END_BEAROFF, END_DROP, END_RESIGN = "bearoff", "drop", "resign"


class RuleError(ValueError):
    """An action the rules do not allow at this moment; the message says why."""


@dataclass
class Action:
    """One thing a player did: ``kind`` is "move", "double", "take", "drop", "resign",
    "accept" (a resignation), "reject", or "roll" (dice rolled but never played: the game was
    resigned first).

    ``board`` is the position before the action from the actor's side (``[opponent, actor]``).
    For a move: ``dice``, ``steps`` ((from, to) pairs, 25 = bar, 0 = off; empty when no move was
    possible) and ``notation`` (standard notation). For a double: ``cube`` is the value offered;
    for a take, the new value. For a resignation: ``resign`` is 1, 2 or 3 (single, gammon,
    backgammon).
    """

    player: int
    kind: str
    board: np.ndarray
    dice: tuple[int, int] = (0, 0)
    steps: tuple[tuple[int, int], ...] = ()
    notation: str = ""
    cube: int = 0
    resign: int = 0


@dataclass
class GameRecord:
    """Everything needed to replay or export a game."""

    number: int  # 1-based within its match
    score: tuple[int, int]  # before the game
    match_length: int
    crawford: bool
    jacoby: bool
    actions: list[Action] = field(default_factory=list)
    winner: int | None = None
    points: int = 0
    result: int = 0  # 1 single, 2 gammon, 3 backgammon (for a drop: 1)
    end: str = ""  # "", "bearoff", "drop" or "resign"

    def moves(self) -> list[tuple[int, tuple[int, int], tuple[tuple[int, int], ...]]]:
        """(player, dice, steps) of every move, in order."""
        return [(a.player, a.dice, a.steps) for a in self.actions if a.kind == "move"]


@dataclass
class MatchRecord:
    """A match (or money session) as a list of game records, for ``.mat`` files."""

    length: int
    names: tuple[str, str] = ("Player 0", "Player 1")
    jacoby: bool = False
    games: list[GameRecord] = field(default_factory=list)

    def final_score(self) -> tuple[int, int]:
        """The score after the last game ((0, 0) for no games)."""
        if not self.games:
            return (0, 0)
        last = self.games[-1]
        s = list(last.score)
        if last.winner is not None:
            s[last.winner] += last.points
        return (s[0], s[1])

    def unfinished(self) -> str:
        """Why the record stops before its match does, "" when it does not: its last game has
        no end, or (match play) no player has reached the match length. A money session is
        whole when its last game is.

        >>> m = Match(3, seed=1)
        >>> m.record().unfinished()
        'it holds no game'
        >>> g = m.new_game(); _ = g.opening_roll((3, 1))
        >>> m.record().unfinished()
        'game 1 stops before its end'
        >>> g.resign(1); g.accept_resignation()
        >>> m.record().unfinished()
        'it ends at 0-1 (Player 0 to Player 1), before either player reaches 3 points'
        """
        if not self.games:
            return "it holds no game"
        last = self.games[-1]
        if last.winner is None:
            return f"game {last.number} stops before its end"
        s = self.final_score()
        if self.length and max(s) < self.length:
            return (f"it ends at {s[0]}-{s[1]} ({self.names[0]} to {self.names[1]}), before "
                    f"either player reaches {self.length} points")
        return ""


# ---------------------------------------------------------------------------------------------
# a game


class Game:
    """One game of backgammon with the doubling cube.

    Keyword arguments (all optional):

    * ``seed`` or ``rng`` (a ``numpy.random.Generator``): the dice;
    * ``match_length`` (0 = money), ``score`` (before this game), ``crawford`` (this is the
      Crawford game), ``jacoby`` (money play only), ``number`` (of the game in its match),
      ``max_cube``;
    * ``board`` and ``player_on_roll``: start from a position (``board`` is ``[opponent, player
      on roll]``) with that player about to roll, instead of the opening; with ``cube_value`` and
      ``cube_owner``;
    * ``on_over``: called with the game when it ends (a :class:`Match` keeps its score so).
    """

    def __init__(self, *, seed=None, rng: np.random.Generator | None = None, match_length: int = 0,
                 score: tuple[int, int] = (0, 0), crawford: bool = False, jacoby: bool = False,
                 number: int = 1, max_cube: int = MAX_CUBE, board=None,
                 player_on_roll: int | None = None, cube_value: int = 1,
                 cube_owner: int = CENTERED, on_over=None):
        _check_setup(match_length, score, crawford, max_cube, cube_value, cube_owner)
        self.rng = rng if rng is not None else np.random.default_rng(seed)
        self.match_length = int(match_length)
        self.score = (int(score[0]), int(score[1]))
        self.crawford = bool(crawford)
        self.jacoby = bool(jacoby) and self.match_length == 0
        self.max_cube = int(max_cube)
        self.cube_value = int(cube_value)
        self.cube_owner = int(cube_owner)
        self.dice: tuple[int, int] = (0, 0)
        self.player_on_roll: int | None = None
        self.winner: int | None = None
        self.points = 0
        self.result = 0
        self.end = ""
        self.resignation: tuple[int, int] | None = None  # (resigning player, kind) while offered
        self._on_over = on_over
        self._moves: tuple[np.ndarray, np.ndarray] | None = None  # legal moves of this roll, computed once
        self._roll_at = 0  # where the current roll belongs in the record
        self._sides = np.stack([start_position()[1], start_position()[1]])  # each from its own side
        self.phase = OPENING
        self.record = GameRecord(number, self.score, self.match_length, self.crawford, self.jacoby)
        if board is not None:
            if player_on_roll not in (0, 1):
                raise ValueError(f"starting from a board needs player_on_roll 0 or 1; got {player_on_roll!r}")
            b = as_board(board)
            self._sides[player_on_roll], self._sides[1 - player_on_roll] = b[1], b[0]
            self.player_on_roll = int(player_on_roll)
            self.phase = ROLL

    # -- state ------------------------------------------------------------------------------

    @property
    def board(self) -> np.ndarray:
        """The position from the side of the player on roll: ``[opponent, player on roll]``."""
        if self.player_on_roll is None:
            return start_position()
        return self.board_for(self.player_on_roll)

    @property
    def roller(self) -> int:
        """The player on roll (0 or 1); RuleError before the opening roll has decided one."""
        if self.player_on_roll is None:
            raise RuleError("the game has not started: roll the opening roll first")
        return self.player_on_roll

    def board_for(self, player: int) -> np.ndarray:
        """The position from ``player``'s side: ``[opponent, player]``."""
        return np.stack([self._sides[1 - player], self._sides[player]]).copy()

    @property
    def over(self) -> bool:
        return self.phase == OVER

    @property
    def turn(self) -> int | None:
        """Who must act now: the player on roll, or his opponent while a double or a
        resignation waits for an answer."""
        if self.player_on_roll is None:
            return None
        if self.resignation is not None:
            return 1 - self.resignation[0]
        if self.phase == DOUBLED:
            return 1 - self.player_on_roll
        return self.player_on_roll

    def may_double(self, player: int | None = None) -> bool:
        """Whether ``player`` (default: the player on roll) may double now."""
        return self._double_refusal(self.player_on_roll if player is None else player) is None

    def context(self) -> MatchContext:
        """The :class:`MatchContext` of this moment (the score is the one before this game)."""
        state = {OPENING: GAME_NONE, OVER: {END_DROP: GAME_DROPPED, END_RESIGN: GAME_RESIGNED}.get(
            self.end, GAME_OVER)}.get(self.phase, GAME_PLAYING)
        on_roll = self.player_on_roll if self.player_on_roll is not None else 0
        return MatchContext(
            cube_value=self.cube_value, cube_owner=self.cube_owner, player_on_roll=on_roll,
            crawford=self.crawford, game_state=state,
            turn=self.turn if self.turn is not None else on_roll,
            double_offered=self.phase == DOUBLED,
            resignation=self.resignation[1] if self.resignation else 0, dice=self.dice,
            match_length=self.match_length, score=self.score, jacoby=self.jacoby)

    # -- dice -------------------------------------------------------------------------------

    def opening_roll(self, dice: tuple[int, int] | None = None) -> tuple[int, tuple[int, int]]:
        """Each player rolls one die, ties rolled again; the higher die starts, playing both.

        ``dice`` = (player 0's die, player 1's die) sets the roll (two different numbers), e.g.
        to replay a record. Returns (the starting player, the dice it plays, its own first).
        """
        self._need(OPENING, "the opening roll is made once, before the first move")
        if dice is None:
            a = b = 0
            while a == b:
                a, b = (int(x) for x in self.rng.integers(1, 7, size=2))
        else:
            a, b = _check_dice(dice)
            if a == b:
                raise RuleError(f"the opening roll cannot be a tie ({a}-{b}): it is rolled again")
        starter = 0 if a > b else 1
        self.player_on_roll = starter
        self.dice = (a, b) if starter == 0 else (b, a)
        self._start_move()
        return starter, self.dice

    def roll(self, dice: tuple[int, int] | None = None, *, player: int | None = None) -> tuple[int, int]:
        """The player on roll rolls (``dice`` sets the numbers, e.g. to replay a record)."""
        self._check_actor(player, self.roller)
        self._no_resignation_pending()
        if self.phase == DOUBLED:
            raise RuleError("a double is waiting for an answer: take or drop first")
        self._need(ROLL, "you may only roll at the start of your turn")
        if dice is None:
            a, b = self.rng.integers(1, 7, size=2)
            dice = (int(a), int(b))
        self.dice = _check_dice(dice)
        self._start_move()
        return self.dice

    def replay_roll(self, player: int, dice: tuple[int, int],
                    names: tuple[str, str] = ("player 0", "player 1")) -> None:
        """Roll ``dice`` for ``player`` as a game record writes them: at the start of the game the
        opening roll that ``player`` won (the higher die is his), later his own roll. RuleError
        where the record cannot be right: an opening double, or a roll out of turn (the players
        called by ``names`` in the message)."""
        d1, d2 = (int(d) for d in dice)
        if self.phase == OPENING:
            if d1 == d2:
                raise RuleError(f"the game starts with {d1}{d2}, but an opening roll is never a double")
            hi, lo = max(d1, d2), min(d1, d2)
            self.opening_roll((hi, lo) if player == 0 else (lo, hi))
            return
        if self.player_on_roll != player:
            raise RuleError(f"{names[player]} rolls {d1}{d2}, but it is "
                            f"{names[self.player_on_roll or 0]}'s turn")
        self.roll((d1, d2), player=player)

    def _start_move(self) -> None:
        self.phase = MOVE
        self._moves = None
        self._roll_at = len(self.record.actions)

    # -- moves ------------------------------------------------------------------------------

    def legal_moves(self) -> tuple[np.ndarray, np.ndarray]:
        """(afterstates int8[K, 2, 25], steps int8[K, 4, 2]) of the dice rolled; K = 0 when no
        move is possible. Afterstates are ``[opponent, mover_after]``."""
        self._need(MOVE, "roll the dice first" if self.phase == ROLL else "there is no move to make now")
        if self._moves is None:
            # Higher die first, so that a move's steps do not depend on the order of the dice.
            self._moves = generate(self.board, max(self.dice), min(self.dice))
        return self._moves

    def play(self, move, *, player: int | None = None) -> None:
        """Play a legal move: an afterstate (``[opponent, mover_after]``), the (from, to) steps,
        or text such as "8/5 6/5". When no move is possible pass ``None`` (or ``()``, ``""``).
        Ends the game when the mover bears off his last checker."""
        self._check_actor(player, self.roller)
        self._no_resignation_pending()
        after_all, steps_all = self.legal_moves()
        before = self.board
        if len(after_all) == 0:
            if not _is_pass(move, before):
                raise RuleError(f"no move is possible with {self.dice[0]}-{self.dice[1]}: play None to pass")
            self._record_move(before, ())
            self._next_turn()
            return
        i = self._find_move(move, before, after_all)
        steps = tuple((int(a), int(b)) for a, b in steps_all[i] if a >= 0)
        self._record_move(before, steps)
        after = after_all[i]
        p = self.roller
        self._sides[p], self._sides[1 - p] = after[1], after[0]
        result = int(game_result(after))
        if result:
            self._finish(p, result, END_BEAROFF)
        else:
            self._next_turn()

    def _find_move(self, move, before: np.ndarray, after_all: np.ndarray) -> int:
        """Index of ``move`` in the legal list, or RuleError saying it is not legal."""
        if isinstance(move, str):
            from bgnet.engine.notation import parse_move

            # The same dice order as legal_moves, so the index points into the same list.
            i = parse_move(move, before, max(self.dice), min(self.dice))  # raises IllegalMoveError
            assert i is not None  # parse_move gives the index of a legal move, or raises
            return int(i)
        if move is None:
            raise RuleError(f"a move is possible with {self.dice[0]}-{self.dice[1]}, so you must play one")
        arr = np.asarray(move)
        if arr.shape == (2, 25):
            hits = np.flatnonzero((after_all == arr.astype(np.int8)).all(axis=(1, 2)))
            if len(hits) == 0:
                raise RuleError(f"that afterstate is not a legal move with {self.dice[0]}-{self.dice[1]}")
            return int(hits[0])
        target = _apply_steps(before, _steps_of(arr))
        hits = (np.flatnonzero((after_all == target).all(axis=(1, 2))) if target is not None
                else np.zeros(0, np.int64))
        if len(hits) == 0:
            raise RuleError(f"the steps {_steps_of(arr)} are not a legal move with "
                            f"{self.dice[0]}-{self.dice[1]}")
        return int(hits[0])

    def _record_move(self, before: np.ndarray, steps: tuple) -> None:
        from bgnet.engine.notation import format_move

        self.record.actions.append(Action(self.roller, "move", before, dice=self.dice,
                                          steps=steps, notation=format_move(list(steps), before)))

    def _next_turn(self) -> None:
        self.player_on_roll = 1 - self.roller
        self.dice = (0, 0)
        self.phase = ROLL
        self._moves = None

    # -- the cube ---------------------------------------------------------------------------

    def double(self, *, player: int | None = None) -> None:
        """The player on roll offers to double, before rolling."""
        self._check_actor(player, self.roller)
        self._no_resignation_pending()
        reason = self._double_refusal(self.roller)
        if reason:
            raise RuleError(f"you may not double: {reason}")
        self.phase = DOUBLED
        self._add("double", cube=2 * self.cube_value)

    def _double_refusal(self, player: int | None) -> str | None:
        """Why ``player`` may not double now, or None."""
        if self.phase == OVER:
            return "the game is over"
        if self.phase == OPENING:
            return "the game has not started (the opening roll comes first)"
        if player != self.roller:
            return "only the player on roll may double, before rolling"
        if self.phase == DOUBLED:
            return "a double is already offered"
        if self.phase == MOVE:
            return "you have rolled; a double comes before rolling"
        if self.crawford:
            return "no doubling in the Crawford game"
        if self.cube_owner == 1 - player:
            return "your opponent owns the cube"
        if 2 * self.cube_value > self.max_cube:
            return f"the cube is at {self.cube_value}, the most allowed is {self.max_cube}"
        if self.match_length and self.score[player] + self.cube_value >= self.match_length:
            # GNU Backgammon's rule too: a win at the current cube already takes the match.
            return f"the cube is dead: winning this game at {self.cube_value} already wins you the match"
        return None

    def take(self, *, player: int | None = None) -> None:
        """Accept the double: the cube doubles and passes to the taker; the doubler rolls."""
        self._need_double(player)
        self.cube_value *= 2
        self.cube_owner = 1 - self.roller
        self.phase = ROLL
        self._add("take", actor=self.cube_owner, cube=self.cube_value)

    def drop(self, *, player: int | None = None) -> None:
        """Refuse the double: the game ends and the dropper pays the cube's current value."""
        self._need_double(player)
        dropper = 1 - self.roller
        self._add("drop", actor=dropper)
        self._finish(self.roller, 1, END_DROP)

    def _need_double(self, player: int | None) -> None:
        if self.phase != DOUBLED:
            raise RuleError("there is no double to answer")
        self._check_actor(player, 1 - self.roller)

    # -- resignations -----------------------------------------------------------------------

    def resign(self, kind=1, *, player: int | None = None) -> None:
        """Offer to resign a single game (1), a gammon (2) or a backgammon (3); ``player``
        defaults to the one whose turn it is. The opponent accepts or rejects."""
        k = _RESIGN_BY_NAME.get(kind, kind) if isinstance(kind, str) else kind
        if k not in (1, 2, 3):
            raise ValueError(f"a resignation is 1 (single), 2 (gammon) or 3 (backgammon); got {kind!r}")
        if self.phase in (OPENING, OVER):
            raise RuleError("you may resign only while a game is being played")
        self._no_resignation_pending()
        if self.phase == DOUBLED:
            raise RuleError("answer the double first (a drop gives up the game at the current cube)")
        who = self.turn if player is None else player
        if who not in (0, 1):
            raise ValueError(f"player must be 0 or 1; got {player!r}")
        self.resignation = (who, int(k))
        self._add("resign", actor=who, resign=int(k))

    def accept_resignation(self, *, player: int | None = None) -> None:
        """Accept the resignation offered: the game ends with its value times the cube."""
        resigner, kind = self._pending(player)
        if self.phase == MOVE:  # rolled but not played: keep the roll in the record
            roll = Action(self.roller, "roll", self.board, dice=self.dice)
            self.record.actions.insert(self._roll_at, roll)
        self._add("accept", actor=1 - resigner, resign=kind)
        self.resignation = None
        self._finish(1 - resigner, kind, END_RESIGN)

    def reject_resignation(self, *, player: int | None = None) -> None:
        """Refuse the resignation offered; play goes on."""
        resigner, kind = self._pending(player)
        self._add("reject", actor=1 - resigner, resign=kind)
        self.resignation = None

    def _pending(self, player: int | None) -> tuple[int, int]:
        if self.resignation is None:
            raise RuleError("no resignation has been offered")
        self._check_actor(player, 1 - self.resignation[0])
        return self.resignation

    def _no_resignation_pending(self) -> None:
        if self.resignation is not None:
            raise RuleError("a resignation is offered: accept or reject it first")

    # -- the end ----------------------------------------------------------------------------

    def value_of(self, result: int) -> int:
        """Points a win of ``result`` (1, 2, 3) is worth now: times the cube; with the Jacoby rule
        (money play) gammons count single while the cube has not been turned."""
        if self.jacoby and self.match_length == 0 and self.cube_value == 1:
            result = 1
        return result * self.cube_value

    def _finish(self, winner: int, result: int, how: str) -> None:
        self.winner = winner
        self.result = result
        self.points = self.cube_value if how == END_DROP else self.value_of(result)
        self.end = how
        self.phase = OVER
        self.dice = (0, 0) if how != END_BEAROFF else self.dice
        r = self.record
        r.winner, r.points, r.result, r.end = winner, self.points, result, how
        if self._on_over is not None:
            self._on_over(self)

    # -- helpers ----------------------------------------------------------------------------

    def _need(self, phase: str, why: str) -> None:
        if self.phase == OVER:
            raise RuleError("the game is over")
        if self.phase != phase:
            raise RuleError(why)

    def _check_actor(self, player: int | None, expected: int | None) -> None:
        if self.phase == OVER:
            raise RuleError("the game is over")
        if player is not None and expected is not None and player != expected:
            raise RuleError(f"it is player {expected}'s turn to act, not player {player}'s")

    def _add(self, kind: str, actor: int | None = None, **kw) -> None:
        who = self.roller if actor is None else actor
        self.record.actions.append(Action(who, kind, self.board_for(who), **kw))


# ---------------------------------------------------------------------------------------------
# a match


class Match:
    """Games to ``length`` points (0 = a money session), with the Crawford rule.

    >>> m = Match(3, seed=2)
    >>> g = m.new_game()
    >>> g.opening_roll()[0] in (0, 1)
    True
    >>> g.resign(2); g.accept_resignation()
    >>> sorted(m.score), m.over
    ([0, 2], False)
    >>> m.next_is_crawford
    True
    """

    def __init__(self, length: int = 0, *, seed=None, rng: np.random.Generator | None = None,
                 jacoby: bool = False, names: tuple[str, str] = ("Player 0", "Player 1"),
                 max_cube: int = MAX_CUBE, max_games: int | None = None,
                 score: tuple[int, int] = (0, 0), crawford_played: bool | None = None):
        """``score`` and ``crawford_played`` start a match that is already under way; by default
        a player already 1-away means the Crawford game has been played."""
        length = check_match_length(length)
        if len(names) != 2:
            raise ValueError(f"a match has two players' names; got {names!r}")
        if len(score) != 2 or min(score) < 0 or max(score) > MAX_SCORE or (length and max(score) >= length):
            raise ValueError(f"the starting score must be two numbers below the match length; got {score!r}")
        self.length = int(length)
        self.rng = rng if rng is not None else np.random.default_rng(seed)
        self.jacoby = bool(jacoby) and self.length == 0
        self.names = (str(names[0]), str(names[1]))
        self.max_cube = int(max_cube)
        self.max_games = max_games
        self.score = (int(score[0]), int(score[1]))
        self.games: list[Game] = []
        one_away = bool(self.length) and max(self.score) == self.length - 1
        self._crawford_played = one_away if crawford_played is None else bool(crawford_played)
        self.next_is_crawford = one_away and not self._crawford_played

    @property
    def game(self) -> Game | None:
        """The game being played (or the last one)."""
        return self.games[-1] if self.games else None

    @property
    def over(self) -> bool:
        if self.length:
            return max(self.score) >= self.length
        game = self.game
        return (self.max_games is not None and len(self.games) >= self.max_games and game is not None
                and game.over)

    @property
    def winner(self) -> int | None:
        """The match winner (match play), or None while it goes on."""
        if not self.length or not self.over:
            return None
        return 0 if self.score[0] >= self.length else 1

    @property
    def post_crawford(self) -> bool:
        """True once the Crawford game has been played (doubling is allowed again)."""
        return self._crawford_played

    def new_game(self, **kw) -> Game:
        """Start the next game (keyword arguments go to :class:`Game`, e.g. ``board``)."""
        if self.over:
            raise RuleError("the match is over")
        if self.game is not None and not self.game.over:
            raise RuleError("finish the current game first")
        crawford = self.next_is_crawford
        g = Game(rng=self.rng, match_length=self.length, score=self.score, crawford=crawford,
                 jacoby=self.jacoby, number=len(self.games) + 1, max_cube=self.max_cube,
                 on_over=self._game_over, **kw)
        if crawford:
            self._crawford_played = True
            self.next_is_crawford = False
        self.games.append(g)
        return g

    def _game_over(self, game: Game) -> None:
        s = list(self.score)
        assert game.winner is not None  # called when a game has ended, so it has a winner
        s[game.winner] += game.points
        self.score = (s[0], s[1])
        # The game after a player first reaches length - 1 (without winning) is the Crawford game.
        if self.length and not self._crawford_played and not self.over:
            self.next_is_crawford = max(self.score) == self.length - 1

    def context(self) -> MatchContext:
        """The context now: the current game's, or between games the next game's start."""
        g = self.game
        if g is not None and not g.over:
            return g.context()
        return MatchContext(crawford=self.next_is_crawford, game_state=GAME_NONE if g is None else GAME_OVER,
                            match_length=self.length, score=self.score, jacoby=self.jacoby)

    def record(self) -> MatchRecord:
        """The games so far, for :mod:`bgnet.formats.mat`."""
        return MatchRecord(self.length, self.names, self.jacoby, [g.record for g in self.games])


def play_random_game(game: Game, rng: np.random.Generator, *, p_double: float = 0.0,
                     p_take: float = 0.5, p_resign: float = 0.0) -> Game:
    """Play ``game`` to its end with random legal actions (for tests and demonstrations).

    Before each roll the player on roll doubles with probability ``p_double`` when allowed (the
    opponent takes with ``p_take``), and the player to act resigns with ``p_resign`` (accepted
    half the time). Moves are chosen uniformly among the legal ones.

    >>> g = play_random_game(Game(seed=3), np.random.default_rng(3), p_double=0.2)
    >>> g.over and g.points >= 1
    True
    """
    if game.phase == OPENING:
        game.opening_roll()
    while not game.over:
        if game.phase == ROLL:
            if rng.random() < p_resign:
                game.resign(int(rng.integers(1, 4)))
                if rng.random() < 0.5:
                    game.accept_resignation()
                    break
                game.reject_resignation()
            if game.may_double() and rng.random() < p_double:
                game.double()
                if rng.random() < p_take:
                    game.take()
                else:
                    game.drop()
                    break
            game.roll()
        after, _ = game.legal_moves()
        game.play(after[int(rng.integers(len(after)))] if len(after) else None)
    return game


# ---------------------------------------------------------------------------------------------
# checks


def _check_setup(match_length, score, crawford, max_cube, cube_value, cube_owner) -> None:
    check_match_length(match_length)
    if len(score) != 2 or min(score) < 0 or max(score) > MAX_SCORE:
        raise ValueError(f"the score is two numbers of points from 0 to {MAX_SCORE}; got {score!r}")
    if match_length and max(score) >= match_length:
        raise ValueError(f"score {score} is not below the match length {match_length}: the match is over")
    if crawford and (not match_length or match_length - max(score) != 1):
        raise ValueError("only a game where a player is 1-away can be the Crawford game")
    if max_cube < 1 or max_cube & (max_cube - 1):
        raise ValueError(f"the maximum cube must be a power of two; got {max_cube!r}")
    if cube_value < 1 or cube_value & (cube_value - 1) or cube_value > max_cube:
        raise ValueError(f"the cube value must be a power of two up to {max_cube}; got {cube_value!r}")
    if cube_owner not in (CENTERED, 0, 1):
        raise ValueError(f"the cube owner is -1 (centred), 0 or 1; got {cube_owner!r}")
    if (cube_owner == CENTERED) != (cube_value == 1):
        raise ValueError("a cube of 1 is centred and a turned cube has an owner; got "
                         f"value {cube_value}, owner {cube_owner}")


def _check_dice(dice) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in dice)
    except (TypeError, ValueError):
        raise ValueError(f"dice are two numbers from 1 to 6; got {dice!r}") from None
    if not (1 <= a <= 6 and 1 <= b <= 6):
        raise ValueError(f"dice are two numbers from 1 to 6; got {dice!r}")
    return a, b


def _is_pass(move, board: np.ndarray) -> bool:
    """Whether ``move`` means "no move" (None, empty steps or text, or the unchanged board)."""
    if move is None:
        return True
    if isinstance(move, str):  # text names a pass in words, or a move that cannot be played
        return move.strip().lower() in ("", "pass")
    arr = np.asarray(move)
    if not np.issubdtype(arr.dtype, np.number):
        return False
    if arr.shape == (2, 25):
        return bool(np.array_equal(arr, board))
    return arr.size == 0 or bool((arr < 0).all())


def _steps_of(arr: np.ndarray) -> tuple[tuple[int, int], ...]:
    """(from, to) pairs of a steps array, without -1 padding; ValueError for malformed ones."""
    if arr.size % 2 or arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 2):
        raise ValueError(f"steps are (from, to) pairs; got an array of shape {arr.shape}")
    pairs = []
    for a, b in arr.reshape(-1, 2).tolist():
        if a < 0 and b < 0:
            continue
        if not (1 <= a <= 25 and 0 <= b <= 24 and b < a):
            raise RuleError(f"a step goes from a point 1..25 (25 = bar) down to 0..24 (0 = off); got {a}/{b}")
        pairs.append((int(a), int(b)))
    return tuple(pairs)


def _apply_steps(board: np.ndarray, steps) -> np.ndarray | None:
    """The afterstate of playing ``steps`` one by one (hitting blots), or None if a step starts
    from an empty point; legality is left to the caller (it looks the result up)."""
    out = board.astype(np.int8).copy()
    me, opp = out[1], out[0]
    for a, b in steps:
        if me[a - 1] <= 0:
            return None
        me[a - 1] -= 1
        if b:
            me[b - 1] += 1
            if opp[24 - b] == 1:  # my point b is the opponent's index 24 - b
                opp[24 - b] = 0
                opp[24] += 1
    return out
