"""Standings as text: pure functions of a :class:`~arena.results.standings.Standings`.

These tables are rendered, in this order:

1. **ranking** — rank, bot, rating (mu - 3 sigma), mu, sigma, games, wins,
   draws, losses, score %, Elo, its 95 % margin, LOS over the next bot
   (``≈`` where it is under 95 %), forfeits by reason, mean milliseconds per
   move; in text formats a legend follows it;
2. **match** (two bots only) — from the first bot's side: games, W, D, L,
   Elo difference and margin, LOS, draw ratio, game pairs and their
   pentanomial counts LL, LD, WL+DD, WD, WW;
3. **SPRT** (when the tournament has one) — its settings, LLR, bounds,
   pairs and verdict;
4. **head to head** — each row bot's score against each column bot, as
   ``score/games`` (``—`` on the diagonal, ``-`` for bots that never met);
5. **by colour** — wins, draws and losses of whoever played each colour, and
   its score %, which shows any first-mover advantage; every game counts once
   for each colour, so the total is in the title, not on each row.

Formats: ``plain`` (terminal), ``github`` (Markdown), ``html`` (a standalone
page), ``csv`` and ``json`` (names in any case).  Bot names, versions and
everything else read from records are text others chose: each cell goes
through :func:`arena.bot.text.safe` for its format (no escape sequence in
plain, no raw HTML or stray ``|`` in github, no markup in html, no formula in
csv), and json is ASCII with every other character escaped.  The csv text is one table: a
header row and the data rows, cells as displayed; the ranking unless another
table is asked for (``ranking``, ``crosstable`` or ``colors``, see
:data:`TABLES`), which the other text formats can show alone too.  The json text is one
object with ``game``, ``total_games``, ``bots`` (every field at full
precision), ``crosstable``, ``by_color``, ``elo_method``,
``elo_regularized``, ``match`` and ``sprt`` (``null`` when not shown).  With no game played yet, the text
formats print a friendly line instead of empty tables; csv and json keep their
layout so that programs reading them need no special case.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from arena.bot.protocol import FORFEIT_REASONS
from arena.bot.text import safe
from arena.results.standings import BotStanding, Standings
from arena.results.statistics import ELO_METHOD, MatchStatistics, SprtStatus

__all__ = [
    "OUTPUT_FORMATS", "LEGEND", "TABLES", "Table", "render_standings", "format_elo", "format_elo_interval", "format_percent",
    "standings_notes", "standings_tables", "standings_title",
]

OUTPUT_FORMATS = ("plain", "github", "html", "csv", "json")
#: The tables, by the names ``--table`` takes, in the order they are shown
#: (``match`` only for two bots, ``sprt`` only with an SPRT).
TABLES = ("ranking", "reference", "match", "sprt", "crosstable", "colors")

# The cells are escaped before tabulate sees them: html with "unsafehtml",
# which adds no escaping of its own.
_TABLEFMT = {"plain": "simple", "github": "github", "html": "unsafehtml"}
#: Where each text format's cells go, as :func:`arena.bot.text.safe` names it.
_DESTINATION = {"plain": "terminal", "github": "markdown", "html": "html", "csv": "csv"}
_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin-bottom:2em}"
    "th,td{padding:.3em .7em;border-bottom:1px solid #ddd}"
    "th{background:#f3f3f3}"
    "tbody tr:nth-child(even){background:#fafafa}"
)


#: What the ranking's columns mean, one line each, printed under the text table.
LEGEND = (
    "rating: TrueSkill's cautious skill estimate, mu - 3·sigma; the table is ranked by it",
    "mu: TrueSkill's estimate of the bot's skill; sigma: how unsure that estimate still is",
    "Elo: maximum-likelihood Bradley–Terry Elo over all games (a draw is half a win; the bots average 0)",
    "±: half the width of the Elo's 95 % interval (from the fit's covariance)",
    "LOS: likelihood of superiority, the chance this bot is stronger than the next one down",
    "≈: LOS under 95 %: the games so far do not separate this bot from the next one",
)
#: Marks a LOS under this: the evidence does not separate two adjacent bots.
LOS_THRESHOLD = 0.95


@dataclass(frozen=True)
class _Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    #: Per column, "left" or "right" (numbers).
    align: list[str]
    #: Its name in :data:`TABLES`.
    key: str = ""


#: A table as every format shows it; the HTML report draws them too.
Table = _Table


def render_standings(standings: Standings, fmt: str = "plain", table: str | None = None) -> str:
    """Render ``standings`` in format ``fmt``, one of :data:`OUTPUT_FORMATS`: every
    table, or only ``table`` (one of :data:`TABLES`; csv shows the ranking
    when none is named).

    The text has no trailing newline.  Raises :class:`ValueError` for an
    unknown format or table.
    """
    fmt = fmt.lower()
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"unknown standings format {fmt!r}; choose one of: {', '.join(OUTPUT_FORMATS)}")
    if table is not None and table.lower() not in TABLES:
        raise ValueError(f"unknown table {table!r}; choose one of: {', '.join(TABLES)}")
    if fmt == "json":
        if table is not None:
            raise ValueError("json holds every table; --table picks one for the other formats")
        # ASCII: JSON escapes every other character, control characters and
        # lone surrogates among them, so no name reaches a terminal raw.
        return json.dumps(_finite(_json_object(standings)), indent=2, ensure_ascii=True, allow_nan=False)
    tables = _tables(standings)
    if table is not None or fmt == "csv":
        wanted = (table or "ranking").lower()
        tables = [t for t in tables if t.key == wanted]
        if not tables:
            needs = {"sprt": "an SPRT (sprt: in the tournament file, or arena match --sprt)",
                     "reference": "format: reference"}.get(wanted, "exactly two bots")
            raise ValueError(f"no {wanted} table in these standings: it needs {needs}")
    destination = _DESTINATION[fmt]
    tables = [_escaped(t, destination) for t in tables]
    if fmt == "csv":
        return _csv(tables[0])
    title = safe(_title(standings), destination)
    if fmt == "html":
        return _html_page(standings, title, tables)
    if standings.total_games == 0:
        return safe(_no_games(standings), destination)
    heading = "## " if fmt == "github" else ""
    parts = [f"# {title}" if fmt == "github" else title]
    for table in tables:
        body = tabulate(
            table.rows, headers=table.headers, tablefmt=_TABLEFMT[fmt], colalign=table.align, disable_numparse=True
        )
        parts.append(f"{heading}{table.title}\n\n{body}" if fmt == "github" else f"{table.title}\n{body}")
        if table is tables[0]:
            parts.append("\n".join(("- " if fmt == "github" else "  ") + line for line in _notes(standings)))
    return "\n\n".join(parts)


def _escaped(table: _Table, destination: str) -> _Table:
    """``table`` with every text as it may be written to ``destination``."""
    return _Table(
        safe(table.title, destination), [safe(h, destination) for h in table.headers],
        [[safe(cell, destination) for cell in row] for row in table.rows], table.align, table.key,
    )


def _notes(standings: Standings) -> list[str]:
    """The legend, and a warning when the Elo fit needed its prior."""
    notes = list(LEGEND)
    if standings.elo_regularized:
        notes.append(
            "Elo note: a bot or group won or lost every game against the others, so the fit adds "
            "one virtual draw between every two bots to stay finite; read those Elo as rough"
        )
    return notes


def format_elo(elo: float | None) -> str:
    """An Elo or Elo difference as a signed whole number; ``-`` when unknown."""
    if elo is None or math.isnan(elo):
        return "-"
    if math.isinf(elo):
        return "+inf" if elo > 0 else "-inf"
    return f"{round(elo) + 0:+d}"


def format_elo_interval(match: MatchStatistics) -> str:
    """``+120 ± 45``, or the interval's ends when one is infinite (a 0 % or 100 % score)."""
    if math.isfinite(match.margin):
        return f"{format_elo(match.elo)} ± {round(match.margin)}"
    if math.isinf(match.elo):
        return format_elo(match.elo)
    return f"{format_elo(match.elo)} [{format_elo(match.lower)}, {format_elo(match.upper)}]"


