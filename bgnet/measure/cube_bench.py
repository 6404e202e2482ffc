"""Cube-decision benchmark: how often a bot's doubles and takes agree with GNU Backgammon, and
what its wrong ones cost.

The benchmark file holds positions before the roll where the player on roll may double (money
games with the cube centred or owned, 7-point matches at many scores and cube levels), drawn from
real play (see ``tools/make_cube_bench.py``), and GNU Backgammon's verdict on each: its proper
cube action and the three cubeful equities of the player on roll, no double (ND), double/take
(DT) and double/pass (DP), normalised to the current cube as the program prints them (points per
cube in money play, EMG in a match). Two verdicts: the program's cube decisions at 0-ply (its net
alone, the very net of the ``gnubg:0`` bot) and at 2-ply (two rolls ahead, cubeful: what its
analysis uses by default), chosen with ``reference``.

A bot makes two decisions on a position, as in ``bgnet eval``: the player on roll doubles or not,
and the opponent, offered the cube, takes or passes (from the same probabilities: bgnet's cube
head answers both). Both are judged as GNU Backgammon judges cube errors, by its own equities,
the opponent answering a double properly:

* a **double decision** counts on every position: doubling is worth ``min(DT, DP)``, playing on
  ``ND``; the error is the better of the two minus the chosen one. A missed double is no double
  where GNU Backgammon doubles; a wrong double, a double where it plays on (no double or too good);
* a **take decision** counts where the double is one GNU Backgammon would give or is too good to
  give, or the take is close (``|DT - DP| < TAKE_WINDOW``): elsewhere nobody who knows the cube
  offers it. A wrong take costs ``DT - DP``, a wrong pass ``DP - DT``.

Costs are in thousandths of the cube: millipoints in money play, mEMG in a match.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from bgnet.bots.base import Bot
from bgnet.cube import ACTIONS
from bgnet.engine.state import CENTERED, MatchContext

DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "data", "cube_benchmark.npz")
SOURCES = ("money", "match")  # money games with the cube; 7-point matches
TAKE_WINDOW = 0.2  # |DT - DP| below which a take counts although gnubg would not double
KINDS = ("missed_double", "wrong_double", "wrong_take", "wrong_pass")
BATCH = 512  # positions handed to a bot at once
_KEYS = ("boards", "cube", "owner", "length", "score", "crawford", "jacoby", "probabilities",
         "equities", "action", "source")
REFERENCES = ("0-ply", "2-ply")
# The deeper verdict's arrays, in the order of probabilities, equities, action, reference.
DEEP_KEYS = ("probabilities_2ply", "equities_2ply", "action_2ply", "reference_2ply")


@dataclass
class CubeBenchmark:
    """Positions before the roll and GNU Backgammon's cube verdict on each.

    ``owner`` is relative: -1 centred, 1 the player on roll (``boards[:, 1]``), 0 the opponent
    (``boards[:, 0]``); ``score`` is written the same way, ``[opponent, player on roll]``;
    ``length`` 0 is money play. ``equities`` are ND, DT, DP for the player on roll.
    """

    boards: np.ndarray  # int8[N, 2, 25]
    cube: np.ndarray  # int16[N]
    owner: np.ndarray  # int8[N]
    length: np.ndarray  # int8[N]
    score: np.ndarray  # int8[N, 2]
    crawford: np.ndarray  # bool[N]
    jacoby: np.ndarray  # bool[N]
    probabilities: np.ndarray  # float32[N, 5], gnubg's cubeless probabilities (player on roll)
    equities: np.ndarray  # float32[N, 3]: ND, DT, DP
    action: np.ndarray  # int8[N], index into bgnet.cube.ACTIONS
    source: np.ndarray  # int8[N], index into SOURCES
    reference: str = ""

    def __len__(self) -> int:
        return len(self.boards)

    def head(self, n: int) -> CubeBenchmark:
        """The first ``n`` positions."""
        return self.rows(slice(0, min(int(n), len(self))))

    def rows(self, index) -> CubeBenchmark:
        """The positions ``index`` picks (a slice, indices or a boolean mask)."""
        return CubeBenchmark(**{k: getattr(self, k)[index] for k in _KEYS}, reference=self.reference)

    def context(self, i: int) -> MatchContext:
        """The cube and score of position ``i``, the player on roll being player 1."""
        owner = int(self.owner[i])
        return MatchContext(cube_value=int(self.cube[i]), cube_owner=CENTERED if owner < 0 else owner,
                            player_on_roll=1, turn=1, crawford=bool(self.crawford[i]),
                            match_length=int(self.length[i]),
                            score=(int(self.score[i, 0]), int(self.score[i, 1])),
                            jacoby=bool(self.jacoby[i]))

    def reference_double(self) -> np.ndarray:
        """Where GNU Backgammon doubles."""
        return np.isin(self.action, [ACTIONS.index("double_take"), ACTIONS.index("double_pass")])

    def reference_take(self) -> np.ndarray:
        """Where GNU Backgammon's side offered the cube takes (DT below DP)."""
        return self.equities[:, 1] < self.equities[:, 2]

    def take_counts(self) -> np.ndarray:
        """Positions whose take decision counts (see the module docstring)."""
        nd = self.action == ACTIONS.index("no_double")
        close = np.abs(self.equities[:, 1] - self.equities[:, 2]) < TAKE_WINDOW
        return ~nd | close


