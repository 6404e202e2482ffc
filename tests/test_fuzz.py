"""Hostile input as property tests: every reader of what a person sends either reads it or refuses
it with the project's error for bad input, never another exception, never a hang, and never
accepts a file with other content than it holds.

The inputs are those a hostile pass over bgnet tried: ``.mat`` and ``.sgf`` files that bgnet
itself wrote, then mutated (lines cut, deleted, doubled, swapped, characters replaced, numbers
made huge or written in other scripts' digits, the file cut short anywhere); position strings
(Position IDs, ``POSITIONID:MATCHID``, XGIDs, mutated and made up) given to the one reader, the
``moves`` verb, UBGI and the HTTP API; and sessions of UBGI lines. Each example runs under a time
limit (:func:`time_limit`), so a hang fails the test instead of stalling it.

The default runs are small (seconds); the ``slow``-marked runs draw many more examples.
"""
from __future__ import annotations

import contextlib
import re
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgnet.engine.game import Match, MatchRecord, play_random_game
from bgnet.engine.position_id import position_id
from bgnet.engine.sampling import apply_steps
from bgnet.engine.state import CENTERED, MatchContext
from bgnet.errors import MAX_MESSAGE
from bgnet.formats.mat import read_mat, write_mat
from bgnet.formats.position import PositionFormatError, read_position, write_position
from bgnet.formats.sgf import SgfError, read_sgf, write_sgf