def format_percent(fraction: float | None, digits: int = 1) -> str:
    return "-" if fraction is None else f"{100 * fraction:.{digits}f}%"


def _margin(margin: float | None) -> str:
    if margin is None:
        return "-"
    return "inf" if math.isinf(margin) else f"{round(margin)}"


def _los_cell(los: float | None) -> str:
    if los is None:
        return "-"
    return format_percent(los) if los >= LOS_THRESHOLD else f"≈ {format_percent(los)}"


def standings_tables(standings: Standings) -> list[_Table]:
    """The tables every format shows, as cells of text: the HTML report uses them too."""
    return _tables(standings)


def standings_title(standings: Standings) -> str:
    """The heading every format shows, e.g. ``OXONO standings after 96 games``."""
    return _title(standings)


def standings_notes(standings: Standings) -> list[str]:
    """The lines printed under the ranking: the legend and any warning about the Elo fit."""
    return _notes(standings)


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
        ["#", "bot", "rating", "mu", "sigma", "games", "W", "D", "L", "score %", "Elo", "±", "LOS", "forfeits", "ms/move"],
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
                format_elo(bot.elo),
                _margin(bot.elo_margin),
                _los_cell(bot.los_next),
                _forfeits(bot),
                _number(bot.mean_move_ms),
            ]
            for rank, bot in enumerate(standings.bots, start=1)
        ],
        ["right", "left"] + ["right"] * 11 + ["left", "right"],
        "ranking",
    )
    head_to_head = _Table(
        "Head to head (row's score against column)",
        ["bot", *names],
        [[row, *(_h2h_cell(standings, row, col) for col in names)] for row in names],
        ["left"] + ["right"] * len(names),
        "crosstable",
    )
    by_color = _Table(
        f"Results by colour ({standings.total_games} game{'' if standings.total_games == 1 else 's'})",
        ["colour", "wins", "draws", "losses", "score %"],
        [
            [color, *(str(t[k]) for k in ("wins", "draws", "losses")), _number(_color_pct(t))]
            for color, t in standings.by_color.items()
        ],
        ["left"] + ["right"] * 4,
        "colors",
    )
    if any(bot.versions for bot in standings.bots):
        ranking.headers.append("version")
        ranking.align.append("left")
        for row, bot in zip(ranking.rows, standings.bots):
            row.append(_version_cell(bot))
    tables = [ranking]
    if standings.reference:
        tables.append(_reference_table(standings))
    if standings.match is not None and standings.match_bots is not None:
        tables.append(_match_table(standings.match, standings.match_bots))
    if standings.sprt is not None:
        tables.append(_sprt_table(standings.sprt))
    return tables + [head_to_head, by_color]


