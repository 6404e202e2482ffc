"""The evaluator of a torch value net (training, self-play, checkpoints).

Kept apart from :mod:`bgnet.bots.net` so that a bot running an exported ONNX model never imports
torch. ``bgnet.bots.net.NetEvaluator`` still names this class.
"""
from __future__ import annotations

import numpy as np
import torch

from bgnet.bots.evaluator import Evaluator
from bgnet.nn.model import SplitValueNet


class NetEvaluator(Evaluator):
    """Runs a torch value net on boards with a reusable input buffer (the hot path of play and
    search). The net is put in eval mode on ``device``.

    >>> from bgnet.nn.model import ValueNet
    >>> from bgnet.engine.board import start_position
    >>> NetEvaluator(ValueNet("tesauro", 10)).positions(start_position()[None]).shape
    (1, 5)
    """

    def __init__(self, net: torch.nn.Module, device: str = "cpu", fast: bool = True):
        self.net = net.to(device).eval()
        self.device = device
        assert isinstance(net.encoding, str), "a value net names its input encoding"
        self.encoding = net.encoding
        self.split = isinstance(net, SplitValueNet)
        # On the CPU, a net the compiled forward pass covers skips torch (same probabilities,
        # several times faster); ``fast=False`` keeps torch.
        self.fast = None
        if fast and str(device) == "cpu":
            from bgnet.nn.fast import FastForward, supports

            if supports(self.net):
                self.fast = FastForward(self.net)

    @torch.no_grad()
    def _forward(self, x: np.ndarray, is_race: np.ndarray | None) -> np.ndarray:
        xt = torch.from_numpy(x).to(self.device)
        if self.split:
            p = self.net(xt, torch.from_numpy(is_race).to(self.device))
        else:
            p = self.net(xt)
        return p.float().cpu().numpy()


def net_of_exported_bot(path: str):
    """The torch value net whose weights an exported bot (``.onnx``) holds, and the file's
    metadata: the way back from a bot to a net to train on. The rebuilt net is checked against
    onnxruntime on the opening's afterstates; a file whose weights do not fit its declared net
    is a :class:`~bgnet.bots.onnx_eval.BotFileError`."""
    from bgnet.bots.onnx_eval import BotFileError, OnnxEvaluator
    from bgnet.engine.board import start_position
    from bgnet.engine.movegen import generate_batch
    from bgnet.nn.model import evaluate_afterstates, net_from_config

    ev = OnnxEvaluator(path, threads=1)
    # The compiled pass holds the file's weights by their declared names, which are the torch
    # net's state_dict keys (bgnet.nn.model.net_layout).
    weights = ev.fast._weights() if ev.fast is not None else None
    net = net_from_config(ev.metadata["net_config"])
    state = net.state_dict()
    if weights is None or set(state) != set(weights):
        raise BotFileError(f"{path}: its weights could not be matched to its net config")
    net.load_state_dict({k: torch.from_numpy(np.array(weights[k], np.float32)) for k in state})
    net.eval()
    boards = np.stack([start_position()] * 64)
    after, _, _ = generate_batch(boards, np.random.default_rng(0).integers(1, 7, size=(64, 2)))
    if not np.allclose(evaluate_afterstates(net, after), ev.afterstates(after), atol=1e-4):
        raise BotFileError(f"{path}: the rebuilt net disagrees with the exported bot")
    return net, ev.metadata
