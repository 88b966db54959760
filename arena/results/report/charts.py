"""The report's charts as inline SVG, drawn from standings and records.

Three charts (and a fourth for an SPRT: its LLR against its bounds, pair by pair): each bot's TrueSkill mu with a band of one sigma either side
against the games it has played; each bot's results (wins, draws, losses,
and the losses that were forfeits) as shares of its games; and the
distribution of each bot's time per move on a logarithmic axis.  Pure
functions: they work out every position, the template ``templates/charts.svg``
draws the SVG (a bot's name is text wherever it is); no script is needed to read them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from arena.game.records import GameRecord
from arena.results.game_index import move_times_of
from arena.results.pages import Markup, render
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


def _svg(chart: str, height: int, title: str, **parts: Any) -> Markup:
    return Markup(render("charts.svg", chart=chart, width=_WIDTH, height=height, title=title, **parts))


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
) -> Markup:
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

    axes = _axes(left, right, top, bottom, [(y(t), _fmt(t)) for t in _nice_ticks(low, high)],
                 [(x(t), _fmt(t)) for t in _nice_ticks(0, most) if t <= most], "games played", "mu ± sigma")
    drawn = [_series(name, series[name], _OTHER, x, y, band=False) for name in others] + \
        [_series(name, series[name], colors[name], x, y, band=True) for name in reversed(shown)]  # the first bot on top
    grey = {"row": 300 + 18 * math.ceil(len(shown) / 4), "color": _OTHER, "count": len(others)} if others else None
    return _svg("rating", height, "rating (mu ± sigma) against games played", axes_=axes, series=drawn,
                legend_=_legend({name: colors[name] for name in shown}, 300), others=grey)


def _series(name: str, pts: Sequence[tuple[int, float, float]], color: str, x: Callable[[float], float],
            y: Callable[[float], float], *, band: bool) -> dict[str, Any]:
    """A bot's line (and band of one sigma either side) in the rating chart."""
    g, mu, s = pts[-1]
    return {"name": name, "title": f"{name}: mu {mu:.2f} ± {s:.2f} after {g} games", "color": color,
            "line": _points((x(g), y(mu)) for g, mu, _ in pts),
            "band": _points([(x(g), y(mu + s)) for g, mu, s in pts] + [(x(g), y(mu - s)) for g, mu, s in reversed(pts)])
            if band else None}


def _points(points: Iterable[tuple[float, float]]) -> Markup:
    """An SVG ``points`` list: numbers only, as long as the line (no text's length limit)."""
    return Markup(" ".join(f"{x:.1f},{y:.1f}" for x, y in points))


def results_chart(bots: Sequence[BotStanding], colors: Mapping[str, str]) -> Markup:
    """Each bot's wins, draws, losses and forfeited losses as shares of its games."""
    row, left, right = _row_height(len(bots)), 150, _WIDTH - 250
    height = 34 + row * len(bots)
    bars = []
    for i, bot in enumerate(bots):
        top = 26 + i * row
        bar = _bar_height(row)
        base = top + bar / 2 + 4  # a text's baseline, level with the bar's middle
        forfeits = sum(bot.forfeits.values())
        parts = []
        x = float(left)
        for label, count, fill in [("wins", bot.wins, "#4caf50"), ("draws", bot.draws, "#b0b0b0"),
                                   ("losses", bot.losses - forfeits, "#ef9a9a"), ("forfeits", forfeits, "#b71c1c")]:
            if not count:
                continue
            width = (right - left) * count / bot.games
            parts.append({"x": f"{x:.1f}", "width": f"{width:.1f}", "fill": fill, "count": count,
                          "title": f"{bot.name}: {count} {label} of {bot.games} games",
                          "middle": f"{x + width / 2:.1f}" if width > 22 and bar >= 20 else None})
            x += width
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(bot.forfeits.items()))
        bars.append({"name": bot.name, "short": _short(bot.name), "color": colors.get(bot.name, "#888"), "top": top,
                     "height": bar, "base": f"{base:.1f}", "key_y": f"{base - 9:.1f}", "parts": parts,
                     "summary": f"{bot.wins}-{bot.draws}-{bot.losses} of {bot.games}" + (f"; forfeits: {reasons}" if reasons else "")})
    return _svg("results", height, "results and forfeits by bot", left=left, right=right, bars=bars)


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


