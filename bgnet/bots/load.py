"""The one loader: a bot from what a person names, a short spec or a file.

Specs understood by :func:`load_bot`:

* ``random`` or ``random:SEED``: a uniform random legal move;
* ``pubeval``: Tesauro's public evaluator (:mod:`bgnet.bots.pubeval`);
* ``gnubg:N``: GNU Backgammon's network at N-ply, N = 0..3 (``gnubg`` alone is 0-ply; needs
  ``bgnet[ref]``);
* ``bgnet-default`` or ``bgnet-deep``: a bot shipped with bgnet (:mod:`bgnet.resources`), with a
  search depth as ``bgnet-deep@1``;
* anything else is a path to a checkpoint or an exported bot, optionally with a search depth:
  ``PATH@PLY``; a training run's folder stands for its latest checkpoint.

A net bot's spec may end in a pruning option, ``,prune=NET`` (before or after the ``@PLY``): a
cheaper net ranks every move of each roll inside its deeper plies, and its own net values only
the best :data:`~bgnet.bots.search.PRUNE_KEEP` of them within
:data:`~bgnet.bots.search.PRUNE_MARGIN` of the best (:class:`bgnet.bots.search.Pruning`, as GNU
Backgammon prunes); ``NET`` is a shipped bot or a file (an exported bot or a checkpoint, no
depth), ``NET:K`` keeps K moves a roll, and ``prune=none`` values every move with the bot's own
net. ``bgnet-deep`` prunes with ``bgnet-default`` unless told otherwise (:data:`SHIPPED_PRUNING`:
its 1-ply and 2-ply 3.6 and 4.7 times faster, the error rate of the unpruned search; see
docs/RESULTS.md); other nets prune only when asked. The root's moves and the move filter's first
ranking are always the bot's own net's.

Files (:func:`load_net_bot`): a path ending in ``.onnx`` is an exported bot, run by
:class:`bgnet.bots.onnx_eval.OnnxEvaluator` (onnxruntime and numpy; torch is never imported);
any other path is a training checkpoint (:func:`bgnet.nn.checkpoint.load_net`, needs torch). Both
become a :class:`~bgnet.bots.net.NetBot` searching at 0, 1 or 2 ply. ``bgnet.load_bot`` is
:func:`load_bot`; without a spec it loads the bot shipped with bgnet (:func:`default_bot_path`).

Errors: a spec or depth that cannot be used raises :class:`bgnet.errors.BadArgument`; a path
that names no file :class:`~bgnet.bots.onnx_eval.BotFileMissing` (also a FileNotFoundError); a
file that cannot be read :class:`~bgnet.bots.onnx_eval.BotFileError` or
:class:`bgnet.nn.checkpoint.CheckpointError`, each naming the file.
"""
from __future__ import annotations

import filecmp
import os
from pathlib import Path

from bgnet.bots.base import Bot
from bgnet.bots.onnx_eval import BotFileMissing
from bgnet.errors import BadArgument, require
from bgnet.resources import DEFAULT_BOT, SHIPPED_BOTS, shipped_bot

DEFAULT_BOT_NAME = SHIPPED_BOTS[DEFAULT_BOT]
# The shipped bots that prune their deeper plies by default, and the shipped net they prune with.
SHIPPED_PRUNING = {"bgnet-deep": "bgnet-default"}
PRUNE_OPTION = ",prune="
BUILTIN_SPECS = ("random", "random:SEED", "pubeval", "gnubg:N (N = 0 to 3)", *SHIPPED_BOTS)


def default_bot_path() -> Path | None:
    """The file of the bot shipped with bgnet (``bgnet-default``), or None where it is missing."""
    return shipped_bot(DEFAULT_BOT)


def load_default_bot(ply: int | None = 0):
    """The bot shipped with bgnet (:func:`default_bot_path`) at ``ply``."""
    path = default_bot_path()
    if path is None:
        raise BotFileMissing(f"no default bot is installed ({DEFAULT_BOT_NAME}); pass the path of an "
                             "exported bot or a checkpoint")
    return load_net_bot(path, ply=ply)


