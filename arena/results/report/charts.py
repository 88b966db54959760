"""The report's charts as inline SVG, drawn from standings and records.

Three charts (and a fourth for an SPRT: its LLR against its bounds, pair by pair): each bot's TrueSkill mu with a band of one sigma either side
against the games it has played; each bot's results (wins, draws, losses,
and the losses that were forfeits) as shares of its games; and the
distribution of each bot's time per move on a logarithmic axis.  Pure
functions returning SVG text; no script is needed to read them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from arena.base.text import safe
from arena.game.records import GameRecord
from arena.results.game_index import move_times_of
from arena.results.sprt import SprtConfig, SprtFold
from arena.results.standings import BotStanding, Standings

__all__ = ["HIGHLIGHTED", "bot_colors", "llr_chart", "llr_history", "rating_chart", "results_chart", "move_time_chart", "move_times",
           "quantile"]

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#393b79", "#bcbd22", "#17becf")
#: The colour of the bots past the palette's.
_OTHER = "#c8c8c8"
_WIDTH = 760
#: Most points drawn per bot in the rating chart: enough for the eye, small for 10,000 games.
_MAX_POINTS = 240
#: The bots the rating chart draws in colour, from the top of the ranking;
#: past as many lines and bands no one can be followed.
HIGHLIGHTED = len(_PALETTE)
#: The height of a bot's row in the results and time charts, up to
#: :data:`_ROOMY_ROWS` bots, and past them (a field of 100 stays one screen long per 30 bots).
_ROW, _ROW_PACKED, _ROOMY_ROWS = 30, 18, 24


def bot_colors(names: Sequence[str]) -> dict[str, str]:
    """A colour per bot, in ranking order: ten colours, then grey (the
    rating chart draws the bots past the tenth in grey)."""
    return {name: _PALETTE[i] if i < len(_PALETTE) else _OTHER for i, name in enumerate(names)}


def _esc(text: object) -> str:
    # Names come from records and tournament.json, which anyone may have edited.
    return safe(str(text), "html", limit=None)


def _svg(height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" '
        f'role="img" aria-label="{_esc(title)}">' + "".join(body) + "</svg>"
    )


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``low..high``."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * step:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) >= 1 or value == 0 else f"{value:.2g}"


def _thin(points: Sequence[tuple[int, float, float]]) -> list[tuple[int, float, float]]:
    if len(points) <= _MAX_POINTS:
        return list(points)
    step = len(points) / _MAX_POINTS
    kept = [points[int(i * step)] for i in range(_MAX_POINTS)]
    return kept + [points[-1]]


def rating_chart(
    history: Mapping[str, Sequence[tuple[int, float, float]]], colors: Mapping[str, str], start: tuple[float, float]
) -> str:
    """mu (line) and mu ± sigma (band) of each bot against its games played.
    ``start`` is the (mu, sigma) every bot begins with, drawn at 0 games.
    Past :data:`HIGHLIGHTED` bots (``colors`` is in ranking order), only the
    first :data:`HIGHLIGHTED` are drawn in colour with their band and
    legend; the others are thin grey lines (class ``other``), drawn first,
    under them, for the report's search box to pick out."""
    names = list(colors)
    shown = names if len(names) <= HIGHLIGHTED else names[:HIGHLIGHTED]
    others = names[len(shown):]
    legend_rows = math.ceil(len(shown) / 4) + (1 if others else 0)
    height = 290 + 18 * legend_rows
    left, right, top, bottom = 48, _WIDTH - 12, 12, 250
    series = {name: [(0, *start), *_thin(history.get(name, ()))] for name in colors}
    most = max((pts[-1][0] for pts in series.values()), default=1) or 1
    low = min(mu - sigma for pts in series.values() for _, mu, sigma in pts)
    high = max(mu + sigma for pts in series.values() for _, mu, sigma in pts)

    def x(games: float) -> float:
        return left + (right - left) * games / most

    def y(value: float) -> float:
        return bottom - (bottom - top) * (value - low) / ((high - low) or 1)

    body = _axes(left, right, top, bottom, [(y(t), _fmt(t)) for t in _nice_ticks(low, high)],
                 [(x(t), _fmt(t)) for t in _nice_ticks(0, most) if t <= most], "games played", "mu ± sigma")
    for name in others:
        pts = series[name]
        line = " ".join(f"{x(g):.1f},{y(mu):.1f}" for g, mu, _ in pts)
        g, mu, s = pts[-1]
        body.append(
            f'<g class="series other" data-bot="{_esc(name)}"><title>{_esc(name)}: mu {mu:.2f} ± {s:.2f} after {g} games</title>'
            f'<polyline points="{line}" fill="none" stroke="{_OTHER}" stroke-width="1"/></g>'
        )
    for name in reversed(shown):  # the first bot on top
        color = colors[name]
        pts = series[name]
        band = [f"{x(g):.1f},{y(mu + s):.1f}" for g, mu, s in pts] + [f"{x(g):.1f},{y(mu - s):.1f}" for g, mu, s in reversed(pts)]
        line = " ".join(f"{x(g):.1f},{y(mu):.1f}" for g, mu, _ in pts)
        g, mu, s = pts[-1]
        body.append(
            f'<g class="series" data-bot="{_esc(name)}"><title>{_esc(name)}: mu {mu:.2f} ± {s:.2f} after {g} games</title>'
            f'<polygon points="{" ".join(band)}" fill="{color}" fill-opacity="0.13" stroke="none"/>'
            f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="2"/></g>'
        )
    body += _legend({name: colors[name] for name in shown}, 300)
    if others:
        row = 300 + 18 * math.ceil(len(shown) / 4)
        body.append(f'<g class="legend"><rect x="48" y="{row - 10}" width="12" height="12" fill="{_OTHER}"/>'
                    f'<text x="64" y="{row}">the other {len(others)} bots (grey; find one with the box above the chart)</text></g>')
    return _svg(height, "rating (mu ± sigma) against games played", body)


