"""bgnet's cube decisions beside GNU Backgammon's on self-play positions: the cases, the two
references and their comparison, as ``tests/test_cube.py`` checks them and ``tools/verify_cube.py``
(a maintainer script, which puts this folder on its path) prints them at length.

Positions come from gnubg 0-ply self-play (half of them with 15 % random moves mixed in, for
lopsided positions); each gets a cube and score in turn from a list covering money play (Jacoby on
and off, owned cubes) and 7-point match scores (1-away, 2-away, Crawford, post-Crawford, owned and
dead cubes). Two references:

* the GNU Backgammon program (``gnubg -t``, Debian package ``gnubg``; money and match play, the
  Kazaross-XG2 table): bgnet is fed the cubeless 0-ply probabilities gnubg prints for the position
  (5 decimals), so the comparison isolates the cube arithmetic;
* ``gnubg_nn.evaluate_cube_decision`` (match play only; its own analyser and built-in table): bgnet
  is fed ``gnubg_nn.probabilities(board, 0)`` and run with that same table (read from gnubg_nn) and
  with Kazaross-XG2. gnubg_nn ignores the Crawford rule, so Crawford games are left out there.

A :class:`Tally` counts agreement on the action (no double / double-take / double-pass / too
good), on doubling and on taking, the equity differences, and a confusion table per reference.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

import numpy as np
from gnubg_program import gnubg_program

from bgnet.cube import ACTIONS, MatchEquityTable, cube_action, decide_context
from bgnet.engine.state import CENTERED, MatchContext

# ----------------------------------------------------------------------------------------------
# Cases: positions and cube/score contexts


def context_list() -> list[tuple[str, MatchContext]]:
    """(category, context) pairs for the player on roll ``1`` (mirrored for player 0 in use)."""
    def money(cube=1, owner=CENTERED, jacoby=False):
        return MatchContext(cube_value=cube, cube_owner=owner, jacoby=jacoby)

    def match(me, opp, cube=1, owner=CENTERED, crawford=False):
        return MatchContext(cube_value=cube, cube_owner=owner, crawford=crawford, match_length=7,
                            score=(7 - opp, 7 - me))

    mine, theirs = 1, 0
    return [
        ("money", money()), ("money jacoby", money(jacoby=True)), ("money", money(2, mine)),
        ("money", money(4, mine)), ("money", money(2, theirs)),
        ("match", match(7, 7)), ("match", match(5, 5)), ("match", match(4, 6)),
        ("match", match(6, 4)),
        ("match", match(3, 5)), ("match", match(5, 3)), ("match", match(3, 3)),
        ("2-away", match(2, 2)), ("2-away", match(2, 4)), ("2-away", match(4, 2)),
        ("2-away", match(2, 3)), ("2-away", match(3, 2)),
        ("owned cube", match(5, 4, 2, mine)), ("owned cube", match(6, 3, 2, mine)),
        ("owned cube", match(7, 6, 4, mine)), ("owned cube", match(5, 5, 2, theirs)),
        ("dead cube", match(2, 3, 2, mine)),
        ("crawford", match(1, 4, crawford=True)), ("crawford", match(4, 1, crawford=True)),
        ("crawford", match(2, 1, crawford=True)),
        ("post-crawford", match(2, 1)), ("post-crawford", match(3, 1)),
        ("post-crawford", match(4, 1)), ("post-crawford", match(5, 1)),
        ("post-crawford", match(6, 1)), ("post-crawford", match(1, 3)),
        ("post-crawford", match(4, 1, 2, theirs)),
    ]


def for_player(ctx: MatchContext, player: int) -> MatchContext:
    """The context with ``player`` on roll (built for player 1; mirrored for player 0)."""
    if player == 1:
        return ctx.replace(player_on_roll=1, turn=1)
    owner = ctx.cube_owner if ctx.cube_owner == CENTERED else 1 - ctx.cube_owner
    return ctx.replace(player_on_roll=0, turn=0, cube_owner=owner, score=ctx.score[::-1])


def sample_cases(n: int, seed: int = 0) -> list[tuple[str, np.ndarray, MatchContext]]:
    """``n`` (category, board, context) cases from gnubg self-play, contexts in rotation."""
    from bgnet.engine.board import game_result, swap
    from bgnet.engine.sampling import sample_positions
    from bgnet.measure.reference_play import gnubg_chooser, mixed_chooser

    half = (n + 1) // 2
    b1, _ = sample_positions(half, seed=seed, chooser=gnubg_chooser, every=5)
    b2, _ = sample_positions(n - half + 8, seed=seed + 1, chooser=mixed_chooser(0.15), every=5)
    boards = [b for b in np.concatenate([b1, b2])
              if not game_result(b) and not game_result(swap(b))][:n]
    contexts = context_list()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(boards))
    cases = []
    for k, i in enumerate(order):
        cat, ctx = contexts[k % len(contexts)]
        cases.append((cat, boards[i], for_player(ctx, int(rng.integers(2)))))
    return cases


# ----------------------------------------------------------------------------------------------
# Reference 1: the GNU Backgammon program


@dataclass
class Reference:
    """A reference program's cube verdict on one case."""

    action: str
    available: bool
    probabilities: tuple | None = None
    equities: dict = field(default_factory=dict)  # "nd", "dt", "dp" (normalised equities)
    text: str = ""


