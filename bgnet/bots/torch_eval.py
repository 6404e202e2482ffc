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
