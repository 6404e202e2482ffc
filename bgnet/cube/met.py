"""Match equity tables (METs): reading GNU Backgammon's XML files, the table bgnet ships, extension.

A table gives the match winning chances (MWC) at the start of a game from the score alone, in
"away" terms (points still needed):

* ``pre[i, j]``: MWC of a player ``i + 1`` away against an opponent ``j + 1`` away, in games before
  the Crawford game; row ``0`` (1-away) is the start of the Crawford game.
* ``post[n]``: MWC of the trailer ``n + 1`` away against a leader who is 1-away, in games after the
  Crawford game (``post[0]`` is 1-away against 1-away, 0.5).

GNU Backgammon stores tables as XML (``<pre-crawford-table type="explicit">`` with ``<row>`` of
``<me>``, and a ``<post-crawford-table>`` row). :func:`load_met` reads such a file, bgnet's JSON
form of one, or the name of a table bgnet ships: ``"kazaross-xg2"`` (the default; GNU
Backgammon's default table since 2013) converted from ``data/met/Kazaross-XG2.xml`` of the
``gnubg`` package, its copyright notice kept in ``bgnet/cube/data/kazaross-xg2.json``.

Tables are extended past their length the way GNU Backgammon does it: pre-Crawford by a normal
approximation of the score difference (D. Montgomery's method), post-Crawford by the recursion of
a trailer who doubles at once (gammon rate 0.25, free drops at 2- and 4-away). Like GNU
Backgammon, an n-point table's post-Crawford value at n-away (a score no n-point match reaches) is
computed that way too rather than read.

>>> met = load_met()
>>> met.name
'Kazaross XG2 25 point MET'
>>> round(met.mwc(1, 2), 5), round(met.mwc(2, 1, post_crawford=True), 5)
(0.67736, 0.48803)
>>> met.extended(40).length
40
"""
from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from bgnet.engine.state import check_match_length

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_MET = "kazaross-xg2"
SHIPPED = {"kazaross-xg2": DATA_DIR / "kazaross-xg2.json"}

# Extension parameters GNU Backgammon uses (matchequity.c): per-score standard deviations of the
# points won per game, and the post-Crawford trailer's gammon rate and free-drop values.
_GAME_STDDEV = (1.24, 1.27, 1.47, 1.50, 1.60, 1.61, 1.66, 1.68, 1.70, 1.72)
_GAME_STDDEV_FAR = 1.77
_POST_GAMMON_RATE = 0.25
_FREE_DROP_2, _FREE_DROP_4 = 0.015, 0.004


