"""Every module of the ``bgnet`` package imports on its own, in a fresh interpreter.

An import cycle only shows when the modules of the cycle are imported in a particular order, most
often when a module is the first of the package to be imported; so each module is imported with
every ``bgnet`` module cleared from ``sys.modules`` beforehand. Third-party packages stay loaded
(importing torch or numba again would not test bgnet). A module whose optional dependency is not
installed is reported as skipped, with the missing package named.
"""
from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import bgnet

_CHECK = r"""
import importlib, json, sys, traceback
results = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "bgnet" or m.startswith("bgnet.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
        results[name] = ["ok", ""]
    except ModuleNotFoundError as e:
        if e.name and not e.name.startswith("bgnet"):
            results[name] = ["missing", e.name]
        else:
            results[name] = ["error", traceback.format_exc()]
    except Exception:
        results[name] = ["error", traceback.format_exc()]
print(json.dumps(results))
"""


def all_modules() -> list[str]:
    names = ["bgnet"]
    for info in pkgutil.walk_packages(bgnet.__path__, prefix="bgnet."):
        names.append(info.name)
    return sorted(names)


def test_every_module_imports_first():
    names = all_modules()
    assert "bgnet.engine.position_id" in names and "bgnet.cli" in names
    out = subprocess.run([sys.executable, "-c", _CHECK, json.dumps(names)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(results) == set(names)
    errors = {n: text for n, (kind, text) in results.items() if kind == "error"}
    assert not errors, "\n\n".join(f"{n}:\n{t}" for n, t in errors.items())
    missing = {n: dep for n, (kind, dep) in results.items() if kind == "missing"}
    if missing:
        pytest.skip("not checked, optional package missing: "
                    + ", ".join(f"{n} (needs {dep})" for n, dep in sorted(missing.items())))


def test_position_ids_import_without_the_rest_of_the_engine():
    # The reported cycle: the Position ID module imported first.
    for name in ("bgnet.engine.position_id",):
        out = subprocess.run([sys.executable, "-c",
                              f"from {name} import position_id; print(position_id([[0] * 25] * 2))"],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "AAAAAAAAAAAAAA"
