"""A bot's stderr in one game, found in a results directory by the game's id,
and its protocol log when it had ``debug`` on.

The arena writes them to ``logs/<bot>/games/<game id>.log`` (see
:mod:`arena.bot.stderr_log`) and ``<game id>.protocol.log``
(:mod:`arena.bot.protocol_log`): this module is how everything else reads it
(``arena show``, the report).  What it returns is the file's text as the bot
wrote it, decoded leniently: untrusted, to pass through
:func:`arena.base.text.safe` before it is shown anywhere.  A log is read only
when it is a regular file reached through no link
(:mod:`arena.base.safe_files`): a link planted at it, or at a folder on the
way, is never followed into a page or a terminal.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Callable
from typing import BinaryIO

from arena.bot import protocol_log as _protocol
from arena.base import safe_files
from arena.base.safe_files import RefusedFile
from arena.bot.stderr_log import GAME_HEAD_BYTES, GAME_TAIL_BYTES, game_log_path
from arena.results.store import LOGS_DIR

__all__ = ["TAIL_LINES", "game_log", "game_log_file", "game_log_tail", "log_tail", "protocol_log", "protocol_log_file",
           "refused_note"]

#: The lines of a game's log that a tail shows (the viewer, ``arena show``).
TAIL_LINES = 20
#: The most a reader takes from one file: the arena never writes more than a
#: game's bound plus its frame lines; a larger file was not written by it.
_READ_MAX = GAME_HEAD_BYTES + GAME_TAIL_BYTES + 4096
#: The same for a protocol log (its frame lines and one note of what was dropped).
_PROTOCOL_READ_MAX = _protocol.HEAD_BYTES + _protocol.TAIL_BYTES + 4096


def _log_file(path_of: Callable[[Path, str], Path], results_dir: Path, bot: str, game_id: str) -> Path | None:
    """``path_of(bot's folder of logs, game_id)``, or None when the names
    cannot name a file there (a ``/`` in them)."""
    if not bot or "/" in bot or "\0" in bot or bot.startswith("."):
        return None
    try:
        return path_of(results_dir / LOGS_DIR / bot, game_id)
    except ValueError:
        return None


def game_log_file(results_dir: Path, bot: str, game_id: str) -> Path | None:
    """Where ``bot``'s stderr for ``game_id`` is in ``results_dir``, or None
    when the names cannot name a file there (a ``/`` in them)."""
    return _log_file(game_log_path, results_dir, bot, game_id)


def protocol_log_file(results_dir: Path, bot: str, game_id: str) -> Path | None:
    """Where ``bot``'s protocol log for ``game_id`` is in ``results_dir`` (as :func:`game_log_file`)."""
    return _log_file(_protocol.protocol_log_path, results_dir, bot, game_id)


def _open_log(results_dir: Path, bot: str, game_id: str, path: Path | None = None) -> BinaryIO | None:
    """The log (``path``, else the stderr's), open to read, None when there
    is none.  Raises :class:`RefusedFile` for a link or a special file on the way."""
    path = path or game_log_file(results_dir, bot, game_id)
    if path is None:
        return None
    try:
        return open(safe_files.open_file(results_dir, path.relative_to(results_dir), os.O_RDONLY), "rb")
    except RefusedFile:
        raise
    except OSError:
        return None


def game_log(results_dir: Path, bot: str, game_id: str) -> str | None:
    """``bot``'s stderr for game ``game_id`` with the arena's frame lines
    (at most :data:`_READ_MAX` bytes read), or None when there is none.
    Raises :class:`RefusedFile` where a link or a special file is in its
    place (see :func:`refused_note`)."""
    handle = _open_log(results_dir, bot, game_id)
    if handle is None:
        return None
    try:
        with handle:
            return handle.read(_READ_MAX).decode("utf-8", errors="replace")
    except OSError:
        return None


def protocol_log(results_dir: Path, bot: str, game_id: str) -> bytes | None:
    """``bot``'s protocol log of game ``game_id``, as the arena wrote it
    (the bot's lines byte for byte: untrusted), or None when there is none.
    Raises :class:`RefusedFile` as :func:`game_log`."""
    path = protocol_log_file(results_dir, bot, game_id)
    handle = _open_log(results_dir, bot, game_id, path) if path is not None else None
    if handle is None:
        return None
    try:
        with handle:
            return handle.read(_PROTOCOL_READ_MAX)
    except OSError:
        return None


def refused_note(exc: RefusedFile, results_dir: Path) -> str:
    """Why a log is not shown, naming what is in its place within ``results_dir``."""
    entry = exc.entry.relative_to(results_dir) if exc.entry.is_relative_to(results_dir) else exc.entry
    return f"not read: {entry} is {exc.what}; the arena reads only regular files in a results directory"


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
    refresh.  None when there is no log; :class:`RefusedFile` as
    :func:`game_log`."""
    handle = _open_log(results_dir, bot, game_id)
    if handle is None:
        return None
    try:
        with handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - 4 * chars))
            text = handle.read(4 * chars).decode("utf-8", errors="replace")
    except OSError:
        return None
    return log_tail(text, lines, chars)
