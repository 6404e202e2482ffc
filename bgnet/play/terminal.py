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

The bot moves, doubles, takes and drops by :class:`~bgnet.play.advisor.Advisor`: its checker
plays, and the moves a hint ranks, by the match's own measure (cubeful equity at the score in a
match, cubeful money equity in money play; ``--cubeless-play`` keeps cubeless money equity). A
hint labels each move's figures by that measure: ``MWC 52.31%  EMG +0.046`` in a match (match
winning chances and their equity at the score, as GNU Backgammon and XG show them), ``cubeful
equity +0.120`` in money play, ``equity (cubeless) +0.150`` with ``--cubeless-play``; the
cubeless money equity stands beside a cubeful figure.
The rules, the Crawford game and the score are :class:`~bgnet.engine.game.Match`'s. With ``--save`` the match is
written after every game and when you quit: a ``.mat`` file (which GNU Backgammon imports), or
GNU Backgammon's own ``.sgf`` when the name ends so (``load match``).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from bgnet.engine.game import DOUBLED, MOVE, OPENING, OVER, ROLL, Game, Match, RuleError
from bgnet.engine.notation import IllegalMoveError
from bgnet.engine.position_id import position_id
from bgnet.formats.mat import save_mat
from bgnet.formats.match_id import match_id
from bgnet.play.advisor import Advisor
from bgnet.play.render import render_board