_LABELS = {"No double": "nd", "No redouble": "nd", "Double, take": "dt", "Redouble, take": "dt",
           "Double, pass": "dp", "Redouble, pass": "dp"}


def action_from_text(text: str) -> str:
    """One of :data:`ACTIONS` from gnubg's "Proper cube action" words.

    >>> action_from_text("Too good to redouble, pass"), action_from_text("No double, beaver")
    ('too_good', 'no_double')
    """
    t = text.lower()
    if t.startswith("too good"):
        return "too_good"
    if t.startswith(("no double", "no redouble", "never")):
        return "no_double"
    if "double" in t and t.endswith("pass"):
        return "double_pass"
    if "double" in t:
        return "double_take"  # take or beaver, optional or not
    raise ValueError(f"unknown gnubg cube action {text!r}")


def gnubg_program_decisions(cases, program: str | None = None, plies: int = 0) -> list[Reference]:
    """Run gnubg's cube analysis at ``plies`` (``hint`` before the roll) on every case, one
    process."""
    from bgnet.engine.position_id import position_id
    from bgnet.formats.match_id import match_id

    program = program or gnubg_program()
    if program is None:
        raise RuntimeError("the GNU Backgammon program is not installed (apt-get install gnubg)")
    lines = ["set automatic roll off", "set player 0 human", "set player 1 human",
             "set output digits 5", "set beavers 0", "new session",
             f"set evaluation cubedecision evaluation plies {int(plies)}"]
    for i, (_, board, ctx) in enumerate(cases):
        lines += [f"bgnetcase{i}", f"set matchid {match_id(ctx)}",
                  f"set board {position_id(board)}", "hint"]
    lines.append("bgnetcase-end")
    out = subprocess.run([program, "-t", "-q"], input="\n".join(lines) + "\n", text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=600 + len(cases) * 2 ** plies).stdout
    parts = re.split(r"bgnetcase(\d+)", out)
    found = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    return [_parse_hint(found.get(i, ""), cases[i]) for i in range(len(cases))]


