"""The error-rate benchmark: the shipped file, the loss computation and ``bgnet bench er``."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from bgnet.bots.base import Bot
from bgnet.bots.simple import GreedyBot, RandomBot
from bgnet.cli import main as bgnet_main
from bgnet.engine.movegen import generate
from bgnet.measure.er import (
    DEFAULT_PATH,
    ErBenchmark,
    decision_losses,
    error_rate,
    load_benchmark,
    losses_of,
    save_benchmark,
)

HAVE_GNUBG = importlib.util.find_spec("gnubg_nn") is not None
needs_gnubg = pytest.mark.skipif(not HAVE_GNUBG, reason="needs the gnubg-nn reference package")
BENCH = load_benchmark()


def test_shipped_benchmark_is_consistent_and_covers_every_phase():
    assert len(BENCH) >= 2000
    counts = np.diff(BENCH.offsets)
    assert counts.min() >= 2
    for phase in (5, 4):  # contact, crashed
        assert (BENCH.phase == phase).sum() >= 50
    assert np.isin(BENCH.phase, (1, 2, 3)).sum() >= 200  # races and bear-offs
    assert set(np.unique(BENCH.source)) == {0, 1} and BENCH.sources == ("gnubg:0", "pubeval")
    assert np.all(np.abs(BENCH.equity) <= 3.0)
    # The stored moves are exactly the legal moves of each decision.
    for d in range(0, len(BENCH), 97):
        after, _ = generate(BENCH.boards[d], int(BENCH.dice[d, 0]), int(BENCH.dice[d, 1]))
        stored = BENCH.after[BENCH.offsets[d]:BENCH.offsets[d + 1]]
        assert sorted(map(bytes, after)) == sorted(map(bytes, stored))


def test_losses_are_zero_for_the_best_move_and_positive_otherwise():
    bench = BENCH.head(200)
    oracle_value = {}
    for d in range(len(bench)):
        for r in range(bench.offsets[d], bench.offsets[d + 1]):
            oracle_value[bench.after[r].tobytes()] = float(bench.equity[r])

    def oracle(after):  # knows the reference equity of every afterstate of the slice
        return np.array([oracle_value.get(a.tobytes(), -9.0) for a in after])

    assert np.allclose(decision_losses(GreedyBot(oracle, "oracle"), bench), 0.0)
    worst = GreedyBot(lambda a: -oracle(a), "anti-oracle")
    loss = decision_losses(worst, bench)
    spread = bench.best_equity() - np.minimum.reduceat(bench.equity.astype(float), bench.offsets[:-1])
    assert np.allclose(loss, spread, atol=1e-6)
    row = error_rate(RandomBot(0), bench)
    assert 0 < row["er"] < 1000 * spread.mean() and row["decisions"] == 200


def test_an_illegal_move_is_reported():
    class Cheat(Bot):
        name = "cheat"

        def choose_moves(self, boards, dice, contexts=None, ply=None):
            return boards.copy(), np.full((len(boards), 4, 2), -1, np.int8)

    with pytest.raises(RuntimeError, match="cheat played a move that is not legal"):
        decision_losses(Cheat(), BENCH.head(5))


def test_save_load_round_trip_and_file_errors(tmp_path):
    small = BENCH.head(3)
    afters = [small.after[small.offsets[d]:small.offsets[d + 1]] for d in range(3)]
    eqs = [small.equity[small.offsets[d]:small.offsets[d + 1]] for d in range(3)]
    path = str(tmp_path / "b.npz")
    save_benchmark(path, small.boards, small.dice, afters, eqs, small.phase, small.source,
                   sources=("x", "y"), reference="test")
    back = load_benchmark(path)
    assert isinstance(back, ErBenchmark) and back.reference == "test" and back.sources == ("x", "y")
    assert np.array_equal(back.after, small.after) and np.array_equal(back.offsets, small.offsets)
    with pytest.raises(FileNotFoundError, match="build one with tools/build_er_benchmark.py"):
        load_benchmark(str(tmp_path / "missing.npz"))
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="not an error-rate benchmark"):
        load_benchmark(str(tmp_path / "other.npz"))
    with pytest.raises(ValueError, match="one entry per decision"):
        save_benchmark(path, small.boards, small.dice, afters[:2], eqs, small.phase, small.source)
    with pytest.raises(ValueError, match="no 2-ply reference equities"):
        load_benchmark(path, reference="2-ply")
    with pytest.raises(ValueError, match="reference must be one of 1-ply, 2-ply"):
        load_benchmark(path, reference="3-ply")


def test_the_2ply_reference_revalues_only_the_best_moves_at_1ply():
    deep = load_benchmark(reference="2-ply")
    with np.load(DEFAULT_PATH) as z:
        searched = z["searched_2ply"]
    assert np.array_equal(deep.after, BENCH.after) and "2-ply" in deep.reference
    # Moves left out of the search keep their 1-ply equity; the searched ones are among the best
    # five at 1-ply, within 0.16 of the best.
    assert np.array_equal(deep.equity[~searched], BENCH.equity[~searched])
    assert 0.1 < searched.mean() < 0.5 and np.any(deep.equity[searched] != BENCH.equity[searched])
    best = BENCH.best_equity()
    for d in range(0, len(BENCH), 13):
        s, e = BENCH.offsets[d], BENCH.offsets[d + 1]
        rows = np.flatnonzero(searched[s:e])
        assert len(rows) <= 5 and np.all(BENCH.equity[s:e][rows] >= best[d] - 0.16 - 1e-6)


@pytest.mark.gnubg
@needs_gnubg
def test_the_2ply_reference_is_gnubg_at_2ply():
    import subprocess
    import sys

    from bgnet.engine.board import swap
    from bgnet.nn.probs import equity

    deep = load_benchmark(reference="2-ply")
    with np.load(DEFAULT_PATH) as z:
        rows = np.flatnonzero(z["searched_2ply"])[::4000]
    # A fresh process: gnubg's evaluation cache, warmed by other tests, can change its 2-ply answer.
    code = ("import sys, json, gnubg_nn; print(json.dumps([gnubg_nn.probabilities(b, 2) "
            "for b in json.loads(sys.stdin.read())]))")
    boards = [swap(deep.after[r]).tolist() for r in rows]  # the opponent on roll
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(boards), text=True,
                         capture_output=True, check=True).stdout
    theirs = equity(np.array(json.loads(out)))
    assert np.allclose(deep.equity[rows], -theirs, atol=1e-5)


@pytest.mark.gnubg
@needs_gnubg
def test_reference_equities_are_gnubg_1ply_and_bots_rank_as_expected():
    from bgnet.bots import load_bot

    # GNU Backgammon at 1-ply values a move exactly as the reference does: it never loses.
    assert np.allclose(decision_losses(load_bot("gnubg:1"), BENCH.head(6)), 0.0, atol=1e-5)
    part = BENCH.head(400)
    g0 = error_rate(load_bot("gnubg:0"), part)["er"]
    pub = error_rate(load_bot("pubeval"), part)["er"]
    rnd = error_rate(load_bot("random:2"), part)["er"]
    assert 0 < g0 < pub < rnd


@pytest.mark.gnubg
@needs_gnubg
def test_bench_er_command(tmp_path, capsys):
    path = tmp_path / "er.json"
    assert bgnet_main(["bench", "er", "--bot", "random:1", "--limit", "60", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "60 decisions" in out and "random:1" in out and "gnubg:0" in out and "pubeval" in out
    d = json.loads(path.read_text())
    assert d["decisions"] == 60 and [r["bot"] for r in d["results"]] == ["random:1", "gnubg:0", "pubeval"]
    # Each bot beside gnubg 0-ply on the same decisions: the mean difference is the difference of
    # the means; its paired interval is no wider than the sum of the two intervals.
    rows = {r["bot"]: r for r in d["results"]}
    ref = rows["gnubg:0"]
    assert "paired_ref" not in ref and "minus gnubg:0" in out
    for name in ("random:1", "pubeval"):
        r = rows[name]
        assert r["paired_ref"] == "gnubg:0"
        assert r["er_minus_ref"] == pytest.approx(r["er"] - ref["er"], abs=1e-9)
        assert 0 < r["er_minus_ref_ci95"] <= r["er_ci95"] + ref["er_ci95"]
    assert bgnet_main(["bench", "er", "--bot", "no/such.pt", "--no-reference"]) == 3
    assert "bgnet bench: error: no such bot file: 'no/such.pt'" in capsys.readouterr().err


def test_bench_er_scores_the_same_choices_against_both_references(tmp_path, capsys):
    """By default the moves are scored against the 2-ply reference, then the 1-ply one."""
    path = tmp_path / "er.json"
    assert bgnet_main(["bench", "er", "--bot", "random:3", "--no-reference", "--limit", "50",
                       "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("50 decisions") == 2 and out.index("2-ply for the best 5") < out.index("1-ply (")
    d = json.loads(path.read_text())
    (other,) = d["other_references"]
    assert "2-ply" in d["reference"] and "1-ply" in other["reference"]
    chosen = RandomBot(3).choose_moves(BENCH.boards[:50], BENCH.dice[:50].astype(np.int64))[0]
    for bench, rows in ((load_benchmark(reference="2-ply").head(50), d["results"]),
                        (BENCH.head(50), other["results"])):
        assert rows[0]["er"] == pytest.approx(1000 * losses_of(bench, chosen).mean())
    assert bgnet_main(["bench", "er", "--bot", "random:3", "--no-reference", "--limit", "50",
                       "--reference", "1-ply", "--json", str(path)]) == 0
    assert "2-ply" not in capsys.readouterr().out
    d = json.loads(path.read_text())
    assert "other_references" not in d and d["results"][0]["er"] == pytest.approx(other["results"][0]["er"])


def test_workers_lose_the_same_equity_as_one_process(tmp_path, capsys):
    """Decisions shared among processes are played as in one; bad --workers values are refused."""
    from bgnet.bots import load_bot
    from bgnet.measure.er import BATCH, decision_losses_parallel

    shipped = "checkpoints/bgnet-default.onnx"
    bench = BENCH.head(BATCH + 100)  # two parts, the second one short
    seen = []
    one = decision_losses(load_bot(shipped), bench)
    two = decision_losses_parallel(shipped, bench, workers=2, on_done=seen.append)
    assert np.array_equal(one, two) and sorted(seen) == [100, BATCH]
    path = tmp_path / "er.json"
    assert bgnet_main(["bench", "er", "--bot", shipped, "--no-reference", "--limit", "40",
                       "--workers", "2", "--reference", "1-ply", "--json", str(path)]) == 0
    row = json.loads(path.read_text())["results"][0]
    assert row["decisions"] == 40 and row["er"] == pytest.approx(1000 * one[:40].mean())
    assert bgnet_main(["bench", "er", "--bot", shipped, "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
