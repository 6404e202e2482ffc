"""Many games at once: a Gymnasium vector environment on the batched, compiled engine.

``BackgammonVectorEnv(num_envs, opponent=...)`` (or ``gymnasium.make_vec("bgnet/Backgammon-v0",
num_envs=N, vectorization_mode="vector_entry_point")``) runs ``num_envs`` games of the agent
against one bot, the games of :class:`bgnet.envs.single.BackgammonEnv`, in one process: each
``step`` plays every game's move, the bot's replies in one batched call, and the next legal
afterstates of all games in one call to the compiled move generator, with no Python loop over
games. Observations are the single environment's, stacked: ``observation`` float32[N, F + 12],
``action_mask`` int8[N, MAX_ACTIONS]; actions int[N].

Autoreset is Gymnasium's next-step mode by default (``metadata["autoreset_mode"]``): the step that
ends game ``i`` returns its last observation with ``terminated[i]``; the next step ignores
``actions[i]``, starts a new game there and returns its first observation, reward 0, not
terminated. ``autoreset_mode="SameStep"`` instead starts the new game in the ending step and puts
the last observation in ``info["final_obs"]`` (and ``info["final_info"]``), as Gymnasium defines.

The legal afterstates of every game, in action order, are :meth:`BackgammonVectorEnv.afterstates`
(flat rows with offsets), for agents that value afterstates rather than score actions.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bgnet.bots.base import Bot
from bgnet.envs.core import MAX_ACTIONS, AgentGames, seed_bot
from bgnet.envs.single import load_opponent, observation_space, render_text

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


class BackgammonVectorEnv(VectorEnv):
    """``num_envs`` cubeless money games of the agent against ``opponent`` (a bot spec or a
    :class:`bgnet.Bot`), advanced together. ``encoding`` and ``illegal_action`` as for
    :class:`bgnet.envs.single.BackgammonEnv`."""

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 64, opponent: str | Bot = "random", encoding: str = "tesauro",
                 render_mode: str | None = None, illegal_action: str = "lose",
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number of 1 or more; got {num_envs!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None; "
                             f"got {render_mode!r}")
        mode = AutoresetMode(autoreset_mode)
        if mode not in AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be {AUTORESET_MODES[0].value} or {AUTORESET_MODES[1].value}; "
                             f"got {mode.value}")
        self.num_envs = int(num_envs)
        self.bot = load_opponent(opponent)
        self.games = AgentGames(self.num_envs, self.bot, encoding, illegal_action)
        self.encoding = encoding
        self.render_mode = render_mode
        self.autoreset_mode = mode
        self.metadata = dict(self.metadata, autoreset_mode=mode)
        self.single_observation_space = observation_space(encoding)
        self.single_action_space = spaces.Discrete(MAX_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._ended = np.zeros(self.num_envs, bool)  # games to restart at the next step
        self._all = np.ones(self.num_envs, bool)
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """New games in every slot; ``seed`` makes every later game and roll reproducible."""
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
            if seed is not None:
                seed_bot(self.bot, self._np_random)
        self.games.restart(self._all, self.np_random)
        self.games.prepare()
        self._ended[:] = False
        self._started = True
        return self.games.observation(), {}

    def step(self, actions):
        if not self._started:
            raise ResetNeeded("call reset() before step()")
        rng = self.np_random
        restart = self._ended.copy()
        rewards, terminated, illegal = self.games.play(np.asarray(actions), ~restart, rng)
        infos: dict[str, Any] = {}
        if illegal.any():
            infos["illegal_action"], infos["_illegal_action"] = illegal, illegal.copy()
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            if terminated.any():
                ended = np.flatnonzero(terminated)
                final = self.games.final_observation(ended)
                for j, i in enumerate(ended):
                    obs_i = {key: value[j] for key, value in final.items()}
                    infos = self._add_info(infos, {"final_obs": obs_i, "final_info": {}}, int(i))
            restart = terminated
            self._ended[:] = False
        else:
            self._ended = terminated.copy()
        self.games.restart(restart, rng)
        self.games.prepare()
        truncated = np.zeros(self.num_envs, bool)
        return self.games.observation(), rewards, terminated, truncated, infos

    def afterstates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(after int8[M, 2, 25], offsets int64[N + 1])``: game ``i``'s legal afterstates
        (``[opponent, agent_after]``) are rows ``offsets[i]:offsets[i + 1]``, action ``a`` being
        row ``offsets[i] + a``; none for a game that has ended. Copies."""
        return self.games.after.copy(), self.games.offsets.copy()

    def action_masks(self) -> np.ndarray:
        """bool[N, MAX_ACTIONS]: the legal actions of every game now."""
        return np.arange(MAX_ACTIONS)[None, :] < self.games.counts[:, None]

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode != "ansi":
            return None
        return tuple(render_text(b, d, (self.bot.name, "agent"))
                     for b, d in zip(self.games.boards, self.games.dice))

    def close_extras(self, **kwargs: Any) -> None:
        self.bot.close()
