"""What ``bgnet analyze`` is given: a file of the wrong kind is refused in words, never by
quoting its bytes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bgnet.bots import default_bot_path
from bgnet.cli import main


@pytest.mark.parametrize("name, data, what", [
    ("mine.onnx", None, "; it looks like an exported bot (.onnx) (a bot to analyse with is given as "
                        "--bot FILE)"),
    ("run.mat", b"PK\x03\x04" + bytes(range(256)) * 4, "; it looks like a zip archive, such as a "
                                                       "training checkpoint (.pt) (a bot"),
    ("noise.sgf", bytes(np.random.default_rng(3).integers(0, 256, 3000, dtype=np.uint8)), ""),
])
def test_analyze_says_what_a_binary_file_is_not_without_echoing_its_bytes(tmp_path, capsys, name,
                                                                           data, what):
    if data is None:
        if default_bot_path() is None:
            pytest.skip("needs the shipped bot")
        data = Path(default_bot_path()).read_bytes()
    path = tmp_path / name
    path.write_bytes(data)
    assert main(["analyze", str(path), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"bgnet analyze: error: {path} is not a match file (.mat or .sgf text): "
                          f"it holds binary data{what}")
    assert err.endswith("\n") and err.count("\n") == 1  # one line
    assert err[:-1].isascii() and err[:-1].isprintable()  # nothing of the file's bytes


def test_a_match_file_of_text_is_read_as_before(tmp_path, capsys):
    path = tmp_path / "x.mat"
    path.write_text("hello\tworld\r\n\x0c\n")  # tabs, carriage returns and form feeds are text
    assert main(["analyze", str(path), "--quiet"]) == 3
    assert "line 1: expected 'N point match' first" in capsys.readouterr().err
