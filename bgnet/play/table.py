"""A person against a bot at one table: the rules of play as a model, with no input or output.

A :class:`Table` holds a :class:`~bgnet.engine.game.Match` between the person (player 0, ``X``,
the left column of a ``.mat`` file) and the bot of an :class:`~bgnet.play.advisor.Advisor`
(player 1, ``O``). The user interfaces (the terminal's :mod:`bgnet.play.terminal`, the web page's
:mod:`bgnet.play.web.games`) sit on top of it as python-chess's UIs sit on its ``Board``: they
read what the person wants, call the table, and show what it tells them.

What the table does, and what it tells:

* **The person's decisions** are methods: :meth:`Table.roll`, :meth:`~Table.double`,
  :meth:`~Table.take`, :meth:`~Table.drop`, :meth:`~Table.move` (a move in standard notation),
  :meth:`~Table.step` / :meth:`~Table.undo` / :meth:`~Table.confirm` (a move clicked one checker
  hop at a time, each hop checked by :mod:`bgnet.play.clickmove`), :meth:`~Table.resign`.
  A decision the rules refuse raises :class:`Refusal`, whose message is the line to show; the
  game is unchanged.
* **The bot's turns** follow each decision at once (:meth:`Table.play_on`): it answers doubles
  and resignations, doubles, rolls and moves by the advisor, and the person's dice are rolled
  for them when they may not double, and a turn without a legal move passes, until the person
  must decide again or the game is over.
* **Everything that happens** is an *event*, a small frozen dataclass (:class:`Played`,
  :class:`Doubled`, :class:`GameOver`, ...) handed to the ``on_event`` callback the moment it
  happens (so a UI can draw the board as it stands then); each event's ``text`` is the line a
  UI shows for it.
* **Questions** change nothing and answer with an event instead of emitting one:
  :meth:`Table.hint` (the judge's best moves, or its cube advice), and the match as a file
  (:meth:`Table.save`, :meth:`Table.match_text`).
* **The table as data**: :meth:`Table.snapshot` gives it as JSON-able data (every game's
  actions, the roll not yet played, the dice generator's state, the clicked move) and
  :meth:`Table.restore` builds it again by playing the actions by the rules, so a server that
  restarts keeps its games (:mod:`bgnet.play.web.games`).

External players (:mod:`bgnet.play.external`) have no table: GNU Backgammon keeps the game
there and asks the bot one decision at a time.

>>> from bgnet.bots.simple import RandomBot
>>> seen = []
>>> table = Table(Advisor(RandomBot(1), judge=None), seed=3, on_event=seen.append)
>>> table.start_game()
>>> [type(e).__name__ for e in seen][:2]
['GameStarted', 'OpeningRoll']
>>> table.game.turn == HUMAN
True
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bgnet.bots.search import RankedMove
from bgnet.engine.game import DOUBLED, MOVE, OPENING, ROLL, Game, Match, RuleError
from bgnet.engine.notation import IllegalMoveError
from bgnet.engine.position_id import position_id
from bgnet.errors import BadArgument
from bgnet.formats.names import fit_player_name, player_name
from bgnet.play import clickmove
from bgnet.play.advisor import Advisor

if TYPE_CHECKING:
    from bgnet.cube import CubeDecision

HUMAN, BOT = 0, 1
RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
HINT_WIDTH = 80  # columns a hint's lines fit: a terminal's default width
CUBE_SAYS = {"no_double": "no double: roll", "too_good": "too good to double: play on",
             "double_take": "double (it is a take)", "double_pass": "double (it is a pass)"}


class Refusal(BadArgument):
    """A decision the table refuses now; the message is the line to show the person."""


# ---------------------------------------------------------------------------------------------
# events


@dataclass(frozen=True)
class Event:
    """Something that happened at the table; ``text`` is the line a UI shows for it."""

    @property
    def text(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class GameStarted(Event):
    number: int
    names: tuple[str, str]
    score: tuple[int, int]
    match_length: int
    crawford: bool

    @property
    def text(self) -> str:
        if not self.match_length:
            return f"Game {self.number}"
        return (f"Game {self.number}: score {self.names[HUMAN]} {self.score[HUMAN]}, "
                f"{self.names[BOT]} {self.score[BOT]}"
                + (" (Crawford game: no doubling)" if self.crawford else ""))


@dataclass(frozen=True)
class OpeningRoll(Event):
    starter: int
    dice: tuple[int, int]  # (the person's die, the bot's)
    bot: str

    @property
    def text(self) -> str:
        first = "you start" if self.starter == HUMAN else f"{self.bot} starts"
        return f"Opening roll: you {self.dice[0]}, {self.bot} {self.dice[1]}; {first}."


@dataclass(frozen=True)
class Rolled(Event):
    """The person rolled (the bot's roll is told with its move)."""

    dice: tuple[int, int]

    @property
    def text(self) -> str:
        return f"You roll {dice_text(self.dice)}."


@dataclass(frozen=True)
class CannotMove(Event):
    """The person has no legal move with ``dice``; told before the turn passes."""

    dice: tuple[int, int]

    @property
    def text(self) -> str:
        return f"You cannot move with {dice_text(self.dice)}."


@dataclass(frozen=True)
class Played(Event):
    player: int
    dice: tuple[int, int]
    notation: str  # "" when the bot could not move
    bot: str

    @property
    def text(self) -> str:
        if self.player == HUMAN:
            return f"You play {self.notation}."
        played = f"plays {self.notation}." if self.notation else "cannot move."
        return f"{self.bot} rolls {dice_text(self.dice)} and {played}"


@dataclass(frozen=True)
class Doubled(Event):
    player: int
    value: int  # the cube offered
    bot: str

    @property
    def text(self) -> str:
        who = "You double" if self.player == HUMAN else f"{self.bot} doubles"
        return f"{who} to {self.value}."


@dataclass(frozen=True)
class Took(Event):
    player: int
    value: int  # the cube now
    bot: str

    @property
    def text(self) -> str:
        if self.player == HUMAN:
            return f"You take: the cube is at {self.value} and yours."
        return f"{self.bot} takes: the cube is at {self.value}, {self.bot} owns it."


@dataclass(frozen=True)
class Dropped(Event):
    player: int
    bot: str

    @property
    def text(self) -> str:
        return "You drop." if self.player == HUMAN else f"{self.bot} drops."


@dataclass(frozen=True)
class ResignationAnswered(Event):
    """The bot's answer to the person's resignation of ``kind`` (1, 2, 3)."""

    kind: int
    accepted: bool
    bot: str

    @property
    def text(self) -> str:
        if self.accepted:
            return f"{self.bot} accepts your resignation of {RESULT_NAMES[self.kind]}."
        return f"{self.bot} rejects your resignation of {RESULT_NAMES[self.kind]}: play on."


@dataclass(frozen=True)
class GameOver(Event):
    winner: int
    result: int  # 1, 2, 3: single, gammon, backgammon
    points: int
    end: str  # "bearoff", "drop" or "resign"
    names: tuple[str, str]
    score: tuple[int, int]  # the match's, after this game
    match_length: int

    @property
    def text(self) -> str:
        winner = "You win" if self.winner == HUMAN else f"{self.names[BOT]} wins"
        pts = f"{self.points} point{'s' if self.points != 1 else ''}"
        head = f"{winner} {RESULT_NAMES[self.result]}: {pts}." if self.end == "bearoff" else \
            f"{winner} {pts}."
        you, bot = (f"{self.names[p]} {self.score[p]}" for p in (HUMAN, BOT))
        tail = f"Score: {you}, {bot} (to {self.match_length})." if self.match_length else \
            f"Session: {you}, {bot}."
        return f"{head}\n{tail}"


@dataclass(frozen=True)
class MatchOver(Event):
    winner: int | None  # None after a money session
    score: tuple[int, int]
    bot: str

    @property
    def text(self) -> str:
        if self.winner is None:
            return "The session is over."
        who = "You win" if self.winner == HUMAN else f"{self.bot} wins"
        return f"{who} the match {max(self.score)}-{min(self.score)}."


@dataclass(frozen=True)
class MoveHint(Event):
    """The judge's best ``shown`` of the ``moves`` (all legal moves, best first)."""

    moves: tuple[RankedMove, ...]
    shown: int
    judge: str
    ranked_by: str  # what the moves are ranked by, in words ("" without a judge)

    @property
    def text(self) -> str:
        if not self.moves:
            return "No legal move."
        n = len(self.moves)
        by = f", ranked by {self.ranked_by}" if self.ranked_by else ""
        lines = textwrap.wrap(f"{n} legal move{'s' if n != 1 else ''}; the best "
                              f"{min(self.shown, n)} by {self.judge}{by}:", HINT_WIDTH,
                              subsequent_indent="  ")
        for i, m in enumerate(self.moves[:self.shown], 1):
            # Two lines a move, so that a hint fits an 80-column terminal: the move and what it
            # is ranked by, then its probabilities under it.
            figures = "  ".join(f.text() for f in m.figures())
            lines.append(f"  {i}. {m.notation:<24s}{figures}".rstrip())
            if m.probabilities is not None:
                lines.append(f"       {stats(m.probabilities)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class CubeHint(Event):
    """The judge's cube advice (``decision`` None: it has none) for the person on roll, or
    on whether to take the bot's double (``doubled``)."""

    decision: CubeDecision | None
    doubled: bool
    money: bool
    judge: str
    bot: str
    probabilities: tuple[float, ...] | None

    @property
    def text(self) -> str:
        d = self.decision
        if d is None:
            return "No cube advice: the bot has no evaluation of positions."
        if self.doubled:
            point = "" if d.take_point is None else f" (take point {100 * d.take_point:.1f}%)"
            head = f"{self.judge} says: {'take' if d.take else 'drop'}{point}."
        elif not d.cube_available:
            return "You may not double now; roll."
        else:
            head = f"{self.judge} says: {CUBE_SAYS[d.action]}."
        who = self.bot if self.doubled else "you"
        return (f"{head}\n  cubeful {'money' if self.money else 'match'} equity for {who} (on roll):\n"
                f"    no double {d.no_double:+.3f}, double/take {_num(d.double_take)}, "
                f"double/pass {_num(d.double_pass)}\n  {stats(self.probabilities)}")


# ---------------------------------------------------------------------------------------------
# the table


class Table:
    """The person (player 0) against ``advisor``'s bot (player 1) in a match of
    ``match_length`` points, or a money session of ``games`` games (None: no limit) when it is 0.

    ``on_event(event)`` is called with every event as it happens. ``seed`` or ``rng`` (a
    ``numpy.random.Generator``, or anything with its ``integers``) roll the dice; ``hints`` is
    the number of moves a hint shows by default. ``name``, the person's, keeps the rule of
    :mod:`bgnet.formats.names` (BadArgument otherwise), so the match can always be saved.
    """

    def __init__(self, advisor: Advisor, *, match_length: int = 0, games: int | None = 1,
                 seed=None, rng=None, name: str = "You", jacoby: bool = False, hints: int = 5,
                 on_event: Callable[[Event], None] = lambda event: None):
        self.advisor = advisor
        try:
            self.name = player_name(name)
        except ValueError as e:  # what a UI let through: the person's own words are at fault
            raise BadArgument(str(e)) from None
        self.bot_name = mat_name(advisor.bot.name)
        self.match = Match(match_length, seed=seed, rng=rng, jacoby=jacoby,
                           names=(name, self.bot_name), max_games=None if match_length else games)
        self.hints = hints
        self.on_event = on_event
        self.steps: list = []  # the clicked move so far: (from, to, die) single steps

    @property
    def game(self) -> Game:
        """The game being played (or the last one)."""
        g = self.match.game
        if g is None:
            raise Refusal("no game has started yet")
        return g

    @property
    def names(self) -> tuple[str, str]:
        return (self.name, self.bot_name)

    def _emit(self, event: Event) -> None:
        self.on_event(event)

    # -- games -----------------------------------------------------------------------------------

    def start_game(self, game: Game | None = None) -> None:
        """Start the match's next game (or ``game``, one of this match's set up in a position),
        roll its opening roll, and play on to the person's first decision."""
        g = game if game is not None else self.match.new_game()
        self.steps = []
        self._emit(GameStarted(len(self.match.games), self.names, self.match.score,
                               self.match.length, g.crawford))
        if g.phase == OPENING:
            starter, dice = g.opening_roll()
            mine = (dice[0], dice[1]) if starter == HUMAN else (dice[1], dice[0])
            self._emit(OpeningRoll(starter, mine, self.bot_name))
        self.play_on()

    def play_on(self) -> None:
        """Let the bot act, roll for the person when they may not double and pass their turn
        without a legal move, until the person must decide or the game is over (then tell it,
        and the end of the match with it)."""
        g = self.game
        self.steps = []
        while not g.over:
            if g.turn == BOT:
                self._bot_turn(g)
            elif not self._person_automatic(g):
                return
        assert g.winner is not None, "a game that is over has a winner"
        self._emit(GameOver(g.winner, g.result, g.points, g.end, self.names, self.match.score,
                            self.match.length))
        if self.match.over:
            self._emit(MatchOver(self.match.winner, self.match.score, self.bot_name))

    def _person_automatic(self, g: Game) -> bool:
        """The person's turn where they have no choice: roll when they may not double, pass
        without a legal move. False when they must decide."""
        if g.phase == ROLL and not g.may_double(HUMAN):
            g.roll(player=HUMAN)
            self._emit(Rolled(g.dice))
        if g.phase == MOVE and len(g.legal_moves()[0]) == 0:
            self._emit(CannotMove(g.dice))
            g.play(None, player=HUMAN)
            return True
        return False

    # -- the bot ---------------------------------------------------------------------------------

    def _bot_turn(self, g: Game) -> None:
        """The bot answers a double, or doubles, or rolls and moves."""
        if g.phase == DOUBLED:
            self._bot_answers_double(g)
            return
        if g.phase == ROLL:
            if g.may_double(BOT) and self.advisor.wants_double(g.board, g.context()):
                g.double(player=BOT)
                self._emit(Doubled(BOT, 2 * g.cube_value, self.bot_name))
                return
            g.roll(player=BOT)
        dice = g.dice
        choice = self.advisor.choose(g.board, *dice, g.context())
        g.play(None if choice is None else choice[0], player=BOT)
        self._emit(Played(BOT, dice, g.record.actions[-1].notation or "", self.bot_name))

    def _bot_answers_double(self, g: Game) -> None:
        if self.advisor.wants_take(g.board, g.context()):
            g.take(player=BOT)
            self._emit(Took(BOT, g.cube_value, self.bot_name))
        else:
            g.drop(player=BOT)
            self._emit(Dropped(BOT, self.bot_name))

    # -- the person's decisions ------------------------------------------------------------------

    def roll(self) -> None:
        """Roll the dice at the start of the person's turn."""
        g = self._person(ROLL, "you can roll only at the start of your turn")
        g.roll(player=HUMAN)
        self._emit(Rolled(g.dice))
        self.play_on()

    def double(self) -> None:
        """Offer the cube before rolling."""
        g = self._person(ROLL, "you can double only before rolling")
        try:
            g.double(player=HUMAN)
        except RuleError as e:
            raise Refusal(f"You cannot double: {e}.") from None
        self._emit(Doubled(HUMAN, 2 * g.cube_value, self.bot_name))
        self.play_on()

    def take(self) -> None:
        """Take the bot's double."""
        g = self._person(DOUBLED, "there is no double to answer")
        g.take(player=HUMAN)
        self._emit(Took(HUMAN, g.cube_value, self.bot_name))
        self.play_on()

    def drop(self) -> None:
        """Drop the bot's double: the game is lost at the cube's value."""
        g = self._person(DOUBLED, "there is no double to answer")
        g.drop(player=HUMAN)
        self._emit(Dropped(HUMAN, self.bot_name))
        self.play_on()

    def move(self, text: str) -> None:
        """Play a move in standard notation (``24/18 13/11``); it replaces a clicked one."""
        g = self._person(MOVE, "roll the dice first")
        self.steps = []
        word = text.strip().lower()
        # Enter pressed again, as if to roll, is told the same as "roll" (a turn without a legal
        # move never waits here: it passes by itself).
        if word in ("roll", "double") or (word == "" and len(g.legal_moves()[0])):
            raise Refusal(f"You have rolled {dice_text(g.dice)}: play your move (hint lists the "
                          "best ones).")
        if word in ("take", "drop", "accept", "reject"):
            raise Refusal("There is no double to answer: play your move.")
        self._play(g, text)

    def _play(self, g: Game, move) -> None:
        dice = g.dice
        try:
            g.play(move, player=HUMAN)
        except IllegalMoveError as e:
            raise Refusal(f"Illegal move: {e}. Try again (hint lists the legal moves).") from None
        except RuleError as e:
            raise Refusal(f"Not allowed: {e}.") from None
        self._emit(Played(HUMAN, dice, g.record.actions[-1].notation, self.bot_name))
        self.play_on()

    def step(self, a: int, b: int) -> None:
        """Add the hop of one checker from point ``a`` to ``b`` (the person's numbering, 25 the
        bar, 0 off) to the clicked move, if it can still end in a legal move."""
        g = self._person(MOVE, "roll the dice first")
        try:
            self.steps = clickmove.add_hop(g.board, *g.dice, self.steps, a, b, g.legal_moves()[0])
        except IllegalMoveError as e:
            raise Refusal(f"Illegal move: {e}.") from None

    def undo(self) -> None:
        """Take the clicked move back."""
        self._person(MOVE, "there is no move to undo")
        self.steps = []

    def confirm(self) -> None:
        """Play the clicked move, once it is a whole legal move."""
        g = self._person(MOVE, "there is no move to confirm")
        after = self.clicked_move()
        if after is None:
            left = clickmove.unused(clickmove.dice_of(*g.dice), self.steps)
            raise Refusal(f"the move is not finished: play the {_and(left)} too (or undo)")
        self._play(g, after)

    def resign(self, kind: int = 1) -> None:
        """Offer to resign a single game (1), a gammon (2) or a backgammon (3); the bot accepts
        (the game ends) or rejects it (play goes on)."""
        g = self._person(None, "")
        try:
            g.resign(kind, player=HUMAN)
        except RuleError as e:
            raise Refusal(f"You cannot resign now: {e}.") from None
        accepted = self.advisor.accepts_resignation(g.board_for(HUMAN), kind, g.value_of)
        if accepted:
            g.accept_resignation(player=BOT)
        else:
            g.reject_resignation(player=BOT)
        self._emit(ResignationAnswered(kind, accepted, self.bot_name))
        if accepted:
            self.play_on()

    def _person(self, phase: str | None, why: str) -> Game:
        """The game, when the person may act in ``phase`` (None: any); Refusal otherwise."""
        g = self.match.game
        if g is None or g.over:
            raise Refusal("the game is over: start the next game")
        if g.turn != HUMAN:
            raise Refusal("it is not your turn")
        if phase is not None and g.phase != phase:
            raise Refusal(why)
        return g

    # -- the clicked move ------------------------------------------------------------------------

    def clicked_move(self) -> np.ndarray | None:
        """The legal afterstate the clicked steps have reached, or None."""
        g = self.game
        return clickmove.is_complete(g.board, self.steps, g.legal_moves()[0])

    def dice_left(self) -> list[int]:
        """The dice the clicked move has not used yet."""
        return clickmove.unused(clickmove.dice_of(*self.game.dice), self.steps)

    def destinations(self) -> dict[int, list[int]]:
        """For each point the person may move a checker from now, the points one hop may take
        it to (as :meth:`step` accepts them)."""
        g = self.game
        after_all = g.legal_moves()[0]
        rest = self.dice_left()
        if not rest or len(after_all) == 0:
            return {}
        me, _ = clickmove.replay(g.board, self.steps)
        reach = sorted({sum(rest[:k]) for k in range(1, len(rest) + 1)}
                       | ({rest[-1]} if len(rest) > 1 else set()))
        sources = [clickmove.BAR] if me[24] > 0 else [p for p in range(24, 0, -1) if me[p - 1] > 0]
        out = {}
        for a in sources:
            ends = [b for b in dict.fromkeys(max(a - d, 0) for d in reach) if self._hop_ok(a, b)]
            if ends:
                out[a] = ends
        return out

    def _hop_ok(self, a: int, b: int) -> bool:
        g = self.game
        try:
            clickmove.add_hop(g.board, *g.dice, self.steps, a, b, g.legal_moves()[0])
        except IllegalMoveError:
            return False
        return True

    # -- questions -------------------------------------------------------------------------------

    def hint(self, n: int | None = None) -> Event:
        """The judge's view for the person now: its best ``n`` moves (default ``hints``) once
        the dice are rolled, else its cube advice."""
        if self.game.phase == MOVE:
            return self.move_hint(self.hints if n is None else n)
        return self.cube_hint()

    def move_hint(self, n: int) -> MoveHint:
        g = self.game
        ranked = self.advisor.ranked_moves(g.board, *g.dice, g.context())
        return MoveHint(tuple(ranked), n, self.judge_name(), ranked[0].ranked_by() if ranked else "")

    def cube_hint(self) -> CubeHint:
        g = self.game
        d = self.advisor.cube_decision(g.board, g.context())
        probs = None
        if d is not None:
            p = self.advisor.probabilities(g.board)
            assert p is not None, "an advisor with cube advice has a judge, and so probabilities"
            probs = tuple(float(x) for x in p)
        return CubeHint(d, g.phase == DOUBLED, g.match_length == 0, self.judge_name(),
                        self.bot_name, probs)

    def judge_name(self) -> str:
        judge = self.advisor.judge
        return "legal order (no evaluator)" if judge is None else judge.name

    # -- the table as data -----------------------------------------------------------------------

    def snapshot(self) -> dict:
        """The table as JSON-able data for :meth:`restore`: the names and rules, each game's
        actions as its record holds them (``[player, kind, dice, steps, cube, resign]``; boards
        are left out, the rules give them back), the roll made but not yet played, the dice
        generator's state, the clicked move so far, and a summary of the moment to check the
        restored table against. ValueError for a table whose dice come from something other
        than a numpy generator (its state cannot be stored)."""
        rng = self.match.rng
        if not isinstance(rng, np.random.Generator):
            raise ValueError("only a table whose dice come from a numpy Generator can be stored")
        g = self.match.game
        return {
            "format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION,
            "name": self.name, "bot_name": self.bot_name, "match_length": self.match.length,
            "jacoby": self.match.jacoby, "max_games": self.match.max_games, "hints": self.hints,
            "games": [[_action_data(a) for a in game.record.actions] for game in self.match.games],
            "roll": None if g is None or g.phase != MOVE else [g.roller, *g.dice],
            "rng": rng.bit_generator.state,
            "steps": [list(s) for s in self.steps],
            "moment": _moment(self.match),
        }

    @classmethod
    def restore(cls, advisor: Advisor, data: dict, *,
                on_event: Callable[[Event], None] = lambda event: None) -> Table:
        """The table :meth:`snapshot` gave ``data`` of, its games played again by the rules
        (no event is told); ValueError saying what does not fit (a record the rules refuse, a
        moment other than the one stored)."""
        if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"not a table's data (no {SNAPSHOT_FORMAT!r} format tag)")
        if data.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"a table's data of version {data.get('version')!r}; this bgnet "
                             f"reads version {SNAPSHOT_VERSION}")
        try:
            table = cls(advisor, match_length=data["match_length"], games=data["max_games"],
                        name=data["name"], jacoby=bool(data["jacoby"]), hints=data["hints"],
                        on_event=on_event)
            table.bot_name = fit_player_name(data["bot_name"])
            table.match.names = (table.name, table.bot_name)
            games, roll = data["games"], data["roll"]
            for number, actions in enumerate(games, 1):
                g = table.match.new_game()
                for i, action in enumerate(actions):
                    if g.phase == OPENING and action[1] in ("resign", "reject"):
                        # Resigned after the opening roll, before its move: the roll is the one
                        # the move plays later, or the one not yet played.
                        later = [[a[0], *a[2]] for a in actions[i:] if a[1] in ("move", "roll")]
                        _replay_roll(g, later[0] if later else roll if number == len(games) else None)
                    _replay_action(g, action)
                if number < len(games) and not g.over:
                    raise ValueError(f"game {number} is not over, yet another follows it")
            last = table.match.game
            if roll is not None and not (last is not None and last.phase == MOVE
                                         and [last.roller, *last.dice] == roll):
                _replay_roll(last, roll)
            table.match.rng.bit_generator.state = data["rng"]
            for a, b, _ in data["steps"]:
                table.step(int(a), int(b))
        except (KeyError, TypeError, IndexError, RuleError, ValueError) as e:
            raise ValueError(f"the table's games cannot be played again ({type(e).__name__}: {e})") from None
        if _moment(table.match) != data["moment"] or [list(s) for s in table.steps] != data["steps"]:
            raise ValueError("the table's games, played again, do not reach the moment stored")
        return table

    # -- the match as a file ---------------------------------------------------------------------

    def match_text(self, fmt: str = "mat") -> str:
        """The match so far as a ``.mat`` file (``fmt`` "mat") or GNU Backgammon's ``.sgf``."""
        if fmt == "sgf":
            from bgnet.formats.sgf import write_sgf

            return write_sgf(self.match)
        from bgnet.formats.mat import write_mat

        return write_mat(self.match)

    def save(self, path) -> Path:
        """Write the match to ``path``: ``.sgf`` when its name ends so, ``.mat`` otherwise.
        Raises OSError or ValueError when it cannot be written."""
        p = Path(path)
        if p.suffix.lower() == ".sgf":
            from bgnet.formats.sgf import save_sgf

            save_sgf(self.match, p)
        else:
            from bgnet.formats.mat import save_mat

            save_mat(self.match, p)
        return p


