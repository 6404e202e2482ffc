"""Load benchmark of ``bgnet serve``: concurrent wildbg ``/move`` requests on loopback (200 from 20
clients, or as many as ``--clients`` send in ``--seconds``), every answer checked against the
rules engine; prints the latency quantiles, and for a server started here its memory (RSS)
before and after the load. ``--half-open N`` then opens N connections that send half a request
(or nothing) and prints the server's open files as they hang and once its request deadline has
closed them, and how fast another client is answered meanwhile.

    python3 benchmarks/bench_serve.py                    # starts a server for the shipped bot
    python3 benchmarks/bench_serve.py --clients 200 --seconds 60 --half-open 1000
    python3 benchmarks/bench_serve.py --url http://127.0.0.1:8080   # a server already running

Exits 1 when any answer is wrong or missing (503 answers of a full queue are counted apart:
the server gives them by design).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(bot: str | None, ply: int | None, db: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "bgnet.cli", "serve", "--port", str(port), "--db", str(db)]
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


def rss_mb(pid: int) -> float | None:
    """The resident memory of process ``pid`` in MB (Linux), None where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def open_files(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def health_ms(url: str) -> float:
    t = time.perf_counter()
    with urllib.request.urlopen(f"{url}/health", timeout=10) as r:
        r.read()
    return 1000 * (time.perf_counter() - t)


def half_open(url: str, pid: int | None, count: int, wait: float = 60.0) -> str:
    """Open ``count`` connections, every other one sending half a request's headers, the rest
    nothing; the server's open files before, while they hang and after it has closed them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 100), hard))
    host, port = url.removeprefix("http://").rsplit(":", 1)
    before = open_files(pid) if pid else None
    socks = []
    for i in range(count):
        s = socket.create_connection((host, int(port)))
        if i % 2:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(s)
    opened = time.monotonic()
    time.sleep(0.5)
    during = open_files(pid) if pid else None
    other = health_ms(url)
    for s in socks:
        s.settimeout(max(0.1, wait - (time.monotonic() - opened)))
    closed = 0
    for s in socks:
        try:
            while s.recv(4096):
                pass
            closed += 1
        except OSError:
            pass
    took = time.monotonic() - opened
    after = open_files(pid) if pid else None
    for s in socks:
        s.close()
    files = "" if pid is None else f"; the server's open files {before} -> {during} -> {after}"
    return (f"{count} half-open connections: {closed} closed by the server within {took:.1f} s of "
            f"opening{files}; another client's /health meanwhile {other:.0f} ms")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    p.add_argument("--bot", help="bot spec for the server started here (default: the shipped bot)")
    p.add_argument("--ply", type=int, help="its search depth")
    p.add_argument("--requests", type=int, default=200,
                   help="requests to send (with --seconds: positions sent over and over)")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--seconds", type=float, help="send for this long instead of --requests times")
    p.add_argument("--half-open", type=int, default=0, metavar="N",
                   help="then open N half-sent connections and see them closed")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    # The load test's clients live with the tests that use them too (tests/serve_load.py).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from serve_load import quantiles, run_load

    proc = None
    url = a.url
    with tempfile.TemporaryDirectory() as tmp:
        if url is None:
            proc, url = start_server(a.bot, a.ply, Path(tmp) / "games.sqlite")
        else:
            wait_until_up(url)
        pid = proc.pid if proc is not None else None
        try:
            health_ms(url)
            rss_before = rss_mb(pid) if pid else None
            result = asyncio.run(run_load(url, requests=a.requests, clients=a.clients, seed=a.seed,
                                          seconds=a.seconds))
            time.sleep(1.0)
            rss_after = rss_mb(pid) if pid else None
            slow = half_open(url, pid, a.half_open) if a.half_open else None
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
    q = quantiles(result["latencies"])
    n = len(result["latencies"])
    print(f"{n} /move requests from {a.clients} clients in {result['wall']:.2f} s "
          f"({n / result['wall']:.0f} per s; {result['busy']} answered 503, the queue full); "
          f"latency ms: p50 {q['p50']:.1f}, p90 {q['p90']:.1f}, p99 {q['p99']:.1f}, max {q['max']:.1f}")
    if rss_before is not None and rss_after is not None:
        print(f"server memory (RSS): {rss_before:.0f} MB before the load, {rss_after:.0f} MB after")
    if slow:
        print(slow)
    for f in result["failures"][:10]:
        print("WRONG:", f)
    answered = n - result["busy"]
    print(f"{answered - len(result['failures'])} of {answered} answers correct")
    complete = a.seconds is not None or n == a.requests
    return 0 if not result["failures"] and complete else 1


if __name__ == "__main__":
    sys.exit(main())
