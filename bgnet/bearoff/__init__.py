"""Bear-off databases built from bgnet's own rules engine.

When both sides have every checker in their home boards the game is a pure race, and exact tables
replace the net:

* a one-sided table over the 54,264 ways of placing up to 15 checkers on six points: how many
  turns a side needs to bear off (and, with 15 checkers, to take the first one off);
* a two-sided table of exact winning chances for positions of at most ``k`` checkers a side.

Both are built on first use with :mod:`bgnet.engine.movegen` (a few seconds) and cached on disk
(:mod:`bgnet.bearoff.cache`). Importing this package builds nothing.

>>> import numpy as np
>>> b = np.zeros((1, 2, 25), np.int8); b[0, 1, 0] = 1; b[0, 0, 5] = 3
>>> bool(is_bearoff(b)[0]), bearoff_probabilities(b)[0].tolist()
(True, [1.0, 0.0, 0.0, 0.0, 0.0])
"""
from bgnet.bearoff.database import (
    DEFAULT_K,
    BearoffDatabase,
    bearoff_probabilities,
    get_database,
    is_bearoff,
    one_sided_probabilities,
)
from bgnet.bearoff.index import index_of, num_positions, position_of

__all__ = [
    "DEFAULT_K",
    "BearoffDatabase",
    "bearoff_probabilities",
    "get_database",
    "index_of",
    "is_bearoff",
    "num_positions",
    "one_sided_probabilities",
    "position_of",
]
