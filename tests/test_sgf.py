"""GNU Backgammon's ``.sgf``, checked against the program itself where it is installed.

* gnubg ``import mat`` + ``save match`` of bgnet's ``.mat`` gives a ``.sgf`` that ``bgnet analyze``
  judges exactly as it judges the ``.mat``;
* gnubg ``load match`` of bgnet's ``.sgf`` + ``export match mat`` gives bgnet's own ``.mat`` of the
  same games;

for a match with the cube and the Crawford rule, money sessions with the cube and the Jacoby rule
and without the cube, and random games with drops, resignations (taken and refused) and a
Crawford game. A malformed file is exit 3 with the line it cannot use.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgnet.engine.game import Match, play_random_game
from bgnet.formats.mat import load_mat, save_mat
from bgnet.formats.sgf import SgfError, load_sgf, read_sgf, save_sgf, write_sgf

GNUBG_PROGRAM = "/usr/games/gnubg"
needs_gnubg = pytest.mark.skipif(not os.path.exists(GNUBG_PROGRAM),
                                 reason="the GNU Backgammon program is not installed (apt-get install gnubg)")


def bgnet(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bgnet.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def gnubg(cwd: Path, *commands: str) -> str:
    """Run GNU Backgammon's text program on ``commands``, one a line, in ``cwd``."""
    run = subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input="\n".join(commands) + "\n", cwd=cwd,
                         capture_output=True, text=True, timeout=300)
    return run.stdout + run.stderr


def random_match(length: int, seed: int, games: int | None = None, jacoby: bool = False) -> Match:
    """Games of random legal actions with doubles, takes, drops and resignations (some taken,
    some refused): a match to ``length`` or a money session of ``games`` games."""
    rng = np.random.default_rng(seed)
    m = Match(length, seed=seed, jacoby=jacoby, names=("Ann", "Bob"))
    while not m.over and (games is None or len(m.games) < games):
        play_random_game(m.new_game(), rng, p_double=0.08, p_take=0.7, p_resign=0.04)
    return m


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, tuple[Path, Path, bool]]:
    """name -> (bgnet's .mat, bgnet's .sgf of the same games, whether the Jacoby rule holds)."""
    d = tmp_path_factory.mktemp("sgf")
    out = {}
    for name, args, jacoby in (
            ("match", ("pubeval", "bgnet-default", "--match", "5", "--matches", "1", "--seed", "3"), False),
            ("cube", ("pubeval", "bgnet-default", "--cube", "--jacoby", "--games", "6", "--seed", "4"), True),
            ("money", ("pubeval", "random", "--games", "4", "--seed", "4"), False)):
        run = bgnet("eval", *args, "--save-mat", f"{name}.mat", "--save-sgf", f"{name}.sgf", cwd=d)
        assert run.returncode == 0, run.stderr
        out[name] = (d / f"{name}.mat", d / f"{name}.sgf", jacoby)
    for name, match in (("random-match", random_match(7, seed=11)),
                        ("random-money", random_match(0, seed=5, games=5, jacoby=True))):
        save_mat(match, d / f"{name}.mat")
        save_sgf(match, d / f"{name}.sgf")
        out[name] = (d / f"{name}.mat", d / f"{name}.sgf", match.jacoby)
    return out


def test_the_samples_hold_what_they_are_for(samples):
    """Cube actions, drops, resignations taken and refused, a Crawford game, money and match."""
    records = {name: load_sgf(sgf) for name, (_, sgf, _) in samples.items()}
    games = [g for r in records.values() for g in r.games]
    kinds = {a.kind for g in games for a in g.actions}
    assert {"double", "take", "drop", "resign", "accept"} <= kinds
    # a refused resignation leaves no trace in either file, but its games are in the samples
    made = [random_match(7, seed=11), random_match(0, seed=5, games=5, jacoby=True)]
    assert any(a.kind == "reject" for m in made for g in m.games for a in g.record.actions)
    assert {g.end for g in games} == {"bearoff", "drop", "resign"}
    assert any(g.crawford for g in records["match"].games + records["random-match"].games)
    assert records["cube"].length == 0 and records["cube"].jacoby
    assert records["match"].length == 5