def _parse_hint(text: str, case) -> Reference:
    from bgnet.formats.match_id import match_id

    ids = re.findall(r"Match ID\s*:\s*(\S+)", text)
    if not ids or ids[-1][:11] != match_id(case[2])[:11]:
        raise RuntimeError(f"gnubg did not take the Match ID {match_id(case[2])}: {ids}")
    if "Cube analysis" not in text:
        return Reference("no_double", False, text=text)  # gnubg offers no cube action here
    block = text[text.index("Cube analysis"):]
    num = r"(-?[\d.]+)"  # gnubg may print -0.00000
    probs = re.search(r"\n\s*" + " ".join([num] * 3) + " - " + " ".join([num] * 3), block)
    p = tuple(max(float(probs.group(k)), 0.0) for k in (1, 2, 3, 5, 6))
    eqs = {_LABELS[m.group(1)]: float(m.group(2)) for m in
           re.finditer(r"^\s*\d\. ([A-Za-z, ]+?)\s+([+-]\d+\.\d+)", block, re.M)
           if m.group(1) in _LABELS}
    proper = re.search(r"Proper cube action: ([^(\n]+)", block).group(1).strip()
    return Reference(action_from_text(proper), True, p, eqs, proper)


# ----------------------------------------------------------------------------------------------
# Reference 2: gnubg_nn.evaluate_cube_decision


def gnubg_nn_met(length: int = 25) -> MatchEquityTable:
    """gnubg_nn's built-in table (Snowie 2.1's pre-Crawford values, its own post-Crawford ones).

    Pre-Crawford MWC come from ``gnubg_nn.equities.value`` (an equity, 2 MWC - 1). gnubg_nn has no
    reader for post-Crawford values, so they are probed: a trailer (n + 2)-away doubling a 1-away
    leader post-Crawford, the double/pass MWC is the trailer's at (n + 1)-away (4 decimals).
    """
    import gnubg_nn as g

    pre = np.array([[(1.0 + g.equities.value(i, j)) / 2.0 for j in range(1, length + 1)]
                    for i in range(1, length + 1)])
    key = g.key_of_board(g.board_from_position_id("4HPwATDgc/ABMA"))
    post = [0.5]
    for us in range(3, length + 1):
        g.set.score(us, 1, 0)
        g.set.cube(1, b"O")
        post.append(g.evaluate_cube_decision(key, 0, -1, b"O", 1, (0.5, 0.1, 0.0, 0.1, 0.0))[5])
    return MatchEquityTable("gnubg_nn built-in table", pre, np.array(post),
                            source="read from gnubg_nn.equities.value and probed post-Crawford")


def gnubg_nn_decision(board, probs, ctx: MatchContext) -> Reference | None:
    """gnubg_nn's 0-ply cube verdict, or None where it cannot serve as a reference (money play,
    the Crawford game, which it ignores)."""
    import gnubg_nn as g

    if ctx.is_money or ctx.crawford:
        return None
    me = ctx.player_on_roll
    if ctx.cube_owner not in (CENTERED, me):
        return Reference("no_double", False)  # gnubg_nn refuses: the side on roll has no cube
    g.set.score(ctx.away(me), ctx.away(1 - me), 0)  # score first: it resets the cube
    g.set.cube(ctx.cube_value, b"O")  # "O" is the side on roll below
    key = g.key_of_board(np.asarray(board).tolist())
    dbl, take, too_good, nd, dt, dp = g.evaluate_cube_decision(key, 0, -1, b"O", 1, tuple(probs))
    if ctx.away(me) <= ctx.cube_value:
        # It answers without analysing when the cube cannot help the side on roll (its
        # equities are then left over from the previous call).
        return Reference("double_take" if dbl else "no_double", False)
    # Its flags call "no double" what gnubg calls "too good, take"; classify its equities the
    # way gnubg does instead (the flags agree with this except for that case).
    return Reference(cube_action(nd, dt, dp, probs[1] > 0), True, tuple(probs),
                     {"nd": nd, "dt": dt, "dp": dp})


# ----------------------------------------------------------------------------------------------
# Comparison