HUMAN, BOT = 0, 1
STAY, DONE, QUIT = "stay", "done", "quit"  # what a typed line did to the turn
RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}

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
    """A person against ``advisor``'s bot.

    ``read_line(prompt)`` returns the next line typed (None when input ends) and ``write(text)``
    shows text; they default to standard input and output. ``match_length`` 0 plays a money
    session of ``games`` games (None: no limit). ``save_path``: write the match there after every game and on
    quitting.
    """

    def __init__(self, advisor: Advisor, *, match_length: int = 0, games: int | None = 1, seed=None,
                 name: str = "You", jacoby: bool = False, save_path=None, hints: int = 5,
                 read_line: Callable[[str], str | None] = _stdin_line,
                 write: Callable[[str], None] = print):
        self.advisor = advisor
        self.bot_name = _mat_name(advisor.bot.name)
        self.name = name
        self.match = Match(match_length, seed=seed, jacoby=jacoby, names=(name, self.bot_name),
                           max_games=None if match_length else games)
        self.save_path = Path(save_path) if save_path is not None else None
        self.hints = hints
        self.read_line = read_line
        self.write = write
        self._saved: set[Path] = set()

    # -- the session ---------------------------------------------------------------------------

    def run(self) -> int:
        """Play until the match (or session) ends or the person quits; returns an exit status."""
        m = self.match
        kind = f"a {m.length}-point match" if m.length else (
            f"a money session of {m.max_games} game{'s' if m.max_games != 1 else ''}")
        self.write(f"{self.name} (X) against {self.bot_name} (O): {kind}. Type 'help' for the commands.")
        if self.advisor.note:
            self.write(f"Note: {self.advisor.note}.")
        while not m.over:
            if not self.play_game(m.new_game()):
                return 0
            self._autosave()
        self._announce_match_end()
        return 0

    def play_game(self, game: Game) -> bool:
        """Play ``game`` (a game of this session's match, new or set up in a position) to its
        end; False when the person quits."""
        if self.match.length:
            self.write(f"\nGame {len(self.match.games)}: score {self.name} {self.match.score[HUMAN]}, "
                       f"{self.bot_name} {self.match.score[BOT]}"
                       + (" (Crawford game: no doubling)" if game.crawford else ""))
        else:
            self.write(f"\nGame {len(self.match.games)}")
        if game.phase == OPENING:
            starter, dice = game.opening_roll()
            mine, theirs = (dice[0], dice[1]) if starter == HUMAN else (dice[1], dice[0])
            self.write(f"Opening roll: you {mine}, {self.bot_name} {theirs}; "
                       f"{'you start' if starter == HUMAN else self.bot_name + ' starts'}.")
        while not game.over:
            if game.turn == BOT:
                self._bot_turn(game)
            elif not self._human_turn(game):
                return False
        self._announce_game_end(game)
        return True

    # -- the bot -------------------------------------------------------------------------------

    def _bot_turn(self, game: Game) -> None:
        """The bot answers a double, or doubles, or rolls and moves."""
        if game.phase == DOUBLED:
            if self.advisor.wants_take(game.board, game.context()):
                game.take(player=BOT)
                self.write(f"{self.bot_name} takes: the cube is at {game.cube_value}, "
                           f"{self.bot_name} owns it.")
            else:
                game.drop(player=BOT)
                self.write(f"{self.bot_name} drops.")
            return
        if game.phase == ROLL:
            if game.may_double(BOT) and self.advisor.wants_double(game.board, game.context()):
                game.double(player=BOT)
                self.write(f"{self.bot_name} doubles to {2 * game.cube_value}.")
                return
            game.roll(player=BOT)
        rolled = _dice(game)
        choice = self.advisor.choose(game.board, *game.dice, game.context())
        game.play(None if choice is None else choice[0], player=BOT)
        played = game.record.actions[-1].notation
        self.write(f"{self.bot_name} rolls {rolled} and "
                   + (f"plays {played}." if played else "cannot move."))

    # -- the person ----------------------------------------------------------------------------

    def _human_turn(self, game: Game) -> bool:
        """One decision of the person; False when they quit."""
        if game.phase == ROLL and not game.may_double(HUMAN):
            game.roll(player=HUMAN)
            self.write(f"You roll {_dice(game)}.")
        if game.phase == MOVE and len(game.legal_moves()[0]) == 0:
            self.show(game)
            self.write(f"You cannot move with {_dice(game)}.")
            game.play(None, player=HUMAN)
            return True
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
            return f"Your move ({_dice(game)})> "
        return "Roll or double> "

    def handle(self, game: Game, line: str) -> str:
        """Carry out one typed line: STAY (ask again), DONE (the turn moved on) or QUIT."""
        words = line.split()
        cmd = words[0].lower() if words else ""
        common = {"hint": self._hint, "board": lambda g, w: self.show(g),
                  "help": lambda g, w: self.write(HELP), "?": lambda g, w: self.write(HELP),
                  "save": self._save_command}
        if cmd in common:
            common[cmd](game, words[1:])
            return STAY
        if cmd in ("quit", "exit"):
            self.quit(ask=True)
            return QUIT
        if cmd == "resign":
            return self._resign(game, words[1:])
        if game.phase == DOUBLED:
            return self._answer_double(game, cmd)
        if game.phase == ROLL:
            return self._before_roll(game, cmd, line)
        return self._move(game, line)

    def _answer_double(self, game: Game, cmd: str) -> str:
        if cmd in ("take", "accept"):
            game.take(player=HUMAN)
            self.write(f"You take: the cube is at {game.cube_value} and yours.")
            return DONE
        if cmd in ("drop", "pass", "reject"):
            game.drop(player=HUMAN)
            self.write("You drop.")
            return DONE
        self.write(f"{self.bot_name} has doubled: answer take or drop (or hint, board, resign, quit).")
        return STAY

    def _before_roll(self, game: Game, cmd: str, line: str) -> str:
        if cmd in ("", "roll"):
            game.roll(player=HUMAN)
            self.write(f"You roll {_dice(game)}.")
            return DONE
        if cmd == "double":
            try:
                game.double(player=HUMAN)
            except RuleError as e:
                self.write(f"You cannot double: {e}.")
                return STAY
            self.write(f"You double to {2 * game.cube_value}.")
            return DONE
        if cmd in ("take", "drop", "pass", "accept", "reject"):
            self.write("There is no double to answer.")
        elif _looks_like_move(line):
            self.write("Roll the dice first: press Enter or type roll.")
        else:
            self.write(f"Unknown command {cmd!r}: type roll, double, or help.")
        return STAY

    def _move(self, game: Game, line: str) -> str:
        cmd = line.strip().lower()
        if cmd in ("roll", "double"):
            self.write(f"You have rolled {_dice(game)}: play your move.")
            return STAY
        if cmd in ("take", "drop", "accept", "reject"):
            self.write("There is no double to answer: play your move.")
            return STAY
        try:
            game.play(line, player=HUMAN)
        except IllegalMoveError as e:
            self.write(f"Illegal move: {e}. Try again (hint lists the legal moves).")
            return STAY
        except RuleError as e:
            self.write(f"Not allowed: {e}.")
            return STAY
        self.write(f"You play {game.record.actions[-1].notation}.")
        return DONE

    def _resign(self, game: Game, args: list[str]) -> str:
        kinds = {"single": 1, "normal": 1, "gammon": 2, "backgammon": 3, "1": 1, "2": 2, "3": 3}
        kind = kinds.get(args[0].lower()) if args else 1
        if kind is None:
            self.write("Resign what? Type resign single, resign gammon or resign backgammon; "
                       f"got {args[0]!r}.")
            return STAY
        try:
            game.resign(kind, player=HUMAN)
        except RuleError as e:
            self.write(f"You cannot resign now: {e}.")
            return STAY
        if self.advisor.accepts_resignation(game.board_for(HUMAN), kind, game.value_of):
            game.accept_resignation(player=BOT)
            self.write(f"{self.bot_name} accepts your resignation of {RESULT_NAMES[kind]}.")
            return DONE
        game.reject_resignation(player=BOT)
        self.write(f"{self.bot_name} rejects your resignation of {RESULT_NAMES[kind]}: play on.")
        return STAY

    # -- hints ---------------------------------------------------------------------------------

    def _hint(self, game: Game, args: list[str]) -> None:
        n = self.hints
        if args:
            if not args[0].isdigit() or int(args[0]) < 1:
                self.write(f"hint takes a number of moves to show, e.g. hint 3; got {args[0]!r}.")
                return
            n = int(args[0])
        if game.phase == MOVE:
            self._hint_moves(game, n)
        else:
            self._hint_cube(game)

    def _hint_moves(self, game: Game, n: int) -> None:
        ranked = self.advisor.ranked_moves(game.board, *game.dice, game.context())
        if not ranked:
            self.write("No legal move.")
            return
        measure = self.advisor.measure(game.context())
        by = "" if ranked[0].value is None else f", ranked by {_measure_name(measure)}"
        self.write(f"{len(ranked)} legal move{'s' if len(ranked) != 1 else ''}; the best "
                   f"{min(n, len(ranked))} by {self._judge_name()}{by}:")
        for i, m in enumerate(ranked[:n], 1):
            self.write(f"  {i}. {m.notation:<24s}{_move_figures(m, measure.cubeless)}"
                       f"{_stats(m.probabilities, None)}")

    def _hint_cube(self, game: Game) -> None:
        doubled = game.phase == DOUBLED
        d = self.advisor.cube_decision(game.board, game.context())
        if d is None:
            self.write("No cube advice: the bot has no evaluation of positions.")
            return
        ctx_note = "money" if game.match_length == 0 else "match"
        if doubled:
            advice = "take" if d.take else "drop"
            self.write(f"{self._judge_name()} says: {advice} (take point {100 * d.take_point:.1f}%).")
        elif not d.cube_available:
            self.write("You may not double now; roll.")
            return
        else:
            says = {"no_double": "no double: roll", "too_good": "too good to double: play on",
                    "double_take": "double (it is a take)", "double_pass": "double (it is a pass)"}
            self.write(f"{self._judge_name()} says: {says[d.action]}.")
        who = self.bot_name if doubled else "you"
        self.write(f"  cubeful {ctx_note} equity for {who} (on roll): no double {d.no_double:+.3f}, "
                   f"double/take {_num(d.double_take)}, double/pass {_num(d.double_pass)}")
        probs = self.advisor.probabilities(game.board)
        assert probs is not None, "an advisor with cube advice has a judge, and so probabilities"
        self.write(f"  {_stats(tuple(probs), None)}")

    def _judge_name(self) -> str:
        judge = self.advisor.judge
        return "legal order (no evaluator)" if judge is None else judge.name

    # -- showing -------------------------------------------------------------------------------

    def show(self, game: Game) -> None:
        """Write the board from the person's side."""
        self.write(board_text(game, (self.name, self.bot_name)))

    def _announce_game_end(self, game: Game) -> None:
        winner = "You win" if game.winner == HUMAN else f"{self.bot_name} wins"
        pts = f"{game.points} point{'s' if game.points != 1 else ''}"
        if game.end == "bearoff":
            self.show(game)
            self.write(f"{winner} {RESULT_NAMES[game.result]}: {pts}.")
        else:
            self.write(f"{winner} {pts}.")
        m = self.match
        if m.length:
            self.write(f"Score: {self.name} {m.score[HUMAN]}, {self.bot_name} {m.score[BOT]} "
                       f"(to {m.length}).")
        else:
            self.write(f"Session: {self.name} {m.score[HUMAN]}, {self.bot_name} {m.score[BOT]}.")

    def _announce_match_end(self) -> None:
        m = self.match
        if m.length:
            who = "You win" if m.winner == HUMAN else f"{self.bot_name} wins"
            self.write(f"{who} the match {max(m.score)}-{min(m.score)}.")
        else:
            self.write("The session is over.")
        if self.save_path is not None:
            self.write(f"The match is saved in {self.save_path}.")

    # -- saving --------------------------------------------------------------------------------

    def _save_command(self, game: Game, args: list[str]) -> None:
        if not args and self.save_path is None:
            self.write("Save where? Type save FILE.mat.")
            return
        self.save(" ".join(args) if args else self.save_path)

    def save(self, path) -> bool:
        """Write the match to ``path``, as ``.sgf`` when its name ends so and ``.mat`` otherwise; a
        file this session did not write is only replaced when the person confirms. Returns
        whether it was saved; errors are shown."""
        p = Path(str(path)).expanduser()
        if p.exists() and p.resolve() not in self._saved:
            answer = self.read_line(f"{p} exists. Replace it? [y/N]> ")
            if (answer or "").strip().lower() not in ("y", "yes"):
                self.write("Not saved.")
                return False
        try:
            if p.suffix.lower() == ".sgf":
                from bgnet.formats.sgf import save_sgf

                save_sgf(self.match, p)
            else:
                save_mat(self.match, p)
        except (OSError, ValueError) as e:
            self.write(f"Could not save to {p}: {e}")
            return False
        self._saved.add(p.resolve())
        self.write(f"Saved the match to {p}.")
        return True

    def _autosave(self) -> None:
        if self.save_path is not None:
            self.save(self.save_path)

    def quit(self, *, ask: bool) -> None:
        """Stop: save to ``save_path``, or (when ``ask``) offer to save until it works or the
        person declines."""
        played = bool(self.match.games)
        if self.save_path is not None:
            self.save(self.save_path)
        elif ask and played:  # asked even before the first move: saving is harmless
            while True:
                answer = (self.read_line("Save the match first? Type a file name (.mat), or press "
                                         "Enter to quit without saving> ") or "").strip()
                if answer.lower() in ("y", "yes"):
                    answer = (self.read_line("File name> ") or "").strip()
                if answer.lower() in ("", "n", "no") or self.save(answer):
                    break
        self.write("Bye.")


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


