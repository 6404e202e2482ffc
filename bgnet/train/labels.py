"""Positions valued by a teacher's search, kept on disk in shards (``bgnet label``).

Training on the bot's own search starts here. A *teacher* (any bot spec: ``bgnet-deep``, a
checkpoint, ``runs/deep``) plays itself at 0-ply (or another bot, the *player*, plays itself, for
positions of other kinds: pubeval's games reach boards a strong bot's seldom do; the values are
still the teacher's); at each contact decision the close candidates of
its 0-ply move filter (the best ``keep`` within ``margin`` equity of the best, and the lone best
where ``singles``) are valued by the teacher's ``ply``-ply search and kept as samples: the
afterstate as a position with the opponent on roll, and its five probabilities for that side.

At ``ply`` 0 the values are the teacher's net itself: cheap (about 100,000 positions a second
for bgnet-deep), for a student of another shape that is to learn the teacher's net over many
positions and wide windows of candidates; at 1 or 2 they are its search, which the student is to
learn to play at 0-ply.

Labelling at 1-ply costs far more than fitting (a 1-ply value of bgnet-deep is about 250 positions a
second on one core), so the samples are written in shards of ``per_shard`` decisions each, every
shard its own games and dice (``seed`` and its index), and a stopped labelling resumes at the
first shard not yet written. The folder's ``labels.json`` names the teacher and the settings; a
folder is never filled by two teachers or two settings. Files are plain ``.npz`` arrays, read
without unpickling.

    >>> LabelSettings(teacher="bgnet-default", ply=1).describe()
    'bgnet-default at 1-ply, the best 5 candidates within 0.16'
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bgnet.bots.search import MARGIN
from bgnet.errors import BadArgument, BadInputFile
from bgnet.train.distill import Samples, candidate_samples, self_play_decisions

SETTINGS_FILE = "labels.json"


@dataclass(frozen=True)
class LabelSettings:
    """What a folder of labels holds: one line a field, as ``labels.json`` writes them."""
    teacher: str  # the bot spec that plays and values (its search at ``ply``)
    ply: int = 1  # depth of the values: 0 the net itself, 1 the mean over the opponent's 21 rolls of its best reply
    keep: int = 5  # candidates of a decision: the teacher's 0-ply best ``keep`` ...
    margin: float = MARGIN  # ... within ``margin`` equity of the best
    singles: bool = True  # a decision with one candidate gives that one sample too
    player: str = ""  # the bot whose games give the positions (a spec; empty: the teacher itself)
    explore: float = 0.0  # chance that a self-play move is a random legal one (wider positions)
    per_shard: int = 2048  # decisions drawn for one shard
    seed: int = 0  # shard ``k`` draws its games with seed ``seed * 1_000_003 + k``

    def describe(self) -> str:
        games = f", in {self.player}'s games" if self.player else ""
        return f"{self.teacher} at {self.ply}-ply, the best {self.keep} candidates within {self.margin:g}{games}"


def shard_path(folder: Path, k: int) -> Path:
    return folder / f"shard-{k:05d}.npz"


def read_settings(folder: str | Path) -> LabelSettings | None:
    """The settings a labels folder was made with, or None for a folder without any."""
    path = Path(folder) / SETTINGS_FILE
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
        return LabelSettings(**raw)
    except (ValueError, TypeError) as e:
        raise BadInputFile(f"{path}: not a labels settings file ({e})") from None


def claim_folder(folder: str | Path, settings: LabelSettings) -> Path:
    """Make ``folder`` hold ``settings``' labels; a folder made with other settings is refused."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    held = read_settings(folder)
    if held is None:
        tmp = folder / (SETTINGS_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(settings), indent=1) + "\n")
        os.replace(tmp, folder / SETTINGS_FILE)
    elif held != settings:
        raise BadArgument(f"{folder} holds labels of {held.describe()} (per_shard {held.per_shard}, "
                          f"seed {held.seed}); give another folder for {settings.describe()}")
    return folder


def missing_shards(folder: Path, shards: int) -> list[int]:
    return [k for k in range(shards) if not shard_path(folder, k).exists()]


_TEACHER = None  # a labelling process's bots, loaded once by _load_bots
_PLAYER = None


