"""``bgnet serve-external``: a bot as a GNU Backgammon *external player*.

In GNU Backgammon, ``set player 1 external localhost:PORT`` hands that player's decisions to a
program listening on the port. GNU Backgammon connects, and whenever that player must act it
sends one line, a FIBS "boardstyle 3" board state followed by a newline (and a NUL byte)::

    board:P0:P1:LENGTH:S0:S1:BAR:p1:...:p24:BAR:TURN:D1:D2:D1:D2:CUBE:MAY1:MAY0:DOUBLED:
        COLOUR:DIRECTION:HOME:BAR:OFF+:OFF-:ONBAR+:ONBAR-:CANMOVE:FORCED:CRAWFORD:REDOUBLES

and reads back one line:

* the dice were rolled (``D1 D2`` non-zero): the move, as from/to steps from the mover's side,
  ``25`` the bar and ``0`` off, one step per die ("13/8 8/7", "25/22 6/0"); an empty line when
  no move is legal. GNU Backgammon does not refuse an illegal move: it records no move, so the
  move must be right;
* before the roll (dice 0 0; asked only when the player may double): ``roll`` or ``double``;
* when doubled (``DOUBLED`` non-zero): ``take`` or ``drop``.

How GNU Backgammon (1.07) fills the fields, as this module reads them: the board is from player
1's side (``COLOUR`` 1, ``DIRECTION`` -1): the positive counts are player 1's checkers on its
points 1-24, the negative ones player 0's (so player 0's own point ``p`` is position ``25 - p``);
player 0's bar is position 0, player 1's position 25. ``TURN`` is 1 when player 1 is on roll (or
is the doubler), -1 for player 0; while a double waits (``DOUBLED`` non-zero) the player asked is
the other one. The names and scores are player 0's then player 1's, except while a double waits
for its answer, when player 1's come first. ``MAY1``/``MAY0`` (in that order, as FIBS gives the
positive side's first) say whether players 1 and 0 may double: both while the cube is centred,
only the owner once it is turned. The match length is 0 for money play.

A *beaver* (in money play GNU Backgammon may take a double and redouble at once, keeping the
cube) comes back as a
double offered to the original doubler, the player on roll: the rules do not let a beaver be
refused, so it is always taken. Seeing it needs to know which player the connection plays, which
the first line that is not a double answer tells. Resignations GNU Backgammon settles itself; it
never asks the external player.

Decisions are the bot's (:class:`~bgnet.play.advisor.Advisor`): its move, chosen by the match's
own measure at the score and cube the line gives (:mod:`bgnet.cube.checker`; ``--cubeless-play``
keeps the cubeless choice), and the cube by :func:`bgnet.cube.decide_context`; the Crawford game
never reaches the cube questions, since GNU Backgammon asks them only when doubling is allowed.
"""
from __future__ import annotations

import socketserver
import threading
from dataclasses import dataclass

import numpy as np

from bgnet.engine.board import as_board
from bgnet.engine.state import CENTERED, MAX_SCORE, MatchContext, check_match_length
from bgnet.errors import BadArgument, quoted
from bgnet.play.advisor import Advisor

FIELDS = 52  # values after "board:"
MAX_LINE = 4096
MAX_VALUE = 2**31 - 1  # no field of a real board line comes near: larger ones are refused
MAX_CHECKERS = 15


class ProtocolError(BadArgument):
    """A board line that cannot be read; the message says which field and why (a ``ValueError``
    too; exit 2 where a command line meets it)."""


@dataclass(frozen=True)
class FibsBoard:
    """The fields of a FIBS board line as written (no interpretation).

    ``points`` has 26 entries: positions 0 and 25 are the bars, 1..24 the points, positive for
    one colour and negative for the other. Pairs are in the order written: ``score`` and the
    names follow GNU Backgammon's order (see the module docstring), ``may_double`` FIBS's
    (the positive side first).
    """

    player: str
    opponent: str
    match_length: int
    score: tuple[int, int]
    points: tuple[int, ...]
    turn: int
    dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    may_double: tuple[int, int]
    doubled: int
    colour: int
    direction: int
    home: int
    bar: int
    on_home: tuple[int, int]
    on_bar: tuple[int, int]
    can_move: int
    forced_move: int
    did_crawford: int
    redoubles: int


