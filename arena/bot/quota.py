"""What a bot may write: its scratch directory within its quota
(``scratch_mb``, ``scratch_files``), and a ``/dev/shm`` of its own.

Where the arena can give a bot a mount namespace of its own (as root, or
else through a user namespace), the bot's scratch directory is a tmpfs of
its quota and its ``/dev/shm`` a tmpfs of its memory limit, mounted in the
child before exec (:class:`PrivateMounts`): the kernel refuses what goes
over with ``ENOSPC``, nothing the bot writes there reaches the disk the
results live on, and both vanish with the bot's last process.  Elsewhere
(no namespaces, or ``TOTEM_ARENA_MOUNTS=off``) the scratch directory stays
on disk and a :class:`ScratchWatch` measures it on a timer and has the bot
killed once it holds more than its quota; ``/dev/shm`` is then the
machine's.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from arena.bot.limits import Limits, MB

__all__ = ["PrivateMounts", "ScratchWatch", "Usage", "measure", "private_mounts", "empty_directory", "remove_directory", "quota_text",
           "mounts_mode", "watched_quota"]

# --- a mount namespace of the bot's own ---------------------------------------------

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 2, 4, 1 << 14, 1 << 18


def _load_libc() -> tuple[Callable[..., int], Callable[..., int]] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        unshare, mount = libc.unshare, libc.mount
    except (OSError, AttributeError):
        return None
    unshare.argtypes, unshare.restype = [ctypes.c_int], ctypes.c_int
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    mount.restype = ctypes.c_int
    return unshare, mount


# Resolved once at import: between fork and exec no symbol may be looked up
# (that could take a lock another thread of the parent held at fork time).
_LIBC = _load_libc()


def _check(result: int) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


@dataclass(frozen=True)
class PrivateMounts:
    """The mounts a bot gets in a mount namespace of its own: ``(target,
    tmpfs options)`` pairs, made by :meth:`enter` in the child between fork
    and exec.  ``user_namespace``: not root, so the namespace needs a user
    namespace, in which the bot keeps its own uid and gid."""

    tmpfs: tuple[tuple[bytes, bytes], ...]
    user_namespace: bool
    uid: int
    gid: int
    #: Whether the scratch directory is one of the tmpfs (with its quota).
    bounds_scratch: bool

    def enter(self) -> None:
        """Unshare the mount namespace and mount the tmpfs.  Only plain system
        calls: this runs between fork and exec."""
        assert _LIBC is not None
        unshare, mount = _LIBC
        if self.user_namespace:
            _check(unshare(_CLONE_NEWUSER | _CLONE_NEWNS))
            # The bot keeps its uid and gid; it has no capability once it execs.
            for name, text in (("setgroups", b"deny"), ("uid_map", b"%d %d 1" % (self.uid, self.uid)),
                               ("gid_map", b"%d %d 1" % (self.gid, self.gid))):
                fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
                try:
                    os.write(fd, text)
                finally:
                    os.close(fd)
        else:
            _check(unshare(_CLONE_NEWNS))
        # Nothing mounted here may show on the host (most systems share "/").
        _check(mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None))
        for target, options in self.tmpfs:
            _check(mount(b"tmpfs", target, b"tmpfs", _MS_NOSUID | _MS_NODEV, options))


def _mounts_off() -> bool:
    return os.environ.get("TOTEM_ARENA_MOUNTS", "").lower() in ("0", "no", "off", "false")


@functools.lru_cache(maxsize=1)
def _probe() -> str | None:
    """How this process can give bots private mounts: ``"root"``, ``"user
    namespace"``, or None.  Tried once by starting ``true`` the same way a
    bot is started."""
    if _LIBC is None or not os.path.isdir("/dev/shm"):
        return None
    program = shutil.which("true") or "/bin/true"
    ways = ([False] if os.geteuid() == 0 else []) + [True]
    with tempfile.TemporaryDirectory(prefix="totem-probe-") as directory:
        for user_namespace in ways:
            mounts = PrivateMounts(((directory.encode(), b"size=1m,nr_inodes=16,mode=0700"), (b"/dev/shm", b"size=1m,mode=1777")),
                                   user_namespace, os.geteuid(), os.getegid(), True)
            try:
                done = subprocess.run([program], preexec_fn=mounts.enter, capture_output=True, timeout=10)
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0:
                return "user namespace" if user_namespace else "root"
    return None


def mounts_mode() -> str | None:
    """How bots get a scratch tmpfs and a /dev/shm of their own here:
    ``"root"`` (a mount namespace), ``"user namespace"``, or None (they
    cannot: the scratch quota is measured, /dev/shm is shared)."""
    return None if _mounts_off() else _probe()


def private_mounts(limits: Limits, scratch: Path) -> PrivateMounts | None:
    """The private mounts of a bot with ``limits`` and ``scratch`` as its
    scratch directory, or None where there can be none.  The scratch is a
    tmpfs when ``scratch_mb`` is set (null keeps it on disk: a tmpfs without
    a size could take half the memory); ``/dev/shm`` always, as big as the
    memory limit."""
    mode = mounts_mode()
    if mode is None:
        return None
    tmpfs: list[tuple[bytes, bytes]] = []
    if limits.scratch_mb is not None:
        options = f"size={limits.scratch_mb * MB},mode=0700"
        if limits.scratch_files is not None:
            options += f",nr_inodes={limits.scratch_files + 1}"  # its root directory takes one
        tmpfs.append((os.fsencode(scratch), options.encode()))
    shm = "mode=1777" if limits.memory_mb is None else f"size={limits.memory_mb * MB},mode=1777"
    tmpfs.append((b"/dev/shm", shm.encode()))
    return PrivateMounts(tuple(tmpfs), mode == "user namespace", os.geteuid(), os.getegid(), limits.scratch_mb is not None)


def watched_quota(limits: Limits, mounts: PrivateMounts | None) -> tuple[int | None, int | None]:
    """The bytes and files of the quota that the mounts leave to a
    :class:`ScratchWatch` (None: nothing to watch)."""
    if mounts is not None and mounts.bounds_scratch:
        return None, None
    return (limits.scratch_mb * MB if limits.scratch_mb is not None else None), limits.scratch_files


def quota_text(limits: Limits) -> str:
    """The quota as the tournament file spells it, e.g. ``scratch_mb: 256, scratch_files: 10000``."""
    return ", ".join(f"{key}: {value}" for key, value in (("scratch_mb", limits.scratch_mb), ("scratch_files", limits.scratch_files))
                     if value is not None)


# --- measuring a directory ----------------------------------------------------------


class Usage(NamedTuple):
    """Disk space (allocated blocks) and entries (files, directories, links) under a directory."""

    bytes: int
    files: int

    def __str__(self) -> str:
        return f"{_size(self.bytes)} in {self.files} file{'s' if self.files != 1 else ''}"


def _size(count: int) -> str:
    for unit, factor in (("GB", 1 << 30), ("MB", MB), ("KB", 1 << 10)):
        if count >= factor:
            return f"{count / factor:.1f} {unit}"
    return f"{count} bytes"


def measure(path: Path, max_bytes: int | None = None, max_files: int | None = None) -> Usage:
    """What ``path`` holds (a file: itself), links not followed.  The walk
    stops as soon as it has seen more than ``max_bytes`` or ``max_files``, so
    a bot's million empty files cost one quota's worth of looking.  A
    directory the bot made unreadable is made readable again (it is the
    arena's user's), and one nested deeper than a path can name is reached
    all the same; what vanishes meanwhile is not counted."""
    try:
        top = path.lstat()
    except OSError:
        return Usage(0, 0)
    if not stat.S_ISDIR(top.st_mode):
        return Usage(top.st_blocks * 512, 1)
    total, files = 0, 0
    todo = [os.path.abspath(path)]
    while todo:
        directory = todo.pop()
        try:
            entries = _listing(directory)
        except OSError:
            continue
        for name, info in entries:
            total += info.st_blocks * 512
            files += 1
            if (max_bytes is not None and total > max_bytes) or (max_files is not None and files > max_files):
                return Usage(total, files)
            if stat.S_ISDIR(info.st_mode):
                todo.append(os.path.join(directory, name))
    return Usage(total, files)


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: The longest stretch of a path opened at once (PATH_MAX is 4096).
_STRETCH = 2048


def _listing(directory: str) -> list[tuple[str, os.stat_result]]:
    """The names in ``directory`` with their ``lstat``."""
    fd = _open_directory(directory)
    try:
        listed = []
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    listed.append((entry.name, entry.stat(follow_symlinks=False)))
                except OSError:  # gone meanwhile
                    pass
        return listed
    finally:
        os.close(fd)


def _open_directory(directory: str) -> int:
    """A descriptor on ``directory``, which is not followed if it is a link.
    Deeper than a path can name (``ENAMETOOLONG``), it is opened a stretch
    of its path at a time: a bot cannot hide files from the walk by nesting
    folders 2,000 deep."""
    try:
        return _open_in(directory, None)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
    parts = [part for part in directory.split("/") if part]
    fd = os.open("/", _DIRECTORY)
    try:
        start = 0
        while start < len(parts):
            end, size = start + 1, len(parts[start])
            while end < len(parts) and size + 1 + len(parts[end]) < _STRETCH:
                size += 1 + len(parts[end])
                end += 1
            inner = _open_in("/".join(parts[start:end]), fd)
            os.close(fd)
            fd, start = inner, end
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_in(name: str, dir_fd: int | None) -> int:
    """Open directory ``name`` (relative to ``dir_fd``), first making it
    readable again if the bot took that away."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=dir_fd)
    except PermissionError:
        _make_own(name, dir_fd)
        return os.open(name, _DIRECTORY, dir_fd=dir_fd)


