"""Results of games played with the doubling cube (:mod:`bgnet.measure.cube_play`): whole
matches (:class:`MatchPlayResult`) and money games (:class:`MoneyCubeResult`).

Every figure is from bot A's side (player 0, the left column of a ``.mat`` file). The games
themselves are kept as a table, one row per game in the order played, with the columns of
:data:`COLUMNS`; the summaries, JSON and ``.mat`` files are made from that table and from the
games' records. Cubeless money games without records have their own, lighter result,
:class:`bgnet.measure.match.MatchResult`.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bgnet.engine.game import Game, MatchRecord
from bgnet.formats.names import MAX_NAME, fit_player_name
from bgnet.measure.stats import counted, ppg_text

# Columns of the per-game table of the results (``rows``: one row per game; winner 0 is A, ``end``
# indexes ENDS, the doubles/takes/drops are counted by the player who made them).
COLUMNS = ("winner", "points", "result", "end", "cube", "crawford", "doubles_a", "doubles_b",
           "takes_a", "takes_b", "drops_a", "drops_b", "moves")
ENDS = ("bearoff", "drop", "resign")


def game_row(game: Game) -> tuple:
    """One finished game as a row of :data:`COLUMNS`."""
    counts = {k: [0, 0] for k in ("double", "take", "drop")}
    moves = 0
    for a in game.record.actions:
        if a.kind in counts:
            counts[a.kind][a.player] += 1
        moves += a.kind == "move"
    return (game.winner, game.points, game.result, ENDS.index(game.end), game.cube_value,
            int(game.crawford), *counts["double"], *counts["take"], *counts["drop"], moves)



@dataclass
class CubeStats:
    """Cube actions over all games, by player (A, B): doubles offered, doubles taken and dropped
    by that player (as the one answering), the cube's value at the end of each game (a dropped
    double leaves it where it was), and how often it was turned at least once."""

    doubles_a: int
    doubles_b: int
    takes_a: int
    takes_b: int
    drops_a: int
    drops_b: int
    mean_cube: float
    max_cube: int
    turned_rate: float

    @classmethod
    def from_rows(cls, rows: np.ndarray) -> CubeStats:
        c = {name: rows[:, i] for i, name in enumerate(COLUMNS)}
        total = lambda k: int(c[k].sum())  # noqa: E731
        return cls(total("doubles_a"), total("doubles_b"), total("takes_a"), total("takes_b"),
                   total("drops_a"), total("drops_b"), float(c["cube"].mean()),
                   int(c["cube"].max()), float((c["cube"] > 1).mean()))

    def line(self, a: str, b: str) -> str:
        return (f"  cube: doubles {self.doubles_a} / {self.doubles_b}, takes {self.takes_a} / "
                f"{self.takes_b}, drops {self.drops_a} / {self.drops_b} ({a} / {b}); cube at the "
                f"end {self.mean_cube:.2f} on average (max {self.max_cube}), turned in "
                f"{100 * self.turned_rate:.1f} % of games")


def game_rates(rows: np.ndarray) -> dict:
    """Per-game rates from A's side: gammons include backgammons; a dropped double is a single
    game lost at the cube's value."""
    c = {name: rows[:, i] for i, name in enumerate(COLUMNS)}
    a, b = c["winner"] == 0, c["winner"] == 1
    return {"gammon_rate_a": float((a & (c["result"] >= 2)).mean()),
            "backgammon_rate_a": float((a & (c["result"] == 3)).mean()),
            "gammon_rate_b": float((b & (c["result"] >= 2)).mean()),
            "backgammon_rate_b": float((b & (c["result"] == 3)).mean()),
            "drop_rate": float((c["end"] == ENDS.index("drop")).mean()),
            "mean_plies": float(c["moves"].mean())}


