"""Reshaping trained nets, checkpoint to checkpoint (``bgnet widen``, ``bgnet deepen``,
``bgnet average`` and ``bgnet merge``, whose command lines are in :mod:`bgnet.cli.nets`), and
the way back from an exported bot to a checkpoint (``bgnet checkpoint``).

Widen and deepen read a checkpoint, build the larger net that computes the same function
(:mod:`bgnet.nn.widen`, :mod:`bgnet.nn.deepen`), and write a checkpoint that a run resumes with
``resume=OUT``: everything of the original (games played, config, generator states, metrics)
except the net, and without the optimizer state, whose shapes no longer fit the net (the resumed
run starts a fresh optimizer).

:func:`average_checkpoints` reads several checkpoints of one run and writes the mean of their
weights (:mod:`bgnet.nn.average`), with the rest of the newest one's contents.
:func:`merge_checkpoints` reads nets trained apart and writes the one net that is their
weighted mean (:mod:`bgnet.nn.merge`), with the rest of the first one's contents.
:func:`checkpoint_of_bot` writes an exported bot's net (rebuilt in torch) as a checkpoint to
train on.
"""
from __future__ import annotations

from pathlib import Path

from bgnet.errors import BadArgument, BadInputFile


def widen_checkpoint(checkpoint: str, out: str, *, contact: int | None = None, layer: int = 1,
                     race: int | None = None, encoding: str | None = None, noise: float = 1e-3,
                     seed: int = 0):
    """Write to ``out`` the checkpoint's net grown to the input ``encoding`` (None: as it is),
    then with hidden layer ``layer`` of its (contact) net widened to ``contact`` units and a
    split net's race net's first layer to ``race`` (None: unchanged); ``(old net, new net)``."""
    from bgnet.nn.checkpoint import load_net
    from bgnet.nn.model import SplitValueNet, ValueNet
    from bgnet.nn.widen import grow_inputs, widen, widen_split

    net, data = load_net(checkpoint)
    wide: ValueNet | SplitValueNet = net
    if encoding is not None:
        wide = grow_inputs(net, encoding)
    if contact is None:
        if race is not None or layer != 1:
            raise BadArgument("--layer and --race go with --contact N")
    elif isinstance(wide, SplitValueNet):
        wide = widen_split(wide, contact, race, noise, seed, layer)
    elif race is not None:
        raise BadArgument(f"--race applies to a split net; {checkpoint} holds one net "
                          "(give --contact only)")
    else:
        wide = widen(wide, contact, noise, seed, layer)
    _write(out, wide, data)
    return net, wide


def deepen_checkpoint(checkpoint: str, out: str, *, after: int | None = None,
                      width: int | None = None, activation: str = "relu", noise: float = 0.0,
                      seed: int = 0, which: str = "both"):
    """Write to ``out`` the checkpoint's net with a hidden layer inserted after layer ``after``
    (None: the last) of ``which`` net of a split net (:data:`bgnet.nn.deepen.SUBNETS`);
    ``(old net, new net)``."""
    from bgnet.nn.checkpoint import load_net
    from bgnet.nn.deepen import deepen, deepen_split
    from bgnet.nn.model import SplitValueNet, ValueNet

    net, data = load_net(checkpoint)
    deep: ValueNet | SplitValueNet
    if isinstance(net, SplitValueNet):
        deep = deepen_split(net, which, after=after, width=width, activation=activation,
                            noise=noise, seed=seed)
    elif which != "both":
        raise BadArgument(f"--net applies to a split net; {checkpoint} holds one net (leave "
                          "--net off)")
    else:
        deep = deepen(net, after=after, width=width, activation=activation, noise=noise, seed=seed)
    _write(out, deep, data)
    return net, deep


def average_checkpoints(inputs: list[str], out: str, last: int | None = None) -> list[int]:
    """Write to ``out`` the mean of the weights of the checkpoints ``inputs`` name (a folder: its
    ``games_*.pt``; ``last``: only the N with the most games played), with the rest of the
    newest one's contents but its optimizer state and metrics; the games of those averaged, in
    order."""
    from bgnet.nn.average import average
    from bgnet.nn.checkpoint import load_net, save_checkpoint

    files = checkpoint_files(inputs)
    if any(Path(f).resolve() == Path(out).resolve() for f in files):
        raise BadArgument(f"--out {out} is one of the checkpoints to average; write the "
                          "average to a new file so that no checkpoint is lost")
    found = sorted(((*load_net(path), path) for path in files), key=lambda f: f[1].get("games", 0))
    if last is not None:
        found = found[-last:]
    mean = average([net for net, _, _ in found], [path for _, _, path in found])
    newest = found[-1][1]
    payload = dict(newest, net_config=mean.config(), net_state=mean.state_dict(),
                   optimizer_state=None, metrics={})
    save_checkpoint(out, payload)
    return [data.get("games", 0) for _, data, _ in found]


