"""A results directory's games, a line each (``arena games``): the id
``arena show`` takes, the round, the players as seated, the result, why
it ended, its plies and its time; filtered by bot, opponent, result and
round; in every format of the standings (:data:`~arena.results.tables.OUTPUT_FORMATS`).

A directory can hold a hundred thousand games, so a line takes only what
the index gives of a record: ``len(record.moves)`` of a record read
through the index counts its moves without reading them.  The tables are
laid out here rather than by ``tabulate``, which takes seconds over that
many rows.  Every field of a record is text anyone who can write the
directory chose: each cell goes through :func:`arena.base.text.safe` for
its format, json is ASCII.  Pure: no I/O.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from arena.base.text import safe
from arena.game.records import GameRecord, schedule_key
from arena.results.pages import render
from arena.results.tables import OUTPUT_FORMATS

__all__ = ["RESULTS", "GameFilter", "GameRow", "render_games", "select_games"]

#: What ``--result`` takes: from ``--bot``'s side when one is named.
RESULTS = ("won", "lost", "draw", "forfeit")

_HEADERS = ["id", "round", "players", "result", "reason", "plies", "seconds", "ended"]
_RIGHT = {"round", "plies", "seconds"}
#: Where each format's cells go, as :func:`arena.base.text.safe` names it.
_DESTINATION = {"plain": "terminal", "github": "markdown", "csv": "csv"}


@dataclass(frozen=True)
class GameFilter:
    """Which games to list; None: any."""

    bot: str | None = None
    opponent: str | None = None
    result: str | None = None
    round: int | None = None

    def problem(self) -> str | None:
        """What is wrong with this filter, in one line, or None."""
        if self.result is not None and self.result not in RESULTS:
            return f"unknown result {self.result!r}; use one of {', '.join(RESULTS)}"
        if self.result in ("won", "lost") and self.bot is None:
            return f"--result {self.result} is from a bot's side: name it with --bot"
        return None

    def keeps(self, record: GameRecord) -> bool:
        names = record.players.values()
        if self.round is not None and record.round != self.round:
            return False
        if self.bot is not None and self.bot not in names:
            return False
        if self.opponent is not None and (self.opponent not in names or self.opponent == self.bot):
            return False
        if self.result is None:
            return True
        if self.result == "draw":
            return record.winner is None
        if self.result == "forfeit":
            by = record.name_of(record.forfeit_by)
            return by is not None and (self.bot is None or by == self.bot)
        won = record.name_of(record.winner) == self.bot
        return record.winner is not None and won == (self.result == "won")


@dataclass(frozen=True)
class GameRow:
    """One game as the listing shows it."""

    id: str
    round: int
    #: The bots in seat order: the first moved first.
    players: tuple[str, ...]
    #: ``1-0``, ``0-1`` or ``½-½`` in seat order; ``won``, ``lost`` or ``draw`` from a bot's side.
    result: str
    winner: str | None
    reason: str
    forfeit_by: str | None
    plies: int
    #: From its start to its end, None when either time is not one.
    seconds: float | None
    ended_at: str

    def cells(self) -> list[str]:
        reason = f"{self.reason} by {self.forfeit_by}" if self.forfeit_by is not None else self.reason
        seconds = "-" if self.seconds is None else f"{self.seconds:.1f}"
        # 2026-03-01T12:00:03.123+00:00 -> 2026-03-01 12:00:03 (the arena writes UTC).
        ended = self.ended_at[:19].replace("T", " ") if self.seconds is not None else self.ended_at
        return [self.id, str(self.round), " vs ".join(self.players), self.result, reason, str(self.plies), seconds, ended]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "round": self.round, "players": list(self.players), "result": self.result,
                "winner": self.winner, "reason": self.reason, "forfeit_by": self.forfeit_by, "plies": self.plies,
                "seconds": self.seconds, "ended_at": self.ended_at}


def select_games(records: Iterable[GameRecord], wanted: GameFilter) -> list[GameRow]:
    """The rows of the games of ``records`` that ``wanted`` keeps, in schedule order."""
    kept = sorted((r for r in records if wanted.keeps(r)), key=schedule_key)
    return [_row(record, wanted.bot) for record in kept]


def _row(record: GameRecord, side: str | None) -> GameRow:
    winner = record.name_of(record.winner)
    players = tuple(record.players.values())
    if side is not None:
        result = "draw" if winner is None else "won" if winner == side else "lost"
    else:
        result = "½-½" if winner is None else "1-0" if winner == players[0] else "0-1"
    return GameRow(record.game_id, record.round, players, result, winner, record.reason,
                   record.name_of(record.forfeit_by), len(record.moves), _seconds(record), record.ended_at)


def _seconds(record: GameRecord) -> float | None:
    if not record.started_at or not record.ended_at:
        return None
    try:
        return round((datetime.fromisoformat(record.ended_at) - datetime.fromisoformat(record.started_at)).total_seconds(), 3)
    except (ValueError, TypeError):  # a time edited into something else, or one naive and one not
        return None


def render_games(rows: Sequence[GameRow], fmt: str) -> str:
    """``rows`` in ``fmt``, one of :data:`OUTPUT_FORMATS`, without a trailing newline."""
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(OUTPUT_FORMATS)}")
    if fmt == "json":
        return json.dumps({"games": [row.to_json() for row in rows]}, indent=1, ensure_ascii=True)
    if fmt == "html":  # the template escapes what it writes
        return render("games_page.html", headers=_HEADERS, rows=[row.cells() for row in rows])
    where = _DESTINATION[fmt]
    # Names, reasons and numbers repeat from game to game: each is made safe once.
    shown: dict[str, str] = {}

    def cell(text: str) -> str:
        if (done := shown.get(text)) is None:
            done = shown[text] = safe(text, where)
        return done

    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["id", "round", "player_1", "player_2", "result", "winner", "reason", "forfeit_by", "plies",
                         "seconds", "ended_at"])
        writer.writerows(
            [cell(c) if isinstance(c, str) else "" if c is None else c
             for c in (row.id, row.round, *row.players, row.result, row.winner, row.reason, row.forfeit_by,
                       row.plies, row.seconds, row.ended_at)]
            for row in rows)
        return out.getvalue().rstrip("\n")
    if not rows:
        return "No games match."
    cells = [[cell(text) for text in row.cells()] for row in rows]
    return _aligned(cells, markdown=fmt == "github")


def _aligned(rows: list[list[str]], *, markdown: bool) -> str:
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(_HEADERS)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if h in _RIGHT else c.ljust(w) for c, w, h in zip(cells, widths, _HEADERS)]
        return "| " + " | ".join(padded) + " |" if markdown else "  ".join(padded).rstrip()

    rule = ("|" + "|".join("-" * (w + 1) + ":" if h in _RIGHT else "-" * (w + 2) for w, h in zip(widths, _HEADERS)) + "|"
            if markdown else "  ".join("-" * w for w in widths))
    return "\n".join([line(_HEADERS), rule, *map(line, rows)])
