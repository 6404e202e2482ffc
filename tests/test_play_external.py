"""GNU Backgammon's external player protocol: reading its board lines, answering them, and a real
GNU Backgammon playing a match against the server."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bgnet.bots import load_bot
from bgnet.engine.board import start_position
from bgnet.engine.game import Match
from bgnet.engine.movegen import generate
from bgnet.engine.position_id import position_id
from bgnet.engine.state import CENTERED
from bgnet.formats.mat import load_mat
from bgnet.play.advisor import Advisor
from bgnet.play.external import ExternalPlayer, ProtocolError, Seat, interpret, move_text, parse_board, start_in_thread

GNUBG_PROGRAM = shutil.which("gnubg") or next(
    (p for p in ("/usr/games/gnubg", "/usr/local/games/gnubg") if Path(p).exists()), None)
needs_program = pytest.mark.skipif(
    GNUBG_PROGRAM is None, reason="the GNU Backgammon program is not installed (Debian package "
    "'gnubg'); the PyPI module is built without sockets, so it cannot use external players")

# Lines GNU Backgammon 1.07 sent (player 1 external, opening 2-1; player 0 external, doubled by
# player 1; player 1 external, doubled by player 0 at 2-1 in a 5-point match).
OPENING = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:2:1:2:1"
           ":1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
DOUBLED_P0 = ("board:root:gnubg:7:0:0:0:0:-1:-2:-2:2:4:0:2:0:1:1:-2:3:0:-1:1:-2:0:-5:0:1:0:0:0:0:1:0:0"
              ":0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")
# Player 0 external, asked before rolling: it owns the cube at 2 (it took a double).
OWNED_P0 = ("board:gnubg:root:7:0:0:0:0:-1:-2:-2:2:4:2:2:0:0:0:-2:3:0:-1:1:-2:0:-5:0:1:0:0:0:0:-1:0"
            ":0:0:0:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
# Player 1 external doubled at the cube of 1; GNU Backgammon (player 0) beavered: the cube is at 2,
# player 0's, and player 1 is asked.
BEAVERED_P1 = ("board:gnubg:root:0:0:0:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:-1:0:0:-3:0:-5:0:0:0:0:2:0:1:0"
               ":0:0:0:2:0:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")
DOUBLED_P1 = ("board:root:gnubg:5:2:1:0:-1:-1:-1:2:0:4:0:3:-1:0:2:-1:2:0:0:1:-2:-3:-3:-2:0:0:0:0:1:-1"
              ":0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")


def gnubg_line(sides: dict[int, np.ndarray], on_roll: int, *, dice=(0, 0), cube=1, owner=CENTERED,
               doubled=False, asked=None, score=(0, 0), length=0, names=("zero", "one")) -> str:
    """A board line the way GNU Backgammon 1.07 writes it to the ``asked`` player (by default
    the player on roll, or its opponent when ``doubled``): player 1's checkers positive on its own
    points, player 0's negative from the other end; names and scores of player ``asked ^
    on_roll`` first; may-double flags "owner is not 0", "owner is not 1"."""
    if asked is None:
        asked = 1 - on_roll if doubled else on_roll
    pts = [0] * 26
    pts[0], pts[25] = -int(sides[0][24]), int(sides[1][24])
    for i in range(1, 25):
        pts[i] = int(sides[1][i - 1]) or -int(sides[0][24 - i])
    first = asked ^ on_roll
    second = 1 - first
    off = [15 - int(sides[p].sum()) for p in (1, 0)]
    values = ([length, score[first], score[second]] + pts + [1 if on_roll == 1 else -1]
              + [dice[0], dice[1], dice[0], dice[1], cube, int(owner != 0), int(owner != 1),
                 int(doubled), 1, -1, 0, 25, off[0], off[1], 0, 0, 0, 0, 0, 1])
    return "board:" + f"{names[first]}:{names[second]}:" + ":".join(map(str, values))


# ---------------------------------------------------------------------------------------------
# reading board lines


def test_parse_every_field():
    fb = parse_board(OPENING + "\n\x00")
    assert (fb.player, fb.opponent, fb.match_length, fb.score) == ("gnubg", "root", 0, (0, 0))
    assert fb.points[24] == 2 and fb.points[1] == -2 and fb.points[6] == 5 and fb.points[19] == -5
    assert (fb.turn, fb.dice, fb.opponent_dice, fb.cube, fb.may_double, fb.doubled) == (
        1, (2, 1), (2, 1), 1, (1, 1), 0)
    assert (fb.colour, fb.direction, fb.home, fb.bar, fb.on_home, fb.on_bar) == (1, -1, 0, 25, (0, 0), (0, 0))


def test_interpret_real_lines():
    req = interpret(parse_board(OPENING))
    assert (req.kind, req.player, req.dice) == ("move", 1, (2, 1))
    assert np.array_equal(req.board, start_position()) and req.context.is_money

    req = interpret(parse_board(DOUBLED_P0))
    assert (req.kind, req.player) == ("take", 0)
    ctx = req.context
    assert (ctx.player_on_roll, ctx.cube_value, ctx.cube_owner, ctx.match_length) == (1, 1, CENTERED, 7)
    assert req.board.sum() == 30  # every checker on the board

    req = interpret(parse_board(DOUBLED_P1))
    assert (req.kind, req.player) == ("take", 1)
    # While a double waits the first score is player 1's: GNU Backgammon had 1, the external 2.
    assert req.context.score == (1, 2) and req.context.player_on_roll == 0

    req = interpret(parse_board(OWNED_P0))
    assert (req.kind, req.player, req.context.cube_value, req.context.cube_owner) == ("cube", 0, 2, 0)
    assert req.context.may_double(0)

    # A beaver looks like a double offered to the player on roll: known only from the seat.
    assert interpret(parse_board(BEAVERED_P1)).kind == "take"
    req = interpret(parse_board(BEAVERED_P1), player=1)
    assert (req.kind, req.player, req.context.cube_value, req.context.cube_owner) == ("beaver", 1, 2, 0)


def test_beaver_is_taken_once_the_seat_is_known():
    player = ExternalPlayer(Advisor(load_bot("random:1"), judge=None))
    seat = Seat()
    assert player.answer(OPENING, seat).count("/") == 2 and seat.player == 1
    assert player.answer(BEAVERED_P1, seat) == "take"


@pytest.mark.parametrize("seed", range(4))
def test_round_trip_through_gnubg_lines(seed):
    """Positions of random games, written as GNU Backgammon writes them, read back the same:
    board of the player asked, dice, cube owner, score, and who is asked."""
    rng = np.random.default_rng(seed)
    game = Match(9, seed=seed).new_game()
    game.opening_roll()
    for _ in range(int(rng.integers(5, 60))):
        if game.over:
            break
        if game.phase == "roll":
            game.roll()
        after, _ = game.legal_moves()
        game.play(after[int(rng.integers(len(after)))] if len(after) else None)
    if game.over:
        pytest.skip("the game ended early")
    p = game.player_on_roll
    sides = {q: game.board_for(q)[1] for q in (0, 1)}
    owner = int(rng.integers(-1, 2))
    cube = 1 if owner == CENTERED else 2 ** int(rng.integers(1, 4))
    score = (int(rng.integers(0, 9)), int(rng.integers(0, 9)))
    cases = [("cube", (0, 0), p), ("move", (5, 3), p), ("take", (0, 0), 1 - p), ("beaver", (0, 0), p)]
    for kind, dice, asked in cases:
        doubled = kind in ("take", "beaver")
        line = gnubg_line(sides, p, dice=dice, cube=cube, owner=owner, doubled=doubled, asked=asked,
                          score=score, length=9)
        req = interpret(parse_board(line), player=asked)
        assert (req.kind, req.player, req.dice) == (kind, asked, dice)
        assert np.array_equal(req.board, game.board_for(p))  # the player on roll's view
        assert (req.context.cube_value, req.context.cube_owner) == (cube, owner)
        assert req.context.score == score and req.context.player_on_roll == p


@pytest.mark.parametrize("line, words", [
    ("hello", "starting with 'board:'"),
    ("board:a:b:1:2:3", "52 fields"),
    (OPENING.replace(":25:", ":x5:"), "whole numbers"),
    (OPENING.replace(":1:-1:0:25:", ":-1:-1:0:25:"), "colour 1"),
    (OPENING.replace("board:gnubg:root:0:0:0:", "board:gnubg:root:3:3:0:"), "already won"),
])
def test_bad_lines_are_answered_with_an_error(line, words):
    with pytest.raises(ProtocolError, match=words):
        interpret(parse_board(line))
    player = ExternalPlayer(Advisor(load_bot("random:1"), judge=None))
    reply = player.answer(line)
    assert reply.startswith("Error: ") and "\n" not in reply


def test_move_text_is_one_step_per_die():
    assert move_text(((13, 8), (8, 7))) == "13/8 8/7"
    assert move_text(((25, 22), (6, 0), (6, 0))) == "25/22 6/0 6/0"
    assert move_text(()) == ""


def test_answers_use_the_bot_and_the_cube():
    pytest.importorskip("gnubg_nn")
    player = ExternalPlayer(Advisor(load_bot("gnubg:0")))
    race = np.zeros(25, np.int8)
    race[1:6] = 3  # 60 pips
    far_behind = race.copy()
    far_behind[5] -= 1
    far_behind[12] += 1  # 67 pips
    # Player 1 on roll 60 to 67 in a race: a double; player 0 doubled there: a drop.
    assert player.answer(gnubg_line({0: far_behind, 1: race}, 1)) == "double"
    assert player.answer(gnubg_line({0: far_behind, 1: race}, 1, doubled=True)) == "drop"
    assert player.answer(gnubg_line({0: race, 1: race}, 0, doubled=True)) == "take"
    # A move: the bot's choice, one of the legal moves, in steps GNU Backgammon reads.
    reply = player.answer(OPENING)
    legal = {move_text(tuple((int(a), int(b)) for a, b in s if a >= 0))
             for s in generate(start_position(), 2, 1)[1]}
    assert reply in legal


def test_server_answers_over_tcp():
    player = ExternalPlayer(Advisor(load_bot("random:3"), judge=None))
    server = start_in_thread(player, port=0)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as c:
            f = c.makefile("rwb")
            for line in (OPENING, DOUBLED_P0, "nonsense"):
                c.sendall(line.encode() + b"\n\x00")  # GNU Backgammon sends the NUL as well
                raw = f.readline().decode()
                assert raw.endswith("\n")
                reply = raw.strip()
                if line is OPENING:
                    assert reply.count("/") == 2
                elif line is DOUBLED_P0:
                    assert reply == "take"  # no judge: always takes
                else:
                    assert reply.startswith("Error: ")
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------------------------------
# against GNU Backgammon


def _sent_moves(log) -> list:
    """(player, dice, position before, position after) of every move the server sent, and the
    cube answers, from its log of (line, reply)."""
    moves, cube = [], []
    for line, reply in log:
        req = interpret(parse_board(line))
        if req.kind == "move":
            board = req.board.copy()
            for step in reply.split():
                a, b = (int(x) for x in step.split("/"))
                board[1, a - 1] -= 1
                if b:
                    board[1, b - 1] += 1
                    if board[0, 24 - b] == 1:
                        board[0, 24 - b], board[0, 24] = 0, board[0, 24] + 1
            moves.append((req.player, tuple(sorted(req.dice)), position_id(req.board), position_id(board)))
        elif reply in ("double", "take", "drop"):
            cube.append((req.player, reply))
    return moves, cube


def _recorded_moves(record, player: int) -> tuple[list, list]:
    moves, cube = [], []
    for g in record.games:
        for a in g.actions:
            if a.player != player:
                continue
            if a.kind == "move":
                after = a.board.copy()
                for s, e in a.steps:
                    after[1, s - 1] -= 1
                    if e:
                        after[1, e - 1] += 1
                        if after[0, 24 - e] == 1:
                            after[0, 24 - e], after[0, 24] = 0, after[0, 24] + 1
                moves.append((player, tuple(sorted(a.dice)), position_id(a.board), position_id(after)))
            elif a.kind in ("double", "take", "drop"):
                cube.append((player, a.kind))
    return moves, cube


@needs_program
@pytest.mark.parametrize("player, seed", [(1, 1), (0, 2)])
def test_gnubg_plays_a_match_against_the_server(player, seed, tmp_path):
    """GNU Backgammon plays a 3-point match with the server as one player; its own record of
    the match (exported as .mat, replayed here by the rules) holds exactly the moves and cube
    actions the server sent."""
    pytest.importorskip("gnubg_nn")
    log = []
    server = start_in_thread(ExternalPlayer(Advisor(load_bot("gnubg:0")),
                                            log=lambda line, reply: log.append((line, reply))))
    out = tmp_path / "played.mat"
    other = 1 - player
    commands = "\n".join([
        f"set seed {seed}",
        f"set player {other} gnubg",
        f"set player {other} chequerplay evaluation plies 0",
        f"set player {other} cubedecision evaluation plies 0",
        f"set player {player} external 127.0.0.1:{server.port}",
        "new match 3",
        f"export match mat {out}",
        ""])
    try:
        run = subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input=commands, capture_output=True,
                             text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    transcript = run.stdout + run.stderr
    assert "has won the match" in transcript, transcript[-3000:]
    assert "External connection closed" not in transcript and "badly formed" not in transcript
    record = load_mat(out)
    last = record.games[-1]
    assert last.winner is not None and last.score[last.winner] + last.points >= 3
    sent, sent_cube = _sent_moves(log)
    recorded, recorded_cube = _recorded_moves(record, player)
    assert len(sent) > 10 and sent == recorded
    assert sent_cube == recorded_cube
    # What the server read of the cube and the score agrees with GNU Backgammon's game: it is
    # asked to double only when it may, and every score it saw is the score of a game played.
    requests = [interpret(parse_board(line)) for line, _ in log]
    assert all(r.player == player for r in requests)
    assert all(r.context.may_double(player) for r in requests if r.kind == "cube")
    assert all(r.context.cube_owner != player for r in requests if r.kind == "take")
    assert {r.context.score for r in requests} <= {g.score for g in record.games}


class AlwaysDoubles(Advisor):
    """Doubles whenever it may: GNU Backgammon answers the worst of these with a beaver."""

    def wants_double(self, board, ctx):
        return True


@needs_program
def test_gnubg_beavers_are_taken():
    pytest.importorskip("gnubg_nn")
    log = []
    server = start_in_thread(ExternalPlayer(AlwaysDoubles(load_bot("gnubg:0")),
                                            log=lambda line, reply: log.append((line, reply))))
    commands = (f"set seed 5\nset player 0 gnubg\nset player 0 chequerplay evaluation plies 0\n"
                f"set player 0 cubedecision evaluation plies 0\n"
                f"set player 1 external 127.0.0.1:{server.port}\n" + "new game\n" * 2)
    try:
        run = subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input=commands, capture_output=True,
                             text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    beavers = run.stdout.count("accepts and immediately redoubles")
    assert beavers >= 1, run.stdout[-3000:]
    doubled_on_roll = [reply for line, reply in log
                       if parse_board(line).doubled and parse_board(line).turn == 1]
    assert doubled_on_roll == ["take"] * beavers  # the external player is 1: on roll when beavered


def test_serve_external_command(tmp_path):
    """The command listens where it is told and answers a board line."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "bgnet.cli", "serve-external", "--port", str(port),
                             "--bot", "random:2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                c = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode()
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.2)
        with c:
            c.sendall(OPENING.encode() + b"\n\x00")
            reply = c.makefile("rb").readline().decode().strip()
        assert reply.count("/") == 2
    finally:
        proc.terminate()
        out = proc.communicate(timeout=10)[0].decode()
    assert f"set player 1 external 127.0.0.1:{port}" in out



