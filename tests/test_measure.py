"""Head-to-head matches: duplicate dice, statistics, JSON output and the ``bgnet eval`` command."""
from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest

from bgnet.bots.base import Bot
from bgnet.bots.simple import GreedyBot, RandomBot
from bgnet.cli import main as bgnet_main
from bgnet.cli.measure import eval_main
from bgnet.errors import BadArgument, BadInputFile
from bgnet.measure.match import DiceSequences, MatchResult, play_games, seating
from bgnet.measure.stats import bradley_terry, elo_from_score, mean_ci95, paired_mean_ci95, score_from_elo

HAVE_GNUBG = importlib.util.find_spec("gnubg_nn") is not None


def _runner(after):
    """A deterministic, quick policy: race forward, keep few blots (a made-up heuristic)."""
    me = after[:, 1].astype(np.int64)
    pips = (me * np.arange(1, 26)).sum(axis=1)
    blots = (me[:, :24] == 1).sum(axis=1)
    return -pips - 8.0 * blots


class Recorder(Bot):
    """Wraps a bot and remembers every (position, roll) it was asked to play."""

    def __init__(self, bot: Bot):
        self.bot, self.name, self.seen = bot, bot.name, []

    def choose_moves(self, boards, dice, contexts=None, ply=None):
        self.seen += [(b.tobytes(), tuple(sorted(d.tolist()))) for b, d in zip(boards, dice)]
        return self.bot.choose_moves(boards, dice, contexts, ply)


def test_dice_sequences_are_reproducible_and_openings_never_tie():
    a, b = DiceSequences(500, seed=3), DiceSequences(500, seed=3)
    seq, turn = np.arange(500), np.full(500, 150)
    far = a.get(seq, turn)  # grows a's table past several blocks first
    assert np.array_equal(a.opening(seq), b.opening(seq))
    assert np.array_equal(far, b.get(seq, turn))
    op = a.opening(seq)
    assert (op[:, 0] != op[:, 1]).all()
    assert op.min() >= 1 and op.max() <= 6 and far.min() >= 1 and far.max() <= 6
    # Each seat starts about half of the games.
    assert 0.4 < (op[:, 0] > op[:, 1]).mean() < 0.6
    assert not np.array_equal(op, DiceSequences(500, seed=4).opening(seq))


def test_duplicate_pairs_share_a_sequence_with_seats_swapped():
    seq, a_is_x = seating(np.arange(6), duplicate=True)
    assert seq.tolist() == [0, 0, 1, 1, 2, 2]
    assert a_is_x.tolist() == [True, False] * 3
    seq, a_is_x = seating(np.arange(4), duplicate=False)
    assert seq.tolist() == [0, 1, 2, 3] and a_is_x.all()


def test_identical_deterministic_players_mirror_every_pair():
    # Same policy on both sides and the same dice with the seats swapped: game 2k+1 replays game
    # 2k with the names exchanged, so every pair cancels out exactly.
    r = play_games(GreedyBot(_runner, "a"), GreedyBot(_runner, "b"), 120, seed=5, batch=37,
                   progress=False)
    assert np.array_equal(r.points[0::2], -r.points[1::2])
    assert r.ppg == 0.0 and r.ppg_ci95 == 0.0
    # Without duplicate dice the same players do not cancel out.
    r2 = play_games(GreedyBot(_runner, "a"), GreedyBot(_runner, "b"), 120, seed=5,
                    duplicate=False, progress=False)
    assert r2.ppg_ci95 > 0.1


def test_each_side_sees_the_same_positions_and_rolls_over_a_pair():
    # One game at a time: A's decisions over the pair are B's decisions over the pair.
    a, b = Recorder(GreedyBot(_runner, "a")), Recorder(GreedyBot(_runner, "b"))
    play_games(a, b, 2, seed=11, batch=1, progress=False)
    assert len(a.seen) > 20
    assert sorted(a.seen) == sorted(b.seen)


def test_results_do_not_depend_on_the_batch_size():
    kw = dict(games=60, seed=2, progress=False)
    r2 = play_games(GreedyBot(_runner, "a"), GreedyBot(lambda x: -_runner(x), "b"), batch=7, **kw)
    r3 = play_games(GreedyBot(_runner, "a"), GreedyBot(lambda x: -_runner(x), "b"), batch=60, **kw)
    assert np.array_equal(r2.points, r3.points)


def test_random_against_random_is_even():
    r = play_games(RandomBot(1), RandomBot(2), 600, seed=0, progress=False)
    assert abs(r.ppg) < max(2 * r.ppg_ci95, 0.05)
    assert 0.4 < r.win_rate < 0.6
    assert sum(r.histogram.values()) == r.games == 600
    assert r.wins == sum(v for k, v in r.histogram.items() if k.startswith("+"))
    assert r.gammon_rate_a == pytest.approx((r.histogram["+2"] + r.histogram["+3"]) / 600)


