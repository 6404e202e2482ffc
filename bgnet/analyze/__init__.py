"""What players do with a bot once they have one: roll positions out, and analyse matches.

* :mod:`bgnet.analyze.rollout`: Monte Carlo rollouts of a position (before the roll) or of the
  candidate moves of a roll, all trials advancing together through the batched move generator,
  with the first rolls cycled and luck correction (``bgnet rollout``);
* :mod:`bgnet.analyze.analysis`: every checker play and cube decision of a ``.mat`` file judged
  by a bot, with per-player error rates (``bgnet analyze``);
* :mod:`bgnet.analyze.report`: the analysis as one self-contained HTML page.

JSON written by ``bgnet rollout --json``: ``bot``, ``settings`` (``trials``, ``truncate``,
``seed``, ``cycle``, ``luck``, ``bearoff``, ``cubeful``), ``match_id``, ``dice`` (null for a
position before the roll), ``luck_evaluator``, ``seconds``, ``trials_per_second`` and
``results``, one per rolled-out root, best first: ``position_id``, ``move`` and
``after_position_id`` (candidate moves: the move, and the position the opponent then faces),
``probabilities`` and ``probabilities_se`` (``win``, ``win_gammon``, ``win_backgammon``,
``lose_gammon``, ``lose_backgammon``), ``equity`` and ``equity_se`` (cubeless money),
``cubeful_equity`` and ``cubeful_equity_se`` (cubeful rollouts), ``mwc`` and ``mwc_se`` (match
play), ``diff`` and ``diff_se`` (candidate moves: equity minus the best move's, trial by trial),
``trials``, ``mean_plies``. All from the view of the player to move.

JSON written by ``bgnet analyze --json``: ``file``, ``bot``, ``ply``, ``match_length`` (0 =
money), ``players`` (per player: ``name``, ``moves``, ``unforced_moves``, ``checker_error``,
``checker_rate``, ``checker_marks`` {doubtful, error, blunder}, ``checker_rating``,
``cube_decisions``, ``close_cube_decisions``, ``cube_error``, ``cube_rate``, ``cube_marks``,
``cube_rating``, ``doubles``, ``takes``, ``drops``, ``overall_rate``, ``overall_rating``,
``luck``, ``luck_rate``, ``rolls``, ``luck_marks``), ``biggest_errors`` and ``decisions`` (per
decision: ``game``, ``number``, ``player``, ``kind`` (move, double, no_double, take, drop),
``position_id``, ``match_id``, ``dice``, ``played``, ``best``, ``played_equity``,
``best_equity``, ``error``, ``mark``, ``forced``, ``counted``, ``luck``, ``luck_mark``) and
``graph`` (``decision``, ``game``, ``value``: player 0's cubeful equity or MWC before each cube
decision). Errors and luck are in EMG, rates in millipoints per decision
(:mod:`bgnet.analyze.analysis`).
"""