def load_shipped_bot(name: str, ply: int | None = 0, prune: str | None = None):
    """The shipped bot ``name`` (``bgnet-default`` or ``bgnet-deep``) at ``ply``, pruning as
    ``prune`` says (:func:`load_net_bot`; None: as :data:`SHIPPED_PRUNING` says)."""
    path = shipped_bot(name)
    if path is None:
        raise BotFileMissing(f"the bot {name} is not in this installation of bgnet "
                             f"({SHIPPED_BOTS[name]}); pass the path of an exported bot or a checkpoint")
    return load_net_bot(path, ply=ply, name=name, prune=prune)


def load_net_bot(path: str | os.PathLike, ply: int | None = 0, device: str = "cpu",
                 name: str | None = None, threads: int | None = None, search=None,
                 prune: str | None = None):
    """A :class:`~bgnet.bots.net.NetBot` from an exported bot (``.onnx``) or a training
    checkpoint, searching at ``ply`` (0, 1 or 2; None: 0). ``device`` is where a checkpoint's
    net runs; ``threads`` onnxruntime's threads for an exported bot; ``name`` the bot's name
    (default: the exported bot's own, or the checkpoint's file name). Its ``meta`` says where the
    net came from (for an exported bot: the file's metadata, with its training summary, strength
    and cube settings). ``prune``: the net that prunes its deeper plies, ``NET`` or ``NET:K``
    (the module docstring; :func:`pruning_for`), or ``"none"``; None: a shipped bot's own
    (:data:`SHIPPED_PRUNING`, a shipped bot known by its file too), no pruning for others."""
    from bgnet.bots.net import NetBot, check_ply

    ply = check_ply(0 if ply is None else ply)
    path = os.fspath(path)
    if not os.path.exists(path):
        raise BotFileMissing(f"no such bot or checkpoint: {path!r}")
    own = _shipped_pruner(path)
    pruning = pruning_for(own if prune is None else prune, device)
    # A bot pruned otherwise than by default says so in its name.
    told = "" if prune is None or (own or "none") == prune.strip().lower() else PRUNE_OPTION + prune.strip()
    if path.endswith(".onnx"):
        from bgnet.bots.onnx_eval import OnnxEvaluator

        ev = OnnxEvaluator(path, threads)
        label = name or ev.metadata.get("name") or Path(path).stem
        return NetBot(ev, ply=ply, name=f"{label}{told}", search=search,
                      meta=dict(ev.metadata, path=path), pruning=pruning)
    require(("torch",), "train", f"a training checkpoint ({path}; export it as .onnx to play without torch)")
    from bgnet.nn.checkpoint import load_net

    net, data = load_net(path, device=device)
    meta = {"games": data.get("games", 0), "path": path, "metrics": data.get("metrics") or {}}
    return NetBot(net, ply=ply, device=device, name=(name or Path(path).name) + told,
                  search=search, meta=meta, pruning=pruning)


def _shipped_pruner(path: str) -> str | None:
    """The pruning net :data:`SHIPPED_PRUNING` gives the shipped bot whose file is ``path`` (or a
    copy of it)."""
    for bot, pruner in SHIPPED_PRUNING.items():
        own = shipped_bot(bot)
        if own is not None and os.path.isfile(path) and filecmp.cmp(own, path, shallow=False):
            return pruner  # (files of other sizes are told apart without reading them)
    return None


