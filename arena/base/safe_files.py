"""Files in a directory other people can write: a results directory.

A results directory is untrusted input: it may come from someone else, and
a bot without the sandbox may have written in it.  A symbolic link planted at
one of its files or folders would make the arena write a bot's stderr into
the organiser's ``~/.bashrc``, or inline ``/etc/shadow`` in a report; a FIFO
or a device would hang it or feed it without end.  So every file the arena
opens there is opened through these functions:

- the ``root`` (the directory the organiser named) is opened as given, and
  each name below it with ``O_NOFOLLOW``, relative to its folder's
  descriptor, so no link beneath the root is ever followed;
- a file must be a regular file (it is looked at before it is opened, so a
  FIFO or a device is never opened), and one the arena writes has no other
  hard link;
- a temporary file has an unpredictable name and is created with ``O_EXCL``.

Anything else is :class:`RefusedFile`: an ``OSError`` whose message is one
line naming the entry.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath

__all__ = ["RefusedFile", "make_dirs", "open_dir", "open_file", "open_in", "read_file", "write_atomically", "write_atomically_in"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_WRITING = os.O_WRONLY | os.O_RDWR
_LINK = "a symbolic link"
_KINDS = (
    (stat.S_ISLNK, _LINK), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
)


class RefusedFile(OSError):
    """An entry of a results directory the arena does not follow or open: a
    link, a special file, a directory where a file should be, a file with
    other hard links, or one too big to read.  ``str()`` is one line naming
    the file the arena meant to open (``filename``) and, when it is a folder
    on the way there, the ``entry`` refused; ``what`` says what that is."""

    def __init__(self, target: Path, entry: Path, what: str, message: str) -> None:
        self.entry = entry
        self.what = what
        super().__init__(errno.ELOOP if what == _LINK else errno.EINVAL, message, str(target))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _refused(entry: Path, what: str, target: Path) -> RefusedFile:
    """``entry`` (``target`` or a folder on the way to it) is ``what``."""
    why = ("follows no link" if what == _LINK else "writes no file linked elsewhere" if "hard link" in what
           else "opens only regular files and folders")
    where = f"{what} is in its place" if entry == target else f"{entry} is {what}"
    return RefusedFile(target, entry, what, f"{where}; the arena {why} in a results directory")


def _kind(info: os.stat_result) -> str | None:
    """What ``info`` describes when it is not a regular file."""
    return next((what for test, what in _KINDS if test(info.st_mode)), None)


def _refuse(dir_fd: int, name: str, entry: Path, target: Path, *, directory: bool) -> RefusedFile | None:
    """The refusal for ``name`` in ``dir_fd`` when it is a link or a special
    file, or a folder where a file is wanted; else None."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    what = _kind(info)
    if what is None or (directory and what == "a directory"):
        return None
    return _refused(entry, what, target)


def _open_root(root: Path, create: bool) -> int:
    if create:
        root.mkdir(parents=True, exist_ok=True)  # the root is the organiser's: followed as given
    return os.open(root, _DIR_FLAGS)


