"""Play with the cube: whole matches, money games with the cube, .mat files, ``bgnet eval`` flags."""
from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest

from bgnet.bots.simple import GreedyBot, RandomBot
from bgnet.cli.measure import eval_main
from bgnet.engine.position_id import position_id
from bgnet.errors import BadArgument
from bgnet.formats.mat import load_mat
from bgnet.measure.cube_play import can_evaluate, play_matches, play_money_cube
from bgnet.measure.match import play_games
from bgnet.measure.results import COLUMNS, mat_names
from bgnet.measure.stats import wilson_ci95

HAVE_GNUBG = importlib.util.find_spec("gnubg_nn") is not None
needs_gnubg = pytest.mark.skipif(not HAVE_GNUBG, reason="needs gnubg-nn (pip install 'bgnet[ref]')")


def _runner(after):
    """A quick deterministic policy: race forward, keep few blots (a made-up heuristic)."""
    me = after[:, 1].astype(np.int64)
    return -(me * np.arange(1, 26)).sum(axis=1) - 8.0 * (me[:, :24] == 1).sum(axis=1)


class PipBot(GreedyBot):
    """Plays like :func:`_runner` and values positions by the pip count alone: a crude but
    deterministic player that doubles when ahead in the race and drops when far behind."""

    def __init__(self, name="pips"):
        super().__init__(_runner, name)

    def evaluate(self, boards):
        b = np.asarray(boards, np.int64).reshape(-1, 2, 25)
        w = np.arange(1, 26)
        lead = (b[:, 0] * w).sum(axis=1) - (b[:, 1] * w).sum(axis=1) + 8  # 8: on roll
        p = 1.0 / (1.0 + np.exp(-lead / 12.0))
        return np.stack([p, 0.15 * p, 0.01 * p, 0.15 * (1 - p), 0.01 * (1 - p)], axis=1)


class FixedView(GreedyBot):
    """Plays like :func:`_runner`; believes the player on roll has ``probs`` in every position."""

    def __init__(self, probs, name):
        super().__init__(_runner, name)
        self.probs = np.asarray(probs, np.float64)

    def evaluate(self, boards):
        return np.tile(self.probs, (len(boards), 1))


def _actions(record, kinds=("double", "take", "drop")):
    return [a for a in record.actions if a.kind in kinds]


@pytest.fixture(scope="module")
def pip_matches():
    """Twelve 5-point matches between two pip counters, every game recorded."""
    return play_matches(PipBot("pips A"), PipBot("pips B"), 5, 12, seed=3, progress=False,
                        keep_records=True)


# ---------------------------------------------------------------------------------------------
# matches


def test_pubeval_wins_most_short_matches_against_random():
    from bgnet.bots.pubeval import PubevalBot

    r = play_matches(PubevalBot(), RandomBot(1), 3, 16, seed=1, progress=False)
    assert r.matches == 16 and r.wins >= 13
    lo, hi = r.win_rate_ci95
    assert lo < r.win_rate <= hi and lo > 0.5
    # Neither bot evaluates positions, so neither doubles: every game is played for one cube.
    assert r.cube.doubles_a == r.cube.doubles_b == 0 and r.cube.max_cube == 1
    assert r.games >= r.matches and r.matches_per_second > 0


