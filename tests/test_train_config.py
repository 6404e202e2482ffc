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


# What each shipped run sets beyond the schema's defaults, as these runs composed before the
# group options were cut down to their differences from the schema (every default is stated once,
# in bgnet/train/config.py): the configs themselves must not have changed. (A phase's ``distill``
# is the schema's None: the shipped recipes' phases are all self-play.)
DEEP_NET = {"model.encoding": "contact", "model.hidden": [256, 256, 256],
            "model.activation": ["sigmoid", "relu", "relu"], "model.split": True,
            "model.race_hidden": [128], "model.race_activation": "sigmoid"}
EXTENDED_NET = {"model.encoding": "extended", "model.hidden": [128], "model.race_hidden": [64],
                "model.split": True}
SGD = {"optim.name": "sgd", "optim.lr": 0.1, "optim.lr_final": None}
RECIPE = {**DEEP_NET, "train.games": 0, "train.checkpoint_every": 25000, "train.log_every": 5000,
          "optim.lr": 0.0003, "optim.lr_final": 0.0003, "eval.games": 2000, "eval.final_games": 20000,
          "eval.previous": False}
QUICK = {**RECIPE, "seed": 7, "eval.every": 100000, "eval.first": 10000, "eval.opponents": ["pubeval"], "phases": [
    {"name": "warm-up", "until": 100000, "train": {"lam": 0.7, "move_filter": 0},
     "optim": {"lr": 0.0003, "lr_final": 0.0003}, "distill": None},
    {"name": "td-lambda", "until": 450000, "train": {"lam": 0.7, "move_filter": 8},
     "optim": {"lr": 0.0003, "lr_final": 3e-05}, "distill": None}]}
DEEP = {**RECIPE, "seed": 2026, "eval.every": 250000, "eval.opponents": ["pubeval", "gnubg:0"],
        "eval.error_rate": True, "phases": [
            {"name": "warm-up", "until": 300000, "train": {"lam": 0.7, "move_filter": 0},
             "optim": {"lr": 0.0003, "lr_final": 0.0003}, "distill": None},
            {"name": "td-lambda", "until": 3000000, "train": {"lam": 0.7, "move_filter": 8},
             "optim": {"lr": 0.0003, "lr_final": 5e-05}, "distill": None},
            {"name": "lower-lambda", "until": 5500000, "train": {"lam": 0.4, "move_filter": 8},
             "optim": {"lr": 5e-05, "lr_final": 2e-05}, "distill": None},
            {"name": "td0-anneal", "until": 8000000, "train": {"lam": 0.0, "move_filter": 8},
             "optim": {"lr": 2e-05, "lr_final": 1e-06}, "distill": None}]}
COMPOSED = {
    (): {},
    ("model=h80",): {},
    ("model=h160",): {"model.hidden": [160]},
    ("model=extended",): EXTENDED_NET,
    ("optim=adam",): {},
    ("optim=sgd",): SGD,
    ("model=extended", "optim=sgd"): {**EXTENDED_NET, **SGD},
    ("+recipe=quick",): QUICK,
    ("+recipe=deep",): DEEP,
    ("+recipe=quick", "model=h160"): QUICK,  # a recipe's net wins over the group's option
    ("+recipe=deep", "optim=sgd"): {**DEEP, "optim.name": "sgd"},  # the recipe's rates stay
    ("+experiment=strong_cpu",): {
        **EXTENDED_NET, "train.games": 150000, "train.checkpoint_every": 25000,
        "train.keep_checkpoints": 80, "optim.lr_final": 0.0009475, "eval.every": 25000,
        "eval.opponents": ["pubeval"]},
    ("+experiment=gpu_h200",): {
        **EXTENDED_NET, "device": "cuda", "train.games": 5000000, "train.parallel_games": 16384,
        "train.batch_size": 2048, "train.buffer_positions": 65536, "train.checkpoint_every": 100000,
        "train.threads": 8, "optim.lr": 0.003, "optim.lr_final": 0.0003, "eval.every": 250000,
        "eval.games": 2000, "eval.final_games": 20000, "eval.opponents": ["pubeval"]},
}


def flat(tree: dict, prefix: str = "") -> dict:
    """``{"model": {"hidden": [80]}}`` -> ``{"model.hidden": [80]}`` (lists stay values)."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


@pytest.mark.parametrize("overrides", list(COMPOSED), ids=lambda o: " ".join(o) or "train")
def test_each_shipped_run_composes_to_the_schema_with_its_own_settings(overrides):
    from omegaconf import OmegaConf

    composed = flat(OmegaConf.to_container(compose_train(*overrides), resolve=True))
    expected = {**flat(dataclasses.asdict(RunConfig())), **COMPOSED[overrides]}
    assert composed == expected
    # The same types too: a float default stays a float, a count an int.
    assert {k: type(v) for k, v in composed.items()} == {k: type(v) for k, v in expected.items()}


def test_each_group_option_sets_only_what_differs_from_the_schema():
    """Every default is stated once, in the schema: an option of the model or optim group that
    restated one would say it twice (and could drift from it)."""
    import yaml

    for group in ("model", "optim"):
        defaults = dataclasses.asdict(getattr(RunConfig(), group))
        for path in sorted((CONFIG_DIR / group).glob("*.yaml")):
            given = yaml.safe_load(path.read_text()) or {}
            same = sorted(k for k, v in given.items() if k in defaults and v == defaults[k])
            assert not same, f"{group}/{path.name} restates the schema's defaults of {same}"


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
