"""The analysis of a match as one self-contained HTML page: no scripts, no files beside it.

The page holds the per-player summary table (:func:`bgnet.analyze.analysis.summary_rows`), a
graph of player 0's equity (money: cubeful equity in points at the cube in play; match: match
winning chances) before every roll of the match, each game to its end, a card for every
decision marked doubtful or worse, and each game move by move. A card shows the position as a
small board diagram, the dice, the cube and its owner, the score, which checkers are the
player's, and the options with their equities. Several files analysed together (a
:class:`~bgnet.analyze.analysis.Report`) give one page: the totals over all of them first, then
each file.

Pictures are inline SVG. Boards are drawn from the view of the player on roll: its home board
bottom right, its checkers dark, moving from its 24-point (top right) round to its 1-point
(bottom right); the opponent's checkers light. For a take or a drop that is the doubler: the
player who answers has the light checkers, and the card says so.
"""
from __future__ import annotations

import html

import numpy as np

from bgnet.analyze.analysis import Analysis, Decision, Report, summary_rows
from bgnet.engine.state import CENTERED

_W, _H = 300, 220  # board diagram size in pixels
_PT = 20  # width of a point
_BAR = 20


def _x_of(point: int) -> float:
    """Left edge of my point ``point`` (1..24) in the diagram."""
    col = 12 - point if point <= 12 else point - 13  # 0..11 from the left
    return 10 + col * _PT + (_BAR if col >= 6 else 0)


