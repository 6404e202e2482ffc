"""The nets family of verbs: ``bgnet export`` (a checkpoint as an ONNX bot,
:mod:`bgnet.export.onnx_export`), its way back ``bgnet checkpoint`` (an exported bot as a
checkpoint to train on), and the verbs that reshape trained nets, ``bgnet widen``, ``bgnet
deepen``, ``bgnet average`` and ``bgnet merge`` (:mod:`bgnet.train.surgery`).

Widen and deepen write a checkpoint that a run resumes with ``resume=OUT``; the output path is
checked before any work, and a checkpoint that cannot be read is an unusable input file (exit
code 3).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bgnet.cli.arguments import ArgumentParser, name_arg, output_file_arg, seed_arg, whole_arg
from bgnet.errors import BadArgument, BadInputFile

# ---------------------------------------------------------------------------------------------
# bgnet export


def export_main(argv: list[str]) -> int:
    """``bgnet export CHECKPOINT [--out BOT.onnx] [--name NAME] [--check N]``.

    Exit codes (:mod:`bgnet.errors`): 0 written (and checked); 2 a bad argument (``--out`` a
    directory or in a missing folder, ``--check`` below 0); 3 a checkpoint that cannot be used
    (missing, corrupt, or holding a net that cannot be exported); 1 the export disagrees with the
    torch net.
    """
    p = ArgumentParser(prog="bgnet export",
                       description="Export a training checkpoint as an ONNX bot that plays without "
                                   "torch (onnxruntime + numpy).",
                       examples=("bgnet export runs/my-run/checkpoints/latest.pt --out my-bot.onnx",))
    p.add_argument("checkpoint", help="a training checkpoint (.pt), or a training run's folder for "
                                      "its latest checkpoint")
    p.add_argument("--out", help="the ONNX file to write, in an existing folder (default: the "
                                 "checkpoint's name with .onnx)")
    p.add_argument("--name", type=name_arg,
                   help="the bot's name in its metadata, which the play page, reports and saved "
                   "matches show: 1 to 40 printable characters without ':' (default: the --out "
                   "file's name, else the run's: "
                   "runs/quick/checkpoints/latest.pt is 'quick')")
    p.add_argument("--check", type=int, default=1000, metavar="N",
                   help="compare the export with the torch net on N positions (0: skip; default 1000)")
    a = p.parse_args(argv)
    try:
        return _export(a)
    except (BadArgument, BadInputFile) as e:
        return _fail(str(e), e.exit_code)


def _fail(message: str, code: int) -> int:
    print(f"bgnet export: error: {message}", file=sys.stderr)
    return code


def _refuse_a_bot(spec: str) -> None:
    """A shipped bot's name or an exported bot where a checkpoint belongs: say that it is a bot
    already, one that plays as it is."""
    from bgnet.resources import SHIPPED_BOTS

    if spec.lower() in SHIPPED_BOTS and not os.path.exists(spec):
        raise BadArgument(f"{spec} is a bot shipped with bgnet, exported already: it plays as it is "
                          f"(bgnet play --bot {spec}); export takes a training checkpoint (.pt) or a "
                          "training run's folder")
    if spec.lower().endswith(".onnx"):  # before --out's default, which would be the file itself
        from bgnet.nn.checkpoint import exported_bot_refusal

        raise BadInputFile(exported_bot_refusal(spec, "export takes a training checkpoint (.pt) or a "
                                                      "training run's folder"))


def _export(a) -> int:
    from bgnet.export.onnx_export import (
        ExportError,
        bot_name_for,
        check_output_path,
        export_onnx,
        max_difference,
    )
    from bgnet.nn.checkpoint import CheckpointError, load_net

    if a.check < 0:
        raise BadArgument(f"--check must be 0 or more; got {a.check}")
    _refuse_a_bot(a.checkpoint)
    out = Path(a.out) if a.out else Path(a.checkpoint).with_suffix(".onnx")
    if out.resolve() == Path(a.checkpoint).resolve():
        raise BadArgument("--out must differ from the checkpoint")
    check_output_path(out)
    try:
        name = a.name or bot_name_for(a.checkpoint, out if a.out else None)
        path = export_onnx(a.checkpoint, out, {"name": name})
    except (CheckpointError, ExportError) as e:
        # Both are about the checkpoint given: unreadable, or holding a net that cannot be exported.
        raise BadInputFile(str(e)) from None
    print(f"wrote {path} ({path.stat().st_size / 1024:.1f} KiB)")
    if a.check:
        diff = max_difference(load_net(a.checkpoint)[0], path, a.check)
        print(f"agreement with the torch net on {a.check} positions: max |difference| "
              f"{diff['positions']:.2e} (positions), {diff['afterstates']:.2e} (afterstates)")
        if max(diff.values()) > 1e-5:
            return _fail("the export disagrees with the torch net by more than 1e-5", 1)
    return 0


# ---------------------------------------------------------------------------------------------
# bgnet checkpoint


def checkpoint_main(argv: list[str]) -> int:
    """``bgnet checkpoint BOT OUT.pt [--games N]``: export's way back."""
    p = ArgumentParser(
        prog="bgnet checkpoint",
        description="Turn an exported bot back into a training checkpoint, to train its net on "
                    "(bgnet train resume=OUT) or to reshape it (widen, deepen, merge): the net's "
                    "config and weights, rebuilt in torch and checked against the bot, and the "
                    "games it was trained for. It has no optimizer state: a run resumed from it "
                    "starts its optimizer afresh.",
        examples=("bgnet checkpoint bgnet-deep deep.pt",
                  "bgnet checkpoint my-bot.onnx my-bot.pt --games 0",
                  "bgnet train resume=deep.pt train.games=9000000"))
    p.add_argument("bot", help="an exported bot (.onnx), or the name of a bot shipped with bgnet "
                               "(bgnet-default, bgnet-deep)")
    p.add_argument("out", type=output_file_arg, help="the checkpoint to write (.pt), in an "
                                                     "existing folder")
    p.add_argument("--games", type=_games_arg, default=None, metavar="N",
                   help="the games the net was trained for (default: as the bot's metadata says)")
    a = p.parse_args(argv)
    _refuse_a_checkpoint(a.bot)
    from bgnet.train.surgery import checkpoint_of_bot

    _, data = checkpoint_of_bot(a.bot, a.out, a.games)
    print(f"wrote {a.out}: the net of {a.bot}, {_shape_of(data['net_config'])}, at "
          f"{data['games']:,} games; no optimizer state (a run resumed from it starts a fresh one)")
    return 0