def merge_checkpoints(inputs: list[str], out: str, shares: list[float] | None = None):
    """Write to ``out`` the merge of the nets of the checkpoints ``inputs`` (:func:`bgnet.nn.merge.merge`,
    ``shares`` one per checkpoint, None: equal), with the rest of the first one's contents (its
    games, config and dice) but what belongs to that net alone: no optimizer state, metrics,
    learning curve (``history``) or unlearned self-play (``play``); ``compute`` is the members'
    together, and ``merged_from`` says where each part came from. Returns ``(nets, merged net,
    shares as used)``."""
    from bgnet.nn.checkpoint import load_net, save_checkpoint
    from bgnet.nn.merge import merge, normalized_shares

    if len({str(Path(f).resolve()) for f in inputs}) != len(inputs):
        raise BadArgument("a checkpoint is named twice: a merge is of nets trained apart")
    if any(Path(f).resolve() == Path(out).resolve() for f in inputs):
        raise BadArgument(f"--out {out} is one of the checkpoints to merge; write the merge to a "
                          "new file so that no checkpoint is lost")
    used = normalized_shares(shares, len(inputs))  # before any loading: a miscount is refused at once
    found = [load_net(path) for path in inputs]
    merged = merge([net for net, _ in found], used, inputs)
    # Each part's path as given, so that two runs' latest.pt stay apart.
    parts = [{"source": str(path), "games": int(data.get("games", 0)), "share": share}
             for path, (_, data), share in zip(inputs, found, used)]
    payload = dict(found[0][1], net_config=merged.config(), net_state=merged.state_dict(),
                   optimizer_state=None, metrics={}, history=[], play={},
                   compute=_summed_compute([data for _, data in found]), merged_from=parts)
    save_checkpoint(out, payload)
    return [net for net, _ in found], merged, used


def _summed_compute(payloads: list[dict]) -> dict:
    """The compute (CPU and wall seconds) the checkpoints' runs spent, added up."""
    total: dict = {}
    for data in payloads:
        for key, seconds in (data.get("compute") or {}).items():
            total[key] = total.get(key, 0.0) + float(seconds)
    return total


def net_of_bot(bot: str):
    """The torch net of an exported bot (an ``.onnx`` file, or the name of a bot shipped with
    bgnet) and the checkpoint data that goes with it: the games it was trained for and its
    metrics, from the file's metadata, and no optimizer state (a run resumed from it starts a
    fresh optimizer). The net is rebuilt and checked by
    :func:`bgnet.bots.torch_eval.net_of_exported_bot`."""
    from bgnet.bots.torch_eval import net_of_exported_bot
    from bgnet.resources import SHIPPED_BOTS, shipped_bot

    path = str(bot)
    if path.lower() in SHIPPED_BOTS and not Path(path).exists():
        found = shipped_bot(path.lower())
        if found is None:
            raise BadInputFile(f"{path} is not installed ({SHIPPED_BOTS[path.lower()]} is missing)")
        path = str(found)
    net, meta = net_of_exported_bot(path)
    return net, {"net_config": net.config(), "games": int(meta.get("games") or 0), "config": {},
                 "metrics": meta.get("metrics") or {}}


def checkpoint_of_bot(bot: str, out: str, games: int | None = None) -> tuple:
    """Write to ``out`` a checkpoint of an exported bot's net (:func:`net_of_bot`), trained for
    ``games`` (None: as the bot's metadata says); ``(net, checkpoint data)``."""
    from bgnet.nn.checkpoint import save_checkpoint

    if Path(out).resolve() == Path(bot).resolve():
        raise BadArgument(f"{out} is the bot itself; write the checkpoint to a new file (.pt)")
    net, data = net_of_bot(bot)
    if games is not None:
        data["games"] = games
    save_checkpoint(out, dict(data, net_state=net.state_dict()))
    return net, data


def checkpoint_files(inputs: list[str]) -> list[str]:
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


def _write(out: str, new, data: dict) -> None:
    from bgnet.nn.checkpoint import save_checkpoint

    payload = dict(data, net_config=new.config(), net_state=new.state_dict(), optimizer_state=None)
    save_checkpoint(out, payload)