@pytest.mark.parametrize("name", ["match", "cube", "money", "random-match", "random-money"])
def test_bgnet_reads_its_sgf_as_the_mat(samples, name):
    mat, sgf, jacoby = samples[name]
    a, b = load_mat(mat, jacoby=jacoby), load_sgf(sgf)
    assert (a.length, a.names, a.jacoby) == (b.length, b.names, b.jacoby)
    assert [(g.winner, g.points, g.score, g.crawford, g.moves()) for g in a.games] == \
           [(g.winner, g.points, g.score, g.crawford, g.moves()) for g in b.games]


def mat_lines(text: str, jacoby: bool) -> list[str]:
    """A .mat file's lines as the comparison reads them: without trailing blanks and empty lines
    (GNU Backgammon pads its columns and starts with an empty line), without " and the match"
    (its exporter never writes it) and, in a Jacoby session, without the points of "Wins N
    points": its exporter writes a gammon's full value there even where the Jacoby rule made it
    count single (its own .sgf of the session says the single point; the test checks that)."""
    lines = [line.rstrip().replace(" and the match", "") for line in text.splitlines() if line.strip()]
    if jacoby:
        lines = [re.sub(r"Wins \d+ points?", "Wins", line) for line in lines]
    return lines


@needs_gnubg
@pytest.mark.parametrize("name", ["match", "cube", "money", "random-match", "random-money"])
def test_gnubg_loads_bgnets_sgf_and_exports_bgnets_mat(samples, name, tmp_path):
    mat, sgf, jacoby = samples[name]
    gnubg(tmp_path, f"load match {sgf}", "export match mat back.mat", "save match back.sgf")
    assert (tmp_path / "back.mat").exists(), f"gnubg did not load {sgf.name}"
    assert mat_lines((tmp_path / "back.mat").read_text(), jacoby) == mat_lines(mat.read_text(), jacoby)
    theirs, ours = load_sgf(tmp_path / "back.sgf"), load_sgf(sgf)
    assert [(g.winner, g.points, g.moves()) for g in theirs.games] == \
           [(g.winner, g.points, g.moves()) for g in ours.games]
    assert theirs.jacoby == ours.jacoby


@needs_gnubg
@pytest.mark.parametrize("name", ["match", "cube", "random-match"])
def test_analyze_judges_gnubgs_sgf_as_the_mat_it_came_from(samples, name, tmp_path):
    mat, _, jacoby = samples[name]
    gnubg(tmp_path, f"set jacoby {'on' if jacoby else 'off'}", f"import mat {mat}", "save match g.sgf")
    sgf = tmp_path / "g.sgf"
    assert "GNU Backgammon" in sgf.read_text()[:300]
    run_mat = bgnet("analyze", str(mat), "--json", "mat.json", *(["--jacoby"] if jacoby else []),
                    cwd=tmp_path)
    run_sgf = bgnet("analyze", str(sgf), "--json", "sgf.json", cwd=tmp_path)
    assert run_mat.returncode == 0, run_mat.stderr
    assert run_sgf.returncode == 0, run_sgf.stderr
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("mat.json", "sgf.json"))
    assert a["players"] == b["players"]
    assert a["games"] == b["games"] and a["decisions"] == b["decisions"]


def test_write_then_read_keeps_every_game(samples):
    for _, sgf, _ in samples.values():
        record = load_sgf(sgf)
        assert write_sgf(read_sgf(write_sgf(record))) == write_sgf(record)


def test_the_higher_die_is_written_first_as_in_mat_files():
    m = Match(3, seed=1)
    g = m.new_game()
    g.opening_roll((3, 1))
    g.play("8/5 6/5")
    g.roll((2, 6))
    g.play("24/18 13/11")
    assert write_sgf(m).splitlines()[2] == ";B[62agln])"
    assert read_sgf(write_sgf(m)).games[0].moves()[-1][2] == ((24, 18), (13, 11))


START = "(;FF[4]GM[6]CA[UTF-8]AP[bgnet]MI[length:3][game:0][ws:0][bs:0]PW[Ann]PB[Bob]RU[Crawford]RE[W+1]\n"


