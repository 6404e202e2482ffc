"""A recipe's distill phase: between two spans of self-play the run's net is fitted to its own
search's values (labels in the run folder), once, and a run stopped in the phase finishes it
without labelling again the shards already written.

The recipe is a tiny one written to a temporary config folder (as in ``tests/test_recipe.py``),
its labels of ply 0 (the net's own values) so that a phase takes seconds.
"""
from __future__ import annotations

import pytest
import torch
from test_recipe import composed, write_recipe

from bgnet.nn.checkpoint import load_checkpoint
from bgnet.train import distill as distill_module
from bgnet.train.config import ConfigError, load_config, phase_index
from bgnet.train.distill_phase import due
from bgnet.train.labels import load_labels, read_settings, shard_path
from bgnet.train.loop import train

TINY = """\
# @package _global_
hydra:
  run:
    dir: {run_dir}
seed: 5
model:
  encoding: contact
  hidden: [16]
train:
  games: 0
  parallel_games: 32
  buffer_positions: 256
  checkpoint_every: 1000
  log_every: 200
eval:
  every: 0
  final_games: 0
phases:
  - name: warm
    until: 150
    train: {{lam: 0.7}}
    optim: {{lr: 0.001, lr_final: 0.0005}}
  - name: fit-to-search
    until: 150
    distill: {{teacher: "", ply: 0, shards: 2, per_shard: 24, epochs: 1, lr: 0.001, batch_size: 32}}
  - name: td0
    until: 300
    train: {{lam: 0.0}}
    optim: {{lr: 0.0005, lr_final: 0.0001}}
"""


@pytest.fixture
def recipes(tmp_path):
    return write_recipe(tmp_path, TINY)


def latest(run_dir):
    return load_checkpoint(run_dir / "checkpoints" / "latest.pt")


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------------------------
# The config


def test_a_distill_phase_holds_no_games_and_loads_back_the_same(recipes):
    run = load_config(composed(recipes))
    assert run.train.games == 300
    assert [phase_index(run, g) for g in (0, 149, 150, 299)] == [0, 0, 2, 2]
    d = run.phases[1].distill
    assert d is not None and (d.teacher, d.ply, d.shards, d.per_shard, d.epochs) == ("", 0, 2, 24, 1)
    assert run.phases[0].distill is None
    assert load_config(run.to_dict()) == run  # what a checkpoint records loads back the same
    assert due(run, 149, []) == [] and due(run, 160, []) == [1] and due(run, 160, [1]) == []


