"""Self-play speed: training games per second (learning included) in both modes, and
inference-only self-play games per second, for a net of configs/model (default h80: 80 hidden
units on Tesauro's inputs; ``--model extended`` is the shipped bot's split contact/race net).

Prints the figures next to published references (Open Sage's C++ TD self-play: 165-255 games/s
on 16 threads; a plain PyTorch TD-Gammon: about 6 games/s) and the goals (batched training:
500 games/s on a 2-core CPU machine; 10,000 games/s on one GPU machine).

    python3 benchmarks/bench_selfplay.py                 # CPU
    python3 benchmarks/bench_selfplay.py --model extended --online-games 0
    python3 benchmarks/bench_selfplay.py --device cuda --parallel 16384 --batched-games 200000

``--net NET`` times inference-only self-play of a trained net instead (no training): a
checkpoint, an exported bot, or a shipped one by name; ``--move-filter K`` times it also with
``train.move_filter=K``, side by side:

    python3 benchmarks/bench_selfplay.py --net bgnet-deep --move-filter 8
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import torch
from shipped_net import torch_net

from bgnet.bots.torch_eval import NetEvaluator
from bgnet.nn.model import ValueNet
from bgnet.train.compose import CONFIG_DIR
from bgnet.train.loop import set_threads, train
from bgnet.train.selfplay import SelfPlayPool, SelfPlaySettings


def base_config(**over):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="train", overrides=[f"{k}={v}" for k, v in over.items()])
    return cfg


def training_rate(mode: str, games: int, device: str, parallel: int, threads: int,
                  keep: list | None = None, model: str = "h80") -> float:
    cfg = base_config(**{"model": model, "train.mode": mode, "train.games": games, "device": device,
                         "train.parallel_games": parallel, "train.threads": threads,
                         "eval.every": 0, "eval.final_games": 0, "progress": "false",
                         "train.checkpoint_every": 10**9, "optim": "sgd" if mode == "online" else "adam"})
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        summary = train(cfg, d, progress=False)
        rate = summary["games"] / (time.perf_counter() - t)
        if keep is not None:
            from bgnet.nn.checkpoint import load_net

            keep.append(load_net(f"{d}/checkpoints/latest.pt", device=device)[0])
        return rate


def inference_rate(games: int, device: str, parallel: int, net=None) -> float:
    # A trained net: an untrained one plays aimless games several times longer than real ones.
    net = (net or ValueNet("tesauro", 80)).to(device)
    pool = SelfPlayPool(NetEvaluator(net, device), SelfPlaySettings(parallel_games=parallel), np.random.default_rng(0))
    warm = 0
    while warm < 200:  # compile every kernel (pool refills too) before timing
        warm += len(pool.step().results)
    done = 0
    t = time.perf_counter()
    while done < games:
        done += len(pool.step().results)
    return done / (time.perf_counter() - t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--model", default="h80", help="a config of configs/model (h80, extended, ...)")
    ap.add_argument("--parallel", type=int, default=512, help="games in flight (batched mode)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batched-games", type=int, default=10000)
    ap.add_argument("--online-games", type=int, default=100, help="0 skips online mode")
    ap.add_argument("--inference-games", type=int, default=10000)
    ap.add_argument("--net", help="a checkpoint, a .onnx bot, bgnet-deep or bgnet-default: time its "
                    "net's inference-only self-play only")
    ap.add_argument("--move-filter", type=int, default=0,
                    help="with --net: also time self-play with train.move_filter=K")
    a = ap.parse_args()
    set_threads(a.threads)
    if a.net:
        return compare_filter(a)
    print(f"model {a.model}, device {a.device}, torch threads {torch.get_num_threads()}, "
          f"{a.parallel} games in flight")
    trained: list = []
    bat = training_rate("batched", a.batched_games, a.device, a.parallel, a.threads, keep=trained,
                        model=a.model)
    inf = inference_rate(a.inference_games, a.device, a.parallel, net=trained[0])
    print(f"inference-only self-play : {inf:9.0f} games/s  (the net just trained)")
    print(f"training, batched mode   : {bat:9.0f} games/s  (goal >= 500 on a 2-core CPU machine, "
          f">= 10,000 on one GPU machine)")
    if a.online_games > 0:
        onl = training_rate("online", a.online_games, a.device, a.parallel, a.threads,
                            model=a.model)
        print(f"training, online mode    : {onl:9.1f} games/s  (per-move TD(λ) with traces)")
    print("references: Open Sage C++ TD self-play 165-255 games/s on 16 threads (batched/Open Sage "
          f"= {bat / 255:.2f}-{bat / 165:.2f}); plain PyTorch TD-Gammon about 6 games/s "
          f"(batched/plain = {bat / 6:.0f})")
    return 0


def compare_filter(a) -> int:
    """Inference-only self-play of a checkpoint's net, every move valued and (with
    ``--move-filter K``) with the filter, timed in alternation so that both see the same load."""
    net = torch_net(a.net).to(a.device)
    keeps = [0] + ([a.move_filter] if a.move_filter else [])
    pools = {k: SelfPlayPool(NetEvaluator(net, a.device),
                             SelfPlaySettings(parallel_games=a.parallel, bearoff=True, move_filter=k),
                             np.random.default_rng(0)) for k in keeps}
    for pool in pools.values():  # compile, and leave the opening behind
        for _ in range(40):
            pool.step()
    rates: dict[int, list[float]] = {k: [] for k in keeps}
    per_round = max(1, a.inference_games // 3)
    for _ in range(3):
        for k, pool in pools.items():
            done, t = 0, time.perf_counter()
            while done < per_round:
                done += len(pool.step().results)
            rates[k].append(done / (time.perf_counter() - t))
    for k in keeps:
        label = "every move valued" if k == 0 else f"train.move_filter={k}"
        line = f"{a.net}, {label}: " + ", ".join(f"{r:.0f}" for r in rates[k]) + " games/s"
        if k:
            ratios = [r / f for r, f in zip(rates[k], rates[0])]
            line += f" ({min(ratios):.2f}-{max(ratios):.2f}x in the same rounds)"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
