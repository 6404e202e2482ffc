"""Checker-play error rate: how much equity a bot gives away per decision, against a reference.

The benchmark file holds decisions (a position and a roll with at least two legal moves) and, for
every legal move of each, a reference equity from GNU Backgammon at 1-ply: the position the move
leaves, valued over the opponent's 21 rolls, each answered by its best reply at 0-ply (see
``tools/build_er_benchmark.py``). A deeper second reference, GNU Backgammon at 2-ply (two rolls
ahead) for each decision's best moves at 1-ply, is chosen with ``reference="2-ply"``; it judges a
bot that searches two rolls ahead on its own terms, and shares less with gnubg 0-ply's net.

A bot's error on a decision is the best move's equity minus the equity of the move it chose; its
error rate is the mean over decisions, in millipoints (thousandths of a point), the unit GNU
Backgammon's own benchmarks use.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
from numba import njit

from bgnet.bots.base import Bot
from bgnet.measure import workers as worker_pool

DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "data", "er_benchmark.npz")
REFERENCE_BOTS = ("gnubg:0", "pubeval")
# The reference equities a file can hold: 1-ply for every move (always), 2-ply for the best moves.
REFERENCES = ("1-ply", "2-ply")
DEEP_KEYS = ("equity_2ply", "searched_2ply", "reference_2ply")
# gnubg_nn.classify values grouped into the phases GNU Backgammon's benchmarks report.
PHASES = {"contact": (5,), "crashed": (4,), "race": (1, 2, 3)}
BATCH = 512  # decisions handed to a bot at once


@dataclass
class ErBenchmark:
    """Decisions and the reference equity of each of their legal moves.

    Move rows of decision ``d`` are ``offsets[d]:offsets[d + 1]`` of ``after`` / ``equity``.
    """

    boards: np.ndarray  # int8[D, 2, 25], the side on roll in boards[:, 1]
    dice: np.ndarray  # int8[D, 2]
    offsets: np.ndarray  # int64[D + 1]
    after: np.ndarray  # int8[M, 2, 25], written [opponent, mover_after]
    equity: np.ndarray  # float32[M], the mover's cubeless money equity after each move
    phase: np.ndarray  # int8[D], gnubg_nn.classify of the position
    source: np.ndarray  # int8[D], index into ``sources``: whose self-play produced it
    sources: tuple[str, ...] = ()
    reference: str = ""

    def __len__(self) -> int:
        return len(self.boards)

    def head(self, n: int) -> ErBenchmark:
        """The first ``n`` decisions."""
        n = min(int(n), len(self))
        m = int(self.offsets[n])
        return ErBenchmark(self.boards[:n], self.dice[:n], self.offsets[: n + 1], self.after[:m],
                           self.equity[:m], self.phase[:n], self.source[:n], self.sources,
                           self.reference)

    def best_equity(self) -> np.ndarray:
        """Equity of the best move of every decision."""
        return np.maximum.reduceat(self.equity.astype(np.float64), self.offsets[:-1])


def save_benchmark(path: str, boards, dice, afters: list, equities: list, phase, source,
                   sources=(), reference: str = "", extra: dict | None = None) -> None:
    """Write a benchmark file (compressed .npz) from per-decision lists of moves and equities.

    ``extra``: more arrays to store, such as the 2-ply reference (``DEEP_KEYS``)."""
    if not (len(boards) == len(dice) == len(afters) == len(equities) == len(phase) == len(source)):
        raise ValueError("boards, dice, moves, equities, phases and sources must have one entry per decision")
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in afters])]).astype(np.int64)
    write_arrays(
        path, boards=np.asarray(boards, np.int8), dice=np.asarray(dice, np.int8), offsets=offsets,
        after=np.concatenate(afters).astype(np.int8),
        equity=np.concatenate(equities).astype(np.float32),
        phase=np.asarray(phase, np.int8), source=np.asarray(source, np.int8),
        sources=np.array(list(sources)), reference=np.array(reference), **(extra or {}),
    )


def write_arrays(path: str, **arrays) -> None:
    """Write arrays to a compressed .npz atomically: a reader never sees half a file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.npz"
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def load_benchmark(path: str | None = None, reference: str = "1-ply") -> ErBenchmark:
    """Read a benchmark file (the shipped one by default), checking its arrays agree.

    ``reference``: which reference equities to judge moves by, ``"1-ply"`` (every file has them)
    or ``"2-ply"`` (a file that has them; moves outside its search keep their 1-ply equity)."""
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}; got {reference!r}")
    path = path or DEFAULT_PATH
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no error-rate benchmark file at {path!r}; build one with tools/build_er_benchmark.py"
        )
    with np.load(path) as z:
        missing = {"boards", "dice", "offsets", "after", "equity", "phase", "source"} - set(z.files)
        if missing:
            raise ValueError(f"{path!r} is not an error-rate benchmark: it lacks {sorted(missing)}")
        b = ErBenchmark(z["boards"], z["dice"], z["offsets"], z["after"], z["equity"], z["phase"],
                        z["source"], tuple(str(s) for s in z["sources"]) if "sources" in z.files else (),
                        str(z["reference"]) if "reference" in z.files else "")
        if reference == "2-ply":
            if not set(DEEP_KEYS) <= set(z.files):
                raise ValueError(f"{path!r} has no 2-ply reference equities; add them with "
                                 "tools/build_er_benchmark.py --deepen-only")
            b.equity, b.reference = z["equity_2ply"], str(z["reference_2ply"])
    d = len(b.boards)
    if b.offsets.shape != (d + 1,) or b.offsets[-1] != len(b.after) or len(b.equity) != len(b.after):
        raise ValueError(f"{path!r} is inconsistent: offsets, moves and equities do not line up")
    if np.any(np.diff(b.offsets) < 2):
        raise ValueError(f"{path!r} has a decision with fewer than two legal moves")
    return b