def board_svg(board, caption: str = "", dice=None, cube: tuple[int, str] | None = None) -> str:
    """An SVG diagram of ``board`` (bgnet layout, the side on roll in ``board[1]`` drawn dark),
    with the ``dice`` rolled (in the right half) and the ``cube`` as (value, where): where is
    ``"bottom"`` (the dark side owns it), ``"top"`` (the light side) or ``"centre"``."""
    b = np.asarray(board, np.int64)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
              f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{html.escape(caption)}">'),
             f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="#2f5d3a"/>',
             f'<rect x="10" y="10" width="{12 * _PT + _BAR}" height="180" fill="#e8dcb5"/>',
             f'<rect x="{10 + 6 * _PT}" y="10" width="{_BAR}" height="180" fill="#8a6d3b"/>']
    for p in range(1, 25):
        x = _x_of(p)
        top = p > 12
        y0, y1 = (10, 85) if top else (190, 115)
        fill = "#b5523b" if p % 2 else "#d9c38a"
        parts.append(f'<polygon points="{x},{y0} {x + _PT},{y0} {x + _PT / 2},{y1}" fill="{fill}"/>')
        label_y = 8 if top else 202
        parts.append(f'<text x="{x + _PT / 2}" y="{label_y}" font-size="7" text-anchor="middle" '
                     f'fill="#fff">{p}</text>')
    for p in range(1, 25):
        mine, theirs = int(b[1, p - 1]), int(b[0, 24 - p])
        if mine or theirs:
            parts.append(_stack(_x_of(p) + _PT / 2, p > 12, mine or theirs, "#222" if mine else "#f5f5f5"))
    bar_x = 10 + 6 * _PT + _BAR / 2
    if b[1, 24]:
        parts.append(_stack(bar_x, True, int(b[1, 24]), "#222", start=60))
    if b[0, 24]:
        parts.append(_stack(bar_x, False, int(b[0, 24]), "#f5f5f5", start=60))
    off_me, off_opp = 15 - int(b[1].sum()), 15 - int(b[0].sum())
    parts.append(f'<text x="{_W - 22}" y="180" font-size="9" fill="#fff" text-anchor="middle">off {off_me}</text>')
    parts.append(f'<text x="{_W - 22}" y="25" font-size="9" fill="#fff" text-anchor="middle">off {off_opp}</text>')
    if dice:
        for k, d in enumerate(dice):
            x = 10 + 9 * _PT + _BAR - 22 + k * 26
            parts.append(f'<rect class="die" x="{x}" y="89" width="22" height="22" rx="3" fill="#fff" '
                         f'stroke="#222"/><text x="{x + 11}" y="105" font-size="14" text-anchor="middle" '
                         f'font-weight="bold">{int(d)}</text>')
    if cube is not None:
        value, where = cube
        y = {"top": 12, "bottom": 170, "centre": 90}.get(where, 90)
        shown = 64 if where == "centre" and value == 1 else value
        parts.append(f'<rect class="cube" x="{10 + 6 * _PT + 1}" y="{y}" width="{_BAR - 2}" height="18" '
                     f'rx="2" fill="#fff" stroke="#222"/><text x="{10 + 6 * _PT + _BAR / 2}" y="{y + 13}" '
                     f'font-size="11" text-anchor="middle" font-weight="bold">{shown}</text>')
    if caption:
        parts.append(f'<text x="10" y="215" font-size="9" fill="#fff">{html.escape(caption)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _stack(cx: float, top: bool, count: int, colour: str, start: float = 0) -> str:
    """Up to five checkers on a point, with the count written on the last when there are more."""
    r = _PT / 2 - 1
    out = []
    for k in range(min(count, 5)):
        cy = (10 + start + r + 2 * r * k) if top else (190 - start - r - 2 * r * k)
        out.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{colour}" stroke="#555" stroke-width="0.8"/>')
        if k == 4 and count > 5:
            text = "#fff" if colour == "#222" else "#000"
            out.append(f'<text x="{cx}" y="{cy + 3}" font-size="8" text-anchor="middle" fill="{text}">{count}</text>')
    return "".join(out)


def graph_svg(a: Analysis, width: int = 900, height: int = 260) -> str:
    """Player 0's equity or MWC before every roll (and, in a match, after every game), over the
    whole match, with the games separated by vertical lines: every game is on it, the Crawford
    game and those without a cube decision included."""
    pts = a.graph
    match = bool(a.match_length)
    name = html.escape(a.players[0].name)
    what = "match winning chances" if match else "cubeful equity (points)"
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" role="img" aria-label="{name}: {what}">'),
             f'<rect width="{width}" height="{height}" fill="#fff" stroke="#999"/>']
    if not pts:
        parts.append('<text x="20" y="40" font-size="12">no roll to plot</text></svg>')
        return "".join(parts)
    vals = np.array([v for _, _, v in pts], np.float64)
    lo, hi = (0.0, 1.0) if match else (min(-1.0, float(vals.min())), max(1.0, float(vals.max())))
    left, right, top, bottom = 50, width - 10, 15, height - 25

    def sx(i):
        return left + (right - left) * i / max(1, len(pts) - 1)

    def sy(v):
        return bottom - (bottom - top) * (v - lo) / (hi - lo)

    mid = 0.5 if match else 0.0
    parts.append(f'<line x1="{left}" y1="{sy(mid):.1f}" x2="{right}" y2="{sy(mid):.1f}" stroke="#bbb"/>')
    for v in (lo, mid, hi):
        label = f"{100 * v:.0f} %" if match else f"{v:+.1f}"
        parts.append(f'<text x="{left - 5}" y="{sy(v) + 4:.1f}" font-size="10" text-anchor="end">{label}</text>')
    prev_game = None
    for k, (_, game, _) in enumerate(pts):
        if game != prev_game:
            parts.append(f'<line x1="{sx(k):.1f}" y1="{top}" x2="{sx(k):.1f}" y2="{bottom}" stroke="#eee"/>'
                         f'<text x="{sx(k) + 2:.1f}" y="{height - 8}" font-size="9">{game}</text>')
            prev_game = game
    path = " ".join(f"{sx(k):.1f},{sy(v):.1f}" for k, v in enumerate(vals))
    parts.append(f'<polyline points="{path}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>')
    when = "before each roll and after each game" if match else "before each roll"
    parts.append(f'<text x="{left}" y="12" font-size="11">{name}: {what} {when} '
                 f'(games numbered below)</text></svg>')
    return "".join(parts)