def _load_bots(settings: LabelSettings) -> None:
    global _TEACHER, _PLAYER
    from bgnet.bots.load import load_bot, load_teacher

    _TEACHER = load_teacher(settings.teacher)
    _PLAYER = load_bot(settings.player) if settings.player else _TEACHER


def _label_shard(job: tuple[LabelSettings, str, int]) -> int:
    """Draw, value and write shard ``k``; returns how many samples it holds."""
    s, folder, k = job
    rng = np.random.default_rng(s.seed * 1_000_003 + k)
    boards, dice = self_play_decisions(_PLAYER, s.per_shard, rng, explore=s.explore)
    samples = candidate_samples(_TEACHER, boards, dice, s.keep, s.margin, ply=s.ply, singles=s.singles)
    path = shard_path(Path(folder), k)
    tmp = path.with_name(path.stem + ".tmp.npz")  # written whole, then renamed: a kill leaves no half shard
    samples.save(tmp)
    os.replace(tmp, path)
    return len(samples)


def label(folder: str | Path, settings: LabelSettings, shards: int, workers: int = 1,
          progress: bool = True, stop: Callable[[], bool] | None = None,
          each: Callable[[int, int], None] | None = None) -> int:
    """Write shards ``0 .. shards-1`` of ``settings``' labels into ``folder``, skipping those
    already there; returns how many were written now. ``stop``, asked after each shard, ends the
    labelling early where it says so (the shards written stay); ``each(done, shards)`` is told
    after each shard how many of them are in the folder."""
    from tqdm import tqdm

    _load_bots(settings)  # here first: a spec that names no teacher or player is refused before any work
    folder = claim_folder(folder, settings)
    todo = missing_shards(folder, shards)
    bar = tqdm(total=shards, initial=shards - len(todo), unit="shard", disable=not progress,
               desc=f"labels of {settings.describe()}")
    jobs = [(settings, str(folder), k) for k in todo]
    results: Iterator[int]
    if workers == 1:
        results = map(_label_shard, jobs)
    else:
        pool = mp.get_context("spawn").Pool(workers, _load_bots, (settings,))
        results = pool.imap_unordered(_label_shard, jobs)
    written = 0
    try:
        for _ in results:
            bar.update(1)
            written += 1
            if each is not None:
                each(shards - len(todo) + written, shards)
            if stop is not None and stop():
                break
    finally:
        bar.close()
        if workers > 1:
            pool.terminate()
    return written


def load_labels(folder: str | Path, shards: int | None = None) -> Samples:
    """The samples of a labels folder's shards (the first ``shards`` of them, or every one),
    each shard's decisions kept apart from the others'."""
    folder = Path(folder)
    if read_settings(folder) is None:
        raise BadInputFile(f"{folder}: not a labels folder (no {SETTINGS_FILE}); make one with bgnet label")
    paths = sorted(folder.glob("shard-[0-9][0-9][0-9][0-9][0-9].npz"))
    if shards is not None:
        paths = paths[:shards]
    if not paths:
        raise BadInputFile(f"{folder}: no shard of labels yet")
    parts = []
    for p in paths:
        try:
            part = Samples.load(p)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise BadInputFile(f"{p}: not a shard of labels ({e})") from None
        if not _well_formed(part):
            raise BadInputFile(f"{p}: not a shard of labels (its arrays do not fit together, or a "
                               "value is not a probability)")
        parts.append(part)
    return Samples.concat(parts)


def _well_formed(s: Samples) -> bool:
    n = len(s.boards)
    return (s.boards.shape[1:] == (2, 25) and s.targets.shape == (n, 5) and s.decision.shape == (n,)
            and bool(np.isfinite(s.targets).all()) and bool(((s.targets >= 0) & (s.targets <= 1)).all())
            and bool((s.boards >= 0).all()) and bool((s.boards.sum(axis=2) <= 15).all()))


def load_folders(folders: list[str], log=print) -> Samples:
    """The samples of several labels folders together, each folder's size and teacher logged."""
    parts = []
    for folder in folders:
        parts.append(load_labels(folder))
        held = read_settings(folder)
        log(f"{len(parts[-1])} samples of {parts[-1].decisions} decisions from {folder} "
            f"({held.describe() if held else '?'})")
    return Samples.concat(parts)
