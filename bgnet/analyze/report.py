"""The analysis of a match as one self-contained HTML page: no scripts, no files beside it.

The page holds the per-player summary table, a graph of player 0's equity (money: cubeful
equity in points at the cube in play; match: match winning chances) before each of its cube
decisions over the whole match, and every decision marked doubtful or worse with a small board
diagram. Pictures are inline SVG. Boards are drawn from the view of the player who decides: its
home board bottom right, its checkers dark, moving from its 24-point (top right) round to its
1-point (bottom right); the opponent's checkers light.
"""
from __future__ import annotations

import html

import numpy as np

from bgnet.analyze.analysis import Analysis, rating

_W, _H = 300, 220  # board diagram size in pixels
_PT = 20  # width of a point
_BAR = 20


def _x_of(point: int) -> float:
    """Left edge of my point ``point`` (1..24) in the diagram."""
    col = 12 - point if point <= 12 else point - 13  # 0..11 from the left
    return 10 + col * _PT + (_BAR if col >= 6 else 0)


def board_svg(board, caption: str = "") -> str:
    """An SVG diagram of ``board`` (bgnet layout, the side on roll in ``board[1]`` drawn dark)."""
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
    """Player 0's equity or MWC before each of its cube decisions, over the whole match, with the
    games separated by vertical lines."""
    pts = a.graph
    match = bool(a.match_length)
    name = html.escape(a.players[0].name)
    what = "match winning chances" if match else "cubeful equity (points)"
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" role="img" aria-label="{name}: {what}">'),
             f'<rect width="{width}" height="{height}" fill="#fff" stroke="#999"/>']
    if not pts:
        parts.append('<text x="20" y="40" font-size="12">no cube decision to plot</text></svg>')
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
    parts.append(f'<text x="{left}" y="12" font-size="11">{name}: {what} before each cube decision '
                 f'(games numbered below)</text></svg>')
    return "".join(parts)


def _summary_table(a: Analysis) -> str:
    p0, p1 = a.players

    def row(label, f):
        cells = "".join(f"<td>{html.escape(str(f(p)))}</td>" for p in (p0, p1))
        return f"<tr><th>{html.escape(label)}</th>{cells}</tr>"

    def marks(m):
        return f"{m['doubtful']} / {m['error']} / {m['blunder']}"
    rows = [
        row("Unforced moves", lambda p: p.unforced_moves),
        row("Checker play: doubtful / error / blunder", lambda p: marks(p.checker_marks)),
        row("Checker-play error total (EMG)", lambda p: f"{p.checker_error:.3f}"),
        row("Checker-play error rate (mEMG per move)", lambda p: f"{p.checker_rate:.1f}"),
        row("Checker-play rating", lambda p: rating(p.checker_rate)),
        row("Cube decisions (close or actual)", lambda p: p.close_cube_decisions),
        row("Doubles / takes / drops", lambda p: f"{p.doubles} / {p.takes} / {p.drops}"),
        row("Cube: doubtful / error / blunder", lambda p: marks(p.cube_marks)),
        row("Cube error total (EMG)", lambda p: f"{p.cube_error:.3f}"),
        row("Cube error rate (mEMG per decision)", lambda p: f"{p.cube_rate:.1f}"),
        row("Overall error rate (mEMG per decision)", lambda p: f"{p.overall_rate:.1f}"),
        row("Overall rating", lambda p: rating(p.overall_rate)),
        row("Luck total (EMG)", lambda p: f"{p.luck:+.3f}"),
        row("Luck rate (mEMG per roll)", lambda p: f"{p.luck_rate:+.1f}"),
    ]
    head = f"<tr><th></th><th>{html.escape(p0.name)}</th><th>{html.escape(p1.name)}</th></tr>"
    return "<table class='summary'>" + head + "".join(rows) + "</table>"


def _errors(a: Analysis) -> str:
    from bgnet.engine import board_from_position_id

    items = []
    for d in a.decisions:
        if not d.mark:
            continue
        who = html.escape(a.players[d.player].name)
        dice = f" rolls {d.dice[0]}{d.dice[1]}," if d.dice else ""
        board = board_from_position_id(d.position_id)
        items.append(
            "<div class='err'>" + board_svg(board, f"{d.position_id}:{d.match_id}")
            + f"<p><b>{html.escape(d.mark)}</b> ({d.error:.3f}) game {d.game}: {who}{dice} "
            + f"played <code>{html.escape(d.played)}</code>, best <code>{html.escape(d.best)}</code><br>"
            + f"equity {d.played_equity:+.3f} against {d.best_equity:+.3f}<br>"
            + f"<code>{html.escape(d.position_id)}:{html.escape(d.match_id)}</code></p></div>")
    if not items:
        return "<p>No decision marked doubtful or worse.</p>"
    return "".join(items)


def render_html(a: Analysis) -> str:
    """The page as text."""
    kind = f"{a.match_length} point match" if a.match_length else "money session"
    title = f"Analysis of {a.file}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table.summary {{ border-collapse: collapse; }}
table.summary th, table.summary td {{ border: 1px solid #ccc; padding: 3px 10px; text-align: right; }}
table.summary th:first-child {{ text-align: left; font-weight: normal; }}
div.err {{ display: inline-block; vertical-align: top; width: 310px; margin: 6px; }}
div.err p {{ font-size: 12px; margin: 3px 0; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(kind)}, judged by {html.escape(a.bot)} at {a.ply}-ply. Errors in EMG (equity per unit
of the cube); marks at GNU Backgammon's thresholds: doubtful 0.04, error 0.08, blunder 0.16.</p>
<h2>Summary</h2>
{_summary_table(a)}
<h2>The match</h2>
{graph_svg(a)}
<h2>Errors</h2>
{_errors(a)}
</body></html>
"""


def write_html(a: Analysis, path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(a))