def _summary_table(players: list, match: bool, adjusted: list) -> str:
    head = "<tr><th></th>" + "".join(f"<th>{html.escape(p.name)}</th>" for p in players) + "</tr>"
    rows = "".join("<tr><th>" + html.escape(label.strip()) + "</th>"
                   + "".join(f"<td>{html.escape(x)}</td>" for x in xs) + "</tr>"
                   for label, xs in summary_rows(players, match, adjusted))
    return "<table class='summary'>" + head + rows + "</table>"


def _score_text(a: Analysis, d: Decision) -> str:
    names = [p.name for p in a.players]
    if not a.match_length:
        return "money game" + (" (Jacoby rule)" if a.jacoby else "")
    return (f"score {html.escape(names[0])} {d.score[0]}, {html.escape(names[1])} {d.score[1]} "
            f"(to {a.match_length})")


def _cube_text(a: Analysis, d: Decision) -> str:
    if d.cube_owner == CENTERED:
        return f"cube {d.cube}, centred"
    return f"cube {d.cube}, owned by {html.escape(a.players[d.cube_owner].name)}"


def _who(a: Analysis, d: Decision) -> str:
    name = html.escape(a.players[d.player].name)
    if d.kind in ("take", "drop"):
        doubler = html.escape(a.players[1 - d.player].name)
        return f"{name} (light checkers) is doubled by {doubler} (dark, on roll)"
    if d.kind == "move":
        return f"{name} (dark checkers) rolls {d.dice[0]}-{d.dice[1]}" if d.dice else f"{name} (dark checkers)"
    if d.kind in ("accept", "reject"):
        return f"{name} (dark checkers) answers a resignation"
    return f"{name} (dark checkers, on roll)"


def _options(d: Decision) -> str:
    """The candidates with their equities, best first; the one played marked."""
    if not d.candidates:
        return ""
    best = d.candidates[0][1]
    played = d.played
    if played == "double":  # the double is worth the opponent's proper answer: the lower of the two
        doubles = [c for c in d.candidates if str(c[0]).startswith("double,")]
        played = min(doubles, key=lambda c: c[1])[0] if doubles else played
    rows = []
    for k, (text, eq) in enumerate(d.candidates, 1):
        cls = " class='played'" if text == played else ""
        diff = "" if k == 1 else f"{eq - best:+.3f}"
        rows.append(f"<tr{cls}><td>{k}.</td><td>{html.escape(str(text))}</td><td>{eq:+.3f}</td>"
                    f"<td>{diff}</td></tr>")
    return ("<table class='options'><tr><th></th><th>option</th><th>equity</th><th>diff</th></tr>"
            + "".join(rows) + "</table>")


def _card(a: Analysis, d: Decision) -> str:
    from bgnet.engine import board_from_position_id

    board = board_from_position_id(d.position_id)
    on_roll = 1 - d.player if d.kind in ("take", "drop") else d.player  # the dark side
    where = "centre" if d.cube_owner == CENTERED else "bottom" if d.cube_owner == on_roll else "top"
    mwc = "" if d.mwc is None else f"; MWC {100 * d.mwc:.1f} %"
    err_mwc = "" if d.error_mwc is None else f", {100 * d.error_mwc:.2f} % MWC"
    kind = f" ({html.escape(d.error_kind)})" if d.error_kind else ""
    return ("<div class='err'>" + board_svg(board, f"{d.position_id}:{d.match_id}", d.dice, (d.cube, where))
            + f"<p><b>{html.escape(d.mark)}</b>{kind}: {d.error:.3f} EMG{err_mwc}. Game {d.game}, "
            + f"decision {d.number + 1}.<br>{_who(a, d)}<br>"
            + f"{_cube_text(a, d)}; {_score_text(a, d)}{mwc}<br>"
            + f"played <code>{html.escape(d.played)}</code>, best <code>{html.escape(d.best)}</code></p>"
            + _options(d)
            + f"<p><code>{html.escape(d.position_id)}:{html.escape(d.match_id)}</code></p></div>")


def _errors(a: Analysis) -> str:
    items = [_card(a, d) for d in a.decisions if d.mark]
    if not items:
        return "<p>No decision marked doubtful or worse.</p>"
    return "".join(items)


