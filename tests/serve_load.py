"""Many clients asking ``/move`` at once, every answer checked: the load test of ``bgnet serve``.

Positions come from random games (:func:`random_positions`); each request is wildbg's ``GET
/move`` and each answer must list exactly the legal moves of the position (by their resulting
positions), best first by the cubeless equity of their probabilities. Used by the serve tests
(``from serve_load import ...``) and by ``benchmarks/bench_serve.py``, which puts this folder on
its path and prints the latency quantiles.
"""
from __future__ import annotations

import asyncio
import time

import numpy as np

from bgnet.engine.game import Game
from bgnet.engine.movegen import generate


def random_positions(n: int, seed: int = 0) -> list[tuple[np.ndarray, int, int]]:
    """``n`` (board, die1, die2) taken along random games: boards ``[opponent, side to move]``."""
    rng = np.random.default_rng(seed)
    out: list[tuple[np.ndarray, int, int]] = []
    while len(out) < n:
        g = Game(rng=rng)
        g.opening_roll()
        while not g.over and len(out) < n:
            after, _ = g.legal_moves()
            out.append((g.board, *g.dice))
            g.play(after[rng.integers(len(after))] if len(after) else None)
            if not g.over:
                g.roll()
    return out


def wildbg_query(board: np.ndarray, d1: int, d2: int) -> str:
    """wildbg's query for a board: ``die1``, ``die2`` and the non-empty points."""
    parts = [f"die1={d1}", f"die2={d2}"]
    if board[1, 24]:
        parts.append(f"p25={int(board[1, 24])}")
    if board[0, 24]:
        parts.append(f"p0={-int(board[0, 24])}")
    for p in range(1, 25):
        v = int(board[1, p - 1]) - int(board[0, 24 - p])
        if v:
            parts.append(f"p{p}={v}")
    return "&".join(parts)


def apply_play(board: np.ndarray, play) -> bytes:
    """The bytes of the afterstate that wildbg ``play`` steps give from ``board`` ([opponent,
    mover]), to compare with the move generator's afterstates."""
    me, opp = board[1].astype(np.int64).copy(), board[0].astype(np.int64).copy()
    for step in play:
        a, b = step["from"], step["to"]
        me[a - 1] -= 1
        if b:
            me[b - 1] += 1
            if opp[24 - b] == 1:
                opp[24 - b], opp[24] = 0, opp[24] + 1
    return np.stack([opp, me]).astype(np.int8).tobytes()


def check_answer(board: np.ndarray, d1: int, d2: int, answer: dict, ordered: bool = True) -> str | None:
    """What is wrong with a ``/move`` answer for this position, or None when it is right.
    ``ordered``: also check that the moves come best first by their probabilities (true of net
    bots, which rank every move; a bot that only chooses puts its own choice first)."""
    moves = answer.get("moves")
    if not isinstance(moves, list) or not moves:
        return "no moves list"
    legal = {a.tobytes() for a in generate(board, d1, d2)[0]}
    if not legal:
        return None if len(moves) == 1 and moves[0]["play"] == [] else "expected one empty play"
    got = [apply_play(board, m["play"]) for m in moves]
    if len(got) != len(legal) or set(got) != legal:
        return f"{len(got)} moves answered, {len(legal)} legal, or not the same ones"
    if ordered:
        eq = [2 * p["win"] - 1 + p["winG"] - p["loseG"] + p["winBg"] - p["loseBg"]
              for p in (m["probabilities"] for m in moves)]
        if any(b > a + 1e-6 for a, b in zip(eq, eq[1:])):
            return "moves are not ordered best first"
    return None


async def run_load(base_url: str, *, requests: int = 200, clients: int = 20, seed: int = 0,
                   timeout: float = 120.0, seconds: float | None = None) -> dict:
    """Send ``requests`` ``/move`` requests from ``clients`` concurrent clients (one connection
    each), or with ``seconds`` keep sending them (the ``requests`` positions over and over) until
    that time is up; returns ``{"latencies": seconds, "failures": [...], "busy": n, "wall":
    seconds}``. ``busy`` counts the 503 answers of a server whose queue is full, which it gives
    by design; any other answer than a right one is a failure."""
    import httpx

    positions = random_positions(requests, seed)
    queue: asyncio.Queue = asyncio.Queue()
    for item in positions:
        queue.put_nowait(item)
    latencies: list[float] = []
    failures: list[str] = []
    answers: list = []  # checked after the run, so that checking does not delay other clients
    busy = 0
    sent = 0
    end: float | None = None  # set when the clock starts

    def next_position():
        nonlocal sent
        if end is None:
            return None if queue.empty() else queue.get_nowait()
        if time.perf_counter() >= end:
            return None
        sent += 1
        return positions[sent % len(positions)]

    async def client(http):
        nonlocal busy
        async with http:
            while (item := next_position()) is not None:
                board, d1, d2 = item
                q = wildbg_query(board, d1, d2)
                t = time.perf_counter()
                resp = await http.get(f"/move?{q}")
                latencies.append(time.perf_counter() - t)
                if resp.status_code == 503:
                    busy += 1
                elif resp.status_code != 200:
                    failures.append(f"{q}: HTTP {resp.status_code} {resp.text[:200]}")
                else:
                    answers.append((q, board, d1, d2, resp.json()))

    # Made before the clock starts: making a client costs more than a request on loopback.
    https = [httpx.AsyncClient(base_url=base_url, timeout=timeout) for _ in range(clients)]
    t0 = time.perf_counter()
    end = None if seconds is None else t0 + seconds
    await asyncio.gather(*(client(http) for http in https))
    wall = time.perf_counter() - t0
    for q, board, d1, d2, answer in answers:
        wrong = check_answer(board, d1, d2, answer)
        if wrong:
            failures.append(f"{q}: {wrong}")
    return {"latencies": latencies, "failures": failures, "busy": busy, "wall": wall}


def quantiles(latencies: list[float]) -> dict:
    """p50, p90, p99 and max in milliseconds."""
    a = np.asarray(latencies) * 1000.0
    return {k: float(np.percentile(a, q)) for k, q in (("p50", 50), ("p90", 90), ("p99", 99))} | \
        {"max": float(a.max())}
