"""Speed of a whole match's analysis: ``bgnet analyze`` at 2-ply beside the GNU Backgammon
program's own 2-ply analysis of the same file, one core each, in one run.

The file is a 5-point match (``--file`` takes another ``.mat``; by default one is played first,
``bgnet eval bgnet-deep bgnet-default --match 5 --matches 1 --seed SEED --save-mat``). Each side
runs as its own command, timed from start to end, start-up included:

* the program: ``gnubg -t -q`` with ``set threads 1``, checker play and cube decisions analysed
  at ``--ply`` plies, ``import mat FILE``, ``analyse match`` (skipped, saying so, where the
  program is not installed: Debian's package ``gnubg``);
* bgnet: ``bgnet analyze FILE --bot BOT --ply PLY --quiet`` for each of ``--bots``, one process
  and one thread; with ``--workers N`` the first bot again with ``--workers N`` (N processes,
  N cores); with ``--plain`` each bot again as it analysed before its search kept afterstates
  through a game (``Judge(cache=False)``), the figures the same; with ``--unpruned`` each bot
  that prunes its deeper plies (``bgnet-deep`` by default) again with ``,prune=none``, every move
  of every roll valued by its own net.

Printed: wall-clock and CPU seconds of each (CPU: the command's processes together, so on a
machine shared with other work the CPU time is the steadier figure), and each one's time over
the program's. The numba kernels are compiled (or loaded) once by an untimed analysis first.

Usage::

    python3 benchmarks/bench_analyze.py [--file m.mat] [--ply 2] [--bots bgnet-deep,bgnet-default]
        [--workers 2] [--plain] [--unpruned] [--seed 51] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GNUBG = "/usr/games/gnubg"
# bgnet's command line run from this source tree (the folder first on sys.path).
BGNET = [sys.executable, "-c", "import sys; sys.argv[0] = 'bgnet'; from bgnet.cli import run; sys.exit(run())"]
# The plain analysis, as bgnet analysed before the search's afterstates were kept (same figures).
PLAIN = [sys.executable, "-c", """
import sys
from bgnet.analyze.analysis import Judge, analyse_file
from bgnet.bots import load_bot
bot = load_bot(sys.argv[1])
analyse_file(sys.argv[2], Judge(bot, int(sys.argv[3]), cache=False))
"""]


def timed(command: list[str], stdin: str | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1"))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:1] + command[3:])} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def gnubg_script(path: str, ply: int) -> str:
    return "\n".join(["set threads 1", f"set analysis chequerplay evaluation plies {ply}",
                      f"set analysis cubedecision evaluation plies {ply}", f"import mat {path}",
                      "analyse match", ""])


def make_match(folder: str, seed: int) -> str:
    path = os.path.join(folder, "m.mat")
    subprocess.run(BGNET + ["eval", "bgnet-deep", "bgnet-default", "--match", "5", "--matches", "1",
                            "--seed", str(seed), "--save-mat", path, "--quiet"],
                   cwd=ROOT, check=True, capture_output=True)
    return path


def prunes(spec: str) -> bool:
    """Whether the bot ``spec`` names prunes its deeper plies (a pruning net of its own)."""
    from bgnet.bots import load_bot

    return getattr(load_bot(spec), "pruning", None) is not None


def describe(path: str) -> str:
    from bgnet.formats.mat import load_mat

    record = load_mat(path)
    moves = sum(1 for g in record.games for a in g.actions if a.kind == "move")
    kind = f"{record.length}-point match" if record.length else "money session"
    return f"{kind}, {len(record.games)} games, {moves} moves"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", help="a .mat file (default: a 5-point match played first)")
    ap.add_argument("--ply", type=int, default=2, help="analysis depth of both (default 2)")
    ap.add_argument("--bots", default="bgnet-deep,bgnet-default", help="bgnet's judges, by spec")
    ap.add_argument("--workers", type=int, default=0,
                    help="also time the first bot with this many processes (default: not)")
    ap.add_argument("--plain", action="store_true",
                    help="also time each bot's plain analysis (no afterstates kept)")
    ap.add_argument("--unpruned", action="store_true",
                    help="also time each bot that prunes its deeper plies without pruning "
                         "(SPEC,prune=none)")
    ap.add_argument("--seed", type=int, default=51, help="seed of the match played (default 51)")
    ap.add_argument("--json", metavar="PATH", help="write the figures to this file")
    a = ap.parse_args()
    bots = [b.strip() for b in re.split(r",(?!prune=)", a.bots) if b.strip()]  # SPEC,prune=X whole
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.abspath(a.file) if a.file else make_match(folder, a.seed)
        print(f"{path}: {describe(path)}; analysis at {a.ply}-ply, one core each unless said")
        subprocess.run(BGNET + ["analyze", path, "--bot", bots[0], "--ply", "1", "--quiet"], cwd=ROOT,
                       check=True, capture_output=True)  # compiles or loads the kernels, untimed
        rows: list[tuple[str, str, float, float]] = []
        program = GNUBG if os.path.exists(GNUBG) else shutil.which("gnubg")
        if program is None:
            print(f"the GNU Backgammon program ({GNUBG}) is not installed: its side is skipped")
        else:
            wall, cpu = timed([program, "-t", "-q"], gnubg_script(path, a.ply))
            rows.append(("GNU Backgammon (gnubg -t, set threads 1)", "", wall, cpu))
        for bot in bots:
            command = ["analyze", path, "--bot", bot, "--ply", str(a.ply), "--quiet"]
            rows.append((f"bgnet analyze --bot {bot}", "", *timed(BGNET + command)))
            if bot == bots[0] and a.workers > 1:
                rows.append((f"bgnet analyze --bot {bot} --workers {a.workers}",
                             f"{a.workers} processes", *timed(BGNET + command + ["--workers", str(a.workers)])))
            if a.plain:
                rows.append((f"{bot}, plain search (as before)", "",
                             *timed(PLAIN + [bot, path, str(a.ply)])))
            if a.unpruned and prunes(bot):
                command = ["analyze", path, "--bot", f"{bot},prune=none", "--ply", str(a.ply), "--quiet"]
                rows.append((f"bgnet analyze --bot {bot},prune=none", "", *timed(BGNET + command)))
    reference = rows[0][2:] if program is not None else None
    print(f"{'':62s} {'wall s':>8s} {'CPU s':>8s} {'/ gnubg wall':>13s} {'/ gnubg CPU':>12s}")
    for name, note, wall, cpu in rows:
        ratios = (f"{wall / reference[0]:12.2f}x {cpu / reference[1]:11.2f}x" if reference
                  else f"{'-':>13s} {'-':>12s}")
        label = name + (f" ({note})" if note else "")
        print(f"{label:62s} {wall:8.1f} {cpu:8.1f} {ratios}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"file": a.file, "ply": a.ply,
                       "rows": [{"what": n, "note": t, "wall_s": w, "cpu_s": c} for n, t, w, c in rows]},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
