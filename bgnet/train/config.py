"""The training config: one typed schema, the one home of every key's default and meaning,
checked once before anything runs.

The schema is registered with Hydra (:data:`SCHEMA`) as the base of ``configs/train.yaml``, which
adds the default presets of its groups (``model/``, ``optim/``) and nothing else; recipes
(``recipe/``) and presets (``experiment/``) set what differs. Hydra composes them with the
command line's overrides into a ``DictConfig``; :func:`load_config` turns that into a
:class:`RunConfig` of plain dataclasses, and the trainer reads typed fields from it alone. Each
field's line below says what it does. A key the schema does not know, a missing mandatory value
or a value out of range raises :class:`ConfigError`, whose message names the key.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf

from bgnet.errors import BadArgument
from bgnet.nn.encode import ENCODINGS
from bgnet.nn.model import ACTIVATIONS


class ConfigError(BadArgument):
    """A config value that cannot be used; the message names the key (exit code 2)."""


@dataclass
class ModelConfig:
    encoding: str = "tesauro"  # input encoding of the value net (bgnet.nn.encode.ENCODINGS)
    hidden: list[int] = field(default_factory=lambda: [80])  # hidden layer widths (contact net when split)
    activation: Any = "sigmoid"  # hidden units' activation, or a list of one per layer (bgnet.nn.model.ACTIVATIONS)
    split: bool = False  # separate nets for contact and race positions
    race_hidden: list[int] | None = None  # race net's widths when split (None: same as hidden)
    race_activation: Any = None  # race net's activation(s) when split (None: as activation)


@dataclass
class OptimConfig:
    name: str = "adam"  # adam | sgd; a resumed run keeps its checkpoint's optimizer kind
    lr: float = 0.001  # learning rate at game 0
    lr_final: float | None = 0.0002  # linear decay to this by train.games (None: constant lr)
    decay_start: int = 0  # games (counted from zero) before which the rate stays at lr
    weight_decay: float = 0.0  # L2 penalty of the optimizer
    new_inputs_from: int = 0  # first input whose first-layer weights step new_inputs_lr_scale x as far (0: none)
    new_inputs_lr_scale: float = 1.0  # e.g. 10 for the inputs a grown net has yet to learn (bgnet widen --encoding)


@dataclass
class TrainConfig:
    mode: str = "batched"  # batched: parallel games, λ-returns, minibatches | online: per-move TD(λ)
    games: int = 30000  # total self-play games from zero (a resumed run counts its past; a recipe's 0: its end)
    parallel_games: int = 512  # games in flight at once in one self-play pool
    lam: float = 0.7  # λ of TD(λ)
    epsilon: float = 0.0  # chance a self-play move explores (its position still learns the greedy value)
    explore_top: int = 0  # an exploring move is one of the 2nd..K-th best (0: any legal move)
    batch_size: int = 64  # positions in one minibatch update
    buffer_positions: int = 2048  # positions gathered before a round of updates
    epochs: int = 1  # passes over each gathered buffer
    loss: str = "mse"  # mse | bce (on the five probabilities)
    fast_cpu: bool = True  # on the CPU, mse updates in compiled code when the net allows it
    bearoff: bool = True  # a game ends at its first bear-off position, the database its target
    search_target: float = 0.0  # weight of the 1-ply value in each target (0: plain λ-returns)
    move_filter: int = 0  # contact moves per position the net values in full in self-play, picked
    #                       by a readout of its first hidden layer (0: all; CPU, compiled pass)
    race_starts: float = 0.0  # chance a fresh self-play game begins where an earlier one broke
    #                           contact, not at the opening: races for a split net's race half
    learn: str = "all"  # positions learned from: all | race (a split net's race half alone learns,
    #                    its contact half stays exactly as it is)
    max_plies: int = 1000  # a game still running after this many plies is dropped
    checkpoint_every: int = 10000  # games between checkpoints
    keep_checkpoints: int = 20  # numbered checkpoints kept (older ones are deleted)
    log_every: int = 1000  # games between TensorBoard scalars
    threads: int = 1  # torch/numba threads of the learner (0: every core)


@dataclass
class EvalConfig:
    every: int | None = None  # games between evaluations (None: a tenth of the run, at least 500; 0: only at the end)
    games: int = 400  # games per opponent in periodic evaluations (even: duplicate dice)
    first: int = 0  # games at which one short evaluation comes before the first periodic one (0: none)
    first_games: int = 400  # games per opponent of that first evaluation (even)
    final_games: int = 2000  # games per opponent at the end (0: none)
    opponents: list[str] = field(default_factory=lambda: ["random", "pubeval"])  # bot specs
    previous: bool = True  # also play this run's previous numbered checkpoint
    error_rate: bool = False  # also measure the 0-ply error rate on `bgnet bench er` (a few seconds)


@dataclass
class RayConfig:
    address: str | None = None  # None: a local Ray instance; "auto" or "HOST:PORT" of a cluster
    workers: int = 2  # self-play actors
    games_per_task: int = 256  # games one self-play task plays before it reports back
    worker_threads: int = 1  # torch/numba threads (and Ray CPUs) of each worker
    max_worker_failures: int = 100  # worker deaths tolerated in one run (each is replaced)


# The keys a recipe's phase may set: what can change between two games of one run. The net's
# architecture, the pool's size and the game's rules for training (bear-off cut, ply limit) stay.
PHASE_KEYS = {
    "train": ("lam", "epsilon", "explore_top", "batch_size", "buffer_positions", "epochs", "loss",
              "search_target", "move_filter", "race_starts", "learn"),
    "optim": ("lr", "lr_final", "weight_decay", "new_inputs_from", "new_inputs_lr_scale"),
}


@dataclass
class DistillConfig:
    """A phase that plays no games: the net fitted to a teacher's search (:mod:`bgnet.train.distill_phase`)."""
    teacher: str = ""  # bot spec whose search labels ("": the run's own net at the phase's start)
    ply: int = 1  # depth of the teacher's values: 0 its net, 1 or 2 its search
    shards: int = 1  # shards of labels drawn (bgnet label's --shards; 0 with ``also``: none of its own)
    per_shard: int = 2048  # decisions of self-play in one shard
    keep: int = 5  # candidates of a decision: the teacher's 0-ply best ``keep`` ...
    margin: float = 0.16  # ... within ``margin`` equity of the best
    explore: float = 0.0  # chance that a self-play move of the labelling is a random legal one
    workers: int = 1  # labelling processes (in this process's machine, also with distributed=ray)
    epochs: int = 4  # passes of the fit over the labels (a fresh Adam; a tenth of the decisions held out)
    lr: float = 0.0002  # the fit's learning rate at its first step ...
    lr_final: float | None = None  # ... falling linearly to this by its last (None: constant)
    batch_size: int = 256  # samples in one step of the fit
    rank_weight: float = 0.0  # weight of the order of each decision's candidates in the fit's loss (0: none)
    also: list[str] = field(default_factory=list)  # earlier distill phases whose labels are fitted too
    student: ModelConfig | None = None  # a net of this shape is fitted instead of the run's, kept as <run>/<name>.pt
    start: str = ""  # a student phase: the earlier student phase whose net it goes on from ("": random weights)
    prune: str = ""  # an earlier student phase whose net prunes the teacher's deeper plies ("": none)