def _version_cell(bot: BotStanding) -> str:
    if not bot.versions:
        return "-"
    earlier = bot.earlier_games
    return f"{bot.version} (+{earlier} by earlier)" if earlier else str(bot.version)


def _reference_table(standings: Standings) -> _Table:
    refs = list(standings.reference)
    rows = []
    for rank, bot in enumerate(standings.entrants, start=1):
        cells = [standings.crosstable.get(bot.name, {}).get(ref, (0.0, 0)) for ref in refs]
        score, games = sum(s for s, _ in cells), sum(g for _, g in cells)
        rows.append([str(rank), bot.name, *(_h2h_cell(standings, bot.name, ref) for ref in refs),
                     f"{score:g}/{games}", _number(100 * score / games if games else None)])
    return _Table(
        "Against the reference bots (entrants ranked by score %)",
        ["#", "bot", *refs, "total", "score %"], rows, ["right", "left"] + ["right"] * (len(refs) + 2), "reference",
    )


def _match_table(match: MatchStatistics, names: tuple[str, str]) -> _Table:
    return _Table(
        f"Match: {names[0]} against {names[1]} (from {names[0]}'s side)",
        ["games", "W", "D", "L", "Elo diff", "±", "LOS", "draw ratio", "pairs", "LL", "LD", "WL+DD", "WD", "WW"],
        [[
            str(match.games), str(match.wins), str(match.draws), str(match.losses),
            format_elo(match.elo), _margin(match.margin), format_percent(match.los),
            format_percent(match.draw_ratio), str(match.penta.pairs), *(str(n) for n in match.penta.counts()),
        ]],
        ["right"] * 14,
        "match",
    )


