"""The cube-decision benchmark: the shipped file, the scoring of decisions and ``bgnet bench cube``."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from bgnet.bots import load_bot
from bgnet.bots.simple import RandomBot
from bgnet.cli import main as bgnet_main
from bgnet.cube import ACTIONS, cube_action
from bgnet.engine.board import start_position
from bgnet.engine.state import MatchContext
from bgnet.measure.cube_bench import (
    SOURCES,
    bot_decisions,
    decision_costs,
    load_benchmark,
    rate_row,
    save_benchmark,
)

HAVE_GNUBG = importlib.util.find_spec("gnubg_nn") is not None
needs_gnubg = pytest.mark.skipif(not HAVE_GNUBG, reason="needs the gnubg-nn reference package")
BENCH = load_benchmark()


def test_shipped_benchmark_covers_money_matches_and_cube_levels():
    assert len(BENCH) >= 1000
    assert set(np.unique(BENCH.source)) == {0, 1}
    money = BENCH.length == 0
    assert np.all(money == (BENCH.source == SOURCES.index("money")))
    assert (money & (BENCH.owner == -1)).sum() >= 50 and (money & (BENCH.owner == 1)).sum() >= 20
    assert (~money & (BENCH.cube >= 2)).sum() >= 50
    assert len({tuple(s) for s in BENCH.score[~money]}) >= 15  # many match scores
    assert not np.any(BENCH.owner == 0)  # the player on roll may double everywhere
    assert not np.any(BENCH.crawford)
    deep = load_benchmark(reference="2-ply")
    assert np.array_equal(deep.boards, BENCH.boards) and "2-ply" in deep.reference
    assert 0.8 < (deep.action == BENCH.action).mean() < 1.0  # a deeper look changes some
    # gnubg's action is the one its equities give, as bgnet's cube head reads them.
    for b in (BENCH, deep):
        for i in range(0, len(b), 7):
            nd, dt, dp = b.equities[i]
            assert ACTIONS[b.action[i]] == cube_action(nd, dt, dp, b.probabilities[i, 1] > 0)
            assert b.context(i).may_double(1)


def _bench(tmp_path, equities):
    """A benchmark of the start position in money play, one row of ND, DT, DP per position."""
    n = len(equities)
    actions = [cube_action(*e, True) for e in equities]
    path = str(tmp_path / "cube.npz")
    save_benchmark(path, [start_position()] * n, [MatchContext()] * n,
                   [(0.5, 0.1, 0.0, 0.1, 0.0)] * n, equities, actions, [0] * n, "by hand")
    return load_benchmark(path)


def test_costs_of_each_kind_of_error(tmp_path):
    # no double (clear), double/take, double/pass, too good
    b = _bench(tmp_path, [(0.30, 0.10, 1.0), (0.60, 0.70, 1.0), (0.90, 1.20, 1.0), (1.10, 1.30, 1.0)])
    assert [ACTIONS[a] for a in b.action] == ["no_double", "double_take", "double_pass", "too_good"]
    assert b.take_counts().tolist() == [False, True, True, True]  # the clear take does not count
    right = decision_costs(b, np.array([False, True, True, False]), np.array([True, True, False, False]))
    assert not right["double_cost"].any() and not right["take_cost"].any()
    wrong = decision_costs(b, np.array([True, False, False, True]), np.array([False, False, True, True]))
    assert wrong["double_cost"] == pytest.approx([0.20, 0.10, 0.10, 0.10])
    assert wrong["take_cost"] == pytest.approx([0.0, 0.30, 0.20, 0.30])
    row = rate_row(b, np.array([True, False, False, True]), np.array([False, False, True, True]), "x")
    assert row["all"]["decisions"] == 4 + 3 and row["all"]["agreement"] == 0.0  # all wrong
    assert row["missed_double"] == {"count": 2, "cost": pytest.approx(200.0)}
    assert row["wrong_double"] == {"count": 2, "cost": pytest.approx(300.0)}
    assert row["wrong_take"] == {"count": 2, "cost": pytest.approx(500.0)}
    assert row["wrong_pass"] == {"count": 1, "cost": pytest.approx(300.0)}
    assert row["all"]["cost"] == pytest.approx(1300.0 / 7)
    assert row["match"]["decisions"] == 0  # all money


def test_a_bot_that_cannot_value_positions_never_doubles_and_always_takes():
    double, take = bot_decisions(RandomBot(1), BENCH.head(20))
    assert not double.any() and take.all()


def test_file_errors(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, boards=np.zeros((1, 2, 25), np.int8))
    with pytest.raises(ValueError, match="lacks"):
        load_benchmark(str(bad))
    with pytest.raises(FileNotFoundError, match="make_cube_bench"):
        load_benchmark(str(tmp_path / "none.npz"))
    with pytest.raises(ValueError, match="reference must be one of"):
        load_benchmark(reference="1-ply")


@pytest.mark.gnubg
@needs_gnubg
def test_bench_cube_command(tmp_path, capsys):
    """gnubg 0-ply's probabilities through bgnet's cube head agree with the program nearly always."""
    path = tmp_path / "cube.json"
    assert bgnet_main(["bench", "cube", "--bot", "gnubg:0", "--bot", "random:1", "--limit", "60",
                       "--reference", "0-ply", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "60 positions" in out and "gnubg:0" in out and "missed doubles" in out
    d = json.loads(path.read_text())
    assert "other_references" not in d and "0-ply" in d["reference"]
    gnubg, rand = d["results"]
    assert d["positions"] == 60 and gnubg["all"]["agreement"] >= 0.95 and gnubg["all"]["cost"] < 2
    assert rand["missed_double"]["count"] == int(BENCH.head(60).reference_double().sum())
    # Each bot beside the first on the same positions: the difference of the costs per decision.
    assert "paired_ref" not in gnubg and rand["paired_ref"] == "gnubg:0"
    assert rand["cost_minus_ref"] == pytest.approx(rand["all"]["cost"] - gnubg["all"]["cost"])
    assert rand["cost_minus_ref_ci95"] > 0 and "random:1 minus gnubg:0" in out
    assert "random:1: no cube play of its own" in out and "gnubg:0: no cube" not in out


@pytest.mark.gnubg
@needs_gnubg
def test_bench_cube_judges_the_same_decisions_by_both_references(tmp_path, capsys):
    """By default the decisions are judged by the 2-ply verdicts, then by the 0-ply ones."""
    path = tmp_path / "cube.json"
    assert bgnet_main(["bench", "cube", "--bot", "gnubg:0", "--limit", "80", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("80 positions") == 2 and out.index("at 2-ply") < out.index("at 0-ply")
    d = json.loads(path.read_text())
    (other,) = d["other_references"]
    assert "2-ply" in d["reference"] and "0-ply" in other["reference"]
    deep = load_benchmark(reference="2-ply").head(80)
    double, take = bot_decisions(load_bot("gnubg:0"), deep)
    assert d["results"][0] == json.loads(json.dumps(rate_row(deep, double, take, "gnubg:0")))


def test_bench_cube_errors(tmp_path, capsys):
    assert bgnet_main(["bench", "cube"]) == 2
    assert "give --bot SPEC" in capsys.readouterr().err
    assert bgnet_main(["bench", "cube", "--bot", "random", "--limit", "0"]) == 2
    assert "--limit must be at least 1" in capsys.readouterr().err
    assert bgnet_main(["bench", "cube", "--bot", "no/such.pt"]) == 3
    assert "no such bot file" in capsys.readouterr().err
    bad = tmp_path / "x.npz"
    bad.write_text("not a benchmark")
    assert bgnet_main(["bench", "cube", "--bot", "random", "--file", str(bad)]) == 3
    assert "not a readable cube benchmark" in capsys.readouterr().err
    if HAVE_GNUBG:
        assert bgnet_main(["bench", "cube", "--bot", "gnubg:0", "--ply", "1", "--limit", "5"]) == 2
        assert "cannot search at ply=1" in capsys.readouterr().err


def test_a_0ply_net_bot_makes_its_close_cube_decisions_again_at_1ply():
    import dataclasses

    from bgnet.bots.net import close_decision

    bot = load_bot("bgnet-deep")
    bench = BENCH.head(40)
    contexts = [bench.context(i) for i in range(len(bench))]
    at0 = bot.cube_decisions(bench.boards, contexts, 0)
    at1 = bot.cube_decisions(bench.boards, contexts, 1)
    close = [close_decision(d, bot.search.cube_window) for d in at0]
    assert 0 < sum(close) < len(close)
    searched = bot.cube_decisions(bench.boards, contexts)
    for d, d0, d1, c in zip(searched, at0, at1, close):
        assert d == (d1 if c else d0)
    # At 1-ply a decision is searched one roll ahead, cubeful after each roll, by default
    # (bgnet.cube.lookahead): the take point and cubeless equity of the probabilities averaged
    # over the rolls, the search's equities and action.
    assert bot.search.cube_lookahead
    bot.search = dataclasses.replace(bot.search, cube_lookahead=False)
    averaged = bot.cube_decisions(bench.boards, contexts, 1)
    for d, d1 in zip(averaged, at1):
        assert (d.take_point, d.cubeless_equity) == (d1.take_point, d1.cubeless_equity)
    assert any(d.no_double != d1.no_double for d, d1 in zip(averaged, at1))
    # Without the search, the close ones are those averaged decisions.
    for d, d0, d1, c in zip(bot.cube_decisions(bench.boards, contexts), at0, averaged, close):
        assert d == (d1 if c else d0)
    bot.search = dataclasses.replace(bot.search, cube_lookahead=True)
    # The bench measures what bgnet eval plays; --ply asks for one depth throughout.
    double, take = bot_decisions(bot, bench)
    assert double.tolist() == [d.double for d in searched]
    assert bot_decisions(bot, bench, 0)[0].tolist() == [d.double for d in at0]
    # One position through the Position ID API is decided the same way.
    from bgnet.engine.position_id import position_id
    from bgnet.formats.match_id import match_id

    i = close.index(True)
    assert bot.cube_decision(position_id(bench.boards[i]), match_id(contexts[i])) == searched[i]
