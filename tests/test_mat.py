""".mat match files: write, read back, and GNU Backgammon importing what we write."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bgnet.engine.game import Match, MatchRecord, play_random_game
from bgnet.engine.position_id import position_id
from bgnet.engine.sampling import apply_steps
from bgnet.errors import BadInputFile
from bgnet.formats.mat import load_mat, read_mat, save_mat, write_mat

GNUBG_PROGRAM = shutil.which("gnubg") or next(
    (p for p in ("/usr/games/gnubg", "/usr/local/games/gnubg") if Path(p).exists()), None)
SHOWN = ("move", "roll", "double", "take", "drop")  # the actions a .mat file holds


def _covers_the_rules(m: Match) -> bool:
    """Crawford and post-Crawford games, all three endings, cube actions, a gammon or more."""
    games = m.games
    kinds = {a.kind for g in games for a in g.record.actions}
    return (any(g.crawford for g in games) and not games[-1].crawford
            and {g.end for g in games} == {"bearoff", "drop", "resign"}
            and {"double", "take", "drop"} <= kinds
            and any(g.result > 1 for g in games if g.end == "bearoff"))


@pytest.fixture(scope="module")
def match() -> Match:
    """A 5-point match of random play with everything the comparisons below should see: the
    first seed from 4 on that gives it (a change in the order of legal moves cannot hide it)."""
    for seed in range(4, 200):
        m = Match(5, seed=seed, names=("Alice", "Bob van Dijk"))
        while not m.over:
            play_random_game(m.new_game(), m.rng, p_double=0.06, p_take=0.75, p_resign=0.02)
        if _covers_the_rules(m):
            return m
    raise AssertionError("no seed gave a match with Crawford games, drops, resignations and gammons")


@pytest.fixture(scope="module")
def session() -> Match:
    m = Match(0, seed=4, jacoby=True, max_games=2, names=("Carol", "Dave"))
    while not m.over:
        play_random_game(m.new_game(), m.rng, p_double=0.1, p_take=0.9)
    return m


def summary(record: MatchRecord) -> list:
    """Per game: the score, Crawford flag, result, and every shown action with the position
    before it and, for a move, its steps and the position after it."""
    out = []
    for g in record.games:
        acts = [(a.player, a.kind, position_id(a.board), tuple(sorted(a.dice)), a.steps,
                 position_id(_after(a)) if a.kind == "move" else None)
                for a in g.actions if a.kind in SHOWN]
        out.append((g.number, g.score, g.crawford, g.winner, g.points, g.end, acts))
    return out


def test_round_trip(match, session):
    for m in (match, session):
        text = write_mat(m)
        back = read_mat(text, jacoby=m.jacoby)
        assert back.length == m.length and back.names == m.names
        assert summary(back) == summary(m.record())
        assert write_mat(back) == text


def test_save_and_load(tmp_path):
    rec = read_mat(HAND)
    path = save_mat(rec, tmp_path / "m.mat")
    assert path.read_text() == write_mat(rec)
    assert summary(load_mat(path)) == summary(rec)


def test_layout(match):
    text = write_mat(match, comments=("bgnet test",))
    lines = text.splitlines()
    assert lines[0] == "; bgnet test" and lines[2] == " 5 point match"
    assert lines[4] == " Game 1" and lines[5].startswith(" Alice : 0") and lines[5].endswith("Bob van Dijk : 0")
    assert "and the match" in lines[-2] or "and the match" in lines[-1]
    numbered = [ln for ln in lines if ln[:5].strip().endswith(")")]
    assert numbered[0].startswith("  1) ")
    # Every move entry is dice then from/to steps.
    assert any("Doubles => 2" in ln for ln in lines) and any("Takes" in ln or "Drops" in ln for ln in lines)


HAND = """\
; a hand-written file in the notation other programs use

 3 point match

 Game 1
 Alice : 0                      Bob : 0
  1) 31: 8/5 6/5                 64: 24/18 13/9
  2) 62: 13/7* 8/6               43: bar/21 13/10
  3) 66: 24/18(2) 13/7(2)
      Wins 1 point

 Game 2
 Alice : 1                      Bob : 0
  1) 65:       Wins 2 points
