"""The training config: the typed schema (the one home of every key's default), the YAML files
composed on it, and ``bgnet train --help``."""
from __future__ import annotations

import dataclasses
import re

import pytest

from bgnet.cli.train import train_main
from bgnet.train.compose import CONFIG_DIR, compose_run
from bgnet.train.config import ConfigError, RunConfig, load_config

EXPERIMENTS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))


def compose_train(*overrides):
    """The config ``bgnet train OVERRIDES`` composes (a mistyped one raises ConfigError)."""
    return compose_run(list(overrides))[0]


def test_the_default_run_is_the_schemas_defaults():
    """train.yaml's presets (model h80, optim adam) change none of the schema's defaults."""
    assert load_config(compose_train()) == RunConfig()


def test_the_composed_config_has_every_key_of_the_schema():
    composed = compose_train()
    for section in ("model", "optim", "train", "eval", "ray"):
        fields = {f.name for f in dataclasses.fields(getattr(RunConfig(), section))}
        assert fields == set(composed[section]), section


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_each_experiment_composes_and_validates(name):
    import torch

    composed = compose_train(f"+experiment={name}")
    # A GPU preset is checked here as the CPU run it becomes with device=cpu.
    device = [] if composed.device == "cpu" or torch.cuda.is_available() else ["device=cpu"]
    run = load_config(compose_train(f"+experiment={name}", *device))
    assert run.model.encoding in ("extended", "contact") and run.train.games > RunConfig().train.games


def test_the_experiments_are_the_presets_a_user_can_run():
    """The hand-run stages gave way to the recipes (their history: docs/HISTORY.md); what stays
    are presets, each standalone: its defaults list picks groups (model, optim), never another
    experiment."""
    import yaml

    assert EXPERIMENTS == ["gpu_h200", "strong_cpu"]
    for name in EXPERIMENTS:
        defaults = yaml.safe_load((CONFIG_DIR / "experiment" / f"{name}.yaml").read_text()).get("defaults", [])
        for entry in defaults:
            assert isinstance(entry, dict) and all(k.startswith("override /") for k in entry), (name, entry)


@pytest.mark.parametrize("override, key", [
    ("train.lam=2", "train.lam"), ("train.lam=abc", "train.lam"), ("model.hidden=abc", "model.hidden"),
    ("train.games=0", "train.games"),
    ("model.encoding=nope", "model.encoding"), ("train.mode=fast", "train.mode"),
    ("eval.games=3", "eval.games"), ("train.fast_cpu=maybe", "train.fast_cpu"),
    ("model.hidden=[0]", "model.hidden"), ("optim.name=rmsprop", "optim.name"),
    ("+train.lamda=0.5", "train"), ("+colour=red", "colour"), ("ray.workers=0", "ray.workers"),
    ("device=tpu", "device"), ("train.search_target=1.5", "train.search_target"),
    ("optim.decay_start=-5", "optim.decay_start"), ("optim.decay_start=0.5", "optim.decay_start"),
    ("train.move_filter=-1", "train.move_filter"), ("train.move_filter=2.5", "train.move_filter"),
    ("optim.new_inputs_from=-1", "optim.new_inputs_from"),
    ("optim.new_inputs_lr_scale=0", "optim.new_inputs_lr_scale"),
    ("train.learn=contact", "train.learn"), ("train.race_starts=1", "train.race_starts"),
    ("train.race_starts=-0.5", "train.race_starts"),
])
def test_bad_values_and_unknown_keys_name_their_key(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(compose_train(override))


@pytest.mark.parametrize("argv, words", [
    (["recipe=quick"], "recipe=quick: the recipe group is added to the config with a +, as +recipe=quick"),
    (["--games", "10"], "did you mean train.games=10?"),
    (["--seed=3"], "did you mean seed=3?"),
    (["--lr", "0.1"], "did you mean optim.lr=0.1?"),
])
def test_the_usual_slips_get_the_override_meant(argv, words):
    from bgnet.errors import BadArgument

    with pytest.raises(BadArgument, match=re.escape(words)):
        train_main(argv)


def test_config_errors_are_bad_arguments():
    from bgnet.errors import BadArgument

    assert issubclass(ConfigError, BadArgument) and ConfigError("x").exit_code == 2


def test_distributed_ray_needs_batched_mode():
    with pytest.raises(ConfigError, match="train.mode=batched"):
        load_config(compose_train("distributed=ray", "train.mode=online"))


def test_the_move_filter_needs_batched_self_play_on_the_cpu():
    with pytest.raises(ConfigError, match="train.move_filter"):
        load_config(compose_train("train.move_filter=8", "train.mode=online"))


def test_race_starts_need_batched_self_play():
    with pytest.raises(ConfigError, match="train.race_starts"):
        load_config(compose_train("train.race_starts=0.5", "train.mode=online"))


def test_learning_from_races_alone_needs_a_split_net():
    with pytest.raises(ConfigError, match="train.learn=race"):
        load_config(compose_train("train.learn=race"))
    load_config(compose_train("train.learn=race", "model.split=true"))


def test_a_scaled_rate_for_new_inputs_needs_batched_mode():
    with pytest.raises(ConfigError, match="optim.new_inputs_from"):
        load_config(compose_train("optim.new_inputs_from=221", "train.mode=online"))


def test_help_explains_resume_and_the_config_groups(capsys):
    assert train_main(["--help"]) == 0
    out = capsys.readouterr().out
    for words in ("resume=", "model=", "optim=", "+experiment=", "distributed=ray", "Examples:",
                  "h160", "strong_cpu", "gpu_h200", "deep", "quick", "refused", "optim.name"):
        assert words in out, words
    assert "bgnet train resume=runs/" in out


def test_help_says_how_long_the_quick_recipe_takes_with_ray_and_without(capsys):
    """Half an hour is the recipe's time with distributed=ray on two cores; in one process it
    takes twice as long, and the help says both."""
    assert train_main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("quick (a strong bot: about half an hour of two cores with distributed=ray, about an "
            "hour in one process without it)") in out
    assert "bgnet train +recipe=quick # the same in one process: about an hour" in out
    assert "bgnet train +recipe=quick distributed=ray # a strong bot in about half an hour (2 cores)" in out


def test_a_bad_value_on_the_command_line_makes_no_run_folder(tmp_path):
    """The config is checked before its run folder is made: a typo leaves nothing behind."""
    run = tmp_path / "run"
    with pytest.raises(ConfigError, match=r"train\.games"):
        train_main(["train.games=-5", f"hydra.run.dir={run}"])
    assert not run.exists()
