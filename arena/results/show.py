"""A recorded game replayed as text: the engine's board after each move, with
the move, the time it took and the bot's ``info``.  ``arena show`` prints
these frames; pure functions of a :class:`~arena.game.records.GameRecord`."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path

import engine
from arena.base.safe_files import RefusedFile
from arena.base.text import clean_text, safe
from arena.game.positions import positions
from arena.game.records import GameRecord
from arena.results.logs import TAIL_LINES, game_log, game_log_file, log_tail, protocol_log, protocol_log_file, refused_note

__all__ = ["find_game", "game_heading", "result_line", "frames", "stderr_tails", "protocol_logs"]

#: The most characters of a move's ``info`` shown on its line.
INFO_CHARS = 200
#: The most characters of a protocol log's line shown (a bot's line may be a megabyte).
PROTOCOL_LINE_CHARS = 10_000


def find_game(records: Sequence[GameRecord], game_id: str) -> GameRecord:
    """The record of ``game_id``; ``LookupError`` with a one-line message naming close ids otherwise."""
    for record in records:
        if record.game_id == game_id:
            return record
    ids = [record.game_id for record in records]
    close = difflib.get_close_matches(game_id, ids, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else f" ({len(ids)} games, e.g. {', '.join(ids[:3])})" if ids else ""
    raise LookupError(f"no game {game_id!r} in these results{hint}")


def game_heading(record: GameRecord) -> str:
    players = " vs ".join(f"{safe(name)} ({color})" for color, name in record.players.items())
    margins = "".join(f"; {safe(record.players[color])} granted {ms:g} ms a move for the network"
                      for color, ms in (record.network_margin_ms or {}).items())
    return f"{record.game} game {safe(record.game_id)}: {players}; round {record.round}, opening {record.opening}{margins}"


def result_line(record: GameRecord) -> str:
    return f"result: {result_text(record)}"


def result_text(record: GameRecord, detail: bool = True) -> str:
    """How the game ended, in words ("red (ann) wins by alignment"); the
    one wording of a result, which the report's viewer and the live view
    show as they get it.  ``detail``: with a forfeit's detail (a team's
    page leaves out another bot's)."""
    # What a record says is shown through safe(): a detail quotes a bot, and
    # a record may have been forged.
    scores = f" ({', '.join(f'{c} {s}' for c, s in record.scores.items())})" if record.scores else ""
    reason = safe(record.reason)
    if record.winner is None:
        return f"draw by {reason}{scores}"
    winner = f"{record.winner} ({safe(record.players[record.winner])}) wins"
    if record.forfeit_by is not None:
        said = f": {safe(record.detail)}" if record.detail and detail else ""
        return f"{winner}; {record.forfeit_by} ({safe(record.players[record.forfeit_by])}) forfeited by {reason}{said}"
    return f"{winner} by {reason}{scores}"


def frames(record: GameRecord) -> list[str]:
    """The start position, then one frame per move; the last frame ends with the result."""
    game = engine.get_game(record.game)
    states = positions(record)
    colors = list(record.players)
    first = game.to_move(states[0])
    opening = f" after the opening's moves {', '.join(map(safe, record.opening_moves))}" if record.opening_moves else ""
    out = [f"start position{opening}\n{game.render(states[0])}"]
    for ply, (move, state) in enumerate(zip(record.moves, states[1:]), start=1):
        color = colors[(first + ply - 1) % 2]
        line = f"move {ply}: {color} ({safe(record.players[color])}) played {safe(move.move)} in {move.ms:.1f} ms"
        if move.latency_ms is not None:
            line += f" (round trip {move.latency_ms:.0f} ms)"
        if move.info is not None:
            # A bot's info is untrusted: a control character (an escape
            # sequence among them) must not reach the terminal.
            line += f"\n  info: {clean_text(json.dumps(move.info, ensure_ascii=False), INFO_CHARS - 1, '…')}"
        out.append(f"{line}\n{game.render(state)}")
    out[-1] += "\n" + result_line(record)
    return out


def stderr_tails(record: GameRecord, results_dir: Path, lines: int = TAIL_LINES) -> str:
    """Each bot's stderr in this game, its last ``lines`` lines under the
    file's path (the forfeiting bot's first), or a line saying there is none;
    empty when no bot has a log of the game (results without their logs).
    What a bot wrote is untrusted: every line goes through :func:`safe`; a
    link or a special file in place of a log is not read, and said so."""
    names = list(dict.fromkeys(record.players.values()))
    if record.forfeit_by is not None:
        names.sort(key=lambda name: name != record.players[record.forfeit_by])
    out = []
    found = False
    for name in names:
        try:
            text = game_log(results_dir, name, record.game_id)
        except RefusedFile as exc:
            out.append(f"stderr of {safe(name)}: {safe(refused_note(exc, results_dir))}")
            found = True
            continue
        found = found or text is not None
        if text is None:
            out.append(f"stderr of {safe(name)}: no log of this game in {results_dir}")
            continue
        path = game_log_file(results_dir, name, record.game_id)
        tail = log_tail(text, lines)
        out.append(f"stderr of {safe(name)}, last {len(tail.splitlines())} lines ({safe(str(path))}):\n"
                   + "\n".join("  | " + safe(line, limit=300) for line in tail.splitlines()))
    return "\n".join(out) if found else ""


def protocol_logs(record: GameRecord, results_dir: Path) -> str | None:
    """Each bot's protocol log of this game (``debug``), under the file's
    path, every line through :func:`safe` (a bot's lines are untrusted);
    None when no bot of the game has one."""
    out = []
    for name in dict.fromkeys(record.players.values()):
        try:
            data = protocol_log(results_dir, name, record.game_id)
        except RefusedFile as exc:
            out.append(f"protocol of {safe(name)}: {safe(refused_note(exc, results_dir))}")
            continue
        if data is not None:
            lines = data.decode("utf-8", errors="replace").splitlines()
            out.append(f"protocol of {safe(name)} ({safe(str(protocol_log_file(results_dir, name, record.game_id)))}):\n"
                       + "\n".join(safe(line, limit=PROTOCOL_LINE_CHARS) for line in lines))
    return "\n\n".join(out) if out else None
