"""Forfeits in plain words: what a bot did wrong, on which of its moves.

Pure functions of game records, for the lines under the standings and the
match summary: ``chatty  r1-chatty~greedy-g2  protocol_error on its 3rd move (ply 5):
not JSON: 'thinking...'``.  A detail quotes a bot and a record may be
forged: what a record says is written through :func:`arena.base.text.safe`
for the ``destination`` (a terminal, or Markdown under ``-f github``).
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.base.text import safe
from arena.game.records import GameRecord

__all__ = ["when_forfeited", "describe_forfeit", "forfeit_lines"]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def when_forfeited(record: GameRecord) -> str:
    """``on its 3rd move (ply 5)``, or when it happened outside the bot's turn."""
    if record.reason == "startup_failure":
        return "at start-up"
    seat = list(record.players).index(record.forfeit_by) if record.forfeit_by in record.players else 0
    plies = len(record.moves)
    # Both games alternate strictly: seat 0 plays the odd plies.
    if plies % 2 == seat:
        return f"on its {_ordinal(plies // 2 + 1)} move (ply {plies + 1})"
    return f"after ply {plies}, on the opponent's turn" if plies else "before the first move"


def describe_forfeit(record: GameRecord, destination: str = "terminal") -> str:
    """``timeout on its 3rd move (ply 5): no move after 151 ms, over ...``."""
    detail = safe(record.detail, destination) if record.detail else "no detail recorded"
    return f"{safe(record.reason, destination)} {when_forfeited(record)}: {detail}"


def forfeit_lines(
    records: Iterable[GameRecord], *, every: bool = False, hint: str = "", destination: str = "terminal",
) -> list[str]:
    """The forfeits of ``records`` (in schedule order), each bot's first one
    (``every``: all of them), as lines to print under a table; no lines when
    there is none.  ``hint`` follows the title when only the first of each
    bot is shown."""
    by_bot: dict[str, list[GameRecord]] = {}
    for record in records:
        if record.forfeit_by is not None:
            by_bot.setdefault(record.players[record.forfeit_by], []).append(record)
    if not by_bot:
        return []
    names = {bot: safe(bot, destination) for bot in by_bot}
    width = max(map(len, names.values()))
    lines = [safe("Forfeits" if every else f"Forfeits (the first of each bot{'; ' + hint if hint else ''})", destination)]
    for bot, forfeits in sorted(by_bot.items()):
        shown = forfeits if every else forfeits[:1]
        for record in shown:
            more = f"  (+{len(forfeits) - 1} more)" if not every and len(forfeits) > 1 else ""
            lines.append(f"  {names[bot]:<{width}}  {safe(record.game_id, destination)}  "
                         f"{describe_forfeit(record, destination)}{more}")
    return lines