@dataclass
class Tally:
    """Agreement counts and equity differences against one reference."""

    name: str
    n: int = 0
    same: int = 0
    same_double: int = 0
    same_take: int = 0
    trivial: int = 0
    exact_bearoff: int = 0
    diffs: list = field(default_factory=list)
    confusion: dict = field(default_factory=dict)
    by_category: dict = field(default_factory=dict)
    mismatches: list = field(default_factory=list)

    def add(self, cat: str, ref: Reference, mine, eq_diffs=(), note: str = ""):
        if not ref.available:
            self.trivial += 1  # the reference gives no cube access: neither may double
            ok = ref.action == mine.action == "no_double" and not mine.cube_available
            self.same += ok
            self.n += 1
            self._cat(cat, ok)
            if not ok:
                self.mismatches.append((cat, ref.action, mine.action, note))
            return
        self.n += 1
        ok = ref.action == mine.action
        self.same += ok
        self.same_double += ref.action.startswith("double") == mine.double
        self.same_take += (ref.action in ("double_take", "no_double")) == mine.take or \
            ref.action == "too_good"  # gnubg's too-good verdict carries no take answer
        self.diffs.extend(eq_diffs)
        key = (ref.action, mine.action)
        self.confusion[key] = self.confusion.get(key, 0) + 1
        self._cat(cat, ok)
        if not ok:
            self.mismatches.append((cat, ref.action, mine.action, note))

    def _cat(self, cat, ok):
        a, b = self.by_category.get(cat, (0, 0))
        self.by_category[cat] = (a + ok, b + 1)

    @property
    def agreement(self) -> float:
        return self.same / self.n if self.n else float("nan")

    def report(self) -> str:
        live = self.n - self.trivial
        d = np.abs(np.array(self.diffs)) if self.diffs else np.zeros(1)
        share = f"{100 * self.agreement:.1f} %"
        lines = [f"== {self.name}: {self.same}/{self.n} actions agree ({share})"
                 f"; {self.trivial} cases without cube access",
                 f"   with the cube available ({live}): double {self.same_double}/{live}, "
                 f"take {self.same_take}/{live}; |equity difference| mean {d.mean():.5f} "
                 f"max {d.max():.5f} over {len(self.diffs)} equities"
                 + (f" ({self.exact_bearoff} small bear-offs left out: gnubg uses its exact "
                    "two-sided database there)" if self.exact_bearoff else ""),
                 "   by category: " + ", ".join(f"{c} {a}/{b}" for c, (a, b) in
                                               sorted(self.by_category.items())),
                 "   confusion (rows reference, columns bgnet):",
                 "   " + " " * 12 + "".join(f"{a:>12s}" for a in ACTIONS)]
        for r in ACTIONS:
            lines.append("   " + f"{r:>12s}" + "".join(f"{self.confusion.get((r, c), 0):12d}"
                                                        for c in ACTIONS))
        for m in self.mismatches[:8]:
            lines.append(f"   differs ({m[0]}): reference {m[1]}, bgnet {m[2]} {m[3]}")
        return "\n".join(lines)


def compare_with_program(cases, refs) -> Tally:
    import gnubg_nn as g

    tally = Tally("GNU Backgammon 1.07 program, 0-ply, Kazaross-XG2 "
                  "(bgnet fed gnubg's probabilities)")
    for (cat, board, ctx), ref in zip(cases, refs):
        if not ref.available:  # gnubg prints no probabilities then; any will do for bgnet
            tally.add(cat, ref, decide_context(g.probabilities(board.tolist(), 0), ctx, board))
            continue
        mine = decide_context(ref.probabilities, ctx, board)
        diffs = [getattr(mine, name) - ref.equities[key] for key, name in
                 (("nd", "no_double"), ("dt", "double_take")) if key in ref.equities]
        if exact_bearoff(board):
            diffs, tally.exact_bearoff = [], tally.exact_bearoff + 1
        tally.add(cat, ref, mine, diffs, describe(ctx, ref.probabilities))
    return tally


