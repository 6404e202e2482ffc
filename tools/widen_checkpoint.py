"""Widen a trained checkpoint's hidden layer (same function, more units) to train it on.

    python3 tools/widen_checkpoint.py runs/strong/checkpoints/latest.pt wide.pt --contact 256
    bgnet train +experiment=... resume=wide.pt

The optimizer state is dropped (its shapes no longer fit): the resumed run starts a fresh Adam.
"""
from __future__ import annotations

import argparse

from bgnet.nn.checkpoint import load_net, save_checkpoint
from bgnet.nn.model import SplitValueNet
from bgnet.nn.widen import widen, widen_split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--contact", type=int, required=True,
                    help="hidden units of the (contact) net after widening")
    ap.add_argument("--race", type=int, default=None, help="hidden units of the race net (split nets)")
    ap.add_argument("--noise", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    net, data = load_net(a.checkpoint)
    if isinstance(net, SplitValueNet):
        wide = widen_split(net, a.contact, a.race, a.noise, a.seed)
    else:
        wide = widen(net, a.contact, a.noise, a.seed)
    payload = dict(data, net_config=wide.config(), net_state=wide.state_dict(), optimizer_state=None)
    save_checkpoint(a.out, payload)
    print(f"{a.checkpoint} -> {a.out}: {net.config()} -> {wide.config()}")


if __name__ == "__main__":
    main()