@pytest.mark.parametrize("text, line, words", [
    (START + ";W[31hefe]\n;B[64", 3, "never closed"),                    # truncated in a value
    (START + ";W[31hefe]\n;B[64aglp]\n", 1, "never closed"),             # truncated after a node
    (START + ";W[31hefe]\n;B[6x4aglp])\n", 3, "no action"),               # not a move
    (START + ";W[31hefe]\n;B[64ekei])\n", 3, "not legal"),               # a checker that is not there
    (START + ";W[31hefe]\n;W[64xrmi])\n", 3, "rolls 64"),                # the same player twice
    (START.replace("GM[6]", "GM[1]") + ";W[31hefe])\n", 1, "GM[6]"),     # not backgammon
    (START.replace("RU[Crawford]", "RU[Nackgammon]") + ";W[31hefe])\n", 1, "RU[Nackgammon]"),
    (START.replace("length:3", "length:x") + ";W[31hefe])\n", 1, "MI[length:x]"),
    ("this is no sgf file\n", 1, "expected '('"),
])
def test_a_malformed_file_is_exit_3_naming_the_line(tmp_path, text, line, words):
    with pytest.raises(SgfError, match=rf"^line {line}\b.*{re.escape(words)}"):
        read_sgf(text)
    (tmp_path / "bad.sgf").write_text(text)
    run = bgnet("analyze", "bad.sgf", "--bot", "pubeval", cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    assert f"line {line}" in run.stderr and words in run.stderr, run.stderr


def test_variations_nested_thousands_deep_are_read_without_recursion():
    """A tree of 100,000 nested variations (1,000 was a RecursionError): the main line is read by
    a stack of open trees, and the first variation of each is its continuation."""
    deep = START + ";W[31hefe]" + "(;C[a variation]" * 100_000 + ")" * 100_001 + "\n"
    record = read_sgf(deep)
    assert [a.notation for a in record.games[0].actions if a.kind == "move"] == ["8/5 6/5"]
    with pytest.raises(SgfError, match="^line 3: the game tree opened here is never closed"):
        read_sgf(START + ";W[31hefe]\n" + "(;C[x]" * 1000 + ")" * 999)
    # the second variation of a tree is read past, not played
    side = START + ";W[31hefe](;B[64aglp])(;B[21ab]))\n"
    assert len(read_sgf(side).games[0].moves()) == 2


@pytest.mark.parametrize("mi, words", [
    ("length:65", "MI[length:65]: a match is 1 to 64 points long (GNU Backgammon's limit)"),
    ("length:" + "9" * 30, "got a number of 30 digits"),
    ("length:\u0663", "written in the digits 0-9"),
    ("ws:" + "9" * 30, "expected a whole number from 0 to 32767"),
    ("ws:\u0661", "expected a whole number"),
])
def test_the_header_s_numbers_are_bounded_ascii_digits(mi, words):
    key = mi.split(":")[0]
    text = re.sub(rf"\[{key}:[0-9]+\]", f"[{mi}]", START) + ";W[31hefe])\n"
    with pytest.raises(SgfError, match=rf"^line 1: .*{re.escape(words)}"):
        read_sgf(text)


def test_a_game_missing_or_out_of_order_is_an_error_naming_the_line():
    m = random_match(5, seed=3)
    text = write_sgf(m)
    trees = text.split("(;")[1:]
    assert len(trees) >= 3
    skipped = "(;" + trees[0] + "(;" + "(;".join(trees[2:])
    line = 1 + ("(;" + trees[0]).count("\n")
    with pytest.raises(SgfError, match=rf"^line {line}: game 2: MI\[game:2\] follows MI\[game:0\]: a game is "
                                       "missing or out of order"):
        read_sgf(skipped)
    with pytest.raises(SgfError, match=r"^line 1: the file starts at MI\[game:1\] with the score 0-0"):
        read_sgf("(;" + trees[0].replace("[game:0]", "[game:1]"))


def test_a_match_cut_short_is_read_as_far_as_it_goes_and_says_so(tmp_path):
    m = random_match(5, seed=3)
    text = write_sgf(m)
    assert read_sgf(text).unfinished() == ""
    two = "(;" + "(;".join(text.split("(;")[1:3])  # the first two games
    record = read_sgf(two)
    assert len(record.games) == 2 and "before either player reaches 5 points" in record.unfinished()
    (tmp_path / "pipe.sgf").unlink(missing_ok=True)
    os.mkfifo(tmp_path / "pipe.sgf")
    with pytest.raises(ValueError, match="is a FIFO"):
        load_sgf(tmp_path / "pipe.sgf")
