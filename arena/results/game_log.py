"""``games.jsonl`` read as a stream: line by line, with each line's byte offset.

The log of a long league holds a million games and gigabytes: it is never
read whole.  :class:`LogLines` hands out its complete lines one at a time
(and notes where they end, for a torn last line left by a crash), so a
reader's memory is one line, whatever the file's size; a line longer than a
record can be is measured and skipped, never held.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["LogLine", "LogLines", "CHUNK_BYTES", "last_lines"]

#: How much of the file one read takes.
CHUNK_BYTES = 1 << 20


class LogLine(NamedTuple):
    """A line of the log (a named tuple: one is made for every line of a
    log of a million, and a frozen dataclass cost a microsecond more each)."""

    #: The line's number, from 1 (a line ends at a newline: a carriage return is part of it).
    number: int
    #: Where the line starts in the file.
    offset: int
    #: Its bytes, without the end of line; None for one longer than the reader's limit.
    data: bytes | None
    #: Its length in bytes, without the end of line.
    length: int


class LogLines:
    """The complete lines of the file open on ``fd`` from ``start`` (a line's
    start), each numbered from ``first_number``.  Lines longer than
    ``max_line`` come with ``data`` None.  Once iterated, :attr:`good_bytes`
    is where the complete lines end and :attr:`tail` the length of what
    follows (a last line without its newline: torn by a crash), which
    :attr:`torn` tells apart from blanks."""

    def __init__(self, fd: int, max_line: int, start: int = 0, first_number: int = 1) -> None:
        self._fd = fd
        self._max = max_line
        self.good_bytes = start
        self._number = first_number
        self.tail = 0
        self.torn = False

    def __iter__(self) -> Iterator[LogLine]:
        position = self.good_bytes  # the offset of the first byte of ``pending``
        pending = b""
        skipping = 0  # the length so far of an overlong line being skipped
        skipped_text = False  # whether it held more than blanks
        while True:
            offset = position + len(pending) + skipping
            if skipping:  # a hole of a sparse file holds no newline: jumped, not read
                jumped = _next_data(self._fd, offset) - offset
                skipping, skipped_text = skipping + jumped, skipped_text or jumped > 0
                offset = position + skipping
            if not (chunk := os.pread(self._fd, CHUNK_BYTES, offset)):
                break
            if skipping:
                end = chunk.find(b"\n")
                skipped_text = skipped_text or bool(chunk[:end if end >= 0 else len(chunk)].strip())
                if end < 0:
                    skipping += len(chunk)
                    continue
                yield self._line(position, None, skipping + end)
                position += skipping + end + 1
                skipping, skipped_text, pending = 0, False, chunk[end + 1:]
            else:
                pending += chunk
            start = 0
            while (end := pending.find(b"\n", start)) >= 0:
                line = pending[start:end]
                yield self._line(position + start, line if len(line) <= self._max else None, len(line))
                start = end + 1
            position += start
            pending = pending[start:]
            if len(pending) > self._max:  # no record is that long: measured, not held
                skipping, skipped_text, pending = len(pending), bool(pending.strip()), b""
        self.good_bytes = position
        self.tail = len(pending) + skipping
        self.torn = skipped_text or bool(pending.strip())

    def _line(self, offset: int, data: bytes | None, length: int) -> LogLine:
        line = LogLine(self._number, offset, data, length)
        self._number += 1
        return line


def last_lines(fd: int, end: int, count: int, most_bytes: int) -> list[LogLine]:
    """The last ``count`` complete lines of the file open on ``fd`` before
    ``end`` (where a line ends), in the file's order, read backward a chunk
    at a time: what a reader of the latest games reads of a log of a
    million.  At most ``most_bytes`` are read (fewer lines then); the lines
    are not numbered (0).  Blank lines count as lines."""
    chunks: list[bytes] = []
    start, newlines = end, 0
    while start > 0 and newlines <= count and end - start < most_bytes:
        size = min(CHUNK_BYTES, start, most_bytes - (end - start))
        start -= size
        chunks.append(os.pread(fd, size, start))
        newlines += chunks[-1].count(b"\n")
    parts = b"".join(reversed(chunks)).split(b"\n")[:-1]  # (after the last newline: nothing, ``end`` ends a line)
    if start > 0:
        parts = parts[1:]  # the first part may be a line's end only
    lines: list[LogLine] = []
    offset = end
    for data in reversed(parts[-count:] if count else []):
        offset -= len(data) + 1
        lines.append(LogLine(0, offset, data, len(data)))
    return lines[::-1]


def _next_data(fd: int, offset: int) -> int:
    """Where the data after ``offset`` starts (past a hole of a sparse file)."""
    try:
        return os.lseek(fd, offset, os.SEEK_DATA)
    except OSError as exc:  # ENXIO: nothing but a hole to the end; else a file system that cannot tell
        return max(offset, os.fstat(fd).st_size) if exc.errno == errno.ENXIO else offset
