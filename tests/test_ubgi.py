"""``bgnet ubgi`` driven as a GUI drives it: a process, one command a line, answers read back.

A referee here keeps the game (board, dice, cube, score) and asks the engine for both players'
decisions, checking every move it gets against bgnet's move generator; each command of the UBGI
draft and of the engines that speak it is tried, bad lines get one error line and leave the
process alive, and ``go`` at 0-ply answers within a few milliseconds.
"""
from __future__ import annotations

import functools
import queue
import statistics
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from bgnet.engine.board import game_result, start_position, swap
from bgnet.engine.movegen import generate
from bgnet.engine.position_id import position_id
from bgnet.engine.state import CENTERED, MatchContext
from bgnet.formats.position import write_position

ANSWER_TIMEOUT = 120  # seconds for one answer; the first loads the bot and compiles


class Engine:
    """``bgnet ubgi`` in a process: :meth:`send` a line, :meth:`ask` for the answer lines."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "bgnet.cli", "ubgi", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def line(self) -> str:
        try:
            out = self.lines.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            raise AssertionError("the engine did not answer") from None
        if out is None:
            raise AssertionError(f"the engine closed its output: {self.proc.stderr.read()}")
        return out

    def ask(self, command: str) -> list[str]:
        """Send ``command`` and read up to the line that ends its answer (``bestmove``,
        ``readyok``, ``ubgiok`` or ``error``)."""
        self.send(command)
        out = [self.line()]
        while not out[-1].startswith(("bestmove", "readyok", "ubgiok", "error")):
            out.append(self.line())
        return out

    def silent(self, command: str) -> None:
        """``command`` is answered by silence: an ``isready`` after it gets ``readyok`` alone."""
        self.send(command)
        assert self.ask("isready") == ["readyok"], command

    def best(self, command: str) -> str:
        answer = self.ask(command)
        assert answer[-1].startswith("bestmove "), answer
        return answer[-1].split(None, 1)[1]

    def close(self) -> int:
        if self.proc.poll() is None:
            self.send("quit")
        try:
            return self.proc.wait(timeout=30)
        finally:
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc.stderr.close()


@pytest.fixture(scope="module")
def engine():
    e = Engine("--ply", "0")
    e.ask("ubgi")
    assert e.line() == "readyok"
    yield e
    assert e.close() == 0


def play(board: np.ndarray, move: str, d1: int, d2: int) -> np.ndarray:
    """The afterstate of the engine's ``move`` played pair by pair in the order written, checked
    against the move generator: each pair moves a checker it has onto a point not held by two
    or more of the opponent's, and the whole move is one of the legal ones."""
    after_all, _ = generate(board, d1, d2)
    if move == "pass":
        assert len(after_all) == 0, "the engine passed with a legal move to play"
        return board
    assert "*" not in move and "(" not in move, move
    out = board.copy()
    me, opp = out[1], out[0]
    pairs = move.split()
    assert len(pairs) <= (4 if d1 == d2 else 2), move
    for pair in pairs:
        a, b = (25 if w == "bar" else 0 if w == "off" else int(w) for w in pair.split("/"))
        assert a != 0 and b != 25 and a > b, pair
        assert me[a - 1] > 0, f"{move}: nothing to move on {a}"
        me[a - 1] -= 1
        if b:
            assert opp[24 - b] < 2, f"{move}: {b} is the opponent's point"
            me[b - 1] += 1
            if opp[24 - b] == 1:
                opp[24 - b], opp[24] = 0, opp[24] + 1
    assert (after_all == out).all(axis=(1, 2)).any(), f"{move} is not a legal play of {d1}{d2}"
    return out


def send_position(engine: Engine, board: np.ndarray, ctx: MatchContext, full_ids: bool,
                  dice=(0, 0), doubled: bool = False) -> None:
    """The position, the cube, who is on roll and the dice, each line answered by silence: in the
    position's Match ID with ``full_ids``, else by ``setturn`` and ``setcube``."""
    if full_ids:
        turn = 1 - ctx.player_on_roll if doubled else ctx.player_on_roll
        ctx = ctx.replace(dice=dice, double_offered=doubled, turn=turn)
        engine.silent("position gnubgid " + write_position(board, ctx, "gnubg-id"))
    else:
        engine.silent(f"position gnubgid {position_id(board)}")
        engine.silent(f"setturn p{ctx.player_on_roll}")
        owner = "centred" if ctx.cube_owner == CENTERED else f"p{ctx.cube_owner}"
        engine.silent(f"setcube {ctx.cube_value} {owner}")
    if dice[0]:
        engine.silent(f"dice {dice[0]} {dice[1]}")