def pruning_for(prune: str | None, device: str = "cpu"):
    """The :class:`bgnet.bots.search.Pruning` a pruning option names: ``NET`` (a shipped bot, an
    exported bot or a checkpoint, without a depth) or ``NET:K`` (K moves a roll kept, 1 to 99);
    None for ``none`` or None. A net that cannot prune is a :class:`BadArgument`, a file that is
    not there a :class:`BotFileMissing`.

    >>> pruning_for("none") is None, pruning_for("bgnet-default:4").keep
    (True, 4)
    >>> pruning_for("bgnet-default@1")
    Traceback (most recent call last):
    bgnet.errors.BadArgument: a pruning net is valued at 0-ply: give it without a depth; got 'bgnet-default@1'
    """
    from bgnet.bots.search import PRUNE_KEEP, Pruning

    if prune is None or prune.strip().lower() == "none":
        return None
    text = prune.strip()
    if _without_net(text) or _without_net(text.rpartition(":")[0]):
        raise BadArgument(f"{text} cannot prune: a pruning net is a bgnet net (a shipped bot, an "
                          "exported bot or a checkpoint)")
    net, colon, keep_text = text.rpartition(":")
    keep = PRUNE_KEEP
    if colon and net and keep_text.isascii() and keep_text.isdigit() and len(keep_text) <= 2:
        keep = int(keep_text)
        if keep < 1:
            raise BadArgument(f"a pruning net keeps at least 1 move a roll; got {prune!r}")
    else:
        net = text
    if not net:
        raise BadArgument("prune= names a net (a shipped bot, an exported bot or a checkpoint) "
                          "or none; got nothing")
    if split_ply(net)[1] is not None:
        raise BadArgument(f"a pruning net is valued at 0-ply: give it without a depth; got {prune!r}")
    low = net.lower()
    if low in SHIPPED_BOTS and not os.path.exists(net):
        bot = load_shipped_bot(low, 0, prune="none")
    elif os.path.exists(net):
        bot = load_net_bot(net, 0, device=device, prune="none")
    else:
        raise BotFileMissing(f"no such pruning net: {net!r} (a shipped bot: "
                             f"{', '.join(SHIPPED_BOTS)}, or the path of an exported bot or a "
                             "checkpoint)")
    return Pruning(bot.evaluator, keep, name=low if low in SHIPPED_BOTS else net)


def _without_net(spec: str) -> bool:
    """Whether ``spec`` names a built-in bot that has no bgnet net (random, pubeval, gnubg)."""
    low = spec.strip().lower()
    return low in ("random", "pubeval", "gnubg") or low.startswith(("random:", "gnubg:"))


def split_pruning(spec: str) -> tuple[str, str | None]:
    """``SPEC,prune=NET`` -> (SPEC, NET); a spec without the option keeps ``None``.

    >>> split_pruning("bgnet-deep,prune=none"), split_pruning("bot.onnx")
    (('bgnet-deep', 'none'), ('bot.onnx', None))
    """
    head, option, net = spec.rpartition(PRUNE_OPTION)
    return (head, net) if option else (spec, None)


def load_bot(spec: str | os.PathLike | None = None, ply: int | None = None,
             device: str = "cpu") -> Bot:
    """Make the bot a spec names (see the module docstring for the forms): ``None`` is the bot
    shipped with bgnet, a path may be a :class:`os.PathLike`, and ``ply`` (when given) is the
    search depth, as :func:`with_ply` applies it; ``device`` is where a checkpoint's net runs.

    >>> load_bot("bgnet-deep", ply=1).name
    'bgnet-deep@1'
    """
    if spec is None:
        return load_default_bot(ply=ply)
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if ply is not None and isinstance(spec, str):
        spec = with_ply(spec, ply)
    if not isinstance(spec, str) or not spec.strip():
        raise BadArgument("a bot spec is a non-empty string such as 'pubeval', 'gnubg:0' or a "
                          "checkpoint path")
    s = spec.strip()
    low = s.lower()
    base, prune = split_pruning(split_ply(s)[0])
    if prune is not None and not base:
        raise BadArgument(f"prune= follows a net bot's spec, as bgnet-deep,prune=none; got {spec!r}")
    if prune is not None and _without_net(base):
        raise BadArgument(f"prune= applies to a net bot's search; {base} has no net to prune "
                          f"(got {spec!r})")
    if low == "random" or low.startswith("random:"):
        from bgnet.bots.simple import RandomBot

        seed = _parse_int(s.split(":", 1)[1], "the seed", spec) if ":" in s else None
        return RandomBot(seed)
    if low == "pubeval":
        from bgnet.bots.pubeval import PubevalBot

        return PubevalBot()
    if low == "gnubg" or low.startswith("gnubg:"):
        from bgnet.bots.gnubg_bots import GnubgBot

        gnubg_ply = _parse_int(s.split(":", 1)[1], "the ply", spec) if ":" in s else 0
        return GnubgBot(gnubg_ply)
    path, ply = split_ply(s)
    path, prune = split_pruning(path)
    if path.lower() in SHIPPED_BOTS and not os.path.exists(path):
        return load_shipped_bot(path.lower(), ply, prune)
    if not os.path.exists(path):
        raise BotFileMissing(f"no such checkpoint or bot: {path!r} (built-in opponents: "
                             f"{', '.join(BUILTIN_SPECS)})")
    return load_net_bot(path, ply=ply, device=device, prune=prune)