def results_chart(bots: Sequence[BotStanding], colors: Mapping[str, str]) -> str:
    """Each bot's wins, draws, losses and forfeited losses as shares of its games."""
    row, left, right = _row_height(len(bots)), 150, _WIDTH - 250
    height = 34 + row * len(bots)
    body = [
        f'<g class="legend"><rect x="{left}" y="4" width="12" height="12" fill="#4caf50"/><text x="{left + 16}" y="14">wins</text>'
        f'<rect x="{left + 70}" y="4" width="12" height="12" fill="#b0b0b0"/><text x="{left + 86}" y="14">draws</text>'
        f'<rect x="{left + 145}" y="4" width="12" height="12" fill="#ef9a9a"/><text x="{left + 161}" y="14">losses</text>'
        f'<rect x="{left + 220}" y="4" width="12" height="12" fill="#b71c1c"/><text x="{left + 236}" y="14">forfeits</text></g>'
    ]
    for i, bot in enumerate(bots):
        top = 26 + i * row
        bar = _bar_height(row)
        base = top + bar / 2 + 4  # a text's baseline, level with the bar's middle
        forfeits = sum(bot.forfeits.values())
        parts = [("wins", bot.wins, "#4caf50"), ("draws", bot.draws, "#b0b0b0"),
                 ("losses", bot.losses - forfeits, "#ef9a9a"), ("forfeits", forfeits, "#b71c1c")]
        body.append(f'<g class="bar" data-bot="{_esc(bot.name)}">')
        body.append(f'<rect x="{left - 14}" y="{base - 9:.1f}" width="9" height="9" fill="{colors.get(bot.name, "#888")}"/>')
        body.append(f'<text x="{left - 18}" y="{base:.1f}" text-anchor="end">{_esc(_short(bot.name))}</text>')
        x = float(left)
        for label, count, fill in parts:
            if not count:
                continue
            width = (right - left) * count / bot.games
            body.append(
                f'<rect x="{x:.1f}" y="{top}" width="{width:.1f}" height="{bar}" fill="{fill}">'
                f"<title>{_esc(bot.name)}: {count} {label} of {bot.games} games</title></rect>"
            )
            if width > 22 and bar >= 20:
                body.append(f'<text class="in" x="{x + width / 2:.1f}" y="{base:.1f}" text-anchor="middle">{count}</text>')
            x += width
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(bot.forfeits.items()))
        summary = f"{bot.wins}-{bot.draws}-{bot.losses} of {bot.games}" + (f"; forfeits: {reasons}" if reasons else "")
        body.append(f'<text x="{right + 8}" y="{base:.1f}">{_esc(summary)}</text></g>')
    return _svg(height, "results and forfeits by bot", body)