def _text(steps) -> str:
    return move_text([(int(a), int(b)) for a, b in steps if a >= 0])


def test_moves_are_chosen_at_the_score_and_cube_of_the_line():
    """The line's score and cube reach the bot: at double match point (4-4 in a 5-point match)
    its move is the cubeful one, which differs from the cubeless one in some positions, and
    --cubeless-play's advisor answers the cubeless one."""
    import bgnet
    from bgnet.engine.sampling import sample_positions
    from bgnet.engine.state import MatchContext

    bot = bgnet.load_bot()
    cubeful = ExternalPlayer(Advisor(bot))
    cubeless = ExternalPlayer(Advisor(bot, cubeless_play=True))
    boards, dice = sample_positions(60, seed=6, every=3)
    changed = 0
    for board, (d1, d2) in zip(boards, dice):
        d1, d2 = int(d1), int(d2)
        if len(generate(board, d1, d2)[0]) < 2:
            continue
        sides = {0: board[0], 1: board[1]}  # player 1 on roll
        line = gnubg_line(sides, 1, dice=(d1, d2), score=(4, 4), length=5)
        ctx = MatchContext(match_length=5, score=(4, 4), player_on_roll=1, turn=1)
        want = _text(bot.choose_moves(board[None], np.array([[d1, d2]]), ctx)[1][0])
        plain = _text(bot.choose_moves(board[None], np.array([[d1, d2]]))[1][0])
        assert cubeful.answer(line) == want
        assert cubeless.answer(line) == plain
        changed += want != plain
    assert changed > 0