def _parse_int(text: str, what: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise BadArgument(f"{what} in bot spec {spec!r} must be a whole number; got {text!r}") from None


def split_ply(spec: str) -> tuple[str, int | None]:
    """``PATH@PLY`` -> (PATH, PLY); a path without a numeric ``@`` suffix keeps ``None``. A
    pruning option stays with the path, before the depth or after it.

    >>> split_ply("runs/a/latest.pt@1"), split_ply("bgnet-deep"), split_ply("me@home/bot.onnx")
    (('runs/a/latest.pt', 1), ('bgnet-deep', None), ('me@home/bot.onnx', None))
    >>> split_ply("bgnet-deep@2,prune=none"), split_ply("bgnet-deep,prune=none@2")
    (('bgnet-deep,prune=none', 2), ('bgnet-deep,prune=none', 2))
    """
    path, at, ply = spec.rpartition("@")
    digits = ply.strip()
    if at and path and digits.isascii() and digits.isdigit() and len(digits) <= 3:  # not '١', not 10^5000
        return path, int(digits)
    head, prune = split_pruning(spec)
    if prune is not None:  # SPEC@PLY,prune=NET: the depth before the option
        path, depth = split_ply(head)
        return path + PRUNE_OPTION + prune, depth
    return spec, None


def with_ply(spec: str | None, ply: int | None) -> str:
    """The spec a person gave (None: the shipped default bot) with a ``--ply`` applied: the one
    place where a command line's bot and depth become a spec for :func:`load_bot`. A depth for a
    bot without one, or below 0, is a :class:`BadArgument`.

    >>> with_ply(None, None), with_ply("bgnet-deep@2", 1), with_ply("gnubg", 2)
    ('bgnet-default', 'bgnet-deep@1', 'gnubg:2')
    """
    spec = DEFAULT_BOT if spec is None else spec.strip()
    if ply is None:
        return spec
    if ply < 0:
        raise BadArgument(f"--ply must be 0 or more; got {ply}")
    low = spec.lower()
    if low == "gnubg" or low.startswith("gnubg:"):
        return f"gnubg:{ply}"
    if low == "pubeval" or low == "random" or low.startswith("random:"):
        raise BadArgument(f"{spec} has no search depth; --ply applies to net bots and gnubg")
    return f"{split_ply(spec)[0]}@{ply}"


def load_teacher(spec: str):
    """A bgnet net bot to learn from (a shipped bot, a checkpoint, an exported bot or a run's
    folder; a depth in the spec is ignored): the bots bgnet trains on are its own. GNU
    Backgammon is the referee and pubeval a yardstick, never a teacher: those specs are refused.

    >>> load_teacher("gnubg:0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    bgnet.errors.BadArgument: gnubg:0 cannot be a teacher: targets come only from bgnet's own nets ...
    """
    if _without_net(spec):
        raise BadArgument(f"{spec} cannot be a teacher: targets come only from bgnet's own nets "
                          "(a shipped bot, a checkpoint, an exported bot or a run's folder)")
    path, _ = split_ply(spec.strip())
    return load_bot(path, ply=0)