def has_deep_reference(path: str | None = None) -> bool:
    """Whether the benchmark file (the shipped one by default) holds 2-ply reference equities."""
    return has_arrays(path or DEFAULT_PATH, DEEP_KEYS)


def has_arrays(path: str, keys) -> bool:
    """Whether the .npz file at ``path`` holds arrays under all of ``keys`` (False for a missing
    file or one that is not an .npz)."""
    if not os.path.exists(path):
        return False
    try:
        with np.load(path) as z:
            return set(keys) <= set(z.files)
    except (OSError, ValueError):  # not an .npz: load_benchmark says what is wrong with it
        return False


@njit(cache=True)
def locate_moves(after, offsets, chosen):
    """Row of ``chosen[d]`` among the moves of decision d, or -1 if it is not one of them."""
    n = offsets.shape[0] - 1
    out = np.full(n, -1, np.int64)
    for d in range(n):
        for r in range(offsets[d], offsets[d + 1]):
            same = True
            for s in range(2):
                for i in range(25):
                    if after[r, s, i] != chosen[d, s, i]:
                        same = False
                        break
                if not same:
                    break
            if same:
                out[d] = r
                break
    return out


def decision_losses(bot: Bot, bench: ErBenchmark, on_done=None) -> np.ndarray:
    """Equity the bot loses on each decision (best move's equity minus its move's).

    ``on_done(n)``, if given, is called as each batch of ``n`` decisions is played."""
    return losses_of(bench, decision_choices(bot, bench, on_done), bot.name)


def decision_choices(bot: Bot, bench: ErBenchmark, on_done=None) -> np.ndarray:
    """The afterstate the bot chooses in each decision (scored by :func:`losses_of`, against
    one reference or several: the choice does not depend on the reference)."""
    chosen = np.empty_like(bench.boards)
    for lo in range(0, len(bench), BATCH):
        hi = min(lo + BATCH, len(bench))
        chosen[lo:hi] = _choose(bot, bench.boards[lo:hi], bench.dice[lo:hi])
        if on_done is not None:
            on_done(hi - lo)
    return chosen


def decision_losses_parallel(spec: str, bench: ErBenchmark, workers: int, device: str = "cpu",
                             on_done=None) -> np.ndarray:
    """:func:`decision_losses` of the bot named by ``spec`` (as ``bgnet eval`` names bots), the
    decisions shared among ``workers`` processes. Each decision is played as in one process, so
    the losses are the same; only the time differs (for deep search)."""
    chosen, name = decision_choices_parallel(spec, bench, workers, device, on_done)
    return losses_of(bench, chosen, name)


def decision_choices_parallel(spec: str, bench: ErBenchmark, workers: int, device: str = "cpu",
                              on_done=None) -> tuple[np.ndarray, str]:
    """:func:`decision_choices` in ``workers`` processes; also returns the bot's name."""
    from concurrent.futures import as_completed

    chosen = np.empty_like(bench.boards)
    name = spec
    with worker_pool.pool(workers, (spec,), device) as pool:
        jobs = [pool.submit(_worker_choose, lo, bench.boards[lo:lo + BATCH], bench.dice[lo:lo + BATCH])
                for lo in range(0, len(bench), BATCH)]
        for job in as_completed(jobs):
            lo, part, name = job.result()
            chosen[lo:lo + len(part)] = part
            if on_done is not None:
                on_done(len(part))
    return chosen, name


