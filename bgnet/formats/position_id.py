"""The old name of :mod:`bgnet.engine.position_id` (Position IDs belong with the board)."""
from bgnet.engine.position_id import *  # noqa: F401,F403