@pytest.mark.gnubg
@pytest.mark.skipif(not HAVE_GNUBG, reason="needs the gnubg-nn reference package")
def test_gnubg_crushes_random():
    from bgnet.bots import load_bot

    r = play_games(load_bot("gnubg:0"), load_bot("random:3"), 200, seed=1, progress=False)
    assert r.win_rate > 0.95
    assert r.ppg > 2.0 and r.ppg - r.ppg_ci95 > 1.5
    assert r.gammon_rate_a > 0.5


def test_match_arguments_are_checked():
    with pytest.raises(ValueError, match="must be even"):
        play_games(RandomBot(1), RandomBot(2), 3, progress=False)
    with pytest.raises(ValueError, match="at least one game"):
        play_games(RandomBot(1), RandomBot(2), 0, progress=False)
    r = play_games(RandomBot(1), RandomBot(2), 3, duplicate=False, progress=False)
    assert r.games == 3


def test_confidence_intervals_on_synthetic_samples():
    rng = np.random.default_rng(0)
    x = rng.normal(0.3, 2.0, size=4000)
    mean, half = mean_ci95(x)
    assert mean == pytest.approx(x.mean())
    assert half == pytest.approx(1.959964 * x.std(ddof=1) / math.sqrt(4000), rel=1e-6)
    # Perfectly anti-correlated pairs: the pair means are constant, so no uncertainty is left.
    y = rng.choice([-3, -2, -1, 1, 2, 3], size=500)
    pairs = np.stack([y + 0.5, -y + 0.5], axis=1).reshape(-1)
    m, h = paired_mean_ci95(pairs)
    assert m == pytest.approx(0.5) and h == pytest.approx(0.0)
    assert mean_ci95(pairs)[1] > 0.1
    # Coverage: about 95 % of intervals from fresh samples contain the true mean.
    covered = 0
    for _ in range(400):
        s = rng.normal(1.0, 3.0, 200)
        m, h = mean_ci95(s)
        covered += abs(m - 1.0) <= h
    assert 0.91 < covered / 400 < 0.99
    with pytest.raises(ValueError, match="odd"):
        paired_mean_ci95([1, 2, 3])


def test_elo_helpers_and_bradley_terry_recover_known_ratings():
    assert elo_from_score(0.5) == pytest.approx(0.0)
    assert score_from_elo(elo_from_score(0.76)) == pytest.approx(0.76)
    assert elo_from_score(10 / 11) == pytest.approx(400.0)
    true = np.array([0.0, 120.0, -200.0, 300.0])
    rng = np.random.default_rng(4)
    wins = np.zeros((4, 4))
    for i in range(4):
        for j in range(i + 1, 4):
            n = 4000
            w = rng.binomial(n, score_from_elo(true[i] - true[j]))
            wins[i, j], wins[j, i] = w, n - w
    ratings, se = bradley_terry(wins, prior_games=0.0)
    assert ratings[0] == 0.0 and se[0] == 0.0
    assert np.all(np.abs(ratings - true) < 3 * se + 1e-9)
    assert np.all(se[1:] > 0) and np.all(se[1:] < 20)
    # A player that never lost still gets a finite rating thanks to the prior.
    wins = np.array([[0, 10], [0, 0]])
    r, s = bradley_terry(wins)
    assert np.isfinite(r).all() and r[1] < -100


def test_json_schema(tmp_path):
    r = play_games(RandomBot(1), RandomBot(2), 20, seed=3, progress=False)
    path = tmp_path / "r.json"
    text = r.to_json(str(path))
    d = json.loads(path.read_text())
    assert d == json.loads(text)
    for key, kind in [("games", int), ("wins", int), ("win_rate", float), ("ppg", float),
                      ("ppg_ci95", float), ("gammon_rate_a", float), ("backgammon_rate_a", float),
                      ("gammon_rate_b", float), ("backgammon_rate_b", float),
                      ("games_per_second", float), ("histogram", dict), ("bot_a", str),
                      ("bot_b", str), ("seed", int), ("duplicate", bool), ("mean_plies", float)]:
        assert isinstance(d[key], kind), key
    assert set(d["histogram"]) == {"+1", "+2", "+3", "-1", "-2", "-3"}
    assert "points" not in d
    assert set(d) == {f for f in MatchResult.__dataclass_fields__ if f != "points"}


def test_eval_command_writes_json_and_prints_a_summary(tmp_path, capsys):
    path = tmp_path / "out.json"
    assert bgnet_main(["eval", "random:1", "random:2", "--games", "9", "--seed", "4",
                       "--json", str(path), "--quiet"]) == 0
    out = capsys.readouterr()
    assert "points per game" in out.out and "playing 10 games" in out.err
    d = json.loads(path.read_text())
    assert d["games"] == 10 and d["seed"] == 4 and d["duplicate"] is True
    assert eval_main(["random", "random", "--games", "5", "--no-duplicate", "--quiet"]) == 0
    assert "5 games" in capsys.readouterr().out


def test_eval_command_says_what_is_wrong():
    with pytest.raises(BadInputFile, match="no such bot file: 'runs/missing/ckpt_100.pt'"):
        eval_main(["runs/missing/ckpt_100.pt", "pubeval", "--games", "2"])
    with pytest.raises(BadArgument, match="argument --games: must be a whole number from 1 to"):
        eval_main(["random", "random", "--games", "0"])