def parse_board(line: str) -> FibsBoard:
    """Read a ``board:...`` line (trailing newline and NUL bytes are ignored).

    >>> b = parse_board("board:gnubg:you:3:0:1:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:"
    ...                 "0:0:2:0:1:4:2:4:2:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
    >>> b.match_length, b.score, b.dice, b.points[24], b.points[1]
    (3, (0, 1), (4, 2), 2, -2)
    """
    text = line.strip().strip("\x00").strip()
    if not text:
        raise ProtocolError("empty line; expected a board line starting with 'board:'")
    if not text.startswith("board:"):
        raise ProtocolError(f"expected a line starting with 'board:'; got {text[:40]!r}")
    parts = text[len("board:"):].split(":")
    if len(parts) != FIELDS:
        raise ProtocolError(f"a board line has {FIELDS} fields after 'board:'; got {len(parts)}")
    for i, x in enumerate(parts[2:]):
        digits = x.strip().removeprefix("-")
        if not (digits.isascii() and digits.isdigit()):  # int() would take '١' too
            raise ProtocolError(f"board fields after the two names are whole numbers; got {quoted(x, 20)}")
        if len(digits) > 10 or int(digits) > MAX_VALUE:
            raise ProtocolError(f"board field {i + 3} after 'board:' is out of range: {quoted(x, 20)}")
    v = [int(x) for x in parts[2:]]
    return FibsBoard(
        player=parts[0], opponent=parts[1], match_length=v[0], score=(v[1], v[2]),
        points=tuple(v[3:29]), turn=v[29], dice=(v[30], v[31]), opponent_dice=(v[32], v[33]),
        cube=v[34], may_double=(v[35], v[36]), doubled=v[37], colour=v[38], direction=v[39],
        home=v[40], bar=v[41], on_home=(v[42], v[43]), on_bar=(v[44], v[45]), can_move=v[46],
        forced_move=v[47], did_crawford=v[48], redoubles=v[49])


@dataclass(frozen=True)
class Request:
    """What GNU Backgammon asks, from the asked player's side.

    ``kind`` is "move", "cube" (roll or double), "take" (answer a double) or "beaver" (the
    opponent took the player's double and redoubled at once). ``player`` is the asked player's
    number in GNU Backgammon (0 or 1). ``board`` is the view of the player on roll, ``[opponent,
    on roll]``: the asked player's own, except for "take", where it is the doubler's.
    ``context`` has that player on roll, the cube as it stands (before the double offered), and
    the score as (player 0, player 1).
    """

    kind: str
    player: int
    board: np.ndarray
    dice: tuple[int, int]
    context: MatchContext


def interpret(fb: FibsBoard, *, jacoby: bool = True, player: int | None = None) -> Request:
    """The decision a board line asks for, as GNU Backgammon writes it (see the module
    docstring). ``jacoby``: money play with the Jacoby rule (GNU Backgammon's default; the line
    does not say). ``player``: the number of the player this connection plays, when known; it
    tells a beaver from a double to answer."""
    if fb.colour != 1 or fb.direction != -1:
        raise ProtocolError(f"expected GNU Backgammon's colour 1 and direction -1; got "
                            f"{fb.colour} and {fb.direction}")
    if fb.turn not in (1, -1):
        raise ProtocolError(f"the turn field is 1 or -1 while a game is played; got {fb.turn}")
    sides = _sides(fb.points)
    on_roll = 1 if fb.turn == 1 else 0
    beaver = bool(fb.doubled) and player == on_roll
    asked = 1 - on_roll if fb.doubled and not beaver else on_roll
    score = fb.score if asked == on_roll else (fb.score[1], fb.score[0])
    one_may, zero_may = fb.may_double
    owner = CENTERED if one_may and zero_may else 1 if one_may else 0
    cube = fb.cube
    if cube < 1 or cube & (cube - 1):
        raise ProtocolError(f"the cube is a power of two; got {cube}")
    if cube > 1 << 15:
        raise ProtocolError(f"the cube is at most 32768; got {cube}")
    length = 0 if fb.match_length == 9999 else fb.match_length  # FIBS: 9999 = unlimited
    try:
        check_match_length(length)
    except ValueError as e:
        raise ProtocolError(f"board field 3 (match length): {e}") from None
    if min(score) < 0 or max(score) > MAX_SCORE:
        raise ProtocolError(f"a score is 0 to {MAX_SCORE} points; got {score[0]}-{score[1]}")
    if length and max(score) >= length:
        raise ProtocolError(f"the score {score[0]}-{score[1]} has already won the "
                            f"{length}-point match")
    ctx = MatchContext(cube_value=cube, cube_owner=owner if cube > 1 else CENTERED,
                       player_on_roll=on_roll, turn=asked, dice=_dice(fb.dice),
                       match_length=length, score=score, jacoby=jacoby and not length)
    board = as_board(np.stack([sides[1 - on_roll], sides[on_roll]]))  # the player on roll's view
    if fb.doubled:
        return Request("beaver" if beaver else "take", asked, board, (0, 0), ctx)
    if fb.dice[0] == 0:
        return Request("cube", asked, board, (0, 0), ctx)
    return Request("move", asked, board, _dice(fb.dice), ctx)


