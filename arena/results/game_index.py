"""The index of ``games.jsonl``: what every reader needs of each line, kept
in an SQLite file beside the log so that it is parsed once, not on every read.

``games.jsonl`` is the truth; ``index.sqlite`` is derived from it and may be
deleted at any time (it is built again on the next read).  It holds, for
every complete line of the log, where the line is, and either the record
without its moves (those are read from the log by offset, when a game is
shown) with each move's time, or why the line is no record.  It notes how
much of the log it covers and the identity of that part (the file's inode,
the length covered and the hash of its last line), catches up from there on
every read, and starts again from the log when the log was rewritten (a
``--replay``, a line torn and cut), or the index is missing, damaged, or of
another version of the arena.

The file is untrusted like the rest of the directory: it is opened only as
a regular file (never through a link), and every record read from it is
checked as a line of the log is.  An index that cannot be written (a
read-only directory, a full disk) is no error: the log is read as it is.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import operator
import os
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

import engine
from arena.base import safe_files
from arena.base.loaded_on_use import LoadedOnUse
from arena.game.records import GameRecord, MAX_RECORD_BYTES, MoveRecord
from arena.results.seals import seal, user_key

__all__ = ["INDEX_FILE", "INDEX_VERSION", "IndexedLine", "entry_record", "entry_seal", "LazyMoves", "LogPlace", "GameIndex",
           "IndexMoved", "IndexUnusable", "shape_text", "text_of"]

INDEX_FILE = "index.sqlite"
#: Raised whenever what the index holds, or how a line is judged, changes: an index of another version is rebuilt.
INDEX_VERSION = 2
_SIDE_FILES = ("-wal", "-shm", "-journal")
#: What an entry's seal is for: an index of another version never passes for this one's.
_SEALED_ENTRY = b"index%d" % INDEX_VERSION
_SEALED_ANSWER = b"answer%d" % INDEX_VERSION
#: The answers an index keeps, the latest (one per question asked lately: a command, a format, a tournament file).
MAX_ANSWERS = 16


class IndexUnusable(Exception):
    """The index cannot be opened or written here; the log is read as it is."""


class IndexMoved(Exception):
    """The index cannot be used by this reader now, through no fault of its
    own: another process made it over another log meanwhile (a ``--replay``
    rewrote the log), or it is locked past the timeout, or the disk is full.
    This reader reads the log it opened as it is; the index stays."""


class IndexedLine(NamedTuple):
    """What the index holds of one line of the log (a named tuple: one is
    made for every line of a log of a million, and a frozen dataclass cost
    a microsecond more each)."""

    number: int
    offset: int
    length: int
    #: The ``game`` the line names, when it names one (for a reader of one game).
    game: str | None
    #: The record without its moves and with ``t``, each move's time; None for a line that is no record.
    record: str | None
    #: Why the line is no record, as a warning ends.
    problem: str | None
    #: The record's seal: made with this user's key, it says this arena checked the record (see :mod:`arena.results.seals`).
    seal: bytes | None = None
    #: What a resume sorts the record by, for a record's line (see :meth:`GameIndex.games`); kept unsealed.
    game_id: str | None = None
    seed: int | None = None
    seats: str | None = None
    shape: str | None = None
    versions: str | None = None


@dataclass(frozen=True, slots=True)
class LogPlace:
    """How far a reader read the log: where its complete lines end, how
    many there are, and which log it was (its file, and the hash of its
    last line): what a reader needs to read on from there, and to know
    when the log no longer starts as it read it."""

    offset: int
    lines: int
    log: str
    last: str

    @classmethod
    def start(cls) -> LogPlace:
        """The start of any log (a reader that read none of it)."""
        return cls(0, 0, "", "")

    @classmethod
    def of(cls, fd: int, offset: int, lines: int) -> LogPlace:
        """The place ``offset`` (after line ``lines``) of the log open on ``fd``."""
        return cls(offset, lines, _identity(fd), _last_line_hash(fd, offset))

    def still_in(self, fd: int) -> bool:
        """Whether the log open on ``fd`` still starts as it did when read to here."""
        return not self.offset or (self.log == _identity(fd) and self.offset <= os.fstat(fd).st_size
                and self.last == _last_line_hash(fd, self.offset))


class LazyMoves(LoadedOnUse[MoveRecord]):
    """A record's moves, read from the log only when they are looked at:
    their number and times are at hand without it (what standings need)."""

    __slots__ = ("_directory", "_offset", "_length", "_game_id", "times", "_moves")

    def __init__(self, directory: Path, offset: int, length: int, game_id: str, times: Sequence[float]) -> None:
        self._directory, self._offset, self._length, self._game_id = directory, offset, length, game_id
        # (8 bytes a move: a million games' times would take gigabytes as Python floats)
        self.times = array("d", times)
        self._moves: list[MoveRecord] | None = None

    def __len__(self) -> int:
        return len(self.times)

    def __repr__(self) -> str:
        return f"LazyMoves({len(self)} moves of {self._game_id!r})"

    @property
    def offset(self) -> int:
        """Where the record's line is in the log."""
        return self._offset

    def moved_to(self, offset: int, length: int) -> None:
        """The record's line is now at ``offset`` (the log was rewritten around it)."""
        self._offset, self._length = offset, length

    def load(self) -> list[MoveRecord]:
        """The moves, from the record's line of the log (read once, checked
        as any line).  A log rewritten since (a ``--replay`` moved the
        lines) is searched for the game's line."""
        if self._moves is None:
            from arena.results.game_log import LogLines  # (imported here: the store imports this module)
            from arena.results.store import GAMES_FILE, StoreError
            try:
                fd = safe_files.open_file(self._directory, GAMES_FILE, os.O_RDONLY)
                try:
                    self._moves = self._moves_at(os.pread(fd, self._length, self._offset))
                    for line in LogLines(fd, MAX_RECORD_BYTES) if self._moves is None else ():
                        if line.data is not None and self._game_id.encode() in line.data:
                            self._moves = self._moves_at(line.data)
                            if self._moves is not None:
                                self._offset = line.offset
                                break
                finally:
                    os.close(fd)
            except OSError as exc:
                raise StoreError(f"cannot read the moves of game {self._game_id!r}: {exc}") from None
            if self._moves is None:
                raise StoreError(f"game {self._game_id!r} is no longer in {self._directory / GAMES_FILE}: "
                                 "it changed since it was read")
        return self._moves

    def _moves_at(self, line: bytes) -> list[MoveRecord] | None:
        """The moves of the record on ``line`` if it is this one's, else None."""
        try:
            record = GameRecord.from_bytes(line)
        except (ValueError, RecursionError, MemoryError):
            return None
        same = record.game_id == self._game_id and array("d", (m.ms for m in record.moves)) == self.times
        return record.moves if same else None