def move_time_chart(standings: Standings, times: Mapping[str, Sequence[float]], colors: Mapping[str, str]) -> Markup:
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

    ticks = [(f"{x(10 ** exp):.1f}", _fmt(10 ** exp)) for exp in range(lo_exp, hi_exp + 1)]
    boxes = []
    for i, name in enumerate(names):
        top = 10 + i * row
        bar = _bar_height(row)
        mid = top + bar / 2
        values = times.get(name, ())
        box: dict[str, Any] = {"name": name, "short": _short(name), "text_y": f"{mid + 4:.1f}", "title": None}
        boxes.append(box)
        if not values:
            continue
        q = {p: quantile(values, p / 100) for p in (5, 25, 50, 75, 95)}
        box.update({
            "title": f"{name}: {len(values)} moves; median {q[50]:.2f} ms, 5%-95% {q[5]:.2f}-{q[95]:.2f} ms, "
                     f"slowest {values[-1]:.1f} ms",
            "color": colors.get(name, "#888"), "mid": f"{mid:.1f}", "top": top, "top_f": f"{top:.1f}", "height": bar,
            "x5": f"{x(q[5]):.1f}", "x25": f"{x(q[25]):.1f}", "x50": f"{x(q[50]):.1f}", "x95": f"{x(q[95]):.1f}",
            "width": f"{max(1.0, x(q[75]) - x(q[25])):.1f}", "slowest": f"{x(values[-1]):.1f}",
            "summary": f"median {q[50]:.2g} ms, 95% under {q[95]:.2g} ms",
        })
    return _svg("times", height, "time per move by bot", left=left, right=right, ticks=ticks, boxes=boxes)


def _axes(
    left: float, right: float, top: float, bottom: float,
    yticks: list[tuple[float, str]], xticks: list[tuple[float, str]], xlabel: str, ylabel: str,
) -> dict[str, Any]:
    return {"left": left, "right": right, "top": top, "bottom": bottom, "xlabel": xlabel, "ylabel": ylabel,
            "yticks": [(f"{pos:.1f}", f"{pos + 4:.1f}", label) for pos, label in yticks],
            "xticks": [(f"{pos:.1f}", label) for pos, label in xticks]}


def _legend(colors: Mapping[str, str], y: float) -> list[tuple[float, float, str, str]]:
    """(x, y, colour, name) of each bot's key, four a row."""
    return [(48 + (i % 4) * 178, y + (i // 4) * 18, color, _short(name)) for i, (name, color) in enumerate(colors.items())]


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


def llr_chart(llrs: Sequence[float], lower: float, upper: float) -> Markup:
    """The SPRT's LLR against the game pairs played, between its two bounds (the lines where it stops)."""
    left, right, top, bottom = 48, _WIDTH - 12, 12, 250
    most = max(len(llrs), 1)
    low, high = min([lower, *llrs]) * 1.1, max([upper, *llrs]) * 1.1

    def x(pairs: float) -> float:
        return left + (right - left) * pairs / most

    def y(value: float) -> float:
        return bottom - (bottom - top) * (value - low) / ((high - low) or 1)

    axes = _axes(left, right, top, bottom, [(y(t), _fmt(t)) for t in _nice_ticks(low, high)],
                 [(x(t), _fmt(t)) for t in _nice_ticks(0, most) if t <= most], "game pairs", "LLR")
    bounds = [(f"{y(bound):.1f}", f"{y(bound) - 4:.1f}", f"{name} ({bound:.2f})", color)
              for bound, name, color in ((upper, "H1 accepted", "#2ca02c"), (lower, "H0 accepted", "#d62728"))]
    points = _points((x(i), y(v)) for i, v in enumerate([0.0, *llrs]))
    return _svg("llr", 280, f"SPRT log-likelihood ratio after {len(llrs)} game pairs", axes_=axes, bounds=bounds,
                pairs=len(llrs), points=points)
