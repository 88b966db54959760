"""Where a bot's stderr goes: a file per game while a game is open, else the
log of the process of the arena that keeps the bot.

A :class:`StderrLog` belongs to one bot in one process of the arena (a
worker, an actor, the pre-flight) and outlives the bot's processes: when a
bot is killed mid-game and restarted, both processes write to it.  Between
:meth:`StderrLog.begin_game` and :meth:`StderrLog.end_game` what the bot
writes goes to that game's file (``games/<game id>.log`` beside the process
log), framed by two lines of the arena's own, with its clock (UTC)::

    === game r1-a~b-g3: bot a, started 2026-11-23T17:00:00.123Z (arena clock, UTC) ===
    ... the bot's stderr ...
    === game r1-a~b-g3: ended 2026-11-23T17:00:04.567Z; 1048576 bytes of stderr, 65536 kept ===

A chatty bot cannot fill the disk: a game's file keeps the first
:data:`GAME_HEAD_BYTES` and the last :data:`GAME_TAIL_BYTES` of what the bot
wrote in that game, with one line saying how many bytes were dropped between
them; once the bot's folder of logs holds :data:`BOT_BUDGET_BYTES`, a game's
file keeps only the last :data:`GAME_TAIL_BYTES_OVER_BUDGET` (the end is what
explains a crash); the folder is measured every 50 games of a worker (or
every twentieth of the files it holds, when more: a measure stats every
file, and a long run's folder holds a file per game) and counted in between,
so the workers together may go past the bound by a few of their games, or
by a twentieth of the folder for each other worker.  Outside a game the process log keeps at most
``max_default_bytes``, counted across restarts, as before.

The frame lines are the arena's: a bot writing a line that looks like one
cannot move the game's file, which is found by its name alone.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from arena.base import safe_files
from arena.bot.game_files import BoundedFile, GamesFolder

__all__ = [
    "BOT_BUDGET_BYTES", "GAME_HEAD_BYTES", "GAME_LOGS_DIR", "GAME_TAIL_BYTES", "GAME_TAIL_BYTES_OVER_BUDGET",
    "StderrLog", "arena_time", "game_log_path",
]

#: A game's file keeps the first this many bytes of the bot's stderr in that game ...
GAME_HEAD_BYTES = 32 * 1024
#: ... and the last this many.
GAME_TAIL_BYTES = 32 * 1024
#: Once the bot's folder of logs holds this much, a game keeps only its last
#: :data:`GAME_TAIL_BYTES_OVER_BUDGET` bytes.
BOT_BUDGET_BYTES = 32 * 1024 * 1024
GAME_TAIL_BYTES_OVER_BUDGET = 4 * 1024
#: The folder of the per-game files, inside a bot's folder of logs.
GAME_LOGS_DIR = "games"
#: Games between two measures of a bot's folder of logs ...
_RESCAN = 50
#: ... or its files over this, when more: a measure costs this many stats a game at most.
_RESCAN_STATS_PER_GAME = 20


def game_log_path(bot_logs_dir: Path, game_id: str) -> Path:
    """The file of game ``game_id``'s stderr in a bot's folder of logs.
    Raises ValueError for an id that is not a plain file name."""
    if not game_id or "/" in game_id or "\0" in game_id or game_id.startswith("."):
        raise ValueError(f"game id {game_id!r} cannot name a log file")
    return bot_logs_dir / GAME_LOGS_DIR / f"{game_id}.log"


def arena_time(now: datetime | None = None) -> str:
    """The arena's clock as the frame lines print it: ``2026-11-23T17:00:00.123Z``."""
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _folder_bytes(root: Path, directory: Path) -> tuple[int, int]:
    """Bytes in the files of ``directory`` and its ``games`` folder (one level
    each), ``directory`` being beneath ``root`` (no link followed there), and
    how many files hold them."""
    total = files = 0
    for folder in (directory, directory / GAME_LOGS_DIR):
        try:
            fd = safe_files.open_dir(root, folder.relative_to(root))
        except OSError:
            continue
        try:
            with os.scandir(fd) as entries:
                sizes = [e.stat(follow_symlinks=False).st_size for e in entries if e.is_file(follow_symlinks=False)]
            total += sum(sizes)
            files += len(sizes)
        except OSError:
            pass
        finally:
            os.close(fd)
    return total, files


