"""GNU Backgammon's own match file, ``.sgf``: write game records, read them back.

GNU Backgammon keeps matches (``save match``, ``load match``) in the Smart Game Format, version 4,
with game number 6 for backgammon. A file is a collection of game trees, one per game; each tree
is a root node followed by one node per action::

    (;FF[4]GM[6]CA[UTF-8]AP[bgnet]MI[length:5][game:0][ws:0][bs:0]PW[Alice]PB[Bob]RU[Crawford]RE[B+2]
    ;B[65lrrw]
    ;W[43xuhd]
    ;B[double]
    ;W[take]
    ...)

Players: ``W`` is player 0 (the left column of a ``.mat`` file), ``B`` player 1. Properties of the
root node (the game's header):

* ``MI[length:N][game:K][ws:S0][bs:S1]``: the match length (0 for a money session), the game's
  index from 0, and the score of player 0 (``ws``) and player 1 (``bs``) before it;
* ``PW``, ``PB``: the names of players 0 and 1;
* ``RU``: the rules, ``:``-separated: ``Crawford`` (a match with the Crawford rule),
  ``CrawfordGame`` (this is the Crawford game), ``Jacoby`` (money play);
* ``RE[W+2]``, ``RE[B+4R]``: who won, the points, and ``R`` when a resignation ended the game.

A move node holds the dice then each checker step as two letters, from and to. Each player's
points are lettered from its own side: player 0's point ``p`` is ``chr(ord("a") + p - 1)``
(``a`` is its 1-point), player 1's is ``chr(ord("x") - p + 1)`` (``x`` is its 1-point); ``y`` is
the bar and ``z`` off for both. A roll that cannot be played is the dice alone. Cube actions are
the words ``double``, ``take`` and ``drop``. A resignation has no node of its own: the ``R`` of
``RE`` says the game ended so. A game that starts from a position other than the opening has a
setup node first: ``PL`` (who is on roll), ``AE[a:y]`` (clear the board), ``AW`` and ``AB``
(one value per checker of players 0 and 1, lettered as above).

GNU Backgammon also writes its analysis (``A``, ``DA``, ``LU``, ``GS``, marks) and comments (``C``);
:func:`read_sgf` reads past them. It replays every game with :class:`~bgnet.engine.game.Game`, so
each move is checked against the rules, and says which line of the file it cannot use.

>>> from bgnet.engine.game import Match
>>> m = Match(3, names=("Alice", "Bob"), seed=1)
>>> g = m.new_game()
>>> _ = g.opening_roll((3, 1))
>>> g.play("8/5 6/5")
>>> text = write_sgf(m)
>>> text.splitlines()[1]
';W[31hefe])'
>>> read_sgf(text).games[0].actions[0].notation
'8/5 6/5'
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgnet.engine.board import NUM_CHECKERS, start_position
from bgnet.engine.game import DOUBLED, OPENING, Game, GameRecord, Match, MatchRecord, RuleError
from bgnet.engine.state import CENTERED, MAX_SCORE, read_match_length
from bgnet.errors import quoted
from bgnet.formats.files import read_user_text
from bgnet.formats.names import check_player_names, fit_player_name

BACKGAMMON = "6"  # GM[6]
BAR, OFF = "y", "z"
CUBE_WORDS = ("double", "take", "drop")
_MOVE_RE = re.compile(r"^([1-6])([1-6])((?:[a-z][a-z]){0,4})$")
_RESULT_RE = re.compile(r"^([WB])\+([0-9]{1,9})(R?)$", re.IGNORECASE)  # ASCII digits, bounded
_SETUP = {"AE", "AB", "AW", "PL", "CV", "CP", "DI"}


class SgfError(ValueError):
    """A ``.sgf`` file that cannot be read; the message names the line and what is wrong."""


# ---------------------------------------------------------------------------------------------
# writing


def point_letter(point: int, player: int) -> str:
    """The letter of ``player``'s ``point`` (25 the bar, 0 off) in a move node.

    >>> point_letter(24, 0), point_letter(24, 1), point_letter(25, 1), point_letter(0, 0)
    ('x', 'a', 'y', 'z')
    """
    if point == 25:
        return BAR
    if point == 0:
        return OFF
    return chr(ord("a") + point - 1) if player == 0 else chr(ord("x") - point + 1)


def letter_point(letter: str, player: int) -> int:
    """The point (25 the bar, 0 off) that ``letter`` names for ``player``; ValueError for a
    letter outside ``a`` .. ``z``."""
    if letter == BAR:
        return 25
    if letter == OFF:
        return 0
    if not "a" <= letter <= "x":
        raise ValueError(f"{letter!r} names no point (a-x are points, y the bar, z off)")
    return ord(letter) - ord("a") + 1 if player == 0 else ord("x") - ord(letter) + 1


def write_sgf(match: Match | MatchRecord, *, comments: Mapping[tuple[int, int], str] | None = None,
              date: str | None = None, application: str = "bgnet") -> str:
    """The ``.sgf`` text of a match (a :class:`Match` or its :class:`MatchRecord`).

    ``comments`` maps (game index, action index), both from 0, to a comment written on that
    action's node (``C``); actions without a node (resignations and their answers) lend theirs to
    the node before. ``date`` (``YYYY-MM-DD``) is written in the first game's header. Raises
    ValueError for a name that breaks the rule of :mod:`bgnet.formats.names`, as the ``.mat``
    writer does.
    """
    record = match.record() if isinstance(match, Match) else match
    check_player_names(record.names)
    notes = dict(comments or {})
    final = record.final_score()
    trees = []
    for k, game in enumerate(record.games):
        trees.append(_game_tree(k, game, record, final, notes, date if k == 0 else None, application))
    return "".join(trees)


def save_sgf(match: Match | MatchRecord, path, **kwargs) -> Path:
    """Write :func:`write_sgf` of ``match`` to ``path``; returns the path."""
    p = Path(path)
    p.write_text(write_sgf(match, **kwargs), encoding="utf-8")
    return p


def _game_tree(k: int, game: GameRecord, record: MatchRecord, final, notes, date, application) -> str:
    head = [f"(;FF[4]GM[6]CA[UTF-8]AP[{_escape(application)}]",
            f"MI[length:{record.length}][game:{k}][ws:{game.score[0]}][bs:{game.score[1]}]",
            f"PW[{_escape(record.names[0])}]PB[{_escape(record.names[1])}]"]
    if date:
        head.append(f"DT[{_escape(date)}]")
    rules = []
    if record.length:
        rules.append("Crawford")
        if game.crawford:
            rules.append("CrawfordGame")
    elif game.jacoby or record.jacoby:
        rules.append("Jacoby")
    if rules:
        head.append(f"RU[{':'.join(rules)}]")
    if game.winner is not None:
        head.append(f"RE[{'WB'[game.winner]}+{game.points}{'R' if game.end == 'resign' else ''}]")
    nodes = ["".join(head)]
    setup = _setup_node(game)
    if setup:
        nodes.append(setup)
    for i, act in enumerate(game.actions):
        text = _node_text(act)
        note = notes.get((k, i))
        if text is None:  # no node of its own: the comment goes on the node before
            if note and len(nodes) > 1:
                nodes[-1] += f"C[{_escape(note)}]"
            continue
        nodes.append(text + (f"C[{_escape(note)}]" if note else ""))
    return "\n;".join(nodes) + ")\n"


def _node_text(act) -> str | None:
    """One action as the body of its node (without the ``;``), or None for actions the format
    shows only through ``RE``."""
    colour = "WB"[act.player]
    if act.kind in ("move", "roll"):
        # the higher die first, as in .mat files: a roll reads the same whatever order the dice
        # fell in, and GNU Backgammon's .sgf of bgnet's .mat (import mat, save match) is this file
        steps = sorted(act.steps, reverse=True) if act.kind == "move" else ()
        letters = "".join(point_letter(a, act.player) + point_letter(b, act.player) for a, b in steps)
        return f"{colour}[{max(act.dice)}{min(act.dice)}{letters}]"
    if act.kind in CUBE_WORDS:
        return f"{colour}[{act.kind}]"
    return None


def _setup_node(game: GameRecord) -> str:
    """``PL``, ``AE``, ``AW`` and ``AB`` for a game that did not start from the opening
    position; "" for one that did."""
    first = game.actions[0] if game.actions else None
    if first is None or np.array_equal(first.board, start_position()):
        return ""
    on_roll = first.player
    sides = {on_roll: first.board[1], 1 - on_roll: first.board[0]}
    parts = [f"PL[{'WB'[on_roll]}]AE[a:y]"]
    for player, prop in ((0, "AW"), (1, "AB")):
        values = [f"[{point_letter(25 if i == 24 else i + 1, player)}]" * int(n)
                  for i, n in enumerate(sides[player]) if n]
        if values:
            parts.append(prop + "".join(values))
    return "".join(parts)


def _escape(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("]", "\\]")


# ---------------------------------------------------------------------------------------------
# the SGF syntax: game trees, nodes, properties


@dataclass
class Property:
    """One property of a node: its name, its values (escapes undone) and the line it starts on."""

    name: str
    values: list[str]
    line: int


Node = list[Property]


def parse_collection(text: str) -> list[list[Node]]:
    """The game trees of an SGF collection, each as the list of its nodes along the main line
    (the first variation wherever a tree branches). Raises :class:`SgfError` naming the line of
    the first thing that is not SGF.

    >>> tree = parse_collection("(;GM[6]C[a \\\\] b]\\n;W[31hefe])")[0]
    >>> [(p.name, p.values, p.line) for node in tree for p in node]
    [('GM', ['6'], 1), ('C', ['a ] b'], 1), ('W', ['31hefe'], 2)]
    """
    parser = _Parser(text.lstrip("\ufeff"))
    trees = []
    parser.skip_space()
    while not parser.at_end():
        if parser.peek() != "(":
            raise SgfError(f"line {parser.line}: expected '(' to open a game tree; got "
                           f"{parser.rest_of_line()!r}")
        trees.append(parser.tree())
        parser.skip_space()
    if not trees:
        raise SgfError("line 1: the file holds no game tree: this is not a .sgf file")
    return trees


@dataclass
class _OpenTree:
    """A game tree whose ``)`` is still to come: where it opened, whether its nodes are on the
    main line, and how many variations it has had so far."""

    line: int
    on_main_line: bool
    variations: int = 0


class _Parser:
    """A cursor over the text that keeps the line number."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self) -> str:
        c = self.text[self.pos]
        self.pos += 1
        if c == "\n":
            self.line += 1
        return c

    def skip_space(self) -> None:
        while not self.at_end() and self.peek().isspace():
            self.take()

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.pos)
        return self.text[self.pos:end if end >= 0 else len(self.text)][:40]

    def tree(self) -> list[Node]:
        """``( node... subtree... )``: the nodes of the main line (each tree's nodes, then those
        of its first variation, and so on down). Read with a stack of the trees still open, not
        by recursion, so that variations nested thousands deep cost memory, not the stack."""
        main: list[Node] = []
        open_trees: list[_OpenTree] = []  # innermost last
        self._open(open_trees, on_main_line=True, nodes=main)
        while open_trees:
            inner = open_trees[-1]
            self.skip_space()
            if self.peek() == "(":
                on_main = inner.on_main_line and not inner.variations
                inner.variations += 1
                self._open(open_trees, on_main, main)
                continue
            if self.at_end():
                raise SgfError(f"line {inner.line}: the game tree opened here is never closed "
                               "(')' missing)")
            if self.peek() != ")":
                raise SgfError(f"line {self.line}: expected a node (';') or ')'; got "
                               f"{self.rest_of_line()!r}")
            self.take()
            open_trees.pop()
        return main

    def _open(self, open_trees: list[_OpenTree], on_main_line: bool, nodes: list[Node]) -> None:
        """Read ``(`` and the nodes that follow it (kept when the tree is on the main line)."""
        open_trees.append(_OpenTree(self.line, on_main_line))
        self.take()  # "("
        self.skip_space()
        count = 0
        while self.peek() == ";":
            node = self.node()
            count += 1
            if on_main_line:
                nodes.append(node)
            self.skip_space()
        if not count:
            raise SgfError(f"line {self.line}: a game tree starts with a node (';'); got "
                           f"{self.rest_of_line()!r}")

    def node(self) -> Node:
        self.take()  # ";"
        props: Node = []
        self.skip_space()
        while self.peek().isalpha():
            line = self.line
            start = self.pos
            while self.peek().isalpha():
                self.take()
            # FF[3] allowed lower-case letters in names; only the upper-case ones count.
            name = "".join(c for c in self.text[start:self.pos] if c.isupper())
            self.skip_space()
            if self.peek() != "[":
                raise SgfError(f"line {self.line}: property {_short(name or self.text[start:self.pos])!r} "
                               "has no value ('[' expected)")
            values = []
            while self.peek() == "[":
                values.append(self.value())
                self.skip_space()
            props.append(Property(name, values, line))
        return props

    def value(self) -> str:
        opened = self.line
        self.take()  # "["
        out: list[str] = []
        while True:
            if self.at_end():
                raise SgfError(f"line {opened}: a property value opened here is never closed "
                               "(']' missing)")
            c = self.take()
            if c == "]":
                return "".join(out)
            if c == "\\":
                if self.at_end():
                    continue
                nxt = self.take()
                if nxt == "\n":  # a soft line break
                    continue
                out.append(nxt)
            else:
                out.append(c)


