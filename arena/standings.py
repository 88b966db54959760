"""Standings as text: pure functions of a :class:`~arena.ratings.Standings`.

Three tables are rendered, in this order:

1. **ranking** — rank, bot, rating (mu - 3 sigma), mu, sigma, games, wins,
   draws, losses, score %, forfeits by reason, mean milliseconds per move;
2. **head to head** — each row bot's score against each column bot, as
   ``score/games`` (``—`` on the diagonal, ``-`` for bots that never met);
3. **by colour** — games, wins, draws, losses and score % of whoever played
   each colour, which shows any first-mover advantage.

Formats: ``plain`` (terminal), ``github`` (Markdown), ``html`` (a standalone
page), ``csv`` and ``json``.  The csv text holds the three tables one after
another, each as a line with the table's title, a header row and the data rows,
with an empty line between tables; cells are as displayed.  The json text is one
object with ``game``, ``total_games``, ``bots`` (every field at full
precision), ``crosstable`` and ``by_color``.  With no game played yet, the text
formats print a friendly line instead of empty tables; csv and json keep their
layout so that programs reading them need no special case.
"""

from __future__ import annotations

import csv
import html
import io
import json
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from arena.protocol import FORFEIT_REASONS
from arena.ratings import BotStanding, Standings

__all__ = ["FORMATS", "render_standings"]

FORMATS = ("plain", "github", "html", "csv", "json")

_TABLEFMT = {"plain": "simple", "github": "github", "html": "html"}
_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin-bottom:2em}"
    "th,td{padding:.3em .7em;border-bottom:1px solid #ddd}"
    "th{background:#f3f3f3}"
    "tbody tr:nth-child(even){background:#fafafa}"
)


@dataclass(frozen=True)
class _Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    #: Per column, "left" or "right" (numbers).
    align: list[str]


def render_standings(standings: Standings, fmt: str = "plain") -> str:
    """Render ``standings`` in format ``fmt``, one of :data:`FORMATS`.

    The text has no trailing newline.  Raises :class:`ValueError` for an
    unknown format.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown standings format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps(_json_object(standings), indent=2, ensure_ascii=False)
    tables = _tables(standings)
    if fmt == "csv":
        return _csv(tables)
    title = _title(standings)
    if fmt == "html":
        return _html_page(standings, title, tables)
    if standings.total_games == 0:
        return _no_games(standings)
    heading = "## " if fmt == "github" else ""
    parts = [f"# {title}" if fmt == "github" else title]
    for table in tables:
        body = tabulate(
            table.rows, headers=table.headers, tablefmt=_TABLEFMT[fmt], colalign=table.align, disable_numparse=True
        )
        parts.append(f"{heading}{table.title}\n\n{body}" if fmt == "github" else f"{table.title}\n{body}")
    return "\n\n".join(parts)


def _title(standings: Standings) -> str:
    game = f"{standings.game.upper()} standings" if standings.game else "Standings"
    plural = "" if standings.total_games == 1 else "s"
    return f"{game} after {standings.total_games} game{plural}"


def _no_games(standings: Standings) -> str:
    if not standings.bots:
        return "No games played yet."
    return f"No games played yet ({len(standings.bots)} bots entered: {', '.join(b.name for b in standings.bots)})."


def _tables(standings: Standings) -> list[_Table]:
    names = [bot.name for bot in standings.bots]
    ranking = _Table(
        "Ranking",
        ["#", "bot", "rating", "mu", "sigma", "games", "W", "D", "L", "score %", "forfeits", "ms/move"],
        [
            [
                str(rank),
                bot.name,
                _number(bot.rating),
                _number(bot.mu, 2),
                _number(bot.sigma, 2),
                str(bot.games),
                str(bot.wins),
                str(bot.draws),
                str(bot.losses),
                _number(bot.score_pct),
                _forfeits(bot),
                _number(bot.mean_move_ms),
            ]
            for rank, bot in enumerate(standings.bots, start=1)
        ],
        ["right", "left"] + ["right"] * 8 + ["left", "right"],
    )
    head_to_head = _Table(
        "Head to head (row's score against column)",
        ["bot", *names],
        [[row, *(_h2h_cell(standings, row, col) for col in names)] for row in names],
        ["left"] + ["right"] * len(names),
    )
    by_color = _Table(
        "Results by colour",
        ["colour", "games", "wins", "draws", "losses", "score %"],
        [
            [color, *(str(t[k]) for k in ("games", "wins", "draws", "losses")), _number(_color_pct(t))]
            for color, t in standings.by_color.items()
        ],
        ["left"] + ["right"] * 5,
    )
    return [ranking, head_to_head, by_color]


def _number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    # Adding 0.0 turns a negative zero after rounding into "0.0", not "-0.0".
    return f"{round(value, digits) + 0.0:.{digits}f}"


def _forfeits(bot: BotStanding) -> str:
    # Known reasons in the protocol's order, so columns read alike across bots.
    order = {reason: i for i, reason in enumerate(FORFEIT_REASONS)}
    reasons = sorted(bot.forfeits, key=lambda r: (order.get(r, len(order)), r))
    return ", ".join(f"{reason} {bot.forfeits[reason]}" for reason in reasons) or "-"


def _h2h_cell(standings: Standings, row: str, col: str) -> str:
    if row == col:
        return "—"
    score, games = standings.crosstable[row][col]
    return f"{score:g}/{games}" if games else "-"


def _color_pct(tally: dict[str, int]) -> float | None:
    if not tally["games"]:
        return None
    return 100 * (tally["wins"] + tally["draws"] / 2) / tally["games"]


def _csv(tables: list[_Table]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for i, table in enumerate(tables):
        if i:
            writer.writerow([])
        writer.writerow([table.title])
        writer.writerow(table.headers)
        writer.writerows(table.rows)
    return out.getvalue().rstrip("\n")


def _html_page(standings: Standings, title: str, tables: list[_Table]) -> str:
    if standings.total_games == 0:
        body = f"<p>{html.escape(_no_games(standings))}</p>"
    else:
        body = "\n".join(
            f"<h2>{html.escape(t.title)}</h2>\n"
            + tabulate(t.rows, headers=t.headers, tablefmt="html", colalign=t.align, disable_numparse=True)
            for t in tables
        )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>"
    )


def _json_object(standings: Standings) -> dict[str, Any]:
    return {
        "game": standings.game,
        "total_games": standings.total_games,
        "bots": [
            {
                "rank": rank,
                "name": bot.name,
                "rating": bot.rating,
                "mu": bot.mu,
                "sigma": bot.sigma,
                "games": bot.games,
                "wins": bot.wins,
                "draws": bot.draws,
                "losses": bot.losses,
                "score": bot.score,
                "score_pct": bot.score_pct,
                "forfeits": dict(bot.forfeits),
                "moves": bot.moves,
                "move_ms": bot.move_ms,
                "mean_move_ms": bot.mean_move_ms,
            }
            for rank, bot in enumerate(standings.bots, start=1)
        ],
        "crosstable": {
            row: {col: {"score": score, "games": games} for col, (score, games) in cols.items()}
            for row, cols in standings.crosstable.items()
        },
        "by_color": {color: {**tally, "score_pct": _color_pct(tally)} for color, tally in standings.by_color.items()},
    }
