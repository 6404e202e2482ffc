"""Rules engine: board convention, move generation, notation and Position IDs.

The public names below are the stable API; the submodules hold the details.
"""
from bgnet.engine.api import legal_moves
from bgnet.engine.position_id import board_from_position_id, position_id

__all__ = ["legal_moves", "position_id", "board_from_position_id"]
