"""docs/ARCHITECTURE.md against the code: every file, module and name it mentions exists, every
package of bgnet has its row in the table of packages, each row's imports are the ones the code
has (read by :mod:`import_reader`, as the layer test reads them), and the layers it draws are
the layer test's.

What the page mentions is what it puts in backquotes: a path (``train/loop.py``, ``fast/``), a
dotted name whose first part is one of bgnet's packages (``bots.search.rank_moves``,
``bgnet.load_bot``), and, in a row of the table, a bare name, which must be a module of the row's
package or a name defined in it (``movegen``, ``Bot``, ``can_evaluate``) or a module outside bgnet
that it imports (``gnubg_nn``), or a dotted name within it (``Game.replay_roll``).
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
from import_reader import ROOT, module_name, package_graph, package_of, sources
from test_layers import LAYERS

REPO = ROOT.parent
PAGE = REPO / "docs" / "ARCHITECTURE.md"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
TOP_FOLDERS = ("bgnet", "tests", "tools", "benchmarks", "docs", "configs")


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def quoted(text: str) -> list[str]:
    """What ``text`` puts in backquotes."""
    return re.findall(r"`([^`\n]+)`", text)


def packages() -> set[str]:
    """bgnet's packages and top-level modules, by the names the page and the layers use."""
    return {package_of(module_name(p)) for p in sources()}


# ---------------------------------------------------------------------------------------------
# names defined in the source, read without importing it


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _defined_in_body(body: list) -> dict[str, ast.AST]:
    """The names a module's or class's body defines (functions, classes, assignments), and
    ``__all__``'s (a lazy ``__getattr__`` provides those)."""
    names: dict[str, ast.AST] = {}
    exported: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = node
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exported.update({c.value: node for c in ast.walk(node.value) if isinstance(c, ast.Constant)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, (ast.If, ast.Try)):
            names.update(_defined_in_body(node.body))
    return exported | names  # a name defined here is its definition, not its mention in __all__


def module_file(dotted: str) -> Path | None:
    """The file of the module ``bgnet.x.y`` (a package's ``__init__.py``), or None."""
    path = REPO.joinpath(*dotted.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def has_attributes(path: Path, attributes: list[str]) -> bool:
    """Whether the module at ``path`` defines ``attributes[0]``, a class there ``attributes[1]``
    and so on."""
    node: ast.AST = _tree(path)
    for name in attributes:
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            return False
        found = _defined_in_body(body)
        if name not in found:
            return False
        node = found[name]
    return True


def resolves(dotted: str) -> bool:
    """Whether ``pkg.module.name...`` (with or without ``bgnet.``) names a module of bgnet, or a
    name defined in one: the longest part that is a module, then names within it."""
    parts = dotted.split(".")
    if parts[0] != "bgnet":
        parts = ["bgnet", *parts]
    for cut in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:cut]))
        if path is not None:
            return has_attributes(path, parts[cut:])
    return False


def package_modules(package: str) -> list[Path]:
    """The files of one of bgnet's packages (or the one file of a top-level module)."""
    return [p for p in sources() if package_of(module_name(p)) == package]


