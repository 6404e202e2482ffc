"""Rollouts: the dice streams, honest standard errors, variance reduction, bear-off exactness, the
cube in trials, workers, and the ``bgnet rollout`` command."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bgnet.analyze.rollout import (
    COMBOS,
    DiceStreams,
    RolloutSettings,
    equity_difference,
    expected_plies,
    flip_difference,
    play_trials,
    rollout_moves,
    rollout_position,
    run_trials,
    summarize,
)
from bgnet.bearoff import get_database, is_bearoff
from bgnet.bots import default_bot_path, load_bot
from bgnet.bots.search import rank_moves
from bgnet.engine.board import start_position
from bgnet.engine.sampling import sample_positions
from bgnet.formats.match_id import match_id
from bgnet.nn.probs import equity, flip

pytestmark = pytest.mark.skipif(default_bot_path() is None, reason="needs the shipped bot")


@pytest.fixture(scope="module")
def bot():
    return load_bot(str(default_bot_path()))


def contact_positions(n: int, seed: int) -> np.ndarray:
    boards, _ = sample_positions(4 * n, seed=seed, every=5)
    keep = [b for b in boards if not is_bearoff(b[None])[0]]
    return np.stack(keep[:n])


def test_cycled_first_rolls_cover_every_combination_once():
    d = DiceStreams(1296, seed=3, cycle=True)
    t = np.arange(1296)
    first = d.get(t, np.zeros(1296, np.int64))
    second = d.get(t, np.ones(1296, np.int64))
    pairs = {(tuple(a), tuple(b)) for a, b in zip(first, second)}
    assert len(pairs) == 1296
    # 36 trials: each of the 36 first rolls once
    assert sorted(map(tuple, first[:36])) == sorted(map(tuple, COMBOS))


def test_dice_depend_on_trial_and_ply_only():
    d = DiceStreams(100, seed=5, cycle=False)
    a = d.get(np.array([7, 8, 7]), np.array([70, 3, 70]))
    b = DiceStreams(100, seed=5, cycle=False).get(np.array([7]), np.array([70]))
    assert (a[0] == a[2]).all() and (a[0] == b[0]).all()
    assert ((a >= 1) & (a <= 6)).all()


def test_differences_flip_linearly():
    p, q = np.array([0.6, 0.2, 0.01, 0.1, 0.005]), np.array([0.5, 0.1, 0.0, 0.15, 0.01])
    assert np.allclose(flip_difference(p - q), flip(p) - flip(q))
    assert np.isclose(equity_difference(p - q), equity(p) - equity(q))


def test_luck_correction_with_an_exact_evaluator_leaves_no_variance(bot):
    """In bear-offs the net bot's evaluator is the exact database: the luck of every roll then
    cancels the trial's whole outcome, and each corrected trial equals the exact value."""
    db = get_database()
    boards = np.zeros((2, 2, 25), np.int8)
    boards[0, 1, [0, 2, 4]] = 2
    boards[0, 0, [1, 3, 5]] = 2
    boards[1, 1, [1, 5]] = 3
    boards[1, 0, [0, 3]] = 3
    settings = RolloutSettings(trials=36, seed=1, bearoff=False)
    out = run_trials(bot, boards, settings)
    exact = db.probabilities(boards)
    for r in range(2):
        res = summarize(out, r, None)
        assert res.equity_se < 1e-4
        assert np.allclose(res.probabilities, exact[r], atol=1e-4)
        assert out.plies[r].min() >= 2  # the games were played, not looked up


def test_bearoff_rollout_agrees_with_the_database(bot):
    """Plain rollouts (no luck correction) of exact bear-off positions land within their error of
    the database."""
    db = get_database()
    boards = np.zeros((3, 2, 25), np.int8)
    boards[0, 1, [0, 1, 2, 3]] = 1
    boards[0, 0, [4, 5]] = 2
    boards[1, 1, 5] = 3
    boards[1, 0, [0, 1, 2]] = 1
    boards[2, 1, [2, 3]] = 3
    boards[2, 0, [4, 5]] = 3
    out = run_trials(bot, boards, RolloutSettings(trials=720, seed=2, bearoff=False, luck=False))
    exact = db.probabilities(boards)
    for r in range(3):
        res = summarize(out, r, None)
        z = (res.probabilities[0] - exact[r, 0]) / res.probabilities_se[0]
        assert abs(z) < 3.5, (r, res.probabilities[0], exact[r, 0])