@dataclass
class Phase:
    name: str = ""  # what the phase does, in a word or two (the progress bar and the logs show it)
    until: int = 0  # games (counted from zero) at which the phase ends and the next begins
    train: dict[str, Any] = field(default_factory=dict)  # train.* keys of PHASE_KEYS for this phase
    optim: dict[str, Any] = field(default_factory=dict)  # optim.* keys: lr falls linearly to lr_final over the phase
    distill: DistillConfig | None = None  # instead of self-play: a fit to a teacher's search, at ``until`` games


@dataclass
class RunConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    seed: int = 0  # seeds the net's initial weights, the dice and the minibatch order
    device: str = "cpu"  # cpu, cuda, cuda:N or auto (the learner's; Ray workers play on CPU)
    resume: str | None = None  # checkpoint to continue from (its run directory is reused)
    distributed: str = "none"  # none: self-play in this process | ray: on Ray actors
    progress: bool = True  # tqdm bar in the terminal
    phases: list[Phase] = field(default_factory=list)  # a recipe's phases in order (none: one run as configured)

    def to_dict(self) -> dict:
        """Plain nested dict (what checkpoints and ``config.yaml`` record)."""
        return dataclasses.asdict(self)


SECTIONS = {"model": ModelConfig, "optim": OptimConfig, "train": TrainConfig, "eval": EvalConfig,
            "ray": RayConfig}