def test_the_rules_show_in_the_records(pip_matches):
    r = pip_matches
    assert r.cube.drops_a + r.cube.drops_b > 0 and r.cube.takes_a + r.cube.takes_b > 0
    seen = {"crawford": 0, "redouble": 0, "drop": 0}
    for rec, winner in zip(r.records, r.winners):
        score = [0, 0]
        for g in rec.games:
            assert g.score == tuple(score)
            cube_acts = _actions(g)
            if g.crawford:
                seen["crawford"] += 1
                assert not any(a.kind == "double" for a in cube_acts), "a double in the Crawford game"
            owner, cube = None, 1
            for act in cube_acts:
                if act.kind == "double":
                    assert owner in (None, act.player), "doubled without access to the cube"
                    assert score[act.player] + cube < 5, "doubled a dead cube"
                    seen["redouble"] += owner is not None
                    assert act.cube == 2 * cube
                elif act.kind == "take":
                    cube, owner = 2 * cube, act.player  # the taker owns the cube
                    assert act.cube == cube
            if g.end == "drop":
                seen["drop"] += 1
                last, double = g.actions[-1], g.actions[-2]
                assert last.kind == "drop" and double.kind == "double"
                assert g.winner == double.player and g.points == cube == double.cube // 2
            else:
                assert g.points == cube * g.result
            score[g.winner] += g.points
        assert max(score) >= 5 and score.index(max(score)) == winner
    assert all(seen.values()), seen


def test_cube_statistics_add_up(pip_matches):
    r = pip_matches
    rows = {name: r.rows[:, i] for i, name in enumerate(COLUMNS)}
    c = r.cube
    assert c.doubles_a == c.takes_b + c.drops_b and c.doubles_b == c.takes_a + c.drops_a
    assert r.games == sum(len(rec.games) for rec in r.records) == len(r.rows)
    assert r.crawford_games == int(rows["crawford"].sum()) <= r.matches
    assert c.max_cube == rows["cube"].max() and c.mean_cube >= 1
    d = json.loads(r.to_json())
    assert d["cube"]["doubles_a"] == c.doubles_a and len(d["win_rate_ci95"]) == 2
    assert "records" not in d and "rows" not in d and "winners" not in d


def test_matches_are_reproducible_whatever_the_batch(pip_matches):
    again = play_matches(PipBot("pips A"), PipBot("pips B"), 5, 12, seed=3, progress=False,
                         batch=5)
    assert np.array_equal(again.rows, pip_matches.rows)
    assert np.array_equal(again.winners, pip_matches.winners)
    other = play_matches(PipBot("pips A"), PipBot("pips B"), 5, 12, seed=4, progress=False)
    assert not np.array_equal(other.rows, pip_matches.rows)


def test_the_taker_answers_from_its_own_view():
    eager = FixedView((0.9, 0.0, 0.0, 0.0, 0.0), "eager")  # always sure to win: doubles at once
    hopeful = FixedView((0.6, 0.0, 0.0, 0.0, 0.0), "hopeful")  # thinks the doubler is only 60 %
    r = play_money_cube(eager, hopeful, 2, seed=1, progress=False, keep_records=True)
    kinds = [[a.kind for a in _actions(g)] for g in r.records[0].games]
    # eager doubles; hopeful takes by its own 60 % (it would have dropped by eager's 90 %); hopeful
    # then owns the cube, and at 60 % for the side on roll it finds no redouble.
    assert all(k == ["double", "take"] for k in kinds), kinds
    # A taker that shares the doubler's view drops, whoever doubles first.
    r = play_money_cube(eager, FixedView((0.9, 0.0, 0.0, 0.0, 0.0), "agrees"), 2, seed=1,
                        progress=False)
    assert r.cube.drops_a + r.cube.drops_b == 2 and r.cube.takes_a + r.cube.takes_b == 0
    assert (np.abs(r.points) == 1).all() and r.drop_rate == 1.0


def test_bots_that_cannot_evaluate_never_double_and_always_take():
    assert not can_evaluate(RandomBot(0)) and can_evaluate(PipBot())
    eager = FixedView((0.9, 0.0, 0.0, 0.0, 0.0), "eager")
    r = play_money_cube(RandomBot(2), eager, 4, seed=2, progress=False)
    assert r.cube.doubles_a == 0 and r.cube.doubles_b == 4 and r.cube.takes_a == 4
    assert r.cube.drops_a == 0 and set(np.abs(r.points)) <= {2, 4, 6}


# ---------------------------------------------------------------------------------------------
# money games


