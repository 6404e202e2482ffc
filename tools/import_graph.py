"""Print which of bgnet's packages import which, as the source really does (lazy and relative
imports inside functions included), in the form docs/ARCHITECTURE.md shows it. The imports are
read by ``tests/import_reader.py``, the reader ``tests/test_layers.py`` checks the layers with.

    python3 tools/import_graph.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from import_reader import package_graph  # noqa: E402


def main() -> int:
    for src, dsts in sorted(package_graph().items()):
        print(f"{src:<10s} -> {', '.join(sorted(dsts)) or '(nothing in bgnet)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