def move_times_of(record: GameRecord) -> Sequence[float]:
    """Each move's time charged to its bot, without reading the moves from the log."""
    moves = record.moves
    return moves.times if isinstance(moves, LazyMoves) else [m.ms for m in moves]


def indexed(number: int, offset: int, length: int, game: str | None, record: GameRecord | None,
            problem: str | None, times: list[float] | None = None) -> IndexedLine:
    """A line's entry: ``record`` (the line's, as read; ``times``, its
    moves' times, when its moves were left in the log already) or ``problem``."""
    if record is None:
        return IndexedLine(number, offset, length, game, None, problem)
    data = dict(zip(_ENTRY_FIELDS, _entry_values(record)))
    data["t"] = move_times_of(record) if times is None else times
    # (msgspec writes it in C: json.dumps of a league's entries cost a fifth of building its index)
    text = _encode(data).decode()
    forfeit = record.reason if record.forfeit_by is not None else None
    versions = None if record.versions is None else text_of([record.versions[color] for color in record.players])
    return IndexedLine(number, offset, length, game, text, problem, None, record.game_id, record.seed,
                       text_of(list(record.players.values())), shape_text(record.game, record.opening,
                                                                        record.opening_moves, forfeit), versions)


def text_of(value: object) -> str:
    """``value`` as the index writes it in a column of its own (compact JSON):
    a reader compares what it expects, written so, with the column's text."""
    return _encode(value).decode()


