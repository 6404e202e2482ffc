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
    # Rolls are marked past GNU Backgammon's luck thresholds, not at them.
    assert [luck_mark(x) for x in (0.7, 0.6, 0.31, 0.3, 0.0, -0.3, -0.31, -0.61)] == \
        ["very lucky", "lucky", "lucky", "", "", "", "unlucky", "very unlucky"]
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
    # `bgnet eval` plays without the cube: judged by cubeless equity, as the games were played
    # (judged cubefully, a move can lose a little where the two measures rank close moves apart).
    path = _eval_mat(tmp_path, str(default_bot_path()), "random:3", 2)
    a = analyse_file(path, Judge(bot, cubeless_play=True))
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
def test_checker_plays_are_judged_by_the_measure_the_player_faced(bot):
    """The bot choosing by the match's own measure makes no checker error by its own judgement
    at the score; its cubeless choices in the same matches do cost match equity."""
    from bgnet.measure.cube_play import play_matches

    def errors(cubeless_play: bool) -> list[float]:
        played = play_matches(bot, bot, 5, 3, seed=4, progress=False, keep_records=True,
                              cubeless_play=cubeless_play)
        return [p.checker_error for r in played.records
                for p in analyse_record(r, Judge(bot)).players]

    assert errors(False) == pytest.approx([0.0] * 6, abs=1e-9)
    assert sum(errors(True)) > 0.0


@needs_bot
def test_a_cubeless_session_is_judged_by_cubeless_equity_with_cubeless_play(tmp_path, bot, capsys):
    """bgnet eval without --cube plays cubeless money games: judged by cubeless money equity
    (--cubeless-play) the bot makes no checker error; judged by the cubeful money equity of a
    centred cube (the default, the measure of a session played with the cube) it makes some."""
    from bgnet.cli import main

    path = _eval_mat(tmp_path, str(default_bot_path()), str(default_bot_path()), 4, seed=5)
    plain = analyse_file(path, Judge(bot, cubeless_play=True))
    cubeful = analyse_file(path, Judge(bot))
    assert [p.checker_error for p in plain.players] == pytest.approx([0.0, 0.0], abs=1e-9)
    assert sum(p.checker_error for p in cubeful.players) > 0.0
    moves = [d for d in plain.decisions if d.kind == "move" and not d.forced]
    assert len(moves) > 40 and all(d.played == d.best for d in moves)
    # The values are the cubeless money equities the bot chose by.
    from bgnet.engine.movegen import generate
    from bgnet.engine.notation import format_move
    from bgnet.engine.position_id import board_from_position_id
    from bgnet.nn.probs import equity

    d = moves[0]
    board = board_from_position_id(d.position_id)
    after, steps = generate(board, *d.dice)
    values = equity(bot.evaluator.afterstates(after))
    best = int(np.argmax(values))
    assert format_move(steps[best], board) == d.best
    assert d.best_equity == pytest.approx(float(values[best]), abs=1e-6)
    assert main(["analyze", path, "--cubeless-play", "--quiet", "--json", str(tmp_path / "a.json")]) == 0
    capsys.readouterr()
    with open(tmp_path / "a.json") as f:
        report = json.load(f)
    assert [round(p["checker_error"], 9) for p in report["players"]] == [0.0, 0.0]


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


def _random_match_text(length: int = 7) -> str:
    """The .mat text of a random match of at least four games."""
    from bgnet.engine.game import Match, play_random_game
    from bgnet.formats.mat import write_mat

    for seed in range(50):
        m = Match(length, seed=seed, names=("Ann", "Bob"))
        rng = np.random.default_rng(seed)
        while not m.over:
            play_random_game(m.new_game(), rng, p_double=0.05)
        if len(m.games) >= 4:
            return write_mat(m)
    raise AssertionError("no seed gave four games")