SECONDS = 10  # the most one example may take: far above what any input here needs
FEW, MANY = 40, 1500  # examples of the default runs and of the slow ones (files)
QUICK = settings(max_examples=FEW, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=MANY, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextlib.contextmanager
def time_limit(seconds: int = SECONDS):
    """Fail (instead of waiting forever) when the block runs longer than ``seconds``."""
    def expired(signum, frame):
        raise AssertionError(f"no answer within {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------------------------------------
# the corpus: files bgnet wrote


def _random_match(length: int, seed: int, games: int | None = None) -> Match:
    rng = np.random.default_rng(seed)
    m = Match(length, seed=seed, names=("Ann", "Bob"), max_games=games)
    while not m.over:
        play_random_game(m.new_game(), rng, p_double=0.08, p_take=0.7, p_resign=0.03)
    return m


MATCHES = [_random_match(5, 1), _random_match(3, 2), _random_match(0, 3, games=3)]
MAT_FILES = [write_mat(m) for m in MATCHES]
SGF_FILES = [write_sgf(m) for m in MATCHES]

# What the mutations put in: the format's own words and marks, other scripts' digits, a byte-order
# mark, control characters, huge numbers, long runs.
NASTY = ["", "\n", " ", "  ", ":", "/", "(", ")", "[", "]", ";", "\\", "*", "-", "\u0661", "\u0663\u0661",
         "\ufeff", "\x00", "\r", "\t", "9" * 30, "1" + "0" * 400, "65", "64", "0", "-1", "32768",
         "99999", "Game 1", " Game 9", "Doubles => 2", "Doubles => 1" + "0" * 30, "Takes", "Drops",
         "Wins 1 point", "Wins 99 points", " 7 point match", " 65 point match", "61:", "61: 6/5",
         "6/5", "bar/22", "25/0", "(;", "MI[length:65]", "MI[length:" + "9" * 30 + "]", "MI[game:7]",
         "W[31hefe]", "B[double]", "W[take]", "RE[W+1]", "RE[B+99R]", "CV[1" + "0" * 30 + "]",
         "AE[a:y]AW[a]", "PL[B]", "x" * 3000, "(" * 50, ")" * 50]
SHOWN = ("move", "roll", "double", "take", "drop")  # the actions a file holds
OPS = ("truncate", "delete_line", "duplicate_line", "swap_lines", "replace", "insert", "number")


@st.composite
def mutated(draw, corpus: list[str]) -> str:
    """A file of ``corpus`` with one to three mutations."""
    text = draw(st.sampled_from(corpus))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(OPS))
        lines = text.split("\n")
        if op == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
        elif op in ("delete_line", "duplicate_line", "swap_lines"):
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if op == "delete_line":
                del lines[i]
            elif op == "duplicate_line":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif op in ("replace", "insert"):
            i = draw(st.integers(0, len(text)))
            cut = draw(st.integers(1, 12)) if op == "replace" else 0
            text = text[:i] + draw(st.sampled_from(NASTY)) + text[i + cut:]
        else:  # a number of the file made another
            numbers = list(re.finditer(r"[0-9]+", text))
            if numbers:
                m = numbers[draw(st.integers(0, len(numbers) - 1))]
                new = draw(st.sampled_from(["9" * 30, "1" + "0" * 5000, "\u0667", "65", "0", "7", "32768"]))
                text = text[:m.start()] + new + text[m.end():]
    return text


def summary(record: MatchRecord) -> list:
    """Per game: the score, the result and every action the files show (who, what, the dice as
    they write them, the position before and, for a move, after it, the cube); a resignation
    shows only in the result."""
    def after(a) -> str:
        return position_id(apply_steps(a.board.astype(np.int8), a.steps)) if a.kind == "move" else ""

    return [(g.score, g.crawford, g.winner, g.points, g.end,
             [(a.player, a.kind, tuple(sorted(a.dice, reverse=True)), position_id(a.board), after(a), a.cube)
              for a in g.actions if a.kind in SHOWN])
            for g in record.games]


def _refused_in_one_short_line(e: Exception) -> None:
    message = str(e)
    assert message and "\n" not in message and len(message) < 2 * MAX_MESSAGE, message[:500]


# ---------------------------------------------------------------------------------------------
# .mat and .sgf files


def check_mat(text: str) -> None:
    """Read or refused with a ValueError (its one-line message short); what is read holds what
    the file says: written back and read again, the same games."""
    with time_limit():
        try:
            record = read_mat(text)
        except ValueError as e:
            _refused_in_one_short_line(e)
            return
        if any(":" in n or "\r" in n for n in record.names):
            return  # a name a .mat file cannot be written with (it was read as the file has it)
        assert summary(read_mat(write_mat(record))) == summary(record)


def check_sgf(text: str) -> None:
    with time_limit():
        try:
            record = read_sgf(text)
        except SgfError as e:
            _refused_in_one_short_line(e)
            return
        assert summary(read_sgf(write_sgf(record))) == summary(record)


def check_cut_short(original: Match, text: str, read) -> None:
    """A file cut anywhere is refused, or read as the games it still holds, the last perhaps in
    part; and then, unless it is whole, it says it is unfinished (a match with no winner, a game
    without its end). A money session cut between two games is a shorter session."""
    whole = summary(original.record())
    with time_limit():
        try:
            record = read(text)
        except ValueError as e:
            _refused_in_one_short_line(e)
            return
    got = summary(record)
    assert len(got) <= len(whole)
    if got:
        assert got[:-1] == whole[:len(got) - 1]
        last, same = got[-1], whole[len(got) - 1]
        assert last[:2] == same[:2] and last[5] == same[5][:len(last[5])]
    if got != whole and (original.length or (got and got[-1][2] is None) or not got):
        assert record.unfinished(), "a file cut short was read as a whole match"


@given(mutated(MAT_FILES))
@QUICK
def test_a_mutated_mat_file_is_read_or_refused(text):
    check_mat(text)


@given(mutated(SGF_FILES))
@QUICK
def test_a_mutated_sgf_file_is_read_or_refused(text):
    check_sgf(text)


@given(st.integers(0, len(MATCHES) - 1), st.floats(0, 1))
@QUICK
def test_a_file_cut_short_is_refused_or_said_unfinished(k, where):
    mat, sgf = MAT_FILES[k], SGF_FILES[k]
    check_cut_short(MATCHES[k], mat[:int(where * len(mat))], read_mat)
    check_cut_short(MATCHES[k], sgf[:int(where * len(sgf))], read_sgf)


@pytest.mark.slow
@given(mutated(MAT_FILES))
@LONG
def test_many_mutated_mat_files(text):
    check_mat(text)


@pytest.mark.slow
@given(mutated(SGF_FILES))
@LONG
def test_many_mutated_sgf_files(text):
    check_sgf(text)


@pytest.mark.slow
@pytest.mark.parametrize("k", range(len(MATCHES)))
def test_every_cut_of_a_file_is_refused_or_said_unfinished(k):
    """Cut after every line, and inside each of a sample of lines."""
    for text, read in ((MAT_FILES[k], read_mat), (SGF_FILES[k], read_sgf)):
        ends = [m.end() for m in re.finditer("\n", text)]
        ends += list(range(0, len(text), max(1, len(text) // 150)))
        for end in sorted(set(ends)):
            check_cut_short(MATCHES[k], text[:end], read)


# ---------------------------------------------------------------------------------------------
# position strings


def _some_positions() -> list[str]:
    rng = np.random.default_rng(5)
    out = ["4HPwATDgc/ABMA", "4HPwATDgc/ABMA:cAkAAAAAAAAE",
           "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10",
           "XGID=-b----E-C---eE---c-e----B-:1:-1:-1:52:3:2:0:7:10",
           "Position ID: 4HPwATDgc/ABMA Match ID: cAkAAAAAAAAE"]
    for m in MATCHES:
        for g in m.record().games:
            for a in g.actions[::7]:
                if a.kind != "move":
                    continue
                ctx = MatchContext(cube_value=1 << int(rng.integers(0, 4)), cube_owner=CENTERED,
                                   player_on_roll=a.player, turn=a.player, dice=a.dice, match_length=m.length,
                                   score=g.score if m.length else (0, 0))
                if ctx.cube_value > 1:
                    ctx = ctx.replace(cube_owner=int(rng.integers(0, 2)))
                out += [write_position(a.board, ctx, "gnubg-id"), write_position(a.board, ctx, "xgid")]
    return out


POSITIONS = _some_positions()
ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-:=XGID \u0661\ufeff\x00"


@st.composite
def position_strings(draw) -> str:
    """A position as someone might send it: a real one mutated, made-up text in the IDs'
    alphabet, or an XGID whose fields are drawn from nasty values."""
    kind = draw(st.sampled_from(["mutated", "made up", "fields"]))
    if kind == "made up":
        return draw(st.text(alphabet=ID_CHARS, max_size=60))
    if kind == "fields":
        base = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10".split(":")
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(1, 9))
            base[i] = draw(st.sampled_from(["", "-1", "0", "1", "2", "15", "16", "D", "66", "00", "64",
                                            "65", "99999", "9" * 30, "1" + "0" * 5000, "\u0661", " 3"]))
        return ":".join(base)
    text = draw(st.sampled_from(POSITIONS))
    i = draw(st.integers(0, len(text)))
    return text[:i] + draw(st.sampled_from(["", "A", "/", "+", ":", "9" * 20, "\u0661", "-"])) + \
        text[i + draw(st.integers(0, 3)):]


def check_position(text: str) -> None:
    with time_limit():
        try:
            pos = read_position(text)
        except PositionFormatError as e:
            _refused_in_one_short_line(e)
            return
    again = read_position(write_position(pos.board, pos.context, pos.written))
    assert np.array_equal(again.board, pos.board) and again.context == pos.context


@given(position_strings())
@settings(max_examples=300, deadline=None)
def test_a_position_string_is_read_or_refused(text):
    check_position(text)


@pytest.mark.slow
@given(position_strings())
@settings(max_examples=5000, deadline=None)
def test_many_position_strings(text):
    check_position(text)


@given(position_strings(), st.sampled_from(["31", "66", "71", "\u0663\u0661", ""]))
@settings(max_examples=FEW, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_moves_verb_answers_a_position_or_exit_2(capsys, text, dice):
    from bgnet import cli

    with time_limit():
        code = cli.main(["moves", text, *([dice] if dice else [])])
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("bgnet moves: error: ") and err.count("\n") == 1 and len(err) < 600, err


# ---------------------------------------------------------------------------------------------
# UBGI


@pytest.fixture(scope="module")
def ubgi():
    from bgnet.bots import load_bot
    from bgnet.play.ubgi import UbgiEngine

    return UbgiEngine("bgnet-default", lambda spec: load_bot(spec))


NUMBERS = ["0", "1", "2", "3", "6", "7", "64", "65", "99999", "32768", "-1", "9" * 30, "1" + "0" * 5000,
           "\u0661", "\u0663\u0661", "1.5", "x"]
WORDS = ["ubgi", "isready", "newgame", "newsession", "newsession match", "newsession money", "setscore",
         "setcube", "setturn", "position", "position xgid", "position gnubgid", "position startpos", "dice",
         "go", "go role chequer", "go role cube", "go role take", "go role turn", "go role eval", "go depth",
         "setoption name Ply value", "setoption name Jacoby value", "setoption name EvalMode value", "d",
         "stop", "XGID=", "board:", "crawford", "p0", "p1", "centred", "cubeless", "true"]


@st.composite
def ubgi_lines(draw) -> list[str]:
    """A session: lines of the protocol's words, numbers (valid, huge, in other scripts) and
    positions (real and mutated)."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        parts = [draw(st.sampled_from(WORDS))]
        for _ in range(draw(st.integers(0, 3))):
            parts.append(draw(st.one_of(st.sampled_from(NUMBERS), st.sampled_from(WORDS),
                                        position_strings())))
        lines.append(" ".join(parts))
    return lines


def check_ubgi(engine, lines: list[str]) -> None:
    engine.handle("newsession money")
    engine.handle("setoption name Ply value 0")
    for line in lines:
        with time_limit():
            answer = engine.handle(line)
        assert isinstance(answer, list) and all(isinstance(a, str) for a in answer)
        for a in answer:
            assert not a.startswith("error internal"), (line[:200], a)
            assert a != "sorry" and len(a) < 2 * MAX_MESSAGE, a[:500]


@given(ubgi_lines())
@settings(max_examples=FEW, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_ubgi_answers_every_line_without_an_internal_error(ubgi, lines):
    check_ubgi(ubgi, lines)


@pytest.mark.slow
@given(ubgi_lines())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
def test_many_ubgi_sessions(ubgi, lines):
    check_ubgi(ubgi, lines)


# ---------------------------------------------------------------------------------------------
# the HTTP API


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from bgnet.play.web.app import create_app

    with TestClient(create_app(seed=3)) as c:
        yield c


@given(position_strings(), st.sampled_from(["31", "66", "0", "\u0663\u0661"]),
       st.sampled_from(["/api/v1/moves", "/api/v1/evaluate", "/api/v1/cube"]),
       st.sampled_from(["position_id", "xgid"]))
@settings(max_examples=FEW, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_api_answers_a_position_or_a_400(client, text, dice, path, name):
    params = {name: text}
    if path == "/api/v1/moves":
        params["dice"] = dice
    with time_limit():
        resp = client.get(path, params=params)
    assert resp.status_code in (200, 400), (path, params, resp.text[:300])
    if resp.status_code == 400:
        assert len(resp.json()["message"]) <= MAX_MESSAGE + 20


def test_the_corpus_holds_what_the_mutations_are_for():
    """The files mutated above hold whole matches with cube actions and a roll that could not be
    played (so that a move given for it is tried), and a money session."""
    kinds = {a.kind for m in MATCHES for g in m.record().games for a in g.actions}
    assert {"move", "double"} <= kinds and MATCHES[2].length == 0
    assert all(m.record().unfinished() == "" for m in MATCHES)
    assert any(a.kind == "move" and not a.steps for m in MATCHES for g in m.record().games for a in g.actions)
