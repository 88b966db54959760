"""A bot's stderr in one game, found in a results directory by the game's id.

The arena writes it to ``logs/<bot>/games/<game id>.log`` (see
:mod:`arena.bot.stderr_log`): this module is how everything else reads it
(``arena show``, the report).  What it returns is the file's text as the bot
wrote it, decoded leniently: untrusted, to pass through
:func:`arena.bot.text.safe` before it is shown anywhere.
"""

from __future__ import annotations

from pathlib import Path

from arena.bot.stderr_log import GAME_HEAD_BYTES, GAME_TAIL_BYTES, game_log_path
from arena.results.store import LOGS_DIR

__all__ = ["TAIL_LINES", "game_log", "game_log_file", "game_log_tail", "log_tail"]

#: The lines of a game's log that a tail shows (the viewer, ``arena show``).
TAIL_LINES = 20
#: The most a reader takes from one file: the arena never writes more than a
#: game's bound plus its frame lines; a larger file was not written by it.
_READ_MAX = GAME_HEAD_BYTES + GAME_TAIL_BYTES + 4096


def game_log_file(results_dir: Path, bot: str, game_id: str) -> Path | None:
    """Where ``bot``'s stderr for ``game_id`` is in ``results_dir``, or None
    when the names cannot name a file there (a ``/`` in them) or there is none."""
    if not bot or "/" in bot or "\0" in bot or bot.startswith("."):
        return None
    try:
        path = game_log_path(results_dir / LOGS_DIR / bot, game_id)
    except ValueError:
        return None
    return path if path.is_file() else None


def game_log(results_dir: Path, bot: str, game_id: str) -> str | None:
    """``bot``'s stderr for game ``game_id`` with the arena's frame lines
    (at most :data:`_READ_MAX` bytes read), or None when there is none."""
    path = game_log_file(results_dir, bot, game_id)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(_READ_MAX).decode("utf-8", errors="replace")
    except OSError:
        return None


def log_tail(text: str, lines: int = TAIL_LINES, chars: int = 4000) -> str:
    """The last ``lines`` lines of ``text``, at most ``chars`` characters:
    whole lines, but for a last line longer than ``chars`` (its end kept)."""
    kept: list[str] = []
    size = 0
    for line in reversed(text.splitlines()[-lines:]):
        if kept and size + len(line) + 1 > chars:
            break
        kept.append(line[-chars:])
        size += len(line) + 1
    return "\n".join(reversed(kept))


def game_log_tail(results_dir: Path, bot: str, game_id: str, lines: int = TAIL_LINES, chars: int = 2000) -> str | None:
    """The end of ``bot``'s stderr for game ``game_id`` (its last ``lines``
    lines, at most ``chars`` characters, the end frame line included), read
    from the end of the file only: the report takes one per forfeit on every
    refresh.  None when there is no log."""
    path = game_log_file(results_dir, bot, game_id)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - 4 * chars))
            text = handle.read(4 * chars).decode("utf-8", errors="replace")
    except OSError:
        return None
    return log_tail(text, lines, chars)
