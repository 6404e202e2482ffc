"""Processes that each load bots once and then work on parts of a job (a match, a benchmark).

Bots are named by their specs (as ``bgnet eval`` names them) rather than passed as objects: a net
or a gnubg handle does not travel between processes, a spec does. Processes are spawned, not
forked, since numba's threading layer and torch do not survive a fork once started.
"""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

_BOTS: tuple = ()


def start(specs: tuple[str, ...], device: str) -> None:
    """Pool initializer: load the bots of ``specs`` once per process, one thread each (the
    processes fill the cores). Torch is told so where a bot brought it in: exported bots run
    without it, and importing it would cost a worker seconds of its start."""
    global _BOTS
    import sys

    from bgnet.bots.load import load_bot

    _BOTS = tuple(load_bot(spec, device=device) for spec in specs)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def bots() -> tuple:
    """The bots this process loaded in :func:`start`."""
    return _BOTS


def check_count(workers) -> int:
    """The number of processes, refused below one."""
    count = int(workers)
    if count < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    return count


@contextmanager
def pool(workers: int, specs: tuple[str, ...], device: str) -> Iterator[ProcessPoolExecutor]:
    """A process pool of ``workers`` processes, each with the bots of ``specs`` loaded, shut down
    on leaving. When the body raises (a part failed, Ctrl-C) the parts not yet started are
    dropped, so the error shows once the running ones end rather than after the whole job."""
    import multiprocessing as mp

    executor = ProcessPoolExecutor(check_count(workers), mp_context=mp.get_context("spawn"),
                                   initializer=start, initargs=(tuple(specs), device))
    try:
        yield executor
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