@dataclass(frozen=True, eq=False)
class MatchEquityTable:
    """Pre- and post-Crawford match winning chances by score (see the module docstring).

    >>> pre = np.array([[0.5, 0.7, 0.75], [0.3, 0.5, 0.6], [0.25, 0.4, 0.5]])
    >>> t = MatchEquityTable("toy", pre, np.array([0.5, 0.49]))
    >>> t.mwc(2, 1), t.mwc(2, 1, post_crawford=True), t.mwc(0, 3), t.mwc(3, 0)
    (0.3, 0.49, 1.0, 0.0)
    >>> round(t.mwc(3, 1, post_crawford=True), 4)  # no 3-point match reaches it: computed
    0.3125
    """

    name: str
    pre: np.ndarray
    post: np.ndarray
    description: str = ""
    source: str = ""
    notice: str = field(default="", repr=False)

    def __post_init__(self):
        pre = np.asarray(self.pre, dtype=np.float64)
        post = np.asarray(self.post, dtype=np.float64)
        if pre.ndim != 2 or pre.shape[0] != pre.shape[1] or pre.shape[0] < 1:
            raise ValueError(f"a pre-Crawford table must be square; got shape {pre.shape}")
        if post.ndim != 1 or len(post) < pre.shape[0] - 1:
            raise ValueError(
                f"the post-Crawford row needs at least {pre.shape[0] - 1} entries for a "
                f"{pre.shape[0]}-point table; got shape {post.shape}")
        for what, arr in (("pre-Crawford", pre), ("post-Crawford", post)):
            if not np.all(np.isfinite(arr)) or arr.min() < 0.0 or arr.max() > 1.0:
                raise ValueError(f"{what} match winning chances must lie in [0, 1]")
        n = pre.shape[0]
        # No n-point match reaches n-away post-Crawford, so, as GNU Backgammon does, that entry is
        # not taken from the file but computed like the extension.
        object.__setattr__(self, "pre", pre)
        object.__setattr__(self, "post", _extend_post(post[:n - 1], n))

    @property
    def length(self) -> int:
        """The longest match the table covers."""
        return self.pre.shape[0]

    def mwc(self, my_away: int, opp_away: int, post_crawford: bool = False) -> float:
        """MWC of a player ``my_away`` from winning against one ``opp_away`` away, at the start of a
        game; ``post_crawford`` says a score with a 1-away player is after the Crawford game.

        A player 0 (or fewer) away has won. Scores past the table's length raise ValueError: use
        :meth:`extended`.
        """
        if my_away <= 0:
            return 1.0
        if opp_away <= 0:
            return 0.0
        if max(my_away, opp_away) > self.length:
            raise ValueError(
                f"score {my_away}-away, {opp_away}-away is beyond this {self.length}-point table; "
                "use MatchEquityTable.extended()")
        if post_crawford and (my_away == 1 or opp_away == 1):
            if my_away == 1:
                return 1.0 - float(self.post[opp_away - 1])
            return float(self.post[my_away - 1])
        return float(self.pre[my_away - 1, opp_away - 1])

    def extended(self, length: int) -> MatchEquityTable:
        """The table extended (or unchanged) to cover matches of ``length`` points, at most
        :data:`~bgnet.engine.state.MAX_MATCH_LENGTH` (the work grows with the square of the
        length; a longer one is a ValueError). Each extension is kept for the next call."""
        if length <= self.length:
            return self
        return _extended(self, check_match_length(length))

    def to_json(self) -> str:
        """The table as bgnet's JSON (what :func:`load_met` reads back), one table row a line."""
        head = {"name": self.name, "description": self.description, "source": self.source,
                "notice": self.notice, "length": self.length}
        row = lambda r: "[" + ", ".join(f"{float(v):.6g}" for v in r) + "]"  # noqa: E731
        lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
        lines.append(' "pre_crawford": [\n  ' + ",\n  ".join(row(r) for r in self.pre) + "\n ],")
        lines.append(f' "post_crawford": {row(self.post)}')
        return "{\n" + "\n".join(lines) + "\n}"


@lru_cache(maxsize=64)
def _extended(table: MatchEquityTable, length: int) -> MatchEquityTable:
    return MatchEquityTable(table.name, _extend_pre(table.pre, length),
                            _extend_post(table.post, length - 1), table.description,
                            table.source, table.notice)


def _stddev(away: int) -> float:
    return _GAME_STDDEV[away - 1] if away <= len(_GAME_STDDEV) else _GAME_STDDEV_FAR


def _extend_pre(pre: np.ndarray, length: int) -> np.ndarray:
    """Fill scores past the table with a normal approximation: the trailer's chance is that of
    the points won over the remaining games exceeding the score difference (capped at 6 sigma)."""
    n = pre.shape[0]
    out = np.empty((length, length))
    out[:n, :n] = pre
    for i in range(n, length):  # the player i + 1 away, behind or level
        for j in range(i + 1):
            a, b = i + 1, j + 1
            sigma = math.hypot(_stddev(a), _stddev(b)) * math.sqrt((a + b) / 2.0)
            d = float(a - b)
            out[i, j] = _normal_area(d, 6.0 * sigma, sigma) if 6.0 * sigma > d else 0.0
            out[j, i] = 1.0 - out[i, j]
    return out


def _normal_area(lo: float, hi: float, sigma: float) -> float:
    """Probability that a centred normal variable with deviation ``sigma`` lies in [lo, hi]."""
    cdf = lambda x: 0.5 * (1.0 + math.erf(x / (sigma * math.sqrt(2.0))))  # noqa: E731
    return cdf(hi) - cdf(lo)


