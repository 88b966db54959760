"""The games as the report's script reads them: one compact JSON object.

Each game keeps its moves, not its positions; the page replays the moves from
the game's start position (see ``viewer.js``), which costs a few bytes per
move instead of a whole board per ply.  Distinct start positions (after the
opening suite's moves, when there is a suite) are stored once in ``starts`` and
referred to by index, as are bot names, openings and time controls.  The
end of a bot's stderr in a game (``e``, by seat) is kept only where it is
shown: beside a forfeit, or every game of a bot's own page.  A bot's ``info`` is free-form and untrusted: it is kept as JSON text
cut to :data:`INFO_CHARS` characters, so a chatty bot cannot bloat the page.

A bot's own page is handed to its team: it holds that bot's ``info`` and
forfeit details only.  Another bot's forfeit shows its reason, not its
detail (which may quote that bot's stderr), and its moves no ``info``.

A large report (:func:`game_list`) holds each game's summary only, a few
dozen bytes in columns (``list``); the rest of a game (its moves, their
times and ``info``, the stderr ends: its *body*) is in files of at most
:data:`CHUNK_GAMES` games and :data:`CHUNK_PLIES` moves beside the page
(:class:`GameChunks`), which the page loads when a game is opened.  The same
rules decide what a body holds.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

import engine
from arena.game.positions import start_state
from arena.game.records import GameRecord, MoveRecord, schedule_key
from arena.results.game_index import LazyMoves, move_times_of
from arena.results.grade import GradeSheet
from arena.results.pages import SCRIPT_JSON
from arena.results.show import result_text

__all__ = ["BODY_VERSION", "CHUNK_GAMES", "CHUNK_PLIES", "INFO_CHARS", "GameChunks", "game_list", "games_data", "info_text",
           "script_json", "sheet_json"]

#: The most characters of one move's ``info`` the report keeps.
INFO_CHARS = 400
#: The most games, and moves, in one file of a large report's games: a file
#: is typically 250 KB; every move with a whole ``info`` makes it about 10 MB
#: (several times that if it is all escaped non-ASCII), never more.
CHUNK_GAMES = 500
CHUNK_PLIES = 20_000
#: Changes with what a file of games holds of each game: the files of another version are not taken for this one's.
BODY_VERSION = 2

#: By game id, the end of each seat's stderr in that game (None for a seat whose log is not shown).
Tails = Mapping[str, Sequence[str | None]]


class _Tables:
    """What the games' entries refer to by number: bots, start positions,
    time controls, openings (``first``: the seat to move at each start)."""

    def __init__(self, game: engine.Game[Any], bot_names: Sequence[str]) -> None:
        self.game = game
        self.bots = list(bot_names)
        self._bot_index = {name: i for i, name in enumerate(self.bots)}
        self.starts: list[dict[str, Any]] = []
        self.first: list[int] = []
        self._start_index: dict[str, int] = {}
        # Most games share a handful of openings: each is played out once.
        self._opening_start: dict[tuple[int, tuple[str, ...]], int] = {}
        self.controls: list[dict[str, int]] = []
        self.openings: dict[str, int] = {}

    def start(self, record: GameRecord) -> int:
        key = (record.opening, tuple(record.opening_moves))
        if key not in self._opening_start:
            state = start_state(record)
            start = {"cells": [cell for row in self.game.to_json(state)["board"] for cell in row],
                     "ply": self.game.ply(state)}
            text = json.dumps(start)
            if text not in self._start_index:
                self._start_index[text] = len(self.starts)
                self.starts.append(start)
                self.first.append(self.game.to_move(state))
            self._opening_start[key] = self._start_index[text]
        return self._opening_start[key]

    def bot(self, name: str) -> int:
        if name not in self._bot_index:
            self._bot_index[name] = len(self.bots)
            self.bots.append(name)
        return self._bot_index[name]

    def summary(self, record: GameRecord, only_bot: str | None) -> dict[str, Any]:
        """The game as the list shows it, without its moves."""
        colors = self.game.colors
        if record.time_control not in self.controls:
            self.controls.append(record.time_control)
        entry: dict[str, Any] = {
            "id": record.game_id,
            "i": record.index,
            "rd": record.round,
            "o": self.openings.setdefault(_opening_label(record), len(self.openings)),
            "p": [self.bot(record.players[color]) for color in colors],
            "w": _seat(colors, record.winner),
            "r": record.reason,
            "s": self.start(record),
            "tc": self.controls.index(record.time_control),
        }
        if record.forfeit_by is not None:
            entry["f"] = _seat(colors, record.forfeit_by)
            if only_bot in (None, record.players[record.forfeit_by]):
                entry["d"] = record.detail or ""
        if record.scores is not None:
            entry["sc"] = [record.scores.get(color) for color in colors]
        return entry

    def body(self, record: GameRecord, moves: Sequence[MoveRecord], tail: Sequence[str | None] | None,
             only_bot: str | None) -> dict[str, Any]:
        """The rest of the game: its moves, their times and ``info``, the stderr ends shown, and its
        result in words (the forfeit's detail is the summary's ``d``, which a team's page keeps for its own)."""
        colors = self.game.colors
        entry: dict[str, Any] = {"m": ",".join(m.move for m in moves), "t": [round(m.ms, 1) for m in moves],
                                 "rt": result_text(record, detail=False)}
        if tail and any(t is not None for t in tail):
            entry["e"] = list(tail)
        first = self.first[self.start(record)]
        notes = {
            str(ply): info_text(m.info) for ply, m in enumerate(moves, start=1)
            if m.info is not None and only_bot in (None, record.players[colors[(first + ply - 1) % 2]])
        }
        if notes:
            entry["n"] = notes
        return entry

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game.name, "colors": list(self.game.colors), "bots": self.bots, "starts": self.starts,
                "controls": self.controls, "openings": list(self.openings)}