"""


def test_hand_written_file():
    rec = read_mat(HAND)
    g1, g2 = rec.games
    alice_last = g1.actions[4]
    assert (alice_last.player, alice_last.dice) == (0, (6, 6))
    # Alice's side after her three moves: 18-point 2, 13-point 2, 7-point 3, 6-point 5, 5-point 2,
    # 8-point 1 (her 24-point is empty).
    mover_after = _after(alice_last)[1]
    assert [int(mover_after[p - 1]) for p in (24, 18, 13, 8, 7, 6, 5)] == [0, 2, 2, 1, 3, 5, 2]
    assert (g1.winner, g1.points, g1.end) == (0, 1, "resign")
    # Rolled, then the opponent resigned a gammon before the move (as GNU Backgammon writes it).
    assert (g2.winner, g2.points, g2.end, g2.score) == (0, 2, "resign", (1, 0))
    assert [(a.player, a.kind, a.dice) for a in g2.actions] == [
        (0, "roll", (6, 5)), (1, "resign", (0, 0)), (0, "accept", (0, 0))]
    assert "  1) 65:" in write_mat(rec)


def _after(action) -> np.ndarray:
    """The position after a move, ``[opponent, mover]``, hits included."""
    return apply_steps(action.board.astype(np.int8), action.steps)


@pytest.mark.parametrize("text, words", [
    ("Game 1\n", "point match"),
    (" 3 point match\n\n Game 1\n Alice 0 Bob 0\n", "score line"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/3\n", "line 5.*not legal"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5\n  2) 42: 8/4 6/4\n",
     "player 0 rolls 42, but it is player 1's turn"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 33: 8/5 6/5\n", "never a double"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5 Hello\n", "line 5"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5           Doubles => 4\n", "cube is at 1"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5\n      Wins 1 point\n\n"
     " Game 2\n A : 0   B : 0\n", "score 0-0, but the games before it make it 1-0"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5\n      Wins 2 points\n\n"
     " Game 2\n A : 2   B : 0\n  1) 31: 8/5 6/5            Doubles => 2\n", "Crawford"),
    (" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5           Beavers => 4\n", "beaver"),
])
def test_bad_files(text, words):
    with pytest.raises(ValueError, match=words):
        read_mat(text)


def _with_a_move_for_a_dance(text: str) -> str:
    """``text`` with a move written after the first roll that could not be played (``61:`` alone
    becomes ``61: 6/5``); the right column keeps its place."""
    m = re.search(r"(?m)\b([1-6][1-6]:)( {2,}|$)", text)
    assert m, "the match has no roll that could not be played"
    return text[:m.end(1)] + " 6/5" + text[m.end(1):]


def test_a_move_for_a_roll_that_could_not_be_played_is_an_error_naming_the_line(match):
    text = _with_a_move_for_a_dance(write_mat(match))
    line = next(k for k, ln in enumerate(text.splitlines(), 1) if ": 6/5" in ln)
    with pytest.raises(ValueError, match=rf"line {line}: .*6/5 is not legal: no move is possible"):
        read_mat(text)


@pytest.mark.parametrize("header, words", [
    (" 65 point match", "a match is 1 to 64 points long .*got 65"),
    (" 1000 point match", "got 1000"),
    (" " + "9" * 30 + " point match", "got a number of 30 digits"),
])
def test_a_match_longer_than_gnubg_allows_is_refused(header, words):
    text = f"{header}\n\n Game 1\n A : 0     B : 0\n  1) 31: 8/5 6/5\n"
    with pytest.raises(ValueError, match=rf"^line 1: .*{words}"):
        read_mat(text)
    assert read_mat(text.replace(header, " 64 point match")).length == 64


def test_a_byte_order_mark_is_read_past(tmp_path):
    assert summary(read_mat("\ufeff" + HAND)) == summary(read_mat(HAND))
    (tmp_path / "bom.mat").write_bytes(b"\xef\xbb\xbf" + HAND.encode())
    assert summary(load_mat(tmp_path / "bom.mat")) == summary(read_mat(HAND))


@pytest.mark.parametrize("cut, words", [
    (lambda t: t.replace(" Game 1\n", "", 1), r"line 5: 'Alice : 0 .* comes before the first 'Game N' heading"),
    (lambda t: t.replace(" Game 2\n", " Game 3\n", 1), r"line 12: 'Game 3' follows 'Game 1': a game heading is "
                                                      "missing or out of order"),
    (lambda t: t[t.index(" Game 2"):].replace(" Alice : 1", " Alice : 0").replace(" Game 2", " 3 point match\n Game 2"),
     r"line 2: the file starts at 'Game 2' with the score 0-0, which no game before it leaves"),
    (lambda t: t.replace("      Wins 1 point\n", "", 1),
     r"line 11: 'Game 2' begins, but the game before it has no end"),
])
def test_a_game_heading_missing_or_out_of_order_is_an_error_naming_the_line(cut, words):
    with pytest.raises(ValueError, match=words):
        read_mat(cut(HAND))


def test_a_file_cut_short_reads_as_far_as_it_goes_and_says_it_is_unfinished(match, session):
    text = write_mat(match)
    assert read_mat(text).unfinished() == ""
    two = text[:text.index(" Game 3\n")]  # as `awk '/ Game 3/{exit} {print}'` cuts it
    record = read_mat(two)
    assert len(record.games) == 2
    s = record.final_score()
    assert record.unfinished() == (f"it ends at {s[0]}-{s[1]} (Alice to Bob van Dijk), before either "
                                   "player reaches 5 points")
    mid_game = text[:text.index("  3) ", text.index(" Game 3\n"))]
    assert read_mat(mid_game).unfinished() == "game 3 stops before its end"
    money = write_mat(session)
    assert read_mat(money, jacoby=True).unfinished() == ""
    cut = money[:money.index("  2) ", money.index(" Game 2\n"))]
    assert read_mat(cut, jacoby=True).unfinished() == "game 2 stops before its end"


def test_an_error_quotes_a_long_line_in_part():
    line = "  1) 31: " + "8/5 " * 250_000  # a line of a megabyte
    with pytest.raises(ValueError) as e:
        read_mat(f" 3 point match\n\n Game 1\n A : 0   B : 0\n{line}\n")
    assert len(str(e.value)) < 400 and "line 5" in str(e.value)
    with pytest.raises(ValueError) as e:
        read_mat(" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) " + "x" * 1_000_000 + "\n")
    assert len(str(e.value)) < 400 and "(1000000 characters)" in str(e.value)


def test_numbers_are_ascii_digits():
    """``str.isdigit`` and ``int`` read other scripts' digits ('١' is 1): a .mat file's are 0-9."""
    with pytest.raises(ValueError, match="line 5: cannot read"):
        read_mat(" 3 point match\n\n Game 1\n A : 0   B : 0\n  1) ٣١: 8/5 6/5\n")
    with pytest.raises(ValueError, match="line 1: expected 'N point match'"):
        read_mat(" ٣ point match\n\n Game 1\n A : 0   B : 0\n  1) 31: 8/5 6/5\n")


def test_a_path_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "pipe.mat"
    os.mkfifo(fifo)
    with pytest.raises(BadInputFile, match="is a FIFO"):
        load_mat(fifo)  # returns at once: nothing ever writes to the pipe
    (tmp_path / "zero.mat").symlink_to("/dev/zero")
    with pytest.raises(BadInputFile, match="is a character device"):
        load_mat(tmp_path / "zero.mat")
    with pytest.raises(BadInputFile, match="is a folder"):
        load_mat(tmp_path)


def test_a_long_name_keeps_its_score_line_readable():
    """A name that fills the left column is still followed by a space: the line reads back."""
    m = Match(3, names=("A" * 40, "Bob"), seed=1)
    g = m.new_game()
    g.opening_roll((3, 1))
    g.play("8/5 6/5")
    assert read_mat(write_mat(m)).names == ("A" * 40, "Bob")


def test_a_score_line_without_a_name_is_refused():
    with pytest.raises(ValueError, match=r"line 4: the score line names no player 1 \(right\)"):
        read_mat(" 3 point match\n\n Game 1\n Ann : 0          : 0\n  1) 31: 8/5 6/5\n")


def test_bad_names():
    m = Match(3, names=("a:b", "c"))
    with pytest.raises(ValueError, match="name"):
        write_mat(m)


def test_only_games_from_the_start():
    m = Match(3)
    board = np.zeros((2, 25), np.int8)
    board[0, 0] = board[1, 0] = 15
    g = m.new_game(board=board, player_on_roll=0)
    g.roll((2, 1))
    g.play(g.legal_moves()[0][0])
    with pytest.raises(ValueError, match="starting position"):
        write_mat(m)


# ---------------------------------------------------------------------------------------------
# GNU Backgammon


def _gnubg_summary(gnubg) -> list:
    """The same summary from GNU Backgammon's record of the imported match ('X' is player 0)."""
    out = []
    for g in gnubg.match(analysis=False, boards=True, statistics=False, verbose=False)["games"]:
        info = g["info"]
        acts = [("XO".index(a["player"]), a["action"], a.get("board"), tuple(sorted(a.get("dice", (0, 0)))))
                for a in g["game"] if a["action"] in SHOWN]
        winner = "XO".index(info["winner"]) if info.get("winner") else None
        out.append(((info["score-X"], info["score-O"]), bool(info.get("crawford")), winner,
                    info.get("points-won", 0), bool(info.get("resigned")), acts))
    return out