def context_arrays(contexts) -> dict:
    """The context columns of a benchmark file from MatchContexts (any player on roll)."""
    cube, owner, length, score, crawford, jacoby = [], [], [], [], [], []
    for ctx in contexts:
        me = ctx.player_on_roll
        cube.append(ctx.cube_value)
        owner.append(-1 if ctx.cube_owner == CENTERED else int(ctx.cube_owner == me))
        length.append(ctx.match_length)
        score.append((ctx.score[1 - me], ctx.score[me]) if ctx.match_length else (0, 0))
        crawford.append(ctx.crawford)
        jacoby.append(ctx.jacoby)
    return {"cube": np.array(cube, np.int16), "owner": np.array(owner, np.int8),
            "length": np.array(length, np.int8), "score": np.array(score, np.int8).reshape(-1, 2),
            "crawford": np.array(crawford, bool), "jacoby": np.array(jacoby, bool)}


def save_benchmark(path: str, boards, contexts, probabilities, equities, actions, source,
                   reference: str = "") -> None:
    """Write a benchmark file (compressed .npz). ``actions``: names from bgnet.cube.ACTIONS."""
    from bgnet.measure.er import write_arrays

    n = len(boards)
    if not (len(contexts) == len(probabilities) == len(equities) == len(actions) == len(source) == n):
        raise ValueError("boards, contexts, probabilities, equities, actions and sources must "
                         "have one entry per position")
    write_arrays(path, boards=np.asarray(boards, np.int8).reshape(-1, 2, 25),
                 probabilities=np.asarray(probabilities, np.float32).reshape(-1, 5),
                 equities=np.asarray(equities, np.float32).reshape(-1, 3),
                 action=np.array([ACTIONS.index(a) for a in actions], np.int8),
                 source=np.asarray(source, np.int8), sources=np.array(SOURCES),
                 reference=np.array(reference), **context_arrays(contexts))


def load_benchmark(path: str | None = None, reference: str = "0-ply") -> CubeBenchmark:
    """Read a benchmark file (the shipped one by default), checking its arrays agree.

    ``reference``: whose verdict to judge by, GNU Backgammon's at ``"0-ply"`` (every file has it)
    or at ``"2-ply"`` (a file that has it)."""
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}; got {reference!r}")
    path = path or DEFAULT_PATH
    if not os.path.exists(path):
        raise FileNotFoundError(f"no cube benchmark file at {path!r}; build one with "
                                "tools/make_cube_bench.py")
    with np.load(path) as z:
        missing = set(_KEYS) - set(z.files)
        if missing:
            raise ValueError(f"{path!r} is not a cube benchmark: it lacks {sorted(missing)}")
        b = CubeBenchmark(**{k: z[k] for k in _KEYS},
                          reference=str(z["reference"]) if "reference" in z.files else "")
        if reference == "2-ply":
            if not set(DEEP_KEYS) <= set(z.files):
                raise ValueError(f"{path!r} has no 2-ply verdicts; add them with "
                                 "tools/make_cube_bench.py --deepen-only")
            b.probabilities, b.equities, b.action = (z[k] for k in DEEP_KEYS[:3])
            b.reference = str(z[DEEP_KEYS[3]])
    n = len(b.boards)
    shapes = {"boards": (n, 2, 25), "probabilities": (n, 5), "equities": (n, 3), "score": (n, 2)}
    if any(getattr(b, k).shape != s for k, s in shapes.items()) or \
            any(len(getattr(b, k)) != n for k in _KEYS):
        raise ValueError(f"{path!r} is inconsistent: its arrays do not have one row per position")
    if len(b.action) and (b.action.min() < 0 or b.action.max() >= len(ACTIONS)):
        raise ValueError(f"{path!r} has an unknown cube action")
    return b