def _sides(points) -> dict[int, np.ndarray]:
    """Each player's checkers on its own numbering: player 1 positive on points 1-24 with its bar
    at 25, player 0 negative numbered from the other end with its bar at 0."""
    too_many = [n for n in points if abs(n) > MAX_CHECKERS]
    if too_many:
        raise ProtocolError(f"a point or bar holds at most {MAX_CHECKERS} checkers; got {too_many[0]}")
    one, zero = np.zeros(25, np.int64), np.zeros(25, np.int64)
    for i in range(1, 25):
        n = points[i]
        if n > 0:
            one[i - 1] = n
        elif n < 0:
            zero[24 - i] = -n
    one[24], zero[24] = abs(points[25]), abs(points[0])
    return {0: zero, 1: one}


def _dice(d) -> tuple[int, int]:
    a, b = int(d[0]), int(d[1])
    if (a == 0) != (b == 0) or not (0 <= a <= 6 and 0 <= b <= 6):
        raise ProtocolError(f"dice are two numbers from 1 to 6, or 0 0 before the roll; got {a} {b}")
    return (a, b)


def move_text(steps) -> str:
    """A move as GNU Backgammon reads it from an external player: one from/to step per die,
    highest starting point first, 25 for the bar and 0 for off ("" for no move).

    >>> move_text([(6, 5), (8, 5)])
    '8/5 6/5'
    >>> move_text([(25, 22), (6, 0)])
    '25/22 6/0'
    """
    return " ".join(f"{a}/{b}" for a, b in sorted(steps, reverse=True))


# ---------------------------------------------------------------------------------------------
# answering


class ExternalPlayer:
    """Answers board lines with the bot's decisions; ``log`` (optional) is called with each
    (line received, answer sent), e.g. to check afterwards what was played."""

    def __init__(self, advisor: Advisor, *, jacoby: bool = True, log=None):
        self.advisor = advisor
        self.jacoby = jacoby
        self.log = log
        self._lock = threading.Lock()  # one decision at a time, whatever the connections

    def answer(self, line: str, seat: Seat | None = None) -> str:
        """The reply to one line, without its newline. ``seat`` remembers, for one connection,
        which player it plays (learnt from the lines). A line that cannot be read gets
        ``Error: ...``, which GNU Backgammon prints before it stops asking this player."""
        seat = seat if seat is not None else Seat()
        try:
            req = interpret(parse_board(line), jacoby=self.jacoby, player=seat.player)
            if req.kind in ("move", "cube"):
                seat.player = req.player
            with self._lock:
                reply = self.decide(req)
        except ValueError as e:
            reply = f"Error: {e}"
        if self.log is not None:
            self.log(line, reply)
        return reply

    def decide(self, req: Request) -> str:
        """The reply to a request: a move, roll/double or take/drop."""
        if req.kind == "beaver":
            return "take"  # the rules let nobody refuse a beaver
        if req.kind == "take":
            return "take" if self.advisor.wants_take(req.board, req.context) else "drop"
        if req.kind == "cube":
            return "double" if self.advisor.wants_double(req.board, req.context) else "roll"
        choice = self.advisor.choose(req.board, *req.dice, req.context)
        return "" if choice is None else move_text(choice[1])


class Seat:
    """Which player (0 or 1) a connection plays, once a line has shown it."""

    def __init__(self):
        self.player: int | None = None


class _Handler(socketserver.StreamRequestHandler):
    """One GNU Backgammon connection: a line in, a line out, until it hangs up."""

    server: ExternalServer  # the server that made this handler, and holds its player

    def handle(self) -> None:
        player: ExternalPlayer = self.server.player
        seat = Seat()
        pending = b""
        while True:
            chunk = self.request.recv(MAX_LINE)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                pending = pending.lstrip(b"\x00")  # GNU Backgammon sends the string's NUL too
                line = raw.decode("utf-8", "replace").strip("\x00").strip()
                # Every line is answered, a blank one with an error: the client waits for a reply.
                self.request.sendall((player.answer(line, seat) + "\n").encode())
            if len(pending) > MAX_LINE:
                self.request.sendall(b"Error: line too long\n")
                return


class ExternalServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """A TCP server answering GNU Backgammon's external player lines with ``player``."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address: tuple[str, int], player: ExternalPlayer):
        super().__init__(address, _Handler)
        self.player = player

    @property
    def port(self) -> int:
        return self.server_address[1]


def start_in_thread(player: ExternalPlayer, host: str = "127.0.0.1", port: int = 0) -> ExternalServer:
    """Start a server in a background thread (``port`` 0 picks a free one: see ``.port``);
    stop it with ``server.shutdown(); server.server_close()``."""
    server = ExternalServer((host, port), player)
    threading.Thread(target=server.serve_forever, name="bgnet-external", daemon=True).start()
    return server
