"""What the API answers, computed on the bot's thread (see :mod:`.service`): ranked moves,
evaluations, cube decisions and the bot's description.

Net bots rank every legal move themselves, at the ply a request asks for, and every move an
answer lists is valued at that ply (a search values only its best few that deep: the others are
valued again before they are listed). A bot that only
chooses moves (pubeval, random) puts its choice first; its probabilities, and the order of the
other moves, come from the judge of :class:`~bgnet.play.advisor.Advisor` (GNU Backgammon's 0-ply
net when installed). Answers name the evaluator they used.

Where a request gives the cube and score (a Match ID, an XGID, wildbg's ``x_away``/``o_away``),
moves are chosen and ranked by the match's own measure (:mod:`bgnet.cube.checker`): cubeful
equity at the score in a match (EMG, the match winning chances beside it), cubeful money equity
with the cube; answers name the measure (``ranked_by``), say why it is that one
(``ranked_by_why``: a bare Position ID carries no cube and an XGID always does, so the same
position ranks differently in the two spellings) and keep the cubeless equity beside it.
Without them, or for a server started with ``cubeless_play``, moves rank by cubeless equity.
"""
from __future__ import annotations

import numpy as np

from bgnet.bots.search import RankedMove
from bgnet.engine import position_id
from bgnet.engine.state import MatchContext
from bgnet.nn.probs import equity as money_equity
from bgnet.play.advisor import Advisor, MatchStateError
from bgnet.play.web.positions import bad, next_position_id, probs_dict, steps_list, wildbg_probs

MAX_PLY = 2  # net bots search at 0, 1 or 2 ply


