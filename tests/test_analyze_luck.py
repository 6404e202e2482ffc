"""Luck in match analysis, as GNU Backgammon measures it (the value after the roll's best move
less its average, in the session's own measure; the opening roll against the opening's
average), XG's performance rating, the match graph, and agreement with the GNU Backgammon
program's own analysis of the same files."""
from __future__ import annotations

import importlib.util

import luck_reference as reference
import numpy as np
import pytest
from gnubg_program import gnubg_program

from bgnet.analyze.analysis import (
    XG_CLOSE_CUBE,
    XG_SAME_MOVE,
    Judge,
    analyse_record,
    luck_mark,
    luck_rating,
    summary_rows,
)
from bgnet.bots import default_bot_path, load_bot

needs_bot = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")


@pytest.fixture(scope="module")
def judge():
    return Judge(load_bot(str(default_bot_path())), ply=0)


def _random_record(length: int, seed: int, games: int, **kw):
    from bgnet.engine.game import Match, play_random_game

    m = Match(length, seed=seed, max_games=None if length else games)
    while not m.over and len(m.games) < games:
        play_random_game(m.new_game(), np.random.default_rng(seed + len(m.games)), **kw)
    return m.record()


def _moves(a):
    return [d for d in a.decisions if d.kind == "move"]


def test_rolls_and_luck_rates_are_marked_past_gnu_backgammons_thresholds():
    assert [luck_mark(x) for x in (0.61, 0.6, 0.31, 0.3, -0.3, -0.31, -0.6, -0.61)] == \
        ["very lucky", "lucky", "lucky", "", "", "unlucky", "unlucky", "very unlucky"]
    # GNU Backgammon rates a luck rate (EMG a roll) as it marks a roll, at a tenth of the
    # thresholds: past 30 and 60 mEMG a roll.
    assert [luck_rating(x) for x in (61.0, 60.0, 30.5, 30.0, -30.0, -30.5, -60.5)] == \
        ["very lucky dice", "lucky dice", "lucky dice", "average dice", "average dice",
         "unlucky dice", "very unlucky dice"]


@needs_bot
@pytest.mark.parametrize("length", [0, 7])
def test_a_rolls_luck_is_its_value_less_the_average_of_the_21(judge, length):
    """Money and match play: each roll after the opening, its luck recomputed from the position
    and score the decision records is the value of the roll's best move less the weighted mean
    over the 21 rolls, in the measure checker plays are judged by; a match gives it in MWC too."""
    from bgnet.analyze.rollout import ROLL_INDEX
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import ROLL_WEIGHTS
    from bgnet.formats.position import read_position

    a = analyse_record(_random_record(length, 3, games=4, p_double=0.05), judge)
    checked = 0
    for d in _moves(a):
        pos = read_position(f"{d.position_id}:{d.match_id}")
        if np.array_equal(pos.board, start_position()):
            continue
        values = judge.roll_values(pos.board, pos.context)
        assert d.luck == pytest.approx(values[ROLL_INDEX[d.dice]] - np.dot(ROLL_WEIGHTS, values), abs=1e-9)
        assert values[ROLL_INDEX[d.dice]] == pytest.approx(d.best_equity, abs=1e-6)  # the judge at 0-ply
        if length:
            assert d.luck_mwc is not None and d.luck_points is None
            assert abs(d.luck_mwc) <= abs(d.luck)  # a unit of equity is worth at most 1 MWC
        else:
            assert d.luck_points == pytest.approx(d.luck * d.cube) and d.luck_mwc is None
        checked += 1
    assert checked > 50


@needs_bot
def test_the_opening_roll_counts_against_the_openings_average(judge):
    """At an even money start both sides stand alike, so the 15 rolls the roller did not get
    (the opponent's to play) balance the 15 it could get: the opening roll's luck is the value of
    the move it allows. Every game's opening roll is counted."""
    a = analyse_record(_random_record(0, 4, games=6), judge)
    firsts = [next(d for d in _moves(a) if d.game == g.number) for g in a.games]
    assert len(firsts) == 6 and all(d.luck is not None for d in firsts)
    for d in firsts:
        assert d.luck == pytest.approx(d.best_equity, abs=1e-6)
    assert sum(p.rolls for p in a.players) == sum(
        1 for g in a.games for r in g.rows if r["kind"] == "move")