@needs_bot
def test_a_match_cut_short_is_analysed_with_a_warning_and_said_unfinished(tmp_path, capsys):
    """The file ends after two games of a 7-point match (as `awk '/ Game 3/{exit} {print}'` cuts
    it): analysed as far as it goes, a warning on standard error, and the report says the match
    is unfinished instead of counting it lost by both players."""
    from bgnet.cli import main

    text = _random_match_text()
    path = tmp_path / "two.mat"
    path.write_text(text[:text.index(" Game 3\n")])
    js, page = tmp_path / "two.json", tmp_path / "two.html"
    assert main(["analyze", str(path), "--json", str(js), "--html", str(page), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith(f"bgnet analyze: warning: {path}: the match is unfinished: it ends at ")
    assert "before either player reaches 7 points; it is analysed as far as it goes" in err
    assert f"{path}: 7 point match, unfinished: it ends at" in out
    assert re.search(r"Matches won +0 of 0 +0 of 0", out)
    assert re.search(r"Result, MWC from even \(per match\) +- \(unfinished\) +- \(unfinished\)", out)
    data = json.loads(js.read_text())
    assert data["unfinished"].startswith("it ends at ")
    assert [p["matches"] for p in data["players"]] == [0, 0]
    assert [p["luck_adjusted_result"] for p in data["players"]] == [None, None]
    assert "unfinished: it ends at" in page.read_text()
    # The whole match: no warning, and one match won.
    whole = tmp_path / "whole.mat"
    whole.write_text(text)
    assert main(["analyze", str(whole), "--json", str(js), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "unfinished" not in out
    assert sorted(p["matches_won"] for p in json.loads(js.read_text())["players"]) == [0, 1]


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_analyze_refuses_what_is_not_a_regular_file_without_waiting(tmp_path, capsys, kind):
    from bgnet.cli import main

    path = tmp_path / "m.mat"
    if kind == "fifo":
        os.mkfifo(path)  # nothing writes to it: reading it would wait forever
    elif kind == "device":
        path.symlink_to("/dev/zero")  # reading it would never end
    else:
        path.mkdir()
        (path / "inner.mat").mkdir()  # a folder holding a folder named like a match file
    assert main(["analyze", str(path), "--quiet"]) == 3
    err = capsys.readouterr().err.strip()
    words = {"fifo": "is a FIFO (a named pipe), not a match file",
             "device": "is a character device, not a match file",
             "folder": "holds no match file"}[kind]
    assert err.startswith("bgnet analyze: error:") and words in err and "\n" not in err, err


def test_analyze_refuses_a_game_heading_out_of_order_naming_the_line(tmp_path, capsys):
    from bgnet.cli import main

    text = _random_match_text()
    path = tmp_path / "gap.mat"
    path.write_text(text.replace(" Game 2\n", " Game 3\n", 1))
    line = 1 + text[:text.index(" Game 2\n")].count("\n")
    assert main(["analyze", str(path), "--quiet"]) == 3
    err = capsys.readouterr().err.strip()
    assert err == (f"bgnet analyze: error: {path}: line {line}: 'Game 3' follows 'Game 1': a game "
                   "heading is missing or out of order")


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
    0-ply analysis of a .mat file of money games without the Jacoby rule (GNU Backgammon applies
    its own setting, on by default, to an imported file)."""
    script = "\n".join(["set automatic roll off", "set jacoby off",
                        "set analysis chequerplay evaluation plies 0",
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
    """A session of gnubg 0-ply against pubeval: judged by gnubg:0, cubefully as GNU Backgammon
    judges it, gnubg's cubeless checker plays cost next to nothing and pubeval errs near its
    benchmark figure; GNU Backgammon's own analysis of the same file gives each player's
    checker-play error rate within 10 %."""
    path = _eval_mat(tmp_path, "gnubg:0", "pubeval", 20)
    a = analyse_file(path, Judge(load_bot("gnubg:0")))
    gnubg, pub = a.players
    assert gnubg.checker_rate < 2.0
    assert 20 < pub.checker_rate < 50
    if not os.path.exists(GNUBG_PROGRAM):
        pytest.skip("needs the GNU Backgammon program (Debian package gnubg)")
    ref = _gnubg_checker_rates(path)
    assert abs(pub.checker_rate - ref[1]) <= 0.05 * ref[1], (pub.checker_rate, ref)
    assert abs(gnubg.checker_rate - ref[0]) < 0.5, (gnubg.checker_rate, ref)  # both near zero


# ---------------------------------------------------------------------------------------------
# what GNU Backgammon users look for: MWC, luck, ratings, cube errors by kind, resignations,
# every move, several files at once


def _random_record(length: int, seed: int, games: int = 3, **kw):
    from bgnet.engine.game import Match, play_random_game

    m = Match(length, seed=seed, max_games=None if length else games)
    while not m.over and len(m.games) < games:
        play_random_game(m.new_game(), np.random.default_rng(seed + len(m.games)), **kw)
    return m.record()


@needs_bot
def test_cube_errors_are_broken_down_by_kind(bot):
    from bgnet.analyze.analysis import CUBE_ERRORS

    a = analyse_record(_random_record(0, 5, games=6, p_double=0.3), Judge(bot))
    wrong = [d for d in a.decisions if d.kind in ("double", "no_double", "take", "drop") and d.error > 0]
    assert wrong and all(d.error_kind in CUBE_ERRORS for d in wrong)
    for d in wrong:
        if d.kind == "take":
            assert d.error_kind == "wrong take" and d.best == "drop"
        elif d.kind == "drop":
            assert d.error_kind == "wrong pass" and d.best == "take"
        elif d.kind == "no_double":
            assert d.error_kind.startswith("missed double") and d.best == "double"
            options = dict(d.candidates)
            above = options["double, pass"] <= options["double, take"]
            assert ("above" in d.error_kind) == above
        else:
            assert d.error_kind.startswith("wrong double")
    for p in a.players:
        assert sum(v["count"] for v in p.cube_errors.values()) == \
            sum(1 for d in wrong if d.player == a.players.index(p))
        assert sum(v["error"] for v in p.cube_errors.values()) == pytest.approx(
            sum(d.error for d in wrong if d.player == a.players.index(p)))


@needs_bot
def test_match_play_is_also_told_in_match_winning_chances(bot):
    a = analyse_record(_random_record(5, 2, games=20, p_double=0.1), Judge(bot))
    moves = [d for d in a.decisions if d.kind == "move"]
    assert all(d.mwc is not None and 0.0 <= d.mwc <= 1.0 for d in a.decisions)
    assert all(d.error_mwc is not None and 0.0 <= d.error_mwc <= d.error + 1e-12 for d in a.decisions)
    assert any(d.error_mwc > 0 for d in moves)
    assert all(d.luck_points is None and (d.luck is None) == (d.luck_mwc is None) for d in moves)
    p0, p1 = a.players
    assert p0.checker_error_mwc == pytest.approx(sum(d.error_mwc for d in moves if d.player == 0 and not d.forced))
    assert p0.matches == 1 and p0.matches_won + p1.matches_won == 1
    # The result, game by game in MWC, adds up to +-50 % for a match played out from 0-0; the
    # luck-adjusted result is it less the net luck in MWC.
    assert p0.result_mwc == pytest.approx(p0.matches_won - 0.5) and p1.result_mwc == pytest.approx(-p0.result_mwc)
    assert a.luck_adjusted()[0] == pytest.approx(p0.result_mwc - (p0.luck_mwc - p1.luck_mwc))
    assert a.luck_adjusted()[0] == pytest.approx(-a.luck_adjusted()[1])


@needs_bot
def test_money_luck_is_weighed_by_the_cube_and_taken_out_of_the_result(bot):
    from bgnet.analyze.analysis import luck_rating, rating_difference

    a = analyse_record(_random_record(0, 8, games=5, p_double=0.2), Judge(bot))
    p0, p1 = a.players
    moves = [d for d in a.decisions if d.kind == "move" and d.luck is not None]
    assert all(d.luck_points == pytest.approx(d.luck * d.cube) for d in moves)
    assert p0.games == p1.games == 5
    assert p0.points_won - p0.points_lost == -(p1.points_won - p1.points_lost)
    assert a.luck_adjusted()[0] == pytest.approx(
        p0.points_won - p0.points_lost - (p0.luck_points - p1.luck_points))
    assert p0.luck_rating == luck_rating(p0.luck_rate)
    assert p0.rating_estimate == pytest.approx(rating_difference(p0.error_per_game)) and p0.rating_estimate <= 0
    assert rating_difference(0.05) > rating_difference(0.2)  # more error, lower rating


@needs_bot
def test_every_roll_has_its_luck_the_opening_and_dances_included(bot):
    """A roll that cannot be played is the unluckiest kind; left out, every player's dice looked
    lucky (+20 mEMG a roll for both sides of the same random games). Luck's expectation is 0 on
    every roll, so over many rolls of both players the rate stays near 0. Every roll counts, as
    GNU Backgammon counts them, the opening one included."""
    a = analyse_record(_random_record(0, 5, games=12), Judge(bot))
    for p, player in enumerate(a.players):
        rows = [r for g in a.games for r in g.rows if r["player"] == p and r["kind"] == "move"]
        dances = [r["luck"] for r in rows if r["text"] == "cannot move" and "luck" in r]
        moves = [d.luck for d in a.decisions if d.player == p and d.kind == "move" and d.luck is not None]
        assert dances and sum(dances) < 0
        assert player.rolls == len(moves) + len(dances) == len(rows) == player.moves + len(dances)
        assert player.luck == pytest.approx(sum(moves) + sum(dances))
        assert player.luck_points == pytest.approx(sum(d.luck_points for d in a.decisions if d.player == p
                                                       and d.luck_points is not None) + sum(dances))
    both = sum(p.luck for p in a.players) / sum(p.rolls for p in a.players)
    assert abs(1000 * both) < 10, both


def test_a_player_with_no_decisions_gets_no_rating():
    from bgnet.analyze.analysis import PlayerSummary, summary_rows

    rows = dict(summary_rows([PlayerSummary("Ann"), PlayerSummary("Bob", unforced_moves=3)], False, [0.0, 0.0]))
    assert rows["Checker-play rating"] == ["-", "Supernatural"] and rows["Overall rating"] == ["-", "Supernatural"]


@needs_bot
def test_resignations_are_judged(bot):
    """Resigning a backgammon at the start gives away far more than the game is worth; the
    opponent who accepts it is right."""
    from bgnet.engine.game import Match

    m = Match(0, seed=4, max_games=1)
    g = m.new_game()
    g.opening_roll()
    g.play(g.legal_moves()[0][0], player=g.player_on_roll)
    resigner = g.player_on_roll
    g.resign(3, player=resigner)
    g.accept_resignation(player=1 - resigner)
    a = analyse_record(m.record(), Judge(bot))
    offer = next(d for d in a.decisions if d.kind == "resign")
    answer = next(d for d in a.decisions if d.kind == "accept")
    assert offer.player == resigner and offer.mark == "blunder" and offer.best == "play on"
    assert offer.error == pytest.approx(dict(offer.candidates)["play on"] + 3.0)
    assert answer.player == 1 - resigner and answer.error == 0.0 and answer.best == "accept"
    p = a.players[resigner]
    assert p.resign_decisions == 1 and p.resign_error == pytest.approx(offer.error)
    assert p.overall_rate == 0.0 or p.unforced_moves > 0  # not in the error rates


@needs_bot
def test_every_game_is_recorded_move_by_move(bot):
    record = _random_record(0, 3, games=3, p_double=0.2)
    a = analyse_record(record, Judge(bot))
    assert [g.number for g in a.games] == [g.number for g in record.games]
    for log, game in zip(a.games, record.games):
        moves = [act for act in game.actions if act.kind == "move"]
        rows = [r for r in log.rows if r["kind"] == "move"]
        assert len(rows) == len(moves)
        assert [tuple(r["dice"]) for r in rows] == [tuple(int(x) for x in m.dice) for m in moves]
        assert log.winner == game.winner and log.points == game.points
    indexes = [r["decision"] for g in a.games for r in g.rows if r["decision"] is not None]
    assert sorted(indexes) == list(range(len(a.decisions)))


@needs_bot
def test_the_report_cards_show_the_whole_decision(tmp_path, bot):
    from bgnet.analyze.report import render_html

    a = analyse_record(_random_record(5, 6, games=20, p_double=0.15), Judge(bot))
    a.file = "m.mat"
    page = render_html(a)
    cards = page.split("<div class='err'>")[1:]
    assert cards
    for card in cards:
        assert "checkers" in card and "cube " in card and "score " in card and "(to 5)" in card
        assert "<table class='options'>" in card and "class='played'" in card
    move_cards = [c for c in cards if " rolls " in c]
    assert move_cards and all('class="die"' in c for c in move_cards)
    assert "Move by move" in page and page.count("<details>") == len(a.games)
    assert "Luck rating" in page and "Rating estimate" in page and "wrong take" in page.lower()


@needs_bot
def test_several_files_make_one_report_with_totals(tmp_path, bot):
    from bgnet.analyze.analysis import Report, format_summary
    from bgnet.analyze.inputs import expand
    from bgnet.analyze.report import render_html
    from bgnet.formats.mat import save_mat

    for k, seed in enumerate((11, 12), 1):
        from bgnet.engine.game import Match, play_random_game

        m = Match(3, seed=seed, names=("Ann", "Bob"))
        while not m.over:
            play_random_game(m.new_game(), np.random.default_rng(seed + len(m.games)), p_double=0.1)
        save_mat(m, tmp_path / f"s-{k:03d}.mat")
    files = expand([str(tmp_path / "s.mat")])
    assert [os.path.basename(f) for f in files] == ["s-001.mat", "s-002.mat"]
    assert expand([str(tmp_path)]) == files
    r = Report([analyse_file(f, Judge(bot)) for f in files])
    ann, bob = r.players
    assert (ann.name, bob.name) == ("Ann", "Bob")
    for field_ in ("unforced_moves", "checker_error", "cube_error", "luck", "games", "matches_won"):
        assert getattr(ann, field_) == pytest.approx(sum(getattr(a.players[0], field_) for a in r.analyses))
    assert ann.matches == 2 and ann.matches_won + bob.matches_won == 2
    text = format_summary(r, 3)
    assert "Totals over all files" in text and "s-001.mat" in text and "s-002.mat" in text
    page = render_html(r)
    assert "Totals over all files" in page and page.count("<section>") == 2
    data = r.to_dict(3)
    assert len(data["files"]) == 2 and data["players"][0]["games"] == ann.games


def test_analysis_inputs_that_name_nothing_are_refused(tmp_path):
    from bgnet.analyze.inputs import expand
    from bgnet.errors import BadInputFile

    with pytest.raises(BadInputFile, match="no such file.*m-001.mat"):
        expand([str(tmp_path / "m.mat")])
    with pytest.raises(BadInputFile, match="holds no match file"):
        expand([str(tmp_path)])


@needs_bot
def test_analyze_takes_the_name_eval_was_given(tmp_path, capsys):
    """``bgnet eval --matches 2 --save-mat m.mat`` writes m-001.mat and m-002.mat; ``bgnet
    analyze m.mat`` analyses both into one report with totals."""
    from bgnet.cli import main

    m = str(tmp_path / "m.mat")
    assert main(["eval", "bgnet-default", "random:2", "--match", "1", "--matches", "2", "--seed", "5",
                 "--save-mat", m, "--quiet"]) == 0
    capsys.readouterr()
    js, page = tmp_path / "r.json", tmp_path / "r.html"
    assert main(["analyze", m, "--quiet", "--json", str(js), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "m-001.mat" in out and "m-002.mat" in out and "Totals over all files" in out
    data = json.loads(js.read_text())
    assert [os.path.basename(f["file"]) for f in data["files"]] == ["m-001.mat", "m-002.mat"]
    assert data["players"][0]["matches"] == 2 and data["bot"] == "bgnet-default"
    assert "Totals over all files" in page.read_text()
    assert main(["analyze", str(tmp_path / "m-001.mat"), "--quiet"]) == 0  # one file as before
    assert "Totals" not in capsys.readouterr().out
    assert main(["analyze", str(tmp_path / "x.mat"), "--quiet"]) == 3
    assert "x-001.mat" in capsys.readouterr().err
