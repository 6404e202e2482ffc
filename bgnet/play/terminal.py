"""``bgnet play``: a person plays a bot in the terminal, a game, a money session or a match.

The person is player 0 (``X``, the left column of a ``.mat`` file), the bot player 1 (``O``).
Everything is read line by line from standard input, so a pipe or a terminal multiplexer can
drive it as well as a person. At each decision the board is shown and a prompt ending in ``> ``
asks for:

* a move in standard notation (``24/18 13/11``, ``bar/22*``, ``6/off``, ``8/5(2)``); an illegal
  one is explained and asked again, the game unchanged;
* before rolling: ``roll`` (or an empty line) or ``double``; the dice are rolled for you when you
  may not double;
* when doubled: ``take`` or ``drop`` (``pass``);
* at any time: ``resign [single|gammon|backgammon]``, ``hint [N]`` (the bot's view: its top moves
  with what they are ranked by and their probabilities, or its cube advice), ``board``, ``help``, ``save FILE.mat``,
  ``save FILE.sgf``, ``quit`` (which offers to save).

Nothing played is lost at the end: when the session is over, or on ``quit``, the person is
offered to save (a file saved earlier in the session first, so that it gets the end too); on
Ctrl-C nothing is asked and the match goes to that file, or to a new one named by the time,
and the place is said.

The bot moves, doubles, takes and drops by :class:`~bgnet.play.advisor.Advisor`: its checker
plays, and the moves a hint ranks, by the match's own measure (cubeful equity at the score in a
match, cubeful money equity in money play; ``--cubeless-play`` keeps cubeless money equity). A
hint labels each move's figures by that measure: ``MWC 52.31%  EMG +0.046`` in a match (match
winning chances and their equity at the score, as GNU Backgammon and XG show them), ``cubeful
equity +0.120`` in money play, ``equity (cubeless) +0.150`` with ``--cubeless-play``; the
cubeless money equity stands beside a cubeful figure.
The table's rules (the bot's turns, what each decision may do, the messages) are
:class:`~bgnet.play.table.Table`'s: this module reads a line, calls the table, and shows its
events. The rules, the Crawford game and the score are :class:`~bgnet.engine.game.Match`'s. With ``--save`` the match is
written after every game and when you quit: a ``.mat`` file (which GNU Backgammon imports), or
GNU Backgammon's own ``.sgf`` when the name ends so (``load match``).
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from bgnet.engine.game import DOUBLED, MOVE, OVER, Game, Match
from bgnet.engine.position_id import position_id
from bgnet.formats.match_id import match_id
from bgnet.play.advisor import Advisor
from bgnet.play.render import render_board
from bgnet.play.table import (
    BOT,
    HUMAN,
    CannotMove,
    Event,
    GameOver,
    GameStarted,
    MatchOver,
    Refusal,
    Table,
    dice_text,
)

STAY, DONE, QUIT = "stay", "done", "quit"  # what a typed line did to the turn
__all__ = ["PlaySession", "board_text", "HELP", "HUMAN", "BOT", "STAY", "DONE", "QUIT"]
RESIGN_WORDS = {"single": 1, "normal": 1, "gammon": 2, "backgammon": 3, "1": 1, "2": 2, "3": 3}

HELP = """\
Commands:
  <move>            e.g. 24/18 13/11, bar/22*, 6/off, 8/5(2): points are numbered from your side
  roll              roll the dice (an empty line does it too)
  double            offer the cube before rolling
  take / drop       answer a double ("pass" is a drop)
  resign [single|gammon|backgammon]   offer to resign (default single)
  hint [N]          the bot's N best moves with equities and probabilities, or its cube advice
  board             show the board again
  save FILE.mat     save the match so far (GNU Backgammon imports .mat; FILE.sgf: its own format)
  quit              stop playing (you are asked whether to save)