def _enter(dir_fd: int, name: str, entry: Path, target: Path, create: bool, mode: int) -> int:
    """The descriptor of folder ``name`` (at ``entry``) in ``dir_fd``, made if
    ``create``, never through a link."""
    try:
        try:
            return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise
        try:
            os.mkdir(name, mode, dir_fd=dir_fd)
        except FileExistsError:
            pass  # made meanwhile by another process of the arena: opened as any other
        return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            refused = _refuse(dir_fd, name, entry, target, directory=True)
            if refused is not None:
                raise refused from None
            if create:  # a file in the way of a folder to make: said as mkdir says it
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(entry)) from None
        raise _named(exc, entry) from None


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` naming the whole ``path``, not the name relative to its folder."""
    exc.filename = str(path)
    return exc


def open_dir(root: Path, relative: str | PurePath = ".", *, create: bool = False, mode: int = 0o755,
             target: Path | None = None) -> int:
    """A descriptor of the folder ``root/relative``, no link beneath ``root``
    followed; with ``create``, the folders are made as need be (``root``
    with its parents).  Raises :class:`RefusedFile` or another ``OSError``,
    naming ``target`` (a file the folder is opened for) when given."""
    return _open_dir(root, PurePath(relative).parts, create, mode, target or root / relative)


def _open_dir(root: Path, parts: tuple[str, ...], create: bool, mode: int, target: Path) -> int:
    if ".." in parts or parts[:1] == ("/",):
        raise ValueError(f"{target} is not a path beneath {root}")
    fd = _open_root(root, create)
    try:
        for depth, name in enumerate(parts, start=1):
            inner = _enter(fd, name, root.joinpath(*parts[:depth]), target, create, mode)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_dirs(root: Path, relative: str | PurePath, mode: int = 0o755) -> None:
    """Make the folder ``root/relative`` (``root`` too, with its parents)
    when it is not there, no link beneath ``root`` followed.  Raises
    :class:`RefusedFile` or another ``OSError``."""
    os.close(open_dir(root, relative, create=True, mode=mode))


def open_file(root: Path, relative: str | PurePath, flags: int, mode: int = 0o644, *, create_dirs: bool = False) -> int:
    """``os.open`` of the regular file ``root/relative`` with ``flags``, no
    link beneath ``root`` followed; a FIFO or device is refused before it is
    opened, and a file opened to write must have no other hard link.  With
    ``create_dirs`` its folders are made as need be.  Raises
    :class:`RefusedFile` or another ``OSError`` (``FileNotFoundError`` when
    there is none and ``flags`` do not create it)."""
    *folders, name = PurePath(relative).parts or ("",)
    target = root / relative
    if not name or name == "..":
        raise ValueError(f"{target} names no file beneath {root}")
    folder = _open_dir(root, tuple(folders), create_dirs, 0o755, target)
    try:
        return open_in(folder, name, flags, target, mode)
    finally:
        os.close(folder)


def open_in(folder: int, name: str, flags: int, target: Path, mode: int = 0o644) -> int:
    """:func:`open_file` of the file ``name`` in the folder ``folder`` (a
    descriptor :func:`open_dir` gave), for a writer that opens many files in
    one folder; ``target`` is the file's path, for messages."""
    refused = _refuse(folder, name, target, target, directory=False)
    if refused is not None:
        raise refused
    try:
        # O_NONBLOCK: a FIFO swapped in after the look must not hang the
        # open; it changes nothing for a regular file.  O_TRUNC waits for
        # the checks below: a hard link's other name must not be emptied.
        fd = os.open(name, flags & ~os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, mode,
                     dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise _refuse(folder, name, target, target, directory=False) or _named(exc, target) from None
        raise _named(exc, target) from None
    try:
        info = os.fstat(fd)
        what = _kind(info)
        if what is None and flags & _WRITING and info.st_nlink > 1:
            what = f"a file with {info.st_nlink} hard links"
        if what is not None:
            raise _refused(target, what, target)
        # Not an empty file (a new one): on ext4 a truncation to 0 makes the
        # file's close start writing it to disk, which cost a game's log file
        # more than the rest of its opening and closing.
        if flags & os.O_TRUNC and info.st_size:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(root: Path, relative: str | PurePath, max_bytes: int) -> bytes:
    """The whole of the regular file ``root/relative``, no link beneath
    ``root`` followed.  Raises :class:`RefusedFile` when it holds more than
    ``max_bytes`` (never read: a sparse file can claim a terabyte), or
    another ``OSError``."""
    fd = open_file(root, relative, os.O_RDONLY)
    with open(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        # As much as the file holds (and one byte more, to see it grow past
        # the limit), never the limit itself: that would ask for its memory.
        data = handle.read(min(size, max_bytes) + 1) if size <= max_bytes else b""
    if size > max_bytes or len(data) > max_bytes:
        held = max(size, len(data))
        raise RefusedFile(root / relative, root / relative, "too big",
                          f"it holds {held} bytes, more than the {max_bytes} the arena reads of it")
    return data


def write_atomically(path: Path, data: str | bytes | Iterable[bytes],
                     write: Callable[[int, memoryview], int] = os.write) -> None:
    """Replace ``path`` with ``data`` (or its pieces, in order) all at once: a reader sees the old file
    or the new one, never a part, and on failure (a full disk) the old file
    stays and no temporary file is left.  The temporary file, beside
    ``path``, has a name nobody can guess and is made with ``O_EXCL``: a
    link planted in its place cannot be written through.  A link at
    ``path`` itself is replaced, never followed.  ``write`` is ``os.write``
    (tests give a full disk)."""
    folder = os.open(path.parent, _DIR_FLAGS)
    try:
        _replace(folder, path.name, data, write)
    finally:
        os.close(folder)


def write_atomically_in(root: Path, relative: str | PurePath, data: str | bytes | Iterable[bytes],
                        write: Callable[[int, memoryview], int] = os.write) -> None:
    """:func:`write_atomically` of the file ``root/relative``, its folders
    made as need be, no link beneath ``root`` followed."""
    *folders, name = PurePath(relative).parts or ("",)
    if not name or name == "..":
        raise ValueError(f"{root / relative} names no file beneath {root}")
    folder = _open_dir(root, tuple(folders), True, 0o755, root / relative)
    try:
        _replace(folder, name, data, write)
    finally:
        os.close(folder)


def _replace(folder: int, name: str, data: str | bytes | Iterable[bytes],
             write: Callable[[int, memoryview], int]) -> None:
    """Replace ``name`` in ``folder`` with ``data`` (see :func:`write_atomically`)."""
    # Hidden, and unpredictable: another process (arena report beside a
    # running tournament's live report) may be writing the same file.
    tmp = f".{name}.{secrets.token_hex(8)}.tmp"
    made = False
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder)
        made = True
        try:
            for piece in (data,) if isinstance(data, (str, bytes)) else data:
                view = memoryview(piece.encode() if isinstance(piece, str) else piece)
                while view:
                    view = view[write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        if made:
            try:
                os.unlink(tmp, dir_fd=folder)
            except OSError:
                pass
        raise
