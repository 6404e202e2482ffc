"""Whether this machine has compiled bgnet's kernels yet.

The engine, the encoders and the forward pass are numba kernels, compiled for this machine the
first time they run and cached (beside the sources, or, where the package folder is not
writable, as in a system-wide install, in numba's per-user cache folder). The first start of a
verb therefore takes about a minute, later ones a second; :func:`first_compile_note` says so when
it is about to happen, rather than leaving a silent terminal.
"""
from __future__ import annotations

import os

NOTE = ("bgnet: compiling its engine for this machine, once (about a minute; later starts take "
        "a second)")


def cache_is_cold() -> bool:
    """True when the move generator's kernel, which every verb runs, has no cached build here."""
    from bgnet.engine.movegen import generate_one

    cache = getattr(generate_one, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return bool(index) and not os.path.exists(str(index))


def first_compile_note() -> str | None:
    """:data:`NOTE` when the kernels are about to be compiled for the first time, else None."""
    return NOTE if cache_is_cold() else None