def shape_text(game: str, opening: int, opening_moves: Sequence[str], forfeit: str | None) -> str:
    """What a record's game is besides its players and seed: the game, the
    opening (its number and moves) and, for a forfeit, its reason, as the
    index writes it (few records differ in it: a reader parses each once)."""
    return text_of([game, opening, list(opening_moves), forfeit])


class _EntryTimes(msgspec.Struct):
    """What an entry holds besides its record's fields: each move's time."""

    t: list[float]


#: An entry's record (its ``t`` left out) and its times, decoded from a sealed entry.
_decode_entry = msgspec.json.Decoder(GameRecord).decode
_decode_times = msgspec.json.Decoder(_EntryTimes).decode
#: What an entry holds of its record: every field but the moves (in the log), with ``t``, their times.
_ENTRY_FIELDS = tuple(f.name for f in fields(GameRecord) if f.init and f.name != "moves")
_entry_values = operator.attrgetter(*_ENTRY_FIELDS)
_encode = msgspec.json.Encoder().encode


class Shared:
    """One object for the values that most records repeat (the players of
    a pair, the time control, the versions), so that a reader holding a
    league's records holds each once.  Records read from disk are never
    changed in place, so they can share them."""

    def __init__(self) -> None:
        self._seen: dict[tuple[Any, ...], Any] = {}

    def record(self, record: GameRecord) -> GameRecord:
        record.players = self._one(record.players)
        record.time_control = self._one(record.time_control)
        if record.versions is not None:
            record.versions = self._one(record.versions)
        if record.played_on is not None:  # one per worker or actor
            record.played_on = self._one(record.played_on)
        return record

    def _one(self, value: dict[str, Any]) -> dict[str, Any]:
        return self._seen.setdefault(tuple(value.items()), value)


def record_of(line: IndexedLine, directory: Path, key: bytes | None = None) -> GameRecord:
    """The record an entry holds: as it is when its seal is this user's
    (``key``: this arena checked it when it wrote it), else checked as a
    line of the log is; ``ValueError`` when it cannot be right."""
    if (key is not None and line.seal is not None
            and hmac.compare_digest(line.seal, seal(key, (line.record or "").encode(), _SEALED_ENTRY))):
        return entry_record(line, directory)
    data = json.loads(line.record or "null")
    times = data.pop("t", None) if isinstance(data, dict) else None
    if not (isinstance(times, list) and all(type(t) in (int, float) and 0 <= t < math.inf for t in times)):
        raise ValueError("move times")
    record = GameRecord.from_json(data)
    if len(times) > engine.get_game(record.game).max_game_length:
        raise ValueError("move times")
    record.moves = LazyMoves(directory, line.offset, line.length, record.game_id, times)
    return record


def entry_record(line: IndexedLine, directory: Path, times: Sequence[float] | None = None) -> GameRecord:
    """The record of an entry this arena made (sealed, or just made of a
    line it checked), as it is, with its moves' ``times`` when they are
    known (else those the entry holds); ``ValueError`` when it is no record."""
    try:  # (msgspec, in C: json.loads and GameRecord(**data) took most of a read through the index)
        record = _decode_entry(line.record or "")
        if times is None:
            times = _decode_times(line.record or "").t
    except msgspec.MsgspecError:  # a field msgspec types otherwise (a score of 1.5): read as Python reads it
        data = json.loads(line.record or "null")
        try:
            times = data.pop("t")
            record = GameRecord(**data)
        except (AttributeError, KeyError, TypeError) as exc:  # no record at all: the index is rebuilt
            raise ValueError(f"no record ({exc})") from None
    record._line = None  # (msgspec fills a private field from the entry as any other)
    record.moves = LazyMoves(directory, line.offset, line.length, record.game_id, times)
    return record


def entry_seal(key: bytes | None, line: IndexedLine) -> bytes | None:
    """The seal of the record an entry holds, under ``key`` (none without a key or a record)."""
    return seal(key, line.record.encode(), _SEALED_ENTRY) if key is not None and line.record is not None else None