def has_deep_reference(path: str | None = None) -> bool:
    """Whether the benchmark file (the shipped one by default) holds 2-ply verdicts."""
    from bgnet.measure.er import has_arrays

    return has_arrays(path or DEFAULT_PATH, DEEP_KEYS)


# ----------------------------------------------------------------------------------------------
# a bot's decisions


def bot_decisions(bot: Bot, bench: CubeBenchmark, ply: int | None = None,
                  on_done=None) -> tuple[np.ndarray, np.ndarray]:
    """Whether the bot, on roll, doubles in each position, and whether, offered the cube, it
    takes: both as ``bgnet eval`` decides them (:mod:`bgnet.measure.cube_play`: the bot's
    probabilities at ``ply``, None for its own depth, and its cube settings). A bot that cannot
    value positions never doubles and takes every double, as there."""
    from bgnet.measure.cube_play import CubePlayer

    player = CubePlayer(bot, cube_ply=ply)
    double = np.zeros(len(bench), bool)
    take = np.ones(len(bench), bool)
    if not player.cubes:
        if on_done is not None:
            on_done(len(bench))
        return double, take
    for lo in range(0, len(bench), BATCH):
        hi = min(lo + BATCH, len(bench))
        decisions = player.decisions(bench.boards[lo:hi], [bench.context(i) for i in range(lo, hi)])
        for i, d in zip(range(lo, hi), decisions):
            double[i], take[i] = d.double, d.take
        if on_done is not None:
            on_done(hi - lo)
    return double, take


# ----------------------------------------------------------------------------------------------
# scoring


def decision_costs(bench: CubeBenchmark, double: np.ndarray, take: np.ndarray) -> dict:
    """Per position: the cost of the double decision and of the take decision (0 where it does
    not count), whether each agrees with GNU Backgammon, and which positions' take counts."""
    nd, dt, dp = (bench.equities[:, k].astype(np.float64) for k in range(3))
    doubled = np.minimum(dt, dp)  # the opponent answers properly
    best = np.maximum(nd, doubled)
    double_cost = best - np.where(double, doubled, nd)
    ref_take, counts = bench.reference_take(), bench.take_counts()
    take_cost = np.where(counts & (take != ref_take), np.abs(dt - dp), 0.0)
    ref_double = bench.reference_double()
    return {"double_cost": np.maximum(double_cost, 0.0), "take_cost": take_cost,
            "double_agrees": double == ref_double, "take_agrees": (take == ref_take) | ~counts,
            "take_counts": counts, "missed_double": ref_double & ~double,
            "wrong_double": double & ~ref_double, "wrong_take": counts & take & ~ref_take,
            "wrong_pass": counts & ~take & ref_take}


