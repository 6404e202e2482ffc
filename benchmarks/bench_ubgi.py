"""How fast ``bgnet ubgi`` answers ``go``: the round trip through the pipe, as a GUI sees it.

Starts the engine, sends ``position gnubgid ID`` and ``dice D1 D2`` for positions sampled from
random games, then times ``go`` to its ``bestmove`` line (after a warm-up); prints the quantiles.

    python3 benchmarks/bench_ubgi.py                      # the shipped bot at 0-ply
    python3 benchmarks/bench_ubgi.py --ply 1 --n 100
    python3 benchmarks/bench_ubgi.py --bot pubeval
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

from bgnet.engine.position_id import position_id
from bgnet.engine.sampling import sample_positions


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bot", help="bot spec (default: the shipped bot)")
    p.add_argument("--ply", type=int, default=0)
    p.add_argument("--n", type=int, default=500, help="positions timed")
    p.add_argument("--warmup", type=int, default=20)
    a = p.parse_args()

    cmd = [sys.executable, "-m", "bgnet.cli", "ubgi", "--ply", str(a.ply)]
    if a.bot:
        cmd += ["--bot", a.bot]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(line: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    def read_until(prefix: str) -> str:
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("the engine closed its output")
            if line.startswith("error"):
                raise SystemExit(f"the engine answered {line.strip()}")
            if line.startswith(prefix):
                return line.strip()

    started = time.perf_counter()
    send("ubgi")
    name = read_until("id name")
    read_until("readyok")
    print(f"{name[8:]}, ready in {time.perf_counter() - started:.2f} s (start, load, handshake)")

    boards, dice = sample_positions(a.warmup + a.n, seed=1)
    times = []
    for k, (board, (d1, d2)) in enumerate(zip(boards, dice)):
        send(f"position gnubgid {position_id(board)}")
        send(f"dice {d1} {d2}")
        send("isready")
        read_until("readyok")
        start = time.perf_counter()
        send("go")
        read_until("bestmove")
        if k >= a.warmup:
            times.append(1000 * (time.perf_counter() - start))
    send("quit")
    proc.wait(timeout=30)

    q = np.quantile(times, [0.5, 0.9, 0.99])
    print(f"go at {a.ply}-ply, {len(times)} positions: median {q[0]:.2f} ms, 90% {q[1]:.2f} ms, "
          f"99% {q[2]:.2f} ms, max {max(times):.2f} ms, mean {statistics.fmean(times):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
