"""What players do with a bot once they have one: roll positions out, and analyse matches.

* :mod:`bgnet.analyze.rollout`: Monte Carlo rollouts of a position (before the roll) or of the
  candidate moves of a roll, all trials advancing together through the batched move generator,
  with the first rolls cycled and luck correction (``bgnet rollout``);
* :mod:`bgnet.analyze.analysis`: every checker play and cube decision of a ``.mat`` file judged
  by a bot, with per-player error rates (``bgnet analyze``);
* :mod:`bgnet.analyze.report`: the analysis as one self-contained HTML page;
* :mod:`bgnet.analyze.inputs`: the files ``bgnet analyze`` is given (several, a folder, or the
  name ``bgnet eval --save-mat`` was given), and reading one (``.mat`` or ``.sgf``).

JSON written by ``bgnet rollout --json``: ``bot``, ``settings`` (``trials``, ``truncate``,
``seed``, ``cycle``, ``luck``, ``bearoff``, ``cubeful``,
``cubeless_play``), ``match_id``, ``dice`` (null for a
position before the roll), ``luck_evaluator``, ``seconds``, ``trials_per_second`` and
``results``, one per rolled-out root, best first: ``position_id``, ``move`` and
``after_position_id`` (candidate moves: the move, and the position the opponent then faces),
``probabilities`` and ``probabilities_se`` (``win``, ``win_gammon``, ``win_backgammon``,
``lose_gammon``, ``lose_backgammon``), ``equity`` and ``equity_se`` (cubeless money),
``cubeful_equity`` and ``cubeful_equity_se`` (cubeful rollouts), ``mwc`` and ``mwc_se`` (match
play), ``diff`` and ``diff_se`` (candidate moves: equity minus the best move's, trial by trial),
``trials``, ``mean_plies``. All from the view of the player to move.

JSON written by ``bgnet analyze --json`` for one file: ``file``, ``bot``, ``ply``,
``match_length`` (0 = money), ``jacoby``, ``unfinished`` (why the file stops before its match
does, "" when it does not), ``players`` (per player: ``name``, ``games``,
``moves``, ``unforced_moves``, ``checker_error``, ``checker_rate``, ``checker_marks``
{doubtful, error, blunder}, ``checker_rating``, ``cube_decisions``, ``close_cube_decisions``,
``cube_error``, ``cube_rate``, ``cube_marks``, ``cube_rating``, ``cube_errors`` {kind: {count,
error}}, ``doubles``, ``takes``, ``drops``, ``overall_rate``, ``overall_rating``,
``error_per_game``, ``rating_estimate``, ``resign_decisions``, ``resign_error``,
``resign_marks``, ``pr_decisions`` and ``performance_rating`` (XG's PR), ``luck``,
``luck_rate``, ``luck_rating``, ``rolls``, ``luck_marks``, ``luck_points`` (money),
``checker_error_mwc``, ``cube_error_mwc``, ``luck_mwc``, ``luck_rate_mwc``, ``result_mwc``
(match), ``points_won``, ``points_lost``, ``matches`` (played to their end), ``matches_won``,
``luck_adjusted_result`` (null for an unfinished match)),
``biggest_errors`` and ``decisions`` (per decision: ``game``, ``number``, ``player``, ``kind``
(move, double, no_double, take, drop, resign, accept, reject), ``position_id``, ``match_id``,
``dice``, ``played``, ``best``, ``played_equity``, ``best_equity``, ``error``, ``mark``,
``forced``, ``counted``, ``luck``, ``luck_mark``, ``cube``, ``cube_owner`` (-1 centred),
``score``, ``candidates`` ([option, equity] best first), ``error_kind``, ``mwc``, ``error_mwc``,
``luck_points``, ``luck_mwc``, ``pr_counted``), ``games`` (per game: ``number``, ``score``, ``rows`` (``player``,
``kind``, ``dice``, ``text``, ``decision``: every action in order), ``winner``, ``points``,
``end``) and ``graph`` (``decision``, ``game``, ``value``: player 0's cubeful equity in
points, or MWC, before each roll, and in a match his MWC after each game; ``decision`` is the
index of the next decision). For several files: ``files`` (one such object each), ``bot``,
``ply``, ``players`` (the totals by name) and ``biggest_errors`` (each with its ``file``).
Errors and luck are in EMG, MWC as fractions, rates in millipoints per decision
(:mod:`bgnet.analyze.analysis`).
"""
