"""Two players: a PettingZoo AEC environment, ``bgnet.envs.aec.env()``.

Agents ``player_0`` and ``player_1`` play a cubeless money game. The opening roll (one die each,
ties rolled again) decides who moves first, with both dice; after each move the other player's
dice are rolled inside ``step``, so every turn of ``env.agent_iter()`` is one whole move by the
agent in ``env.agent_selection``. ``observe(agent)`` (and ``last()``) give ``{"observation",
"action_mask"}`` as described in :mod:`bgnet.envs.core`, from that agent's side: its dice units
and mask are zero while it is not on roll. ``infos[agent]`` of the agent on roll holds its legal
afterstates in action order (``"afterstates"``, ``[opponent, mover_after]``) and its dice (a
read-only int64 array, higher die first). At the
end the winner is rewarded the game's points (1, 2 or 3) and the loser their negative. An action
outside the mask loses the game as a single game (``illegal_action="lose"``, the default,
``infos[agent]["illegal_action"]``), or raises :class:`bgnet.envs.core.IllegalAction`
(``"raise"``).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ModuleNotFoundError as e:  # the name of the missing package stays on the error
    package = (e.name or "gymnasium").split(".")[0]
    raise ModuleNotFoundError(f"bgnet.envs.aec needs {package}, which comes with bgnet's 'envs' extra: "
                              "pip install 'bgnet[envs]'", name=package) from e

from bgnet.engine.board import start_position
from bgnet.envs.core import (
    MAX_ACTIONS,
    DiceStream,
    IllegalAction,
    OneGame,
    Turns,
    check_illegal_action_rule,
    observe_one,
    opening_rolls,
)
from bgnet.envs.single import observation_space, render_text

AGENTS = ("player_0", "player_1")
_INDEX = {agent: i for i, agent in enumerate(AGENTS)}
RENDER_MODES = ("ansi", "human")
_NO_DICE = np.zeros(2, np.int64)


def _roll_array(high: int, low: int) -> np.ndarray:
    dice = np.array([high, low], np.int64)
    dice.flags.writeable = False
    return dice


# infos' "dice": one read-only array for each roll, shared (a copy on every step would cost more).
_DICE = [[_roll_array(high, low) for low in range(7)] for high in range(7)]


class BackgammonAEC(OneGame, AECEnv):
    """Backgammon for two agents (``encoding``, ``illegal_action`` as for
    :class:`bgnet.envs.single.BackgammonEnv`). Between steps ``board`` is the position with the
    checkers of the agent ``AGENTS[on_roll]`` in ``board[1]``, ``dice`` its roll."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "bgnet_backgammon_v0",
                "is_parallelizable": False, "render_fps": 1}
    agent_selection: str

    def __init__(self, encoding: str = "tesauro", render_mode: str | None = None,
                 illegal_action: str = "lose"):
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {list(RENDER_MODES)} or None; "
                             f"got {render_mode!r}")
        self.encoding = encoding
        self.render_mode = render_mode
        self.illegal_action = check_illegal_action_rule(illegal_action)
        self.possible_agents = list(AGENTS)
        self.observation_spaces = {a: observation_space(encoding) for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(MAX_ACTIONS) for a in AGENTS}
        self.np_random: np.random.Generator | None = None
        self.on_roll = 0  # index of the agent whose checkers are board[1]
        self._turns = Turns(encoding)  # the board, dice, afterstates and observation
        self._rolls: DiceStream | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rolls = DiceStream(self.np_random)
        dice, first = opening_rolls(self.np_random, 1)
        self.on_roll = 0 if first[0] else 1
        self._turns.start(start_position(), dice[0])
        self._prepare_turn()
        if self.render_mode == "human":
            self.render()

    def step(self, action) -> None:
        if self._rolls is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # Rewards and cumulative rewards are all zero while the game goes on (only _finish pays,
        # and the game is then over): nothing to clear on a live step.
        mover = self.on_roll
        turns = self._turns
        legal = len(turns.after)
        a = int(action)
        if not 0 <= a < legal:
            if self.illegal_action == "raise":
                raise IllegalAction(f"action {a} is not legal for {agent}: it has {legal} legal "
                                    f"actions, 0 to {legal - 1} (see action_mask)")
            self._finish(1 - mover, 1)  # a move outside the rules loses a single game
            self.infos[agent] = {"illegal_action": True}
        else:
            roll = self._rolls.roll()  # the other player's, used if the game goes on
            points = turns.move(a, roll)
            if points:
                self._finish(mover, points)  # the winner's checkers stay in board[1]
            else:  # as _prepare_turn, written out: this is most steps
                self.on_roll = 1 - mover
                other = AGENTS[1 - mover]
                self.agent_selection = other
                self.infos[other] = {"afterstates": turns.after, "dice": _DICE[roll[0]][roll[1]]}
                self.infos[agent] = {}
        if self.render_mode == "human":
            self.render()

    def last(self, observe: bool = True):
        """PettingZoo's ``last``, the observation of the agent on roll taken directly (one Python
        call less on every step)."""
        if self._rolls is None:
            raise RuntimeError("call reset() before last()")
        agent = self.agent_selection
        obs: dict[str, np.ndarray] | None
        if observe and agent == AGENTS[self.on_roll] and not self.terminations[agent]:
            obs = self._turns.observation()
        else:
            obs = self.observe(agent) if observe else None
        return obs, self._cumulative_rewards[agent], self.terminations[agent], self.truncations[agent], \
            self.infos[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self._rolls is None:
            raise RuntimeError("call reset() before observe()")
        me = _INDEX[agent]
        if me == self.on_roll:
            if not self.terminations[agent]:
                return self._turns.observation()
            return observe_one(self.board, _NO_DICE, 0, self.encoding)
        return observe_one(self.board[::-1], _NO_DICE, 0, self.encoding)

    def render(self) -> str | None:
        # player_0 is drawn at the bottom (X), whoever is on roll.
        board = self.board if self.on_roll == 0 else self.board[::-1]
        dice = self.dice if self.on_roll == 0 and not self.terminations.get("player_0") else (0, 0)
        text = render_text(board, dice, ("player_1", "player_0"))
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    def _prepare_turn(self) -> None:
        """The player on roll has its afterstates (in ``_turns``): its info."""
        mover = AGENTS[self.on_roll]
        self.agent_selection = mover
        dice = self._turns.dice
        self.infos[mover] = {"afterstates": self._turns.after, "dice": _DICE[dice[0]][dice[1]]}
        self.infos[AGENTS[1 - self.on_roll]] = {}

    def _finish(self, winner: int, points: int) -> None:
        """The game is over: ``winner`` (an index) gains ``points``, the other loses them."""
        self.rewards[AGENTS[winner]] = points
        self.rewards[AGENTS[1 - winner]] = -points
        self._accumulate_rewards()
        self.terminations = dict.fromkeys(self.agents, True)
        self.infos = {a: {} for a in self.agents}
        self._turns.end()
        self.agent_selection = AGENTS[1 - self.on_roll]


def env(**kwargs) -> BackgammonAEC:
    """The two-player environment (``kwargs`` as for :class:`BackgammonAEC`). It is not wrapped:
    it checks its own actions and order (a step before ``reset`` is refused), and PettingZoo's
    order-enforcing wrapper would double the cost of a step; :func:`wrapped_env` gives it in that
    wrapper, as PettingZoo's own environments come."""
    return BackgammonAEC(**kwargs)


def wrapped_env(**kwargs) -> AECEnv:
    """:func:`env` in PettingZoo's order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(BackgammonAEC(**kwargs))


raw_env = BackgammonAEC
