"""A bot's files of one game (``logs/<bot>/games/``): the folder they are
made in, kept open, and a file that keeps a bounded head and tail of what is
written to it.  The stderr log (:mod:`arena.bot.stderr_log`) and the protocol
log (:mod:`arena.bot.protocol_log`) both write through these."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from arena.base import safe_files

__all__ = ["BoundedFile", "GamesFolder"]


class BoundedFile:
    """One game's file: the first ``head`` bytes written as they come, the
    last ``tail`` held in memory until the game ends, and one line saying how
    many bytes of ``what`` were dropped between them."""

    def __init__(self, handle: IO[bytes], head: int, tail: int, what: str) -> None:
        self.handle = handle
        self.head_max = head
        self.head_left = head
        self.tail_max = tail
        self.what = what
        self.tail = bytearray()
        self.seen = 0
        self.dropped = 0
        self.last = b""

    @property
    def ends_line(self) -> bool:
        """Whether the file so far ends a line (or holds nothing written)."""
        return self.last in (b"", b"\n")

    def write(self, chunk: bytes) -> None:
        size = len(chunk)
        self.seen += size
        if not size:
            return
        self.last = chunk[-1:]
        if size <= self.head_left:  # the common case, without a copy
            self.handle.write(chunk)
            self.head_left -= size
            return
        if self.head_left > 0:
            part = chunk[: self.head_left]
            self.handle.write(part)
            self.head_left -= len(part)
            chunk = chunk[len(part):]
        if chunk:
            self.tail += chunk
            # Cut when twice the tail is held, not at every write: a cut moves
            # the whole tail, which costs more than a line, every line.
            if len(self.tail) > 2 * self.tail_max:
                self._cut()

    def _cut(self) -> None:
        """Drop all but the last ``tail_max`` bytes held."""
        over = len(self.tail) - self.tail_max
        if over > 0:
            self.dropped += over
            del self.tail[:over]

    def finish(self) -> int:
        """Write what was held back; the bytes kept."""
        self._cut()
        if self.dropped:
            self.handle.write(f"\n[... {self.dropped} bytes of {self.what} dropped here: a game's log keeps "
                              f"its first {self.head_max} and last {self.tail_max} bytes ...]\n".encode())
        if self.tail:  # (an unbuffered file: writing nothing is a system call all the same)
            self.handle.write(bytes(self.tail))
        if self.dropped and not self.tail:
            self.last = b"\n"
        return self.seen - self.dropped


class GamesFolder:
    """The folder ``folder`` (beneath ``root``, no link followed there) in
    which a bot's game files are made.  It is opened once and kept: walking
    the folders to it, none through a link, cost more than an instant game's
    moves.  It is opened again, and made, if it is gone."""

    def __init__(self, root: Path, folder: Path) -> None:
        self.root = root
        self.folder = folder
        self._fd: int | None = None

    def create(self, name: str, buffered: bool = False) -> IO[bytes]:
        """The file ``name`` opened to write from empty.  Raises OSError
        (:class:`~arena.base.safe_files.RefusedFile` for a link or a special
        file in its place), naming the file."""
        path = self.folder / name
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        if self._fd is None:
            self._fd = self._open(path)
        try:
            fd = safe_files.open_in(self._fd, name, flags, path)
        except FileNotFoundError:  # the folder was removed: made again, as the first game made it
            self.close()
            self._fd = self._open(path)
            fd = safe_files.open_in(self._fd, name, flags, path)
        return open(fd, "wb", buffering=-1 if buffered else 0)

    def _open(self, path: Path) -> int:
        return safe_files.open_dir(self.root, self.folder.relative_to(self.root), create=True, target=path)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