def _worker_choose(lo: int, boards: np.ndarray, dice: np.ndarray):
    (bot,) = worker_pool.bots()
    return lo, _choose(bot, boards, dice), bot.name


def _choose(bot: Bot, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
    return bot.choose_moves(boards, dice.astype(np.int64))[0]


def losses_of(bench: ErBenchmark, chosen: np.ndarray, name: str = "the bot") -> np.ndarray:
    """Equity lost on each decision by choosing the afterstates ``chosen`` (one per decision);
    ``name`` names the bot if one of them is not a legal move."""
    rows = locate_moves(bench.after, bench.offsets, chosen)
    bad = np.flatnonzero(rows < 0)
    if len(bad):
        raise RuntimeError(
            f"{name} played a move that is not legal in decision {int(bad[0])}"
            f" ({len(bad)} decisions in all)"
        )
    return bench.best_equity() - bench.equity[rows].astype(np.float64)


def error_rate(bot: Bot, bench: ErBenchmark, name: str | None = None) -> dict:
    """Error rate in millipoints per decision, overall and by phase, with a 95 % interval."""
    if not name:
        name = bot.name
    return rate_row(decision_losses(bot, bench) * 1000.0, bench, name)


def rate_row(loss: np.ndarray, bench: ErBenchmark, name: str) -> dict:
    """The figures of one bot from its losses (millipoints, one per decision)."""
    from bgnet.measure.stats import mean_ci95

    mean, ci = mean_ci95(loss)
    row = {"bot": name, "decisions": len(loss), "er": mean, "er_ci95": ci,
           "blunder_rate": float((loss > 80.0).mean())}
    for phase, classes in PHASES.items():
        sel = np.isin(bench.phase, classes)
        row[f"er_{phase}"] = float(loss[sel].mean()) if sel.any() else float("nan")
    return row


def add_paired(row: dict, loss: np.ndarray, ref_loss: np.ndarray, ref: str) -> None:
    """Add to ``row`` its error rate minus ``ref``'s on the same decisions, with a 95 % interval
    of the paired differences (much tighter than the two intervals side by side)."""
    from bgnet.measure.stats import mean_ci95

    diff, ci = mean_ci95(loss - ref_loss)
    row.update({"paired_ref": ref, "er_minus_ref": diff, "er_minus_ref_ci95": ci})


def format_table(rows: list[dict], bench: ErBenchmark) -> str:
    """The rows side by side: error rates in millipoints per decision."""
    counts = {p: int(np.isin(bench.phase, c).sum()) for p, c in PHASES.items()}
    head = (f"error rate, millipoints per decision ({len(bench)} decisions: "
            + ", ".join(f"{counts[p]} {p}" for p in PHASES) + ")")
    name_w = max([len("bot")] + [len(r["bot"]) for r in rows])
    lines = [head, f"{'bot':<{name_w}s}  {'all':>14s}  " + "  ".join(f"{p:>8s}" for p in PHASES)
             + f"  {'blunders':>8s}"]
    refs = {r["paired_ref"] for r in rows if "paired_ref" in r}
    if refs:
        lines[1] += f"  {'minus ' + ', '.join(sorted(refs)):>16s}"
    for r in rows:
        lines.append(f"{r['bot']:<{name_w}s}  {r['er']:7.1f} ± {r['er_ci95']:4.1f}  "
                     + "  ".join(f"{r['er_' + p]:8.1f}" for p in PHASES)
                     + f"  {100 * r['blunder_rate']:7.1f}%"
                     + (f"  {r['er_minus_ref']:+9.2f} ± {r['er_minus_ref_ci95']:4.2f}"
                        if "paired_ref" in r else ""))
    lines.append("blunders: decisions losing more than 80 millipoints")
    if refs:
        lines.append(f"minus {', '.join(sorted(refs))}: the difference on the same decisions, "
                     "with its paired 95 % interval")
    return "\n".join(lines)


def write_json(path: str, tables: list) -> None:
    """Write the figures and each benchmark's description as JSON. ``tables``: (benchmark, rows)
    pairs, one per reference; the first at the top level, any others under "other_references"."""
    (bench, rows), rest = tables[0], tables[1:]
    out = {"decisions": len(bench), "reference": bench.reference, "results": rows}
    if rest:
        out["other_references"] = [{"reference": b.reference, "results": r} for b, r in rest]
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