# ---------------------------------------------------------------------------------------------
# reading


def load_sgf(path) -> MatchRecord:
    """:func:`read_sgf` of a file (UTF-8, as GNU Backgammon writes it; Latin-1 otherwise): a
    regular file of a bounded size (:func:`bgnet.formats.files.read_user_text`)."""
    return read_sgf(read_user_text(path, what="match file"))


def read_sgf(text: str) -> MatchRecord:
    """Read ``.sgf`` text into a :class:`MatchRecord`, replaying every game by the rules.

    Raises :class:`SgfError` naming the line that cannot be read, the action the rules do not
    allow, or a header that disagrees with the games before it.
    """
    if not isinstance(text, str):
        raise SgfError(f"read_sgf takes the text of a .sgf file; got {type(text).__name__}")
    trees = [t for t in parse_collection(text) if _value(t[0], "GM", "1") == BACKGAMMON]
    if not trees:
        raise SgfError("line 1: no backgammon game (GM[6]) in the file")
    first = _Header(trees[0][0])
    if first.index and first.score == (0, 0):
        raise SgfError(f"line {first.line}: the file starts at MI[game:{first.index}] with the score "
                       "0-0, which no game before it leaves: games are missing")
    if first.length and max(first.score) >= first.length:
        raise SgfError(f"line {first.line}: the score {first.score[0]}-{first.score[1]} has already "
                       f"won the {first.length} point match")
    match = Match(first.length, names=first.names, jacoby=first.jacoby, seed=0, score=first.score)
    for k, tree in enumerate(trees):
        header = _Header(tree[0])
        _check_header(header, first, match, k)
        _replay(match, tree, header, last=k == len(trees) - 1)
    return match.record()


