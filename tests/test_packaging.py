"""bgnet as a package: every subpackage and data file ships, the shipped bots and configs are
found through the package, and the verbs that play need no torch (CI's ``.ci/wheel_check``
proves the same on a real wheel in fresh environments)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from setuptools import find_packages

from bgnet.resources import SHIPPED_BOTS, config_dir, shipped_bot

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_list_holds_every_subpackage_and_the_two_data_folders():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(project["tool"]["setuptools"]["packages"])
    found = set(find_packages(str(ROOT), include=["bgnet*"]))
    assert listed == found | {"bgnet.configs", "bgnet.checkpoints"}
    assert project["tool"]["setuptools"]["package-dir"] == {"bgnet.configs": "configs",
                                                            "bgnet.checkpoints": "checkpoints"}


def test_the_shipped_bots_and_configs_are_found_through_the_package():
    for name in SHIPPED_BOTS:
        path = shipped_bot(name)
        assert path is not None and path.stat().st_size > 100_000
    assert (config_dir() / "train.yaml").is_file()
    assert {p.stem for p in (config_dir() / "recipe").glob("*.yaml")} >= {"deep", "expert", "quick"}


def test_a_shipped_bot_is_named_by_its_spec():
    from bgnet.bots.load import load_bot

    bot = load_bot("bgnet-deep@1")
    assert bot.name == "bgnet-deep@1" and bot.ply == 1


# Run with the training extra's modules made unimportable: the verbs a player, a server or an
# analyst uses must work without them.
BLOCKED = ("torch", "hydra", "omegaconf", "tensorboard", "matplotlib")
LEAN = ("import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
        "from bgnet.cli import main\nsys.exit(main({argv!r}))\n")


def lean(argv: list[str], stdin: str = "", cwd=None) -> subprocess.CompletedProcess:
    code = LEAN.format(blocked=BLOCKED, argv=argv)
    return subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@pytest.mark.parametrize("argv, stdin", [
    (["eval", "bgnet-default", "pubeval", "--games", "4", "--seed", "1"], ""),
    (["eval", "bgnet-deep", "random", "--match", "3", "--matches", "1", "--seed", "1"], ""),
    (["play", "--seed", "2"], "quit\n\n"),
    (["rollout", "4HPwATDgc/ABMA", "--trials", "36", "--seed", "1"], ""),
    (["moves", "4HPwATDgc/ABMA", "31"], ""),
])
def test_playing_verbs_run_without_the_training_extra(argv, stdin):
    done = lean(argv, stdin)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_analyze_and_serve_import_without_the_training_extra(tmp_path):
    saved = lean(["eval", "bgnet-default", "random", "--match", "1", "--matches", "1", "--seed", "3",
                  "--save-mat", str(tmp_path / "m.mat")])
    assert saved.returncode == 0, saved.stderr
    mat = sorted(tmp_path.glob("m*.mat"))[0]
    done = lean(["analyze", str(mat), "--bot", "bgnet-default"])
    assert done.returncode == 0, done.stderr
    code = (f"import sys\nfor m in {BLOCKED!r}: sys.modules[m] = None\n"
            "from bgnet.play.web.app import create_app\ncreate_app(warm=False)\nprint('ok')\n")
    served = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert served.returncode == 0 and served.stdout.strip() == "ok", served.stderr


@pytest.mark.parametrize("verb", ["train", "export", "plot"])
def test_a_verb_that_needs_the_training_extra_names_it(verb):
    done = lean([verb, "x"])
    assert done.returncode == 2
    assert done.stderr.startswith(f"bgnet {verb}: error: bgnet {verb} needs ")
    assert "pip install 'bgnet[train]'" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_training_checkpoint_as_a_bot_without_torch_names_the_extra(tmp_path):
    (tmp_path / "net.pt").write_bytes(b"not really")
    done = lean(["eval", str(tmp_path / "net.pt"), "random", "--games", "2"])
    assert done.returncode == 2 and "pip install 'bgnet[train]'" in done.stderr


def test_the_first_start_says_it_compiles(tmp_path):
    env_code = ("import os, sys\nos.environ['NUMBA_CACHE_DIR'] = sys.argv[1]\n"
                "from bgnet.cli import main\nsys.exit(main(['moves', '4HPwATDgc/ABMA', '31']))\n")
    from bgnet.engine.compiled import NOTE, SAID

    env = {k: v for k, v in os.environ.items() if k != SAID}  # this process may have said it already
    first = subprocess.run([sys.executable, "-c", env_code, str(tmp_path)], capture_output=True, text=True,
                           timeout=600, env=env)
    again = subprocess.run([sys.executable, "-c", env_code, str(tmp_path)], capture_output=True, text=True,
                           timeout=600, env=env)
    assert first.returncode == again.returncode == 0
    assert first.stderr == NOTE + "\n"
    assert "compiling" not in again.stderr
