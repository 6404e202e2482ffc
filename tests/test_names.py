"""Players' names: one rule (bgnet.formats.names) where a name enters and where files are written."""
from __future__ import annotations

import pytest

from bgnet.engine.game import Match
from bgnet.formats.mat import write_mat
from bgnet.formats.names import MAX_NAME, fit_player_name, name_problem, player_name
from bgnet.formats.sgf import write_sgf


@pytest.mark.parametrize("name", ["You", "Ann Lee", "李小龍", "O'Neil [B]", "x" * MAX_NAME, "émile ☺"])
def test_names_that_keep_the_rule(name):
    assert name_problem(name) is None and player_name(name) == name


@pytest.mark.parametrize("name, words", [
    ("A\rB", "control character (U+000D) at position 2"),
    ("A\x00", "control character (U+0000)"),
    ("A\u2028B", "unprintable character (U+2028)"),
    ("\u200bA", "unprintable character (U+200B)"),
    ("a:b", "holds ':'"),
    ("", "is empty"),
    (" \u0020 ", "is empty"),
    ("x" * (MAX_NAME + 1), f"{MAX_NAME + 1} characters long"),
    (7, "is not text"),
])
def test_names_that_break_it_say_why(name, words):
    assert words in name_problem(name)
    with pytest.raises(ValueError, match="a player's name is 1 to 40 printable characters"):
        player_name(name)


def test_spaces_around_and_runs_inside_are_dropped():
    assert player_name("  Ann    Lee  ") == "Ann Lee"


@pytest.mark.parametrize("text, fitted", [
    ("gnubg: 2-ply", "gnubg- 2-ply"), ("a\r\nb", "a b"), ("\x07", "bot"),
    ("runs/" + "x" * 60 + "/latest.pt", "runs/" + "x" * 35),
])
def test_names_bgnet_makes_are_fitted_to_the_rule(text, fitted):
    assert fit_player_name(text) == fitted and name_problem(fitted) is None


@pytest.mark.parametrize("write", [write_mat, write_sgf])
def test_the_writers_refuse_a_name_that_breaks_it(write):
    m = Match(3, names=("Ann\rLee", "bot"), seed=1)
    m.new_game().opening_roll()
    with pytest.raises(ValueError, match=r"U\+000D"):
        write(m)


def test_cli_name_flags_refuse_it(capsys):
    from bgnet import cli

    for argv in (["play", "--name", "A\rB"], ["export", "x.pt", "--name", "x" * 41]):
        code = cli.main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and "1 to 40 printable characters" in err, err


def test_a_table_refuses_it_and_long_bot_names_are_fitted():
    from bgnet.bots.simple import RandomBot
    from bgnet.errors import BadArgument
    from bgnet.measure.results import mat_names
    from bgnet.play.advisor import Advisor
    from bgnet.play.table import Table

    with pytest.raises(BadArgument, match="U\\+0009"):
        Table(Advisor(RandomBot(1), judge=None), name="A\tB")
    bot = RandomBot(1)
    bot.name = "checkpoints/" + "long-run-name-" * 5 + ".pt"
    table = Table(Advisor(bot, judge=None), seed=1)
    assert len(table.bot_name) == MAX_NAME and name_problem(table.bot_name) is None
    a, b = mat_names("x" * 50, "x" * 50)
    assert a != b and name_problem(a) is None and name_problem(b) is None


def test_names_of_the_longest_length_read_back_from_both_files():
    """A 40-character name used to run into the right column of the .mat score line."""
    from bgnet.formats.mat import read_mat
    from bgnet.formats.sgf import read_sgf

    names = ("x" * MAX_NAME, "2 y" + "z" * (MAX_NAME - 3))
    m = Match(3, names=names, seed=1)
    g = m.new_game()
    g.opening_roll((3, 1))
    g.play("8/5 6/5")
    assert read_mat(write_mat(m)).names == read_sgf(write_sgf(m)).names == names