def _value(node: Node, name: str, default: str | None = None) -> str | None:
    for p in node:
        if p.name == name:
            return p.values[0]
    return default


class _Header:
    """What a game's root node says (defaults where a property is missing)."""

    def __init__(self, root: Node):
        self.line = root[0].line if root else 1
        self.length = 0
        self.index: int | None = None
        score = [0, 0]
        self.names = ("Player 0", "Player 1")
        self.rules: set[str] = set()
        self.result: tuple[int, int, bool] | None = None
        self.result_line = self.line
        names = ["Player 0", "Player 1"]
        for p in root:
            if p.name == "MI":
                for v in p.values:
                    key, _, num = v.partition(":")
                    if key == "length":
                        try:
                            self.length = read_match_length(num)
                        except ValueError as e:
                            raise SgfError(f"line {p.line}: MI[{_short(v)}]: {e}") from None
                    elif key in ("game", "ws", "bs"):
                        n = _number(num, f"line {p.line}: MI[{_short(v)}]", MAX_SCORE)
                        if key == "game":
                            self.index = n
                        else:
                            score[key == "bs"] = n
            elif p.name in ("PW", "PB"):
                # fitted to the rule of names, so that what is read can always be written again
                name = fit_player_name(p.values[0], fallback="")
                if name:
                    names[p.name == "PB"] = name
            elif p.name == "RU":
                self.rules = {r.strip() for r in p.values[0].split(":") if r.strip()}
                odd = self.rules & {"Nackgammon", "Hypergammon1", "Hypergammon2", "Hypergammon3"}
                if odd:
                    raise SgfError(f"line {p.line}: RU[{_short(p.values[0])}]: bgnet plays standard "
                                   f"backgammon, not {sorted(odd)[0]}")
            elif p.name == "RE":
                m = _RESULT_RE.match(p.values[0].strip())
                if not m:
                    raise SgfError(f"line {p.line}: RE[{_short(p.values[0])}] is not a result such as "
                                   "W+2 or B+1R (winner, points, R for a resignation)")
                self.result = ("WB".index(m.group(1).upper()), int(m.group(2)), bool(m.group(3)))
                self.result_line = p.line
            elif p.name == "CV" and p.values[0].strip() not in ("", "1"):
                raise SgfError(f"line {p.line}: CV[{_short(p.values[0])}] in a game's header sets "
                               "automatic doubles, which bgnet does not play")
        self.score = (score[0], score[1])
        self.names = (names[0], names[1])
        self.jacoby = "Jacoby" in self.rules and self.length == 0
        self.crawford_game = "CrawfordGame" in self.rules