def test_exact_bearoff_positions_stop_at_the_database(bot):
    b = np.zeros((1, 2, 25), np.int8)
    b[0, 1, 3], b[0, 0, 2] = 2, 2
    r = rollout_position(bot, b[0], RolloutSettings(trials=36))
    assert r.results[0].mean_plies == 0
    assert np.allclose(r.results[0].probabilities, get_database().probabilities(b)[0], atol=1e-6)


@pytest.fixture(scope="module")
def seeded_rollouts(bot):
    """24 contact positions, each rolled out with two seeds (variance reduced) and once plainly."""
    roots = contact_positions(24, seed=11)
    vr = [run_trials(bot, roots, RolloutSettings(trials=36, truncate=3, seed=s)) for s in (1, 2)]
    plain = run_trials(bot, roots, RolloutSettings(trials=36, truncate=3, seed=3, cycle=False, luck=False))
    return roots, vr, plain


def test_standard_errors_are_honest(seeded_rollouts):
    """Rollouts of one position with different seeds differ by amounts consistent with their
    reported standard errors: |z| <= 2 about 95 % of the time (cycled first rolls make the
    reported errors slightly pessimistic, so at least 85 % here), and never wildly off."""
    roots, (a, b), _ = seeded_rollouts
    z = []
    for r in range(len(roots)):
        x, y = summarize(a, r, None), summarize(b, r, None)
        z.append((x.equity - y.equity) / np.hypot(x.equity_se, y.equity_se))
        z.append((x.probabilities[0] - y.probabilities[0]) / np.hypot(x.probabilities_se[0],
                                                                       y.probabilities_se[0]))
    z = np.array(z)
    assert np.isfinite(z).all()
    assert np.mean(np.abs(z) <= 2) >= 0.85
    assert np.abs(z).max() < 4.5
    assert np.mean(np.abs(z) <= 0.5) < 0.8  # errors not grossly overstated either


def test_variance_reduction_at_least_halves_the_error(seeded_rollouts):
    roots, (a, _), plain = seeded_rollouts
    ratio = [summarize(plain, r, None).equity_se / summarize(a, r, None).equity_se
             for r in range(len(roots))]
    assert np.median(ratio) >= 2.0, ratio


def test_candidate_moves_share_their_dice(bot):
    """The opening 31: 8/5 6/5 is best, and the differences, measured on shared dice, are
    tighter than the values' own errors would make them (seen without luck correction, which
    removes most of what the shared dice have in common: about 0.73 of the independent error
    here)."""
    s = RolloutSettings(trials=72, truncate=4, luck=False)
    r = rollout_moves(bot, start_position(), 3, 1, s, top=3)
    best = r.results[0]
    assert best.move == "8/5 6/5" and best.diff == 0.0 and best.diff_se == 0.0
    for other in r.results[1:]:
        assert other.diff < 0
        assert other.diff_se < 0.85 * np.hypot(best.equity_se, other.equity_se)
    named = rollout_moves(bot, start_position(), 3, 1, RolloutSettings(trials=36, truncate=2),
                          named=["24/21 24/23", "8/5 6/5"])
    assert {x.move for x in named.results} == {"8/5 6/5", "24/23 24/21"}


def test_truncation_zero_is_the_bots_own_evaluation(bot):
    b = contact_positions(1, seed=4)[0]
    r = rollout_position(bot, b, RolloutSettings(trials=36, truncate=0)).results[0]
    assert np.allclose(r.probabilities, bot.evaluate(b[None])[0], atol=1e-6)
    assert r.equity_se == 0.0


