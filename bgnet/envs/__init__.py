"""Backgammon environments for agents trained elsewhere: Gymnasium and PettingZoo on bgnet's engine.

Three environments share one action encoding, one observation and one reward
(:mod:`bgnet.envs.core`):

* :class:`BackgammonEnv` (:mod:`bgnet.envs.single`): one agent against a bgnet bot, registered
  as ``gymnasium.make("bgnet/Backgammon-v0", opponent="pubeval")`` when this package is imported
  (or, without importing it first, ``gymnasium.make("bgnet.envs:bgnet/Backgammon-v0")``);
* :class:`BackgammonVectorEnv` (:mod:`bgnet.envs.vector`): many such games in one Gymnasium
  vector environment on the batched compiled engine, next-step autoreset
  (``gymnasium.make_vec("bgnet/Backgammon-v0", num_envs=256,
  vectorization_mode="vector_entry_point")``);
* :func:`bgnet.envs.aec.env` (:mod:`bgnet.envs.aec`): the two-player PettingZoo AEC environment
  (needs pettingzoo; imported only from there).

An action is a whole move, the index of an afterstate among the turn's legal ones in a canonical
order (at most :data:`MAX_ACTIONS`); ``action_mask`` marks the legal ones, which are always the
first ``n``. Rewards are the game's points, ±1, ±2, ±3; cubeless money play (no cube, no match
score). Needs ``pip install 'bgnet[envs]'`` (gymnasium and pettingzoo).
"""
from __future__ import annotations

try:
    from gymnasium.envs.registration import register, registry
except ModuleNotFoundError as e:  # the name of the missing package stays on the error
    package = (e.name or "gymnasium").split(".")[0]
    raise ModuleNotFoundError(f"bgnet.envs needs {package}, which comes with bgnet's 'envs' extra: "
                              "pip install 'bgnet[envs]'", name=package) from e

from bgnet.envs.core import (  # noqa: E402
    DICE_UNITS,
    MAX_ACTIONS,
    IllegalAction,
    legal_afterstates,
    observation_bounds,
    observations,
)
from bgnet.envs.single import BackgammonEnv  # noqa: E402
from bgnet.envs.vector import BackgammonVectorEnv  # noqa: E402

ENV_ID = "bgnet/Backgammon-v0"

if ENV_ID not in registry:
    register(id=ENV_ID, entry_point="bgnet.envs.single:BackgammonEnv",
             vector_entry_point="bgnet.envs.vector:BackgammonVectorEnv")

__all__ = ["ENV_ID", "MAX_ACTIONS", "DICE_UNITS", "BackgammonEnv", "BackgammonVectorEnv", "IllegalAction",
           "legal_afterstates", "observation_bounds", "observations"]
