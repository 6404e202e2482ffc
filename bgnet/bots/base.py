"""The one interface every player implements: nets, pubeval, GNU Backgammon, random, a person.

A bot picks moves for positions in bgnet's board layout (see :mod:`bgnet.engine.board`): the side
on roll is ``board[1]``. The batch method, :meth:`Bot.choose_moves` ``(boards, dice,
contexts=None, ply=None)``, is what matches, self-play, rollouts and the table call, with the
cube and score of each position where they are known; it has a simple default that loops over
:meth:`Bot.choose_move`, and fast bots override it. The hooks a bot of several depths overrides
are public: :meth:`Bot.quick_choice`, :meth:`Bot.choose_one`, :meth:`Bot.probabilities_at`.

The stable public API speaks GNU Backgammon Position IDs (the player on roll to move) and works
on every bot:

* bots are made by :func:`bgnet.load_bot` ``(spec=None, ply=None)`` (:mod:`bgnet.bots.load`, the
  one loader, which knows every kind of bot; this module knows none of them): an exported bot
  (``.onnx``, runs without torch), a training checkpoint, a shipped bot by name, or without a
  spec the bot shipped as bgnet's default;
* :meth:`Bot.best_move` ``(position_id, d1, d2, ply=None) -> (notation, next position id)``, in the
  convention of :func:`bgnet.engine.legal_moves`;
* :meth:`Bot.evaluate_position` ``(position_id, ply=None)`` -> :class:`Evaluation` (five
  probabilities and the cubeless equity of the player on roll, before rolling); the batch code's
  :meth:`Bot.evaluate` ``(boards, ply=None)`` gives float[N, 5] for many boards at once;
* :meth:`Bot.cube_decision` ``(position_id, match_id)`` -> :class:`bgnet.cube.CubeDecision`.

``ply`` picks the search depth of bots that have several (net bots: 0, 1 or 2); None means the
bot's own depth.

What a bot can do is stated by typed attributes of its class, never probed for
(``hasattr``) by its users:

* :attr:`Bot.can_evaluate` -- :meth:`Bot.evaluate` gives probabilities for positions (a class
  that defines its own ``evaluate`` gets True unless it says otherwise);
* :attr:`Bot.plies` -- the depths its ``evaluate(boards, ply)`` and
  :meth:`Bot.afterstate_probabilities` accept (``()``: only its own, :attr:`Bot.ply`);
* :attr:`Bot.searches` -- its move at each of :attr:`Bot.plies` is the best of bgnet's one
  search over its own probabilities (:func:`bgnet.bots.search.rank_moves`), so a request may ask
  for any of them (net bots); bots that choose otherwise (GNU Backgammon, pubeval) say False;
* :attr:`Bot.ply` (its own depth, None for bots without one), :attr:`Bot.evaluator` (the
  batched evaluator of a net, a :class:`bgnet.bots.evaluator.PositionEvaluator`, None for bots
  without a net),
  :attr:`Bot.meta` (where the bot came from; empty unless it knows) and :attr:`Bot.name`.

In the manner of an evaluator trait with defaults: an evaluating bot implements one method,
``evaluate`` (probabilities of positions before the roll); :meth:`Bot.afterstate_probabilities`
(the mover's probabilities after each move, finished games by the rules) is built on it, and
the search (:mod:`bgnet.bots.search`) on that. Net bots override the defaults with batched ones.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from bgnet.bots.search import DEFAULT_SETTINGS, SearchSettings
from bgnet.engine.api import count_moves, game_over, move_text
from bgnet.engine.board import check_die
from bgnet.engine.movegen import generate
from bgnet.engine.position_id import fast_board_from_position_id
from bgnet.nn.encode import game_results
from bgnet.nn.probs import OUTPUTS, equity, flip, terminal_probs_batch

if TYPE_CHECKING:
    from bgnet.bots.evaluator import PositionEvaluator


@dataclass(frozen=True)
class Evaluation:
    """A bot's view of a position: cubeless probabilities of the player on roll, before rolling.

    ``probabilities`` are five floats in GNU Backgammon's order (win, win gammon, win backgammon,
    lose gammon, lose backgammon; gammons include backgammons); ``equity`` is the cubeless money
    equity ``2 win - 1 + wg - lg + wbg - lbg``; ``ply`` the search depth used (None: the bot has
    one fixed depth).

    >>> e = Evaluation("4HPwATDgc/ABMA", (0.5, 0.15, 0.01, 0.14, 0.01), 0.01, 0)
    >>> e.as_dict()["win_gammon"], round(e.as_dict()["equity"], 2)
    (0.15, 0.01)
    """

    position_id: str
    probabilities: tuple
    equity: float
    ply: int | None = None

    def as_dict(self) -> dict:
        """``{"position_id", "win", "win_gammon", ..., "lose_backgammon", "equity", "ply"}``."""
        out: dict[str, object] = {"position_id": self.position_id}
        out.update(zip(OUTPUTS, self.probabilities))
        out["equity"] = self.equity
        out["ply"] = self.ply
        return out


def board_batch(boards) -> np.ndarray:
    """``boards`` as int8[N, 2, 25] (one board or many), or TypeError for a Position ID string,
    which :meth:`Bot.evaluate_position` takes.

    >>> board_batch(np.zeros((2, 25), np.int8)).shape
    (1, 2, 25)
    >>> board_batch("4HPwATDgc/ABMA")
    Traceback (most recent call last):
    ...
    TypeError: evaluate takes boards (int8[N, 2, 25]); for a Position ID call evaluate_position('4HPwATDgc/ABMA')
    """
    if isinstance(boards, str):
        raise TypeError("evaluate takes boards (int8[N, 2, 25]); for a Position ID call "
                        f"evaluate_position({boards!r})")
    return np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)


_NO_STEPS = np.full((4, 2), -1, np.int8)  # the steps of a pass


@functools.lru_cache(maxsize=256)
def _context_of(match_id: str):
    """The :class:`bgnet.engine.state.MatchContext` of a Match ID (read once per ID)."""
    from bgnet.formats.match_id import match_context_from_id

    return match_context_from_id(match_id)


def mover_probabilities(after: np.ndarray, opponent, dtype) -> np.ndarray:
    """The mover's probabilities ``dtype[M, 5]`` after each afterstate ``[opponent, mover]``: a
    finished game by the rules, the rest by ``opponent`` (given the unfinished ones with the
    opponent on roll, it returns the opponent's probabilities), flipped to the mover."""
    out = np.empty((len(after), 5), dtype)
    results = game_results(after)
    done = results > 0
    if done.any():
        out[done] = terminal_probs_batch(results[done])
    live = ~done
    if live.any():
        out[live] = flip(opponent(np.ascontiguousarray(after[live][:, ::-1])))
    return out


class Bot:
    """Base class. Subclasses implement ``choose_move`` or ``choose_moves`` (or both), and
    ``evaluate`` where they give probabilities; their capabilities are the class attributes below
    (see the module docstring)."""

    name: str = "bot"
    can_evaluate: bool = False  # evaluate() gives probabilities (set for classes defining it)
    plies: tuple[int, ...] = ()  # depths evaluate(boards, ply) accepts; (): only its own
    searches: bool = False  # its move is the best of bgnet's search at each of plies
    ply: int | None = None  # its own depth; None: it has none
    evaluator: PositionEvaluator | None = None  # the batched evaluator of its net, or None
    meta: Mapping = MappingProxyType({})  # where it came from (net bots: the checkpoint's meta)
    search: SearchSettings = DEFAULT_SETTINGS  # the move filter of a bot that searches

    def choose_move(self, board: np.ndarray, d1: int, d2: int) -> np.ndarray:
        """The afterstate (``[opponent, mover_after]``) this bot plays; the board itself if no move."""
        after, _ = self.choose_moves(board[None], np.array([[d1, d2]]))
        return after[0]

    def choose_moves(self, boards: np.ndarray, dice: np.ndarray, contexts=None,
                     ply: int | None = None):
        """Chosen afterstates for many positions at once: ``(int8[N, 2, 25], steps int8[N, 4, 2])``.

        The steps are the (from, to) pairs of the chosen move, as :mod:`bgnet.engine.movegen` gives.
        ``contexts``: the cube and score of the positions where they are known (a
        :class:`bgnet.engine.state.MatchContext` per position, the mover on roll, or one for all):
        bots that rank moves by the match's own measure (net bots: :mod:`bgnet.cube.checker`) use
        them, the others choose as without them. ``ply``: a depth among :attr:`plies` for a bot
        of several (None: its own); a bot of one depth refuses any other.
        """
        self.check_fixed_ply(ply)
        if type(self).choose_move is Bot.choose_move:
            raise NotImplementedError(f"{type(self).__name__} implements neither choose_move nor choose_moves")
        out = np.empty_like(boards)
        steps = np.full((len(boards), 4, 2), -1, np.int8)
        for i, (b, (d1, d2)) in enumerate(zip(boards, dice)):
            out[i] = self.choose_move(b, int(d1), int(d2))
            after, moves = generate(b, int(d1), int(d2))
            for a, m in zip(after, moves):
                if np.array_equal(a, out[i]):
                    steps[i] = m
                    break
        return out, steps

    def evaluate(self, boards: np.ndarray, ply: int | None = None) -> np.ndarray:
        """Cubeless probabilities float[N, 5] for the side on roll of each board, before it rolls
        (gnubg order: win, win gammon, win backgammon, lose gammon, lose backgammon), at ``ply``
        for a bot of several depths (None: its own). Optional: a bot that has it says so in
        ``can_evaluate``. One position by its ID: :meth:`evaluate_position`."""
        raise NotImplementedError(f"{self.name} cannot evaluate positions")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "evaluate" in cls.__dict__ and "can_evaluate" not in cls.__dict__:
            cls.can_evaluate = True

    # -- the Position ID API ------------------------------------------------------------------
    def best_move(self, position_id: str, d1: int, d2: int, ply: int | None = None,
                  match_id: str | None = None) -> tuple[str, str]:
        """The move this bot plays: ``(notation, next Position ID)``.

        Same convention as :func:`bgnet.engine.legal_moves`: ``position_id`` has the mover on roll;
        the next ID is the position after the move with the OPPONENT on roll, so it is one of the
        IDs ``legal_moves`` lists and can be passed back for the opponent's turn. When no move is
        legal the turn passes: ``("", the same checkers with the opponent on roll)``. Raises
        ValueError for a finished game (a side has borne off all its checkers), a bad ID or dice
        outside 1..6.

        ``match_id`` (a GNU Backgammon Match ID: cube, owner, score, match length; the mover is
        its player on roll) makes a net bot choose by the match's own measure: cubeful equity in
        money play, match winning chances at the score in a match (:mod:`bgnet.cube.checker`).
        Without it, or for bots that do not know the cube, moves are chosen as without a cube.
        """
        a, b = check_die(d1, "the first die"), check_die(d2, "the second die")
        board = fast_board_from_position_id(position_id)
        if game_over(board):
            raise ValueError(f"the game in {position_id!r} is over: a side has borne off all its "
                             "checkers, so there is no move to play")
        ctx = _context_of(match_id) if match_id is not None else None
        quick = self.quick_choice(board, a, b, ply, ctx)  # moves generated once, where it applies
        if quick is not None:
            return move_text(board, quick[1], quick[0])
        if count_moves(board, a, b) == 0:
            return move_text(board, _NO_STEPS, board)
        after, steps = self.choose_one(board, a, b, ply, ctx)
        return move_text(board, steps, after)

    def evaluate_position(self, position_id: str, ply: int | None = None) -> Evaluation:
        """Cubeless probabilities and equity of the player on roll in ``position_id``, before
        rolling, at ``ply`` (None: the bot's own depth)."""
        board = fast_board_from_position_id(position_id)
        p = np.asarray(self.probabilities_at(board[None], ply), np.float64).reshape(5)
        eq = equity(p)
        used = ply if ply is not None else self.ply
        return Evaluation(position_id, tuple(float(v) for v in p), float(eq), used)

    def cube_decision(self, position_id: str, match_id: str, ply: int | None = None):
        """The cube action for the player on roll (double/take/pass, too good), from this bot's
        probabilities at ``ply`` and a GNU Backgammon Match ID (cube, score, match length; money
        when the length is 0): a :class:`bgnet.cube.CubeDecision`. Uses the bot's cube settings
        (match equity table, cube efficiency; GNU Backgammon's defaults unless the bot has its
        own)."""
        board = fast_board_from_position_id(position_id)
        return self.cube_decisions(board[None], [_context_of(match_id)], ply)[0]

    def cube_decisions(self, boards: np.ndarray, contexts, ply: int | None = None, *, met=None,
                       efficiency=None) -> list:
        """The cube action (a :class:`bgnet.cube.CubeDecision`) for the player on roll of each
        position (``boards[i]`` from his side, ``contexts[i]`` its cube and score), from this bot's
        probabilities at ``ply`` (None: its own choice of depth) and its cube settings, or
        ``met``/``efficiency`` where given. The opponent's answer to a double is the decision's
        ``take``: the taker values the doubler's position."""
        boards = np.ascontiguousarray(boards, np.int8).reshape(-1, 2, 25)
        probs = np.asarray(self.probabilities_at(boards, ply), np.float64)
        if probs.shape != (len(boards), 5):
            raise ValueError(f"{self.name} returned probabilities of shape {probs.shape} for "
                             f"{len(boards)} positions; expected (N, 5)")
        from bgnet.cube import decide_context

        met, efficiency = self._cube_settings_or(met, efficiency)
        return [decide_context(p, ctx, b, met=met, efficiency=efficiency)
                for p, ctx, b in zip(probs, contexts, boards)]

    def _cube_settings_or(self, met=None, efficiency=None):
        """``(met, efficiency)``: those given, else this bot's own (:meth:`cube_settings`)."""
        own_met, own_efficiency = self.cube_settings()
        return (own_met if met is None else met,
                own_efficiency if efficiency is None else efficiency)

    def move_measure(self, contexts):
        """The :class:`bgnet.cube.checker.MoveMeasure` this bot ranks moves by where the cube is
        known (``contexts``: one :class:`~bgnet.engine.state.MatchContext` per position, or one
        for all), with its cube settings; None where moves are ranked by cubeless money equity
        (no contexts, or a measure that is cubeless)."""
        if contexts is None:
            return None
        from bgnet.cube.checker import MoveMeasure, measure_for

        met, efficiency = self.cube_settings()
        if isinstance(contexts, (list, tuple)):
            measure = MoveMeasure(list(contexts), met, efficiency)
        else:
            measure = measure_for(contexts, met, efficiency)
        return None if measure.cubeless else measure

    def cube_settings(self):
        """``(match equity table name or None, cube efficiency or None)`` for :meth:`cube_decision`;
        None means bgnet's defaults (Kazaross XG2, GNU Backgammon's efficiencies)."""
        return None, None

    # -- hooks for bots with several search depths -----------------------------------------------
    def check_fixed_ply(self, ply) -> None:
        """ValueError unless ``ply`` is None or this bot's own depth (for bots of one depth)."""
        own = self.ply
        if ply is not None and ply != own:
            depth = f"at {own}-ply" if own is not None else "at one fixed depth"
            raise ValueError(f"{self.name} plays {depth}; it cannot search at ply={ply}")

    def quick_choice(self, board: np.ndarray, d1: int, d2: int, ply, ctx=None):
        """Hook: (afterstate, steps) from a one-call path that generates the moves itself, or
        None where there is none (the default) or it leaves the position (a pass among them) to
        :meth:`choose_one`. ``ctx``: the cube and score (a MatchContext), or None."""
        return None

    def choose_one(self, board: np.ndarray, d1: int, d2: int, ply, ctx=None):
        """Hook: (afterstate, steps) this bot plays in one position at ``ply`` (in ``ctx``, when
        the cube and score are known); by default :meth:`choose_moves` of a batch of one, at the
        bot's one depth."""
        self.check_fixed_ply(ply)
        after, steps = self.choose_moves(np.ascontiguousarray(board, np.int8)[None],
                                         np.array([[d1, d2]], np.int64), ctx)
        return after[0], steps[0]

    def probabilities_at(self, boards: np.ndarray, ply) -> np.ndarray:
        """Hook: float[N, 5] for the side on roll at ``ply`` (the Position ID API's and the
        cube's: None or the bot's own depth, unless it searches)."""
        self.check_fixed_ply(ply)
        return self.evaluate(boards)

    def afterstate_probabilities(self, after: np.ndarray, ply: int | None = None,
                                 parents: np.ndarray | None = None,
                                 parent_of: np.ndarray | None = None) -> np.ndarray:
        """The mover's probabilities float[M, 5] after each afterstate ``[opponent, mover]``, at
        ``ply`` (None: the bot's own depth; else one of :attr:`plies`): a finished game by the rules, the rest by
        :meth:`evaluate` with the opponent on roll, seen from the mover. ``parents`` (the
        positions the afterstates were played from: one for all, one each, or with
        ``parent_of`` the row of each afterstate's) lets a net start from their first layer;
        others ignore them. Only for bots that :attr:`can_evaluate`."""
        after = np.ascontiguousarray(after, np.int8).reshape(-1, 2, 25)

        def opponent(opp_on_roll: np.ndarray) -> np.ndarray:
            if ply is None or ply == self.ply:
                probs = self.evaluate(opp_on_roll)
            elif ply in self.plies:
                probs = self.evaluate(opp_on_roll, ply)
            else:
                raise ValueError(f"{self.name} evaluates at {self.ply}-ply; not at ply={ply}")
            return np.asarray(probs, np.float64).reshape(-1, 5)

        return mover_probabilities(after, opponent, np.float64)

    def with_cache(self, max_entries: int | None = None) -> Bot:
        """This bot with the values its searches meet kept and read back (net bots:
        :meth:`bgnet.bots.net.NetBot.with_cache`); the bot itself where it keeps none."""
        return self

    def clear_cache(self) -> None:
        """Forget what :meth:`with_cache` kept (nothing, for a bot that keeps nothing)."""

    def close(self) -> None:
        """Release resources (processes, sessions)."""