def play_game(engine: Engine, rng: np.random.Generator, *, length: int, score=(0, 0),
              crawford=False, full_ids=False) -> dict:
    """One game refereed here, every decision of both players asked of the engine: the cube
    (``go role cube``), the answer to a double (``go role take``) and the checker play
    (``go role chequer``). The context goes by ``setcube``/``setturn``/``setscore`` or, with
    ``full_ids``, in each position's Match ID. Returns what happened."""
    engine.silent("newgame")
    if not full_ids:
        engine.silent(f"setscore {score[0]} {score[1]}" + (" crawford" if crawford else ""))
    board, turn = start_position(), int(rng.integers(2))
    cube, owner = 1, CENTERED
    seen = {"doubles": 0, "takes": 0, "moves": 0, "passes": 0, "sides": set()}
    for _ in range(500):
        ctx = MatchContext(cube_value=cube, cube_owner=owner, player_on_roll=turn, turn=turn,
                           crawford=crawford, match_length=length, score=score,
                           jacoby=not length)

        setup = functools.partial(send_position, engine, board, ctx, full_ids)
        setup()
        action = engine.best("go role cube")
        assert action in ("double", "roll")
        if not ctx.may_double(turn):
            assert action == "roll", "the engine doubled without access to the cube"
        if action == "double":
            seen["doubles"] += 1
            setup(doubled=True)
            answer = engine.best("go role take")
            assert answer in ("take", "drop")
            if answer == "drop":
                return {**seen, "winner": turn, "points": cube, "how": "drop"}
            seen["takes"] += 1
            cube, owner = 2 * cube, 1 - turn
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        setup(dice=(d1, d2))
        move = engine.best("go role chequer" if rng.random() < 0.5 else "go")
        after = play(board, move, d1, d2)
        seen["moves"] += 1
        seen["passes"] += move == "pass"
        seen["sides"].add(turn)
        result = game_result(after)
        if result:
            return {**seen, "winner": turn, "points": cube * abs(result), "how": "borne off"}
        board, turn = swap(after), 1 - turn
    raise AssertionError("the game did not end in 500 turns")


def test_handshake_names_the_engine_and_its_options():
    e = Engine("--ply", "0")
    try:
        answer = e.ask("ubgi")
        assert answer[0].startswith("id name bgnet")
        assert any(a.startswith("id author ") for a in answer)
        assert any(a.startswith("id version ") for a in answer)
        options = [a for a in answer if a.startswith("option name ")]
        assert "option name Ply type spin default 0 min 0 max 2" in options
        assert any(o.startswith("option name Variant type combo default backgammon") for o in options)
        assert "option name EvalMode type combo default cubeful var cubeful var cubeless" in options
        assert answer[-1] == "ubgiok"
        assert e.line() == "readyok"  # the draft's end of the handshake, after wildbg's
        assert e.ask("isready") == ["readyok"]
    finally:
        assert e.close() == 0


def test_a_money_game_and_a_match_game_both_sides_every_role(engine):
    rng = np.random.default_rng(37)
    engine.silent("newsession money")
    money = play_game(engine, rng, length=0)
    engine.silent("newsession match 5")
    match = play_game(engine, rng, length=5, score=(2, 1), full_ids=True)
    for game in (money, match):
        assert game["sides"] == {0, 1}
        assert game["moves"] > 10
        assert game["points"] >= 1
    assert money["takes"] + match["takes"] >= 1  # a double was offered and taken, the cube turned
    # a Crawford game: nobody may double, so the cube role answers roll throughout
    engine.silent("newsession match 3")
    crawford = play_game(engine, rng, length=3, score=(2, 0), crawford=True)
    assert crawford["doubles"] == 0


def test_cube_roles_double_take_and_drop(engine):
    engine.silent("newsession money")
    engine.silent("newgame")
    # player on roll far ahead in a race: a double, and a drop
    race = np.zeros((2, 25), np.int8)
    race[1, :6] = [3, 3, 3, 2, 2, 2]
    race[0, 12:18] = [2, 3, 3, 3, 2, 2]
    engine.silent(f"position gnubgid {position_id(race)}")
    engine.silent("setcube 1 centred")
    answer = engine.ask("go role cube")
    assert answer[0].startswith("info role cube action ")
    assert answer[-1] == "bestmove double"
    assert engine.best("go role take") == "drop"
    assert engine.best("go role turn") == "double"  # no dice and no double offered: the cube
    # at the start, even: no double; a double would be taken
    engine.silent(f"position gnubgid {position_id(start_position())}")
    assert engine.best("go role cube") == "roll"
    assert engine.best("go role take") == "take"
    # the cube owned by the other player: no access
    engine.silent("setturn p0")
    engine.silent("setcube 2 p1")
    assert engine.ask("go role cube") == ["info role cube cube_unavailable", "bestmove roll"]
    engine.silent("setcube 1 centred")