def test_money_cube_duplicate_games_mirror_and_the_jacoby_rule_holds():
    r = play_money_cube(PipBot(), PipBot(), 16, seed=5, jacoby=True, progress=False)
    assert r.ppg == 0.0 and r.ppg_ci95 == 0.0  # the same bot on both sides of every pair
    rows = {name: r.rows[:, i] for i, name in enumerate(COLUMNS)}
    centred = rows["cube"] == 1
    assert (rows["points"][centred] == 1).all()  # Jacoby: no gammon counts with a centred cube
    assert sum(r.histogram.values()) == r.games and r.cube_play and r.jacoby


def test_cubeless_games_through_the_rules_are_the_fast_path_games():
    fast = play_games(GreedyBot(_runner, "runner"), PipBot(), 12, seed=7, progress=False)
    slow = play_money_cube(GreedyBot(_runner, "runner"), PipBot(), 12, seed=7, cube=False,
                           progress=False)
    assert np.array_equal(fast.points, slow.points) and slow.cube.max_cube == 1
    assert fast.ppg == slow.ppg and fast.ppg_ci95 == slow.ppg_ci95


def test_arguments_are_checked():
    bot = PipBot()
    with pytest.raises(ValueError, match="must be even"):
        play_money_cube(bot, bot, 3, progress=False)
    with pytest.raises(ValueError, match="Jacoby rule needs the cube"):
        play_money_cube(bot, bot, 2, jacoby=True, cube=False, progress=False)
    with pytest.raises(ValueError, match="match length"):
        play_matches(bot, bot, 0, 2, progress=False)
    with pytest.raises(ValueError, match="nothing to save"):
        play_matches(bot, bot, 1, 1, progress=False).save_mat("x.mat")