def _games(a: Analysis) -> str:
    """Each game move by move, in a section that opens on a click."""
    out = []
    names = [p.name for p in a.players]
    for g in a.games:
        end = ""
        if g.winner is not None:
            how = {"drop": " (a drop)", "resign": " (a resignation)"}.get(g.end, "")
            end = f": {html.escape(names[g.winner])} wins {g.points} point{'s' if g.points != 1 else ''}{how}"
        rows = []
        for k, r in enumerate(g.rows, 1):
            d = a.decisions[r["decision"]] if r["decision"] is not None else None
            dice = f"{r['dice'][0]}{r['dice'][1]}" if r["dice"] else ""
            judged = ""
            if d is not None and d.error > 0:
                judged = f"{d.error:.3f} {html.escape(d.mark)}; best {html.escape(d.best)}"
            cls = f" class='{d.mark}'" if d is not None and d.mark else ""
            rows.append(f"<tr{cls}><td>{k}</td><td>{html.escape(names[r['player']])}</td><td>{dice}</td>"
                        f"<td>{html.escape(r['text'])}</td><td>{judged}</td></tr>")
        score = "" if not a.match_length else f", score {g.score[0]}-{g.score[1]}"
        out.append(f"<details><summary>Game {g.number}{score}{end}</summary><table class='record'>"
                   "<tr><th>#</th><th>player</th><th>dice</th><th>played</th><th>error; best</th></tr>"
                   + "".join(rows) + "</table></details>")
    return "".join(out)


def _analysis_body(a: Analysis, level: int = 2) -> str:
    h = f"h{level}"
    return (f"<{h}>Summary</{h}>{_summary_table(a.players, bool(a.match_length), a.luck_adjusted())}"
            f"<{h}>The match</{h}>{graph_svg(a)}"
            f"<{h}>Errors</{h}>{_errors(a)}"
            f"<{h}>Move by move</{h}>{_games(a)}")


_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table.summary { border-collapse: collapse; }
table.summary th, table.summary td { border: 1px solid #ccc; padding: 3px 10px; text-align: right; }
table.summary th:first-child { text-align: left; font-weight: normal; }
div.err { display: inline-block; vertical-align: top; width: 320px; margin: 6px; }
div.err p { font-size: 12px; margin: 3px 0; }
table.options, table.record { border-collapse: collapse; font-size: 12px; }
table.options td, table.options th, table.record td, table.record th { padding: 1px 6px; text-align: left; }
table.options tr.played { background: #fde8c8; }
table.record tr.doubtful { background: #fff6d8; }
table.record tr.error { background: #fde3c8; }
table.record tr.blunder { background: #f9c9c0; }
details { margin: 4px 0; }
"""


def render_html(a) -> str:
    """The page as text, of an :class:`Analysis` or a :class:`Report`."""
    if isinstance(a, Report):
        return _render_report(a)
    kind = a.describe()
    title = f"Analysis of {a.file}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(kind)}, judged by {html.escape(a.bot)} at {a.ply}-ply. {_UNITS}</p>
{_analysis_body(a)}
</body></html>
"""


_UNITS = ("Errors in EMG (equity per unit of the cube); marks at GNU Backgammon's thresholds: "
          "doubtful 0.04, error 0.08, blunder 0.16.")


def _render_report(r: Report) -> str:
    first = r.analyses[0]
    title = f"Analysis of {len(r.analyses)} files"
    players = r.players
    adjusted = r.luck_adjusted()
    parts = [f"<section><h2>{html.escape(a.file)}</h2><p>{html.escape(a.describe())}</p>"
             for a in r.analyses]
    sections = "".join(head + _analysis_body(a, 3) + "</section>" for head, a in zip(parts, r.analyses))
    files = "".join(f"<li>{html.escape(a.file)}</li>" for a in r.analyses)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>Judged by {html.escape(first.bot)} at {first.ply}-ply. {_UNITS}</p>
<ul>{files}</ul>
<h2>Totals over all files</h2>
{_summary_table(players, r.match, [adjusted[p.name] for p in players])}
{sections}
</body></html>
"""


def write_html(a, path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(a))