# ---------------------------------------------------------------------------------------------
# the table as data

SNAPSHOT_FORMAT = "bgnet-table"
SNAPSHOT_VERSION = 1
_ACTION_KINDS = ("move", "double", "take", "drop", "resign", "accept", "reject", "roll")


def _action_data(a) -> list:
    """One action of a game's record as ``[player, kind, dice, steps, cube, resign]``."""
    return [int(a.player), a.kind, [int(d) for d in a.dice], [[int(x), int(y)] for x, y in a.steps],
            int(a.cube), int(a.resign)]


def _replay_action(g: Game, data) -> None:
    """Play one stored action again by the rules (RuleError, ValueError, TypeError when it
    cannot be played or is not an action's data at all)."""
    player, kind, dice, steps, _cube, resign = data
    if kind not in _ACTION_KINDS or player not in (0, 1):
        raise ValueError(f"{data!r} is not a stored action")
    if kind in ("move", "roll") and g.phase in (OPENING, ROLL):
        g.replay_roll(player, (int(dice[0]), int(dice[1])))
    if kind == "move":
        g.play(tuple((int(x), int(y)) for x, y in steps) or None, player=player)
    elif kind == "roll":
        pass  # the dice alone: the game was resigned before they were played
    elif kind == "resign":
        g.resign(int(resign), player=player)
    else:
        getattr(g, {"double": "double", "take": "take", "drop": "drop",
                    "accept": "accept_resignation", "reject": "reject_resignation"}[kind])(player=player)