def gnubg_rolls_ahead(board):
    """For the player on roll in ``board``: his probabilities after GNU Backgammon's 0-ply best
    move for each of the 21 rolls (gnubg_nn's net), and those afterstates: what
    :func:`bgnet.cube.lookahead.decide_after_rolls` needs to search the cube one roll ahead."""
    from bgnet.bots.gnubg_bots import GnubgBot
    from bgnet.engine.movegen import ROLLS

    bot = GnubgBot(0)
    boards = np.repeat(np.asarray(board, np.int8)[None], len(ROLLS), axis=0)
    after, _ = bot.choose_moves(boards, ROLLS)
    return np.asarray(bot.afterstate_probabilities(after), np.float64), after


def compare_lookahead_with_program(cases, refs) -> tuple[Tally, Tally]:
    """bgnet's cube decisions one roll ahead (:mod:`bgnet.cube.lookahead`), fed gnubg_nn's
    0-ply probabilities after gnubg's move for every roll, against the program's 1-ply cube
    analysis: both search the same tree, so this checks the search. Beside it, for scale, the
    cheap way: Janowski's model applied once to the probabilities averaged over the rolls."""
    from bgnet.cube.lookahead import decide_after_rolls
    from bgnet.engine.movegen import ROLL_WEIGHTS

    what = "(fed gnubg_nn's 0-ply probabilities after gnubg's moves)"
    search = Tally(f"GNU Backgammon 1.07 program, 1-ply cubeful: bgnet's search {what}")
    cheap = Tally(f"the same, bgnet's averaged probabilities at 0-ply {what}")
    for (cat, board, ctx), ref in zip(cases, refs):
        p_rolls, after = gnubg_rolls_ahead(board)
        averaged = (p_rolls * ROLL_WEIGHTS[:, None]).sum(axis=0)
        base = decide_context(averaged, ctx, board)
        mine = decide_after_rolls(p_rolls, ROLL_WEIGHTS, after, ctx, base)
        for tally, d in ((search, mine), (cheap, base)):
            if not ref.available:
                tally.add(cat, ref, d)
                continue
            diffs = [getattr(d, name) - ref.equities[key] for key, name in
                     (("nd", "no_double"), ("dt", "double_take")) if key in ref.equities]
            if exact_bearoff(board):
                diffs, tally.exact_bearoff = [], tally.exact_bearoff + 1
            tally.add(cat, ref, d, diffs, describe(ctx, averaged))
    return search, cheap


def exact_bearoff(board) -> bool:
    """Positions in GNU Backgammon's two-sided bear-off database (up to 6 checkers a side, all
    home), where the program uses exact cubeful money equities instead of Janowski's formula (in
    match play it derives the cube efficiency from them)."""
    b = np.asarray(board)
    return bool(b[:, 6:].sum() == 0 and b[0].sum() <= 6 and b[1].sum() <= 6)


def describe(ctx: MatchContext, probs) -> str:
    me = ctx.player_on_roll
    owner = ("centred" if ctx.cube_owner == CENTERED else
             "mine" if ctx.cube_owner == me else "theirs")
    where = "money" + (" (Jacoby)" if ctx.jacoby else "") if ctx.is_money else \
        f"{ctx.away(me)}-away v {ctx.away(1 - me)}-away" + (" Crawford" if ctx.crawford else "")
    return f"[{where}, cube {ctx.cube_value} {owner}, p={tuple(round(float(v), 3) for v in probs)}]"


def compare_with_gnubg_nn(cases, met=None, name="") -> Tally:
    import gnubg_nn as g

    tally = Tally(name)
    for cat, board, ctx in cases:
        probs = tuple(g.probabilities(board.tolist(), 0))
        ref = gnubg_nn_decision(board, probs, ctx)
        if ref is None:
            continue
        mine = decide_context(probs, ctx, board, met=met)
        diffs = []
        if ref.available:
            diffs = [mine.mwc_no_double - ref.equities["nd"],
                     mine.mwc_double_take - ref.equities["dt"]]
        tally.add(cat, ref, mine, diffs, describe(ctx, probs))
    return tally

