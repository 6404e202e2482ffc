"""bgnet's packages form layers, and no import goes up a layer or round a cycle.

From the bottom: the shared utilities (``errors``, ``atomic``, ``resources``), the rules (``engine``), the file
formats, the net / cube / bear-off code, the bots, then what uses bots (training, evaluation,
play, export, the environments), the command line, and last the ``bgnet`` package itself (its lazy ``Bot``). Imports
inside functions count too: a lazy import still ties the packages together. Within a package,
no circle between its files either. The imports are read by :mod:`import_reader`, the reader
``tools/import_graph.py`` prints the graph with.
"""
from __future__ import annotations

import ast

import pytest
from import_reader import ROOT, edges, imported, is_module, module_name, package_of, sources

LAYERS = [
    {"errors", "atomic", "resources"},
    {"engine"},
    {"formats"},
    {"nn", "cube", "bearoff"},
    {"bots"},
    {"train", "measure", "play", "export", "analyze", "envs"},
    {"cli"},
    {"bgnet"},
]
RANK = {name: k for k, layer in enumerate(LAYERS) for name in layer}


def test_every_package_has_a_layer():
    packages = {package_of(module_name(p)) for p in sources()}
    assert packages - set(RANK) == set(), "give the new package a layer in LAYERS"


def test_no_import_goes_up_a_layer():
    upward = [where for source, target, where in edges()
              if RANK[target] > RANK[source]]
    assert upward == [], "imports that go up a layer:\n" + "\n".join(upward)


def test_no_import_cycle_between_packages():
    graph: dict[str, set[str]] = {}
    for source, target, _where in edges():
        graph.setdefault(source, set()).add(target)
    cycle = _find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


def test_no_import_cycle_between_files():
    """Modules too: no file imports, even lazily inside a function, a module that leads back to it
    (a package's ``__init__`` counts as the package's module)."""
    graph: dict[str, set[str]] = {}
    for path in sources():
        source = module_name(path)
        for module, _line in imported(path):
            while module and not is_module(module):  # a name imported from a module
                module = module.rpartition(".")[0]
            if module and module != source:
                graph.setdefault(source, set()).add(module)
    cycle = _find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [])
            if found:
                return found
    return None


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}}, None),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
])
def test_the_cycle_finder_finds_cycles(graph, cycle):
    assert _find_cycle(graph) == cycle


def test_the_import_parser_sees_lazy_and_relative_imports(tmp_path):
    pkg = tmp_path / "bgnet" / "bots"
    pkg.mkdir(parents=True)
    (tmp_path / "bgnet" / "train").mkdir()
    (tmp_path / "bgnet" / "train" / "loop.py").write_text("")
    f = pkg / "x.py"
    f.write_text("def f():\n    from bgnet.train import loop\n    from ..train.loop import g\n"
                 "import numpy\n")
    assert imported(f, tmp_path / "bgnet") == [("bgnet.train.loop", 2), ("bgnet.train.loop", 3)]


def _private_reach_ins(module: str, source: str) -> list[str]:
    """``module.name`` for each private name (one leading underscore) the code of ``module`` takes
    from another bgnet module: imported by name, or read as an attribute of an imported module."""
    tree = ast.parse(source)
    modules, out = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("bgnet"):
            for a in node.names:
                if _is_private(a.name) and node.module != module:
                    out.append(f"{node.module}.{a.name} (line {node.lineno})")
                if is_module(f"{node.module}.{a.name}"):
                    modules[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            modules.update({a.asname: a.name for a in node.names
                            if a.asname and a.name.startswith("bgnet")})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and \
                isinstance(node.value, ast.Name) and node.value.id in modules:
            out.append(f"{modules[node.value.id]}.{node.attr} (line {node.lineno})")
    return out


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_takes_another_modules_private_names():
    found = {str(p.relative_to(ROOT.parent)): reach for p in sources()
             if (reach := _private_reach_ins(module_name(p), p.read_text(encoding="utf-8")))}
    assert not found, f"private names used across modules (make them public or keep them home): {found}"


def test_the_reach_in_finder_sees_imports_and_attributes():
    source = ("from bgnet.engine.board import _x, public\n"
              "from bgnet.engine.movegen import _own\n"
              "from bgnet.engine import movegen as mg\n"
              "y = mg._hidden + mg.visible\n")
    assert _private_reach_ins("bgnet.engine.movegen", source) == [
        "bgnet.engine.board._x (line 1)", "bgnet.engine.movegen._hidden (line 4)"]
