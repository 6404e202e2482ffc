"""Saying so when bgnet's kernels compile, wherever that happens.

The engine, the encoders and the forward pass are numba kernels, compiled for this machine the
first time they run and cached (beside the sources, or, where the package folder is not
writable, as in a system-wide install, in numba's per-user cache folder). A first start after
an install therefore spends tens of seconds compiling, in any verb or in the first call from
Python; later starts load the kernels from the cache in a moment.

numba announces each compilation (a ``numba:compile`` event) and says nothing when it loads a
kernel from its cache. :func:`say_when_compiling`, called when :mod:`bgnet.engine` is imported,
listens for the first compilation of a bgnet kernel and writes :data:`NOTE` on standard error,
once: a process that said it tells the processes it starts (workers), through the environment
variable :data:`SAID`, that it has been said. A warm cache says nothing.
"""
from __future__ import annotations

import os
import sys

NOTE = ("bgnet: compiling its kernels for this machine (once: tens of seconds now; later starts "
        "load them from the cache)")
SAID = "BGNET_COMPILING_SAID"  # set once the note is written, in this process and its children

_listening = False


def note_if_first(dispatcher) -> bool:
    """Write :data:`NOTE` on standard error when ``dispatcher`` (a numba kernel about to be
    compiled) is bgnet's and the note was not written yet in this process or its parent;
    returns whether it was written."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    if os.environ.get(SAID) or not module.startswith("bgnet."):
        return False
    os.environ[SAID] = "1"
    print(NOTE, file=sys.stderr, flush=True)
    return True


def say_when_compiling() -> None:
    """Listen for numba's compilations and call :func:`note_if_first` at each (the listener is
    installed once)."""
    global _listening
    if _listening:
        return
    from numba.core import event

    class FirstCompile(event.Listener):
        def on_start(self, e) -> None:
            note_if_first((e.data or {}).get("dispatcher"))

        def on_end(self, e) -> None:
            pass

    event.register("numba:compile", FirstCompile())
    _listening = True