SCHEMA = "train_schema"  # the schema's name in Hydra's config store (train.yaml's first default)


def register_schema() -> None:
    """Give Hydra the schema, so that ``train.yaml`` composes on it (done on import)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name=SCHEMA, node=RunConfig)


register_schema()


# --------------------------------------------------------------------------------------------
# DictConfig -> RunConfig


def load_config(cfg: DictConfig | dict | RunConfig) -> RunConfig:
    """The typed, checked config of ``cfg`` (a composed DictConfig, a plain dict or a RunConfig)."""
    raw = _plain(cfg)
    sections = {}
    for name, kind in SECTIONS.items():
        value = raw.get(name)
        if value is None and name != "ray":
            raise ConfigError(f"config section '{name}' is missing")
        sections[name] = _build(kind, value or {}, name)
    top = {f.name for f in dataclasses.fields(RunConfig)} - set(SECTIONS) - {"phases"}
    unknown = sorted(set(raw) - top - set(SECTIONS) - {"hydra", "experiment", "recipe", "phases"})
    if unknown:
        known = ", ".join(sorted(top | set(SECTIONS) | {"phases"}))
        raise ConfigError(f"unknown config key(s): {', '.join(unknown)}; known: {known}")
    phases = _phases(raw.get("phases") or [])
    if sections["train"].games == 0 and phases:  # a recipe runs to its last phase's end
        sections["train"].games = phases[-1].until
    run = RunConfig(**sections, **{k: raw[k] for k in top if k in raw}, phases=phases)
    check(run)
    return run


def _phases(raw: Any) -> list[Phase]:
    if not isinstance(raw, list):
        raise ConfigError(f"config key 'phases' must be a list of phases (name, until, train, optim); got {raw!r}")
    out = []
    for i, value in enumerate(raw):
        if isinstance(value, Phase):
            out.append(value)
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"config key 'phases[{i}]' must be a mapping (name, until, train, optim); got {value!r}")
        names = {f.name for f in dataclasses.fields(Phase)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ConfigError(f"unknown config key(s) in 'phases[{i}]': {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(names))}")
        fields: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in value.items()}
        if fields.get("distill") is not None and not isinstance(fields["distill"], DistillConfig):
            fields["distill"] = _build(DistillConfig, fields["distill"], f"phases[{i}].distill")
            student = fields["distill"].student
            if student is not None and not isinstance(student, ModelConfig):
                fields["distill"].student = _build(ModelConfig, dict(student), f"phases[{i}].distill.student")
        out.append(Phase(**fields))
    return out


def phase_index(run: RunConfig, games: int) -> int:
    """The index of the phase that the run's game number ``games`` belongs to (the last phase
    once every boundary is passed); 0 for a run without phases. A distill phase holds no game:
    it ends where it begins, so no game belongs to it."""
    for i, phase in enumerate(run.phases):
        if games < phase.until:
            return i
    return max(0, len(run.phases) - 1)


def phase_start(run: RunConfig, i: int) -> int:
    """The games at which phase ``i`` begins."""
    return run.phases[i - 1].until if i > 0 else 0


def in_phase(run: RunConfig, i: int) -> RunConfig:
    """The config a run trains with during phase ``i``: the phase's train and optim keys over
    the run's own, its learning rate falling from ``lr`` at the phase's start to ``lr_final`` at
    its end, and ``train.games`` the phase's end (a run may stop sooner: its own ``train.games``)."""
    if not run.phases:
        return run
    phase = run.phases[i]
    train = dataclasses.replace(run.train, **phase.train)
    train.games = phase.until
    optim = dataclasses.replace(run.optim, **phase.optim)
    optim.decay_start = phase_start(run, i)
    return dataclasses.replace(run, train=train, optim=optim)


