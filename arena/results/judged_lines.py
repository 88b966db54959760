"""The lines of ``games.jsonl`` an index has not covered yet, each judged
(parsed and checked into its index entry and record), on two cores when
there are many.

The first read of a league's log judges every line: most of the time of a
first ``arena standings`` of a million games goes to parsing and checking
the records, most of the rest to folding them.  A long stretch is so read
by a pipeline of two processes: a forked child reads and judges the lines
and sends their entries (what the index keeps: the record checked, without
its moves) down a pipe, a batch at a time, while this process makes each
record again from its entry (as a read through the index does, without the
checks the child made) and folds it.  Everything else stays in this
process, in the log's order: the line numbers of the warnings, the second
records of a game, the index written by its one writer, the torn last line
the child found.  The child writes nothing but its pipe and opens no
file; it dies with this process, and if it dies first, this process
judges the rest of the lines itself.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from array import array
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

from arena.base.stop_signals import STOP_SIGNALS
from arena.bot.reaper import set_parent_death_signal
from arena.game.records import GameRecord, MAX_RECORD_BYTES
from arena.results.game_index import IndexedLine, entry_record, entry_seal, move_times_of
from arena.results.game_log import LogLine, LogLines

__all__ = ["FORK_BYTES", "JudgedLines"]

#: The least of the log left to read that a child judges (some ten thousand
#: records): below it, forking and sending the entries cost more than they save.
FORK_BYTES = 16 << 20
#: The lines of one batch the child sends: large enough to make pickling cheap, small enough to hold.
BATCH_LINES = 1000

#: What judges a line: its index entry, and its record (moves left in the log) if it holds one.
Judge = Callable[[LogLine], tuple[IndexedLine, "GameRecord | None"]]


class JudgedLines:
    """The complete lines of the log open on ``fd`` from ``start`` (a
    line's start), numbered from ``first_number``, each judged by ``judge``
    (in a forked child for a long stretch, see the module's doc) into its
    entry and its record; the child seals its entries with ``key``, the
    index's, when there is one (a seal made in this process would be half
    the time saved).  Once iterated, :attr:`good_bytes`, :attr:`tail` and
    :attr:`torn` tell where the complete lines end and what follows them,
    as :class:`LogLines` does."""

    def __init__(self, fd: int, start: int, first_number: int, judge: Judge, directory: Path,
                 key: bytes | None) -> None:
        self._fd, self._start, self._number = fd, start, first_number
        self._judge, self._directory, self._key = judge, directory, key
        self.good_bytes, self.tail, self.torn = start, 0, False

    def __iter__(self) -> Generator[tuple[IndexedLine, GameRecord | None], None, None]:
        left = os.fstat(self._fd).st_size - self._start
        if left > 0 and left >= FORK_BYTES and _may_fork():
            yield from self._forked()
        else:
            yield from self._here(self._start, self._number)

    def _here(self, start: int, number: int) -> Iterator[tuple[IndexedLine, GameRecord | None]]:
        lines = LogLines(self._fd, MAX_RECORD_BYTES, start, number)
        for line in lines:
            yield self._judge(line)  # (sealed as it is written to the index)
        self.good_bytes, self.tail, self.torn = lines.good_bytes, lines.tail, lines.torn

    def _forked(self) -> Iterator[tuple[IndexedLine, GameRecord | None]]:
        read_end, write_end = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:  # (no memory or process left for a child: read alone)
            os.close(read_end)
            os.close(write_end)
            yield from self._here(self._start, self._number)
            return
        if pid == 0:  # (the child: never returns)
            os.close(read_end)
            self._child(write_end, parent)
        os.close(write_end)
        start, number, ended = self._start, self._number, False
        try:
            with open(read_end, "rb") as pipe:
                while not ended:
                    try:
                        batch = pickle.load(pipe)
                    except (EOFError, pickle.UnpicklingError):  # the child died: the rest is judged here
                        break
                    if isinstance(batch, tuple):  # the end: where the complete lines end, and what follows
                        self.good_bytes, self.tail, self.torn = batch
                        ended = True
                        continue
                    for *row, times in batch:
                        entry = IndexedLine(*row)
                        yield entry, None if times is None else entry_record(entry, self._directory, _times(times))
                        start, number = entry.offset + entry.length + 1, entry.number + 1
        finally:
            if not ended:
                os.kill(pid, signal.SIGKILL)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # (reaped by someone else)
                pass
        if not ended:
            yield from self._here(start, number)

    def _child(self, pipe_fd: int, parent: int) -> None:
        """Judge the lines into batches down ``pipe_fd``, then say where they end; exit, whatever happens."""
        status = 1
        try:
            # A stop signal ends the child at once (the reader stops the read); so does the reader's death.
            signal.set_wakeup_fd(-1)
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            set_parent_death_signal(signal.SIGKILL)
            if os.getppid() != parent:  # (died before the death signal was asked for)
                return
            with open(pipe_fd, "wb") as pipe:
                lines = LogLines(self._fd, MAX_RECORD_BYTES, self._start, self._number)
                batch: list[tuple[object, ...]] = []
                for line in lines:
                    entry, record = self._judge(line)
                    # (its moves' times as the bytes they are held in: the reader need not parse them from the entry)
                    times = array("d", move_times_of(record)).tobytes() if record is not None else None
                    batch.append((*entry._replace(seal=entry_seal(self._key, entry)), times))
                    if len(batch) == BATCH_LINES:
                        pickle.dump(batch, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                        batch = []
                pickle.dump(batch, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.dump((lines.good_bytes, lines.tail, lines.torn), pipe, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)  # (nothing of the reader's runs here: no cleanup, no SQLite connection closed)


def _times(data: bytes) -> array[float]:
    """The move times the child sent as bytes."""
    times = array("d")
    times.frombytes(data)
    return times


def _may_fork() -> bool:
    """Whether a child can be forked safely: a process of one thread (a
    thread holding a lock at the fork would leave it held in the child)."""
    return hasattr(os, "fork") and threading.active_count() == 1
