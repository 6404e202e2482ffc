"""A screenshot of the play page in the middle of a game, for the README.

Starts ``bgnet serve`` on a free loopback port with fixed dice, opens the page in headless
Chromium (the browser tests' driver, ``tests/test_serve_live.py``), plays a 5-point match by
clicking for a few turns, asks for a hint, and saves the page as it then looks::

    python tools/page_screenshot.py --out docs/serve.png [--turns 4] [--width 1200]

Needs Debian's ``chromium`` and the ``websocket-client`` package (``bgnet[test]``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_serve_live import (  # noqa: E402
    Browser,
    chromium_path,
    free_port,
    play_turn_by_clicking,
    start_anew,
    wait_for,
)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "serve.png")
    p.add_argument("--turns", type=int, default=4, help="the person's decisions before the shot")
    p.add_argument("--width", type=int, default=1200)
    p.add_argument("--height", type=int, default=900)
    p.add_argument("--seed", type=int, default=11, help="seed of the page's dice")
    a = p.parse_args()
    exe = chromium_path()
    if exe is None:
        sys.exit("no chromium on PATH: install Debian's chromium package")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "bgnet.cli", "serve", "--port", str(port),
                               "--seed", str(a.seed), "--no-db"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{url}/health", 300, server)
        with tempfile.TemporaryDirectory() as profile:
            b = Browser(exe, Path(profile))
            try:
                b.send("Emulation.setDeviceMetricsOverride", width=a.width, height=a.height,
                       deviceScaleFactor=1, mobile=False)
                b.open(url)
                b.eval("document.getElementById('length').value = '5'")
                start_anew(b)  # the page opened on a money game: Start asks first
                for _ in range(a.turns):
                    s = b.state()
                    if s["phase"] in ("over", "match_over"):
                        break
                    play_turn_by_clicking(b, s)
                if b.state()["phase"] == "roll":
                    b.click("#roll")
                b.click("#hint")
                b.settled()
                b.screenshot(a.out)
            finally:
                b.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