def validate(cfg: DictConfig | dict) -> RunConfig:
    """Raise ConfigError for the first unusable value; returns the typed config."""
    return load_config(cfg)


def _plain(cfg: DictConfig | dict | RunConfig) -> dict:
    if isinstance(cfg, RunConfig):
        return cfg.to_dict()
    if isinstance(cfg, dict):
        return cfg
    try:
        plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except Exception as e:  # a missing mandatory value, an interpolation error
        raise ConfigError(f"config cannot be resolved: {e}") from None
    if not isinstance(plain, dict):
        raise ConfigError(f"a config is a mapping of sections, not a {type(plain).__name__}; "
                          "give it as key: value lines")
    return plain


def _build(kind, values: dict, section: str):
    if not isinstance(values, dict):
        raise ConfigError(f"config section '{section}' must be a mapping; got {values!r}")
    names = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"unknown config key(s) in '{section}': {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(names))}")
    return kind(**values)


# --------------------------------------------------------------------------------------------
# Checks


def check(run: RunConfig) -> None:
    """Raise ConfigError for the first field of ``run`` out of its range."""
    _check_model(run.model)
    _check_optim(run.optim)
    _check_train(run.train)
    _check_eval(run.eval)
    _check_ray(run)
    _choice("distributed", run.distributed, ["none", "ray"])
    _bool("progress", run.progress)
    _number("seed", run.seed, lo=0, integer=True)
    _check_device(run.device)
    uses_filter = run.train.move_filter or any(p.train.get("move_filter") for p in run.phases)
    if uses_filter and run.train.mode != "batched":
        raise ConfigError("config key 'train.move_filter' needs train.mode=batched (it runs in the "
                          f"compiled CPU pass of batched self-play); got train.mode={run.train.mode}")
    races = run.train.race_starts or any(p.train.get("race_starts") for p in run.phases)
    if races and run.train.mode != "batched":
        raise ConfigError("config key 'train.race_starts' needs train.mode=batched (the batched "
                          f"self-play pool keeps the race positions); got train.mode={run.train.mode}")
    learns_races = run.train.learn == "race" or any(p.train.get("learn") == "race" for p in run.phases)
    if learns_races and (run.train.mode != "batched" or not run.model.split):
        raise ConfigError("config key 'train.learn=race' trains the race half of a split net in batched "
                          f"self-play; got model.split={run.model.split}, train.mode={run.train.mode}")
    if run.phases and run.train.mode != "batched":
        raise ConfigError(f"a recipe's phases need train.mode=batched; got train.mode={run.train.mode}")
    _check_phases(run)
    if run.optim.new_inputs_from and run.train.mode != "batched":
        raise ConfigError("config key 'optim.new_inputs_from' needs train.mode=batched (it scales "
                          f"the steps of the minibatch learner); got train.mode={run.train.mode}")