class Answers:
    """The bot's answers; ``default_ply`` is the search depth used when a request names none."""

    def __init__(self, bot, default_ply: int | None = None, cubeless_play: bool = False):
        self.bot = bot
        self.advisor = Advisor(bot, cubeless_play=cubeless_play)
        self.default_ply = default_ply
        self.searches = bot.searches  # net bots: a ply per request

    # -- depth -----------------------------------------------------------------------------------
    def ply(self, requested: int | None) -> int | None:
        """The ply a request gets; a ply for a bot with one fixed depth is refused (400)."""
        if requested is None:
            return self.default_ply if self.default_ply is not None else self.bot.ply
        if not 0 <= requested <= MAX_PLY:
            raise bad(f"ply must be from 0 to {MAX_PLY}; got {requested}")
        if not self.searches:
            if requested != self.bot.ply:
                raise bad(f"{self.bot.name} searches at one fixed depth; leave out ply")
        return requested

    @property
    def evaluator(self):
        return self.advisor.judge

    @property
    def evaluator_name(self) -> str | None:
        """The name of the bot whose probabilities the answers give (None: none)."""
        return None if self.evaluator is None else self.evaluator.name

    def _need_evaluator(self):
        if self.evaluator is None:
            raise bad(f"{self.bot.name} cannot evaluate positions and no evaluator is installed "
                      "(GNU Backgammon's net, bgnet[ref])")
        return self.evaluator

    # -- moves -----------------------------------------------------------------------------------
    def ranked(self, board: np.ndarray, d1: int, d2: int, ply: int | None,
               ctx: MatchContext | None = None, limit: int | None = None) -> list[RankedMove]:
        """Every legal move best first (:meth:`bgnet.play.advisor.Advisor.moves`): net bots rank
        every move themselves at ``ply``; other bots only choose one, theirs comes first and the
        rest follow in the evaluator's order (the generator's without one). ``ctx`` (the mover
        on roll): rank by the match's own measure; ``limit``: a net bot values its best
        ``limit`` moves at ``ply`` (see :func:`bgnet.bots.search.rank_moves`)."""
        try:
            return self.advisor.moves(board, d1, d2, ctx, ply=ply, limit=limit)
        except MatchStateError as e:  # refused before the bot was asked
            raise bad(f"cannot rank moves in this match state: {e}") from None

    def valued(self, board: np.ndarray, d1: int, d2: int, ply: int | None, limit: int,
               ctx: MatchContext | None = None) -> tuple[int, list[RankedMove]]:
        """(number of legal moves, the best ``limit`` of them), every one valued at ``ply``: a
        net bot's search values only its few best candidates that deep, so the others listed
        are valued again, and the list is ordered by those values (by the measure of ``ctx``)."""
        ranked = self.ranked(board, d1, d2, ply, ctx, limit)
        return len(ranked), ranked[:limit]

    def values_ply(self, ply: int | None) -> int | None:
        """The depth the values of :meth:`valued` come from: the ply asked of a net bot, else
        the judge's own (0-ply for GNU Backgammon's net judging pubeval's moves)."""
        if self.searches:
            return ply
        return self.evaluator.ply if self.evaluator is not None else None

    def moves(self, board: np.ndarray, d1: int, d2: int, ply: int | None, limit: int,
              ctx: MatchContext | None = None) -> dict:
        count, top = self.valued(board, d1, d2, ply, limit, ctx)
        depth = self.values_ply(ply)
        out = [{
            "rank": rank,
            "notation": m.notation,
            "play": steps_list(m.steps),
            "next_position_id": next_position_id(m.after),
            "value": _r(m.value),
            "match_winning_chances": _r(m.mwc),
            "equity": _r(m.equity),
            "probabilities": None if m.probabilities is None else probs_dict(m.probabilities),
            "ply": None if m.probabilities is None else depth,
        } for rank, m in enumerate(top, 1)]
        return {"position_id": position_id(board), "dice": [d1, d2], "ply": depth,
                "legal_moves": count, "bot": self.bot.name,
                "evaluator": self.evaluator_name,
                "ranked_by": self.ranked_by(ctx), "ranked_by_why": self.ranked_by_why(ctx),
                "moves": out}

    def ranked_by_why(self, ctx: MatchContext | None) -> str:
        """Why the moves are ranked by :meth:`ranked_by`: what of the cube and score the request
        gave, and what another spelling of the same position would give (a bare Position ID
        carries neither, an XGID always carries both)."""
        if self.advisor.cubeless_play:
            return ("this server ranks checker plays by cubeless money equity whatever the cube "
                    "and score (it was started with cubeful play off)")
        if ctx is None:
            return ("no cube or score was given (a bare Position ID carries neither), so the moves "
                    "rank by cubeless money equity; with them (match_id, POSITIONID:MATCHID or "
                    "an XGID, which always carries them) they rank by the match's own measure: "
                    "cubeful money equity in money play, as the same position given as an XGID "
                    "with the cube centred is ranked")
        if ctx.is_money:
            return ("the cube and score were given (money play), so the moves rank by cubeful "
                    "money equity; the same position as a bare Position ID, which carries no "
                    "cube, ranks by cubeless money equity")
        return ("the score of a match was given, so the moves rank by cubeful equity at the score; "
                "the same position as a bare Position ID, which carries no score, ranks by "
                "cubeless money equity")

    def ranked_by(self, ctx: MatchContext | None) -> str:
        """The name of the measure moves played in ``ctx`` are ranked by (see
        :func:`bgnet.cube.checker.describe`)."""
        from bgnet.cube.checker import describe

        return describe(self.advisor.context(ctx))

    def wildbg_moves(self, board: np.ndarray, d1: int, d2: int,
                     ctx: MatchContext | None = None) -> dict:
        """wildbg's ``/move``: every legal move best first (by the match's own measure at the
        score of ``ctx``, cubeless without it); one empty play when none is legal."""
        ranked = self.ranked(board, d1, d2, self.default_ply, ctx)
        if not ranked:
            return {"moves": [{"play": [], "probabilities": wildbg_probs(self._after_probs(board))}]}
        return {"moves": [{"play": steps_list(m.steps), "probabilities": wildbg_probs(
            np.zeros(5) if m.probabilities is None else m.probabilities)} for m in ranked]}

    def _after_probs(self, board: np.ndarray) -> np.ndarray:
        """The mover's probabilities when the turn passes (the position unchanged)."""
        if self.evaluator is None:
            return np.zeros(5)
        return self.advisor.afterstate_probabilities(np.ascontiguousarray(board)[None])[0]

    # -- evaluation and the cube -----------------------------------------------------------------
    def probabilities(self, board: np.ndarray, ply: int | None) -> np.ndarray:
        judge = self._need_evaluator()
        if judge is self.bot and self.searches:
            return np.asarray(self.bot.evaluate(np.ascontiguousarray(board)[None], ply),
                              np.float64).reshape(5)
        probs = self.advisor.probabilities(board)
        assert probs is not None  # the advisor has a judge: _need_evaluator checked it
        return probs

    def evaluate(self, board: np.ndarray, ply: int | None) -> dict:
        p = self.probabilities(board, ply)
        return {"position_id": position_id(board), "ply": ply,
                "evaluator": self.evaluator.name, "probabilities": probs_dict(p),
                "equity": round(float(money_equity(p)), 6)}

    def cube(self, board: np.ndarray, ctx: MatchContext, ply: int | None) -> dict:
        """The cube decision as the bot makes it at the table and in ``bgnet eval``
        (:meth:`bgnet.bots.base.Bot.cube_decisions`: at its own depth, a 0-ply net looking again
        at close decisions), or at ``ply`` where that is another depth of a searching bot; the
        probabilities shown are those at ``ply``."""
        judge = self._need_evaluator()
        p = self.probabilities(board, ply)
        ctx = ctx.replace(double_offered=False, turn=ctx.player_on_roll)
        depth = ply if judge is self.bot and self.searches and ply != self.bot.ply else None
        boards = np.ascontiguousarray(board, np.int8)[None]
        try:
            d = judge.cube_decisions(boards, [ctx], depth)[0]
        except ValueError as e:
            raise bad(f"cannot decide the cube in this match state: {e}") from None
        return {
            "position_id": position_id(board), "ply": ply, "evaluator": self.evaluator.name,
            "action": d.action, "double": bool(d.double), "take": bool(d.take),
            "cube_available": bool(d.cube_available),
            "equities": {"no_double": _r(d.no_double), "double_take": _r(d.double_take),
                         "double_pass": _r(d.double_pass)},
            "take_point": _r(d.take_point), "cubeless_equity": _r(d.cubeless_equity),
            "match_winning_chances": None if d.mwc_no_double is None else {
                "no_double": _r(d.mwc_no_double), "double_take": _r(d.mwc_double_take),
                "double_pass": _r(d.mwc_double_pass)},
            "probabilities": probs_dict(p),
        }

    def wildbg_eval(self, board: np.ndarray, ctx: MatchContext) -> dict:
        """wildbg's ``/eval``: the side to move's probabilities and its cube decision."""
        c = self.cube(board, ctx, self.default_ply)
        p = [c["probabilities"][k] for k in ("win", "win_gammon", "win_backgammon",
                                             "lose_gammon", "lose_backgammon")]
        return {"cube": {"double": c["double"], "accept": c["take"]},
                "probabilities": wildbg_probs(p)}

    # -- the bot ---------------------------------------------------------------------------------
    def describe(self) -> dict:
        meta = dict(self.bot.meta)
        meta.pop("path", None)  # a path of the server's machine is none of a client's business
        return {
            "name": self.bot.name,
            "kind": type(self.bot).__name__,
            "ply": self.default_ply if self.default_ply is not None else self.bot.ply,
            "plies": list(range(MAX_PLY + 1)) if self.searches else None,
            "evaluator": self.evaluator_name,
            "encoding": meta.get("encoding"),
            "games_trained": meta.get("games"),
            "strength": meta.get("metrics") or None,
            "cube": meta.get("cube"),
            "exported": meta.get("exported"),
            "bgnet_version": meta.get("bgnet_version"),
            "can_evaluate": self.bot.can_evaluate,
        }


def _r(x):
    return None if x is None else round(float(x), 6)