class GameIndex:
    """The index of the log in ``directory`` (see the module's doc)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / INDEX_FILE
        self._db: sqlite3.Connection | None = None
        #: This user's key for the seals (None: every record read is checked).
        self.key = user_key()
        #: Why the index was started again from the log, when it was damaged or of another version.
        self.rebuilt: str | None = None
        self._repair = True

    def open(self, log_fd: int, *, repair: bool = True) -> int:
        """Open the index for the log open on ``log_fd``; returns the offset
        it covers (0 when it starts again).  Raises :class:`IndexUnusable`,
        also where the index would have to start again and ``repair`` is
        False (a reader of answers leaves that to the reader of games, which
        says why)."""
        self._repair = repair
        try:
            try:
                return self._open(log_fd)
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) or not repair:  # locked, read-only, full: not a damaged file
                    raise
                self.close()  # not an SQLite file at all: made anew
                self._remove()
                covered = self._open(log_fd)
                self.rebuilt = f"it is damaged ({exc})"
                return covered
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise IndexUnusable(str(exc)) from None

    def _open(self, log_fd: int) -> int:
        if not os.path.lexists(self.path):  # side files left by a deleted index would be applied to the new one
            if not self._repair:
                raise OSError(f"{self.path}: none yet")
            self._remove()
        for suffix in _SIDE_FILES:  # no link, FIFO or device in the place of the index's side files
            if os.path.lexists(self.directory / (INDEX_FILE + suffix)):
                os.close(safe_files.open_file(self.directory, INDEX_FILE + suffix, os.O_RDWR))
        fd = safe_files.open_file(self.directory, INDEX_FILE, os.O_RDWR | os.O_CREAT)  # nor in its own
        try:
            self._db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            # SQLite opens it again by its name: a link swapped in meanwhile is not the file looked at.
            if not os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False)):
                raise OSError(f"{self.path} changed while it was opened")
        finally:
            os.close(fd)
        self._db.execute("PRAGMA trusted_schema=OFF")
        self._db.execute("PRAGMA journal_mode=WAL")
        return self._covered(log_fd)

    def _remove(self) -> None:
        for suffix in ("", *_SIDE_FILES):
            if os.path.lexists(self.directory / (INDEX_FILE + suffix)):
                os.unlink(self.directory / (INDEX_FILE + suffix))

    def _covered(self, log_fd: int) -> int:
        assert self._db is not None
        db = self._db
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        state = dict(db.execute("SELECT key, value FROM state")) if "state" in tables else {}
        if not state and not tables:
            self._start_again(None)
            return 0
        if state.get("version") != INDEX_VERSION or "lines" not in tables:
            self._start_again(f"it was made by another version of the arena (index version {state.get('version')!r}, "
                        f"this one reads {INDEX_VERSION})")
            return 0
        info = os.fstat(log_fd)
        covered = state.get("covered")
        if (state.get("log") != _identity(log_fd) or not isinstance(covered, int)
                or not 0 <= covered <= info.st_size or state.get("last") != _last_line_hash(log_fd, covered)):
            self._start_again(None)  # the log was rewritten, cut or replaced: an ordinary event
            return 0
        return covered

    def _start_again(self, why: str | None) -> None:
        if not self._repair:
            raise IndexUnusable(why or "it is another log's")
        self._reset(why)

    def reset(self, why: str) -> bool:
        """Empty the index, to build it again from the log because ``why``;
        False when it cannot be written."""
        try:
            self._reset(why)
            return True
        except sqlite3.Error:
            return False

    def _reset(self, why: str | None) -> None:
        assert self._db is not None
        self.rebuilt = why
        db = self._db
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute("BEGIN IMMEDIATE")
        db.execute("DROP TABLE IF EXISTS lines")
        db.execute("DROP TABLE IF EXISTS state")
        db.execute("DROP TABLE IF EXISTS answers")
        db.execute("CREATE TABLE lines (offset INTEGER PRIMARY KEY, number INTEGER NOT NULL, length INTEGER NOT NULL, "
                   "game TEXT, record TEXT, problem TEXT, seal BLOB, game_id TEXT, seed INTEGER, seats TEXT, shape TEXT, "
                   "versions TEXT)")
        # (what a resume reads of every line, apart from the records: a tenth of the pages to go through)
        db.execute("CREATE INDEX games ON lines (offset, number, game_id, seed, seats, shape, versions)")
        db.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value)")
        db.execute("INSERT INTO state VALUES ('version', ?), ('covered', 0), ('log', ''), ('last', '')",
                   (INDEX_VERSION,))
        db.execute("COMMIT")

    def last_number(self, covered: int) -> int:
        """The number of the last line before ``covered`` (another reader may have added more since)."""
        assert self._db is not None
        number = self._db.execute("SELECT coalesce(max(number), 0) FROM lines WHERE offset < ?", (covered,)).fetchone()[0]
        if type(number) is not int:
            raise IndexUnusable("a line of the index is not one the arena writes")
        return number

    def add(self, lines: Sequence[IndexedLine], log_fd: int, covered: int) -> None:
        """Add the entries of the lines read since, now covering the log to
        ``covered``.  Raises :class:`IndexMoved` when another process made
        the index over another log meanwhile (a ``--replay`` rewrote it)."""
        assert self._db is not None
        log = _identity(log_fd)
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            state = dict(db.execute("SELECT key, value FROM state"))
            if state.get("covered") and state.get("log") != log:
                raise IndexMoved()
            # (an entry sealed already was sealed with this key: see JudgedLines)
            db.executemany("INSERT OR REPLACE INTO lines VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           [(e.offset, e.number, e.length, e.game, e.record, e.problem,
                             e.seal if e.seal is not None else entry_seal(self.key, e),
                             e.game_id, e.seed, e.seats, e.shape, e.versions) for e in lines])
            if not isinstance(state.get("covered"), int) or state["covered"] < covered:
                db.executemany("UPDATE state SET value = ? WHERE key = ?",
                               [(covered, "covered"), (log, "log"), (_last_line_hash(log_fd, covered), "last")])
            db.execute("COMMIT")
        except (sqlite3.Error, IndexMoved) as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, (IndexMoved, sqlite3.OperationalError)):
                raise IndexMoved() from None
            raise IndexUnusable(str(exc)) from None

    def lines(self, log_fd: int, covered: int, start: int = 0) -> Iterator[IndexedLine]:
        """The entries of the log open on ``log_fd`` from ``start`` up to
        ``covered``, in its order, as one snapshot.  Raises
        :class:`IndexMoved` when the index is now another log's."""
        with self._snapshot(log_fd, covered) as db:
            for row in db.execute(f"SELECT {_LINE} FROM lines WHERE offset >= ? AND offset < ? ORDER BY offset",
                                  (start, covered)):
                yield IndexedLine(*_checked(row))

    def games(self, log_fd: int, covered: int, start: int = 0) -> Iterator[tuple[Any, ...]]:
        """:meth:`lines`, each as what a reader sorting the games against a
        schedule reads of it, not its record: its number and offset, and
        for a record its id, seed, players in seat order (:func:`text_of` a
        list), :func:`shape_text` and its bots' versions in seat order
        (:func:`text_of` a list, or None); else None in their place.  Plain
        tuples (one is made for every line of a log of a million), not
        checked but their number and offset: a reader believes the rest
        only where it equals what it expects, and asks :meth:`entry` for
        the others' entries (in the same snapshot)."""
        with self._snapshot(log_fd, covered) as db:
            for row in db.execute("SELECT number, offset, game_id, seed, seats, shape, versions FROM lines "
                                  "WHERE offset >= ? AND offset < ? ORDER BY offset", (start, covered)):
                if type(row[0]) is not int or type(row[1]) is not int or row[0] <= 0:
                    raise IndexUnusable("a line of the index is not one the arena writes")
                yield row

    def entry(self, offset: int) -> IndexedLine:
        """The entry of the line at ``offset`` (one :meth:`games` gave)."""
        assert self._db is not None
        try:
            row = self._db.execute(f"SELECT {_LINE} FROM lines WHERE offset = ?", (offset,)).fetchone()
        except sqlite3.OperationalError:
            raise IndexMoved() from None
        except sqlite3.Error as exc:
            raise IndexUnusable(str(exc)) from None
        if row is None:
            raise IndexUnusable(f"no entry at offset {offset}")
        return IndexedLine(*_checked(row))

    @contextmanager
    def _snapshot(self, log_fd: int, covered: int) -> Iterator[sqlite3.Connection]:
        """The index, as one snapshot of the log open on ``log_fd`` read to ``covered``."""
        assert self._db is not None
        db = self._db
        try:
            db.execute("BEGIN")
            try:
                state = dict(db.execute("SELECT key, value FROM state"))
                if covered and state.get("log") != _identity(log_fd):
                    raise IndexMoved()
                yield db
            finally:
                if db.in_transaction:
                    db.execute("COMMIT")
        except sqlite3.OperationalError:
            raise IndexMoved() from None
        except sqlite3.Error as exc:
            raise IndexUnusable(str(exc)) from None

    def answer(self, question: str) -> bytes | None:
        """The answer remembered for ``question`` (see :meth:`remember`), if
        this user's arena sealed it; None otherwise."""
        assert self._db is not None
        try:
            row = self._db.execute("SELECT value, seal FROM answers WHERE question = ?", (question,)).fetchone()
        except sqlite3.Error:  # (an index made before answers were kept has no such table)
            return None
        if (self.key is None or row is None or type(row[0]) is not bytes or type(row[1]) is not bytes
                or not hmac.compare_digest(row[1], seal(self.key, question.encode() + b"\0" + row[0], _SEALED_ANSWER))):
            return None
        return row[0]

    def remember(self, question: str, value: bytes) -> None:
        """Keep ``value``, what a reader worked out for ``question`` (a digest
        of everything the answer depends on: the log as it is, the
        tournament, the arena's code), sealed with this user's key so that
        no one else's passes for it; the oldest answers go.  An index that
        cannot be written keeps none."""
        assert self._db is not None
        if self.key is None:
            return
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("CREATE TABLE IF NOT EXISTS answers (question TEXT PRIMARY KEY, value BLOB, seal BLOB)")
            db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                       (question, value, seal(self.key, question.encode() + b"\0" + value, _SEALED_ANSWER)))
            db.execute("DELETE FROM answers WHERE rowid NOT IN (SELECT rowid FROM answers ORDER BY rowid DESC LIMIT ?)",
                       (MAX_ANSWERS,))
            db.execute("COMMIT")
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


