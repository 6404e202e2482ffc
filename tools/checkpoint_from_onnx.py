"""Turn an exported bot (``.onnx``) back into a training checkpoint, to train its net on.

The checkpoint holds the net's config and weights and the number of games it was trained for
(from the file's metadata unless ``--games`` says otherwise); it has no optimizer state, so a run
resumed from it starts its optimizer afresh.

    python3 tools/checkpoint_from_onnx.py checkpoints/bgnet-deep.onnx deep.pt
"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("onnx", help="an exported bot")
    p.add_argument("out", help="the checkpoint to write (.pt)")
    p.add_argument("--games", type=int, default=None, help="games the net was trained for")
    a = p.parse_args(argv)
    from bgnet.bots.torch_eval import net_of_exported_bot
    from bgnet.nn.checkpoint import save_checkpoint

    net, meta = net_of_exported_bot(a.onnx)
    games = a.games if a.games is not None else int(meta.get("games") or 0)
    save_checkpoint(a.out, {"net_config": net.config(), "net_state": net.state_dict(), "games": games,
                            "config": {}, "metrics": meta.get("metrics") or {}})
    print(f"wrote {a.out}: {meta.get('name')} at {games} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