_games_arg = whole_arg("a number of games")


def _refuse_a_checkpoint(spec: str) -> None:
    """A checkpoint or a run's folder where an exported bot belongs: say it is one already."""
    if spec.lower().endswith(".pt") or os.path.isdir(spec):
        raise BadArgument(f"{spec} is a training checkpoint (or a run's folder) already: train or "
                          "reshape it as it is; bgnet checkpoint takes an exported bot (.onnx) or "
                          "a shipped bot's name")


def _shape_of(net_config: dict) -> str:
    from bgnet.nn.model import net_from_config

    return _shape(net_from_config(net_config))


# ---------------------------------------------------------------------------------------------
# bgnet widen, deepen, average, merge

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
    from bgnet.nn.encode import ENCODINGS

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
    from bgnet.train.surgery import widen_checkpoint

    old, new = widen_checkpoint(a.checkpoint, a.out, contact=a.contact, layer=a.layer, race=a.race,
                                encoding=a.encoding, noise=a.noise, seed=a.seed)
    _report(a.checkpoint, a.out, old, new)
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
    from bgnet.train.surgery import deepen_checkpoint

    old, new = deepen_checkpoint(a.checkpoint, a.out, after=a.after, width=a.width,
                                 activation=a.activation, noise=a.noise, seed=a.seed, which=a.net)
    _report(a.checkpoint, a.out, old, new)
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
    from bgnet.train.surgery import average_checkpoints

    games = average_checkpoints(a.inputs, a.out, a.last)
    print(f"averaged {len(games)} checkpoint(s), {games[0]:,} to {games[-1]:,} games -> {a.out}")
    print(f"the rest is the newest one's; its optimizer state and metrics are dropped (they "
          f"belong to its own weights): a run resumed from {a.out} starts a fresh optimizer")
    return 0


def _shares_arg(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0.0 < v < float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"shares are positive numbers separated by commas, one "
                                         f"per checkpoint (say 0.65,0.35); got {text!r}")
    return values


def merge_main(argv: list[str]) -> int:
    """``bgnet merge CKPT CKPT... --out OUT [--shares A,B,...]``."""
    p = ArgumentParser(
        prog="bgnet merge",
        description="Merge nets trained apart (same depth and activations) into one wider net "
                    "whose logits are the weighted mean of theirs: an ensemble that exports, "
                    "plays and trains as one net, at the cost of its width. Measure it against "
                    "its members with bgnet eval before trusting it.",
        examples=("bgnet merge runs/a/checkpoints/latest.pt runs/b/checkpoints/latest.pt --out ab.pt",
                  "bgnet merge a.pt b.pt --shares 0.65,0.35 --out ab.pt && bgnet export ab.pt --out ab.onnx"))
    p.add_argument("inputs", nargs="+", metavar="CKPT", help="two or more checkpoints (.pt)")
    p.add_argument("--out", type=output_file_arg, required=True,
                   help="the checkpoint to write, in an existing folder")
    p.add_argument("--shares", type=_shares_arg, default=None, metavar="A,B,...",
                   help="the weight of each net's logits, scaled to sum to 1 (default: equal)")
    a = p.parse_args(argv)
    if len(a.inputs) < 2:
        raise BadArgument("bgnet merge needs two or more checkpoints")
    from bgnet.train.surgery import merge_checkpoints

    nets, merged, shares = merge_checkpoints(a.inputs, a.out, a.shares)
    for path, net, share in zip(a.inputs, nets, shares):
        print(f"{path}: {_shape(net)}, share {share:.3f}")
    print(f"-> {a.out}: {_shape(merged)}")
    print(f"the rest is {a.inputs[0]}'s, its optimizer state and metrics dropped: a run resumed "
          f"from {a.out} starts a fresh optimizer")
    return 0


def _report(src: str, out: str, old, new) -> None:
    """What widen or deepen made of the net, and that the optimizer state is gone."""
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