def _make_own(name: str, dir_fd: int | None) -> None:
    """Give the arena's user every right on directory ``name`` (a bot's, so
    the arena's user's), never through a link."""
    try:
        if stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            os.chmod(name, 0o700, dir_fd=dir_fd)
    except OSError:
        pass


def empty_directory(path: Path) -> None:
    """Remove everything under ``path`` (not ``path`` itself), whatever the
    modes the bot left on it and however deep it nested its folders; what
    cannot be removed stays, and nothing raises.  Links are removed, never
    followed: a bot without the sandbox may have put one in place of its
    directory, or of any folder in it.

    Without recursion and without long paths: every folder found below the
    first level is moved up to ``path`` (under a name of the arena's) before
    it is emptied, so 1,500 nested folders are emptied as 1,500 folders side
    by side, each through a descriptor."""
    try:
        if path.is_symlink():
            path.unlink()
            return
        top = _open_in(os.fspath(path), None)
    except OSError:
        return
    try:
        todo: list[str | None] = [None]  # None: ``path`` itself; else a folder's name in it
        while todo:
            name = todo.pop()
            try:
                fd = top if name is None else _open_in(name, top)
            except OSError:
                continue
            try:
                _empty_level(fd, top, todo, below_top=name is not None)
            finally:
                if fd != top:
                    os.close(fd)
            if name is not None:
                try:
                    os.rmdir(name, dir_fd=top)
                except OSError:
                    pass
    finally:
        os.close(top)