def _sprt_table(sprt: SprtStatus) -> _Table:
    c = sprt.config
    return _Table(
        "SPRT (normalized Elo, game pairs)",
        ["elo0", "elo1", "alpha", "beta", "LLR", "lower", "upper", "pairs", "verdict"],
        [[f"{c.elo0:g}", f"{c.elo1:g}", f"{c.alpha:g}", f"{c.beta:g}", f"{sprt.llr:.2f}",
          f"{c.lower:.2f}", f"{c.upper:.2f}", str(sprt.pairs), sprt.verdict_text]],
        ["right"] * 8 + ["left"],
        "sprt",
    )


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


def _csv(table: _Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.headers)
    writer.writerows(table.rows)
    return out.getvalue().rstrip("\n")


def _html_page(standings: Standings, title: str, tables: list[_Table]) -> str:
    """The page of ``tables`` and ``title``, both already escaped for HTML."""
    if standings.total_games == 0:
        body = f"<p>{safe(_no_games(standings), 'html')}</p>"
    else:
        body = "\n".join(
            f"<h2>{t.title}</h2>\n"
            + tabulate(t.rows, headers=t.headers, tablefmt=_TABLEFMT["html"], colalign=t.align, disable_numparse=True)
            + ("\n<ul>" + "".join(f"<li>{safe(n, 'html')}</li>" for n in _notes(standings)) + "</ul>" if i == 0 else "")
            for i, t in enumerate(tables)
        )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{title}</h1>\n{body}\n</body>\n</html>"
    )


def _finite(value: Any) -> Any:
    """``value`` with infinities (a 100 % score's Elo) as ``null``: JSON has no infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


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
                "elo": bot.elo,
                "elo_margin": bot.elo_margin,
                "los_next": bot.los_next,
                "version": bot.version,
                "versions": dict(bot.versions),
            }
            for rank, bot in enumerate(standings.bots, start=1)
        ],
        "crosstable": {
            row: {col: {"score": score, "games": games} for col, (score, games) in cols.items()}
            for row, cols in standings.crosstable.items()
        },
        "by_color": {color: {**tally, "score_pct": _color_pct(tally)} for color, tally in standings.by_color.items()},
        "elo_method": ELO_METHOD,
        "elo_regularized": standings.elo_regularized,
        "match": None if standings.match is None else _match_json(standings.match, standings.match_bots),
        "sprt": None if standings.sprt is None else standings.sprt.to_json(),
        "reference": list(standings.reference),
        "entrants": [bot.name for bot in standings.entrants],
    }


def _match_json(match: MatchStatistics, names: tuple[str, str] | None) -> dict[str, Any]:
    p = match.penta
    return {
        "bots": list(names or ()), "games": match.games, "wins": match.wins, "draws": match.draws,
        "losses": match.losses, "model": match.model, "score": match.score, "elo": match.elo,
        "margin": match.margin, "los": match.los, "draw_ratio": match.draw_ratio, "pairs": p.pairs,
        "pentanomial": {"LL": p.ll, "LD": p.ld, "WL": p.wl, "DD": p.dd, "WD": p.wd, "WW": p.ww},
    }