@pytest.mark.parametrize("override, message", [
    ("phases.1.distill.shards=0", r"'phases\[1\] \(fit-to-search\)\.distill\.shards' must be >= 1; got 0"),
    ("phases.1.distill.epochs=0", r"distill\.epochs' must be >= 1; got 0"),
    ("phases.1.distill.lr=0", r"distill\.lr' must be > 0; got 0"),
    ("phases.1.distill.ply=3", r"distill\.ply' must be <= 2; got 3"),
    ("phases.1.distill.margin=-1", r"distill\.margin' must be > 0"),
    ("phases.1.distill.rank_weight=-2", r"distill\.rank_weight' must be >= 0; got -2"),
    ("+phases.1.distill.rounds=2", r"unknown config key\(s\) in 'phases\[1\]\.distill': rounds"),
    ("phases.1.until=200", r"'phases\[1\] \(fit-to-search\)\.until' must be 150, where the phase before it ends"),
    ("+phases.1.train.lam=0.5", r"a distill phase plays no games"),
    ("phases.1.name='fit to search'", r"must be a name of letters, digits"),
])
def test_a_distill_phase_that_cannot_run_is_refused_naming_the_key(recipes, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(composed(recipes, override))


def test_two_distill_phases_of_one_name_and_a_teacher_not_a_spec_are_refused(recipes):
    raw = load_config(composed(recipes)).to_dict()
    raw["phases"].insert(2, dict(raw["phases"][1]))
    with pytest.raises(ConfigError, match="another distill phase is named 'fit-to-search'"):
        load_config(raw)
    raw = load_config(composed(recipes)).to_dict()
    raw["phases"][1]["distill"]["teacher"] = 3
    with pytest.raises(ConfigError, match=r"distill\.teacher' must be a bot spec"):
        load_config(raw)


# --------------------------------------------------------------------------------------------
# Running, resuming


def test_a_recipe_fits_its_net_to_its_own_search_between_two_td_phases(recipes, tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    fits = []

    def watched_fit(net, *args, **kwargs):  # the net before and after the phase's fit
        before = {k: v.clone() for k, v in net.state_dict().items()}
        finished = distill_module.fit(net, *args, **kwargs)
        fits.append((before, {k: v.clone() for k, v in net.state_dict().items()}))
        return finished

    monkeypatch.setattr("bgnet.train.distill_phase.fit", watched_fit)
    summary = train(composed(recipes, "eval.every=1000", "eval.games=4", "eval.opponents=[random]"), run_dir)
    assert summary["games"] >= 300
    labels = run_dir / "labels" / "fit-to-search"
    assert shard_path(labels, 0).exists() and shard_path(labels, 1).exists()
    assert read_settings(labels).teacher == str(labels / "start.pt")  # the run's own net was the teacher
    data = latest(run_dir)
    assert data["distilled"] == [1]
    done = [h for h in data["history"] if "distilled" in h]
    assert [h["phase"] for h in done] == ["phase 2/3 fit-to-search"] and 150 <= done[0]["games"] < 150 + 32
    assert done[0]["distilled"]["samples"] > 0
    assert [h["phase"] for h in data["history"] if h.get("begins")] == ["phase 3/3 td0"]
    after = data["history"][data["history"].index(done[0]) + 1]  # evaluated at once: its gain on the curve
    assert "eval" in after and after["games"] == done[0]["games"] and after["eval"]["random"]["games"] == 4
    said = capsys.readouterr().out  # the lines above the bar (the command also logs them to app.log)
    assert "fit-to-search: labelling: shard 2/2 written" in said and "fit-to-search: fitting: pass 1/1" in said
    # One fit, from the net kept at the phase's start, and it moved the net.
    assert len(fits) == 1
    before, after = fits[0]
    assert same(before, load_checkpoint(labels / "start.pt")["net_state"])
    assert not same(before, after)


def test_a_run_stopped_in_its_distill_phase_finishes_it_without_labelling_again(recipes, tmp_path, monkeypatch):
    """Stopped by a fit that fails after the labelling, the run keeps its shards; resumed, it fits
    from the phase's start without writing a shard again, goes on to its end, and a run resumed
    after that does not distill again."""
    run_dir = tmp_path / "run"

    def broken_fit(*args, **kwargs):
        raise RuntimeError("stopped in the fit")

    monkeypatch.setattr(distill_module, "fit", broken_fit)
    monkeypatch.setattr("bgnet.train.distill_phase.fit", broken_fit)
    with pytest.raises(RuntimeError, match="stopped in the fit"):
        train(composed(recipes), run_dir)
    monkeypatch.undo()
    labels = run_dir / "labels" / "fit-to-search"
    shards = [shard_path(labels, k) for k in range(2)]
    written = [p.stat().st_mtime_ns for p in shards]
    stopped = latest(run_dir)
    assert 150 <= stopped["games"] < 300 and stopped["distilled"] == []

    resume = f"resume={run_dir / 'checkpoints' / 'latest.pt'}"
    train(composed(recipes, resume), run_dir, overrides=[resume])
    assert [p.stat().st_mtime_ns for p in shards] == written  # the shards were not labelled again
    data = latest(run_dir)
    assert data["distilled"] == [1] and data["games"] >= 300
    assert [h["phase"] for h in data["history"] if "distilled" in h] == ["phase 2/3 fit-to-search"]

    # Once done, the phase is not run again: a longer run goes on with self-play alone.
    start_mtime = (labels / "start.pt").stat().st_mtime_ns
    raw = load_config(composed(recipes)).to_dict()
    raw["phases"][2]["until"] = raw["train"]["games"] = 400
    raw["resume"] = str(run_dir / "checkpoints" / "latest.pt")
    train(raw, run_dir, overrides=[])
    data = latest(run_dir)
    assert data["games"] >= 400 and data["distilled"] == [1]
    assert [h["phase"] for h in data["history"] if "distilled" in h] == ["phase 2/3 fit-to-search"]
    assert (labels / "start.pt").stat().st_mtime_ns == start_mtime


def test_a_distill_phase_at_the_end_of_a_finished_run_still_runs(recipes, tmp_path):
    """Appending a distill phase to a recipe whose games are all played: the run fits and ends."""
    run_dir = tmp_path / "run"
    train(composed(recipes, "train.games=140"), run_dir)
    raw = load_config(composed(recipes)).to_dict()
    raw["phases"] = raw["phases"][:2]
    raw["resume"] = str(run_dir / "checkpoints" / "latest.pt")
    before = latest(run_dir)
    games = before["games"]
    raw["phases"][0]["until"] = raw["phases"][1]["until"] = games
    raw["train"]["games"] = 0
    summary = train(raw, run_dir, overrides=[])
    assert not summary.get("already_reached")
    data = latest(run_dir)
    assert data["games"] == games and data["distilled"] == [1]
    assert not same(before["net_state"], data["net_state"])


def test_a_stop_in_the_labelling_keeps_the_shards_written_and_the_net_as_it_was(recipes, tmp_path):
    """Stopped after its first shard, the phase hands back the net of its start; run again, it
    labels only the shard that is missing, then fits."""
    from bgnet.nn.model import ValueNet
    from bgnet.train.distill_phase import DistillPhase

    run = load_config(composed(recipes))
    net = ValueNet(encoding="contact", hidden=[16])
    start = {k: v.clone() for k, v in net.state_dict().items()}
    phase = DistillPhase(run, 1, tmp_path / "run")
    said: list[str] = []
    assert phase.run(net, 150, say=said.append, stop=lambda: True) is None
    assert shard_path(phase.folder, 0).exists() and not shard_path(phase.folder, 1).exists()
    assert same(start, net.state_dict())
    first = shard_path(phase.folder, 0).stat().st_mtime_ns
    said.clear()
    reached = phase.run(net, 150, say=said.append, stop=lambda: False)
    assert reached is not None and reached["samples"] > 0
    assert [line for line in said if "written" in line] == ["labelling: shard 2/2 written"]
    assert shard_path(phase.folder, 0).stat().st_mtime_ns == first
    assert not same(start, net.state_dict())


# --------------------------------------------------------------------------------------------
# A student: a fresh net of another shape, fitted to the labels of earlier phases


STUDENT = {"teacher": "", "ply": 0, "shards": 0, "also": ["fit-to-search"], "epochs": 1, "lr": 0.001,
           "batch_size": 32, "student": {"encoding": "contact", "hidden": [8], "split": True, "race_hidden": [4]}}


def with_student(recipes, student=None):
    """The tiny recipe with a student phase after its fit, as a checkpoint would record it."""
    raw = load_config(composed(recipes)).to_dict()
    raw["phases"].insert(2, {"name": "student", "until": 150, "distill": dict(STUDENT, **(student or {}))})
    return raw


def test_a_student_phase_loads_back_the_same_and_its_mistakes_are_refused(recipes):
    run = load_config(with_student(recipes))
    d = run.phases[2].distill
    assert d is not None and d.also == ["fit-to-search"] and d.student is not None
    assert (d.student.hidden, d.student.split, d.student.race_hidden) == ([8], True, [4])
    assert load_config(run.to_dict()) == run
    for change, message in [
        ({"also": ["nosuch"]}, r"distill\.also' must be a list of the names of distill phases before this one "
                               r"\(fit-to-search\); got \['nosuch'\]"),
        ({"also": []}, r"distill\.shards' must be >= 1; got 0"),
        ({"student": {"hidden": [8], "width": 3}},
         r"unknown config key\(s\) in 'phases\[2\]\.distill\.student': width"),
        ({"student": {"encoding": "nosuch"}}, r"in phases\[2\] \(student\)\.distill\.student: .*model\.encoding"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_config(with_student(recipes, change))


def test_a_student_phase_fits_a_fresh_net_of_its_shape_and_leaves_the_runs_own(recipes, tmp_path):
    from bgnet.nn.checkpoint import load_net
    from bgnet.nn.model import ValueNet
    from bgnet.train.distill_phase import DistillPhase

    run = load_config(with_student(recipes))
    run_dir = tmp_path / "run"
    net = ValueNet(encoding="contact", hidden=[16])
    assert DistillPhase(run, 1, run_dir).run(net, 150, say=lambda _: None, stop=lambda: False) is not None
    fitted = {k: v.clone() for k, v in net.state_dict().items()}
    said: list[str] = []
    phase = DistillPhase(run, 2, run_dir)
    reached = phase.run(net, 150, say=said.append, stop=lambda: False)
    assert reached is not None and reached["student"] == str(run_dir / "student.pt")
    labelled = len(load_labels(run_dir / "labels" / "fit-to-search"))
    assert reached["samples"] == labelled  # its own shards: none; the earlier phase's: all
    assert not any("labelling" in line for line in said)
    assert same(fitted, net.state_dict())  # the run's own net is untouched
    student, _ = load_net(run_dir / "student.pt")
    config = student.config()
    assert config["contact"]["hidden"] == [8] and config["race"]["hidden"] == [4]
    again = DistillPhase(run, 2, tmp_path / "again")  # the same phase, seeded alike, fits alike
    (tmp_path / "again" / "labels").mkdir(parents=True)
    (tmp_path / "again" / "labels" / "fit-to-search").symlink_to(run_dir / "labels" / "fit-to-search")
    assert again.run(net, 150, say=lambda _: None, stop=lambda: False) is not None
    assert same(load_net(tmp_path / "again" / "student.pt")[0].state_dict(), student.state_dict())


def test_a_run_that_made_a_student_ends_by_measuring_it_beside_its_own_net(recipes, tmp_path, capsys):
    raw = with_student(recipes)
    raw["eval"].update(final_games=6, opponents=["random"], error_rate=False)
    summary = train(load_config(raw), tmp_path / "run")
    student = tmp_path / "run" / "student.pt"
    assert summary["student"] == str(student) and summary["student_eval"]["random"]["games"] == 6
    assert summary["final_eval"]["random"]["games"] == 6  # the run's own net, as before
    entry = latest(tmp_path / "run")["history"][-1]  # on the run's record, apart from its own curve
    assert entry["student"] == str(student) and entry["student_eval"] == summary["student_eval"]
    assert "eval" not in entry
    assert f"the student {student}: [" in capsys.readouterr().out


def test_the_expert_recipe_ends_in_a_one_layer_student_taught_by_both_search_phases():
    from hydra import compose, initialize_config_dir

    from bgnet.resources import config_dir
    from bgnet.train.learn import build_net

    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        run = load_config(compose(config_name="train", overrides=["+recipe=expert"]))
    distills = [p for p in run.phases if p.distill is not None]
    assert [p.name for p in distills] == ["student-0", "search-1", "search-2", "student"]
    assert all(p.until == run.train.games for p in distills)  # after the last game of TD
    searches = [p.distill for p in distills[1:3]]
    assert [(d.teacher, d.ply, d.prune) for d in searches] == [("", 1, "student-0"), ("", 1, "student-0")]
    student = distills[-1].distill
    assert student.also == ["search-1", "search-2"] and student.shards == 0 and student.start == "student-0"
    assert student.rank_weight > 0 and all(d.rank_weight == 0 for d in searches)  # the order, for the student
    assert student.student is not None
    config = build_net(student.student).config()  # one hidden layer in each part: a fast net
    assert len(config["contact"]["hidden"]) == 1 and len(config["race"]["hidden"]) == 1
    assert run.model.hidden == [256, 256, 256]  # taught by the deep net


def test_a_later_phase_prunes_with_an_earlier_student_and_a_student_goes_on_from_another(recipes, tmp_path,
                                                                                          monkeypatch):
    from bgnet.nn.model import ValueNet
    from bgnet.train.distill_phase import DistillPhase

    raw = with_student(recipes)
    searched = {"teacher": "", "ply": 1, "shards": 2, "per_shard": 24, "epochs": 1, "lr": 0.001, "batch_size": 32,
                "prune": "student"}
    raw["phases"][3:3] = [{"name": "searched", "until": 150, "distill": searched},
                          {"name": "student-b", "until": 150, "distill": dict(STUDENT, start="student")}]
    run = load_config(raw)
    run_dir = tmp_path / "run"
    net = ValueNet(encoding="contact", hidden=[16])
    for i in (1, 2):
        assert DistillPhase(run, i, run_dir).run(net, 150, say=lambda _: None, stop=lambda: False) is not None
    searching = DistillPhase(run, 3, run_dir)
    assert searching.run(net, 150, say=lambda _: None, stop=lambda: False) is not None
    teacher = read_settings(searching.folder).teacher  # the run's net at 1-ply, pruned by the student
    assert teacher == f"{searching.start},prune={run_dir / 'student.pt'}"
    starts = []

    def watched_fit(student, *args, **kwargs):
        starts.append({k: v.clone() for k, v in student.state_dict().items()})
        return distill_module.fit(student, *args, **kwargs)

    monkeypatch.setattr("bgnet.train.distill_phase.fit", watched_fit)
    assert DistillPhase(run, 4, run_dir).run(net, 150, say=lambda _: None, stop=lambda: False) is not None
    assert same(starts[0], load_checkpoint(run_dir / "student.pt")["net_state"])  # not random weights


@pytest.mark.parametrize("change, message", [
    ({"prune": "fit-to-search"}, r"distill\.prune' must name an earlier student phase, whose net prunes the "
                                 r"teacher's search \(none\); got 'fit-to-search'"),
    ({"start": "student"}, r"distill\.start' is for a student phase"),
])
def test_prune_and_start_must_name_an_earlier_student(recipes, change, message):
    raw = load_config(composed(recipes)).to_dict()
    raw["phases"][1]["distill"].update(change)
    with pytest.raises(ConfigError, match=message):
        load_config(raw)


def test_a_student_goes_on_only_from_an_earlier_student_of_its_shape(recipes):
    raw = with_student(recipes)
    other = dict(STUDENT, start="student", student={"encoding": "contact", "hidden": [12]})
    raw["phases"].insert(3, {"name": "wider", "until": 150, "distill": other})
    with pytest.raises(ConfigError, match=r"distill\.start' must name an earlier student phase of the same shape"):
        load_config(raw)


def test_the_compute_of_a_phase_counts_the_child_processes_it_finished():
    import subprocess
    import sys

    from bgnet.train.state import Clock

    clock = Clock({"cpu_seconds": 0.0, "wall_seconds": 0.0})
    counted = clock.counting_children()
    subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                    "while time.process_time() - t < 0.5: pass"], check=True)
    mine = clock.spent(0.0)["cpu_seconds"]
    counted()
    assert clock.spent(0.0)["cpu_seconds"] - mine >= 0.45  # the child's half second, and no less