def _replay_roll(g: Game | None, roll) -> None:
    """Make again a roll that was made but not yet played (``[player, d1, d2]``)."""
    if roll is None:
        raise ValueError("a roll is missing: the game was resigned before its opening roll")
    player, d1, d2 = (int(x) for x in roll)
    if g is None or g.phase not in (OPENING, ROLL):
        raise ValueError("a roll is stored where no roll can be made")
    g.replay_roll(player, (d1, d2))


def _moment(match: Match) -> dict:
    """What a table's data is checked against when it is restored."""
    g = match.game
    return {"games": len(match.games), "score": list(match.score),
            "phase": None if g is None else g.phase,
            "turn": None if g is None else g.turn,
            "dice": None if g is None else list(g.dice),
            "cube": None if g is None else [g.cube_value, g.cube_owner],
            "position": None if g is None else position_id(g.board)}


# ---------------------------------------------------------------------------------------------
# words


def dice_text(dice) -> str:
    """The dice rolled, higher first: "6-4"."""
    return f"{max(dice)}-{min(dice)}"


def stats(probs) -> str:
    """Cubeless probabilities in words ("" for None).

    >>> stats((0.5, 0.1, 0.0, 0.2, 0.01))
    'win 50.0% (gammon 10.0%, bg 0.0%)  lose 50.0% (gammon 20.0%, bg 1.0%)'
    """
    if probs is None:
        return ""
    w, wg, wbg, lg, lbg = probs
    return (f"win {100 * w:.1f}% (gammon {100 * wg:.1f}%, bg {100 * wbg:.1f}%)  "
            f"lose {100 * (1 - w):.1f}% (gammon {100 * lg:.1f}%, bg {100 * lbg:.1f}%)")


def mat_name(name: str) -> str:
    """A bot's name as a player's name (:func:`bgnet.formats.names.fit_player_name`): no ':',
    no control characters, at most 40 characters.

    >>> mat_name("gnubg: 2-ply")
    'gnubg- 2-ply'
    """
    return fit_player_name(name, "bot")


def _num(x) -> str:
    return "-" if x is None else f"{x:+.3f}"


def _and(items) -> str:
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


__all__ = ["Table", "Refusal", "Event", "GameStarted", "OpeningRoll", "Rolled", "CannotMove",
           "Played", "Doubled", "Took", "Dropped", "ResignationAnswered", "GameOver", "MatchOver",
           "MoveHint", "CubeHint", "HUMAN", "BOT", "RESULT_NAMES"]