def games_data(
    game: engine.Game[Any], records: Sequence[GameRecord], bot_names: Sequence[str],
    tails: Tails | None = None, only_bot: str | None = None,
) -> dict[str, Any]:
    """The games of ``records`` (all of ``game``) in schedule order, every
    one whole, ready for :func:`script_json`.  ``tails``: by game id, the end
    of each seat's stderr in that game (None for a seat whose log is not
    shown).  ``only_bot``: for that bot's page, no other bot's forfeit detail or ``info``."""
    tables = _Tables(game, bot_names)
    games = [{**tables.summary(record, only_bot), **tables.body(record, record.moves, (tails or {}).get(record.game_id),
                                                               only_bot)}
             for record in sorted(records, key=schedule_key)]
    return {**tables.to_json(), "games": games}


class GameChunks:
    """The bodies of a large report's games, in files of consecutive rows of
    its list: file ``k`` holds the rows from ``starts[k]``.  Each file is a
    script that hands its games to the page's script, so that a page opened
    from disk loads it as it loads any script (a browser fetches no file
    from a ``file://`` page).  Its name, ``0007-<digest>.js``, holds a
    digest of what makes its games' bodies (their ids and move times, whose
    page it is, whether stderr ends are read), without reading a move: a
    page loads only files made for its games, and a file already written
    under its name holds what it would be written with (whatever rows those
    games are at), so it is kept."""

    def __init__(self, tables: _Tables, records: Sequence[GameRecord], starts: Sequence[int], only_bot: str | None,
                 tails: Callable[[Sequence[GameRecord]], Tails] | None) -> None:
        self._tables = tables
        #: The games, in the list's order (row by row).
        self.records = records
        self.starts = list(starts)
        self._only_bot = only_bot
        self._tails = tails
        self.names = [self._name(number) for number in range(len(self.starts))]

    def __len__(self) -> int:
        return len(self.starts)

    def _rows(self, number: int) -> Sequence[GameRecord]:
        end = self.starts[number + 1] if number + 1 < len(self.starts) else len(self.records)
        return self.records[self.starts[number]:end]

    def _name(self, number: int) -> str:
        digest = hashlib.sha256(repr((BODY_VERSION, self._only_bot, self._tails is not None)).encode())
        for record in self._rows(number):
            digest.update(repr((record.game_id, tuple(move_times_of(record)))).encode())
        return f"{number:04d}-{digest.hexdigest()[:16]}.js"

    def script(self, number: int) -> str:
        """File ``number``: its games' bodies, each game read from the results once."""
        records = self._rows(number)
        tails = self._tails(records) if self._tails is not None else {}
        bodies = [self._tables.body(r, _moves_read_once(r), tails.get(r.game_id), self._only_bot) for r in records]
        # Named, not placed: the page puts the games at the rows it has for that name.
        return f"arenaReport.games({script_json({'name': self.names[number], 'games': bodies})});\n"


