"""The protocol as a bot saw it (``debug: true``): every line the arena sent
the bot and every line the bot sent back, in one game's file,
``games/<game id>.protocol.log`` beside its stderr log::

    === game r1-a~b-g3: bot a, started 2026-11-23T17:00:00.123Z (arena clock, UTC); ms since then, > to the bot, < from it ===
          0.4 > {"type":"hello","protocol":1,...}
         31.9 < {"type":"ready","name":"a"}
    ...
    === game r1-a~b-g3: ended 2026-11-23T17:00:04.567Z; 41 lines sent, 40 received; 52311 bytes, 52311 kept ===

The arena writes it, not the bot, so a sandboxed bot's is the same as any
other's.  A line from the bot is kept byte for byte (its newline aside), as
it arrived: it is untrusted text, to pass through
:func:`arena.base.text.safe` before it is shown.  A game's file keeps its
first :data:`HEAD_BYTES` and last :data:`TAIL_BYTES` (a bot may send a
megabyte a line), with one line saying how much was dropped between them.

Only the thread playing the game writes here, so nothing is locked; with
debug off there is no log, and a bot's process looks at one attribute per line.
"""

from __future__ import annotations

import time
from pathlib import Path

from arena.bot.game_files import BoundedFile, GamesFolder
from arena.bot.stderr_log import GAME_LOGS_DIR, arena_time, game_log_path

__all__ = ["HEAD_BYTES", "TAIL_BYTES", "ProtocolLog", "protocol_log_path"]

#: A game's protocol log keeps the first this many bytes ...
HEAD_BYTES = 1024 * 1024
#: ... and the last this many.
TAIL_BYTES = 256 * 1024
#: How a line is marked: sent to the bot, received from it, the arena's note.
SENT, RECEIVED, NOTE = b" > ", b" < ", b" ! "


def protocol_log_path(bot_logs_dir: Path, game_id: str) -> Path:
    """The protocol log of game ``game_id`` in a bot's folder of logs.
    Raises ValueError for an id that is not a plain file name."""
    return game_log_path(bot_logs_dir, game_id).with_name(f"{game_id}.protocol.log")


class ProtocolLog:
    """One bot's protocol logs in one process of the arena, a file per game
    in ``bot_logs_dir``'s ``games`` folder, no link followed beneath
    ``root`` (the folder of every bot's logs).  Outside a game (between
    games, ``quit``) nothing is written."""

    def __init__(self, bot_logs_dir: Path, root: Path) -> None:
        self.bot_logs_dir = bot_logs_dir
        self._games = GamesFolder(root, bot_logs_dir / GAME_LOGS_DIR)
        self._game: BoundedFile | None = None
        self._game_id = ""
        self._start = 0.0
        self._sent = 0
        self._received = 0

    def begin_game(self, game_id: str, bot: str) -> None:
        """Log the lines that follow to game ``game_id``'s file (replaced if
        there is one).  Raises OSError when it cannot be made."""
        try:
            path = protocol_log_path(self.bot_logs_dir, game_id)
        except ValueError:
            return  # the stderr log refuses such an id too
        self.end_game()
        handle = self._games.create(path.name, buffered=True)
        try:
            handle.write(f"=== game {game_id}: bot {bot}, started {arena_time()} (arena clock, UTC); "
                         f"ms since then, > to the bot, < from it ===\n".encode())
        except OSError:
            handle.close()
            raise
        self._game = BoundedFile(handle, HEAD_BYTES, TAIL_BYTES, "protocol")
        self._game_id = game_id
        self._start = time.monotonic()
        self._sent = self._received = 0

    def sent(self, line: bytes) -> None:
        """``line`` (ending in a newline) was sent to the bot."""
        if self._game is not None:
            self._sent += 1
            self._write(SENT, line)

    def received(self, line: bytes) -> None:
        """``line`` (without its newline) came from the bot."""
        if self._game is not None:
            self._received += 1
            self._write(RECEIVED, line + b"\n")

    def note(self, text: str) -> None:
        """The arena's word on what it did with the bot's output (a line too long)."""
        if self._game is not None:
            self._write(NOTE, f"[{text}]\n".encode())

    def _write(self, mark: bytes, line: bytes) -> None:
        game = self._game
        assert game is not None
        try:
            game.write(b"%9.1f" % ((time.monotonic() - self._start) * 1000) + mark + line)
        except OSError:  # a full disk stops the log, never the game
            self._game = None
            game.handle.close()

    def end_game(self) -> None:
        """Close the game's file with its end line."""
        game, self._game = self._game, None
        if game is None:
            return
        try:
            kept = game.finish()
            game.handle.write(f"=== game {self._game_id}: ended {arena_time()}; {self._sent} lines sent, "
                              f"{self._received} received; {game.seen} bytes, {kept} kept ===\n".encode())
        except OSError:
            pass
        finally:
            try:
                game.handle.close()
            except OSError:
                pass

    def close(self) -> None:
        self.end_game()
        self._games.close()
