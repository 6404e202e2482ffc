"""The one reader of bgnet's imports, as the source really has them: lazy imports inside functions
and relative imports included. ``tests/test_layers.py`` checks the layers with it and
``tools/import_graph.py`` prints the graph from it (a maintainer script, which puts this folder on
its path: nothing here needs bgnet installed, only its source tree).

A module is named as Python names it (``bgnet/cli/__init__.py`` is ``bgnet.cli``); its package
is the name's second part (``bgnet.engine.board`` is in ``engine``), and the top-level
``bgnet/__init__.py`` is the package ``bgnet``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "bgnet"


def module_name(path: Path, root: Path = ROOT) -> str:
    """``ROOT/engine/board.py`` -> ``bgnet.engine.board``; a package's ``__init__`` is the package."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str, root: Path = ROOT) -> bool:
    """Whether ``name`` (``bgnet.engine.board``) is a module or package of the source tree, rather
    than a name defined in one."""
    path = root.parent.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def package_of(module: str) -> str:
    """``bgnet.engine.board`` -> ``engine``; ``bgnet`` itself is the package ``bgnet``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "bgnet"


def imported(path: Path, root: Path = ROOT) -> list[tuple[str, int]]:
    """(module, line) of every bgnet import in a file, at any depth (lazy imports too); a name
    imported from a module counts as that module, a module imported from a package as itself."""
    module = module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # ``from bgnet import bots`` imports the package bgnet.bots.
            out += [(f"{base}.{a.name}" if is_module(f"{base}.{a.name}", root) else base, node.lineno)
                    for a in node.names]
    return [(m, line) for m, line in out if m == "bgnet" or m.startswith("bgnet.")]


def sources(root: Path = ROOT) -> list[Path]:
    """Every Python file of the source tree, in a fixed order."""
    return sorted(root.rglob("*.py"))


def edges(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(from package, to package, where) of every import between two of bgnet's packages."""
    out = []
    for path in sources(root):
        source = package_of(module_name(path, root))
        for module, line in imported(path, root):
            target = package_of(module)
            if target != source:
                out.append((source, target, f"{path.relative_to(root.parent)}:{line} imports {module}"))
    return out


def package_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each package and the packages it imports (every package of the tree is a key)."""
    graph: dict[str, set[str]] = {package_of(module_name(p, root)): set() for p in sources(root)}
    for source, target, _where in edges(root):
        graph[source].add(target)
    return graph
