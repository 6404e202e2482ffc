"""What a net bot needs from its network, whatever runs it: probabilities for boards.

An *evaluator* has two methods, both batched over int8[N, 2, 25] boards in bgnet's layout:

* ``positions(boards)``: float32[N, 5] for the side on roll of each position, before it rolls;
* ``afterstates(after)``: float32[N, 5] for the MOVER of each afterstate ``[opponent,
  mover_after]``; an afterstate that ends the game gets its exact outcome. Told the positions
  the afterstates were played from (``parents``, ``parent_of``), an evaluator with a compiled
  pass starts each one from its position's first layer (:func:`afterstates_of` asks any
  evaluator-like object in the way it understands).

Where both sides are bearing off (:func:`bgnet.bearoff.is_bearoff`), both methods answer from the
bear-off database instead of the net, unless the evaluator's ``bearoff`` attribute is false. The
database is loaded (or built and cached) the first time such a position is seen.

:class:`Evaluator` implements both on top of one method, ``_forward(x, is_race)``, that maps
encoded rows to probabilities; :class:`bgnet.bots.torch_eval.NetEvaluator` runs a torch net and
:class:`bgnet.bots.onnx_eval.OnnxEvaluator` an exported ONNX model. This module imports neither
torch nor onnxruntime.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from bgnet.bearoff.database import is_bearoff
from bgnet.nn.encode import encode, encode_afterstates, game_results, num_features, race_mask
from bgnet.nn.probs import flip, terminal_probs_batch

if TYPE_CHECKING:  # the compiled pass is imported only by the evaluators that use it
    from bgnet.nn.fast import FastForward


class PositionEvaluator(Protocol):
    """What a net bot holds (:attr:`bgnet.bots.base.Bot.evaluator`): probabilities of positions
    and of afterstates, batched (see the module docstring). :class:`Evaluator` and
    :class:`bgnet.bots.cache.CachedEvaluator` are the two kinds bgnet makes."""

    def positions(self, boards: np.ndarray) -> np.ndarray: ...

    def afterstates(self, after: np.ndarray, parents: np.ndarray | None = None,
                    parent_of: np.ndarray | None = None) -> np.ndarray: ...


class Evaluator:
    """Encodes boards into a reusable buffer and hands the rows to ``_forward``.

    Subclasses set ``encoding`` and ``split`` (whether ``_forward`` needs the race mask) and
    implement ``_forward(x: float32[N, F], is_race: bool[N] | None) -> float32[N, 5]``.

    >>> class Half(Evaluator):
    ...     encoding, split = "tesauro", False
    ...     def _forward(self, x, is_race):
    ...         return np.full((len(x), 5), 0.5, np.float32)
    >>> from bgnet.engine.board import start_position
    >>> Half().positions(start_position()[None]).tolist()
    [[0.5, 0.5, 0.5, 0.5, 0.5]]
    """

    encoding: str = "tesauro"
    split: bool = False
    bearoff: bool = True  # answer bear-off positions from bgnet.bearoff's tables
    # A bgnet.nn.fast.FastForward over the same weights, when a subclass has one: it maps boards
    # straight to probabilities (no encoding buffer) and takes the place of ``_forward``.
    fast: FastForward | None = None

    def _forward(self, x: np.ndarray, is_race: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def _buffer(self, n: int, f: int) -> np.ndarray:
        buf = getattr(self, "_buf", None)
        if buf is None or buf.shape[0] < n or buf.shape[1] != f:
            buf = self._buf = np.empty((max(n, 1024), f), np.float32)
        return buf[:n]

    def run_net(self, boards: np.ndarray, afterstates: bool, family=None) -> np.ndarray:
        """The net's probabilities of ``boards`` (for the side on roll of an afterstate's
        swapped view when ``afterstates``), without the bear-off database; ``family``:
        ``(parents, parent_of)`` of afterstates, for the compiled pass."""
        if self.fast is not None:
            if family is not None:  # (parents, parent_of) of afterstates
                return self.fast.swapped_children(family[0], family[1], boards)
            return self.fast.swapped(boards) if afterstates else self.fast.positions(boards)
        n = len(boards)
        if n == 0:
            return np.zeros((0, 5), np.float32)
        x = self._buffer(n, num_features(self.encoding))
        (encode_afterstates if afterstates else encode)(boards, self.encoding, x)
        # An afterstate is judged as the position with the opponent on roll; contact is symmetric,
        # so the race mask of the board as written serves both views.
        mask = race_mask(boards) if self.split else None
        return np.asarray(self._forward(x, mask), np.float32)

    def positions(self, boards: np.ndarray) -> np.ndarray:
        """Probabilities for the side on roll of each position (before it rolls)."""
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
        return self._with_bearoff(boards, afterstates=False)

    def afterstates(self, after: np.ndarray, parents: np.ndarray | None = None,
                    parent_of: np.ndarray | None = None) -> np.ndarray:
        """Probabilities for the MOVER of each afterstate; finished games get their exact result.

        With ``parents`` and ``parent_of`` (``after[k]`` is a move from
        ``parents[parent_of[k]]``), an evaluator with a compiled pass starts each afterstate's
        first layer from its position's (:meth:`bgnet.nn.fast.FastForward.swapped_children`):
        the same values to float32 rounding, a third faster; others ignore them."""
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)
        family = None
        if parents is not None and parent_of is not None and self.fast is not None:
            family = (np.ascontiguousarray(parents, np.int8).reshape(-1, 2, 25),
                      np.asarray(parent_of, np.int64))
        probs = self._with_bearoff(after, afterstates=True, family=family)
        results = game_results(after)
        done = results > 0
        if done.any():
            probs[done] = terminal_probs_batch(results[done])
        return probs

    def _with_bearoff(self, boards: np.ndarray, afterstates: bool, family=None) -> np.ndarray:
        """The net's probabilities (flipped to the mover's view for afterstates), with bear-off
        positions taken from the database when ``self.bearoff`` is on; ``family`` is
        ``(parents, parent_of)`` of afterstates, for the compiled pass."""
        mask = is_bearoff(boards) if self.bearoff and len(boards) else None
        if mask is None or not mask.any():
            probs = self.run_net(boards, afterstates, family)
        else:
            from bgnet.bearoff import get_database

            probs = np.empty((len(boards), 5), np.float32)
            sel = boards[mask]
            # Both sources answer for the side on roll: for an afterstate, the opponent.
            probs[mask] = get_database().probabilities(sel[:, ::-1] if afterstates else sel)
            rest = ~mask
            if rest.any():
                kin = None if family is None else (family[0], family[1][rest])
                probs[rest] = self.run_net(np.ascontiguousarray(boards[rest]), afterstates, kin)
        return flip(probs) if afterstates else probs


def afterstates_of(ev, after: np.ndarray, parents: np.ndarray, parent_of: np.ndarray) -> np.ndarray:
    """``ev.afterstates(after)`` for afterstates whose positions are known (``after[k]`` a move
    from ``parents[parent_of[k]]``): an :class:`Evaluator`, or an object whose ``knows_parents``
    is true, is told them; any other object with an ``afterstates`` method is asked plainly."""
    if isinstance(ev, Evaluator) or getattr(ev, "knows_parents", False):
        return ev.afterstates(after, parents, parent_of)
    return ev.afterstates(after)


def parent_rows(off: np.ndarray, per_parent: int = 1) -> np.ndarray:
    """``parent_of`` for the afterstates :func:`bgnet.engine.movegen.generate_batch` wrote with
    offsets ``off``, when each parent's rows span ``per_parent`` consecutive segments (21 when
    every position was generated with each of the 21 rolls).

    >>> parent_rows(np.array([0, 2, 5, 6]))
    array([0, 0, 1, 1, 1, 2])
    >>> parent_rows(np.array([0, 2, 5, 6, 7]), 2)
    array([0, 0, 0, 0, 0, 1, 1])
    """
    off = np.asarray(off, np.int64)
    return np.repeat(np.arange(len(off) - 1) // per_parent, np.diff(off))

