"""One agent against a bot: a Gymnasium environment, ``gymnasium.make("bgnet/Backgammon-v0")``.

The agent plays one side of a cubeless money game; the other side is a bgnet bot named by a spec
(``random``, ``pubeval``, ``bgnet-default``, ``bgnet-deep@1``, ``gnubg:0``, a checkpoint or an
exported bot: whatever :func:`bgnet.load_bot` takes) or given as a :class:`bgnet.Bot`. Every
step is one move of the agent and, while the game goes on, the bot's reply: the dice of both are
rolled inside ``step``. The agent is first to move after ``reset`` unless the opening roll went to
the bot, which has then already played. The action encoding, observation and rewards are
described in :mod:`bgnet.envs.core`; ``info`` holds the legal afterstates in action order
(``info["afterstates"]``, int8[n, 2, 25], ``[opponent, agent_after]``) and the dice.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from bgnet.bots.base import Bot
from bgnet.envs.core import MAX_ACTIONS, AgentGames, observation_bounds, seed_bot
from bgnet.play.render import render_board


def load_opponent(opponent: str | Bot) -> Bot:
    """The bot a spec names (bgnet's one loader), or the bot itself."""
    if isinstance(opponent, Bot):
        return opponent
    from bgnet.bots.load import load_bot

    return load_bot(opponent)


def observation_space(encoding: str) -> spaces.Dict:
    """The observation space of one player: the encoded position with the dice, and the mask."""
    low, high = observation_bounds(encoding)
    return spaces.Dict({
        "observation": spaces.Box(low, high, dtype=np.float32),
        "action_mask": spaces.Box(0, 1, (MAX_ACTIONS,), dtype=np.int8),
    })


def render_text(board: np.ndarray, dice, names: tuple[str, str]) -> str:
    """The board with the player in ``board[1]`` at the bottom (X), and its dice if it rolled."""
    d = (int(dice[0]), int(dice[1]))
    return render_board(board, names=names, dice=d, dice_of=1 if d[0] else None)


class BackgammonEnv(gym.Env):
    """A cubeless money game against ``opponent``.

    ``encoding``: the board's encoding in the observation (``"tesauro"``, ``"extended"`` or
    ``"contact"``). ``illegal_action``: ``"lose"`` (the default) ends the game as a single game
    lost, reward -1 and ``info["illegal_action"]``; ``"raise"`` raises
    :class:`bgnet.envs.core.IllegalAction` instead.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, opponent: str | Bot = "random", encoding: str = "tesauro",
                 render_mode: str | None = None, illegal_action: str = "lose"):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None; "
                             f"got {render_mode!r}")
        self.bot = load_opponent(opponent)
        self.games = AgentGames(1, self.bot, encoding, illegal_action)
        self.encoding = encoding
        self.render_mode = render_mode
        self.observation_space = observation_space(encoding)
        self.action_space = spaces.Discrete(MAX_ACTIONS)
        self._all = np.ones(1, bool)
        self._last_illegal = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            seed_bot(self.bot, self.np_random)
        self.games.restart(self._all, self.np_random)
        self.games.prepare()
        self._last_illegal = False
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action):
        if not self.games.live[0]:
            raise gym.error.ResetNeeded("the game is over: call reset() to start a new one")
        rewards, terminated, illegal = self.games.play(np.array([int(action)]), self._all, self.np_random)
        self.games.prepare()
        self._last_illegal = bool(illegal[0])
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(rewards[0]), bool(terminated[0]), False, self._info()

    def action_masks(self) -> np.ndarray:
        """bool[MAX_ACTIONS]: the legal actions now (the form sb3-contrib's maskable PPO asks for)."""
        return self._observation()["action_mask"].astype(bool)

    def render(self) -> str | None:
        text = render_text(self.games.boards[0], self.games.dice[0], (self.bot.name, "agent"))
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        self.bot.close()

    def _observation(self) -> dict[str, np.ndarray]:
        obs = self.games.observation()
        return {key: value[0] for key, value in obs.items()}

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"afterstates": self.games.afterstates_of(0), "dice": self.games.dice[0].copy()}
        if self._last_illegal:
            info["illegal_action"] = True
        return info