def test_cubeful_money_rollout_of_a_big_lead_cashes(bot):
    """A position the cube head doubles out at once: every trial is a dropped double, worth one
    cube, and the cubeless figures still describe the position."""
    from bgnet.analyze.rollout import CubeSetup
    from bgnet.engine.state import MatchContext

    b = np.zeros((2, 25), np.int8)
    b[1, 0] = 3   # the player bears off within two turns, whatever he rolls
    b[0, 5] = 10  # the opponent needs at least three
    r = rollout_position(bot, b, RolloutSettings(trials=36, truncate=4), CubeSetup(MatchContext()))
    res = r.results[0]
    assert res.cubeful_equity == pytest.approx(1.0)
    assert res.probabilities[0] > 0.9


@pytest.mark.slow  # spawning the processes takes most of its 30 s
def test_workers_give_the_same_result(bot, tmp_path):
    roots = contact_positions(2, seed=8)
    s = RolloutSettings(trials=12, truncate=2, seed=4)
    one = run_trials(bot, roots, s)
    two = run_trials(bot, roots, s, workers=2, spec=str(default_bot_path()))
    assert np.allclose(one.raw, two.raw, atol=1e-6) and np.allclose(one.luck, two.luck, atol=1e-6)


def test_rollout_command_writes_json(tmp_path, capsys):
    from bgnet.cli import main

    out = tmp_path / "r.json"
    assert main(["rollout", "4HPwATDgc/ABMA", "31", "--trials", "12", "--truncate", "1", "--top", "2",
                 "--quiet", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["dice"] == [3, 1] and len(data["results"]) == 2
    first = data["results"][0]
    assert set(first["probabilities"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon",
                                           "lose_backgammon"}
    assert first["move"] == "8/5 6/5" and first["trials"] == 12
    text = capsys.readouterr().out
    assert "8/5 6/5" in text
    # The shipped bot by its name, the results said to be cubeless, the rate as the bar ends it.
    assert text.startswith("rollout by bgnet-default:") and data["bot"] == "bgnet-default"
    assert "cubeless" in text.splitlines()[1] and "--cubeful" in text.splitlines()[1]
    rate = f"{data['trials_per_second']:.0f} trials/s"
    assert f"24 trials in {data['seconds']:.1f} s: {rate}" in text


def test_the_progress_bar_reports_the_mean_rate(monkeypatch):
    """tqdm without smoothing: its rate at the end is trials over elapsed time, the figure the
    result prints (a smoothed rate swings as trials end together in bunches)."""
    import tqdm

    made = []

    class Spy(tqdm.tqdm):
        def __init__(self, *a, **kw):
            made.append(kw)
            super().__init__(*a, **kw)

        def update(self, k=1):
            steps.append(k)
            return super().update(k)

    steps = []
    monkeypatch.setattr(tqdm, "tqdm", Spy)
    bot = load_bot("bgnet-default")
    run_trials(bot, contact_positions(1, seed=3), RolloutSettings(trials=4, truncate=2), progress=True)
    assert made and made[0]["smoothing"] == 0
    # The count moves by a fraction of a trial on the first ply and ends at the trials, whole.
    assert 0 < steps[0] < 4 and sum(steps) == pytest.approx(4)
    assert "{n:.0f}" in made[0]["bar_format"]


class CountingBot:
    """A bot that notes how many positions each of its move choices is asked for."""

    def __init__(self, bot):
        self.inner, self.batches = bot, []
        self.evaluator, self.ply, self.name = bot.evaluator, bot.ply, bot.name

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        self.batches.append(len(boards))
        return self.inner.choose_moves(boards, dice, contexts, ply)


def test_trials_start_in_a_window_and_progress_shows_from_the_first_ply(bot):
    """A rollout of many trials keeps at most ``window`` under way, starting one as one ends, and
    reports progress on every ply: the first report comes after one ply, not when the first game
    ends, and the reports add up to the trials. The outcomes do not depend on the window."""
    roots = contact_positions(2, seed=12)
    s = RolloutSettings(trials=40, luck=False, seed=5)
    reports = []
    counting = CountingBot(bot)
    small = play_trials(counting, roots, s, np.arange(40), on_done=reports.append, window=16)
    whole = play_trials(bot, roots, s, np.arange(40), window=10_000)
    assert np.array_equal(small.raw, whole.raw) and np.array_equal(small.plies, whole.plies)
    assert max(counting.batches) == 16 and counting.batches[0] == 16
    # The first ply credits each of the 16 trials a share of one by its expected length.
    assert reports[0] == pytest.approx(np.sum(1 / expected_plies(roots, None).repeat(8)))
    assert 0 < reports[0] < 1
    assert sum(reports) == pytest.approx(80) and len(reports) > 80


def test_expected_plies_follow_the_pips_and_the_truncation():
    start = start_position()[None]
    late = np.zeros((1, 2, 25), np.int8)
    late[0, :, 0] = 2  # two checkers each on the one-point
    assert 50 < expected_plies(start, None)[0] < 65  # self-play games from the start: about 58
    assert expected_plies(late, None)[0] == 2.0
    assert expected_plies(start, 7)[0] == 7


@pytest.mark.parametrize("argv, code, words", [
    (["4HPwATDgc/ABM"], 2, "14 characters"),
    (["4HPwATDgc/ABMA", "71"], 2, "dice"),
    (["4HPwATDgc/ABMA", "--trials", "0"], 2, "--trials"),
    (["4HPwATDgc/ABMA", "31", "--move", "8/2", "--trials", "1"], 2, ""),
    (["4HPwATDgc/ABMA", "--bot", "no/such/bot.onnx"], 3, "no such bot file"),
    (["4HPwATDgc/ABMA", "--bot", "nosuchbot"], 2, "unknown bot"),
    (["4HPwATDgc/ABMA", "--json", "/no/such/folder/r.json"], 2, "does not exist"),
    (["AAAAAAAAAAAAAA"], 2, "the game of this position is over"),
])
def test_rollout_command_refuses_bad_arguments(argv, code, words, capsys):
    from bgnet.cli import main

    assert main(["rollout", *argv, "--quiet"]) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgnet rollout: error:") and words in err and "\n" not in err


def test_a_move_that_wins_at_once_is_worth_its_result(bot):
    b = np.zeros((2, 25), np.int8)
    b[1, 0] = 2   # two on the 1-point: 21 bears both off
    b[0, 12] = 15  # the opponent has borne off none, none in my home board: a gammon
    r = rollout_moves(bot, b, 2, 1, RolloutSettings(trials=12), top=3, cube=None)
    best = r.results[0]
    assert best.equity == pytest.approx(2.0) and best.equity_se == 0.0
    assert best.probabilities == pytest.approx([1.0, 1.0, 0.0, 0.0, 0.0])


class _Recorder:
    """Wraps a bot and keeps the contexts its checker plays were chosen in (None: cubeless)."""

    def __init__(self, bot):
        self.bot, self.seen = bot, []

    def __getattr__(self, name):
        return getattr(self.bot, name)

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        self.seen.append(None if contexts is None else list(contexts))
        return self.bot.choose_moves(boards, dice, contexts, ply)


def test_a_match_rollout_plays_its_trials_by_the_match_s_own_measure(bot):
    """Every checker play of a trial in a match rollout is chosen at the score, with the cube
    as it stands in that trial and its mover on roll; a cubeless rollout chooses cubelessly."""
    from bgnet.analyze.rollout import CubeSetup
    from bgnet.engine.state import MatchContext

    ctx = MatchContext(match_length=7, score=(3, 5), player_on_roll=1, turn=1)
    spy = _Recorder(bot)
    rollout_position(spy, start_position(), RolloutSettings(trials=36, truncate=6), CubeSetup(ctx))
    assert spy.seen and all(c is not None for c in spy.seen)
    movers = {x.player_on_roll for c in spy.seen for x in c}
    assert movers == {0, 1}
    assert all(x.match_length == 7 and x.score == (3, 5) for c in spy.seen for x in c)
    cubeless = _Recorder(bot)
    rollout_position(cubeless, start_position(), RolloutSettings(trials=36, truncate=2, luck=False))
    assert cubeless.seen and all(c is None for c in cubeless.seen)


def test_match_rollout_candidates_are_picked_by_the_match_s_own_measure(bot):
    """At double match point only winning counts: the candidate picked first is the move with
    the best winning chances, whatever its gammons."""
    from bgnet.analyze.rollout import CubeSetup, candidate_moves
    from bgnet.engine.state import MatchContext

    dmp = CubeSetup(MatchContext(match_length=5, score=(4, 4)))
    differ = 0
    for board, (d1, d2) in zip(*sample_positions(60, seed=9, every=3)):
        ranked = rank_moves(bot, board, int(d1), int(d2), ply=0)
        if len(ranked) < 2:
            continue
        first = candidate_moves(bot, board, int(d1), int(d2), top=1, cube=dmp)[0][0]
        wins = {m.after.tobytes(): m.probabilities[0] for m in ranked}
        assert wins[first.tobytes()] == pytest.approx(max(wins.values()), abs=1e-6)
        differ += not np.array_equal(first, ranked[0].after)
    assert differ > 0, "double match point should change some picks from the cubeless ones"


def test_match_rollout_reports_match_winning_chances(bot):
    """At 4-away 2-away the player on roll has about a third of the match; the cubeful equity
    is the MWC in normalised terms, and the candidates' differences are cubeful."""
    from bgnet.analyze.rollout import CubeSetup
    from bgnet.cube.cubeful import MatchScore
    from bgnet.cube.met import load_met
    from bgnet.engine.state import MatchContext

    ctx = MatchContext(match_length=7, score=(3, 5), player_on_roll=0, turn=0)
    r = rollout_position(bot, start_position(), RolloutSettings(trials=36, truncate=3),
                         CubeSetup(ctx)).results[0]
    assert 0.25 < r.mwc < 0.45 and r.mwc_se > 0
    score = MatchScore(4, 2, False, load_met())
    assert r.cubeful_equity == pytest.approx(score.to_equity(r.mwc, 1))
    moves = rollout_moves(bot, start_position(), 3, 1, RolloutSettings(trials=36, truncate=2),
                          top=2, cube=CubeSetup(ctx)).results
    assert moves[1].diff == pytest.approx(moves[1].cubeful_equity - moves[0].cubeful_equity)


# ---------------------------------------------------------------------------------------------
# against GNU Backgammon's own rollouts

GNUBG_PROGRAM = "/usr/games/gnubg"


def _sgf_points(text: str) -> int:
    """Points won by the side that moved first in one game of GNU Backgammon's rollout log (SGF:
    points a..x, 'y' the bar, 'z' off; White counts its points from 'a', Black from 'x')."""
    import re

    sides = {"W": np.zeros(26, int), "B": np.zeros(26, int)}  # own point 1..24, 25 = bar

    def point(who: str, c: str) -> int:
        if c == "y":
            return 25
        if c == "z":
            return 0
        return ord(c) - 96 if who == "W" else 24 - (ord(c) - 97)

    for who in "WB":
        for group in re.findall(rf"A{who}((?:\[[a-x]\])+)", text):
            for c in re.findall(r"\[([a-x])\]", group):
                sides[who][point(who, c)] += 1
    moves = re.findall(r";([BW])\[(\d\d[a-z]*)\]", text)
    for who, mv in moves:
        me, opp = sides[who], sides["B" if who == "W" else "W"]
        for k in range(2, len(mv), 2):
            src, dst = point(who, mv[k]), point(who, mv[k + 1])
            me[src] -= 1
            if dst:
                me[dst] += 1
                if opp[25 - dst] == 1:
                    opp[25 - dst], opp[25] = 0, opp[25] + 1
    first, last = moves[0][0], moves[-1][0]
    winner, loser = sides[last], sides["B" if last == "W" else "W"]
    assert winner[1:].sum() == 0, "a logged game that did not end"
    pts = 1
    if loser[1:].sum() == 15:
        pts = 3 if loser[19:26].sum() > 0 else 2
    return pts if last == first else -pts


def gnubg_rollout(position: str, trials: int, seed: int, folder) -> np.ndarray:
    """Points per trial of GNU Backgammon's own cubeless 0-ply rollout of ``position`` (played to
    the end, no variance reduction), read back from its rollout log."""
    import subprocess

    script = "\n".join([
        "set automatic roll off", "set jacoby off", "new session", f"set rollout trials {trials}",
        "set rollout cubeful off", "set rollout varredn off", f"set rollout seed {seed}",
        "set rollout chequerplay plies 0", "set rollout later chequerplay plies 0",
        "set rollout truncation enable off", "set rollout bearofftruncation exact off",
        "set rollout bearofftruncation onesided off", "set rollout log on",
        f"set rollout logfile {folder}/trial", f"set board {position}", "rollout", ""])
    subprocess.run([GNUBG_PROGRAM, "-t", "-q"], input=script, capture_output=True, text=True,
                   timeout=600, check=True)
    files = sorted(folder.glob("trial-*.sgf"))
    assert len(files) == trials
    return np.array([_sgf_points(f.read_text()) for f in files], float)


@pytest.mark.slow
@pytest.mark.gnubg
@pytest.mark.skipif(not __import__("os").path.exists(GNUBG_PROGRAM), reason="needs the GNU Backgammon program")
@pytest.mark.parametrize("position", ["4HPwATDgc/ABMA", "sGfwATDgc/ABMA", "4DnyADLgc/ABMA"])
def test_gnubg_bot_rollout_agrees_with_gnu_backgammons_own(position, tmp_path):
    """bgnet's rollout with gnubg:0 playing and GNU Backgammon's own 0-ply rollout of the same
    position, as many trials each, agree within the two runs' combined standard errors."""
    pytest.importorskip("gnubg_nn")
    from bgnet.engine import board_from_position_id

    trials = 576
    theirs = gnubg_rollout(position, trials, seed=5, folder=tmp_path)
    ours = rollout_position(load_bot("gnubg:0"), board_from_position_id(position),
                            RolloutSettings(trials=trials, seed=5, luck=False)).results[0]
    se_theirs = theirs.std(ddof=1) / np.sqrt(trials)
    z = (ours.equity - theirs.mean()) / np.hypot(ours.equity_se, se_theirs)
    assert abs(z) < 3, (ours.equity, ours.equity_se, theirs.mean(), se_theirs)


def test_cubeless_play_chooses_trials_and_candidates_by_cubeless_equity(bot, tmp_path, capsys):
    """--cubeless-play: a match rollout's trials are played by the bot's cubeless choice (the
    cube is still played) and its candidates picked by cubeless equity, at double match point
    too, where the match's own measure picks another move."""
    from bgnet.analyze.rollout import CubeSetup, candidate_moves
    from bgnet.cli import main
    from bgnet.engine.position_id import board_from_position_id
    from bgnet.engine.state import MatchContext

    dmp = MatchContext(match_length=7, score=(6, 6), player_on_roll=1, turn=1)
    spy = _Recorder(bot)
    settings = RolloutSettings(trials=36, truncate=4, luck=False, cubeless_play=True)
    rollout_position(spy, start_position(), settings, CubeSetup(dmp))
    assert spy.seen and all(c is None for c in spy.seen)
    board = board_from_position_id("4Ak+wCrgs/AgCQ")
    pick = {plain: candidate_moves(bot, board, 5, 4, top=1, cube=CubeSetup(dmp), cubeless_play=plain)[0][2]
            for plain in (False, True)}
    assert pick == {False: "18/9", True: "22/17* 13/9"}
    out = tmp_path / "r.json"
    for extra in ([], ["--cubeless-play"]):
        assert main(["rollout", f"4Ak+wCrgs/AgCQ:{match_id(dmp.replace(dice=(5, 4)))}", "--trials", "6",
                     "--truncate", "1", "--top", "1", "--quiet", "--json", str(out), *extra]) == 0
        data = json.loads(out.read_text())
        assert data["results"][0]["move"] == pick[bool(extra)]
        assert data["settings"]["cubeless_play"] is bool(extra)
    assert "checker plays by cubeless equity" in capsys.readouterr().out