def _empty_level(fd: int, top: int, todo: list[str | None], *, below_top: bool) -> None:
    """Unlink what the directory ``fd`` holds but folders, and queue those:
    a folder of ``top`` itself as it is, a deeper one moved up into ``top``."""
    try:
        os.fchmod(fd, 0o700)
        with os.scandir(fd) as listing:
            entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
    except OSError:
        return
    for name, is_dir in entries:
        try:
            if not is_dir:
                os.unlink(name, dir_fd=fd)
            elif not below_top:
                todo.append(name)
            else:
                # Moving a folder to another parent rewrites its "..": it must be writable.
                _make_own(name, fd)
                shallow = f".arena-emptying-{secrets.token_hex(8)}"
                os.rename(name, shallow, src_dir_fd=fd, dst_dir_fd=top)
                todo.append(shallow)
        except OSError:
            pass


def remove_directory(path: Path) -> None:
    """Remove ``path`` and everything under it as :func:`empty_directory` does; nothing raises."""
    empty_directory(path)
    try:
        path.rmdir()
    except OSError:
        pass


# --- watching a scratch directory on disk ---------------------------------------------

#: Seconds between two looks at a watched scratch directory, at least.
WATCH_INTERVAL_S = 0.2
#: A look costs at most this share of one core: a directory that takes long
#: to walk is walked less often.
_WATCH_SHARE = 0.05


class ScratchWatch:
    """Measures a scratch directory on disk every :data:`WATCH_INTERVAL_S`
    seconds, on a daemon thread, and calls ``over(why)`` once, when it holds
    more than ``max_bytes`` or ``max_files``; then it stops.  A bot can write
    a lot between two looks: this bounds what it keeps, not what it writes,
    which only a tmpfs (:class:`PrivateMounts`) or the sandbox can."""

    def __init__(self, path: Path, limits: Limits, max_bytes: int | None, max_files: int | None,
                 over: Callable[[str], None]) -> None:
        self.path = path
        self.limits = limits
        self.max_bytes = max_bytes
        self.max_files = max_files
        self._over = over
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"scratch-watch-{path.name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Look no more (without waiting for a look in progress: the caller may hold what ``over`` takes)."""
        self._stopped.set()

    def check(self) -> str | None:
        """One look: why the directory is over its quota, or None."""
        usage = measure(self.path, self.max_bytes, self.max_files)
        if self.max_files is not None and usage.files > self.max_files:
            held = f"more than {self.max_files} files"
        elif self.max_bytes is not None and usage.bytes > self.max_bytes:
            held = f"more than {_size(self.max_bytes).replace('.0 ', ' ')}"
        else:
            return None
        return f"it went over its scratch quota ({quota_text(self.limits)}): its scratch directory held {held}"

    def _run(self) -> None:
        wait = 0.0
        while not self._stopped.wait(wait):
            began = time.monotonic()
            why = self.check()
            if why is not None:
                if not self._stopped.is_set():
                    self._over(why)
                return
            wait = max(WATCH_INTERVAL_S, (time.monotonic() - began) / _WATCH_SHARE)