def move_times(records: Sequence[GameRecord]) -> dict[str, list[float]]:
    """Each bot's time charged per move, in milliseconds, sorted."""
    times: dict[str, list[float]] = {}
    for record in records:
        names = [record.players[color] for color in record.players]
        # The opening suite's moves were not the bots': the first bot move's ply follows them.
        for ply, ms in enumerate(move_times_of(record), start=len(record.opening_moves)):
            times.setdefault(names[ply % 2], []).append(ms)
    for values in times.values():
        values.sort()
    return times


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated linearly (numpy's default)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def move_time_chart(standings: Standings, times: Mapping[str, Sequence[float]], colors: Mapping[str, str]) -> str:
    """A box per bot on a log axis: the box spans the 25th to 75th percentile,
    the whiskers the 5th to 95th, a bar marks the median and a dot the slowest move."""
    names = [bot.name for bot in standings.bots]
    row, left, right = _row_height(len(names)), 150, _WIDTH - 250
    height = 48 + row * len(names)
    every = [v for name in names for v in times.get(name, ())]
    floor = 0.01
    low = max(floor, min(every, default=1.0))
    high = max(every, default=10.0)
    lo_exp, hi_exp = math.floor(math.log10(low)), math.ceil(math.log10(max(high, low * 10)))

    def x(ms: float) -> float:
        return left + (right - left) * (math.log10(max(ms, floor)) - lo_exp) / (hi_exp - lo_exp)

    body = [f'<line class="axis" x1="{left}" y1="{height - 28}" x2="{right}" y2="{height - 28}"/>']
    for exp in range(lo_exp, hi_exp + 1):
        tick = x(10**exp)
        body.append(f'<line class="grid" x1="{tick:.1f}" y1="8" x2="{tick:.1f}" y2="{height - 28}"/>')
        body.append(f'<text x="{tick:.1f}" y="{height - 14}" text-anchor="middle">{_fmt(10 ** exp)}</text>')
    body.append(f'<text x="{right}" y="{height - 2}" text-anchor="end">milliseconds per move (log scale)</text>')
    for i, name in enumerate(names):
        top = 10 + i * row
        bar = _bar_height(row)
        mid = top + bar / 2
        values = times.get(name, ())
        body.append(f'<g class="box" data-bot="{_esc(name)}">')
        body.append(f'<text x="{left - 8}" y="{mid + 4:.1f}" text-anchor="end">{_esc(_short(name))}</text>')
        if not values:
            body.append(f'<text x="{left + 4}" y="{mid + 4:.1f}">no moves</text></g>')
            continue
        q = {p: quantile(values, p / 100) for p in (5, 25, 50, 75, 95)}
        color = colors.get(name, "#888")
        body.append(
            f"<title>{_esc(name)}: {len(values)} moves; median {q[50]:.2f} ms, 5%-95% {q[5]:.2f}-{q[95]:.2f} ms, "
            f"slowest {values[-1]:.1f} ms</title>"
            f'<line x1="{x(q[5]):.1f}" y1="{mid:.1f}" x2="{x(q[95]):.1f}" y2="{mid:.1f}" stroke="{color}" stroke-width="2"/>'
            f'<rect x="{x(q[25]):.1f}" y="{top:.1f}" width="{max(1.0, x(q[75]) - x(q[25])):.1f}" height="{bar}" '
            f'fill="{color}" fill-opacity="0.35" stroke="{color}"/>'
            f'<line x1="{x(q[50]):.1f}" y1="{top}" x2="{x(q[50]):.1f}" y2="{top + bar}" stroke="#111" stroke-width="2"/>'
            f'<circle cx="{x(values[-1]):.1f}" cy="{mid:.1f}" r="3" fill="{color}"/>'
            f'<text x="{right + 8}" y="{mid + 4:.1f}">median {q[50]:.2g} ms, 95% under {q[95]:.2g} ms</text></g>'
        )
    return _svg(height, "time per move by bot", body)


def _axes(
    left: float, right: float, top: float, bottom: float,
    yticks: list[tuple[float, str]], xticks: list[tuple[float, str]], xlabel: str, ylabel: str,
) -> list[str]:
    body = [f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
            f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>']
    for pos, label in yticks:
        body.append(f'<line class="grid" x1="{left}" y1="{pos:.1f}" x2="{right}" y2="{pos:.1f}"/>')
        body.append(f'<text x="{left - 6}" y="{pos + 4:.1f}" text-anchor="end">{label}</text>')
    for pos, label in xticks:
        body.append(f'<text x="{pos:.1f}" y="{bottom + 16}" text-anchor="middle">{label}</text>')
    body.append(f'<text x="{right}" y="{bottom + 30}" text-anchor="end">{xlabel}</text>')
    body.append(f'<text x="{left + 4}" y="{top + 10}">{ylabel}</text>')
    return body


def _legend(colors: Mapping[str, str], y: float) -> list[str]:
    body = []
    for i, (name, color) in enumerate(colors.items()):
        x, row = 48 + (i % 4) * 178, y + (i // 4) * 18
        body.append(f'<rect x="{x}" y="{row - 10}" width="12" height="12" fill="{color}"/>'
                    f'<text x="{x + 16}" y="{row}">{_esc(_short(name))}</text>')
    return ['<g class="legend">', *body, "</g>"]


def _row_height(bots: int) -> int:
    return _ROW if bots <= _ROOMY_ROWS else _ROW_PACKED


def _bar_height(row: int) -> int:
    """A bar's height in a row: a gap of 8 between roomy rows, 4 between packed ones."""
    return row - 8 if row == _ROW else row - 4


def _short(name: str, limit: int = 20) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def llr_history(config: SprtConfig, pairs: Sequence[tuple[float, float]]) -> list[float]:
    """The SPRT's LLR after each complete pair, up to the pair that decides it."""
    fold = SprtFold(config)
    out = []
    for pair in pairs:
        fold.add(pair)
        out.append(fold.llr)
        if fold.decided:
            break
    return out


def llr_chart(llrs: Sequence[float], lower: float, upper: float) -> str:
    """The SPRT's LLR against the game pairs played, between its two bounds (the lines where it stops)."""
    left, right, top, bottom = 48, _WIDTH - 12, 12, 250
    most = max(len(llrs), 1)
    low, high = min([lower, *llrs]) * 1.1, max([upper, *llrs]) * 1.1

    def x(pairs: float) -> float:
        return left + (right - left) * pairs / most

    def y(value: float) -> float:
        return bottom - (bottom - top) * (value - low) / ((high - low) or 1)

    body = _axes(left, right, top, bottom, [(y(t), _fmt(t)) for t in _nice_ticks(low, high)],
                 [(x(t), _fmt(t)) for t in _nice_ticks(0, most) if t <= most], "game pairs", "LLR")
    for bound, name, color in ((upper, "H1 accepted", "#2ca02c"), (lower, "H0 accepted", "#d62728")):
        body.append(f'<g class="bound"><line x1="{left}" y1="{y(bound):.1f}" x2="{right}" y2="{y(bound):.1f}" '
                    f'stroke="{color}" stroke-dasharray="6 4"/><text x="{right - 4}" y="{y(bound) - 4:.1f}" '
                    f'text-anchor="end">{name} ({bound:.2f})</text></g>')
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate([0.0, *llrs]))
    body.append(f'<polyline class="llr" data-pairs="{len(llrs)}" points="{points}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    return _svg(280, f"SPRT log-likelihood ratio after {len(llrs)} game pairs", body)
