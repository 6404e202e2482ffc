"""Match analysis: marks and ratings, a bot judging its own plays, cube decisions, the HTML page,
the command's errors, and agreement with GNU Backgammon's own analysis."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess

import numpy as np
import pytest

from bgnet.analyze.analysis import (
    Judge,
    analyse_file,
    analyse_record,
    luck_mark,
    mark,
    rating,
)
from bgnet.bots import default_bot_path, load_bot

GNUBG_PROGRAM = "/usr/games/gnubg"
needs_bot = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")
needs_gnubg_nn = pytest.mark.skipif(importlib.util.find_spec("gnubg_nn") is None,
                                    reason="needs the gnubg-nn reference package")


def test_marks_and_ratings_follow_gnu_backgammons_scale():
    assert [mark(e) for e in (0.0, 0.039, 0.04, 0.08, 0.159, 0.16)] == \
        ["", "", "doubtful", "error", "error", "blunder"]
    assert [luck_mark(x) for x in (0.7, 0.3, 0.0, -0.3, -0.61)] == \
        ["very lucky", "lucky", "", "unlucky", "very unlucky"]
    # Figures GNU Backgammon 1.07 printed with these ratings.
    assert rating(0.6) == "Supernatural" and rating(18.7) == "Casual player"
    assert rating(29.1) == "Beginner" and rating(41.0) == "Awful!"


def _eval_mat(tmp_path, a: str, b: str, games: int, seed: int = 0) -> str:
    from bgnet.cli import main

    path = str(tmp_path / "games.mat")
    assert main(["eval", a, b, "--games", str(games), "--seed", str(seed), "--save-mat", path,
                 "--quiet"]) == 0
    return path


@pytest.fixture(scope="module")
def bot():
    return load_bot(str(default_bot_path()))


@needs_bot
def test_a_bot_makes_no_checker_error_by_its_own_judgement(tmp_path, bot):
    path = _eval_mat(tmp_path, str(default_bot_path()), "random:3", 2)
    a = analyse_file(path, Judge(bot))
    me, rnd = a.players
    assert me.unforced_moves > 10 and me.checker_error == pytest.approx(0.0, abs=1e-9)
    assert rnd.checker_rate > 50  # random moves are awful
    moves = [d for d in a.decisions if d.kind == "move"]
    assert all(d.error >= 0 for d in a.decisions)
    assert all(d.played_equity <= d.best_equity + 1e-9 for d in moves)
    assert all(d.luck is not None for d in moves if d.number > 0)
    assert all(d.error == 0 and not d.mark for d in moves if d.forced)


@needs_bot
def test_cube_actions_are_judged(bot):
    """A money game with a double and a take, then one with a double and a drop: each answer
    and each double is one decision of the right player."""
    from bgnet.engine.game import Match, play_random_game

    m = Match(0, seed=5, max_games=3)
    for _ in range(3):
        play_random_game(m.new_game(), np.random.default_rng(7 + len(m.games)), p_double=0.2)
    record = m.record()
    a = analyse_record(record, Judge(bot))
    acts = [(act.kind, act.player) for g in record.games for act in g.actions
            if act.kind in ("double", "take", "drop")]
    judged = [(d.kind, d.player) for d in a.decisions if d.kind in ("double", "take", "drop")]
    assert acts and judged == acts
    for d in a.decisions:
        if d.kind in ("take", "drop"):
            assert d.best in ("take", "drop") and d.error >= 0
            assert (d.error > 0) == (d.best != d.kind)


@needs_bot
def test_match_play_is_judged_in_match_terms(tmp_path, bot):
    from bgnet.engine.game import Match, play_random_game
    from bgnet.formats.mat import save_mat

    m = Match(5, seed=2)
    while not m.over:
        play_random_game(m.new_game(), np.random.default_rng(len(m.games)), p_double=0.1)
    path = tmp_path / "m.mat"
    save_mat(m, path)
    a = analyse_file(path, Judge(bot))
    assert a.match_length == 5 and a.graph
    assert all(0.0 <= v <= 1.0 for _, _, v in a.graph)  # match winning chances
    from bgnet.formats.match_id import match_context_from_id

    ctxs = [match_context_from_id(d.match_id) for d in a.decisions]
    assert all(c.match_length == 5 and max(c.score) < 5 for c in ctxs)
    assert {d.player for d in a.decisions} == {0, 1}


@needs_bot
def test_html_report_is_one_self_contained_page(tmp_path):
    from bgnet.cli import main

    path = _eval_mat(tmp_path, str(default_bot_path()), "random:1", 2)
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    assert main(["analyze", path, "--quiet", "--html", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 2
    assert "<script" not in page and not re.search(r'(src|href)="(http|file|/)', page)
    assert "Checker-play error rate" in page and "blunder" in page
    data = json.loads(js.read_text())
    from bgnet.formats.mat import load_mat

    assert [p["name"] for p in data["players"]] == list(load_mat(path).names)
    assert data["biggest_errors"] and data["biggest_errors"][0]["error"] >= data["biggest_errors"][-1]["error"]
    for key in ("checker_rate", "cube_rate", "overall_rate", "luck", "overall_rating", "unforced_moves"):
        assert key in data["players"][0]


@pytest.mark.parametrize("text, code, words", [
    (None, 3, "no such file"),
    (" 0 point match\n\n Game 1\n A : 0     B : 0\n  1) 31: 8/5 6/5   zz\n", 3, "line 5"),
    (" 0 point match\n\n Game 1\n A : 0     B : 0\n  1) 31: 8/4 6/5\n", 3, "line 5"),
    ("hello\n", 3, "line 1"),
])
def test_analyze_refuses_unreadable_files(tmp_path, capsys, text, code, words):
    from bgnet.cli import main

    path = tmp_path / "x.mat"
    if text is not None:
        path.write_text(text)
    assert main(["analyze", str(path), "--quiet"]) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgnet analyze: error:") and words in err and "\n" not in err


def test_analyze_refuses_a_judge_that_cannot_evaluate(tmp_path, capsys):
    from bgnet.cli import main

    path = tmp_path / "x.mat"
    path.write_text(" 0 point match\n\n Game 1\n A : 0     B : 0\n  1) 31: 8/5 6/5\n")
    if importlib.util.find_spec("gnubg_nn") is not None:
        assert main(["analyze", str(path), "--bot", "pubeval", "--quiet"]) == 2
        assert "cannot judge" in capsys.readouterr().err
    assert main(["analyze", str(path), "--bot", "random", "--ply", "1", "--quiet"]) == 2
    assert main(["analyze", str(path), "--html", str(tmp_path / "no" / "r.html"), "--quiet"]) == 2


# ---------------------------------------------------------------------------------------------
# against GNU Backgammon


def _gnubg_checker_rates(path: str) -> list[float]:
    """Each player's checker-play error rate (mEMG per unforced move) by GNU Backgammon's own
    0-ply analysis of a .mat file."""
    script = "\n".join(["set automatic roll off", "set analysis chequerplay evaluation plies 0",
                        "set analysis cubedecision evaluation plies 0",
                        f"import mat {path}", "analyse match", "show statistics match", ""])
    out = subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input=script, capture_output=True, text=True,
                         timeout=600, check=True).stdout
    chequer = out.split("Chequerplay statistics", 1)[1].split("Luck statistics", 1)[0]
    line = next(x for x in chequer.splitlines() if x.startswith("Error rate mEMG"))
    nums = re.findall(r"-?\d+\.\d+", line)
    return [abs(float(nums[0])), abs(float(nums[2]))]


@pytest.mark.slow
@pytest.mark.gnubg
@needs_gnubg_nn
def test_gnubg_judged_by_itself_and_by_gnu_backgammon(tmp_path):
    """A session of gnubg 0-ply against pubeval: judged by gnubg:0, gnubg makes no checker error
    and pubeval errs near its benchmark figure; GNU Backgammon's own analysis of the same file
    gives each player's checker-play error rate within 10 %."""
    path = _eval_mat(tmp_path, "gnubg:0", "pubeval", 20)
    a = analyse_file(path, Judge(load_bot("gnubg:0")))
    gnubg, pub = a.players
    assert gnubg.checker_error == 0.0
    assert 20 < pub.checker_rate < 50
    if not os.path.exists(GNUBG_PROGRAM):
        pytest.skip("needs the GNU Backgammon program (Debian package gnubg)")
    ref = _gnubg_checker_rates(path)
    assert abs(pub.checker_rate - ref[1]) <= 0.10 * ref[1], (pub.checker_rate, ref)
    assert ref[0] < 2.0  # gnubg 0-ply judged by itself, cubefully: near zero too
