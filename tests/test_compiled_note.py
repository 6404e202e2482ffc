"""A cold cache of compiled kernels is announced, once, wherever the first compilation happens;
a warm one says nothing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bgnet.engine.compiled import NOTE, SAID, note_if_first
from bgnet.engine.movegen import generate_batch

ROOT = Path(__file__).resolve().parents[1]
FIRST_CALL = "from bgnet.engine import legal_moves; print(legal_moves('4HPwATDgc/ABMA', 3, 1)[0])"


def test_the_first_call_from_python_says_it_compiles_and_the_next_start_does_not(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))  # a cache of its own: cold
    env.pop(SAID, None)
    runs = [subprocess.run([sys.executable, "-c", FIRST_CALL], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stderr == NOTE + "\n"  # one line, however many kernels compiled
    assert runs[1].stderr == ""  # the kernels came from the cache
    assert runs[0].stdout == runs[1].stdout != ""


def test_the_note_is_bgnet_s_own_and_said_once(monkeypatch, capsys):
    monkeypatch.delenv(SAID, raising=False)

    from numba import njit

    @njit
    def other_kernel():
        return 0

    assert not note_if_first(other_kernel) and not note_if_first(None)  # not bgnet's: quiet
    assert note_if_first(generate_batch)
    assert os.environ[SAID] == "1"  # the processes it starts inherit it
    assert not note_if_first(generate_batch)
    assert capsys.readouterr().err == NOTE + "\n"
