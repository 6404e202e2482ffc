"""One agent against a bot: a Gymnasium environment, ``gymnasium.make("bgnet/Backgammon-v0")``.

The agent plays one side of a cubeless money game; the other side is a bgnet bot named by a spec
(``random``, ``pubeval``, ``bgnet-default``, ``bgnet-deep@1``, ``gnubg:0``, a checkpoint or an
exported bot: whatever :func:`bgnet.load_bot` takes) or given as a :class:`bgnet.Bot`. Every
step is one move of the agent and, while the game goes on, the bot's reply: the dice of both are
rolled inside ``step``. The agent is first to move after ``reset`` unless the opening roll went to
the bot, which has then already played. The action encoding, observation and rewards are
described in :mod:`bgnet.envs.core`; ``info["dice"]`` is the agent's roll and
:meth:`BackgammonEnv.afterstates` its legal afterstates in action order (int8[n, 2, 25],
``[opponent, agent_after]``), for agents that value afterstates. They are not in ``info``:
Gymnasium's sync and async vector environments stack every info array, and their number changes
from turn to turn.

``reset(options={"position": POSITION, "dice": (d1, d2)})`` starts from a chosen position
instead of the opening: a GNU Backgammon Position ID or an int8[2, 25] board, the agent on roll
(its checkers in ``board[1]``), with those dice or, without ``"dice"``, a roll.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from bgnet.bots.base import Bot
from bgnet.engine.api import game_over
from bgnet.engine.board import as_board, check_die, game_result, start_position
from bgnet.engine.position_id import board_from_position_id
from bgnet.envs.core import (
    MAX_ACTIONS,
    DiceStream,
    IllegalAction,
    OneGame,
    Turns,
    check_illegal_action_rule,
    observation_bounds,
    observe_one,
    opening_rolls,
    seed_bot,
)
from bgnet.nn.encode import num_features
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


class BackgammonEnv(OneGame, gym.Env):
    """A cubeless money game against ``opponent``.

    ``encoding``: the board's encoding in the observation (``"tesauro"``, ``"extended"`` or
    ``"contact"``). ``illegal_action``: ``"lose"`` (the default) ends the game as a single game
    lost, reward -1 and ``info["illegal_action"]``; ``"raise"`` raises
    :class:`bgnet.envs.core.IllegalAction` instead.

    Between steps ``board`` is the position from the agent's side (its checkers in ``board[1]``),
    ``dice`` its roll and ``after`` its legal afterstates in action order; a finished game keeps
    its last position, dice (0, 0) and no legal action.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, opponent: str | Bot = "random", encoding: str = "tesauro",
                 render_mode: str | None = None, illegal_action: str = "lose"):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None; "
                             f"got {render_mode!r}")
        num_features(encoding)  # a clear error for an unknown encoding
        self.illegal_action = check_illegal_action_rule(illegal_action)
        self.bot = load_opponent(opponent)
        self.encoding = encoding
        self.render_mode = render_mode
        self.observation_space = observation_space(encoding)
        self.action_space = spaces.Discrete(MAX_ACTIONS)
        self.over = True
        self._turns = Turns(encoding)  # the board, dice, afterstates and observation
        self._illegal = False
        self._rolls: DiceStream | None = None

    @property
    def after(self) -> np.ndarray:
        return self._turns.after

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            seed_bot(self.bot, self.np_random)
        rolls = self._rolls = DiceStream(self.np_random)
        opening, agent_first = opening_rolls(self.np_random, 1)
        board = start_position()
        if options and "position" in options:
            self._turn(*self._chosen_start(options, rolls))
        elif agent_first[0]:
            self._turn(board, opening[0])
        else:
            self._turn(self._reply(board, opening[0])[::-1], rolls.roll())
        self._illegal = False
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action):
        if self._rolls is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.over:
            raise gym.error.ResetNeeded("the game is over: call reset() to start a new one")
        a = int(action)
        reward = 0.0
        legal = len(self._turns.after)
        if not 0 <= a < legal:
            if self.illegal_action == "raise":
                raise IllegalAction(f"action {a} is not legal: the agent has {legal} legal actions, "
                                    f"0 to {legal - 1} (see action_mask)")
            reward = -1.0  # a move outside the rules loses a single game
            self._illegal = True
            self._end()
        else:
            chosen = self._turns.after[a]
            won = game_result(chosen)
            if won:
                reward = float(won)
                self._end(chosen)
            else:
                reply = self._reply(np.ascontiguousarray(chosen[::-1]), self._rolls.roll())
                lost = game_result(reply)
                if lost:
                    reward = -float(lost)
                    self._end(reply[::-1])
                else:
                    self._turn(reply[::-1], self._rolls.roll())
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self.over, False, self._info()

    def afterstates(self) -> np.ndarray:
        """A copy of the agent's legal afterstates (``[opponent, agent_after]``), in action order;
        none once the game is over. Through wrappers: ``env.unwrapped.afterstates()``."""
        return self._turns.after.copy()

    def action_masks(self) -> np.ndarray:
        """bool[MAX_ACTIONS]: the legal actions now (the form sb3-contrib's maskable PPO asks for)."""
        return np.arange(MAX_ACTIONS) < len(self.after)

    def render(self) -> str | None:
        text = render_text(self.board, self.dice, (self.bot.name, "agent"))
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        self.bot.close()

    def _chosen_start(self, options: dict[str, Any], rolls: DiceStream) -> tuple[np.ndarray, list[int]]:
        """The position and dice ``reset(options={"position": ..., "dice": ...})`` asks for."""
        position = options["position"]
        board = board_from_position_id(position) if isinstance(position, str) else as_board(position)
        if game_over(board):
            raise ValueError("the position given to reset is a finished game")
        if options.get("dice") is None:
            return board, rolls.roll()
        d1, d2 = (check_die(d, "a die of reset's dice") for d in options["dice"])
        return board, [max(d1, d2), min(d1, d2)]

    def _reply(self, board: np.ndarray, dice) -> np.ndarray:
        """The bot's afterstate in ``board`` (the bot on roll) with ``dice``: from its one-call
        decision where it has one (a net bot at 0-ply: :meth:`bgnet.Bot.quick_choice`, the move
        its ``choose_moves`` picks at a third of the cost), else its ``choose_moves``."""
        quick = self.bot.quick_choice(board, dice[0], dice[1], None)
        if quick is not None:
            return quick[0]
        reply, _ = self.bot.choose_moves(board[None], np.array([dice], np.int64))
        return reply[0]

    def _turn(self, board: np.ndarray, dice) -> None:
        """The agent is on roll in ``board`` with ``dice``: its legal afterstates."""
        self._turns.start(board, dice)
        self.over = False

    def _end(self, board: np.ndarray | None = None) -> None:
        """The game is over; ``board``, if given, is its last position from the agent's side."""
        self._turns.end(board)
        self.over = True

    def _observation(self) -> dict[str, np.ndarray]:
        if self.over:
            return observe_one(self.board, self.dice, 0, self.encoding)
        return self._turns.observation()

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"dice": self.dice.copy()}
        if self._illegal:
            info["illegal_action"] = True
        return info