def rate_row(bench: CubeBenchmark, double: np.ndarray, take: np.ndarray, name: str) -> dict:
    """The figures of one bot: agreement and cost per decision (thousandths of the cube), overall,
    by source (money, match) and by kind of error (counts and total cost)."""
    c = decision_costs(bench, double, take)
    counts = c["take_counts"]
    row: dict[str, Any] = {"bot": name}
    for where, sel in [("all", np.ones(len(bench), bool))] + \
            [(s, bench.source == k) for k, s in enumerate(SOURCES)]:
        n_double, n_take = int(sel.sum()), int((sel & counts).sum())
        n = n_double + n_take
        agree = int(c["double_agrees"][sel].sum()) + int(c["take_agrees"][sel & counts].sum())
        cost = float(c["double_cost"][sel].sum() + c["take_cost"][sel].sum()) * 1000.0
        row[where] = {"decisions": n, "double_decisions": n_double, "take_decisions": n_take,
                      "agreement": agree / n if n else float("nan"),
                      "double_agreement": (float(c["double_agrees"][sel].mean())
                                           if n_double else float("nan")),
                      "take_agreement": (float(c["take_agrees"][sel & counts].mean())
                                         if n_take else float("nan")),
                      "cost": cost / n if n else float("nan")}
    for kind in KINDS:
        cost = c["take_cost"] if kind in ("wrong_take", "wrong_pass") else c["double_cost"]
        row[kind] = {"count": int(c[kind].sum()), "cost": float(cost[c[kind]].sum()) * 1000.0}
    return row


def position_costs(bench: CubeBenchmark, double: np.ndarray, take: np.ndarray) -> np.ndarray:
    """The cost of each position's decisions together (double and take), thousandths of the cube."""
    c = decision_costs(bench, double, take)
    return (c["double_cost"] + c["take_cost"]) * 1000.0


def add_paired(row: dict, costs: np.ndarray, ref_costs: np.ndarray, ref: str) -> None:
    """Add to ``row`` its cost per decision minus ``ref``'s on the same positions, with a 95 %
    interval from the paired differences position by position."""
    from bgnet.measure.stats import mean_ci95

    per_decision = len(costs) / row["all"]["decisions"]  # positions per decision
    diff, ci = mean_ci95(costs - ref_costs)
    row.update({"paired_ref": ref, "cost_minus_ref": diff * per_decision,
                "cost_minus_ref_ci95": ci * per_decision})


def format_table(rows: list[dict], bench: CubeBenchmark) -> str:
    """The rows side by side: agreement with GNU Backgammon and cost per decision."""
    first = rows[0]
    n = {s: len(np.flatnonzero(bench.source == k)) for k, s in enumerate(SOURCES)}
    head = (f"cube decisions against GNU Backgammon ({len(bench)} positions: {n['money']} money, "
            f"{n['match']} match; {first['all']['double_decisions']} double and "
            f"{first['all']['take_decisions']} take decisions)")
    w = max([len("bot")] + [len(r["bot"]) for r in rows])
    lines = [head, f"{'bot':<{w}s}  {'agree':>6s}  {'double':>6s}  {'take':>6s}  {'cost':>6s}  "
                   f"{'money':>6s}  {'match':>6s}   errors: missed doubles, wrong doubles, "
                   "wrong takes, wrong passes (count / total cost)"]
    for r in rows:
        a = r["all"]
        kinds = ", ".join(f"{r[k]['count']} / {r[k]['cost']:.0f}" for k in KINDS)
        lines.append(f"{r['bot']:<{w}s}  {100 * a['agreement']:5.1f}%  "
                     f"{100 * a['double_agreement']:5.1f}%  {100 * a['take_agreement']:5.1f}%  "
                     f"{a['cost']:6.2f}  {r['money']['cost']:6.2f}  {r['match']['cost']:6.2f}   "
                     + kinds)
    lines.append("cost: thousandths of the cube lost per decision (millipoints in money play, "
                 "mEMG in a match), by GNU Backgammon's cubeful equities")
    for r in rows:
        if "paired_ref" in r:
            lines.append(f"{r['bot']} minus {r['paired_ref']}: {r['cost_minus_ref']:+.2f} ± "
                         f"{r['cost_minus_ref_ci95']:.2f} per decision (paired 95 % interval)")
    return "\n".join(lines)


def write_json(path: str, tables: list) -> None:
    """Write the figures and the benchmark's description as JSON. ``tables``: (benchmark, rows)
    pairs, one per reference; the first at the top level, any others under "other_references"."""
    (bench, rows), rest = tables[0], tables[1:]
    out = {"positions": len(bench), "reference": bench.reference, "take_window": TAKE_WINDOW,
           "results": rows}
    if rest:
        out["other_references"] = [{"reference": b.reference, "results": r} for b, r in rest]
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
