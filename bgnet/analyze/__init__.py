"""What players do with a bot once they have one: roll positions out, and analyse matches.

* :mod:`bgnet.analyze.rollout`: Monte Carlo rollouts of a position (before the roll) or of the
  candidate moves of a roll, all trials advancing together through the batched move generator,
  with the first rolls cycled and luck correction (``bgnet rollout``);
* :mod:`bgnet.analyze.analysis`: every checker play and cube decision of a ``.mat`` file judged
  by a bot, with per-player error rates (``bgnet analyze``);
* :mod:`bgnet.analyze.report`: the analysis as one self-contained HTML page.
"""