@needs_bot
def test_performance_rating_counts_the_decisions_xg_counts(judge):
    a = analyse_record(_random_record(0, 6, games=6, p_double=0.3), judge)
    counted = 0
    for d in a.decisions:
        options = dict(d.candidates)
        if d.kind == "move":
            spread = max(options.values()) - min(options.values()) if options else 0.0
            # A non-forced play whose listed moves differ is counted (the list holds the best few).
            if not d.forced and spread >= XG_SAME_MOVE:
                assert d.pr_counted
            if d.forced:
                assert not d.pr_counted
        elif d.kind in ("double", "take", "drop"):
            assert d.pr_counted
        elif d.kind == "no_double":
            doubling = min(options["double, take"], options["double, pass"])
            assert d.pr_counted == (d.error > 0 or options["no double"] - doubling <= XG_CLOSE_CUBE)
        counted += d.pr_counted
    assert counted == sum(p.pr_decisions for p in a.players)
    assert any(d.kind == "no_double" and not d.pr_counted for d in a.decisions)
    for p in a.players:
        assert p.performance_rating == pytest.approx(500 * (p.checker_error + p.cube_error) / p.pr_decisions)
    rows = dict(summary_rows(a.players, False, a.luck_adjusted()))
    pr = rows["Performance rating, XG's PR (decisions it counts)"]
    assert pr == [f"{p.performance_rating:.1f} ({p.pr_decisions})" for p in a.players]


@needs_bot
def test_the_match_graph_shows_every_game(judge, tmp_path):
    """A point before every roll and after every game: the Crawford game, which has no cube
    decision, is on the graph like the others, and the last point is the match's end."""
    from bgnet.analyze.report import graph_svg, write_html

    record = _random_record(5, 11, games=40, p_double=0.2)
    assert any(g.crawford for g in record.games)
    a = analyse_record(record, judge)
    for g in a.games:
        rolls = sum(1 for r in g.rows if r["kind"] == "move")
        assert sum(1 for _, game, _ in a.graph if game == g.number) == rolls + 1
    assert all(0.0 <= v <= 1.0 for _, _, v in a.graph)
    winner = a.games[-1].winner
    assert a.graph[-1][2] == pytest.approx(1.0 if winner == 0 else 0.0)
    svg = graph_svg(a)
    assert all(f">{g.number}</text>" in svg for g in a.games)
    write_html(a, tmp_path / "m.html")
    assert "Performance rating" in (tmp_path / "m.html").read_text()


# ---------------------------------------------------------------------------------------------
# against the GNU Backgammon program


needs_program = pytest.mark.skipif(gnubg_program() is None,
                                   reason="needs the GNU Backgammon program (Debian package gnubg)")
needs_gnubg_nn = pytest.mark.skipif(importlib.util.find_spec("gnubg_nn") is None,
                                    reason="needs the gnubg-nn reference package (gnubg:0 judges)")


@pytest.fixture(scope="module")
def reference_files(tmp_path_factory):
    """A 5-point match of bgnet's bot against gnubg (.sgf), a 3-point match the program plays
    against itself (.sgf), and money sessions with the cube (.mat) and with the Jacoby rule
    (.sgf): (path, Jacoby rule)."""
    from bgnet.cli import main

    folder = tmp_path_factory.mktemp("luck")
    files = []
    for args, name, jacoby in ((["--match", "5", "--matches", "1", "--seed", "2"], "bot5.sgf", False),
                               (["--cube", "--games", "6", "--seed", "3"], "money.mat", False),
                               (["--cube", "--jacoby", "--games", "6", "--seed", "4"], "jacoby.sgf", True)):
        flag = "--save-sgf" if name.endswith(".sgf") else "--save-mat"
        assert main(["eval", "bgnet-default", "gnubg:0", *args, flag, str(folder / name), "--quiet"]) == 0
        files.append((folder / name, jacoby))
    reference.gnubg_self_play(folder / "gnubg3.sgf", 3, 8, gnubg_program())
    files.append((folder / "gnubg3.sgf", False))
    return files


@pytest.mark.gnubg
@needs_program
@needs_gnubg_nn
def test_luck_agrees_with_gnu_backgammons_own_analysis(reference_files):
    """Each player's luck total (EMG, and MWC or points), luck rate, result and luck-adjusted
    result, judged by gnubg:0, within 5 % of the program's 0-ply analysis of the same file or
    within 0.05 EMG (points) / 2 MWC points (tests/luck_reference.py says how the rate and the
    luck-adjusted result are allowed for)."""
    judge = Judge(load_bot("gnubg:0"))
    for path, jacoby in reference_files:
        ref = reference.gnubg_luck(str(path), 0, jacoby)
        ours = reference.bgnet_luck(str(path), 0, jacoby, judge)
        assert ours.names == ref.names
        rows = reference.comparison_rows(ours, ref)
        outside = [r for r in rows if r[4] is False]
        assert not outside, "\n".join(reference.format_rows(str(path), ours, ref))
        # Luck total (two units) and rate for each player, and the result and the luck-adjusted
        # result where the program printed them (it prints none for a session that ends level).
        assert sum(r[4] is True for r in rows) >= 6
        assert ref.result is None or sum(r[0].startswith("result") for r in rows) == 2
        # The rolls marked lucky and unlucky: a roll near a threshold may fall either side.
        for mark in reference.MARKS:
            assert all(abs(x - y) <= 1 for x, y in zip(ours.marks[mark], ref.marks[mark])), (path, mark)
