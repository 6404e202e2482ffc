"""Tesauro's online TD(λ): one game at a time, a weight update after every move.

The net's five outputs are kept on one fixed side's view (the first player's) for the traces:
the net itself answers for the side on roll, so every other position's outputs are flipped
(win -> 1 - win, gammons swap sides), which flips the signs and order of their gradients too.
With V_t the fixed-view outputs and e the eligibility traces (one per output),

    e_k <- λ e_k + ∇ V_t,k        w <- w + α Σ_k (V_{t+1,k} - V_t,k) e_k

and at the end of the game V_{T} is the actual outcome (gammons and backgammons included).

:class:`OnlineSource` makes it the run loop's game source for ``train.mode=online``.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch.func import functional_call, jacrev

from bgnet.bots.torch_eval import NetEvaluator
from bgnet.engine.board import start_position
from bgnet.engine.movegen import generate
from bgnet.nn.encode import encode, game_results, race_mask
from bgnet.nn.model import SplitValueNet
from bgnet.nn.probs import equity as money_equity
from bgnet.train.selfplay import FinishedGames, InProcessSource

# flip as a linear map plus offset: flip(p) = F p + c
_PERM = [0, 3, 4, 1, 2]
_SIGN = torch.tensor([-1.0, 1.0, 1.0, 1.0, 1.0])


class OnlineTD:
    def __init__(self, net, cfg, rng: np.random.Generator, device: str = "cpu"):
        self.net, self.cfg, self.rng, self.device = net, cfg, rng, device
        self.lam = float(cfg.train.lam)
        self.ev = NetEvaluator(net, device)
        self.split = isinstance(net, SplitValueNet)
        self.names = [n for n, _ in net.named_parameters()]

    def _value_and_jacobian(self, board: np.ndarray) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        x = torch.from_numpy(encode(board[None], self.net.encoding)).to(self.device)
        params = {n: p.detach() for n, p in self.net.named_parameters()}
        extra = (torch.from_numpy(race_mask(board[None])).to(self.device),) if self.split else ()

        def f(p):
            return functional_call(self.net, p, (x, *extra))[0]

        jac = jacrev(f)(params)  # name -> [5, *shape]
        with torch.no_grad():
            v = f(params)
        return v, jac

    @staticmethod
    def _to_fixed_view(v, jac, flipped: bool):
        if not flipped:
            return v, jac
        v2 = v[_PERM].clone()
        v2[0] = 1.0 - v[0]
        jac2 = {n: j[_PERM] * _SIGN.to(j.device).view(-1, *([1] * (j.dim() - 1))) for n, j in jac.items()}
        return v2, jac2

    def play_game(self, lr: float) -> tuple[int, int, float]:
        """Play one self-play game, learning after every move. Returns (points for the first
        player, plies, mean squared TD error)."""
        board = start_position()
        traces = {n: torch.zeros((5, *p.shape), device=self.device) for n, p in self.net.named_parameters()}
        params = dict(self.net.named_parameters())
        ply, sq_err = 0, 0.0
        v, jac = self._to_fixed_view(*self._value_and_jacobian(board), flipped=False)
        while True:
            d1, d2 = self.rng.integers(1, 7, 2)
            while ply == 0 and d1 == d2:
                d1, d2 = self.rng.integers(1, 7, 2)
            after, _ = generate(board, int(d1), int(d2))
            if len(after):
                eq = money_equity(self.ev.afterstates(after))
                chosen = after[int(np.argmax(eq))]
            else:
                chosen = board.copy()
            for n in traces:
                traces[n].mul_(self.lam).add_(jac[n])
            points = int(game_results(chosen[None])[0])
            first_moved = ply % 2 == 0
            if points:
                z = torch.zeros(5, device=self.device)
                # outcome in the first player's view
                if first_moved:
                    z[0] = 1.0
                    z[1] = float(points >= 2)
                    z[2] = float(points >= 3)
                else:
                    z[3] = float(points >= 2)
                    z[4] = float(points >= 3)
                v_next, jac_next = z, None
            else:
                board = np.ascontiguousarray(chosen[::-1])
                v_next, jac_next = self._to_fixed_view(*self._value_and_jacobian(board), flipped=first_moved)
            delta = (v_next - v).detach()
            sq_err += float((delta ** 2).sum())
            with torch.no_grad():
                for n, p in params.items():
                    p.add_(lr * torch.tensordot(delta, traces[n], dims=1))
            ply += 1
            if points or ply >= self.cfg.train.max_plies:
                result = points if first_moved else -points
                return result, ply, sq_err / ply
            v, jac = v_next, jac_next


class OnlineSource(InProcessSource):
    """Online mode as a game source of the run loop (:class:`bgnet.train.sources.GameSource`):
    each call plays one game of :class:`OnlineTD` with the net being trained, learning after
    every move at the rate ``rate`` gives for the games played so far (``games`` at the start).
    Its games come already learned: no positions, one loss each (``FinishedGames.learned``)."""

    def __init__(self, net, opt: torch.optim.Optimizer, cfg, rng: np.random.Generator, device: str,
                 games: int, rate: Callable[[int], float]):
        self.td = OnlineTD(net, cfg, rng, device)
        self.opt, self.games, self.rate = opt, games, rate

    def next_games(self, wanted: int) -> FinishedGames:
        lr = self.rate(self.games)
        for g in self.opt.param_groups:  # the optimizer's state records the rate in force
            g["lr"] = lr
        result, length, loss = self.td.play_game(lr)
        self.games += 1
        return FinishedGames(np.empty((0, 2, 25), np.int8), np.empty((0, 5), np.float32),
                             np.array([result]), np.array([length]), np.array([loss]))

    def sync(self, net: torch.nn.Module, version: int) -> None:
        pass  # never called: no positions to learn from afterwards

    def state(self) -> dict:
        return {}  # the dice are the run's own generator, which every checkpoint keeps

    def games_in_flight(self) -> dict:
        return {}  # a game is played whole within one call

    def resume_games(self, state: dict) -> None:
        pass

    def configure(self, settings, games: int) -> None:
        pass  # online mode has no phases (the config refuses them)
