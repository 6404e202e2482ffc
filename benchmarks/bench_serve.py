"""Load benchmark of ``bgnet serve``: 200 concurrent wildbg ``/move`` requests from 20 clients on
loopback, every answer checked against the rules engine; prints the latency quantiles.

    python3 benchmarks/bench_serve.py                    # starts a server for the shipped bot
    python3 benchmarks/bench_serve.py --url http://127.0.0.1:8080   # a server already running

Exits 1 when any answer is wrong or missing.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(bot: str | None, ply: int | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "bgnet.cli", "serve", "--port", str(port)]
    if bot:
        cmd += ["--bot", bot]
    if ply is not None:
        cmd += ["--ply", str(ply)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, proc)
    return proc, url


def wait_until_up(url: str, proc: subprocess.Popen | None = None, seconds: float = 300) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server stopped: {proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"no server answered at {url} within {seconds:g} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    p.add_argument("--bot", help="bot spec for the server started here (default: the shipped bot)")
    p.add_argument("--ply", type=int, help="its search depth")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bgnet.play.web.loadtest import quantiles, run_load

    proc = None
    url = a.url
    if url is None:
        proc, url = start_server(a.bot, a.ply)
    else:
        wait_until_up(url)
    try:
        result = asyncio.run(run_load(url, requests=a.requests, clients=a.clients, seed=a.seed))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    q = quantiles(result["latencies"])
    n = len(result["latencies"])
    print(f"{n} /move requests from {a.clients} clients in {result['wall']:.2f} s "
          f"({n / result['wall']:.0f} per s); latency ms: p50 {q['p50']:.1f}, p90 {q['p90']:.1f}, "
          f"p99 {q['p99']:.1f}, max {q['max']:.1f}")
    for f in result["failures"][:10]:
        print("WRONG:", f)
    print(f"{n - len(result['failures'])} of {a.requests} answers correct")
    return 0 if not result["failures"] and n == a.requests else 1


if __name__ == "__main__":
    sys.exit(main())