class _Saving:
    """JSON and text helpers shared by the two results."""

    # Both subclasses are dataclasses: declared so that the type checker lets fields() see them.
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict:
        """The summary as plain JSON-friendly values (no per-game arrays, no records)."""
        skip = ("rows", "records", "points", "winners")
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        d["cube"] = asdict(d["cube"])
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    def to_json(self, path: str | None = None, indent: int = 2) -> str:
        """The summary as JSON text; also written to ``path`` when one is given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path:
            Path(path).write_text(text + "\n")
        return text


@dataclass
class MatchPlayResult(_Saving):
    """Matches to ``length`` points between A and B, from A's side. ``win_rate_ci95`` is the
    95 % Wilson interval (low, high) of A's match win rate; per-game rates count all games of all
    matches."""

    bot_a: str
    bot_b: str
    length: int
    matches: int
    wins: int
    win_rate: float
    win_rate_ci95: tuple[float, float]
    games: int
    games_per_match: float
    crawford_games: int
    gammon_rate_a: float
    backgammon_rate_a: float
    gammon_rate_b: float
    backgammon_rate_b: float
    drop_rate: float
    mean_plies: float
    cube: CubeStats
    seconds: float
    matches_per_second: float
    games_per_second: float
    seed: int
    winners: np.ndarray = field(repr=False, compare=False)  # the winner (0 = A) of each match
    rows: np.ndarray = field(repr=False, compare=False)  # one row of COLUMNS per game, in order
    records: list | None = field(default=None, repr=False, compare=False)  # MatchRecords

    def summary(self) -> str:
        lo, hi = self.win_rate_ci95
        return "\n".join([
            f"{self.bot_a} vs {self.bot_b}: {counted(self.matches, 'match')} to "
            f"{counted(self.length, 'point')} "
            f"(seed {self.seed})",
            f"  {self.bot_a} wins {counted(self.wins, 'match')}: {100 * self.win_rate:.1f} % "
            f"(95 % interval {100 * lo:.1f} - {100 * hi:.1f} %)",
            f"  {counted(self.games, 'game')} ({self.games_per_match:.2f} a match, "
            f"{counted(self.crawford_games, 'Crawford game')}); gammons {100 * self.gammon_rate_a:.1f} % / "
            f"{100 * self.gammon_rate_b:.1f} %, backgammons {100 * self.backgammon_rate_a:.1f} % / "
            f"{100 * self.backgammon_rate_b:.1f} % of games ({self.bot_a} / {self.bot_b})",
            self.cube.line(self.bot_a, self.bot_b),
            f"  {self.matches_per_second:.2f} matches/s, {self.games_per_second:.1f} games/s "
            f"({self.seconds:.1f} s)",
        ])

    def save_mat(self, path) -> list[Path]:
        """Write the matches as ``.mat`` files: ``path`` itself for one match, else one file per
        match numbered from 1 next to it (``out.mat`` -> ``out-001.mat``, ...)."""
        return _save_records(self.records, path)


@dataclass
class MoneyCubeResult(_Saving):
    """Money games between A and B (with the cube unless ``cube`` is False), from A's side:
    points per game with its 95 % half-width (from the pair means with duplicate dice)."""

    bot_a: str
    bot_b: str
    games: int
    wins: int
    win_rate: float
    ppg: float
    ppg_ci95: float
    cube_play: bool
    jacoby: bool
    duplicate: bool
    histogram: dict[str, int]
    gammon_rate_a: float
    backgammon_rate_a: float
    gammon_rate_b: float
    backgammon_rate_b: float
    drop_rate: float
    mean_plies: float
    cube: CubeStats
    seconds: float
    games_per_second: float
    seed: int
    points: np.ndarray = field(repr=False, compare=False)  # A's points, game by game
    rows: np.ndarray = field(repr=False, compare=False)
    records: list | None = field(default=None, repr=False, compare=False)  # one MatchRecord

    def summary(self) -> str:
        rules = ("with the cube" + (", Jacoby rule" if self.jacoby else "")) if self.cube_play \
            else "cubeless"
        dice = "duplicate dice" if self.duplicate else "independent dice"
        lines = [
            f"{self.bot_a} vs {self.bot_b}: {counted(self.games, 'money game')} {rules} ({dice}, seed "
            f"{self.seed})",
            f"  {self.bot_a} points per game: "
            f"{ppg_text(self.ppg, self.ppg_ci95, self.games // 2 if self.duplicate else self.games)}",
            f"  wins {self.wins} ({100 * self.win_rate:.1f} %); gammons "
            f"{100 * self.gammon_rate_a:.1f} % / {100 * self.gammon_rate_b:.1f} %, backgammons "
            f"{100 * self.backgammon_rate_a:.1f} % / {100 * self.backgammon_rate_b:.1f} % "
            f"({self.bot_a} / {self.bot_b})",
            "  results: " + ", ".join(f"{k} {v}" for k, v in self.histogram.items()),
        ]
        if self.cube_play:
            lines.append(self.cube.line(self.bot_a, self.bot_b))
        lines.append(f"  {self.mean_plies:.1f} plies a game, {self.games_per_second:.1f} games/s "
                     f"({self.seconds:.1f} s)")
        return "\n".join(lines)

    def save_mat(self, path) -> list[Path]:
        """Write all the games as one money session (a "0 point match") to ``path``."""
        return _save_records(self.records, path)


def _save_records(records, path) -> list[Path]:
    from bgnet.formats.mat import save_each

    if records is None:
        raise ValueError("these games were played without keep_records=True: there is nothing to "
                         "save")
    return save_each(records, path)


def mat_names(name_a: str, name_b: str) -> tuple[str, str]:
    """Two bots' names as players' names (:func:`bgnet.formats.names.fit_player_name`: no ':',
    no control characters, not too long), different from each other.

    >>> mat_names("gnubg:0", "gnubg:0")
    ('gnubg-0 (A)', 'gnubg-0 (B)')
    """
    short = MAX_NAME - len(" (A)")  # room for the mark that tells two equal names apart
    clean = [fit_player_name(n, fallback, short) for n, fallback in ((name_a, "A"), (name_b, "B"))]
    if clean[0] == clean[1]:
        return f"{clean[0]} (A)", f"{clean[1]} (B)"
    return (fit_player_name(name_a, "A"), fit_player_name(name_b, "B"))


def money_session(records, names: tuple[str, str], jacoby: bool) -> MatchRecord:
    """Independent money games as one session: numbered in order, each with the running score
    before it, as a ``.mat`` file of a "0 point match" holds them."""
    score, games = [0, 0], []
    for i, r in enumerate(records, 1):
        games.append(replace(r, number=i, score=(score[0], score[1])))
        score[r.winner] += r.points
    return MatchRecord(0, names, jacoby, games)