def test_a_match_played_in_parts_is_the_same_match():
    """play_range on pieces of a match gives the games of the whole match, piece by piece."""
    from bgnet.measure.match import play_range

    a, b = GreedyBot(_runner, "runner"), GreedyBot(lambda after: -_runner(after), "backward")
    whole = play_games(a, b, 24, seed=6, batch=5, progress=False)
    pieces = [play_range(a, b, 24, lo, hi, seed=6, batch=3) for lo, hi in ((0, 10), (10, 12), (12, 24))]
    assert np.array_equal(np.concatenate([p for p, _ in pieces]), whole.points)
    assert np.mean(np.concatenate([n for _, n in pieces])) == whole.mean_plies


def test_eval_workers_play_the_same_games_as_one_process(tmp_path):
    shipped = "checkpoints/bgnet-default.onnx"
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    for path, extra in ((one, []), (two, ["--workers", "2"])):
        assert eval_main([shipped, "pubeval", "--games", "20", "--seed", "3", "--quiet",
                          "--json", str(path)] + extra) == 0
    d1, d2 = json.loads(one.read_text()), json.loads(two.read_text())
    for key in ("games", "wins", "ppg", "ppg_ci95", "histogram", "mean_plies"):
        assert d1[key] == d2[key]


@pytest.mark.parametrize("kind", [["--cube", "--games", "14"], ["--games", "10"],
                                  ["--match", "3", "--matches", "5"]])
def test_eval_workers_share_cube_games_and_saved_games_and_save_the_same_files(tmp_path, kind):
    """Money games with the cube, and any run that saves its games, are shared among the
    workers too: duplicate pairs kept together (14 games in parts of 2), the same result, and
    the same .mat and .sgf files, their games in order."""
    shipped = "checkpoints/bgnet-default.onnx"
    out = {}
    for n in (1, 2):
        folder = tmp_path / f"w{n}"
        folder.mkdir()
        assert eval_main([shipped, "pubeval", *kind, "--seed", "6", "--quiet", "--workers", str(n),
                          "--json", str(folder / "r.json"), "--save-mat", str(folder / "g.mat"),
                          "--save-sgf", str(folder / "g.sgf")]) == 0
        data = json.loads((folder / "r.json").read_text())
        data.pop("seconds", None)
        data = {k: v for k, v in data.items() if "per_second" not in k}
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix != ".json"}
        out[n] = data, files
    assert out[1][0] == out[2][0]
    assert out[1][1].keys() == out[2][1].keys() and len(out[1][1]) >= 2
    for name in out[1][1]:
        assert out[1][1][name] == out[2][1][name], name


def test_eval_workers_play_the_same_matches_as_one_process(tmp_path):
    shipped = "checkpoints/bgnet-default.onnx"
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    for path, extra in ((one, []), (two, ["--workers", "2"])):
        assert eval_main([shipped, "bgnet-default", "--match", "3", "--matches", "10", "--seed", "4",
                          "--quiet", "--json", str(path)] + extra) == 0
    d1, d2 = json.loads(one.read_text()), json.loads(two.read_text())
    assert d1["matches"] == d2["matches"] == 10
    for key in ("bot_a", "bot_b", "wins", "games", "crawford_games", "cube", "mean_plies"):
        assert d1[key] == d2[key], key
    # Parts of several matches each (40 matches, 2 workers: parts of 3), put back in order.
    from bgnet.bots.load import load_bot
    from bgnet.measure.cube_play import play_matches, play_matches_parallel

    one_process = play_matches(load_bot(shipped), load_bot("bgnet-default"), 3, 40, seed=5,
                               progress=False)
    shared = play_matches_parallel(shipped, "bgnet-default", 3, 40, 2, seed=5, progress=False)
    assert (one_process.winners == shared.winners).all()
    assert (one_process.rows == shared.rows).all()


def _part_that_fails() -> None:
    raise RuntimeError("this part failed")


def test_a_failing_part_stops_the_pool_without_playing_the_rest():
    """The parts not yet started are dropped when one fails: the error shows at once, not after
    the whole job (each of the other parts would take a second)."""
    import time

    from bgnet.measure import workers

    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="this part failed"):
        with workers.pool(1, ("pubeval",), "cpu") as pool:
            jobs = [pool.submit(_part_that_fails)] + [pool.submit(time.sleep, 1.0) for _ in range(20)]
            for job in jobs:
                job.result()
    assert time.perf_counter() - t0 < 12.0  # process start and at most one part, not twenty


def test_a_summary_of_few_games_gives_no_interval_and_counts_in_the_singular(capsys):
    from bgnet.cli import main

    assert main(["eval", "random:1", "random:2", "--games", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(too few games for an interval)" in out and "±" not in out.split("\n")[1]
    assert main(["eval", "random:1", "random:2", "--match", "1", "--matches", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "1 match to 1 point " in out and " 1 matches" not in out and "1 Crawford games" not in out