def _short(value: str) -> str:
    """A property value as a message shows it: on one line, whole when short, else its start."""
    value = " ".join(value[:200].split())
    return value if len(value) <= 40 else value[:40] + "..."


def _number(text: str, where: str, most: int = MAX_SCORE) -> int:
    """A whole number from 0 to ``most`` written in ASCII digits (``isdigit`` and ``int`` take
    other scripts' digits too)."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()):
        raise SgfError(f"{where}: expected a whole number; got {quoted(text, 40)}")
    if len(digits) > len(str(most)) or int(digits) > most:
        raise SgfError(f"{where}: expected a whole number from 0 to {most}; got {quoted(text, 20)}")
    return int(digits)


def _check_header(h: _Header, first: _Header, match: Match, k: int) -> None:
    at = f"line {h.line}: game {k + 1}"
    if k and first.index is not None and h.index is not None and h.index != first.index + k:
        raise SgfError(f"{at}: MI[game:{h.index}] follows MI[game:{first.index + k - 1}]: a game is "
                       "missing or out of order")
    if h.length != first.length:
        raise SgfError(f"{at}: MI gives the match length {h.length}, but the first game gave "
                       f"{first.length}")
    if h.score != match.score:
        raise SgfError(f"{at}: MI gives the score {h.score[0]}-{h.score[1]}, but the games before "
                       f"it make it {match.score[0]}-{match.score[1]}")
    if match.over:
        raise SgfError(f"{at}: the match was already over")
    if match.length and h.crawford_game != match.next_is_crawford:
        raise SgfError(f"{at}: RU {'marks' if h.crawford_game else 'does not mark'} the Crawford "
                       f"game, but at {match.score[0]}-{match.score[1]} to {match.length} it "
                       f"{'is' if match.next_is_crawford else 'is not'} the Crawford game")


def _replay(match: Match, tree: list[Node], header: _Header, last: bool) -> None:
    """Play one game tree into ``match``, checking it against the rules and its header."""
    number = len(match.games) + 1
    setup = _Setup()
    moves: list[tuple[Property, int]] = []  # the move properties, and the player of each
    for node in tree[1:]:
        move = next((p for p in node if p.name in ("W", "B")), None)
        if move is None:
            if any(p.name in _SETUP for p in node):
                if moves:
                    at = next(p for p in node if p.name in _SETUP)
                    raise SgfError(f"line {at.line}: game {number}: the position or cube is set "
                                   "in the middle of the game; bgnet reads games as played")
                setup.add(node)
            continue
        if sum(p.name in ("W", "B") for p in node) > 1:
            raise SgfError(f"line {move.line}: game {number}: two moves in one node")
        moves.append((move, 0 if move.name == "W" else 1))
    game = match.new_game(**setup.game_arguments(number))
    for i, (prop, player) in enumerate(moves):
        where = f"line {prop.line}: game {number}"
        text = prop.values[0].strip()
        then_resigned = i == len(moves) - 1 and header.result is not None and header.result[2]
        try:
            _apply(game, player, text, then_resigned, where)
        except RuleError as e:
            raise SgfError(f"{where}: {prop.name}[{_short(text)}] breaks the rules: {e}") from None
    _finish(game, header, number, last)


class _Setup:
    """The setup nodes before a game's first move: a position, the cube, who is on roll."""

    def __init__(self):
        self.used = False
        self.sides = np.stack([start_position()[1], start_position()[1]]).astype(np.int64)
        self.on_roll: int | None = None
        self.cube = 1
        self.owner = CENTERED
        self.line = 0

    def add(self, node: Node) -> None:
        for p in node:
            self.line = self.line or p.line
            if p.name == "AE":
                self.used = True
                for v in p.values:
                    for player in (0, 1):
                        for i in _point_range(v, player, p.line):
                            self.sides[player, i] = 0
            elif p.name in ("AW", "AB"):
                self.used = True
                player = 0 if p.name == "AW" else 1
                for v in p.values:
                    for i in _point_range(v, player, p.line):
                        self.sides[player, i] += 1
            elif p.name == "PL":
                who = p.values[0].strip().upper()
                if who not in ("W", "B"):
                    raise SgfError(f"line {p.line}: PL[{_short(p.values[0])}] names no player (W or B)")
                self.on_roll = "WB".index(who)
            elif p.name == "CV":
                cube = _number(p.values[0], f"line {p.line}: CV[{_short(p.values[0])}]")
                if cube < 1 or cube & (cube - 1) or cube > 64:
                    raise SgfError(f"line {p.line}: CV[{_short(p.values[0])}]: the cube is a power of two "
                                   "up to 64")
                self.cube = cube
            elif p.name == "CP":
                where = p.values[0].strip().lower()
                if where not in ("c", "w", "b"):
                    raise SgfError(f"line {p.line}: CP[{_short(p.values[0])}]: the cube is centred (c) or "
                                   "owned by W or B")
                self.owner = {"c": CENTERED, "w": 0, "b": 1}[where]

    def game_arguments(self, number: int) -> dict:
        """Keyword arguments of :meth:`Match.new_game` for the game these nodes set up."""
        if not self.used and self.cube == 1 and self.owner == CENTERED:
            return {}
        on_roll = 0 if self.on_roll is None else self.on_roll
        if (self.cube == 1) != (self.owner == CENTERED):
            raise SgfError(f"line {self.line}: game {number}: a cube of {self.cube} "
                           f"{'needs an owner' if self.cube > 1 else 'cannot have an owner'} (CV, CP)")
        for player in (0, 1):
            if self.sides[player].sum() > NUM_CHECKERS:
                raise SgfError(f"line {self.line}: game {number}: {'WB'[player]} has "
                               f"{int(self.sides[player].sum())} checkers; at most 15 are allowed")
        board = np.stack([self.sides[1 - on_roll], self.sides[on_roll]])
        return {"board": board, "player_on_roll": on_roll, "cube_value": self.cube,
                "cube_owner": self.owner}


