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
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import engine
from arena.game.positions import start_state
from arena.game.records import GameRecord

__all__ = ["INFO_CHARS", "games_data", "script_json"]

#: The most characters of one move's ``info`` the report keeps.
INFO_CHARS = 400


def games_data(
    game: engine.Game[Any], records: Sequence[GameRecord], bot_names: Sequence[str],
    tails: Mapping[str, Sequence[str | None]] | None = None, only_bot: str | None = None,
) -> dict[str, Any]:
    """The games of ``records`` (all of ``game``) in schedule order, ready for
    :func:`script_json`.  ``tails``: by game id, the end of each seat's
    stderr in that game (None for a seat whose log is not shown).
    ``only_bot``: for that bot's page, no other bot's forfeit detail or ``info``."""
    colors = game.colors
    bots = list(bot_names)
    bot_index = {name: i for i, name in enumerate(bots)}
    starts: list[dict[str, Any]] = []
    start_index: dict[str, int] = {}
    controls: list[dict[str, int]] = []
    openings: dict[str, int] = {}
    games = []
    for record in sorted(records, key=lambda r: (r.index, r.game_id)):
        state = start_state(record)
        start = {"cells": [cell for row in game.to_json(state)["board"] for cell in row], "ply": game.ply(state)}
        key = json.dumps(start)
        if key not in start_index:
            start_index[key] = len(starts)
            starts.append(start)
        opening = openings.setdefault(_opening_label(record), len(openings))
        if record.time_control not in controls:
            controls.append(record.time_control)
        players = []
        for color in colors:
            name = record.players[color]
            if name not in bot_index:
                bot_index[name] = len(bots)
                bots.append(name)
            players.append(bot_index[name])
        entry: dict[str, Any] = {
            "id": record.game_id,
            "i": record.index,
            "rd": record.round,
            "o": opening,
            "p": players,
            "w": _seat(colors, record.winner),
            "r": record.reason,
            "s": start_index[key],
            "tc": controls.index(record.time_control),
            "m": ",".join(m.move for m in record.moves),
            "t": [round(m.ms, 1) for m in record.moves],
        }
        if record.forfeit_by is not None:
            entry["f"] = _seat(colors, record.forfeit_by)
            if only_bot in (None, record.players[record.forfeit_by]):
                entry["d"] = record.detail or ""
        tail = (tails or {}).get(record.game_id)
        if tail and any(t is not None for t in tail):
            entry["e"] = list(tail)
        if record.scores is not None:
            entry["sc"] = [record.scores.get(color) for color in colors]
        first = game.to_move(state)
        notes = {
            str(ply): _info_text(m.info) for ply, m in enumerate(record.moves, start=1)
            if m.info is not None and only_bot in (None, record.players[colors[(first + ply - 1) % 2]])
        }
        if notes:
            entry["n"] = notes
        games.append(entry)
    return {
        "game": game.name, "colors": list(colors), "bots": bots, "starts": starts, "controls": controls,
        "openings": list(openings), "games": games,
    }


def script_json(data: Any) -> str:
    """JSON text safe inside ``<script type="application/json">``: no ``<`` at
    all, so neither ``</script>`` nor ``<!--`` in a bot's name or info can end
    it, and ASCII, so no text read from a results file (a lone surrogate
    among them) can stop the page being written; the script shows it all as
    text (``textContent``), never as markup."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c")


def _opening_label(record: GameRecord) -> str:
    """The start position's number, then the opening suite's moves if any: ``1: Xc5 c6, Od2 d1``."""
    return f"{record.opening}: {', '.join(record.opening_moves)}" if record.opening_moves else str(record.opening)


def _seat(colors: Sequence[str], color: str | None) -> int | None:
    return None if color is None else list(colors).index(color)


def _info_text(info: Any) -> str:
    text = json.dumps(info, separators=(", ", ": "), ensure_ascii=False)
    return text if len(text) <= INFO_CHARS else text[: INFO_CHARS - 1] + "…"
