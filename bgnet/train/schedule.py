"""A run's schedule: the phase of a recipe it is in, the config it trains with there, and its
learning rate at each game. A run without phases is one phase, its config as given."""
from __future__ import annotations

from bgnet.train.config import RunConfig, in_phase, phase_index
from bgnet.train.learn import learning_rate


class Schedule:
    """The phase of ``cfg`` that the run's game ``games`` belongs to, and what follows from it:
    ``active``, the config the run trains with in that phase (:func:`bgnet.train.config.in_phase`)."""

    def __init__(self, cfg: RunConfig, games: int):
        self.cfg = cfg
        self.phase = phase_index(cfg, games)
        self.active = in_phase(cfg, self.phase)

    def rate(self, games: int) -> float:
        """The learning rate at ``games``: it falls linearly over the phase (``optim.lr_final``)."""
        return learning_rate(self.active.optim, games, self.active.train.games)

    def ends(self, games: int) -> bool:
        """Whether ``games`` has reached the end of the phase and the run goes on past it."""
        return self.active.train.games <= games < self.cfg.train.games

    def next_phase(self, games: int) -> RunConfig:
        """Enter the phase that ``games`` belongs to; returns its config."""
        self.phase = phase_index(self.cfg, games)
        self.active = in_phase(self.cfg, self.phase)
        return self.active

    def phase_end(self) -> int:
        """The games at which the phase ends, or the run does where it stops sooner."""
        return min(self.active.train.games, self.cfg.train.games)

    def phases(self) -> int:
        """How many phases the run has (0 for a run without)."""
        return len(self.cfg.phases)

    def name(self) -> str:
        """The phase as a person reads it ("phase 2/3 filtered"), "run" for a run without phases."""
        if not self.cfg.phases:
            return "run"
        return f"phase {self.phase + 1}/{len(self.cfg.phases)} {self.cfg.phases[self.phase].name}".rstrip()

    def label(self) -> str:
        """The progress bar's name for the phase."""
        name = self.name() if self.cfg.phases else "self-play"
        return name + (" (ray)" if self.cfg.distributed == "ray" else "")
