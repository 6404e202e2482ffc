"""Cube decisions: match equity tables, Janowski cubeful equities, and the decision head.

Public API:

* :func:`decide` ``(probabilities, match_id, position_id=None)`` -> :class:`CubeDecision`, from the
  five cubeless probabilities of the player on roll and a GNU Backgammon Match ID;
  :func:`decide_context` does the same from a :class:`bgnet.engine.state.MatchContext`.
* :class:`MatchEquityTable`, :func:`load_met` (``"kazaross-xg2"`` by default, or a GNU Backgammon
  XML file).
* :class:`CubeEfficiency`: Janowski's cube efficiency by kind of position.

>>> from bgnet.engine.state import MatchContext
>>> d = decide_context((0.68, 0.15, 0.005, 0.06, 0.002), MatchContext(match_length=7))
>>> d.action, d.double, d.take, d.mwc == d.mwc_double_take
('double_take', True, True, True)
"""
from bgnet.cube.cubeful import CubeEfficiency
from bgnet.cube.decision import ACTIONS, CubeDecision, cube_action, decide, decide_context
from bgnet.cube.met import DEFAULT_MET, MatchEquityTable, load_met, met_from_xml

__all__ = ["ACTIONS", "CubeDecision", "CubeEfficiency", "DEFAULT_MET", "MatchEquityTable",
           "cube_action", "decide", "decide_context", "load_met", "met_from_xml"]