def game_list(
    game: engine.Game[Any], records: Sequence[GameRecord], bot_names: Sequence[str], only_bot: str | None = None, *,
    chunk_games: int = CHUNK_GAMES, chunk_plies: int = CHUNK_PLIES,
    tails: Callable[[Sequence[GameRecord]], Tails] | None = None,
) -> tuple[dict[str, Any], GameChunks]:
    """The games of ``records`` as a large report holds them: their summaries
    in columns (``list``, see :func:`games_data` for the fields), each read
    without its moves, and the files of their bodies.  ``tails``: the stderr
    ends of some records, read when their file is written (None: none)."""
    tables = _Tables(game, bot_names)
    ordered = sorted(records, key=schedule_key)
    columns: dict[str, list[Any]] = {key: [] for key in
                                     ("id", "i", "rd", "o", "p0", "p1", "w", "r", "s", "tc", "l", "bt")}
    reasons: dict[str, int] = {}
    scores: list[Any] = []
    extra: dict[str, dict[str, Any]] = {}
    starts: list[int] = []
    previous = {"id": "", "i": 0, "rd": 0}
    plies = 0
    for row, record in enumerate(ordered):
        entry = tables.summary(record, only_bot)
        times = move_times_of(record)
        if not starts or row - starts[-1] >= chunk_games or plies + len(times) > chunk_plies:
            starts.append(row)
            plies = 0
        plies += len(times)
        # Neighbours share most of their id and count up: each is written as what changes.
        shared = len(os.path.commonprefix([previous["id"], entry["id"]]))
        columns["id"].append(f"{shared}:{entry['id'][shared:]}")
        for key in ("i", "rd"):
            columns[key].append(entry[key] - previous[key])
        previous = entry
        for key in ("o", "s", "tc"):
            columns[key].append(entry[key])
        columns["p0"].append(entry["p"][0])
        columns["p1"].append(entry["p"][1])
        columns["w"].append(-1 if entry["w"] is None else entry["w"])
        columns["r"].append(reasons.setdefault(entry["r"], len(reasons)))
        columns["l"].append(len(times))
        columns["bt"].append(round(sum(times) / 10))  # hundredths of a second, as the list shows it
        scores.append(entry.get("sc"))
        if "f" in entry:
            extra[str(row)] = {key: entry[key] for key in ("f", "d") if key in entry}
    if any(s is not None for s in scores):
        columns["sc"] = scores
    listed = {**columns, "reasons": list(reasons), "extra": extra}
    return {**tables.to_json(), "list": listed}, GameChunks(tables, ordered, starts, only_bot, tails)


def sheet_json(sheet: GradeSheet, rows: Mapping[str, int], colors: Sequence[str]) -> dict[str, Any]:
    """A large report's grade sheet: :meth:`GradeSheet.to_json` but for its
    rounds, in ``lines`` of arrays that name each game by its row in the
    list: ``[round, opponent, score, opponent's score, status, note, [row,
    seat, score, row, seat, score, ...]]`` (a few bytes a game, not a hundred)."""
    out: dict[str, Any] = {f.name: getattr(sheet, f.name) for f in fields(sheet)
                           if f.name not in ("rounds", "opponents")}
    out["opponents"] = [asdict(line) for line in sheet.opponents]
    out["summary"] = sheet.summary()
    out["lines"] = [[line.round, line.opponent, _number(line.score[0]), _number(line.score[1]), line.status, line.note,
                     [n for g in line.games for n in (rows[g.id], list(colors).index(g.color), _number(g.score))]]
                    for line in sheet.rounds]
    return out


def script_json(data: Any) -> str:
    """JSON text safe inside a script, as the page's ``|tojson`` writes it
    (:data:`arena.results.pages.SCRIPT_JSON`): no ``<``, ``>``, ``&`` or
    ``'`` at all, so neither ``</script>`` nor ``<!--`` in a bot's name or
    info can end it, and ASCII, so no text read from a results file (a lone
    surrogate among them) can stop the page being written; the script shows
    it all as text (``textContent``), never as markup."""
    from jinja2.utils import htmlsafe_json_dumps  # (Jinja2 loaded only by what writes a page: see arena.results.pages)

    return str(htmlsafe_json_dumps(data, **SCRIPT_JSON))


def _moves_read_once(record: GameRecord) -> Sequence[MoveRecord]:
    """The record's moves; moves read through the index are not kept in the
    record (a copy of its reader reads them), else writing every file of a
    large report would hold every game's moves at once."""
    moves = record.moves
    return copy.copy(moves).load() if isinstance(moves, LazyMoves) else moves


def _number(value: float | None) -> float | int | None:
    """``value`` written as an integer when it is one: ``2``, not ``2.0``."""
    return int(value) if value is not None and float(value).is_integer() else value


def _opening_label(record: GameRecord) -> str:
    """The start position's number, then the opening suite's moves if any: ``1: Xc5 c6, Od2 d1``."""
    return f"{record.opening}: {', '.join(record.opening_moves)}" if record.opening_moves else str(record.opening)


def _seat(colors: Sequence[str], color: str | None) -> int | None:
    return None if color is None else list(colors).index(color)


def info_text(info: Any) -> str:
    """A bot's ``info`` as the viewer shows it: JSON text, cut to :data:`INFO_CHARS`."""
    text = json.dumps(info, separators=(", ", ": "), ensure_ascii=False)
    return text if len(text) <= INFO_CHARS else text[: INFO_CHARS - 1] + "…"