def _class_bodies(tree: ast.Module) -> list[list]:
    return [node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def defined_in_package(package: str, dotted: str) -> bool:
    """Whether ``dotted`` is a module of ``package`` at any depth (``movegen``, ``fast``, ``app``
    of ``play/web``), a name defined in one of its files or in a class there (``Bot``,
    ``can_evaluate``), or such a name with the names after it within it (``Game.replay_roll``)."""
    first, *rest = dotted.split(".")
    files = package_modules(package)
    if not rest and any(first in p.relative_to(ROOT).with_suffix("").parts[1:] for p in files):
        return True
    if any(has_attributes(path, [first, *rest]) for path in files):
        return True
    if rest:
        return False
    return (any(first in _defined_in_body(body) for path in files for body in _class_bodies(_tree(path)))
            or any(first in _imported_outside(_tree(path)) for path in files))


def _imported_outside(tree: ast.Module) -> set[str]:
    """The modules outside bgnet a file imports (``gnubg_nn``), by their top names."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found - {"bgnet"}


@functools.cache
def _graph() -> dict[str, set[str]]:
    return package_graph()


# ---------------------------------------------------------------------------------------------
# the table of packages


def package_rows() -> list[tuple[list[str], str, str]]:
    """(packages, holds, imports) of each row of the table of packages."""
    text = page()
    start = text.index("| package | holds | imports |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"a row of the table of packages has {len(cells)} cells: {line[:80]}"
        rows.append((quoted(cells[0].split("(")[0]), cells[1], cells[2]))
    return rows


def test_every_package_has_its_row():
    named = [p for names, _, _ in package_rows() for p in names]
    assert sorted(named) == sorted(set(named)), "a package has two rows"
    assert set(named) == packages(), (f"packages without a row: {sorted(packages() - set(named))}; "
                                      f"rows of no package: {sorted(set(named) - packages())}")


ROWS = package_rows()
ROW_IDS = [" ".join(names) for names, _, _ in ROWS]


@pytest.mark.parametrize("names, holds, imports", ROWS, ids=ROW_IDS)
def test_each_row_names_what_its_package_holds(names, holds, imports):
    missing = []
    for span in quoted(holds):
        if span.endswith("/"):
            if not any((ROOT / p / span).is_dir() for p in names):
                missing.append(span)
        elif IDENTIFIER.fullmatch(span) or (DOTTED.fullmatch(span) and span.split(".")[0] not in packages()):
            if not any(defined_in_package(p, span) for p in names):
                missing.append(span)
        elif DOTTED.fullmatch(span) and not resolves(span):
            missing.append(span)
    assert missing == [], f"{', '.join(names)}: not in the code: {missing}"


@pytest.mark.parametrize("names, holds, imports", ROWS, ids=ROW_IDS)
def test_each_row_says_what_its_package_imports(names, holds, imports):
    graph = _graph()
    actual = set().union(*(graph[p] for p in names)) - set(names)
    said = set() if imports == "nothing in bgnet" else {p.strip() for p in imports.split(",")}
    assert said == actual, f"{', '.join(names)} imports {', '.join(sorted(actual)) or 'nothing in bgnet'}"


# ---------------------------------------------------------------------------------------------
# the rest of the page


def test_every_dotted_name_of_bgnet_it_mentions_exists():
    missing = [span for span in quoted(page())
               if DOTTED.fullmatch(span) and span.split(".")[0] in packages() | {"bgnet"}
               and not resolves(span)]
    assert missing == [], f"named in docs/ARCHITECTURE.md, not in the code: {missing}"


def test_every_file_it_mentions_exists():
    rows = {span: names for names, holds, _ in package_rows() for span in quoted(holds)}
    missing = []
    for span in quoted(page()):
        for word in span.split():
            word = word.strip("\"'")
            if "*" in word or not (word.endswith(".py") or word.endswith("/")) or "/" not in word:
                continue
            places = [REPO / word] if word.split("/")[0] in TOP_FOLDERS else [ROOT / word]
            places += [ROOT / p / word for p in rows.get(span, [])]
            if not any(p.exists() for p in places):
                missing.append(word)
    assert missing == [], f"files named in docs/ARCHITECTURE.md that do not exist: {missing}"


def test_the_layers_it_draws_are_the_layer_tests():
    drawn = []
    for line in page().splitlines():
        if re.match(r"layer \S+ ", line):
            names = []
            for word in line.split()[2:]:
                if word not in packages():
                    break
                names.append(word)
            drawn.append(set(names))
    assert drawn[::-1] == LAYERS


def test_the_checker_finds_what_is_not_there():
    assert resolves("bots.search.rank_moves") and resolves("bgnet.load_bot") and resolves("engine.movegen")
    assert resolves("engine.game.Game.replay_roll")
    assert not resolves("bots.search.rank_everything") and not resolves("engine.nomodule")
    assert not resolves("engine.game.Game.no_such_method")
    assert defined_in_package("bots", "can_evaluate") and defined_in_package("nn", "fast")
    assert not defined_in_package("bots", "no_such_name")