def test_wilson_interval_and_names():
    lo, hi = wilson_ci95(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35
    lo, hi = wilson_ci95(50, 100)
    assert abs((lo + hi) / 2 - 0.5) < 1e-12 and 0.09 < hi - lo < 0.2
    with pytest.raises(ValueError):
        wilson_ci95(3, 2)
    assert mat_names("gnubg:1", "pubeval") == ("gnubg-1", "pubeval")


# ---------------------------------------------------------------------------------------------
# .mat files


def _gnubg_games(gnubg, path) -> list:
    gnubg.command(f"import mat {path}")
    out = []
    for g in gnubg.match(analysis=False, boards=True, statistics=False, verbose=False)["games"]:
        info = g["info"]
        acts = [("XO".index(a["player"]), a["action"], a.get("board"), tuple(sorted(a.get("dice", ()))))
                for a in g["game"] if a["action"] in ("move", "double", "take", "drop")]
        out.append(((info["score-X"], info["score-O"]), bool(info.get("crawford")),
                    "XO".index(info["winner"]), info["points-won"], acts))
    return out


def _our_games(record) -> list:
    out = []
    for g in record.games:
        acts = [(a.player, a.kind, position_id(a.board) if a.kind in ("move", "double") else None,
                 tuple(sorted(a.dice)) if a.kind == "move" else ())
                for a in g.actions if a.kind in ("move", "double", "take", "drop")]
        out.append((g.score, g.crawford, g.winner, g.points, acts))
    return out


def _moves(record) -> list:
    """(player, dice, steps) of every move, each in one order (a file lists steps high first)."""
    return [[(p, tuple(sorted(d)), tuple(sorted(s))) for p, d, s in g.moves()] for g in record.games]


@pytest.mark.gnubg
def test_gnubg_imports_the_saved_matches_and_sessions(pip_matches, tmp_path):
    gnubg = pytest.importorskip("gnubg")
    gnubg.command("set sound enable off")
    paths = pip_matches.save_mat(tmp_path / "pips.mat")
    assert [p.name for p in paths[:2]] == ["pips-001.mat", "pips-002.mat"] and len(paths) == 12
    crawford = next(i for i, rec in enumerate(pip_matches.records)
                    if any(g.crawford for g in rec.games) and any(_actions(g) for g in rec.games))
    for i in (crawford, 0):
        rec = pip_matches.records[i]
        assert _gnubg_games(gnubg, paths[i]) == _our_games(rec)
        assert _moves(load_mat(paths[i])) == _moves(rec)
    money = play_money_cube(PipBot(), FixedView((0.7, 0.1, 0, 0.05, 0), "fixed"), 4, seed=2,
                            progress=False, keep_records=True)
    (path,) = money.save_mat(tmp_path / "money.mat")
    ours = _our_games(money.records[0])
    assert money.cube.doubles_a and money.cube.doubles_b and money.cube.max_cube == 64
    assert _gnubg_games(gnubg, path) == ours
    assert path.read_text().startswith(" 0 point match")


# ---------------------------------------------------------------------------------------------
# the command line


def test_eval_command_plays_matches(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert eval_main(["random:1", "random:2", "--match", "3", "--matches", "4", "--seed", "2",
                      "--json", str(out), "--save-mat", str(tmp_path / "m.mat"), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "4 matches to 3 points" in text and "95 % interval" in text and "saved 4 .mat" in text
    d = json.loads(out.read_text())
    assert d["matches"] == 4 and d["length"] == 3 and d["seed"] == 2
    assert {"win_rate_ci95", "cube", "matches_per_second", "games_per_match"} <= set(d)
    assert len(list(tmp_path.glob("m-*.mat"))) == 4
    assert load_mat(tmp_path / "m-001.mat").length == 3


def test_eval_command_plays_money_with_the_cube_and_saves_cubeless_games(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert eval_main(["random:1", "random:2", "--cube", "--jacoby", "--games", "4", "--json",
                      str(out), "--quiet"]) == 0
    assert "money games with the cube, Jacoby rule" in capsys.readouterr().out
    d = json.loads(out.read_text())
    assert d["cube_play"] and d["jacoby"] and d["games"] == 4 and "ppg_ci95" in d
    # Cubeless games with --save-mat: the usual cubeless summary, and one money session saved.
    out = tmp_path / "plain.json"
    assert eval_main(["random:1", "random:2", "--games", "3", "--save-mat",
                      str(tmp_path / "g.mat"), "--json", str(out), "--quiet"]) == 0
    assert "points per game" in capsys.readouterr().out
    assert json.loads(out.read_text())["games"] == 4  # rounded up to a duplicate pair
    session = load_mat(tmp_path / "g.mat")
    assert session.length == 0 and len(session.games) == 4


@pytest.mark.parametrize("argv, message", [
    (["--match", "3", "--cube"], "give one of them"),
    (["--matches", "3"], "--matches needs --match"),
    (["--jacoby"], "--jacoby applies to money games with the cube"),
    (["--match", "0"], "argument --match: a match is 1 to 64 points long; got 0"),
    (["--match", "3", "--games", "10"], "--games counts money games"),
    (["--match", "3", "--matches", "0"], "argument --matches: must be a whole number from 1"),
    (["--save-mat", "out.txt"], "ending in .mat"),
    (["--cube-ply", "0"], "--cube-ply applies to play with the cube"),
])
def test_eval_command_refuses_contradictions(argv, message):
    with pytest.raises(BadArgument, match=re.escape(message)):
        eval_main(["random", "random", *argv])


def test_cube_ply_sets_the_depth_of_searching_bots_only():
    import bgnet
    from bgnet.measure.cube_play import cube_players

    net, rnd = bgnet.load_bot("bgnet-default"), RandomBot(1)
    a, b = cube_players(net, rnd, None, None, 0)
    assert (a.cube_ply, b.cube_ply) == (0, None)
    assert [p.cube_ply for p in cube_players(net, rnd, None, None, None)] == [None, None]
    with pytest.raises(BadArgument, match="neither random:1 nor random:2 is one"):
        eval_main(["random:1", "random:2", "--match", "3", "--cube-ply", "1"])