def _check_phases(run: RunConfig) -> None:
    """Each phase's keys are ones a phase may set, its values pass the section's checks, and
    the boundaries rise; ``train.games`` of a recipe is at most its last boundary."""
    before = 0
    distills: set[str] = set()
    students: dict[str, ModelConfig] = {}
    for i, phase in enumerate(run.phases):
        where = f"phases[{i}]" + (f" ({phase.name})" if phase.name else "")
        if not isinstance(phase.name, str):
            raise ConfigError(f"config key '{where}.name' must be a word or two; got {phase.name!r}")
        if phase.distill is not None:
            _check_distill_phase(phase, where, before, sorted(distills), students)
            if phase.distill.student is not None:
                students[phase.name] = phase.distill.student
            if phase.name in distills:
                raise ConfigError(f"config key '{where}.name': another distill phase is named {phase.name!r}; "
                                  "each keeps its labels in a folder of its name")
            distills.add(phase.name)
            continue
        _number(f"{where}.until", phase.until, lo=before, lo_open=True, integer=True)
        before = phase.until
        for section, allowed in PHASE_KEYS.items():
            keys = getattr(phase, section)
            if not isinstance(keys, dict):
                raise ConfigError(f"config key '{where}.{section}' must be a mapping; got {keys!r}")
            bad = sorted(set(keys) - set(allowed))
            if bad:
                raise ConfigError(f"config key(s) '{where}.{section}.{', '.join(bad)}' cannot change "
                                  f"within a run; a phase may set {section}.{', '.join(allowed)}")
        try:
            checked = in_phase(run, i)
            _check_train(checked.train)
            _check_optim(checked.optim)
        except ConfigError as e:
            raise ConfigError(f"in {where}: {e}") from None
    if run.phases and run.train.games > run.phases[-1].until:
        raise ConfigError(f"config key 'train.games' is {run.train.games}, past the recipe's last phase "
                          f"(which ends at {run.phases[-1].until}): leave it out, or at most that")


