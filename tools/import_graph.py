"""Print which of bgnet's packages import which, as the source really does (lazy imports inside
functions included), in the form docs/ARCHITECTURE.md shows it.

    python3 tools/import_graph.py
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "bgnet"


def package_of(module: str) -> str:
    """``bgnet.engine.board`` -> ``engine``; top-level modules (``bgnet.cli``) keep their name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "bgnet"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("bgnet")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bgnet") and not node.level:
            found.add(node.module)
    return found


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        src = package_of(".".join(rel.parts))
        if src == "__init__":
            src = "bgnet"
        for target in imports_of(path):
            dst = package_of(target)
            if dst != src:
                edges[src].add(dst)
        edges.setdefault(src, set())
    return edges


def main() -> int:
    for src, dsts in sorted(graph().items()):
        print(f"{src:<10s} -> {', '.join(sorted(dsts)) or '(nothing in bgnet)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
