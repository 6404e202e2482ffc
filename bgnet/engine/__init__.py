"""Rules engine: board convention, move generation, notation and Position IDs.

The public names below are the stable API; the submodules hold the details. A Position ID has the
player on roll to move (GNU Backgammon's convention); :func:`legal_moves` gives, for every legal
move, its notation and the next Position ID, with the opponent on roll.

The engine imports nothing from the rest of bgnet.
"""
from bgnet.engine.compiled import say_when_compiling

say_when_compiling()  # before any kernel can compile: a cold cache is announced, once

from bgnet.engine.api import legal_moves  # noqa: E402
from bgnet.engine.position_id import board_from_position_id, position_id  # noqa: E402

__all__ = ["legal_moves", "position_id", "board_from_position_id"]
