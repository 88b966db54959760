"""The results directory of a tournament: the only writer of ``games.jsonl``.

Layout::

    DIR/games.jsonl       one GameRecord per line, written as each game ends (fsync'ed at most once a second)
    DIR/tournament.json   the tournament, as much as rebuilds its schedule (format, rounds, bots and versions, openings)
    DIR/replaced.jsonl    records replaced by games played again (--replay, --replay-forfeits), with why and when
    DIR/index.sqlite      what readers need of games.jsonl, derived from it (:mod:`arena.results.game_index`)
    DIR/logs/             each bot's standard error
    DIR/scratch/          each bot's own directory (its HOME and TMPDIR), per worker; emptied when a run starts
    DIR/.lock             held by the one ``arena run`` writing here

Every file here is opened through :mod:`arena.base.safe_files`: no link
below ``DIR`` is followed, only regular files are opened, and anything else
in a file's place is a one-line :class:`StoreError` naming it.  The logs of
games are never read whole: streamed a line at a time (:mod:`arena.results.game_log`),
whatever their size, a reader holds one line of at most
:data:`~arena.game.records.MAX_RECORD_BYTES`.

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
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import engine
from arena.base import safe_files
from arena.bot.quota import empty_directory
from arena.base.safe_files import RefusedFile
from arena.base.stop_signals import check
from arena.game.records import GameRecord, MAX_RECORD_BYTES, timestamp
from arena.results.game_index import (INDEX_FILE, GameIndex, IndexedLine, IndexMoved, IndexUnusable, LazyMoves, LogPlace,
                                      Shared, indexed, move_times_of, record_of)
from arena.results.game_log import CHUNK_BYTES, LogLine, LogLines, last_lines
from arena.results.judged_lines import JudgedLines

__all__ = ["ResultsStore", "ResultsConflict", "StoreBusy", "LogRewritten", "StoreError", "LoadedResults", "CurrentRun", "TakeGame",
           "current_run", "write_atomically"]

GAMES_FILE = "games.jsonl"
REPLACED_FILE = "replaced.jsonl"
LOGS_DIR = "logs"
SCRATCH_DIR = "scratch"
LOCK_FILE = ".lock"
#: How long a run waits for a reader's momentary probe of the lock to end.
LOCK_PATIENCE_S = 0.5
#: How many new lines of games.jsonl are parsed before they are added to its index.
INDEX_BATCH = 10_000
#: Longest time a record written to games.jsonl waits for its fdatasync.
SYNC_INTERVAL_S = 1.0


#: A reader of games that takes a record from what the index holds of its
#: line (a row of :meth:`GameIndex.games`), the record not made: True when
#: it took it, False for the record to be made and handed on.
TakeGame = Callable[[tuple[Any, ...]], bool]


class ResultsConflict(Exception):
    """The results in a directory were made by a different tournament than the one asked for."""


class LogRewritten(Exception):
    """The log no longer starts as an earlier read found it (a ``--replay``
    rewrote it, a hand cut or replaced it): it is read again from the start."""


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
    #: Where the read ended, to read on from there (see :meth:`ResultsStore.load`).
    place: LogPlace | None = None
    #: The warning of a torn last line (also in :attr:`warnings`), if any.
    torn: str | None = None
    #: The games read before (a second record of one is skipped too).
    seen_before: Container[str] = frozenset()
    #: Where each record goes instead of :attr:`records`, which then keeps
    #: none (nor their ids: ``seen_before`` is the sink's, kept up to date).
    into: Callable[[GameRecord], None] | None = field(default=None, repr=False)
    #: With :attr:`into`, what is offered each record of the index first, before it is made (see :data:`TakeGame`).
    take: TakeGame | None = field(default=None, repr=False)
    _seen: set[str] = field(default_factory=set, repr=False)
    _handed: bool = field(default=False, repr=False)
    #: The values the records held repeat, held once (a reader taking each record as it comes holds none).
    _shared: Shared = field(default_factory=Shared, repr=False)

    def line_warnings(self, directory: Path) -> list[str]:
        """The warnings of the lines read from the log in ``directory``: not
        those of the read itself (the index rebuilt, said once; a torn last
        line, which may be whole later)."""
        return [w for w in self.warnings if not w.startswith(rebuilt_note(directory)) and w != self.torn]

    def rebuilt(self, directory: Path) -> list[str]:
        """The warning of the index of ``directory`` rebuilt by this read, if it was."""
        return [w for w in self.warnings if w.startswith(rebuilt_note(directory))]

    def anew(self) -> LoadedResults:
        """An empty read asked as this one (a read started again)."""
        return LoadedResults(seen_before=self.seen_before, into=self.into, take=self.take)

    @property
    def handed(self) -> bool:
        """Whether a record went :attr:`into` its reader already."""
        return self._handed

    def add(self, record: GameRecord, log: Path, number: int) -> None:
        """Take ``record``, read from line ``number`` of ``log`` (a second record of a game is skipped, and said)."""
        if record.game_id in self._seen or record.game_id in self.seen_before:
            # Only a hand-merged file can hold a game twice; rating it twice would skew the table.
            self.warnings.append(f"{log}:{number}: skipped a second record of game {record.game_id!r}")
            return
        if self.into is not None:
            self._handed = True
            self.into(record)
            return
        self._seen.add(record.game_id)
        self.records.append(self._shared.record(record))


def rebuilt_note(directory: Path) -> str:
    """How the warning of the index of ``directory`` rebuilt begins."""
    return f"{directory / INDEX_FILE}: rebuilt"


#: The most of the log's end :meth:`ResultsStore.last_records` reads (thousands of records of a few KB).
LAST_BYTES = 64 << 20


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

    def load(self, game: str | None = None, *, since: LogPlace | None = None, seen: Container[str] = frozenset(),
             into: Callable[[GameRecord], None] | None = None, take: TakeGame | None = None) -> LoadedResults:
        """Every readable record, with a warning naming the line of each one
        skipped: a line that is not a record :meth:`GameRecord.from_json`
        accepts (it checks every field), however it is broken, never raises.
        A stop signal raises :class:`~arena.base.stop_signals.Stopped` between two lines
        (a long log is read by a run before its first game).
        With ``game``, records of another game are skipped too.
        ``since`` (where an earlier read ended): only the lines added after
        it, a game of ``seen`` (read before) skipped as read twice;
        :class:`LogRewritten` when the log no longer starts as it was read.
        ``into`` takes each record as it is read, in the log's order (and
        may raise to stop the read), instead of the records returned: a
        reader of a million games need not hold them.  ``take`` (with
        ``into``) is offered what the index holds of each record's line
        first, and the record is made only when it does not take it (see
        :data:`TakeGame`): a reader of a million games need not make them."""
        result = LoadedResults()
        try:
            fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            if since is not None:
                raise LogRewritten() from None
            return result
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                return result
            raise store_error(exc, "read", self.games_path) from None
        try:
            if since is not None and not since.still_in(fd):
                raise LogRewritten()
            return self._load(fd, game, since, LoadedResults(seen_before=seen, into=into, take=take))
        except OSError as exc:
            raise store_error(exc, "read", self.games_path) from None
        finally:
            os.close(fd)

    def last_records(self, place: LogPlace, count: int, game: str | None = None) -> list[GameRecord]:
        """The records of the last ``count`` lines of the log as a read that
        ended at ``place`` found it, read from there backward (at most
        :data:`LAST_BYTES`), not from the start: the latest games, for a
        page that shows no more.  A line that is not a record for a reader
        of ``game`` is skipped as :meth:`load` skips it (without a
        warning: the read that ended at ``place`` gave them);
        :class:`LogRewritten` when the log no longer starts as it was read."""
        try:
            fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_RDONLY)
        except OSError as exc:
            raise LogRewritten() from exc
        try:
            if not place.still_in(fd):
                raise LogRewritten()
            records = []
            for line in last_lines(fd, place.offset, count, LAST_BYTES):
                record, problem, other = self._judged(line if line.length <= MAX_RECORD_BYTES else
                                                      LogLine(line.number, line.offset, None, line.length))
                if record is not None and self._kept(line.number, other, problem, game, []):
                    records.append(record)
            return records
        except OSError as exc:
            raise store_error(exc, "read", self.games_path) from None
        finally:
            os.close(fd)

    def _load(self, fd: int, game: str | None, since: LogPlace | None = None,
              empty: LoadedResults | None = None) -> LoadedResults:
        """:meth:`load` of the log open on ``fd``: through the index, the
        lines it holds read from it, those after parsed from the log, added
        to it and handed out at once (not read back); or from the log itself
        where the index cannot be used (a read-only directory: the index is
        only ever a help).  ``empty`` is the result to fill (what it was
        asked: see :meth:`load`)."""
        start, number = (since.offset, since.lines) if since is not None else (0, 0)
        empty = empty or LoadedResults()
        index = GameIndex(self.directory)
        try:
            covered = index.open(fd)
        except IndexUnusable:
            return self._from_log(fd, game, start, number, empty)
        result = empty
        try:
            for attempt in range(2):
                result = empty.anew()
                try:
                    return self._through_index(index, fd, covered, game, start, number, result)
                except IndexMoved:  # (rewritten over another log meanwhile, locked, a full disk: the log it is)
                    break
                except IndexUnusable as exc:  # a damaged or forged index: made again from the log
                    if result.handed or attempt or not index.reset(f"it is damaged ({exc})"):
                        break
                    covered = 0
        finally:
            index.close()
        if result.handed:  # (a reader that took records as they came cannot take them again)
            raise LogRewritten()
        return self._from_log(fd, game, start, number, empty)

    def _through_index(self, index: GameIndex, fd: int, covered: int, game: str | None, start: int, number: int,
                       result: LoadedResults) -> LoadedResults:
        if index.rebuilt is not None:
            result.warnings.append(f"{rebuilt_note(self.directory)} from {GAMES_FILE}, as {index.rebuilt}")
        last = number
        take = result.take if result.into is not None else None
        if take is not None:
            for row in index.games(fd, covered, start):
                check()
                last = row[0]
                if take(row):
                    result._handed = True  # (taken: a read started again would offer it twice)
                else:
                    self._hand_entry(index.entry(row[1]), index, game, result)
        else:
            for entry in index.lines(fd, covered, start):
                check()
                last = entry.number
                self._hand_entry(entry, index, game, result)

        def read(entry: IndexedLine, record: GameRecord | None) -> None:
            nonlocal last
            if entry.offset < start:
                return
            last = entry.number
            self._hand_out(entry, record, entry.problem, entry.game, game, result)

        lines = self._catch_up(index, fd, covered, read)
        self._note_tail(fd, lines, last, result)
        return result

    def _hand_entry(self, entry: IndexedLine, index: GameIndex, game: str | None, result: LoadedResults) -> None:
        """An entry of the index, into ``result`` (for a reader of ``game``): its record, or its warning."""
        record = self._indexed_record(entry, index) if entry.record is not None else None
        other = record.game if record is not None else entry.game  # (the record's is checked)
        if self._kept(entry.number, other, entry.problem, game, result.warnings) and record is not None:
            result.add(record, self.games_path, entry.number)

    def _catch_up(self, index: GameIndex, fd: int, covered: int,
                  read: Callable[[IndexedLine, GameRecord | None], None]) -> JudgedLines:
        """Add the lines of the log past what ``index`` covers, a batch at a
        time (a first read of a long log holds one batch, not the log),
        each handed to ``read`` once it is judged (its entry, with why it is
        no record and the game it names, and its record if it is one)."""
        lines = JudgedLines(fd, covered, index.last_number(covered) + 1 if covered else 1, self._judge,
                            self.directory, index.key)
        batch: list[IndexedLine] = []
        with closing(iter(lines)) as judged:  # (stopped early, as by a reader that raises: its child ends at once)
            for entry, record in judged:
                check()
                batch.append(entry)
                read(entry, record)
                if len(batch) == INDEX_BATCH:
                    index.add(batch, fd, entry.offset + entry.length + 1)
                    batch = []
        index.add(batch, fd, lines.good_bytes)
        return lines

    def _judge(self, line: LogLine) -> tuple[IndexedLine, GameRecord | None]:
        """The entry of ``line`` in the index, and its record (its moves left in the log) if it holds one."""
        record, problem, other = self._judged(line)
        times = self._moves_left(record, line)
        return indexed(line.number, line.offset, line.length, other, record, problem, times), record

    def _from_log(self, fd: int, game: str | None, start: int, number: int, empty: LoadedResults) -> LoadedResults:
        result = empty.anew()
        lines = LogLines(fd, MAX_RECORD_BYTES, start, number + 1)
        for line in lines:
            check()
            number = line.number
            record, problem, other = self._judged(line)
            self._moves_left(record, line)
            self._hand_out(line, record, problem, other, game, result)
        self._note_tail(fd, lines, number, result)
        return result

    def _moves_left(self, record: GameRecord | None, line: LogLine) -> list[float] | None:
        """Leave the moves of ``record``, parsed from ``line``, in the log
        (:class:`LazyMoves`: a reader holds their times only); their times."""
        if record is None:
            return None
        times = [move.ms for move in record.moves]
        record.moves = LazyMoves(self.directory, line.offset, line.length, record.game_id, times)
        return times

    def _hand_out(self, line: LogLine | IndexedLine, record: GameRecord | None, problem: str | None, other: str | None,
                  game: str | None, result: LoadedResults) -> None:
        """A line parsed from the log (its moves left there), into ``result``
        (for a reader of ``game``): its record, or its warning."""
        if self._kept(line.number, other, problem, game, result.warnings) and record is not None:
            result.add(record, self.games_path, line.number)

    def _note_tail(self, fd: int, lines: LogLines | JudgedLines, last: int, result: LoadedResults) -> None:
        """Note where the complete lines end (the last is line ``last``), and a torn line after them."""
        result.good_bytes = lines.good_bytes
        result.place = LogPlace.of(fd, lines.good_bytes, last)
        if lines.torn:
            result.torn = (f"{self.games_path}: dropped a torn last line ({lines.tail} bytes), "
                           "left by an interrupted write")
            result.warnings.append(result.torn)

    def _kept(self, number: int, other: str | None, problem: str | None, game: str | None, warnings: list[str]) -> bool:
        """Whether the line ``number`` holds a record for a reader of
        ``game``; if not, its warning goes to ``warnings`` (none for a blank line)."""
        # (the line's name made only for a warning: a Path's str is a resume's microseconds a line)
        if other != game and game in engine.GAMES and other in engine.GAMES:
            warnings.append(f"{self.games_path}:{number}: skipped a record of another game ({other!r}); "
                            f"these results are of {game}")
            return False
        if problem:
            warnings.append(f"{self.games_path}:{number}: skipped an unreadable record ({problem})")
        return problem is None

    def _indexed_record(self, entry: IndexedLine, index: GameIndex) -> GameRecord:
        try:
            return record_of(entry, self.directory, index.key)
        except (ValueError, RecursionError, MemoryError) as exc:  # a forged index
            raise IndexUnusable(f"its entry of line {entry.number} cannot be right: {exc or type(exc).__name__}") from None

    def _judged(self, line: LogLine) -> tuple[GameRecord | None, str | None, str | None]:
        """The record on ``line``, or why it is none (empty for a blank
        line), and the game the line names.  A line
        :meth:`GameRecord.from_json` does not accept (it checks every
        field), however it is broken, never raises."""
        if line.data is None:  # not even read: no record is that long
            return None, f"{line.length} bytes, over the {MAX_RECORD_BYTES} a record can hold", None
        if not line.data.strip():
            return None, "", None
        try:
            record = GameRecord.from_bytes(line.data)
            return record, None, record.game
        except ValueError as exc:  # not JSON, or a field that cannot be right (from_json says which)
            problem = str(exc)
        except (RecursionError, MemoryError) as exc:  # JSON nested deeper than the parser goes, or too big for it
            problem = "nested too deeply to read" if isinstance(exc, RecursionError) else "too big to read"
        # (parsed again: a refused line is rare, and a record names its own game)
        game = _text_of(line.data, "game")
        return None, problem, game if game in engine.GAMES else None

    # -- writing (one run at a time) ----------------------------------------

    def open_for_run(self, game: str, *, since: LogPlace | None = None, seen: Container[str] = frozenset(),
                     into: Callable[[GameRecord], None] | None = None, take: TakeGame | None = None) -> LoadedResults:
        """Lock the directory, empty the bots' scratch directories of the
        last run (so that a disk a bot filled does not stay full), and
        return the records of ``game`` there (or those after ``since``,
        as :meth:`load` reads them).  Nothing else is written
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
        return self.load(game, since=since, seen=seen, into=into, take=take)

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

    def replace(self, reasons: dict[str, str]) -> dict[str, tuple[int, int]]:
        """Move the records of the games in ``reasons`` (game id to why) to
        ``replaced.jsonl``, to play those games again.  Nothing is deleted: each
        record goes to the archive as it was, with the reason and the time,
        and is synced there before ``games.jsonl`` is replaced without it
        (atomically).  The archive decides: a crash between the two leaves
        the record in both files, and the next :meth:`open_for_run` takes it
        out of ``games.jsonl``; doing it again does not archive it twice.
        Returns where each record left is in the new file (game id to offset
        and length), for the records read before to find their moves."""
        assert self._fd is not None, "open_for_run first"
        moved = [line for line in self._lines() if _game_id_of(line) in reasons]
        try:
            archived = self._archived(set(moved))
            entries = b"".join(
                b'{"replaced_at":"%s","reason":%s,"record":%s}\n'
                % (timestamp().encode(), json.dumps(reasons[_game_id_of(line)]).encode(), line)
                for line in moved if line not in archived
            )
            if entries:
                with open(safe_files.open_file(self.directory, REPLACED_FILE, os.O_RDWR | os.O_CREAT | os.O_APPEND),
                          "r+b") as archive:
                    size = os.fstat(archive.fileno()).st_size
                    if size and os.pread(archive.fileno(), 1, size - 1) != b"\n":
                        # A line torn by a crash in the middle of an earlier append:
                        # these entries start on a line of their own, readable.
                        entries = b"\n" + entries
                    archive.write(entries)
                    archive.flush()
                    os.fsync(archive.fileno())
        except OSError as exc:
            raise store_error(exc, "write", self.replaced_path) from None
        placed: dict[str, tuple[int, int]] = {}
        try:
            with closing(self._rewritten(lambda line: _game_id_of(line) not in reasons, placed)) as pieces:
                write_atomically(self.games_path, pieces)
            # The new file is open before the old one is let go: interrupted
            # in between (Ctrl-C, SIGTERM), _fd is still an open file, which
            # close() then closes once.
            fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_WRONLY | os.O_APPEND)
            old, self._fd = self._fd, fd
            os.close(old)
        except OSError as exc:
            raise store_error(exc, "write", self.games_path) from None
        return placed

    def _lines(self) -> Iterator[bytes]:
        """The complete lines of ``games.jsonl`` that a record can be, streamed."""
        with closing(self._rewritten(lambda line: True, whole=False)) as lines:
            yield from lines

    def _rewritten(self, keep: Callable[[bytes], bool], placed: dict[str, tuple[int, int]] | None = None, *,
                   whole: bool = True) -> Iterator[bytes]:
        """``games.jsonl`` less the lines ``keep`` refuses, streamed in
        pieces for :func:`write_atomically`: every other line (one too long
        for a record copied piece by piece, never held whole) and a torn
        last line as they are; ``placed`` gets each kept record's game id
        with where its line is in the new file.  Without ``whole``, the
        lines a record can be only, without their ends."""
        try:
            fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise store_error(exc, "read", self.games_path) from None
        try:
            lines = LogLines(fd, MAX_RECORD_BYTES)
            written = 0
            for line in lines:
                if line.data is not None:
                    if keep(line.data):
                        if placed is not None and (game_id := _game_id_of(line.data)) is not None:
                            placed[game_id] = (written, line.length)
                        yield line.data + b"\n" if whole else line.data
                        written += line.length + 1
                elif whole:
                    yield from _pieces(fd, line.offset, line.length + 1)
                    written += line.length + 1
            if whole:
                yield from _pieces(fd, lines.good_bytes, lines.tail)
        except OSError as exc:
            raise store_error(exc, "read", self.games_path) from None
        finally:
            os.close(fd)

    def _archived(self, wanted: set[bytes] | None = None) -> set[bytes]:
        """The record lines ``replaced.jsonl`` holds (of those ``wanted``
        only, when given, so that a long archive is not held whole)."""
        try:
            fd = safe_files.open_file(self.directory, REPLACED_FILE, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            return set()
        archived: set[bytes] = set()
        try:
            # Each entry is {"replaced_at":...,"reason":...,"record":<the line as it was>}.
            for entry in LogLines(fd, MAX_RECORD_BYTES + 4096):
                record = entry.data.partition(b',"record":')[2][:-1] if entry.data is not None else b""
                if record and (wanted is None or record in wanted):
                    archived.add(record)
        finally:
            os.close(fd)
        return archived

    def _finish_replace(self) -> None:
        """Finish a :meth:`replace` cut short between its two writes: a line
        of ``games.jsonl`` that ``replaced.jsonl`` holds, byte for byte, was
        archived to be played again, and leaves ``games.jsonl`` now (a torn
        last line stays, for :meth:`load` to find)."""
        try:
            archived = self._archived()
        except OSError as exc:
            raise store_error(exc, "read", self.replaced_path) from None
        if not archived or not any(line in archived for line in self._lines()):
            return
        try:
            with closing(self._rewritten(lambda line: line not in archived)) as pieces:
                write_atomically(self.games_path, pieces)
        except OSError as exc:
            raise store_error(exc, "write", self.games_path) from None

    def append(self, record: GameRecord) -> None:
        """Write one record as one line.  When this returns the line is the
        kernel's and survives any death of this process; it reaches the disk
        within :data:`SYNC_INTERVAL_S` (see the module's doc).  The record
        then keeps its moves as a resumed run's records do, in the log
        (:class:`LazyMoves`), and not its line: a run holds each record it
        stored until it ends, and a game's moves and line are most of it."""
        assert self._fd is not None, "open_for_run first"
        line = record.to_line()
        view = memoryview(line)
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
        record.moves = LazyMoves(self.directory, start, len(line) - 1, record.game_id, move_times_of(record))
        record._line = None

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


def _pieces(fd: int, offset: int, length: int) -> Iterator[bytes]:
    """``length`` bytes of ``fd`` from ``offset``, a chunk at a time."""
    end = offset + length
    while offset < end and (piece := os.pread(fd, min(CHUNK_BYTES, end - offset), offset)):
        yield piece
        offset += len(piece)


def _game_id_of(line: bytes) -> str | None:
    return _text_of(line, "game_id")


def _text_of(line: bytes, key: str) -> str | None:
    """The text ``key`` names in the JSON object on ``line``, if it is one (a line load() skipped, too)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError, MemoryError):
        return None
    text = value.get(key) if isinstance(value, dict) else None
    return text if isinstance(text, str) else None


def write_atomically(path: Path, data: str | bytes | Iterable[bytes]) -> None:
    """:func:`arena.base.safe_files.write_atomically`, through :func:`_write`."""
    safe_files.write_atomically(path, data, _write)