def test_every_command_of_the_draft_and_its_engines(engine):
    start = position_id(start_position())
    for line in ("newsession money", "newsession match 7", "newsession 7", "newgame", "ubginewgame",
                 "setscore 2 4", "setscore 6 2 crawford", "setcube 2 p0", "setcube 4 p1",
                 "setcube 1 centred", "setturn p0", "setturn p1", "setoption name Ply value 0",
                 "setoption name Jacoby value false", "setoption name Variant value backgammon",
                 "setoption name EvalMode value cubeless", "setoption name EvalMode value cubeful",
                 "stop", "position startpos",
                 f"position gnubgid {start}", f"position gnubgid {start}:cIkKAAAAAAAA",
                 "position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10",
                 f"position {start}", "dice 3 1", "dice 6 6"):
        engine.silent(line)
    engine.silent("newsession money")
    engine.silent("position startpos")
    engine.silent("dice 3 1")
    for go in ("go", "go role chequer", "go role checker", "go role turn", "go depth 1",
               "go movetime 100", "go infinite", "go role chequer nodes 1000 wtime 1 btime 1"):
        info, best = engine.ask(go)
        assert info.startswith("info role chequer time ") and info.endswith(" pv 8/5 6/5"), go
        assert best == "bestmove 8/5 6/5", go
    info, best = engine.ask("go role eval")
    assert info.startswith("info role eval win 0.") and " equity " in info
    assert best == "bestmove none"
    engine.send("d")  # the debug display: the position in two spellings, no bestmove
    assert engine.line().startswith(f"info string gnubgid {start}:")
    assert engine.line().startswith("info string xgid XGID=-b----E-C---eE---c-e----B-:")
    assert engine.ask("isready") == ["readyok"]


def test_the_drafts_bare_position_line_is_answered_with_the_action(engine):
    # a move (the player on roll at the bottom, 3-1 to play)
    engine.send("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:3:0:10")
    assert engine.line() == "8/5 6/5"
    # no dice: the cube decision
    engine.send("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10")
    assert engine.line() == "roll"
    # a double offered at the start: take
    offered = MatchContext(player_on_roll=1, turn=0, double_offered=True, jacoby=True)
    engine.send(write_position(start_position(), offered, "xgid"))
    assert engine.line() == "take"
    # no legal move (on the bar against a closed board): an empty line
    closed = np.zeros((2, 25), np.int8)
    closed[0, :6], closed[0, 12] = 2, 3
    closed[1, 24], closed[1, 5], closed[1, 12] = 1, 9, 5
    engine.send(write_position(closed, MatchContext(player_on_roll=1, turn=1, dice=(6, 5)), "xgid"))
    assert engine.line() == ""
    engine.send("XGID=not-a-position")
    assert engine.line().startswith("error bad_argument invalid_position an XGID has 10 fields")
    assert engine.ask("isready") == ["readyok"]


def test_chequer_play_is_chosen_by_the_match_s_own_measure(engine):
    """A position where the score changes the move: at double match point (gammons count
    nothing) the bot plays otherwise than in money play, whichever way the score reaches the
    engine (a Match ID, an XGID, setscore, the bare line); EvalMode cubeless keeps the money
    move, and info names the figures the move was chosen by."""
    from bgnet.engine.position_id import board_from_position_id

    board, dice = board_from_position_id("4Ak+wCrgs/AgCQ"), (5, 4)
    money = MatchContext(player_on_roll=0, turn=0, dice=dice, jacoby=True)
    dmp = MatchContext(player_on_roll=0, turn=0, dice=dice, match_length=7, score=(6, 6))
    money_move, dmp_move = "22/17 13/9", "18/13 13/9"  # UBGI's notation: no hit marks, each step
    engine.silent(f"position gnubgid {write_position(board, money, 'gnubg-id')}")
    info, best = engine.ask("go role chequer")
    assert best == f"bestmove {money_move}" and " cubeful " in info and " mwc " not in info
    for fmt in ("gnubg-id", "xgid"):
        engine.silent(f"position {write_position(board, dmp, fmt)}")
        info, best = engine.ask("go role chequer")
        assert best == f"bestmove {dmp_move}", fmt
        mwc = float(info.split(" mwc ")[1].split()[0])
        emg = float(info.split(" emg ")[1].split()[0])
        assert 0.0 < mwc < 1.0 and emg == pytest.approx(2 * mwc - 1, abs=2e-4)  # DMP: EMG = 2 MWC - 1
    engine.send(write_position(board, dmp, "xgid"))
    assert engine.line() == dmp_move
    engine.silent("newsession money")
    engine.silent(f"position gnubgid {position_id(board)}")
    engine.silent("dice 5 4")
    assert engine.best("go") == money_move
    engine.silent("newsession match 7")  # a new session forgets the position
    engine.silent("setscore 6 6")
    engine.silent(f"position gnubgid {position_id(board)}")
    engine.silent("dice 5 4")
    assert engine.best("go") == dmp_move
    engine.silent("setoption name EvalMode value cubeless")
    try:
        info, best = engine.ask("go role chequer")
        assert best == f"bestmove {money_move}" and " emg " not in info and " equity " in info
        engine.send(write_position(board, dmp, "xgid"))
        assert engine.line() == money_move
    finally:
        engine.silent("setoption name EvalMode value cubeful")


