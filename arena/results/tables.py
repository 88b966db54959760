"""Standings as text: pure functions of a :class:`~arena.results.standings.Standings`.

These tables are rendered, in this order:

1. **ranking** — titled with the rule that orders it: rank (``3=`` when
   shared), bot, (with time odds: each bot's clock,) rating (mu - 3 sigma), mu, sigma, (under ``ranking:
   points``: score and Sonneborn–Berger,) games, wins,
   draws, losses, score %, Elo, its 95 % margin, LOS over the next bot
   (``≈`` where it is between 5 % and 95 %: not separated either way; in a
   gauntlet only between bots that met), forfeits by reason, mean milliseconds per
   move, ``withdrawn`` when a bot was; in text formats a legend follows it;
2. **opponents** (a gauntlet) — its first bot against each other bot, from
   its side: games, W, D, L, score %, Elo difference and margin, LOS (``≈``
   where it is between 5 % and 95 %: not separated either way), game pairs;
3. **match** (two bots only) — from the first bot's side: games, W, D, L,
   Elo difference and margin, LOS, draw ratio, game pairs and their
   pentanomial counts LL, LD, WL+DD, WD, WW;
4. **SPRT** (when the tournament has one) — its settings, LLR, bounds,
   pairs and verdict;
5. **head to head** — each row bot's score against each column bot, as
   ``score/games`` (``—`` on the diagonal, ``-`` for bots that never met);
   above :data:`HEAD_TO_HEAD_MAX_BOTS` bots the text formats give a line in
   its place saying how to ask for it (``--table head-to-head``);
6. **by colour** — wins, draws and losses of whoever played each colour, and
   its score %, which shows any first-mover advantage; every game counts once
   for each colour, so the total is in the title, not on each row;
7. **nodes** — only when asked for (``--table nodes``): a line per node
   that played games (host, Ray node id, the workers or actors there and
   their bots' niceness), its games, mean milliseconds per move and
   forfeits by reason, so that per-node conditions can be audited; games
   whose record does not say where they were played on a line of their own.

Formats: ``plain`` (terminal), ``github`` (Markdown), ``html`` (a standalone
page), ``csv`` and ``json`` (names in any case).  Bot names, versions and
everything else read from records are text others chose: each cell goes
through :func:`arena.base.text.safe` for its format (no escape sequence in
plain, no raw HTML or stray ``|`` in github, no markup in html, no formula in
csv), and json is ASCII with every other character escaped.

The ranking is ordered by the standings' rule (``ranking:``, see
:data:`arena.results.standings.RANKING_RULES`); the text formats name it in
the ranking's title and first note, csv in a ``ranked by`` column, json in
``ranking``.  A shared rank (a tie under ``ranking: points`` that no
tie-break breaks) shows as ``3=`` in the text formats; csv and json give the
number (``3``) and say ``shared`` apart.

A Swiss or round-robin stage adds a **rounds** table, a line per pairing
(its bots, their score ``2–0``, its forfeits, ``not played yet``, ``not
counted``) and per bye; a knockout a **bracket** table, a line per match.

The csv text is one table: a header row and the data rows; the ranking
(a reference tournament's: against its reference bots, its first table)
unless another table is asked for (``ranking``, ``crosstable`` or
``colors``, see :data:`TABLES`), which the other text formats can show alone
too.  The ranking's csv ends with ``ranked by``, ``shared``, ``place_from``
and ``place_to`` (the places a rank covers) and a column per forfeit reason
(every known one, so that a gradebook's columns never move); the rounds'
and the bracket's with each side's score as a number.  Its cells are plain numbers for a spreadsheet or a gradebook, at full
precision: Elo and its margin as numbers, LOS and ratios as fractions (0.953,
not ``95.3%``), score % as a percentage (56.25), a head-to-head cell as the
row's score; a cell with no value (no game, the last bot's LOS, a 100 %
score's infinite Elo) is empty.  The text formats keep the display
(``+531``, ``≈ 75.3%``, ``-``).  The json text is one object with ``game``, ``total_games``, ``ranking``, ``bots`` (every field at full
precision, ``null`` for none), ``crosstable``, ``by_color``, ``elo_method``,
``elo_regularized``, ``match``, ``sprt`` (``null`` when not shown) and ``nodes``; its
``crosstable`` gives each bot's cells against the bots it met only (a
field of thousands of bots has millions of pairs that never met).  With no game played yet, the text
formats print a friendly line instead of empty tables; csv and json keep their
layout so that programs reading them need no special case.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from arena.bot.forfeits import FORFEIT_REASONS
from arena.base.text import safe
from arena.formats.adaptive import TIED, Verdict, in_scope
from arena.formats.rounds import Match, PairResult, Rounds, StageState
from arena.formats.stages import BYE_SCORES, STAGE_NAMES
from arena.results.nodes import NOT_RECORDED, NodeTally
from arena.results.pages import render
from arena.results.standings import BotStanding, Crosstable, Standings, reference_rule, rounds_rule
from arena.results.sprt import SprtStatus
from arena.results.statistics import ELO_METHOD, MatchStatistics

__all__ = [
    "HEAD_TO_HEAD_LIMIT", "HEAD_TO_HEAD_MAX_BOTS", "OUTPUT_FORMATS", "LEGEND", "TABLE_ALIASES", "TABLES", "Table", "render_standings", "format_elo", "format_elo_interval", "format_nelo",
    "format_percent",
    "head_to_head_note", "standings_notes", "standings_tables", "standings_title", "table_notes",
]

OUTPUT_FORMATS = ("plain", "github", "html", "csv", "json")
#: The tables, by the names ``--table`` takes, in the order they are shown
#: (``match`` only for two bots, ``sprt`` only with an SPRT).
TABLES = ("ranking", "rounds", "settling", "bracket", "reference", "opponents", "match", "sprt", "crosstable", "colors",
          "nodes")

#: The characters of a Ray node's id the text formats show (enough to tell
#: a cluster's nodes apart; csv and json give it whole).
NODE_ID_SHOWN = 12
#: Beside a remote bot's name in the ranking (see the note under it).
REMOTE_MARK = " (remote)"
#: Other names ``--table`` takes for a table.
TABLE_ALIASES = {"head-to-head": "crosstable"}
#: Above this many bots, the text formats leave the head-to-head table out
#: unless it is asked for (``--table head-to-head``): it would be wider than any screen.
HEAD_TO_HEAD_MAX_BOTS = 16
#: Above this many bots no format makes the head-to-head table (n² cells, most
#: of them of bots that never met: 9 million for 3,000 bots), not even when
#: asked for; json gives each bot's cells against the bots it met.
HEAD_TO_HEAD_LIMIT = 1_000

# The cells are escaped before tabulate sees them (html is a template: arena.results.pages).
_TABLEFMT = {"plain": "simple", "github": "github"}
#: Where each text format's cells go, as :func:`arena.base.text.safe` names it.
_DESTINATION = {"plain": "terminal", "github": "markdown", "csv": "csv"}


#: What the ranking's columns mean, one line each, printed under the text table.
LEGEND = (
    "rating: TrueSkill's cautious skill estimate, mu - 3·sigma",
    "mu: TrueSkill's estimate of the bot's skill; sigma: how unsure that estimate still is",
    "Elo: maximum-likelihood Bradley–Terry Elo over all games (a draw is half a win; the bots average 0, "
    "so against the field: a match's Elo diff is one bot's against the other's)",
    "±: half the width of the Elo's 95 % interval (from the fit's covariance)",
    "LOS: likelihood of superiority, the chance this bot is stronger than the next one down",
    "≈: LOS between 5 % and 95 %: the games so far do not separate this bot from the next one "
    "(under 5 %, the next one is the stronger)",
)
#: Marks an LOS between 1 - this and this: the evidence separates the two bots neither way.
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
    #: The cells as csv writes them, row by row: numbers as numbers, ``None``
    #: for no value; ``None`` when csv writes the displayed :attr:`rows`.
    values: list[list[Any]] | None = None
    #: Headers of columns only csv shows, after the others (see :func:`_add_column`).
    extra: list[str] = field(default_factory=list)


#: A table as every format shows it; the HTML report draws them too.
Table = _Table


def render_standings(standings: Standings, fmt: str = "plain", table: str | None = None) -> str:
    """Render ``standings`` in format ``fmt``, one of :data:`OUTPUT_FORMATS`: every
    table, or only ``table`` (one of :data:`TABLES`; csv shows the first
    table the text shows when none is named: the ranking, or a reference
    tournament's ranking against its reference bots).

    The text has no trailing newline.  Raises :class:`ValueError` for an
    unknown format or table.
    """
    fmt = fmt.lower()
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"unknown standings format {fmt!r}; choose one of: {', '.join(OUTPUT_FORMATS)}")
    if table is not None:
        table = TABLE_ALIASES.get(table.lower(), table)
    if table is not None and table.lower() not in TABLES:
        raise ValueError(f"unknown table {table!r}; choose one of: {', '.join(TABLES)}")
    if fmt == "json":
        if table is not None:
            raise ValueError("json holds every table; --table picks one for the other formats")
        # ASCII: JSON escapes every other character, control characters and
        # lone surrogates among them, so no name reaches a terminal raw.
        return json.dumps(_finite(_json_object(standings)), indent=2, ensure_ascii=True, allow_nan=False)
    bots = len(standings.bots)
    asked = table is not None and table.lower() == "crosstable"
    if asked and bots > HEAD_TO_HEAD_LIMIT:
        raise ValueError(f"no head-to-head table of {bots} bots: it would have {bots * bots:,} cells, and it is made "
                         f"for at most {HEAD_TO_HEAD_LIMIT:,} bots; -f json gives each bot's games against those it met")
    tables = _tables(standings, head_to_head=asked or (table is None and fmt != "csv" and bots <= HEAD_TO_HEAD_MAX_BOTS),
                     nodes=table is not None and table.lower() == "nodes")
    if table is not None or fmt == "csv":
        wanted = (table or tables[0].key).lower()
        tables = [t for t in tables if t.key == wanted]
        if not tables:
            needs = {"sprt": "an SPRT (sprt: in the tournament file, or arena match --sprt)",
                     "opponents": "format: gauntlet",
                     "reference": "format: reference",
                     "rounds": "a Swiss or a round-robin (format: swiss or round-robin, or stages:)",
                     "settling": "an adaptive stage (format: adaptive)",
                     "bracket": "a knockout (format: knockout, stages:)"}.get(wanted, "exactly two bots")
            raise ValueError(f"no {wanted} table in these standings: it needs {needs}")
    if table is None and fmt != "csv" and bots > HEAD_TO_HEAD_MAX_BOTS:
        # Past a screen's width: a one-line note in its place (before the results by colour) says how to get it.
        tables.insert(len(tables) - 1, _Table("", [], [], [], "omitted"))
    if fmt == "html":  # the template escapes what it writes
        return _html_page(standings, tables)
    destination = _DESTINATION[fmt]
    tables = [_escaped(t, destination) for t in tables]
    if fmt == "csv":
        return _csv(tables[0])
    title = safe(_title(standings), destination)
    omitted = safe(head_to_head_note(len(standings.bots)), destination)
    if standings.total_games == 0:
        return safe(_no_games(standings), destination)
    heading = "## " if fmt == "github" else ""
    parts = [f"# {title}" if fmt == "github" else title]
    for table in tables:
        if table.key == "omitted":
            parts.append(omitted)
            continue
        body = tabulate(
            table.rows, headers=table.headers, tablefmt=_TABLEFMT[fmt], colalign=table.align, disable_numparse=True
        )
        parts.append(f"{heading}{table.title}\n\n{body}" if fmt == "github" else f"{table.title}\n{body}")
        notes = table_notes(standings, table.key)
        if notes:
            parts.append("\n".join(("- " if fmt == "github" else "  ") + line for line in notes))
    return "\n\n".join(parts)


def head_to_head_note(bots: int) -> str:
    """The line in place of the head-to-head table of ``bots`` bots."""
    return (f"Head to head: left out for {bots} bots (more than {HEAD_TO_HEAD_MAX_BOTS}); "
            f"--table head-to-head shows it")


def _escaped(table: _Table, destination: str) -> _Table:
    """``table`` with every text as it may be written to ``destination``."""
    return _Table(
        safe(table.title, destination), [safe(h, destination) for h in table.headers],
        [[safe(cell, destination) for cell in row] for row in table.rows], table.align, table.key,
        None if table.values is None else [
            [safe(cell, destination) if isinstance(cell, str) else cell for cell in row] for row in table.values
        ],
        [safe(h, destination) for h in table.extra],
    )


def table_notes(standings: Standings, key: str) -> list[str]:
    """The lines under the table ``key``: the ranking's rule and legend, the reference table's rule."""
    if key == "ranking":
        return _notes(standings)
    if key == "reference":
        return [f"ranked by {reference_rule(standings.reference, standings.rule)}"]
    return []


def _notes(standings: Standings) -> list[str]:
    """The rule that orders the ranking, the legend, the bots withdrawn, and
    a warning when the Elo fit needed its prior."""
    notes = [f"ranked by {standings.rule}", *LEGEND]
    if standings.ranking == "points":
        notes.append("SB: Sonneborn–Berger, the sum over the bot's games of its points times that opponent's score")
        if any(bot.points is not None for bot in standings.bots):
            notes.append("score: the points of the games the bot played, every stage's (a win 1, a draw ½); "
                         "points: the Swiss's, byes counted (of the first stage, in a staged tournament)")
    if any(bot.buchholz is not None for bot in standings.bots):
        notes.append("Bh: Buchholz, the sum of the points of the opponents the bot met")
    by_organiser = [bot.name for bot in standings.bots if bot.withdrawn_by_organiser]
    if by_organiser:
        notes.append(f"withdrawn by the organiser (results stand; games not played forfeited): {', '.join(by_organiser)}")
    crashed = [bot.name for bot in standings.bots if bot.withdrawn and not bot.withdrawn_by_organiser]
    if crashed:
        notes.append(f"withdrawn (crashed too many games in a row; later games forfeited): {', '.join(crashed)}")
    disqualified = [bot.name for bot in standings.bots if bot.disqualified]
    if disqualified:
        notes.append(f"disqualified (every game scored as a loss; ranked last): {', '.join(disqualified)}")
    if any(bot.remote for bot in standings.bots):
        notes.append(f"{REMOTE_MARK.strip()}: plays from another machine (arena connect), outside the sandbox and limits; "
                     "its move times include the network's round trip, less a margin granted for it")
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


def format_nelo(nelo: float, margin: float) -> str:
    """Normalized Elo and its margin, ``+31 ± 12`` (``±inf`` while every pair so far is alike)."""
    return f"{format_elo(nelo)} ± {round(margin) if math.isfinite(margin) else 'inf'}"


def format_percent(fraction: float | None, digits: int = 1) -> str:
    return "-" if fraction is None else f"{100 * fraction:.{digits}f}%"


def _margin(margin: float | None) -> str:
    if margin is None:
        return "-"
    return "inf" if math.isinf(margin) else f"{round(margin)}"


def _los_cell(los: float | None) -> str:
    if los is None:
        return "-"
    separated = los >= LOS_THRESHOLD or los <= 1 - LOS_THRESHOLD
    return format_percent(los) if separated else f"≈ {format_percent(los)}"


def standings_tables(standings: Standings) -> list[_Table]:
    """The tables every format shows, as cells of text: the HTML report uses
    them too.  No head-to-head table above :data:`HEAD_TO_HEAD_LIMIT` bots."""
    return _tables(standings, head_to_head=len(standings.bots) <= HEAD_TO_HEAD_LIMIT)


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


def _tables(standings: Standings, *, head_to_head: bool = True, nodes: bool = False) -> list[_Table]:
    """Every table of ``standings``; the head-to-head table (n² cells) only
    with ``head_to_head``, the games by node only with ``nodes``."""
    names = [bot.name for bot in standings.bots]
    points = standings.ranking == "points"
    ranking = _Table(
        f"Ranking by {_RULE_NAMES[standings.ranking]}",
        ["#", "bot", "rating", "mu", "sigma", "games", "W", "D", "L", "score %", "Elo", "±", "LOS", "forfeits", "ms/move"],
        [
            [
                # A place range (3–4) only where the places order the table.
                bot.rank_text if standings.ranking == "points" else f"{bot.rank}=" if bot.shared_rank else str(bot.rank),
                _name_cell(bot),
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
                _forfeits(bot.forfeits),
                _number(bot.mean_move_ms),
            ]
            for bot in standings.bots
        ],
        ["right", "left"] + ["right"] * 11 + ["left", "right"],
        "ranking",
        [
            [
                bot.rank, bot.name, bot.rating, bot.mu, bot.sigma, bot.games, bot.wins, bot.draws, bot.losses,
                bot.score_pct, bot.elo, bot.elo_margin, bot.los_next, _forfeits(bot.forfeits, ""), bot.mean_move_ms,
            ]
            for bot in standings.bots
        ],
    )
    if points:  # the tie-breaks, so that an organiser can show how a tie was broken
        _add_column(ranking, "score", "right", [(_score(b.score), b.score) for b in standings.bots], at=5)
        at = 6
        if any(b.bye_points for b in standings.bots):
            _add_column(ranking, "byes", "right", [(_score(b.bye_points), b.bye_points) for b in standings.bots], at=at)
            at += 1
        if any(b.points is not None for b in standings.bots):  # a Swiss's (the first stage's), byes counted
            _add_column(ranking, "points", "right", [(_score(b.points) if b.points is not None else "-", b.points)
                                                     for b in standings.bots], at=at)
            at += 1
        if any(b.buchholz is not None for b in standings.bots):
            _add_column(ranking, "Bh", "right", [(_score(b.buchholz or 0.0), b.buchholz) for b in standings.bots], at=at)
            at += 1
        _add_column(ranking, "SB", "right", [(_score(b.sonneborn_berger), b.sonneborn_berger) for b in standings.bots], at=at)
    if any(bot.withdrawn for bot in standings.bots):
        _add_column(ranking, "withdrawn", "left", [("yes" if b.withdrawn else "", b.withdrawn) for b in standings.bots])
    if any(bot.disqualified for bot in standings.bots):
        _add_column(ranking, "DQ", "left", [("DQ" if b.disqualified else "", b.disqualified) for b in standings.bots])
    _add_column(ranking, "ranked by", "left", [(standings.ranking, standings.ranking)] * len(standings.bots), csv_only=True)
    _add_column(ranking, "shared", "left", [("", b.shared_rank) for b in standings.bots], csv_only=True)
    places = _place_ranges(standings)
    _add_column(ranking, "place_from", "right", [("", first) for first, _ in places], csv_only=True)
    _add_column(ranking, "place_to", "right", [("", last) for _, last in places], csv_only=True)
    _reason_columns(ranking, [b.forfeits for b in standings.bots])
    crosstable = [] if not head_to_head else [_Table(
        "Head to head (row's score against column)",
        ["bot", *names],
        [[row, *(_h2h_cell(standings, row, col) for col in names)] for row in names],
        ["left"] + ["right"] * len(names),
        "crosstable",
        [[row, *(_h2h_value(standings, row, col) for col in names)] for row in names],
    )]
    by_color = _Table(
        f"Results by colour ({standings.total_games} game{'' if standings.total_games == 1 else 's'})",
        ["colour", "wins", "draws", "losses", "score %"],
        [
            [color, str(t.wins), str(t.draws), str(t.losses), _number(t.score_pct)]
            for color, t in standings.by_color.items()
        ],
        ["left"] + ["right"] * 4,
        "colors",
        [[color, t.wins, t.draws, t.losses, t.score_pct] for color, t in standings.by_color.items()],
    )
    if any(bot.versions for bot in standings.bots):
        _add_column(ranking, "version", "left", [(_version_cell(b), _version_cell(b)) for b in standings.bots])
    if standings.time_odds:  # each side's clock, where they differ
        _add_column(ranking, "clock", "left", [(_clock_cell(b), _clock_cell(b)) for b in standings.bots], at=2)
    # A reference tournament grades its entrants by their score against the
    # reference bots: that table comes first, the rule's own order.
    tables = [_reference_table(standings), ranking] if standings.reference else [ranking]
    if standings.rounds is not None:
        tables += _rounds_tables(standings.rounds)
    if standings.opponents:
        tables.append(_opponents_table(standings))
    if standings.match is not None and standings.match_bots is not None:
        tables.append(_match_table(standings.match, standings.match_bots))
    if standings.sprt is not None:
        tables.append(_sprt_table(standings.sprt))
    return tables + crosstable + [by_color] + ([_nodes_table(standings.nodes)] if nodes else [])


def _rounds_tables(rounds: Rounds) -> list[_Table]:
    """A Swiss or round-robin stage's rounds, one pairing (or bye) a line
    with its score and what became of it; a knockout's bracket, match by match."""
    tables = []
    staged = len(rounds.stages) > 1
    for state in rounds.stages:
        where = f"stage {state.number}, " if staged else ""
        if state.stage.format == "knockout":
            rows, values = [], []
            for i, matches in enumerate(state.matches):
                for m in matches:
                    rows.append([f"{m.round} ({state.round_name(i)})", *_match_cells(m)])
                    a, b = m.bots
                    values.append([m.round, rows[-1][1], m.winner, m.decided_by, state.round_name(i), a, b,
                                   m.score[0], None if b is None else m.score[1], m.pairs])
            tables.append(_Table(
                f"Bracket ({where}knockout of {len(state.field)})", ["round", "match", "winner", "decided by"],
                rows, ["left", "left", "left", "left"], "bracket", values,
                ["round_name", "bot_1", "bot_2", "score_1", "score_2", "game_pairs"],
            ))
        else:
            kind = STAGE_NAMES[state.stage.format]
            # An adaptive stage's rounds are known once it stops.
            of = "" if state.stage.format == "adaptive" else f" of {state.total_rounds}"
            title = f"Rounds ({where}{kind}, {len(state.pairings)}{of} paired)"
            rows, values = [], []
            for row, value in _pairing_lines(state):
                rows.append(row)
                values.append(value)
            tables.append(_Table(title, ["round", "bot", "score", "opponent", "result"], rows,
                                 ["right", "left", "center", "left", "left"], "rounds", values,
                                 ["opponent_score", "games", "bot_forfeits", "opponent_forfeits", "status"]))
        if state.stage.format == "adaptive":
            tables.append(_settling_table(state, where))
    return tables


def _pairing_lines(state: StageState) -> list[tuple[list[str], list[Any]]]:
    """Each pairing and bye of a Swiss or round-robin stage, round by round:
    (the cells shown, the csv's values)."""
    out: list[tuple[list[str], list[Any]]] = []
    # A game pair's, as the stage counts it; an adaptive round's odd bot sits out and scores nothing.
    sits_out = state.stage.format == "adaptive"
    bye_value = 0.0 if sits_out else BYE_SCORES[state.stage.bye] * 2
    for pairing in state.pairings:
        for a, b in pairing.pairs:
            result = state.results.get((pairing.round, a, b)) or PairResult(counted=False)
            mine = sum(1 for bot, _ in result.forfeits if bot == a)
            status = ("not counted" if not result.counted else "played" if result.played
                      else "being played" if result.games else "not played")
            text = f"{_score(result.score[0])}–{_score(result.score[1])}" if result.games else "–"
            out.append(([str(pairing.round), a, text, b, _pairing_note(result, status)],
                        [pairing.round, a, result.score[0] if result.games else None, b, _pairing_note(result, status),
                         result.score[1] if result.games else None, len(result.games), mine,
                         len(result.forfeits) - mine, status]))
        for bot in pairing.byes:
            note = "sat out" if sits_out else f"bye ({_score(bye_value)} points)"
            out.append(([str(pairing.round), bot, _score(bye_value), "", note],
                        [pairing.round, bot, bye_value, None, note, None, 0, 0, 0, "sat out" if sits_out else "bye"]))
    return out


def _pairing_note(result: PairResult, status: str) -> str:
    """What became of a pairing: its forfeits, or that it is not played (yet)."""
    if status == "not counted":
        return "not counted (a bot left the tournament)"
    if status == "not played":
        return "not played yet"
    forfeits: dict[tuple[str, str], int] = {}
    for forfeit in result.forfeits:
        forfeits[forfeit] = forfeits.get(forfeit, 0) + 1
    text = ", ".join(f"{bot} forfeited {n} ({reason})" if n > 1 else f"{bot} forfeited ({reason})"
                     for (bot, reason), n in forfeits.items())
    if status == "being played":
        return f"being played ({len(result.games)} games so far)" + (f"; {text}" if text else "")
    return text


def _settling_table(state: StageState, where: str) -> _Table:
    """Each adjacent pair of an adaptive stage's ranking (its bots still in
    play), the Elo difference the fit gives, how sure it is, and the verdict."""
    stage, model = state.stage, state.model
    assert model is not None
    scope = len(in_scope(state.verdicts, stage.settle_top))
    rows, values = [], []
    for place, v in enumerate(state.verdicts, start=1):
        diff, sd = model.elo[v.better] - model.elo[v.worse], math.sqrt(model.var_diff(v.better, v.worse))
        text = verdict_text(v, stage.within_elo) if place <= scope else f"{verdict_text(v, stage.within_elo)} (not needed)"
        rows.append([str(place), f"{v.better}–{v.worse}", f"{diff:.1f}", f"{sd:.1f}", f"{v.p_order:.3f}",
                     f"{v.p_tied:.3f}", text])
        values.append([place, f"{v.better}–{v.worse}", diff, sd, v.p_order, v.p_tied, text])
    settled = sum(v.settled for v in state.verdicts[:scope])
    title = (f"Settling ({where}adaptive, {settled} of {scope} pairs settled, {state.spent:,} of at most "
             f"{stage.max_games:,} games)")
    return _Table(title, ["#", "pair", "Elo diff", "sd", "P(order)", f"P(within {stage.within_elo:g})", "verdict"],
                  rows, ["right", "left", "right", "right", "right", "right", "left"], "settling", values)


def verdict_text(verdict: Verdict, within_elo: float) -> str:
    """``separated``, ``tied within N Elo`` or ``not settled``."""
    return f"tied within {within_elo:g} Elo" if verdict.status == TIED else verdict.status


def _match_cells(match: Match) -> list[str]:
    a, b = match.bots
    if b is None:
        return [f"{a} (bye)", a, "bye"]
    score = f"{a} {_score(match.score[0])}–{_score(match.score[1])} {b}"
    how = {"score": "score", "tie-break": f"tie-break pairs ({match.pairs} game pairs)",
           "seed": f"better seed (tied after {match.pairs} game pairs)", "walkover": "walkover (the other bot left)"}
    return [score, match.winner or "being played", how.get(match.decided_by, "")]


#: The rule of a ranking as its table's title names it.
_RULE_NAMES = {"trueskill": "TrueSkill rating (mu - 3·sigma)", "elo": "Elo", "points": "points"}


def _add_column(
    table: _Table, header: str, align: str, cells: list[tuple[str, Any]], *, at: int | None = None, csv_only: bool = False
) -> None:
    """Add a column to ``table``, each cell as (displayed text, csv value),
    at ``at`` or last.  A ``csv_only`` column goes after every other one of
    the csv, for programs (the text formats say it in the title or the rank)."""
    if csv_only:
        table.extra.append(header)
        for row, (_, value) in zip(table.values or [], cells):
            row.append(value)
        return
    place = len(table.headers) if at is None else at
    table.headers.insert(place, header)
    table.align.insert(place, align)
    for row, (text, _) in zip(table.rows, cells):
        row.insert(place, text)
    for row, (_, value) in zip(table.values or [], cells):
        row.insert(place, value)


def _place_ranges(standings: Standings) -> list[tuple[int, int]]:
    """Each bot's places as a range, as its rank shows them: a knockout's
    (3–4) where the places order the table, the places a shared rank covers
    (two bots at 3= share places 3 and 4), else (rank, rank)."""
    sharing: dict[int, int] = {}
    for bot in standings.bots:
        sharing[bot.rank] = sharing.get(bot.rank, 0) + 1
    by_place = standings.ranking == "points"
    return [bot.place if by_place and bot.place is not None else (bot.rank, bot.rank + sharing[bot.rank] - 1)
            for bot in standings.bots]


def _clock_cell(bot: BotStanding) -> str:
    """``10+0.1``, or each clock with its games when the bot played under several."""
    if len(bot.clocks) == 1:
        return next(iter(bot.clocks))
    return ", ".join(f"{clock} ({games})" for clock, games in sorted(bot.clocks.items(), key=lambda c: (-c[1], c[0])))


def _name_cell(bot: BotStanding) -> str:
    """The bot's name as the ranking shows it, marked when it plays from another machine."""
    return bot.name + REMOTE_MARK if bot.remote else bot.name


def _version_cell(bot: BotStanding) -> str:
    if not bot.versions:
        return "-"
    earlier = bot.earlier_games
    return f"{bot.version} (+{earlier} by earlier)" if earlier else str(bot.version)


def _reference_table(standings: Standings) -> _Table:
    refs = list(standings.reference)
    rows, values = [], []
    for rank, bot in enumerate(standings.entrants, start=1):
        cells = [standings.crosstable.get(bot.name, {}).get(ref, (0.0, 0)) for ref in refs]
        score, games = sum(s for s, _ in cells), sum(g for _, g in cells)
        pct = 100 * score / games if games else None
        rows.append([str(rank), bot.name, *(_h2h_cell(standings, bot.name, ref) for ref in refs),
                     f"{score:g}/{games}", _number(pct)])
        values.append([rank, bot.name, *(_h2h_value(standings, bot.name, ref) for ref in refs), score, pct])
    return _Table(
        "Against the reference bots (entrants ranked by score %)",
        ["#", "bot", *refs, "total", "score %"], rows, ["right", "left"] + ["right"] * (len(refs) + 2), "reference",
        values,
    )


def _opponents_table(standings: Standings) -> _Table:
    """A gauntlet's challenger against each opponent: what its games against
    that bot alone say (their game pairs), with ``≈`` where they do not
    separate the two either way."""
    challenger = standings.challenger
    rows, values = [], []
    for opponent in standings.opponents:
        m = opponent.match
        score = 100 * (m.wins + m.draws / 2) / m.games
        rows.append([opponent.name, str(m.games), str(m.wins), str(m.draws), str(m.losses), _number(score),
                     format_elo(m.elo), _margin(m.margin), _los_cell(m.los), str(m.penta.pairs)])
        values.append([opponent.name, m.games, m.wins, m.draws, m.losses, score, m.elo, m.margin, m.los, m.penta.pairs])
    return _Table(
        f"Gauntlet: {challenger} against each opponent (from {challenger}'s side; ≈: not separated)",
        ["opponent", "games", "W", "D", "L", "score %", "Elo diff", "±", "LOS", "pairs"],
        rows, ["left"] + ["right"] * 9, "opponents", values,
    )


def _match_table(match: MatchStatistics, names: tuple[str, str]) -> _Table:
    return _Table(
        f"Match: {names[0]} against {names[1]} (from {names[0]}'s side; Elo diff: {names[0]}'s Elo minus {names[1]}'s)",
        ["games", "W", "D", "L", "Elo diff", "±", "LOS", "draw ratio", "pairs", "LL", "LD", "WL+DD", "WD", "WW"],
        [[
            str(match.games), str(match.wins), str(match.draws), str(match.losses),
            format_elo(match.elo), _margin(match.margin), format_percent(match.los),
            format_percent(match.draw_ratio), str(match.penta.pairs), *(str(n) for n in match.penta.counts()),
        ]],
        ["right"] * 14,
        "match",
        [[match.games, match.wins, match.draws, match.losses, match.elo, match.margin, match.los, match.draw_ratio,
          match.penta.pairs, *match.penta.counts()]],
    )


#: What each SPRT model tests, as the SPRT table's title says it.
_SPRT_TITLES = {"normalized": "normalized Elo, game pairs", "logistic": "logistic Elo, game pairs",
                "bayesian": "BayesElo, the games of complete pairs"}


def _sprt_table(sprt: SprtStatus) -> _Table:
    c = sprt.config
    return _Table(
        f"SPRT ({_SPRT_TITLES[c.model]})",
        ["elo0", "elo1", "alpha", "beta", "LLR", "lower", "upper", "pairs", "verdict"],
        [[f"{c.elo0:g}", f"{c.elo1:g}", f"{c.alpha:g}", f"{c.beta:g}", f"{sprt.llr:.2f}",
          f"{c.lower:.2f}", f"{c.upper:.2f}", str(sprt.pairs), sprt.verdict_text]],
        ["right"] * 8 + ["left"],
        "sprt",
        [[c.elo0, c.elo1, c.alpha, c.beta, sprt.llr, c.lower, c.upper, sprt.pairs, sprt.verdict_text]],
    )


def _number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    # Adding 0.0 turns a negative zero after rounding into "0.0", not "-0.0".
    return f"{round(value, digits) + 0.0:.{digits}f}"


def _forfeits(forfeits: Mapping[str, int], none: str = "-") -> str:
    # Known reasons in the protocol's order, so columns read alike across bots.
    order = {reason: i for i, reason in enumerate(FORFEIT_REASONS)}
    reasons = sorted(forfeits, key=lambda r: (order.get(r, len(order)), r))
    return ", ".join(f"{reason} {forfeits[reason]}" for reason in reasons) or none


def _reason_columns(table: _Table, forfeits: list[Mapping[str, int]]) -> None:
    """A csv column per forfeit reason, every known one always, so that a gradebook's columns never move."""
    reasons = [*FORFEIT_REASONS, *sorted({r for f in forfeits for r in f} - set(FORFEIT_REASONS))]
    for reason in reasons:
        _add_column(table, f"forfeits_{reason}", "right", [("", f.get(reason, 0)) for f in forfeits], csv_only=True)


def _nodes_table(nodes: list[NodeTally]) -> _Table:
    """Each node's games, mean move time, forfeits, and the workers (Ray
    actors or local worker processes) that played there and their niceness;
    on a calibrated cluster, its speed and its games' clock scales."""
    def listed(values: set[int] | set[float], form: str = "{}") -> str:
        return ", ".join(form.format(value) for value in sorted(values))

    calibrated = any(t.speeds or t.scales for t in nodes)
    extra = ["speed", "time scale"] if calibrated else []
    table = _Table(
        f"Games by node ({len(nodes)} node{'' if len(nodes) == 1 else 's'})",
        ["node", "node id", "workers", "nice", *extra, "games", "ms/move", "forfeits"],
        [[t.host or NOT_RECORDED, (t.node_id or "-")[:NODE_ID_SHOWN], str(len(t.workers)), listed(t.nice) or "-",
          *([listed(t.speeds, "{:.2f}") or "-", listed(t.scales, "{:.2f}") or "-"] if calibrated else []),
          str(t.games), _number(t.mean_move_ms), _forfeits(t.forfeits)] for t in nodes],
        ["left", "left", "right", "right", *(["right"] * len(extra)), "right", "right", "left"],
        "nodes",
        [[t.host, t.node_id, len(t.workers), listed(t.nice), *([listed(t.speeds), listed(t.scales)] if calibrated else []),
          t.games, t.mean_move_ms, _forfeits(t.forfeits, "")]
         for t in nodes],
    )
    _reason_columns(table, [t.forfeits for t in nodes])
    return table


def _score(points: float) -> str:
    """Points as a chess table shows them: ``3``, ``2.5``, ``6.25``."""
    return f"{points:g}"


def _h2h_value(standings: Standings, row: str, col: str) -> float | None:
    if row == col:
        return None
    score, games = standings.crosstable[row][col]
    return score if games else None


def _h2h_cell(standings: Standings, row: str, col: str) -> str:
    if row == col:
        return "—"
    score, games = standings.crosstable[row][col]
    return f"{score:g}/{games}" if games else "-"


def _csv(table: _Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.headers + table.extra)
    if table.values is None:
        writer.writerows(table.rows)
    else:
        writer.writerows([_csv_value(value) for value in row] for row in table.values)
    return out.getvalue().rstrip("\n")


def _csv_value(value: Any) -> Any:
    """A number as a number (``repr``: every digit), nothing (``None``, an
    infinity, NaN) as an empty cell, a truth as ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value


def _html_page(standings: Standings, tables: list[_Table]) -> str:
    """``arena standings -f html``: ``tables`` (as :func:`_tables` makes them,
    not yet escaped) on a page of their own, drawn as the report draws them."""
    return render("standings_page.html", title=_title(standings),
                  no_games=_no_games(standings) if standings.total_games == 0 else "", tables=tables,
                  notes={t.key: table_notes(standings, t.key) for t in tables}, fold_above=HEAD_TO_HEAD_MAX_BOTS,
                  omitted=head_to_head_note(len(standings.bots)))


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
        "ranking": standings.ranking,
        "bots": [
            {
                "rank": bot.rank,
                "shared_rank": bot.shared_rank,
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
                "sonneborn_berger": bot.sonneborn_berger,
                "tied_score": bot.tied_score,
                "withdrawn": bot.withdrawn,
                "disqualified": bot.disqualified,
                "remote": bot.remote,
                "forfeits": dict(bot.forfeits),
                "moves": bot.moves,
                "move_ms": bot.move_ms,
                "mean_move_ms": bot.mean_move_ms,
                "elo": bot.elo,
                "elo_margin": bot.elo_margin,
                "los_next": bot.los_next,
                "version": bot.version,
                "versions": dict(bot.versions),
                "clocks": dict(bot.clocks),
                "bye_points": bot.bye_points,
                "points": bot.points,
                "buchholz": bot.buchholz,
                "place": None if bot.place is None else list(bot.place),
            }
            for bot in standings.bots
        ],
        "rounds": None if standings.rounds is None else _rounds_json(standings.rounds),
        "crosstable": {
            row: {col: {"score": score, "games": games} for col, (score, games) in _met(standings, row).items()}
            for row in standings.crosstable
        },
        "by_color": {color: {"games": t.games, "wins": t.wins, "draws": t.draws, "losses": t.losses,
                              "score_pct": t.score_pct} for color, t in standings.by_color.items()},
        "elo_method": ELO_METHOD,
        "elo_regularized": standings.elo_regularized,
        "match": None if standings.match is None else _match_json(standings.match, standings.match_bots),
        "sprt": None if standings.sprt is None else standings.sprt.to_json(),
        "reference": list(standings.reference),
        "entrants": [bot.name for bot in standings.entrants],
        "challenger": standings.challenger,
        "opponents": [{"opponent": o.name, **_match_json(o.match, (standings.challenger or "", o.name))}
                      for o in standings.opponents],
        "nodes": [{"host": t.host, "node_id": t.node_id, "workers": sorted(t.workers), "nice": sorted(t.nice),
                   "speeds": sorted(t.speeds), "time_scales": sorted(t.scales), "games": t.games, "moves": t.moves, "move_ms": t.move_ms, "mean_move_ms": t.mean_move_ms,
                   "forfeits": dict(t.forfeits)} for t in standings.nodes],
    }


def _met(standings: Standings, row: str) -> Mapping[str, tuple[float, int]]:
    """``row``'s cells of the crosstable against the bots it met."""
    table = standings.crosstable
    if isinstance(table, Crosstable):
        return table.met(row)
    return {col: cell for col, cell in table[row].items() if cell[1]}


def _rounds_json(rounds: Rounds) -> dict[str, Any]:
    return {
        "rule": rounds_rule(rounds),
        "finished": rounds.finished,
        "pairings": [p.to_json() for p in rounds.pairings],
        "stages": [
            {
                **state.stage.to_json(), "field": state.field, "rounds_paired": len(state.pairings),
                "total_rounds": state.total_rounds, "complete": state.complete,
                "results": [{"round": round_, "bots": [a, b], "score": [r.score[0], r.score[1]], "games": len(r.games),
                             "played": r.played, "counted": r.counted,
                             "forfeits": [{"bot": bot, "reason": reason} for bot, reason in r.forfeits]}
                            for (round_, a, b), r in state.results.items()],
                "byes": [{"round": p.round, "bot": bot, "points": BYE_SCORES[state.stage.bye] * 2}
                         for p in state.pairings for bot in p.byes] if state.stage.format in ("swiss", "round-robin") else [],
                "bracket": [[{"round": m.round, "bots": list(m.bots), "seeds": list(m.seeds), "score": list(m.score),
                              "game_pairs": m.pairs, "games": m.games, "winner": m.winner, "decided_by": m.decided_by}
                             for m in matches] for matches in state.matches],
                **(_adaptive_json(state) if state.stage.format == "adaptive" else {}),
            }
            for state in rounds.stages
        ],
    }


def _adaptive_json(state: StageState) -> dict[str, Any]:
    model = state.model
    assert model is not None
    return {
        "games_scheduled": state.spent, "settled": state.settled,
        "ratings": {b: model.elo[b] for b in state.in_play},
        "verdicts": [{"better": v.better, "worse": v.worse, "verdict": v.status, "p_order": v.p_order,
                      "p_tied": v.p_tied, "elo_diff": model.elo[v.better] - model.elo[v.worse],
                      "sd": math.sqrt(model.var_diff(v.better, v.worse))} for v in state.verdicts],
    }


def _match_json(match: MatchStatistics, names: tuple[str, str] | None) -> dict[str, Any]:
    p = match.penta
    return {
        "bots": list(names or ()), "games": match.games, "wins": match.wins, "draws": match.draws,
        "losses": match.losses, "model": match.model, "score": match.score, "elo": match.elo,
        "margin": match.margin, "los": match.los, "draw_ratio": match.draw_ratio, "pairs": p.pairs,
        "pentanomial": {"LL": p.ll, "LD": p.ld, "WL": p.wl, "DD": p.dd, "WD": p.wd, "WW": p.ww},
    }