You are X and move from 24 down to 1; the bot is O."""


def _stdin_line(prompt: str) -> str | None:
    """Write the prompt, read one line of standard input; None at its end."""
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    return None if line == "" else line.rstrip("\r\n")


class PlaySession:
    """A person against ``advisor``'s bot at a :class:`~bgnet.play.table.Table`, in a terminal.

    ``read_line(prompt)`` returns the next line typed (None when input ends) and ``write(text)``
    shows text; they default to standard input and output. ``match_length`` 0 plays a money
    session of ``games`` games (None: no limit). ``save_path``: write the match there after every game and on
    quitting.
    """

    def __init__(self, advisor: Advisor, *, match_length: int = 0, games: int | None = 1, seed=None,
                 name: str = "You", jacoby: bool = False, save_path=None, hints: int = 5,
                 read_line: Callable[[str], str | None] = _stdin_line,
                 write: Callable[[str], None] = print):
        self.table = Table(advisor, match_length=match_length, games=games, seed=seed, name=name,
                           jacoby=jacoby, hints=hints, on_event=self.render)
        self.save_path = Path(save_path) if save_path is not None else None
        self.read_line = read_line
        self.write = write
        self._saved: set[Path] = set()
        self._last_saved: Path | None = None  # the file the person saved the match to last

    @property
    def advisor(self) -> Advisor:
        return self.table.advisor

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def bot_name(self) -> str:
        return self.table.bot_name

    @property
    def match(self) -> Match:
        return self.table.match

    @match.setter
    def match(self, match: Match) -> None:
        self.table.match = match

    # -- the session ---------------------------------------------------------------------------

    def run(self) -> int:
        """Play until the match (or session) ends or the person quits; returns an exit status."""
        m = self.match
        kind = f"a {m.length}-point match" if m.length else (
            f"a money session of {m.max_games} game{'s' if m.max_games != 1 else ''}")
        self.write(f"{self.name} (X) against {self.bot_name} (O): {kind}. Type 'help' for the commands.")
        if self.advisor.note:
            self.write(f"Note: {self.advisor.note}.")
        while not self.match.over:
            if not self.play_game(self.match.new_game()):
                return 0
        if self.save_path is None:  # with --save it is saved already, after the last game
            self._offer_to_save("Save the match?", "finish")
        return 0

    def play_game(self, game: Game) -> bool:
        """Play ``game`` (a game of this session's match, new or set up in a position) to its
        end; False when the person quits."""
        self.table.start_game(game)
        while not game.over:
            if not self._decide(game):
                return False
        return True

    def _decide(self, game: Game) -> bool:
        """One decision of the person; False when they quit."""
        self.show(game)
        while True:
            line = self.read_line(self._prompt(game))
            if line is None:
                self.quit(ask=False)
                return False
            outcome = self.handle(game, line)
            if outcome == QUIT:
                return False
            if outcome == DONE:
                return True

    def _prompt(self, game: Game) -> str:
        if game.phase == DOUBLED:
            return f"{self.bot_name} doubles to {2 * game.cube_value}: take or drop> "
        if game.phase == MOVE:
            return f"Your move ({dice_text(game.dice)})> "
        return "Roll or double> "

    # -- a typed line --------------------------------------------------------------------------

    def handle(self, game: Game, line: str) -> str:
        """Carry out one typed line: STAY (ask again), DONE (the turn moved on) or QUIT."""
        words = line.split()
        cmd = words[0].lower() if words else ""
        common = {"hint": self._hint, "board": lambda args: self.show(game),
                  "help": lambda args: self.write(HELP), "?": lambda args: self.write(HELP),
                  "save": self._save_command}
        if cmd in common:
            common[cmd](words[1:])
            return STAY
        if cmd in ("quit", "exit"):
            self.quit(ask=True)
            return QUIT
        if cmd == "resign":
            return self._resign(game, words[1:])
        if game.phase == DOUBLED:
            return self._answer_double(cmd)
        if game.phase == MOVE:
            return self._act(self.table.move, line)
        return self._before_roll(cmd, line)

    def _act(self, decision, *args) -> str:
        """Make a decision at the table: DONE, or STAY with the reason it was refused shown."""
        try:
            decision(*args)
        except Refusal as e:
            self.write(str(e))
            return STAY
        return DONE

    def _answer_double(self, cmd: str) -> str:
        if cmd in ("take", "accept"):
            return self._act(self.table.take)
        if cmd in ("drop", "pass", "reject"):
            return self._act(self.table.drop)
        self.write(f"{self.bot_name} has doubled: answer take or drop (or hint, board, resign, quit).")
        return STAY

    def _before_roll(self, cmd: str, line: str) -> str:
        if cmd in ("", "roll"):
            return self._act(self.table.roll)
        if cmd == "double":
            return self._act(self.table.double)
        if cmd in ("take", "drop", "pass", "accept", "reject"):
            self.write("There is no double to answer.")
        elif _looks_like_move(line):
            self.write("Roll the dice first: press Enter or type roll.")
        else:
            self.write(f"Unknown command {cmd!r}: type roll, double, or help.")
        return STAY

    def _resign(self, game: Game, args: list[str]) -> str:
        kind = RESIGN_WORDS.get(args[0].lower()) if args else 1
        if kind is None:
            self.write("Resign what? Type resign single, resign gammon or resign backgammon; "
                       f"got {args[0]!r}.")
            return STAY
        self._act(self.table.resign, kind)
        return DONE if game.over else STAY

    def _hint(self, args: list[str]) -> None:
        # ASCII digits, a few: isdigit() and int() take other scripts' digits and any size
        if args and (not (args[0].isascii() and args[0].isdigit()) or len(args[0]) > 4 or int(args[0]) < 1):
            self.write(f"hint takes a number of moves to show, e.g. hint 3; got {args[0][:20]!r}.")
            return
        self.write(self.table.hint(int(args[0]) if args else None).text)

    # -- showing -------------------------------------------------------------------------------

    def render(self, event: Event) -> None:
        """Show what happened at the table: its line, the board where the person should see
        it (a turn that passes, a game borne off), and save the match after every game."""
        if isinstance(event, GameStarted):
            self.write(f"\n{event.text}")
            return
        if isinstance(event, CannotMove) or (isinstance(event, GameOver) and event.end == "bearoff"):
            self.show(self.table.game)
        self.write(event.text)
        if isinstance(event, GameOver):
            self._autosave()
        if isinstance(event, MatchOver) and self.save_path is not None:
            self.write(f"The match is saved in {self.save_path}.")

    def show(self, game: Game) -> None:
        """Write the board from the person's side."""
        self.write(board_text(game, (self.name, self.bot_name)))

    # -- saving --------------------------------------------------------------------------------

    def _save_command(self, args: list[str]) -> None:
        if not args and self.save_path is None:
            self.write("Save where? Type save FILE.mat.")
            return
        self.save(" ".join(args) if args else self.save_path)

    def save(self, path) -> bool:
        """Write the match to ``path``, as ``.sgf`` when its name ends so and ``.mat`` otherwise; a
        file this session did not write is only replaced when the person confirms. Returns
        whether it was saved; errors are shown."""
        p = Path(str(path)).expanduser()
        if p.is_dir():
            self.write(f"Not saved: {p} is a folder; give a file name, e.g. save {p / 'match.mat'}")
            return False
        if not p.parent.is_dir():
            self.write(f"Not saved: there is no folder {p.parent} (it does not exist; create it "
                       "first, or give another file name)")
            return False
        if p.exists() and p.resolve() not in self._saved:
            answer = self.read_line(f"{p} exists. Replace it? [y/N]> ")
            if (answer or "").strip().lower() not in ("y", "yes"):
                self.write("Not saved.")
                return False
        try:
            self.table.save(p)
        except OSError as e:  # a folder that cannot be written, a full disk: the system's reason
            self.write(f"Not saved: cannot write {p} ({e.strerror or e})")
            return False
        except ValueError as e:
            self.write(f"Not saved: {e}")
            return False
        self._saved.add(p.resolve())
        self._last_saved = p
        self.write(f"Saved the match to {p}.")
        return True

    def _autosave(self) -> None:
        if self.save_path is not None:
            self.save(self.save_path)

    def quit(self, *, ask: bool) -> None:
        """Stop: save to ``save_path``, or (when ``ask``) offer to save until it works or the
        person declines; without asking (the input has ended), a file saved earlier in this
        session is brought up to date."""
        if self.save_path is not None:
            self.save(self.save_path)
        elif ask:  # asked even before the first move: saving is harmless
            self._offer_to_save("Save the match first?", "quit")
        elif self._last_saved is not None:
            self.save(self._last_saved)
        self.write("Bye.")

    def interrupted(self) -> Path | None:
        """Ctrl-C: nothing is asked (the person wants out), and nothing played is lost: the
        match goes to ``save_path``, to the file saved earlier in this session, or to a new
        file named by the time in the current folder; the place is said. Returns it (None when
        nothing was saved)."""
        if self.save_path is None and not self._played():
            return None
        path = self.save_path or self._last_saved or _fresh_name(Path.cwd())
        if self.save(path):
            self.write(f"Interrupted: the match so far is saved in {path}.")
            return Path(path)
        return None

    def _played(self) -> bool:
        """Whether the match has begun (its first game's opening roll is made)."""
        return bool(self.match.games)

    def _offer_to_save(self, question: str, verb: str) -> None:
        """Ask until the match is saved or the person declines. A file saved earlier in this
        session is offered first (saved then, it would lack what came after)."""
        if not self._played():
            return
        while True:
            if self._last_saved is not None:
                answer = (self.read_line(f"{question} Enter saves it to {self._last_saved} again; "
                                         "or another file name, or no> ") or "").strip()
                if answer == "" or answer.lower() in ("y", "yes"):
                    answer = str(self._last_saved)
                elif answer.lower() in ("n", "no"):
                    break
            else:
                answer = (self.read_line(f"{question} File name (.mat/.sgf), or Enter to {verb} "
                                         "without saving> ") or "").strip()
                if answer.lower() in ("y", "yes"):
                    answer = (self.read_line("File name> ") or "").strip()
                if answer.lower() in ("", "n", "no"):
                    break
            if self.save(answer):
                break


def board_text(game: Game, names: tuple[str, str], human: int = HUMAN) -> str:
    """The board of ``game`` from ``human``'s side (X at the bottom) with its panel; ``names``
    are (player 0, player 1)."""
    bot = 1 - human
    panel_of = {human: 1, bot: 0}  # players -> rows of the drawing (O on top, X below)
    on_roll = game.player_on_roll
    dice_of = offered_by = None
    if on_roll is not None:
        rolled = game.phase in (MOVE, OVER) and game.dice[0]
        dice_of = panel_of[on_roll] if rolled else None
        offered_by = panel_of[on_roll] if game.phase == DOUBLED else None
    return render_board(
        game.board_for(human), names=(names[bot], names[human]),
        dice=(max(game.dice), min(game.dice)),
        dice_of=dice_of, cube_value=game.cube_value,
        cube_owner=panel_of.get(game.cube_owner, -1), score=(game.score[bot], game.score[human]),
        match_length=game.match_length, crawford=game.crawford,
        double_offered_by=offered_by,
        position_id=position_id(game.board) if on_roll is not None else None,
        match_id=match_id(game.context()) if game.phase != OVER else None)


def _fresh_name(folder: Path) -> Path:
    """A file name in ``folder`` that nothing has: ``bgnet-play-YYYYMMDD-HHMMSS.mat`` (``-2``,
    ``-3`` ... after it where that exists)."""
    import time

    stem = time.strftime("bgnet-play-%Y%m%d-%H%M%S")
    path, n = folder / f"{stem}.mat", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.mat"
    return path


def _looks_like_move(text: str) -> bool:
    t = text.strip().lower()
    return bool(t) and (t[0].isdigit() or t.startswith("bar"))
