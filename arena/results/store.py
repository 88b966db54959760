"""The results directory of a tournament: the only writer of ``games.jsonl``.

Layout::

    DIR/games.jsonl       one GameRecord per line, written as each game ends (fsync'ed at most once a second)
    DIR/tournament.json   the tournament, as much as rebuilds its schedule (format, rounds, bots and versions, openings)
    DIR/replaced.jsonl    records replaced by games played again (--replay, --replay-forfeits), with why and when
    DIR/logs/             each bot's standard error
    DIR/scratch/          each bot's own directory (its HOME and TMPDIR), per worker; emptied when a run starts
    DIR/.lock             held by the one ``arena run`` writing here

Every file here is opened through :mod:`arena.bot.safe_files`: no link
below ``DIR`` is followed, only regular files are opened, reads are bounded
(:data:`MAX_GAMES_BYTES`; ``tournament.json``'s own reader bounds it the
same way), and anything else in a
file's place is a one-line :class:`StoreError` naming it.

Resuming reads ``games.jsonl`` back: a last line torn by a crash mid-write is
dropped with a warning (and cut off before the next append, so the file stays
one record per line); every complete line is kept.

Durability: each record is handed to the kernel with ``write`` before
``append`` returns, so once a game is counted it survives the arena being
killed in any way (``kill -9`` included): the kernel holds the data.  Only
what the kernel has not put on the disk yet can be lost, in a power cut or an
OS crash: a background thread runs ``fdatasync`` every
:data:`SYNC_INTERVAL_S` seconds while there is something new, and the run
syncs once more when it ends.  Such a crash so loses at most the games of
the last second or so (a torn last line included, which is dropped on load),
and resuming plays them again.  One fsync per game, in line, would cost more
than an instant game does.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import engine
from arena.bot import safe_files
from arena.bot.quota import empty_directory
from arena.bot.safe_files import RefusedFile
from arena.game.records import GameRecord, MAX_RECORD_BYTES, timestamp

__all__ = ["ResultsStore", "ResultsConflict", "StoreBusy", "StoreError", "LoadedResults", "CurrentRun", "current_run", "write_atomically"]

GAMES_FILE = "games.jsonl"
REPLACED_FILE = "replaced.jsonl"
LOGS_DIR = "logs"
SCRATCH_DIR = "scratch"
LOCK_FILE = ".lock"
#: How long a run waits for a reader's momentary probe of the lock to end.
LOCK_PATIENCE_S = 0.5
#: The most of ``games.jsonl`` (and of ``replaced.jsonl``) read: close to a
#: million games of a few kilobytes.  A bigger file is refused unread (a
#: sparse one claims any size for nothing).
MAX_GAMES_BYTES = 1 << 31
#: Longest time a record written to games.jsonl waits for its fdatasync.
SYNC_INTERVAL_S = 1.0


class ResultsConflict(Exception):
    """The results in a directory were made by a different tournament than the one asked for."""


class StoreBusy(Exception):
    """Another ``arena run`` is writing to the same directory."""


class StoreError(Exception):
    """The results directory cannot be written (read-only, full disk, a file
    in its place, a name too long...).  ``str()`` is one line naming the path
    and the cause; every record written before is kept."""


def store_error(exc: OSError, doing: str, path: Path) -> StoreError:
    if isinstance(exc, RefusedFile):
        return StoreError(f"cannot {doing} {exc.filename}: {exc.strerror}")
    if isinstance(exc, FileExistsError) or isinstance(exc, NotADirectoryError):
        return StoreError(f"cannot use {path} as the results directory: a file of that name is in the way")
    return StoreError(f"cannot {doing} {exc.filename or path}: {exc.strerror or exc}")


@dataclass
class LoadedResults:
    records: list[GameRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Byte offset where the complete lines end (a torn tail starts here).
    good_bytes: int = 0


class ResultsStore:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.games_path = self.directory / GAMES_FILE
        self.replaced_path = self.directory / REPLACED_FILE
        self.logs_dir = self.directory / LOGS_DIR
        self.scratch_dir = self.directory / SCRATCH_DIR
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._unsynced = False
        self._syncer: threading.Thread | None = None
        self._closing = threading.Event()

    # -- reading (safe at any time, also while a run is writing) -------------

    def load(self, game: str | None = None) -> LoadedResults:
        """Every readable record, with a warning naming the line of each one
        skipped: a line that is not a record :meth:`GameRecord.from_json`
        accepts (it checks every field), however it is broken, never raises.
        With ``game``, records of another game are skipped too."""
        result = LoadedResults()
        try:
            data = safe_files.read_file(self.directory, GAMES_FILE, MAX_GAMES_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return result
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                return result
            raise store_error(exc, "read", self.games_path) from None
        result.good_bytes = data.rfind(b"\n") + 1
        complete, tail = data[: result.good_bytes], data[result.good_bytes :]
        if tail.strip():
            result.warnings.append(
                f"{self.games_path}: dropped a torn last line ({len(tail)} bytes), left by an interrupted write"
            )
        seen: set[str] = set()
        for number, line in enumerate(complete.splitlines(), start=1):
            if not line.strip():
                continue
            if len(line) > MAX_RECORD_BYTES:  # not even parsed: no record is that long
                result.warnings.append(f"{self.games_path}:{number}: skipped an unreadable record "
                                       f"({len(line)} bytes, over the {MAX_RECORD_BYTES} a record can hold)")
                continue
            try:
                fields = json.loads(line)
                other = fields.get("game") if isinstance(fields, dict) else None
                if game in engine.GAMES and other in engine.GAMES and other != game:
                    result.warnings.append(f"{self.games_path}:{number}: skipped a record of another game ({other!r}); "
                                           f"these results are of {game}")
                    continue
                record = GameRecord.from_json(fields)
            except ValueError as exc:  # not JSON, or a field that cannot be right (from_json says which)
                result.warnings.append(f"{self.games_path}:{number}: skipped an unreadable record ({exc})")
                continue
            except (RecursionError, MemoryError) as exc:  # JSON nested deeper than the parser goes, or too big for it
                why = "nested too deeply to read" if isinstance(exc, RecursionError) else "too big to read"
                result.warnings.append(f"{self.games_path}:{number}: skipped an unreadable record ({why})")
                continue
            if record.game_id in seen:
                # Only a hand-merged file can hold a game twice; rating it twice would skew the table.
                result.warnings.append(f"{self.games_path}:{number}: skipped a second record of game {record.game_id!r}")
                continue
            seen.add(record.game_id)
            result.records.append(record)
        return result

    # -- writing (one run at a time) ----------------------------------------

    def open_for_run(self, game: str) -> LoadedResults:
        """Lock the directory, empty the bots' scratch directories of the
        last run (so that a disk a bot filled does not stay full), and
        return the records of ``game`` there.  Nothing else is written
        until :meth:`start_appending`: the run decides its plan from what
        this returns first (and may refuse the directory)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if not self.directory.is_dir():
                raise FileExistsError(errno.EEXIST, "File exists", str(self.directory))
            safe_files.make_dirs(self.directory, LOGS_DIR)
            self._lock()
        except OSError as exc:
            raise store_error(exc, "create", self.directory) from None
        # Under the lock: no other run's bots are using it.  A link in its
        # place is removed, so the bots' directories are made in a real one.
        empty_directory(self.scratch_dir)
        self._finish_replace()
        return self.load(game)

    def start_appending(self, loaded: LoadedResults) -> None:
        """Cut the torn tail :meth:`open_for_run` found and get ready to append."""
        try:
            self._fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            if os.fstat(self._fd).st_size != loaded.good_bytes:
                os.ftruncate(self._fd, loaded.good_bytes)
        except OSError as exc:
            raise store_error(exc, "write", self.games_path) from None
        self._closing.clear()
        self._syncer = threading.Thread(target=self._sync_every_interval, name="games-fsync", daemon=True)
        self._syncer.start()

    def replace(self, reasons: dict[str, str]) -> None:
        """Move the records of the games in ``reasons`` (game id to why) to
        ``replaced.jsonl``, to play those games again.  Nothing is deleted: each
        record goes to the archive as it was, with the reason and the time,
        and is synced there before ``games.jsonl`` is replaced without it
        (atomically).  The archive decides: a crash between the two leaves
        the record in both files, and the next :meth:`open_for_run` takes it
        out of ``games.jsonl``; doing it again does not archive it twice."""
        assert self._fd is not None, "open_for_run first"
        try:
            lines = safe_files.read_file(self.directory, GAMES_FILE, MAX_GAMES_BYTES).splitlines()
        except OSError as exc:
            raise store_error(exc, "read", self.games_path) from None
        moved = [line for line in lines if _game_id_of(line) in reasons]
        try:
            try:
                archived = safe_files.read_file(self.directory, REPLACED_FILE, MAX_GAMES_BYTES)
            except FileNotFoundError:
                archived = b""
            entries = b"".join(
                b'{"replaced_at":"%s","reason":%s,"record":%s}\n'
                % (timestamp().encode(), json.dumps(reasons[_game_id_of(line)]).encode(), line)
                for line in moved if b',"record":%s}\n' % line not in archived
            )
            if entries:
                if archived and not archived.endswith(b"\n"):
                    # A line torn by a crash in the middle of an earlier append:
                    # these entries start on a line of their own, readable.
                    entries = b"\n" + entries
                with open(safe_files.open_file(self.directory, REPLACED_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND),
                          "ab") as archive:
                    archive.write(entries)
                    os.fsync(archive.fileno())
        except OSError as exc:
            raise store_error(exc, "write", self.replaced_path) from None
        kept = [line + b"\n" for line in lines if _game_id_of(line) not in reasons]
        try:
            write_atomically(self.games_path, b"".join(kept))
            # The new file is open before the old one is let go: interrupted
            # in between (Ctrl-C, SIGTERM), _fd is still an open file, which
            # close() then closes once.
            fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_WRONLY | os.O_APPEND)
            old, self._fd = self._fd, fd
            os.close(old)
        except OSError as exc:
            raise store_error(exc, "write", self.games_path) from None

    def _finish_replace(self) -> None:
        """Finish a :meth:`replace` cut short between its two writes: a line
        of ``games.jsonl`` that ``replaced.jsonl`` holds, byte for byte, was
        archived to be played again, and leaves ``games.jsonl`` now (a torn
        last line stays, for :meth:`load` to find)."""
        try:
            archive = safe_files.read_file(self.directory, REPLACED_FILE, MAX_GAMES_BYTES)
            data = safe_files.read_file(self.directory, GAMES_FILE, MAX_GAMES_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise store_error(exc, "read", self.directory) from None
        # Each entry is {"replaced_at":...,"reason":...,"record":<the line as it was>}.
        archived = {entry.partition(b',"record":')[2][:-1] for entry in archive.splitlines()} - {b""}
        end = data.rfind(b"\n") + 1
        lines = data[:end].splitlines()
        kept = [line for line in lines if line not in archived]
        if len(kept) < len(lines):
            try:
                write_atomically(self.games_path, b"".join(line + b"\n" for line in kept) + data[end:])
            except OSError as exc:
                raise store_error(exc, "write", self.games_path) from None

    def append(self, record: GameRecord) -> None:
        """Write one record as one line.  When this returns the line is the
        kernel's and survives any death of this process; it reaches the disk
        within :data:`SYNC_INTERVAL_S` (see the module's doc)."""
        assert self._fd is not None, "open_for_run first"
        view = memoryview(record.to_line())
        start = os.fstat(self._fd).st_size
        try:
            while view:
                view = view[_write(self._fd, view):]
        except OSError as exc:
            # No half line left behind: cut back to the last whole record.
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                pass  # the next run drops the torn tail with a warning
            raise store_error(exc, "write", self.games_path) from None
        self._unsynced = True

    def _sync(self) -> None:
        # The flag is cleared first: a line written during the sync sets it
        # again and is synced the next time.
        if self._unsynced:
            self._unsynced = False
            os.fdatasync(self._fd)  # type: ignore[arg-type]

    def _sync_every_interval(self) -> None:
        while not self._closing.wait(SYNC_INTERVAL_S):
            try:
                self._sync()
            except OSError:
                self._unsynced = True  # e.g. EIO: tried again, and close() reports it

    def close(self) -> None:
        """Stop the sync thread, sync what is left, release the directory."""
        if self._syncer is not None:
            self._closing.set()
            try:
                self._syncer.join()
            except RuntimeError:  # a stop signal came while it was being started: it ends on _closing, if it runs
                pass
            self._syncer = None
        try:
            if self._fd is not None:
                try:
                    self._sync()
                except OSError as exc:
                    raise store_error(exc, "write", self.games_path) from None
                finally:
                    os.close(self._fd)
                    self._fd = None
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lock(self) -> None:
        fd = safe_files.open_file(self.directory, LOCK_FILE, os.O_WRONLY | os.O_CREAT)
        # A reader (arena standings --pending, arena serve) asks whether a run
        # is going by taking a shared lock for an instant: a run starting in
        # that instant waits it out rather than calling it another run.
        deadline = time.monotonic() + LOCK_PATIENCE_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise StoreBusy(f"another 'arena run' is writing to {self.directory}") from None
                time.sleep(0.01)
        # Who holds it and since when, for the readers (current_run).
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd



@dataclass(frozen=True)
class CurrentRun:
    """The ``arena run`` holding a results directory's lock."""

    #: Its pid (0 when the lock file does not say).
    pid: int
    #: When it took the lock (seconds since the epoch): files of the games in progress older than this are an earlier run's.
    since: float


def current_run(directory: Path) -> CurrentRun | None:
    """The run writing ``directory`` now, or None.  A shared lock is tried
    and let go at once: it never blocks, fails only while a run holds the
    lock, and a run starting in that instant waits it out."""
    try:
        fd = safe_files.open_file(directory, LOCK_FILE, os.O_RDONLY)
    except OSError:  # RefusedFile among them: no lock file, or not a regular file: no run of ours
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 32).decode("ascii", "replace").strip()
            return CurrentRun(int(text) if text.isdigit() and len(text) < 10 else 0, os.fstat(fd).st_mtime)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def _write(fd: int, data: memoryview) -> int:
    """``os.write``; the one place tests inject a full disk."""
    return os.write(fd, data)


def _game_id_of(line: bytes) -> str | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # a line load() skipped: no game of the run's
        return None
    game_id = value.get("game_id") if isinstance(value, dict) else None
    return game_id if isinstance(game_id, str) else None


def write_atomically(path: Path, data: str | bytes) -> None:
    """:func:`arena.bot.safe_files.write_atomically`, through :func:`_write`."""
    safe_files.write_atomically(path, data, _write)