def _extend_post(post: np.ndarray, length: int) -> np.ndarray:
    """Post-Crawford MWC of the trailer past the given entries: the trailer doubles at once, so a
    game is worth 2 points (4 with a gammon) to either side; free drops lower 2- and 4-away."""
    out = list(np.asarray(post, dtype=np.float64))
    for i in range(len(out), length):
        back4 = out[i - 4] if i >= 4 else 1.0
        back2 = out[i - 2] if i >= 2 else 1.0
        v = 0.5 * (_POST_GAMMON_RATE * back4 + (1.0 - _POST_GAMMON_RATE) * back2)
        v -= _FREE_DROP_2 if i == 1 else _FREE_DROP_4 if i == 3 else 0.0
        out.append(v)
    return np.asarray(out)


def met_from_xml(path: str | Path) -> MatchEquityTable:
    """Read a GNU Backgammon match equity table file (explicit tables only)."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        raise ValueError(f"cannot read match equity table {path}: {e}") from None
    if root.tag != "met":
        raise ValueError(f"{path} is not a GNU Backgammon MET file (root element <{root.tag}>)")
    pre_el = root.find("pre-crawford-table")
    post_els = root.findall("post-crawford-table")
    if pre_el is None or not post_els:
        raise ValueError(f"{path} lacks a pre-Crawford or post-Crawford table")
    pre = _explicit_rows(pre_el, path)
    posts = [_explicit_rows(el, path) for el in post_els]
    rows = [r[0] for r in posts]
    if len(rows) > 1 and not all(np.allclose(rows[0], r) for r in rows[1:]):
        raise ValueError(f"{path}: separate post-Crawford tables per player are not supported")
    if any(len(r) != len(pre) for r in pre):
        raise ValueError(f"{path}: the pre-Crawford table is not square")
    info = root.find("info")
    text = lambda tag: (info.findtext(tag) or "").strip() if info is not None else ""  # noqa: E731
    return MatchEquityTable(text("name") or path.stem, np.array(pre), np.array(rows[0]),
                            text("description"), f"GNU Backgammon MET file {path.name}",
                            _leading_comment(path))


def _leading_comment(path: Path) -> str:
    """The first XML comment of the file (GNU Backgammon puts the copyright notice there)."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    start, end = raw.find("<!--"), raw.find("-->")
    return raw[start + 4:end].strip() if 0 <= start < end else ""


def _me_value(me: ET.Element, el: ET.Element, path: Path) -> float:
    if me.text is None:
        raise ValueError(f"{path}: {el.tag} has an empty <me> element; each one holds a number")
    return float(me.text)


def _explicit_rows(el: ET.Element, path: Path) -> list[list[float]]:
    kind = el.get("type", "explicit")
    if kind != "explicit":
        raise ValueError(f"{path}: {el.tag} of type '{kind}' (a formula) is not supported; "
                         "only explicit tables are")
    rows = [[_me_value(me, el, path) for me in row.findall("me")] for row in el.findall("row")]
    if not rows or not rows[0]:
        raise ValueError(f"{path}: {el.tag} has no <row> of <me> values")
    return rows


def met_from_json(path: str | Path) -> MatchEquityTable:
    """Read a table written by :meth:`MatchEquityTable.to_json`."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return MatchEquityTable(d["name"], np.array(d["pre_crawford"]),
                                np.array(d["post_crawford"]), d.get("description", ""),
                                d.get("source", ""), d.get("notice", ""))
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"cannot read match equity table {path}: {e!r}") from None


@lru_cache(maxsize=16)
def _load_cached(key: str) -> MatchEquityTable:
    if key.lower() in SHIPPED:
        return met_from_json(SHIPPED[key.lower()])
    path = Path(key)
    if not path.exists():
        raise ValueError(f"unknown match equity table '{key}': give a path to a GNU Backgammon "
                         f"XML or bgnet JSON file, or one of {sorted(SHIPPED)}")
    return met_from_xml(path) if path.suffix.lower() == ".xml" else met_from_json(path)


def load_met(name_or_path: str | Path | MatchEquityTable | None = None) -> MatchEquityTable:
    """A match equity table by shipped name (default ``"kazaross-xg2"``), file path, or as given.

    >>> load_met("kazaross-xg2") is load_met()
    True
    """
    if isinstance(name_or_path, MatchEquityTable):
        return name_or_path
    return _load_cached(str(name_or_path if name_or_path is not None else DEFAULT_MET))