#: The columns of a line's entry, as :class:`IndexedLine` holds them.
_LINE = "number, offset, length, game, record, problem, seal"


def _checked(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row as the index writes them, or :class:`IndexUnusable` (a forged or damaged file)."""
    number, offset, length, game, record, problem, sealed = row
    if not (type(number) is int and type(offset) is int and type(length) is int and 0 < number and 0 <= offset
            and 0 <= length <= MAX_RECORD_BYTES and (game is None or type(game) is str and len(game) < 100)
            and (record is None) != (problem is None)
            and (record is None or type(record) is str and len(record) <= MAX_RECORD_BYTES)
            and (problem is None or type(problem) is str and len(problem) < 2000)
            and (sealed is None or type(sealed) is bytes)):
        raise IndexUnusable("a line of the index is not one the arena writes")
    return row


def _identity(fd: int) -> str:
    """Which file the log is (a rewritten log is another file)."""
    info = os.fstat(fd)
    return f"{info.st_dev}:{info.st_ino}"


def _last_line_hash(fd: int, covered: int) -> str:
    """The hash of the last line before ``covered`` (up to 4 KiB of its end):
    the log's part the index covers ends as it did."""
    start = max(0, covered - 4096)
    return hashlib.blake2b(os.pread(fd, covered - start, start), digest_size=16).hexdigest()
