"""``python -m bgnet.cli VERB ...``: the ``bgnet`` command run as a module."""
import sys

from bgnet.cli import run

if __name__ == "__main__":
    sys.exit(run())