def _point_range(value: str, player: int, line: int) -> list[int]:
    """Board indices of ``player`` (0..23 its points 1..24, 24 its bar) named by a point value:
    one letter, or a range of letters such as ``a:y`` (the whole board)."""
    first, _, last = value.strip().partition(":")
    last = last or first
    try:
        if len(first) != 1 or len(last) != 1 or not ("a" <= first <= "y" and "a" <= last <= "y"):
            raise ValueError("expected a point (a-x), the bar (y) or a range of them such as a:y")
        lo, hi = sorted((first, last))
        return [_index(chr(c), player) for c in range(ord(lo), ord(hi) + 1)]
    except ValueError as e:
        raise SgfError(f"line {line}: [{value}]: {e}") from None


def _index(letter: str, player: int) -> int:
    point = letter_point(letter, player)
    return 24 if point == 25 else point - 1


def _apply(game: Game, player: int, text: str, then_resigned: bool, at: str) -> None:
    word = text.lower()
    if word in CUBE_WORDS:
        if word == "double":
            game.double(player=player)
        elif word == "take":
            game.take(player=player)
        else:
            game.drop(player=player)
        return
    m = _MOVE_RE.match(text)
    if not m:
        raise SgfError(f"{at}: {'WB'[player]}[{_short(text)}] is no action: expected the dice and the steps "
                       "such as 31hefe, or double, take, drop")
    d1, d2, letters = int(m.group(1)), int(m.group(2)), m.group(3)
    game.replay_roll(player, (d1, d2), names=("W", "B"))  # a RuleError is placed by the caller
    try:
        steps = [(letter_point(letters[k], player), letter_point(letters[k + 1], player))
                 for k in range(0, len(letters), 2)]
    except ValueError as e:
        raise SgfError(f"{at}: {'WB'[player]}[{_short(text)}]: {e}") from None
    if not steps and then_resigned and len(game.legal_moves()[0]):
        return  # rolled, then the game was resigned before moving
    try:
        game.play(np.array(steps, np.int64).reshape(-1, 2) if steps else None, player=player)
    except ValueError as e:
        shown = " ".join(f"{a}/{b}" for a, b in steps) or "(no move)"
        raise SgfError(f"{at}: {d1}{d2}: {shown} is not legal: {e}") from None