def _measure_name(measure) -> str:
    """What a hint ranks moves by, in the words its figures are labelled with."""
    if measure.cubeless:
        return "equity (cubeless)"
    if measure.to_mwc(0.0) is not None:
        return "MWC (match winning chances) and EMG (equity at the score)"
    return "cubeful equity"


def _move_figures(m, cubeless: bool) -> str:
    """A hinted move's value, labelled by its measure as GNU Backgammon and XG label it: in a
    match its match winning chances (MWC, %) and their equity at the score (EMG), with the
    cubeless money equity beside them; in money play with the cube its cubeful equity, the
    cubeless one beside it; in cubeless play its equity (cubeless). Empty without a judge."""
    if m.value is None:
        return ""
    if cubeless:
        return f"equity (cubeless) {m.equity:+.3f}  "
    if m.mwc is not None:
        return f"MWC {100 * m.mwc:.2f}%  EMG {m.value:+.3f}  cubeless equity {m.equity:+.3f}  "
    return f"cubeful equity {m.value:+.3f}  cubeless equity {m.equity:+.3f}  "


def _stats(probs, equity) -> str:
    if probs is None:
        return ""
    w, wg, wbg, lg, lbg = probs
    eq = f"equity {equity:+.3f}  " if equity is not None else ""
    return (f"{eq}win {100 * w:.1f}% (gammon {100 * wg:.1f}%, bg {100 * wbg:.1f}%)  "
            f"lose {100 * (1 - w):.1f}% (gammon {100 * lg:.1f}%, bg {100 * lbg:.1f}%)")