@pytest.mark.parametrize("line, kind", [
    ("frobnicate", "error unknown_command frobnicate"),
    ("go role dance", "error bad_argument role"),
    ("go depth", "error bad_argument go"),
    ("go fast", "error bad_argument go"),
    ("dice 7 1", "error bad_argument dice"),
    ("dice 3", "error bad_argument dice"),
    ("dice a b", "error bad_argument dice"),
    ("position gnubgid ???", "error bad_argument invalid_position"),
    ("position xgid 4HPwATDgc/ABMA", "error bad_argument invalid_position"),
    ("position", "error bad_argument position"),
    ("position fibs board:a:b", "error unsupported_feature position_fibs"),
    ("setscore 1", "error bad_argument setscore"),
    ("setscore 9 1", "error bad_argument setscore"),
    ("setscore 1 1 crawford", "error bad_argument setscore"),
    ("setcube 3", "error bad_argument setcube"),
    ("setcube 2 centred", "error bad_argument setcube"),
    ("setcube 2 p7", "error bad_argument setcube"),
    ("setturn p2", "error bad_argument setturn"),
    ("newsession chess", "error bad_argument newsession"),
    ("setoption name Ply value 9", "error bad_argument ply"),
    ("setoption name Ply", "error bad_argument setoption"),
    ("setoption Ply 1", "error bad_argument setoption"),
    ("setoption name Threads value 4", "error unsupported_feature setoption"),
    ("setoption name Variant value nackgammon", "error unsupported_feature variant"),
    ("setoption name EvalMode value sideways", "error bad_argument evalmode"),
    ("setoption name Jacoby value maybe", "error bad_argument jacoby"),
    ("x" * 70000, "error bad_argument line"),
    ("\x00\x01\x02", "error unknown_command"),
    ("position gnubgid 4HPwATDgc/ABMA:" + "/" * 12, "error bad_argument invalid_position"),
    # one bound on a match's length everywhere (GNU Backgammon's 64), numbers in ASCII digits
    ("newsession match 65", "error bad_argument newsession a match is 1 to 64 points long (GNU "
                            "Backgammon's limit), or 0 for money play; got 65"),
    ("newsession match 99999", "error bad_argument newsession a match is 1 to 64 points long"),
    ("newsession match " + "9" * 30, "error bad_argument newsession a match is 1 to 64 points long"),
    ("newsession match \u0663", "error bad_argument newsession a match length is a whole number"),
    ("position xgid -b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:99999:10",
     "error bad_argument invalid_position XGID field 9 (match length): a match is 1 to 64 points long"),
    ("position xgid -b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:1" + "0" * 30 + ":10",
     "error bad_argument invalid_position XGID field 9"),
    ("position xgid -b----E-C---eE---c-e----B-:0:0:1:31:1" + "0" * 30 + ":0:0:0:10",
     "error bad_argument invalid_position XGID field 6"),
    ("position xgid -b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:\u0667:10",
     "error bad_argument invalid_position XGID field 9 (match length): a match length is a whole number"),
    ("position gnubgid 4HPwATDgc/ABMA:MAEA6AMAAAAE", "error bad_argument invalid_position Match ID "
                                                     "'MAEA6AMAAAAE': a match is 1 to 64 points long"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:99999:10", "error bad_argument invalid_position"),
    ("setscore 1" + "0" * 30 + " 0", "error bad_argument setscore"),
    ("setcube 1" + "0" * 30, "error bad_argument setcube"),
    ("dice \u0663 \u0661", "error bad_argument dice"),
    ("setoption name Ply value \u0661", "error bad_argument ply"),
    ("setoption name Ply value 1" + "0" * 5000, "error bad_argument ply"),
])
def test_a_bad_line_is_one_error_line_and_changes_nothing(engine, line, kind):
    engine.silent("newsession match 7")
    engine.silent("setscore 0 0")
    engine.silent("position startpos")
    engine.silent("dice 3 1")
    answer = engine.ask(line)
    assert len(answer) == 1 and answer[0].startswith(kind), answer
    assert engine.proc.poll() is None
    assert engine.best("go") == "8/5 6/5"  # the position and dice are as they were


def test_an_error_quotes_a_long_line_in_part(engine):
    answer = engine.ask("position xgid " + "x" * 60000)
    assert len(answer) == 1 and answer[0].startswith("error bad_argument invalid_position")
    assert len(answer[0]) < 450 and answer[0].endswith("... (cut)")


def test_the_longest_match_is_answered_at_once(engine):
    """A 64-point match (the bound) costs what a short one does: the match equity table is
    extended in milliseconds."""
    engine.silent("newsession match 64")
    engine.silent("setscore 0 0")
    engine.silent("position startpos")
    engine.silent("dice 3 1")
    start = time.perf_counter()
    assert engine.best("go") == "8/5 6/5"
    assert engine.ask("go role cube")[-1] == "bestmove roll"
    assert time.perf_counter() - start < 5.0


def test_a_score_in_a_money_session_is_refused_and_play_stays_as_it_was(engine):
    engine.silent("newsession money")
    engine.silent("setscore 0 0")  # no score: nothing to refuse
    engine.silent("position startpos")
    engine.silent("dice 3 1")
    money = engine.ask("go role chequer")
    answer = engine.ask("setscore 6 6")
    assert answer == ["error bad_argument setscore a money session has no score (got 6-6): "
                      "'newsession match N' starts a match first"]
    assert engine.ask("go role chequer")[-1] == money[-1] and " mwc " not in engine.ask("go")[0]
    engine.silent("newsession match 7")
    engine.silent("setscore 6 6")  # in a match the same line is taken
    engine.silent("position startpos")
    engine.silent("dice 3 1")
    assert " mwc " in engine.ask("go role chequer")[0]


def test_missing_context_and_a_finished_game(engine):
    engine.silent("newgame")
    assert engine.ask("go")[0].startswith("error missing_context position")
    engine.silent("position startpos")
    engine.silent("newgame")
    engine.silent("position startpos")
    assert engine.ask("go role chequer")[0].startswith("error missing_context dice")
    over = np.zeros((2, 25), np.int8)
    over[0, 5] = 3
    engine.silent(f"position gnubgid {position_id(over)}")
    engine.silent("dice 2 1")
    assert engine.ask("go")[0].startswith("error bad_argument position")


def test_end_of_input_and_quit_end_the_process_cleanly():
    run = subprocess.run([sys.executable, "-m", "bgnet.cli", "ubgi", "--bot", "pubeval"],
                         input="isready\nposition startpos\ndice 6 5\ngo\n", capture_output=True,
                         text=True, timeout=ANSWER_TIMEOUT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "bestmove 24/18 18/13"
    run = subprocess.run([sys.executable, "-m", "bgnet.cli", "ubgi", "--bot", "pubeval"],
                         input="quit\nisready\n", capture_output=True, text=True,
                         timeout=ANSWER_TIMEOUT)
    assert run.returncode == 0 and run.stdout == ""


def test_go_at_0_ply_answers_in_milliseconds(engine):
    """The round trip of ``dice`` + ``go`` through the pipe, after warm-up: a few milliseconds
    (benchmarks/bench_ubgi.py prints the figure); the bound here is generous for loaded machines."""
    engine.silent("setoption name Ply value 0")
    engine.silent("newsession money")
    rng = np.random.default_rng(5)
    engine.silent("position startpos")
    engine.silent("dice 4 2")
    for _ in range(5):
        engine.best("go")
    times = []
    for _ in range(60):
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        engine.send(f"dice {d1} {d2}")
        start = time.perf_counter()
        engine.best("go")
        times.append(1000 * (time.perf_counter() - start))
    median = statistics.median(times)
    print(f"go at 0-ply: median {median:.2f} ms over {len(times)} answers")
    assert median < 50
