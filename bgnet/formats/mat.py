"""The ``.mat`` match format of Jellyfish and GNU Backgammon: write game records, read them back.

A ``.mat`` file is plain text::

     7 point match

     Game 1
     Alice : 0                      Bob : 0
      1) 31: 8/5 6/5                 64: 24/18 13/9
      2) 52: 13/8 13/11               Doubles => 2
      3)  Takes                      43: 24/20 13/10
     ...
                                      Wins 2 points

Each game has a header ("Game N") and the score before it (player 0, written first, then player
1), then numbered lines with two columns: player 0's action on the left, player 1's on the right.
A move is the dice followed by each checker step as ``from/to`` from the mover's side (25 is the
bar, 0 is off; ``*`` marks a hit), as GNU Backgammon exports it; a roll that cannot be played
shows only the dice. Cube actions are "Doubles => N", "Takes" and "Drops". "Wins N points"
(followed by "and the match" when it wins the match) is written in the winner's column at the end
of a game; a game ended by an accepted resignation shows just that line. A money session is a
"0 point match". Lines starting with ``;`` are comments; a byte-order mark before the first line
is read past.

A match is at most :data:`~bgnet.engine.state.MAX_MATCH_LENGTH` points long. Game headings are
numbered one after another (the first may be above 1: a file may start in the middle of a match);
a move or score line before the first heading, or a heading out of order, is an error naming the
line. A file that ends before its match does (a game without its "Wins" line, or no player at the
match length) is read as far as it goes: :meth:`~bgnet.engine.game.MatchRecord.unfinished` says
why it is unfinished, and ``bgnet analyze`` warns of it.

:func:`read_mat` replays every game with :class:`~bgnet.engine.game.Game`, so each move is checked
against the rules and the records it returns carry the full steps, notation and positions. It
also reads the standard notation ("bar/22", "6/off", "8/5(2)") that other programs write.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from bgnet.engine.board import start_position
from bgnet.engine.game import Game, GameRecord, Match, MatchRecord, RuleError
from bgnet.engine.state import MAX_SCORE, read_match_length
from bgnet.errors import quoted
from bgnet.formats.files import read_user_text
from bgnet.formats.names import check_player_names, fit_player_name

COLUMN = 28  # width of the left column, as GNU Backgammon writes it
_NUMBER = 5  # "%3d) "
_RIGHT_FROM = 14  # an entry starting this far into a line's columns is in the right column

# Numbers are ASCII digits ([0-9], not \d, which takes any script's digits), of a bounded length.
_ENTRY_RE = re.compile(r"(?<![\w/*])([0-9][0-9]):|\b(Doubles|Takes|Drops|Wins|Beavers|Raccoons|Accepts|Rejects)\b",
                       re.IGNORECASE)
_HEADER_RE = re.compile(r"^\s*([0-9]+)\s+point\s+match\s*$", re.IGNORECASE)
_GAME_RE = re.compile(r"^\s*Game\s+([0-9]{1,9})\s*$", re.IGNORECASE)
_SCORE_RE = re.compile(r"^\s*(.*?)\s*:\s*([0-9]+)\s+(.*?)\s*:\s*([0-9]+)\s*$")
_NUMBERED_RE = re.compile(r"^(\s*[0-9]+\))(.*)$")
_WINS_RE = re.compile(r"^Wins\s+([0-9]{1,9})\s+points?(\s+and\s+the\s+match)?\s*$", re.IGNORECASE)
_DOUBLE_RE = re.compile(r"^Doubles\s*=>\s*([0-9]{1,9})\s*$", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# writing


def write_mat(match: Match | MatchRecord, *, comments: tuple[str, ...] = ()) -> str:
    """The ``.mat`` text of a match (a :class:`Match` or its :class:`MatchRecord`).

    ``comments`` are written first, each as a ``;`` line. Raises ValueError for a name that
    breaks the rule of :mod:`bgnet.formats.names` (empty, too long, a ':' or a control character
    in it), which a ``.mat`` file could not hold or give back.

    >>> from bgnet.engine.game import Match
    >>> m = Match(3, names=("Alice", "Bob"), seed=1)
    >>> g = m.new_game()
    >>> _ = g.opening_roll((3, 1))
    >>> g.play("8/5 6/5")
    >>> print(write_mat(m).rstrip())
     3 point match
    <BLANKLINE>
     Game 1
     Alice : 0                      Bob : 0
      1) 31: 8/5 6/5
    """
    record = match.record() if isinstance(match, Match) else match
    check_player_names(record.names)
    out = [f"; {c}" for c in comments]
    if comments:
        out.append("")
    out += [f" {record.length} point match", ""]
    final_score = record.final_score()
    for game in record.games:
        out += _game_lines(game, record, final_score)
        out.append("")
    return "\n".join(out) + "\n"


def save_mat(match: Match | MatchRecord, path) -> Path:
    """Write :func:`write_mat` of ``match`` to ``path``; returns the path."""
    p = Path(path)
    p.write_text(write_mat(match), encoding="utf-8")
    return p


def save_each(records, path, save=save_mat) -> list[Path]:
    """Write each match with ``save`` (:func:`save_mat` by default): to ``path`` itself for one,
    else one file per match numbered from 1 next to it (``out.mat`` -> ``out-001.mat``, ...)."""
    path = Path(path)
    if len(records) == 1:
        return [save(records[0], path)]
    width = max(3, len(str(len(records))))
    return [save(r, path.with_name(f"{path.stem}-{i:0{width}d}{path.suffix}"))
            for i, r in enumerate(records, 1)]


def _game_lines(game: GameRecord, record: MatchRecord, final: tuple[int, int]) -> list[str]:
    first = next((act for act in game.actions if act.kind == "move"), None)
    if first is not None and not np.array_equal(first.board, start_position()):
        raise ValueError(f"game {game.number} did not start from the starting position; a .mat file "
                         "cannot hold it")
    a, b = record.names
    head = f" {a} : {game.score[0]}"
    # the columns of GNU Backgammon's export; a long name keeps one space before the next
    lines = [f" Game {game.number}", head.ljust(31) + " " + f"{b} : {game.score[1]}"]
    texts = [(act.player, _entry_text(act)) for act in game.actions]
    entries = [(p, t) for p, t in texts if t is not None]
    if game.winner is not None:
        wins = f" Wins {game.points} point{'s' if game.points != 1 else ''}"
        if record.length and game is record.games[-1] and max(final) >= record.length:
            wins += " and the match"
        entries.append((game.winner, wins))
    lines += _columns(entries)
    return lines


def _entry_text(act) -> str | None:
    """One action as a ``.mat`` entry (None for actions the format does not show)."""
    if act.kind == "move":
        d1, d2 = max(act.dice), min(act.dice)
        steps = _step_texts(act.board, act.steps)
        return f"{d1}{d2}:" + "".join(" " + s for s in steps)
    if act.kind == "roll":  # rolled, then the game was resigned
        return f"{max(act.dice)}{min(act.dice)}:"
    if act.kind == "double":
        return f" Doubles => {act.cube}"
    if act.kind == "take":
        return " Takes"
    if act.kind == "drop":
        return " Drops"
    return None  # resignations show only as the "Wins" line


def _step_texts(board, steps) -> list[str]:
    """``from/to`` for each step, ``*`` where it hits. Steps are written from the highest point
    down, an order in which they can always be played (a checker's later steps start lower), so
    the same move always reads the same whatever order the dice were rolled in."""
    me = [int(x) for x in board[1]]
    opp = [int(x) for x in board[0]]
    out = []
    for a, b in sorted(steps, reverse=True):
        me[a - 1] -= 1
        hit = False
        if b:
            me[b - 1] += 1
            if opp[24 - b] == 1:  # my point b is the opponent's index 24 - b
                opp[24 - b], hit = 0, True
                opp[24] += 1
        out.append(f"{a}/{b}{'*' if hit else ''}")
    return out


def _columns(entries: list[tuple[int, str]]) -> list[str]:
    """Lay entries out in numbered two-column lines; a line holding only "Wins" has no number."""
    rows: list[list[str | None]] = []
    row: list[str | None] = [None, None]
    for player, text in entries:
        if player == 0 or row[1] is not None:
            if row != [None, None]:
                rows.append(row)
            row = [None, None]
        row[player] = text
        if player == 1:
            rows.append(row)
            row = [None, None]
    if row != [None, None]:
        rows.append(row)
    lines, n = [], 0
    for left, right in rows:
        only_wins = all(t is None or t.startswith(" Wins") for t in (left, right))
        if only_wins:
            prefix = " " * _NUMBER
        else:
            n += 1
            prefix = f"{n:3d}) "
        text = prefix + _pad(left or "") + (right or "")
        lines.append(text.rstrip())
    return lines


def _pad(text: str) -> str:
    return text.ljust(COLUMN - 1) + " "


# ---------------------------------------------------------------------------------------------
# reading


def load_mat(path, *, jacoby: bool = False) -> MatchRecord:
    """:func:`read_mat` of a file (:func:`bgnet.formats.files.read_user_text`: a regular file of
    a bounded size, UTF-8, Latin-1 otherwise)."""
    return read_mat(read_user_text(path, what="match file"), jacoby=jacoby)


def read_mat(text: str, *, jacoby: bool = False) -> MatchRecord:
    """Read ``.mat`` text into a :class:`MatchRecord`, replaying every game by the rules.

    ``jacoby``: whether a money session was played with the Jacoby rule (the format does not say).
    A file that starts in the middle of a match is read from the score of its first game; a
    player already 1-away there is taken to be past the Crawford game. Raises ValueError naming
    the line that cannot be read or the action the rules do not allow.
    """
    if not isinstance(text, str):
        raise ValueError(f"read_mat takes the text of a .mat file; got {type(text).__name__}")
    length, games = _parse(text.removeprefix("\ufeff"))
    if length is None:
        raise ValueError("no 'N point match' line: this is not a .mat file")
    # Names fitted to the rule of names, so that what is read can always be written again.
    names = ((fit_player_name(games[0]["names"][0], fallback="Player 0"),
              fit_player_name(games[0]["names"][1], fallback="Player 1")) if games else ("Player 0", "Player 1"))
    start = games[0]["score"] if games else (0, 0)
    if games and games[0]["number"] > 1 and start == (0, 0):
        raise ValueError(f"line {games[0]['line']}: the file starts at 'Game {games[0]['number']}' with "
                         f"the score 0-0, which no game before it leaves: games are missing")
    if length and max(start) >= length:
        raise ValueError(f"Game {games[0]['number']}: the score {start[0]}-{start[1]} has already won "
                         f"the {length} point match")
    match = Match(length, names=names, jacoby=jacoby, seed=0, score=start)
    for g in games:
        _replay(match, g)
    return match.record()


def _parse(text: str):
    """(match length, [{"number", "names", "score", "entries": [(line, player, text)]}])."""
    length = None
    games: list[dict] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.expandtabs(8).rstrip()
        if not line.strip() or line.lstrip().startswith(";"):
            continue
        m = _HEADER_RE.match(line)
        if m and length is None and not games:
            try:
                length = read_match_length(m.group(1))
            except ValueError as e:
                raise ValueError(f"line {lineno}: {e}") from None
            continue
        m = _GAME_RE.match(line)
        if m:
            number = int(m.group(1))
            if games and number != games[-1]["number"] + 1:
                raise ValueError(f"line {lineno}: 'Game {number}' follows 'Game {games[-1]['number']}': "
                                 "a game heading is missing or out of order")
            if length is None:
                raise ValueError(f"line {lineno}: expected 'N point match' first; got {quoted(line.strip())}")
            games.append({"number": number, "line": lineno, "names": None, "score": None, "entries": []})
            continue
        if not games:
            if length is None:
                raise ValueError(f"line {lineno}: expected 'N point match' first; got {quoted(line.strip())}")
            if _NUMBERED_RE.match(line) or _SCORE_RE.match(line):
                raise ValueError(f"line {lineno}: {quoted(line.strip())} comes before the first "
                                 "'Game N' heading: the heading is missing")
            continue  # header lines of other programs (event, date, ...)
        game = games[-1]
        if game["names"] is None:
            m = _SCORE_RE.match(line)
            if not m:
                raise ValueError(f"line {lineno}: expected the score line 'name : score   name : score' "
                                 f"after 'Game {game['number']}'; got {quoted(line.strip())}")
            if not m.group(1) or not m.group(3):
                raise ValueError(f"line {lineno}: the score line names no player "
                                 f"{'0 (left)' if not m.group(1) else '1 (right)'}; got {quoted(line.strip())}")
            game["names"] = (m.group(1), m.group(3))
            game["score"] = (_score(m.group(2), lineno), _score(m.group(4), lineno))
            continue
        game["entries"] += _line_entries(line, lineno)
    if games and games[-1]["names"] is None:
        raise ValueError(f"line {games[-1]['line']}: 'Game {games[-1]['number']}' has no score line "
                         "after it: the file ends there")
    return length, games


def _score(digits: str, lineno: int) -> int:
    if len(digits) > 5 or int(digits) > MAX_SCORE:
        raise ValueError(f"line {lineno}: a score is 0 to {MAX_SCORE} points; got {quoted(digits, 20)}")
    return int(digits)


def _line_entries(line: str, lineno: int) -> list[tuple[int, int, str]]:
    """(line number, column/player, entry text) of every entry on a move line."""
    m = _NUMBERED_RE.match(line)
    start = len(m.group(1)) if m else _NUMBER - 1
    body = m.group(2) if m else line[start:]
    if not m and line[:start].strip():
        raise ValueError(f"line {lineno}: cannot read {quoted(line.strip())}")
    marks = list(_ENTRY_RE.finditer(body))
    if not marks and body.strip():
        raise ValueError(f"line {lineno}: cannot read {quoted(body.strip())} (expected moves such as "
                         "'31: 8/5 6/5', 'Doubles => 2', 'Takes', 'Drops' or 'Wins 1 point')")
    if marks and body[:marks[0].start()].strip():
        raise ValueError(f"line {lineno}: cannot read {quoted(body[:marks[0].start()].strip())}")
    out = []
    for i, mk in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        player = 1 if mk.start() >= _RIGHT_FROM else 0
        out.append((lineno, player, body[mk.start():end].strip()))
    return out


def _replay(match: Match, g: dict) -> None:
    """Play one parsed game into ``match``, checking it against the rules and the file."""
    where = f"Game {g['number']}"
    before = match.game
    if before is not None and not before.over:
        raise ValueError(f"line {g['line']}: 'Game {g['number']}' begins, but the game before it "
                         "has no end (no 'Wins' line)")
    if g["score"] != match.score:
        raise ValueError(f"{where}: the file gives the score {g['score'][0]}-{g['score'][1]}, but the "
                         f"games before it make it {match.score[0]}-{match.score[1]}")
    if match.over:
        raise ValueError(f"{where}: the match was already over")
    game = match.new_game()
    entries = g["entries"]
    for k, (lineno, player, text) in enumerate(entries):
        at = f"{where}, line {lineno}"
        nxt = entries[k + 1][2] if k + 1 < len(entries) else ""
        try:
            _apply(game, player, text, nxt, at)
        except RuleError as e:
            raise ValueError(f"{at}: {quoted(text)} breaks the rules: {e}") from None


def _apply(game: Game, player: int, text: str, next_text: str, at: str) -> None:
    """Apply one entry of the file to the game."""
    head = text.split(":", 1)[0]
    if head.isdigit() and len(head) == 2:
        _apply_move(game, player, text, next_text, at)
        return
    word = text.split()[0].lower()
    if word == "doubles":
        m = _DOUBLE_RE.match(text)
        if not m:
            raise ValueError(f"{at}: cannot read {quoted(text)}; expected 'Doubles => N'")
        if int(m.group(1)) != 2 * game.cube_value:
            raise ValueError(f"{at}: {quoted(text)} but the cube is at {game.cube_value}")
        game.double(player=player)
    elif word == "takes":
        game.take(player=player)
    elif word == "drops":
        game.drop(player=player)
    elif word == "wins":
        _apply_wins(game, player, text, at)
    elif word in ("beavers", "raccoons"):
        raise ValueError(f"{at}: {quoted(text)}: beavers are not supported")
    else:
        raise ValueError(f"{at}: cannot read {quoted(text)}")


def _apply_move(game: Game, player: int, text: str, next_text: str, at: str) -> None:
    dice_text, move_text = text.split(":", 1)
    d1, d2 = int(dice_text[0]), int(dice_text[1])
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise ValueError(f"{at}: {quoted(dice_text)} is not a roll of two dice")
    game.replay_roll(player, (d1, d2))  # a RuleError is placed in the file by the caller
    move_text = move_text.strip()
    if not move_text and next_text.lower().startswith("wins") and len(game.legal_moves()[0]):
        return  # rolled, then the game was resigned before moving
    try:
        game.play(move_text if move_text else None, player=player)
    except ValueError as e:
        shown = (move_text if len(move_text) <= 60 else quoted(move_text, 60)) or "(no move)"
        raise ValueError(f"{at}: {dice_text}: {shown} is not legal: {e}") from None


def _apply_wins(game: Game, player: int, text: str, at: str) -> None:
    m = _WINS_RE.match(text)
    if not m:
        raise ValueError(f"{at}: cannot read {quoted(text)}; expected 'Wins N point(s)'")
    points = int(m.group(1))
    if not game.over:
        # The game ended by a resignation: its value in units of the cube.
        kind, rest = divmod(points, game.cube_value)
        if rest or not 1 <= kind <= 3:
            raise ValueError(f"{at}: player {player} wins {points} points with the cube at "
                             f"{game.cube_value}, which no resignation gives")
        if game.value_of(kind) != points:
            kind = 1  # the Jacoby rule: a resigned gammon is worth one point
        game.resign(kind, player=1 - player)
        game.accept_resignation(player=player)
    if game.winner != player or game.points != points:
        raise ValueError(f"{at}: the file says player {player} wins {points} points, but the game "
                         f"gives player {game.winner} {game.points}")
