"""Tournaments: finding a run's checkpoints, round robin ratings, plot and TensorBoard output."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bgnet.bots.simple import GreedyBot, RandomBot
from bgnet.cli.measure import tournament_main
from bgnet.errors import BadArgument
from bgnet.measure.tournament import Player, checkpoints_of, players_from, run_tournament, write_outputs


def _runner(after):
    me = after[:, 1].astype(np.int64)
    return -(me * np.arange(1, 26)).sum(axis=1) - 8.0 * (me[:, :24] == 1).sum(axis=1)


def _fake_run(tmp_path, games=(2000, 500, 1000, 3000)):
    ck = tmp_path / "run" / "checkpoints"
    ck.mkdir(parents=True)
    for g in games:
        (ck / f"games_{g:09d}.pt").write_bytes(b"")
    (ck / "latest.pt").write_bytes(b"")
    return tmp_path / "run"


def test_checkpoints_of_a_run_are_ordered_by_training_games(tmp_path):
    run = _fake_run(tmp_path)
    players = checkpoints_of(run)
    assert [p.games for p in players] == [500, 1000, 2000, 3000]
    assert all("latest" not in p.spec for p in players)
    two = checkpoints_of(run, max_checkpoints=2)
    assert [p.games for p in two] == [500, 3000]
    with pytest.raises(FileNotFoundError, match="no such run directory"):
        checkpoints_of(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        checkpoints_of(tmp_path / "empty")


def test_players_get_references_once_and_unique_names(tmp_path):
    run = _fake_run(tmp_path, games=(100,))
    players = players_from([str(run), "pubeval", "random:1"], references=("pubeval", "gnubg:0"))
    assert [p.spec for p in players].count("pubeval") == 1
    assert players[-1].spec == "gnubg:0" and players[0].games == 100
    same = players_from(["random", "random"], references=())
    assert len({p.name for p in same}) == 2
    with pytest.raises(ValueError, match="at least two"):
        players_from(["random"], references=())


def _load(spec: str):
    # Stand-ins for checkpoints: the later the checkpoint, the stronger the bot.
    if spec.startswith("ckpt"):
        return GreedyBot(_runner, spec) if spec.endswith("late") else RandomBot(7)
    return RandomBot(int(spec.split(":")[1]))


def test_round_robin_rates_the_stronger_player_higher_and_writes_its_outputs(tmp_path):
    players = [Player("ckpt-early", "early", 1000), Player("ckpt-late", "late", 9000),
               Player("random:1", "random:1")]
    r = run_tournament(players, games_per_pair=40, seed=3, load=_load, progress=False)
    assert r.anchor == "random:1" and r.ratings[2] == 0.0
    assert r.wins[1, 0] + r.wins[0, 1] == 40 and r.wins[1, 0] > 25
    assert r.ratings[1] > r.ratings[0] + 100 and r.ratings[1] > 100
    assert np.all(r.rating_se[:2] > 0)
    assert "late" in r.table().splitlines()[2]  # the best player heads the table
    paths = write_outputs(r, tmp_path / "out")
    d = json.loads(paths["json"].read_text())
    assert [p["name"] for p in d["players"]] == ["early", "late", "random:1"]
    assert len(d["matches"]) == 3
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any(f.name.startswith("events.out.tfevents") for f in paths["tensorboard"].iterdir())


def test_tournament_command(tmp_path, capsys):
    out = tmp_path / "t"
    assert tournament_main(["random:1", "random:2", "--no-ref", "--games", "10", "--out", str(out),
                            "--quiet"]) == 0
    assert "ratings" in capsys.readouterr().out
    assert (out / "tournament.json").exists() and (out / "ratings.png").exists()
    with pytest.raises(BadArgument, match="at least two players"):
        tournament_main(["random:1", "--no-ref", "--games", "10"])
