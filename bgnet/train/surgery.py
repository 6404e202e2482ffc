"""The verbs that reshape trained nets: ``bgnet widen``, ``bgnet deepen`` and ``bgnet average``.

Widen and deepen read a checkpoint, build the larger net that computes the same function
(:mod:`bgnet.nn.widen`, :mod:`bgnet.nn.deepen`), and write a checkpoint that a run resumes with
``resume=OUT``: everything of the original (games played, config, generator states, metrics)
except the net, and without the optimizer state, whose shapes no longer fit the net (the resumed
run starts a fresh optimizer). The output path is checked before any work, and a checkpoint
that cannot be read is an unusable input file (exit code 3).

``bgnet average`` reads several checkpoints of one run and writes the mean of their weights
(:mod:`bgnet.nn.average`), with the rest of the newest one's contents.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from bgnet.arguments import ArgumentParser, output_file_arg, seed_arg
from bgnet.errors import BadArgument
from bgnet.nn.encode import ENCODINGS

DROPPED = ("the optimizer state is dropped (its shapes no longer fit the net): a run resumed "
           "from {out} starts a fresh optimizer")


def _noise_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"the noise is a standard deviation, 0 or more; got {text!r}")
    return value


def _units_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a number of units is a whole number from 1 up; got {text!r}")
    return value


def _common(p: argparse.ArgumentParser, noise: float) -> None:
    p.add_argument("checkpoint", help="the trained checkpoint (.pt)")
    p.add_argument("out", type=output_file_arg, help="the checkpoint to write, in an existing folder")
    p.add_argument("--noise", type=_noise_arg, default=noise,
                   help=f"standard deviation of the noise on the new weights (default {noise:g})")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of that noise (default 0)")


def widen_main(argv: list[str]) -> int:
    """``bgnet widen CKPT OUT [--contact N [--layer K] [--race M]] [--encoding NAME] [--noise X]
    [--seed S]``."""
    p = ArgumentParser(
        prog="bgnet widen",
        description="Widen one hidden layer of a trained net: the new units copy existing ones and "
                    "share their outgoing weights, so the wider net computes the same function "
                    "(up to --noise); or widen its inputs to an encoding that extends its own, "
                    "the new inputs' weights at zero. Resume training from OUT.",
        examples=("bgnet widen runs/my-run/checkpoints/latest.pt wide.pt --contact 256",
                  "bgnet widen deep.pt wider.pt --contact 512 --layer 2 --noise 0.001",
                  "bgnet widen latest.pt contact.pt --encoding contact",
                  "bgnet train resume=wide.pt train.games=200000"))
    _common(p, noise=1e-3)
    p.add_argument("--contact", type=_units_arg, default=None, metavar="N",
                   help="units of the widened layer of the net (a split net's contact net)")
    p.add_argument("--layer", type=_units_arg, default=1, metavar="K",
                   help="which hidden layer of that net to widen, counted from 1 (default 1)")
    p.add_argument("--race", type=_units_arg, default=None, metavar="M",
                   help="units of a split net's race net's first layer (default: unchanged)")
    p.add_argument("--encoding", choices=sorted(ENCODINGS), default=None,
                   help="the input encoding to grow the net into (its features must begin with "
                        "the net's own, e.g. extended -> contact)")
    a = p.parse_args(argv)
    if a.contact is None and a.encoding is None:
        p.error("say what to widen: --contact N (a hidden layer) or --encoding NAME (the inputs)")
    from bgnet.nn.checkpoint import load_net
    from bgnet.nn.model import SplitValueNet, ValueNet
    from bgnet.nn.widen import grow_inputs, widen, widen_split

    net, data = load_net(a.checkpoint)
    wide: ValueNet | SplitValueNet = net
    if a.encoding is not None:
        wide = grow_inputs(net, a.encoding)
    if a.contact is None:
        if a.race is not None or a.layer != 1:
            raise BadArgument("--layer and --race go with --contact N")
    elif isinstance(wide, SplitValueNet):
        wide = widen_split(wide, a.contact, a.race, a.noise, a.seed, a.layer)
    elif a.race is not None:
        raise BadArgument(f"--race applies to a split net; {a.checkpoint} holds one net "
                          "(give --contact only)")
    else:
        wide = widen(wide, a.contact, a.noise, a.seed, a.layer)
    _write(a.checkpoint, a.out, net, wide, data)
    return 0


def deepen_main(argv: list[str]) -> int:
    """``bgnet deepen CKPT OUT [--after K] [--width W] [--activation relu] [--net WHICH]``."""
    from bgnet.nn.deepen import INSERTED, SUBNETS

    p = ArgumentParser(
        prog="bgnet deepen",
        description="Insert a hidden layer (ReLU) into a trained net that starts computing the "
                    "same function (as the identity of what it follows, or, narrower, by "
                    "carrying the next layer's sums); resume training from OUT.",
        examples=("bgnet deepen runs/my-run/checkpoints/latest.pt deep.pt",
                  "bgnet deepen latest.pt deep.pt --after 1 --width 160 --noise 0.01 --net contact",
                  "bgnet deepen latest.pt narrow.pt --width 64 --noise 0.001 --net contact",
                  "bgnet train resume=deep.pt train.games=200000"))
    _common(p, noise=0.0)
    p.add_argument("--after", type=_units_arg, default=None, metavar="K",
                   help="insert after hidden layer K, counted from 1 (default: the last)")
    p.add_argument("--width", type=_units_arg, default=None, metavar="W",
                   help="units of the new layer (default: layer K's width, twice that after a "
                        "layer whose outputs can be negative, e.g. tanh: an identity; fewer "
                        "down to twice the next layer's width, 10 before the head: a "
                        "bottleneck that starts by carrying the next layer's sums)")
    p.add_argument("--activation", choices=INSERTED, default="relu",
                   help="the new layer's activation (default relu)")
    p.add_argument("--net", choices=SUBNETS, default="both",
                   help="which net of a split net to deepen (default both)")
    a = p.parse_args(argv)
    from bgnet.nn.checkpoint import load_net
    from bgnet.nn.deepen import deepen, deepen_split
    from bgnet.nn.model import SplitValueNet, ValueNet

    net, data = load_net(a.checkpoint)
    deep: ValueNet | SplitValueNet
    options = dict(after=a.after, width=a.width, activation=a.activation, noise=a.noise,
                   seed=a.seed)
    if isinstance(net, SplitValueNet):
        deep = deepen_split(net, a.net, **options)
    elif a.net != "both":
        raise BadArgument(f"--net applies to a split net; {a.checkpoint} holds one net (leave "
                          "--net off)")
    else:
        deep = deepen(net, **options)
    _write(a.checkpoint, a.out, net, deep, data)
    return 0


def average_main(argv: list[str]) -> int:
    """``bgnet average CKPT_OR_FOLDER... --out OUT [--last N]``."""
    p = ArgumentParser(
        prog="bgnet average",
        description="Average the weights of several checkpoints of one run (say the last few "
                    "of its low learning-rate tail) into one net; measure it against the newest "
                    "with bgnet eval before trusting it. A folder stands for its numbered "
                    "checkpoints (games_*.pt).",
        examples=("bgnet average runs/my-run/checkpoints --last 8 --out avg.pt",
                  "bgnet average a.pt b.pt c.pt --out avg.pt",
                  "bgnet export avg.pt --out avg.onnx && bgnet eval avg.onnx "
                  "runs/my-run/checkpoints/latest.pt --games 20000"))
    p.add_argument("inputs", nargs="+", metavar="CKPT_OR_FOLDER",
                   help="checkpoints (.pt), or folders whose games_*.pt are all taken")
    p.add_argument("--out", type=output_file_arg, required=True,
                   help="the checkpoint to write, in an existing folder")
    p.add_argument("--last", type=_units_arg, default=None, metavar="N",
                   help="average only the N checkpoints with the most games played")
    a = p.parse_args(argv)
    from bgnet.nn.average import average
    from bgnet.nn.checkpoint import load_net, save_checkpoint

    files = _checkpoint_files(a.inputs)
    if any(Path(f).resolve() == Path(a.out).resolve() for f in files):
        raise BadArgument(f"--out {a.out} is one of the checkpoints to average; write the "
                          "average to a new file so that no checkpoint is lost")
    found = sorted(((*load_net(path), path) for path in files), key=lambda f: f[1].get("games", 0))
    if a.last is not None:
        found = found[-a.last:]
    mean = average([net for net, _, _ in found], [path for _, _, path in found])
    newest = found[-1][1]
    payload = dict(newest, net_config=mean.config(), net_state=mean.state_dict(),
                   optimizer_state=None, metrics={})
    save_checkpoint(a.out, payload)
    games = [data.get("games", 0) for _, data, _ in found]
    print(f"averaged {len(found)} checkpoint(s), {games[0]:,} to {games[-1]:,} games -> {a.out}")
    print(f"the rest is the newest one's; its optimizer state and metrics are dropped (they "
          f"belong to its own weights): a run resumed from {a.out} starts a fresh optimizer")
    return 0


def _checkpoint_files(inputs: list[str]) -> list[str]:
    """The files ``inputs`` name: each file itself, each folder's ``games_*.pt``."""
    files: list[str] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            numbered = sorted(str(f) for f in path.glob("games_*.pt"))
            if not numbered:
                raise BadArgument(f"{item} is a folder without numbered checkpoints (games_*.pt)")
            files += numbered
        else:
            files.append(item)  # a missing file is the checkpoint loader's error, naming it
    if len(set(files)) != len(files):
        raise BadArgument("a checkpoint is named twice; each is averaged once")
    return files


def _write(src: str, out: str, old, new, data: dict) -> None:
    from bgnet.nn.checkpoint import save_checkpoint

    payload = dict(data, net_config=new.config(), net_state=new.state_dict(), optimizer_state=None)
    save_checkpoint(out, payload)
    print(f"{src} -> {out}: {_shape(old)} -> {_shape(new)}")
    if new.encoding != old.encoding:
        print(f"inputs: {old.encoding} ({old.num_inputs}) -> {new.encoding} ({new.num_inputs}), "
              "the new ones' weights at zero")
    print(DROPPED.format(out=out))


def _shape(net) -> str:
    """A net's hidden layers and activations in one line, e.g. ``80 sigmoid, 80 relu``."""
    from bgnet.nn.model import SplitValueNet

    if isinstance(net, SplitValueNet):
        return f"contact [{_shape(net.contact)}], race [{_shape(net.race)}]"
    return ", ".join(f"{h} {act}" for h, act in zip(net.hidden, net.activations)) or "linear"