def _dice(game: Game) -> str:
    """The dice rolled, higher first: "6-4"."""
    return f"{max(game.dice)}-{min(game.dice)}"


def _num(x) -> str:
    return "-" if x is None else f"{x:+.3f}"


def _looks_like_move(text: str) -> bool:
    t = text.strip().lower()
    return bool(t) and (t[0].isdigit() or t.startswith("bar"))


def _mat_name(name: str) -> str:
    """A player's name as a .mat file can hold it (no ':' and no line breaks)."""
    clean = " ".join(str(name).replace(":", "-").split())
    return clean or "bot"


# ---------------------------------------------------------------------------------------------
# the command


def _check_name(text: str) -> str:
    if not text.strip() or ":" in text or "\n" in text:
        raise argparse.ArgumentTypeError(f"a name is non-empty text without ':' (a .mat file "
                                         f"cannot hold it); got {text!r}")
    return text.strip()


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 up; got {text!r}")
    return int(text)


def _non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 up; got {text!r}")
    return int(text)


def play_main(argv: list[str]) -> int:
    """``bgnet play``: see the module docstring."""
    from bgnet.arguments import ArgumentParser, load_bot_arg, output_file_arg, seed_arg

    p = ArgumentParser(prog="bgnet play", description="Play a bot in the terminal.",
                       examples=("bgnet play", "bgnet play --match 5 --save my-match.mat",
                                 "bgnet play --bot gnubg:1 --games 3 --jacoby"))
    p.add_argument("--bot", help="the bot: a checkpoint (.pt), an exported bot (.onnx), pubeval, "
                   "gnubg:N or random (default: the bot shipped with bgnet)")
    p.add_argument("--ply", type=_non_negative, help="search depth of a network bot (0, 1, 2) or gnubg")
    p.add_argument("--match", type=_non_negative, default=0, metavar="N",
                   help="play an N-point match (default 0: money play)")
    p.add_argument("--games", type=_positive, default=1, help="games of a money session (default 1)")
    p.add_argument("--jacoby", action="store_true", help="money play with the Jacoby rule")
    p.add_argument("--seed", type=seed_arg, help="seed of the dice, from 0 up (default: random)")
    p.add_argument("--save", metavar="FILE.mat", type=output_file_arg,
                   help="save the match there after every game and on quitting (FILE.sgf: GNU "
                        "Backgammon's own format)")
    p.add_argument("--name", type=_check_name, default="You", help="your name in the saved match")
    p.add_argument("--hints", type=_positive, default=5, help="moves shown by hint (default 5)")
    p.add_argument("--cubeless-play", action="store_true",
                   help="the bot chooses and hints rank checker plays by cubeless money equity "
                        "(default: by the match's own measure, cubeful equity at the score or "
                        "cubeful money equity)")
    a = p.parse_args(argv)
    if a.save is not None and Path(a.save).exists():
        p.error(f"{a.save} already exists: choose another file for --save (bgnet play does not "
                "overwrite it)")
    bot = load_bot_arg(a.bot, ply=a.ply)
    session = PlaySession(Advisor(bot, cubeful=not a.cubeless_play), match_length=a.match, games=a.games, seed=a.seed,
                          name=a.name, jacoby=a.jacoby, save_path=a.save, hints=a.hints)
    try:
        return session.run()
    except KeyboardInterrupt:
        print()
        session.quit(ask=False)
        return 130
