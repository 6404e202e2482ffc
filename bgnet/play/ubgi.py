"""``bgnet ubgi``: a bot as an engine of the Universal Backgammon Interface (UBGI).

UBGI is the UCI-like text protocol between a backgammon GUI (or a tournament manager) and an
engine process: the GUI writes one command a line on the engine's standard input and reads the
answers on its standard output. bgnet answers the commands of the draft (0.01, 2025) and those
the engines that speak it (wildbg's) answer; :file:`docs/GUIDE.md` has the whole list. In short::

    ubgi                         -> id name ..., id author ..., id version ..., option ..., ubgiok,
                                    readyok
    isready                      -> readyok
    setoption name Ply value 1   (silent; an error line for a value or option it cannot take)
    newsession match 7 | money   newgame   setscore 2 4 [crawford]   setcube 2 p0   setturn p1
    position gnubgid ID[:MATCHID] | position xgid XGID | position ANY-FORMAT | position startpos
    dice 3 1
    go [role chequer]            -> info role chequer ..., bestmove 8/5 6/5  (bestmove pass: no move)
    go role cube                 -> info role cube ..., bestmove double | bestmove roll
    go role take                 -> info role take ..., bestmove take | bestmove drop
    go role turn                 -> whichever of the three the position asks for
    go role eval                 -> info role eval win ... equity ..., bestmove none
    stop, quit, d
    XGID=... or board:...        (the draft's bare position line) -> the action alone: a move,
                                 double, roll, take or drop; an empty line when no move is legal;
                                 an error line for a position it cannot read

The handshake ends with ``ubgiok`` and then ``readyok``: the draft closes it with ``readyok``
and the engines that speak it (and the GUIs that drive them) with ``ubgiok``, so a GUI of either
kind gets the line it waits for; one that sends ``isready`` after ``ubgiok`` reads a further
``readyok``. Lines are answered in the order they come, so any ``readyok`` means every line
before it has been dealt with.

Moves are written as the draft asks: one ``from/to`` pair per die, from the side of the player on
roll, ``bar`` and ``off`` for the bar and borne off, no ``*`` and no ``(2)`` (``13/7 13/7 8/2
8/2``). A line the engine cannot use gets one line ``error KIND WHAT [why]`` (``unknown_command``,
``bad_argument``, ``missing_context``, ``unsupported_feature``, ``internal``), never a dead
process; the state is left as it was.

Players are 0 and 1, as in GNU Backgammon's Match ID (``setturn p0``). Positions are the player
on roll's, ``[opponent, player on roll]`` (:mod:`bgnet.engine.board`); while a double waits for
its answer the player on roll is the doubler, and ``go role take`` answers for the other player.
Checker play is the bot's own, by the match's own measure (:mod:`bgnet.cube.checker`): the
position always has a cube (centred at 1 until ``setcube``, a Match ID or an XGID says more), so
``go role chequer`` and a bare position line choose by cubeful equity at the score in a match
(EMG; ``info`` gives the match winning chances beside it) and by cubeful money equity in money
play, as ``bgnet play`` does. The ``EvalMode`` option is ``cubeful`` by default; ``setoption
name EvalMode value cubeless`` chooses by cubeless money equity instead. Cube decisions are
:func:`bgnet.cube.decide_context` at the score, as in ``bgnet play``.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from bgnet.bots.base import Bot
from bgnet.bots.load import split_ply
from bgnet.engine.board import check_die, game_result, start_position, swap
from bgnet.engine.state import CENTERED, MAX_SCORE, MatchContext, read_match_length
from bgnet.errors import quoted, shortened
from bgnet.play.advisor import Advisor

PROTOCOL = "UBGI"
MAX_LINE = 65536
_ROLES = ("chequer", "checker", "cube", "take", "turn", "eval")
_SEARCH_LIMITS = {"movetime": 1, "depth": 1, "nodes": 1, "wtime": 1, "btime": 1, "infinite": 0}


class UbgiError(Exception):
    """A command the engine answers with an error line: ``error KIND WHAT [why]``."""

    def __init__(self, kind: str, what: str, why: str = ""):
        super().__init__(f"{kind} {what}" + (f" {why}" if why else ""))
        self.kind, self.what, self.why = kind, what, why

    def line(self) -> str:
        return shortened("error " + " ".join(str(self).split()))


def _is_number(word: str) -> bool:
    """Whether ``word`` is a whole number in ASCII digits (``str.isdigit`` and ``int`` take other
    scripts' digits, such as '١', too)."""
    return word.isascii() and word.isdigit()


def move_words(steps) -> str:
    """A move as UBGI writes it: one ``from/to`` pair per die, highest start first, ``bar`` and
    ``off`` for the bar and borne off; ``pass`` for no move.

    >>> move_words([(6, 5), (8, 5)]), move_words([(25, 22), (6, 0)]), move_words([])
    ('8/5 6/5', 'bar/22 6/off', 'pass')
    """
    if not len(steps):
        return "pass"

    def word(p: int) -> str:
        return "bar" if p == 25 else "off" if p == 0 else str(p)

    return " ".join(f"{word(a)}/{word(b)}" for a, b in sorted(((int(a), int(b)) for a, b in steps),
                                                             reverse=True))


class UbgiEngine:
    """The engine's state and its answer to each line (:meth:`handle`).

    ``load`` turns a bot spec into a bot (a spec with ``@PLY`` for another depth); ``spec`` and
    ``ply`` name the bot to start with. ``version`` is written in ``id version``.
    """

    def __init__(self, spec: str, load: Callable[[str], Bot], *, ply: int | None = None,
                 jacoby: bool = True, version: str = "", log: Callable[[str], None] | None = None):
        self.spec = spec
        self.load = load
        self.version = version
        self.log = log or (lambda text: None)
        self.ply = ply
        self.bot = load(self._spec_at(ply))
        self.cubeless_play = False
        self.advisor = Advisor(self.bot)
        if self.advisor.note:
            self.log(f"note: {self.advisor.note}")
        self.quit = False
        self.length = 0
        self.jacoby = jacoby
        self._new_session()

    # -- state --------------------------------------------------------------------------------

    def _new_session(self) -> None:
        self.score = (0, 0)
        self.crawford = False
        self._new_game()

    def _new_game(self) -> None:
        self.board: np.ndarray | None = None
        self.dice: tuple[int, int] | None = None
        self.cube, self.owner = 1, CENTERED
        self.on_roll = 0
        self.double_offered = False

    def context(self) -> MatchContext:
        """The cube, score and turn as the commands so far set them."""
        return MatchContext(cube_value=self.cube, cube_owner=self.owner, player_on_roll=self.on_roll,
                            crawford=self.crawford, turn=self.on_roll, dice=self.dice or (0, 0),
                            match_length=self.length, score=self.score,
                            jacoby=self.jacoby and not self.length)

    def _spec_at(self, ply: int | None) -> str:
        if ply is None:
            return self.spec
        low = self.spec.lower()
        if low == "gnubg" or low.startswith("gnubg:"):
            return f"gnubg:{ply}"
        return f"{split_ply(self.spec)[0]}@{ply}"  # a pruning option kept

    def _eval_mode(self) -> str:
        return "cubeless" if self.cubeless_play else "cubeful"

    def has_depth(self) -> bool:
        """Whether the bot searches to a depth that the ``Ply`` option sets (net bots, gnubg)."""
        low = self.spec.lower()
        return not (low == "pubeval" or low.startswith("random"))

    # -- the loop -----------------------------------------------------------------------------

    def handle(self, line: str) -> list[str]:
        """The answer lines to one command line (none for commands answered by silence). Never
        raises: a command it cannot use is answered ``error ...``."""
        text = line.strip()
        if not text:
            return []
        if len(text) > MAX_LINE:
            return [UbgiError("bad_argument", "line", f"longer than {MAX_LINE} characters").line()]
        try:
            if text.upper().startswith("XGID=") or text.startswith("board:"):
                return self._bare_position(text)
            words = text.split()
            command = getattr(self, "_cmd_" + words[0].lower(), None)
            if command is None or not words[0].isalpha():
                name = words[0][:40]
                raise UbgiError("unknown_command", name if name.isprintable() else ascii(name))
            return command(words[1:], text)
        except UbgiError as e:
            return [e.line()]
        except Exception as e:  # a bug: say so on the protocol and in the log, and go on
            import traceback

            self.log(traceback.format_exc())
            return [UbgiError("internal", type(e).__name__, str(e)).line()]

    # -- handshake and options ----------------------------------------------------------------

    def _cmd_ubgi(self, args, text) -> list[str]:
        out = [f"id name bgnet ({self.bot.name})", "id author the bgnet authors"]
        if self.version:
            out.append(f"id version {self.version}")
        if self.has_depth():
            ply = self.ply if self.ply is not None else (self.bot.ply or 0)
            out.append(f"option name Ply type spin default {ply} min 0 max 2")
        out += [f"option name Jacoby type check default {str(self.jacoby).lower()}",
                "option name Variant type combo default backgammon var backgammon",
                f"option name EvalMode type combo default {self._eval_mode()} var cubeful var cubeless",
                "ubgiok", "readyok"]
        return out

    def _cmd_isready(self, args, text) -> list[str]:
        return ["readyok"]

    def _cmd_setoption(self, args, text) -> list[str]:
        rest = text.split(None, 1)[1] if len(args) else ""
        if not rest.lower().startswith("name "):
            raise UbgiError("bad_argument", "setoption", "expected 'setoption name NAME value VALUE'")
        name, sep, value = rest[5:].partition(" value ")
        name, value = name.strip(), value.strip()
        if not sep:
            raise UbgiError("bad_argument", "setoption", f"no value for {name!r}: expected 'setoption "
                            "name NAME value VALUE'")
        key = name.lower()
        if key == "ply" and self.has_depth():
            if not sep or not _is_number(value) or len(value) > 3 or int(value) > 2:
                raise UbgiError("bad_argument", "ply", f"a search depth 0, 1 or 2; got {value!r}")
            ply = int(value)
            self.bot = self.load(self._spec_at(ply))
            self.advisor = Advisor(self.bot, cubeless_play=self.cubeless_play)
            self.ply = ply
        elif key == "jacoby":
            if value.lower() not in ("true", "false", "on", "off", "1", "0"):
                raise UbgiError("bad_argument", "jacoby", f"true or false; got {value!r}")
            self.jacoby = value.lower() in ("true", "on", "1")
        elif key == "variant":
            if value.lower() != "backgammon":
                raise UbgiError("unsupported_feature", "variant", f"bgnet plays backgammon, not {value!r}")
        elif key == "evalmode":
            if value.lower() not in ("cubeful", "cubeless"):
                raise UbgiError("bad_argument", "evalmode", f"cubeful or cubeless; got {value!r}")
            self.cubeless_play = value.lower() == "cubeless"
            self.advisor = Advisor(self.bot, cubeless_play=self.cubeless_play)
        else:
            raise UbgiError("unsupported_feature", "setoption", f"no option {name!r}")
        return []

    # -- the session, the game, the position --------------------------------------------------

    def _cmd_newsession(self, args, text) -> list[str]:
        words = [w.lower() for w in args]
        if not words or words == ["money"]:
            length = 0
        elif len(words) in (1, 2) and words[0] in ("match", "length", words[-1]):
            try:
                length = read_match_length(words[-1])
            except ValueError as e:
                raise UbgiError("bad_argument", "newsession", str(e)) from None
        else:
            raise UbgiError("bad_argument", "newsession", "expected 'newsession money' or "
                            "'newsession match N'")
        self.length = length
        self._new_session()
        return []

    def _cmd_newgame(self, args, text) -> list[str]:
        self._new_game()
        return []

    _cmd_ubginewgame = _cmd_newgame

    def _cmd_setscore(self, args, text) -> list[str]:
        nums = [a for a in args if a.lower() != "crawford"]
        if len(nums) != 2 or not all(_is_number(n) for n in nums):
            raise UbgiError("bad_argument", "setscore", "expected 'setscore P0 P1 [crawford]' (points "
                            "won by players 0 and 1)")
        if any(len(n) > 5 or int(n) > MAX_SCORE for n in nums):
            raise UbgiError("bad_argument", "setscore", f"a score is 0 to {MAX_SCORE} points; got "
                            f"{quoted(nums[0], 20)} {quoted(nums[1], 20)}")
        score = (int(nums[0]), int(nums[1]))
        crawford = any(a.lower() == "crawford" for a in args)
        if not self.length and score != (0, 0):
            raise UbgiError("bad_argument", "setscore", f"a money session has no score (got "
                            f"{score[0]}-{score[1]}): 'newsession match N' starts a match first")
        if self.length and max(score) >= self.length:
            raise UbgiError("bad_argument", "setscore", f"{score[0]}-{score[1]} has already won the "
                            f"{self.length} point match")
        if crawford and (not self.length or self.length - max(score) != 1):
            raise UbgiError("bad_argument", "setscore", "only a game where a player is 1-away can be "
                            "the Crawford game")
        self.score, self.crawford = score, crawford
        return []

    def _cmd_setcube(self, args, text) -> list[str]:
        if not args or not _is_number(args[0]):
            raise UbgiError("bad_argument", "setcube", "expected 'setcube VALUE [centred|p0|p1]'")
        value = int(args[0]) if len(args[0]) <= 5 else 0  # more digits: far past the bound
        if value < 1 or value & (value - 1) or value > 64:
            raise UbgiError("bad_argument", "setcube", f"the cube is a power of two up to 64; got "
                            f"{quoted(args[0], 20)}")
        where = args[1].lower() if len(args) > 1 else "centred"
        owners = {"centred": CENTERED, "centered": CENTERED, "center": CENTERED, "centre": CENTERED,
                  "c": CENTERED, "p0": 0, "p1": 1, "0": 0, "1": 1}
        if where not in owners or len(args) > 2:
            raise UbgiError("bad_argument", "setcube", f"the owner is centred, p0 or p1; got {where!r}")
        owner = owners[where]
        if (value == 1) != (owner == CENTERED):
            raise UbgiError("bad_argument", "setcube", "a cube of 1 is centred and a turned cube has "
                            "an owner")
        self.cube, self.owner = value, owner
        return []

    def _cmd_setturn(self, args, text) -> list[str]:
        if len(args) != 1 or args[0].lower() not in ("p0", "p1", "0", "1"):
            raise UbgiError("bad_argument", "setturn", "expected 'setturn p0' or 'setturn p1'")
        self.on_roll = int(args[0][-1])
        return []

    def _cmd_position(self, args, text) -> list[str]:
        from bgnet.formats.position import read_position

        if not args:
            raise UbgiError("bad_argument", "position", "expected 'position gnubgid ID', 'position "
                            "xgid XGID' or 'position startpos'")
        kind = args[0].lower()
        body = " ".join(args[1:]) if kind in ("gnubgid", "xgid", "fen", "id") else " ".join(args)
        if kind == "startpos":
            self.board, self.double_offered, self.dice = start_position(), False, None
            return []
        if kind == "fibs" or body.startswith("board:"):
            raise UbgiError("unsupported_feature", "position_fibs", "send the board: line alone")
        try:
            pos = read_position(body)
        except ValueError as e:
            raise UbgiError("bad_argument", "invalid_position", str(e)) from None
        if kind == "xgid" and pos.written != "xgid":
            raise UbgiError("bad_argument", "invalid_position", "that is not an XGID")
        self.board = pos.board
        self.double_offered = False
        if pos.context is not None:
            self._take_context(pos.context)
        return []

    def _take_context(self, ctx: MatchContext) -> None:
        if ctx.match_length and max(ctx.score) >= ctx.match_length:
            raise UbgiError("bad_argument", "invalid_position", f"the score {ctx.score[0]}-"
                            f"{ctx.score[1]} has already won the {ctx.match_length} point match")
        self.length, self.score, self.crawford = ctx.match_length, ctx.score, ctx.crawford
        self.cube, self.owner, self.on_roll = ctx.cube_value, ctx.cube_owner, ctx.player_on_roll
        self.double_offered = ctx.double_offered
        self.dice = (int(ctx.dice[0]), int(ctx.dice[1])) if ctx.dice[0] else None
        if ctx.match_length == 0:
            self.jacoby = ctx.jacoby

    def _cmd_dice(self, args, text) -> list[str]:
        digits = "".join(args)
        if len(digits) != 2 or not _is_number(digits):
            raise UbgiError("bad_argument", "dice", "expected 'dice D1 D2' with dice from 1 to 6")
        try:
            self.dice = (check_die(int(digits[0]), "the first die"), check_die(int(digits[1]), "the second die"))
        except ValueError as e:
            raise UbgiError("bad_argument", "dice", str(e)) from None
        return []

    # -- searching ------------------------------------------------------------------------------

    def _cmd_go(self, args, text) -> list[str]:
        role = "chequer"
        rest = list(args)
        if rest and rest[0].lower() == "role":
            if len(rest) < 2:
                raise UbgiError("bad_argument", "role", f"one of {', '.join(_ROLES)}")
            role = rest[1].lower()
            rest = rest[2:]
            if role not in _ROLES:
                raise UbgiError("bad_argument", "role", f"one of {', '.join(_ROLES)}; got {role!r}")
        k = 0
        while k < len(rest):  # the search limits of UCI: bgnet searches to its depth, quickly
            word = rest[k].lower()
            if word not in _SEARCH_LIMITS:
                raise UbgiError("bad_argument", "go", f"unknown word {rest[k][:40]!r}")
            value = rest[k + 1:k + 1 + _SEARCH_LIMITS[word]]
            if len(value) < _SEARCH_LIMITS[word] or not all(_is_number(v) for v in value):
                raise UbgiError("bad_argument", "go", f"{word} takes a whole number")
            k += 1 + _SEARCH_LIMITS[word]
        board = self._need_board()
        if role == "turn":
            role = "take" if self.double_offered else "chequer" if self.dice else "cube"
        if role in ("chequer", "checker"):
            return self._chequer(board)
        if role == "cube":
            return self._cube(board)
        if role == "take":
            return self._take(board)
        return self._eval(board)

    def _need_board(self) -> np.ndarray:
        if self.board is None:
            raise UbgiError("missing_context", "position", "send 'position ...' first")
        if game_result(self.board) or game_result(swap(self.board)):
            raise UbgiError("bad_argument", "position", "the game is over: a side has borne off")
        return self.board

    def _chequer(self, board: np.ndarray) -> list[str]:
        if self.dice is None:
            raise UbgiError("missing_context", "dice", "send 'dice D1 D2' first")
        d1, d2 = self.dice
        ctx = self.context()
        start = time.perf_counter()
        moves = self.advisor.moves(board, d1, d2, ctx, best_only=True)
        ms = 1000 * (time.perf_counter() - start)
        move = move_words(moves[0].steps if moves else ())
        info = f"info role chequer time {ms:.0f}"
        for f in moves[0].figures() if moves else ():
            info += f" {f.key} {f.value:.4f}" if f.key == "mwc" else f" {f.key} {f.value:+.4f}"
        return [f"{info} pv {move}", f"bestmove {move}"]

    def _cube(self, board: np.ndarray) -> list[str]:
        ctx = self.context().replace(dice=(0, 0))
        if self.double_offered:
            raise UbgiError("bad_argument", "role", "a double is offered: ask 'go role take'")
        if not ctx.may_double(ctx.player_on_roll):
            return ["info role cube cube_unavailable", "bestmove roll"]
        d = self._decision(board, ctx)
        if d is None:
            return ["info role cube no_evaluation", "bestmove roll"]
        return [self._cube_info("cube", d), f"bestmove {'double' if d.double else 'roll'}"]

    def _take(self, board: np.ndarray) -> list[str]:
        ctx = self.context().replace(dice=(0, 0))
        if not ctx.may_double(self.on_roll):
            raise UbgiError("bad_argument", "role", "the player on roll may not double here (the "
                            "cube is the other player's, at 64 or dead, or it is the Crawford game)")
        d = self._decision(board, ctx)
        if d is None:
            return ["info role take no_evaluation", "bestmove take"]
        return [self._cube_info("take", d), f"bestmove {'take' if d.take else 'drop'}"]

    def _decision(self, board: np.ndarray, ctx: MatchContext):
        return self.advisor.cube_decision(board, ctx)

    @staticmethod
    def _cube_info(role: str, d) -> str:
        parts = [f"info role {role} action {d.action}", f"nodouble {d.no_double:+.4f}"]
        if d.double_take is not None and d.double_pass is not None:
            parts += [f"doubletake {d.double_take:+.4f}", f"doublepass {d.double_pass:+.4f}"]
        return " ".join(parts)

    def _eval(self, board: np.ndarray) -> list[str]:
        from bgnet.nn.probs import equity

        probs = self.advisor.probabilities(board)
        if probs is None:
            raise UbgiError("unsupported_feature", "role_eval", f"{self.bot} cannot evaluate positions")
        names = ("win", "wingammon", "winbackgammon", "losegammon", "losebackgammon")
        values = " ".join(f"{n} {float(p):.4f}" for n, p in zip(names, probs))
        return [f"info role eval {values} equity {float(equity(probs)):+.4f}", "bestmove none"]

    # -- the rest ---------------------------------------------------------------------------------

    def _cmd_stop(self, args, text) -> list[str]:
        return []  # searches answer before the next line is read: there is nothing to stop

    def _cmd_quit(self, args, text) -> list[str]:
        self.quit = True
        return []

    def _cmd_d(self, args, text) -> list[str]:
        from bgnet.formats.position import write_position

        if self.board is None:
            return ["info string no position"]
        ctx = self.context()
        return [f"info string gnubgid {write_position(self.board, ctx, 'gnubg-id')}",
                f"info string xgid {write_position(self.board, ctx, 'xgid')}"]

    def _bare_position(self, text: str) -> list[str]:
        """The draft's way: a position alone on a line, answered with the action alone."""
        try:
            if text.startswith("board:"):
                from bgnet.play.external import interpret, parse_board

                req = interpret(parse_board(text), jacoby=self.jacoby)
                board, ctx, kind = req.board, req.context, req.kind
            else:
                from bgnet.formats.position import read_position

                pos = read_position(text)
                board, ctx = pos.board, pos.context_or_default()
                kind = "take" if ctx.double_offered else "move" if ctx.dice[0] else "cube"
        except ValueError as e:
            raise UbgiError("bad_argument", "invalid_position", str(e)) from None
        if kind in ("take", "beaver"):
            d = self.advisor.cube_decision(board, ctx)
            return ["take" if kind == "beaver" or d is None or d.take else "drop"]
        if kind == "cube":
            return ["double" if self.advisor.wants_double(board, ctx) else "roll"]
        choice = self.advisor.choose(board, int(ctx.dice[0]), int(ctx.dice[1]), ctx)
        return ["" if choice is None else move_words(choice[1])]


def serve(engine: UbgiEngine, stdin, stdout) -> int:
    """Answer ``stdin``'s lines on ``stdout`` until ``quit`` or the end of the input."""
    for raw in iter(stdin.readline, b""):
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        answer = engine.handle(line)
        if answer:
            stdout.write("".join(a + "\n" for a in answer))
            stdout.flush()
        if engine.quit:
            break
    return 0
