"""Processes that each load bots once and then work on parts of a job (a match, a benchmark).

Bots are named by their specs (as ``bgnet eval`` names them) rather than passed as objects: a net
or a gnubg handle does not travel between processes, a spec does. Processes are spawned, not
forked, since numba's threading layer and torch do not survive a fork once started.
"""
from __future__ import annotations

_BOTS: tuple = ()


def start(specs: tuple[str, ...], device: str) -> None:
    """Pool initializer: load the bots of ``specs`` once per process, one thread each (the
    processes fill the cores)."""
    global _BOTS
    import torch

    from bgnet.bots.load import load_bot

    torch.set_num_threads(1)
    _BOTS = tuple(load_bot(spec, device=device) for spec in specs)


def bots() -> tuple:
    """The bots this process loaded in :func:`start`."""
    return _BOTS


def check_count(workers) -> int:
    """The number of processes, refused below one."""
    count = int(workers)
    if count < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    return count


def pool(workers: int, specs: tuple[str, ...], device: str):
    """A process pool of ``workers`` processes, each with the bots of ``specs`` loaded."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(check_count(workers), mp_context=mp.get_context("spawn"), initializer=start,
                               initargs=(tuple(specs), device))
