"""Turn an exported bot (``.onnx``) back into a training checkpoint, to train its net on.

The checkpoint holds the net's config and weights and the number of games it was trained for
(from the file's metadata unless ``--games`` says otherwise); it has no optimizer state, so a run
resumed from it starts its optimizer afresh.

    python3 tools/checkpoint_from_onnx.py checkpoints/bgnet-deep.onnx deep.pt
"""
from __future__ import annotations

import argparse
import sys


def torch_net_of(path: str):
    """The torch value net whose weights an exported bot holds, checked against onnxruntime."""
    import numpy as np
    import torch

    from bgnet.bots.onnx_eval import OnnxEvaluator
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import generate_batch
    from bgnet.nn.model import evaluate_afterstates, net_from_config

    ev = OnnxEvaluator(path, threads=1)
    if ev.fast is None:
        raise SystemExit(f"{path}: its weights could not be matched to its net config")
    # The compiled pass holds the file's weights by their declared names, which are the torch
    # net's state_dict keys (bgnet.nn.model.net_layout).
    weights = ev.fast._weights()
    net = net_from_config(ev.metadata["net_config"])
    state = net.state_dict()
    if set(state) != set(weights):
        raise SystemExit(f"{path}: its weights could not be matched to its net config")
    net.load_state_dict({k: torch.from_numpy(np.array(weights[k], np.float32)) for k in state})
    net.eval()
    boards = np.stack([start_position()] * 64)
    after, _, _ = generate_batch(boards, np.random.default_rng(0).integers(1, 7, size=(64, 2)))
    if not np.allclose(evaluate_afterstates(net, after), ev.afterstates(after), atol=1e-4):
        raise SystemExit(f"{path}: the rebuilt net disagrees with the exported bot")
    return net, ev.metadata


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("onnx", help="an exported bot")
    p.add_argument("out", help="the checkpoint to write (.pt)")
    p.add_argument("--games", type=int, default=None, help="games the net was trained for")
    a = p.parse_args(argv)
    from bgnet.nn.checkpoint import save_checkpoint

    net, meta = torch_net_of(a.onnx)
    games = a.games if a.games is not None else int(meta.get("games") or 0)
    save_checkpoint(a.out, {"net_config": net.config(), "net_state": net.state_dict(), "games": games,
                            "config": {}, "metrics": meta.get("metrics") or {}})
    print(f"wrote {a.out}: {meta.get('name')} at {games} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