def _finish(game: Game, header: _Header, number: int, last: bool) -> None:
    """Settle the game's end with its ``RE``: a resignation the nodes do not show, or a check
    that the result agrees with the play."""
    at = f"line {header.result_line}: game {number}"
    if header.result is None:
        if game.over:
            return  # GNU Backgammon always writes RE; a file without it is still readable
        if last:
            return  # a match saved while the game was played
        raise SgfError(f"{at}: the game ends without a result (no RE) before the next game")
    winner, points, resigned = header.result
    if not game.over:
        if game.phase in (OPENING, DOUBLED):
            raise SgfError(f"{at}: RE says {'WB'[winner]} won {points}, but the game "
                           f"{'never started' if game.phase == OPENING else 'stops at a double'}")
        kind, rest = divmod(points, game.cube_value)
        if rest or not 1 <= kind <= 3:
            raise SgfError(f"{at}: {'WB'[winner]} wins {points} points with the cube at "
                           f"{game.cube_value}, which no resignation gives")
        if game.value_of(kind) != points:
            kind = 1  # the Jacoby rule: a resigned gammon is worth one point
        try:
            game.resign(kind, player=1 - winner)
            game.accept_resignation(player=winner)
        except RuleError as e:
            raise SgfError(f"{at}: RE says the game was resigned, but {e}") from None
    elif resigned:
        raise SgfError(f"{at}: RE says the game was resigned, but it ended by the rules "
                       f"({game.end})")
    if game.winner != winner or game.points != points:
        raise SgfError(f"{at}: RE says {'WB'[winner]} wins {points}, but the game gives "
                       f"{'WB'[game.winner or 0]} {game.points}")