def _check_distill_phase(phase: Phase, where: str, before: int, before_names: list[str],
                         students: dict[str, ModelConfig]) -> None:
    """A distill phase plays no games: it ends where the phase before it does (``before``), sets
    no self-play key, and its ``distill`` values are in range."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", phase.name):
        raise ConfigError(f"config key '{where}.name' must be a name of letters, digits, '.', '_' or '-' "
                          f"(a distill phase keeps its labels in a folder of its name); got {phase.name!r}")
    if phase.until != before:
        raise ConfigError(f"config key '{where}.until' must be {before}, where the phase before it ends: "
                          f"a distill phase plays no games; got {phase.until!r}")
    if phase.train or phase.optim:
        raise ConfigError(f"config key '{where}' sets train or optim keys, but a distill phase plays no "
                          "games: its fit's settings are in its 'distill' block")
    d, key = phase.distill, f"{where}.distill"
    assert d is not None
    if not isinstance(d.teacher, str):
        raise ConfigError(f"config key '{key}.teacher' must be a bot spec, or \"\" for the run's own net; "
                          f"got {d.teacher!r}")
    _number(f"{key}.ply", d.ply, lo=0, hi=2, integer=True)
    for name in ("per_shard", "keep", "workers", "epochs", "batch_size"):
        _number(f"{key}.{name}", getattr(d, name), lo=1, integer=True)
    _number(f"{key}.shards", d.shards, lo=0 if d.also else 1, integer=True)
    _number(f"{key}.margin", d.margin, lo=0, lo_open=True)
    _number(f"{key}.explore", d.explore, lo=0, hi=1, hi_open=True)
    _number(f"{key}.lr", d.lr, lo=0, lo_open=True)
    _number(f"{key}.rank_weight", d.rank_weight, lo=0)
    if d.lr_final is not None:
        _number(f"{key}.lr_final", d.lr_final, lo=0)
    if not isinstance(d.also, list) or not all(isinstance(n, str) and n in before_names for n in d.also):
        raise ConfigError(f"config key '{key}.also' must be a list of the names of distill phases before "
                          f"this one ({', '.join(before_names) or 'none'}); got {d.also!r}")
    if d.student is not None:
        try:
            _check_model(d.student)
        except ConfigError as e:
            raise ConfigError(f"in {key}.student: {e}") from None
    earlier = ", ".join(students) or "none"
    if d.prune and d.prune not in students:
        raise ConfigError(f"config key '{key}.prune' must name an earlier student phase, whose net prunes "
                          f"the teacher's search ({earlier}); got {d.prune!r}")
    if d.start:
        if d.student is None:
            raise ConfigError(f"config key '{key}.start' is for a student phase (one with a 'student' shape)")
        if d.start not in students or students[d.start] != d.student:
            raise ConfigError(f"config key '{key}.start' must name an earlier student phase of the same "
                              f"shape, whose net this one goes on from ({earlier}); got {d.start!r}")


def _check_model(m: ModelConfig) -> None:
    _choice("model.encoding", m.encoding, sorted(ENCODINGS))
    m.hidden = _widths("model.hidden", m.hidden)
    m.activation = _activations("model.activation", m.activation, len(m.hidden))
    if m.race_hidden is not None:
        m.race_hidden = _widths("model.race_hidden", m.race_hidden)
    _bool("model.split", m.split)
    if m.race_activation is not None or (m.split and not isinstance(m.activation, str)):
        race_layers = len(m.race_hidden if m.race_hidden is not None else m.hidden)
        race = m.race_activation if m.race_activation is not None else m.activation
        if m.race_activation is None and len(race) != race_layers:
            raise ConfigError(f"config key 'model.race_activation' is needed: model.activation names "
                              f"{len(race)} layers and the race net has {race_layers}")
        m.race_activation = _activations("model.race_activation", race, race_layers)


def _check_optim(o: OptimConfig) -> None:
    _choice("optim.name", o.name, ["adam", "sgd"])
    _number("optim.lr", o.lr, lo=0, lo_open=True)
    if o.lr_final is not None:
        _number("optim.lr_final", o.lr_final, lo=0)
    _number("optim.decay_start", o.decay_start, lo=0, integer=True)
    _number("optim.weight_decay", o.weight_decay, lo=0)
    _number("optim.new_inputs_from", o.new_inputs_from, lo=0, integer=True)
    _number("optim.new_inputs_lr_scale", o.new_inputs_lr_scale, lo=0, hi=1000, lo_open=True)


def _check_train(t: TrainConfig) -> None:
    _choice("train.mode", t.mode, ["batched", "online"])
    _choice("train.loss", t.loss, ["mse", "bce"])
    _choice("train.learn", t.learn, ["all", "race"])
    for key in ("fast_cpu", "bearoff"):
        _bool(f"train.{key}", getattr(t, key))
    for key in ("lam", "epsilon", "search_target"):
        _number(f"train.{key}", getattr(t, key), lo=0, hi=1)
    for key in ("games", "parallel_games", "batch_size", "buffer_positions", "epochs",
                "checkpoint_every", "keep_checkpoints", "log_every"):
        _number(f"train.{key}", getattr(t, key), lo=1, integer=True)
    _number("train.max_plies", t.max_plies, lo=10, integer=True)
    _number("train.threads", t.threads, lo=0, integer=True)
    _number("train.move_filter", t.move_filter, lo=0, integer=True)
    _number("train.explore_top", t.explore_top, lo=0, integer=True)
    _number("train.race_starts", t.race_starts, lo=0, hi=1, hi_open=True)
    if t.explore_top == 1:
        raise ConfigError("config key 'train.explore_top' must be 0 (any legal move) or at least 2 "
                          "(the 2nd to K-th best moves); got 1, which never explores")


def eval_every(run: RunConfig) -> int:
    """Games between a run's evaluations: ``eval.every``, or with null a tenth of the run (at
    least 500 games), so that every run's curve has points.

    >>> eval_every(RunConfig())
    3000
    """
    if run.eval.every is not None:
        return run.eval.every
    return max(500, run.train.games // 10)


def first_evaluation_at(run: RunConfig) -> int:
    """Games at which a run's first evaluation comes: ``eval.first`` where it comes before the
    first periodic one, else the first periodic one, else (``eval.every=0``) the run's end.

    >>> first_evaluation_at(RunConfig()), first_evaluation_at(RunConfig(eval=EvalConfig(first=500)))
    (3000, 500)
    """
    every = eval_every(run)
    periodic = every if every else run.train.games
    return run.eval.first if 0 < run.eval.first < periodic else periodic


def _check_eval(e: EvalConfig) -> None:
    if e.every is not None:
        _number("eval.every", e.every, lo=0, integer=True)
    _number("eval.games", e.games, lo=2, integer=True)
    _number("eval.final_games", e.final_games, lo=0, integer=True)
    _number("eval.first", e.first, lo=0, integer=True)
    _number("eval.first_games", e.first_games, lo=2, integer=True)
    for key in ("games", "final_games", "first_games"):
        if getattr(e, key) % 2:
            raise ConfigError(f"config key 'eval.{key}' must be even (games are played in duplicate "
                              f"pairs); got {getattr(e, key)}")
    if not isinstance(e.opponents, list) or not all(isinstance(o, str) for o in e.opponents):
        raise ConfigError(f"config key 'eval.opponents' must be a list such as [random, pubeval]; "
                          f"got {e.opponents!r}")
    _bool("eval.previous", e.previous)
    _bool("eval.error_rate", e.error_rate)


def _check_ray(run: RunConfig) -> None:
    r = run.ray
    if r.address is not None and (not isinstance(r.address, str) or not r.address.strip()):
        raise ConfigError(f"config key 'ray.address' must be null, 'auto' or 'HOST:PORT'; got {r.address!r}")
    for key, lo in (("workers", 1), ("games_per_task", 1), ("worker_threads", 1), ("max_worker_failures", 0)):
        _number(f"ray.{key}", getattr(r, key), lo=lo, integer=True)
    if run.distributed == "ray" and run.train.mode != "batched":
        raise ConfigError(f"distributed=ray needs train.mode=batched; got train.mode={run.train.mode}")


def _check_device(dev: Any) -> None:
    if not isinstance(dev, str) or not (dev in ("cpu", "auto", "cuda") or dev.startswith("cuda:")):
        raise ConfigError(f"config key 'device' must be cpu, cuda, cuda:N or auto; got {dev!r}")
    if dev.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"config key 'device' is {dev!r} but this torch build sees no CUDA device")


def _number(key: str, v: Any, lo=None, hi=None, integer=False, lo_open=False, hi_open=False) -> None:
    ok_type = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok_type:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"config key '{key}' must be {kind}; got {v!r}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ConfigError(f"config key '{key}' must be {'>' if lo_open else '>='} {lo}; got {v!r}")
    if hi is not None and (v >= hi if hi_open else v > hi):
        raise ConfigError(f"config key '{key}' must be {'<' if hi_open else '<='} {hi}; got {v!r}")


def _choice(key: str, v: Any, options) -> None:
    if v not in options:
        raise ConfigError(f"config key '{key}' must be one of {', '.join(map(str, options))}; got {v!r}")


def _bool(key: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"config key '{key}' must be true or false; got {v!r}")


def _activations(key: str, v: Any, layers: int) -> str | list[str]:
    """One activation name, or a list of one name per hidden layer (``layers`` of them)."""
    if isinstance(v, str):
        _choice(key, v, sorted(ACTIVATIONS))
        return v
    if not isinstance(v, list) or len(v) != layers:
        raise ConfigError(f"config key '{key}' must be one activation or a list of {layers} (one per "
                          f"hidden layer); got {v!r}")
    for name in v:
        _choice(key, name, sorted(ACTIVATIONS))
    return list(v)


def _widths(key: str, v: Any) -> list[int]:
    widths = [v] if isinstance(v, int) and not isinstance(v, bool) else v
    if (not isinstance(widths, list) or not widths
            or any(isinstance(w, bool) or not isinstance(w, int) or w <= 0 for w in widths)):
        raise ConfigError(f"config key '{key}' must be a list of positive layer widths; got {v!r}")
    return list(widths)
