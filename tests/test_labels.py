"""A labels folder holds a teacher's search values of its self-play candidates in shards: made
once per settings, resumed where it stopped, read back whole, refused when damaged or made by a
teacher bgnet may not learn from; ``bgnet distill --labels`` fits a net to it."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from bgnet.bots.load import load_teacher
from bgnet.cli import main
from bgnet.engine.board import game_results
from bgnet.errors import BadArgument, BadInputFile
from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.nn.model import ValueNet
from bgnet.train.labels import LabelSettings, label, load_labels, read_settings, shard_path


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    torch.manual_seed(4)
    net = ValueNet("tesauro", 8)
    path = tmp_path_factory.mktemp("teacher") / "teacher.pt"
    save_checkpoint(path, {"net_config": net.config(), "net_state": net.state_dict()})
    return str(path)


def settings(teacher, **kw):
    return LabelSettings(**{"teacher": teacher, "ply": 1, "per_shard": 24, "seed": 5, **kw})


def test_a_shard_holds_the_teachers_one_ply_values_of_live_positions(tmp_path, teacher):
    assert label(tmp_path, settings(teacher), 1, progress=False) == 1
    s = load_labels(tmp_path)
    assert len(s) >= 24  # every decision gives its best candidate at least
    assert (game_results(s.boards) == 0).all()
    bot = load_teacher(teacher)
    assert np.allclose(s.targets, bot.evaluate(s.boards, ply=1), atol=1e-6)
    assert read_settings(tmp_path) == settings(teacher)


def test_a_stopped_labelling_resumes_with_the_same_shards(tmp_path, teacher):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    label(whole, settings(teacher), 3, progress=False)
    label(parts, settings(teacher), 1, progress=False)
    assert label(parts, settings(teacher), 3, progress=False) == 2  # only the missing ones
    assert label(parts, settings(teacher), 3, progress=False) == 0
    a, b = load_labels(whole), load_labels(parts)
    assert np.array_equal(a.boards, b.boards) and np.array_equal(a.targets, b.targets)
    assert np.array_equal(a.decision, b.decision)


def test_a_folder_keeps_one_teacher_and_one_set_of_settings(tmp_path, teacher):
    label(tmp_path, settings(teacher), 1, progress=False)
    with pytest.raises(BadArgument, match="holds labels of"):
        label(tmp_path, settings(teacher, keep=3), 1, progress=False)


@pytest.mark.parametrize("spec", ["gnubg:0", "pubeval", "random:3"])
def test_a_reference_bot_is_never_a_teacher(tmp_path, spec):
    with pytest.raises(BadArgument, match="cannot be a teacher"):
        label(tmp_path, settings(spec), 1, progress=False)
    assert not (tmp_path / "labels.json").exists()  # refused before the folder was claimed


def test_damaged_folders_and_shards_are_refused(tmp_path, teacher):
    with pytest.raises(BadInputFile, match="not a labels folder"):
        load_labels(tmp_path)
    label(tmp_path, settings(teacher), 1, progress=False)
    shard_path(tmp_path, 0).write_bytes(b"PK\x03\x04 not an archive")
    with pytest.raises(BadInputFile, match="not a shard of labels"):
        load_labels(tmp_path)
    (tmp_path / "labels.json").write_text(json.dumps({"teacher": "x", "bogus": 1}))
    with pytest.raises(BadInputFile, match="not a labels settings file"):
        read_settings(tmp_path)


def test_label_and_distill_verbs_fit_a_student_to_the_teacher(tmp_path, teacher):
    folder = tmp_path / "labels"
    assert main(["label", f"{teacher}@1", str(folder), "--shards", "2", "--per-shard", "30"]) == 0
    torch.manual_seed(1)
    student = ValueNet("tesauro", 6)  # another shape than the teacher's
    start = tmp_path / "student.pt"
    save_checkpoint(start, {"net_config": student.config(), "net_state": student.state_dict(), "games": 7})
    out = tmp_path / "fitted.pt"
    args = ["distill", str(start), str(out), "--labels", str(folder), "--epochs", "3", "--lr", "3e-3",
            "--lr-final", "1e-4", "--batch-size", "16"]
    assert main(args) == 0
    fitted, data = load_net(out)
    s = load_labels(folder)
    before = np.mean((student.eval()(torch.from_numpy(_inputs(s.boards))).detach().numpy() - s.targets) ** 2)
    after = np.mean((fitted(torch.from_numpy(_inputs(s.boards))).detach().numpy() - s.targets) ** 2)
    assert after < before and data["games"] == 7


def _inputs(boards):
    from bgnet.nn.encode import encode

    return encode(boards, "tesauro")


def test_the_label_verb_refuses_depth_three_and_a_gnubg_teacher(tmp_path):
    assert main(["label", "bgnet-default@3", str(tmp_path / "a"), "--shards", "1"]) == 2
    assert main(["label", "gnubg:1", str(tmp_path / "b"), "--shards", "1"]) == 2
    assert main(["distill", "bgnet-default", str(tmp_path / "o.pt"), "--labels", str(tmp_path),
                 "--data", str(tmp_path / "d.npz")]) == 2


def test_a_shard_whose_values_are_not_probabilities_is_refused(tmp_path, teacher):
    label(tmp_path, settings(teacher), 1, progress=False)
    with np.load(shard_path(tmp_path, 0)) as f:
        arrays = dict(f)
    arrays["targets"][0, 0] = np.nan
    np.savez(shard_path(tmp_path, 0), **arrays)
    with pytest.raises(BadInputFile, match="not a probability"):
        load_labels(tmp_path)


def test_exploring_self_play_reaches_other_positions_still_legal_and_live(teacher):
    from bgnet.engine.board import race_mask
    from bgnet.train.distill import self_play_decisions

    bot = load_teacher(teacher)
    plain, _ = self_play_decisions(bot, 200, np.random.default_rng(1), games=8)
    wide, dice = self_play_decisions(bot, 200, np.random.default_rng(1), games=8, explore=0.5)
    assert not np.array_equal(plain, wide)
    assert (wide.sum(axis=2) <= 15).all() and (wide >= 0).all() and not race_mask(wide).any()
    assert ((dice >= 1) & (dice <= 6)).all()


def test_the_label_verb_refuses_a_chance_outside_0_to_1(tmp_path, teacher):
    assert main(["label", teacher, str(tmp_path / "a"), "--shards", "1", "--explore", "1.5"]) == 2


def test_the_label_verb_keeps_the_depth_it_is_given_zero_included(tmp_path, teacher):
    for depth in (0, 1):
        folder = tmp_path / str(depth)
        assert main(["label", f"{teacher}@{depth}", str(folder), "--shards", "1", "--per-shard", "8"]) == 0
        assert read_settings(folder).ply == depth


def test_another_player_gives_the_positions_and_the_teacher_the_values(tmp_path, teacher):
    own, theirs = tmp_path / "own", tmp_path / "theirs"
    # past the games' first turns (256 games in flight), where the players' moves differ
    label(own, settings(teacher, per_shard=400), 1, progress=False)
    label(theirs, settings(teacher, per_shard=400, player="pubeval"), 1, progress=False)
    a, b = load_labels(own), load_labels(theirs)
    assert a.boards.shape != b.boards.shape or not np.array_equal(a.boards, b.boards)  # other games
    assert np.allclose(b.targets, load_teacher(teacher).evaluate(b.boards, ply=1), atol=1e-6)
    assert "in pubeval's games" in read_settings(theirs).describe()


def test_self_play_decisions_come_from_whole_games_not_their_first_turns(teacher):
    """Many games at once and few decisions wanted must not mean the opening turns only: late
    middle-game boards (a side with checkers borne off or its pips down by half) are among them."""
    from bgnet.engine.board import pip_counts
    from bgnet.train.distill import self_play_decisions

    boards, dice = self_play_decisions(load_teacher(teacher), 400, np.random.default_rng(3))
    assert len(boards) == len(dice) == 400
    least = np.array([min(pip_counts(b)) for b in boards])
    assert (least < 90).mean() > 0.1, "no late middle game among the decisions"