def _our_summary(record: MatchRecord) -> list:
    """Our records in the shape of :func:`_gnubg_summary` (gnubg keeps no position for a take
    or a drop)."""
    out = []
    for g in record.games:
        acts = [(a.player, a.kind, position_id(a.board) if a.kind in ("move", "double") else None,
                 tuple(sorted(a.dice)))
                for a in g.actions if a.kind in SHOWN]
        out.append((g.score, g.crawford, g.winner, g.points, g.end == "resign", acts))
    return out


@pytest.mark.gnubg
def test_gnubg_imports_what_we_write(match, tmp_path):
    """GNU Backgammon reads our file to the same positions, dice, cube actions, scores,
    Crawford games and results."""
    gnubg = pytest.importorskip("gnubg")
    path = save_mat(match, tmp_path / "ours.mat")
    gnubg.command("set sound enable off")
    gnubg.command(f"import mat {path}")
    assert _gnubg_summary(gnubg) == _our_summary(match.record())
    # And its own export of that match reads back to the moves we played.
    out = tmp_path / "theirs.mat"
    gnubg.command(f"export match mat {out}")
    assert summary(load_mat(out)) == summary(match.record())


@pytest.mark.skipif(GNUBG_PROGRAM is None, reason="the GNU Backgammon program (Debian package "
                    "'gnubg') is not installed; the PyPI module test above covers the import")
def test_gnubg_program_imports_what_we_write(match, tmp_path):
    path = save_mat(match, tmp_path / "ours.mat")
    out = tmp_path / "theirs.mat"
    subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input=f"import mat {path}\nexport match mat {out}\n",
                   capture_output=True, text=True, timeout=120, check=True)
    assert summary(load_mat(out)) == summary(match.record())