class StderrLog:
    """A bot's stderr in one process of the arena: the process log at
    ``default_path`` (None: discarded) outside games, a file per game inside
    (see the module's docstring).  Thread-safe: the bot's drain thread writes,
    the thread playing the game begins and ends games.  A write that fails
    (disk full) stops that file, never the drain.

    ``root`` is the folder of every bot's logs (``logs/`` of a results
    directory; by default ``default_path``'s own folder): no link beneath it
    is followed and every file written there must be a regular one
    (:mod:`arena.base.safe_files`), else opening it raises
    :class:`~arena.base.safe_files.RefusedFile`."""

    def __init__(self, default_path: Path | None, max_default_bytes: int, root: Path | None = None) -> None:
        self.default_path = default_path
        self.max_default_bytes = max_default_bytes
        self.root = root if root is not None or default_path is None else default_path.parent
        self._lock = threading.Lock()
        self._default: IO[bytes] | None = None
        self._default_written = 0
        self._default_full = False
        self._game: BoundedFile | None = None
        self._game_id = ""
        self._used = 0
        self._rescan = 0
        #: The folder of the game files, opened by the first game.
        self._games = (GamesFolder(self.root, default_path.parent / GAME_LOGS_DIR)
                       if default_path is not None and self.root is not None else None)

    def open(self) -> None:
        """Open the process log to append, if it is not open.  Raises OSError."""
        with self._lock:
            if self._default is None and self.default_path is not None:
                self._default = self._open_to_append(self.default_path)
                # Counting from the current size caps the file across restarts of the arena.
                self._default_written = self._default.seek(0, os.SEEK_END)
                self._default_full = self._default_written >= self.max_default_bytes

    def write(self, chunk: bytes) -> None:
        with self._lock:
            try:
                if self._game is not None:
                    self._game.write(chunk)
                    return
                if self._default is None or self._default_full:
                    return
                part = chunk[: self.max_default_bytes - self._default_written]
                self._default.write(part)
                self._default_written += len(part)
                if len(part) < len(chunk):
                    self._default.write(f"\n[log truncated at {self.max_default_bytes} bytes]\n".encode())
                    self._default_full = True
            except OSError:
                self._close_game()  # e.g. disk full: keep draining, stop logging
                self._default_full = True

    def begin_game(self, game_id: str, bot: str) -> None:
        """Send what follows to game ``game_id``'s file (replaced: a game
        played again after an interruption keeps only the run it is stored
        from).  Raises OSError when the file cannot be made."""
        if self.default_path is None:
            return
        try:
            path = game_log_path(self.default_path.parent, game_id)
        except ValueError:
            return  # its stderr stays in the process log
        # The folder is measured every _RESCAN games, or every twentieth of its
        # files (other workers write to it too), and counted in between:
        # measuring it each game would cost a stat per file it holds, every
        # game, and every 50 games, at a million games, 20,000 stats a game.
        if self._rescan <= 0:
            self._used, files = _folder_bytes(self.root, self.default_path.parent)
            self._rescan = max(_RESCAN, files // _RESCAN_STATS_PER_GAME)
        self._rescan -= 1
        over_budget = self._used >= BOT_BUDGET_BYTES
        assert self._games is not None
        handle = self._games.create(path.name)
        with self._lock:
            self._close_game()
            try:
                handle.write(f"=== game {game_id}: bot {bot}, started {arena_time()} (arena clock, UTC) ===\n".encode())
                if over_budget:
                    handle.write(f"[this bot's logs hold {BOT_BUDGET_BYTES} bytes or more: this game keeps "
                                 f"only the last {GAME_TAIL_BYTES_OVER_BUDGET} bytes of its stderr]\n".encode())
            except OSError:
                handle.close()
                raise
            self._game = BoundedFile(handle, 0 if over_budget else GAME_HEAD_BYTES,
                                     GAME_TAIL_BYTES_OVER_BUDGET if over_budget else GAME_TAIL_BYTES, "stderr")
            self._game_id = game_id

    def end_game(self) -> None:
        """Close the game's file with its end line; what follows goes to the process log."""
        with self._lock:
            game, self._game = self._game, None
            if game is None:
                return
            try:
                kept = game.finish()
                text = f"=== game {self._game_id}: ended {arena_time()}; {game.seen} bytes of stderr, {kept} kept ===\n"
                # The end line starts a line of its own even after a bot's unfinished one.
                game.handle.write(text.encode() if game.ends_line else b"\n" + text.encode())
                self._used += game.handle.tell()
            except OSError:
                pass
            finally:
                game.handle.close()

    def _open_to_append(self, path: Path) -> IO[bytes]:
        """``path`` opened to append, its folders made as need be, no link beneath :attr:`root` followed."""
        assert self.root is not None
        fd = safe_files.open_file(self.root, path.relative_to(self.root), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                                  create_dirs=True)
        return open(fd, "ab", buffering=0)

    def close(self) -> None:
        with self._lock:
            self._close_game()
            if self._default is not None:
                self._default.close()
                self._default = None
            if self._games is not None:
                self._games.close()

    def _close_game(self) -> None:
        if self._game is not None:
            self._game.handle.close()
            self._game = None
