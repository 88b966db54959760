"""A team's submission folder (``bots_from``), read as the hostile input it is.

A submission is a folder someone else filled: its manifest and its files
are read by the arena (to start the bot, to fingerprint its version) before
any sandbox confines anything.  So nothing here follows a link out of the
folder, opens a special file (a FIFO blocks, ``/dev/zero`` never ends),
recurses as deep as the folder is, or reads more than
:class:`SubmissionLimits` allow, in bytes, files, depth and time.  A folder
over them is a bot that cannot start: the caller says so in one line.

What the arena reads of a folder is every file in it, links within it
included, but the folders of :data:`LEFT_OUT`: byte-code Python writes and
checks against its sources, and version-control history, neither of which
the bot loads as code.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from arena.bot.limits import MB
from arena.base.text import safe

__all__ = ["LEFT_OUT", "SUBMISSION_KEYS", "Entry", "SubmissionLimits", "SubmissionProblem", "folder_entries",
           "open_regular", "outside_word", "read_folder_file", "read_manifest"]

#: Folders of a submission that are not part of it: Python's byte-code
#: caches (written by running the bot, and run only in place of a source of
#: the same size and time) and git's history (the files checked out are what runs).
LEFT_OUT = frozenset({"__pycache__", ".git"})
#: Where a program named by path is the system's, not the team's (the sandbox shows these).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix")
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


@dataclass(frozen=True)
class SubmissionLimits:
    """What the arena reads of one submission at the most (``None``: no bound).

    ``folder_mb``: the size of its files in all; ``folder_files``: its files,
    folders and links; ``folder_depth``: folders within folders;
    ``manifest_kb``: its ``bot.yaml``; ``fingerprint_s``: the seconds walking
    and hashing its folder may take."""

    folder_mb: int | None = 100
    folder_files: int | None = 5000
    folder_depth: int | None = 32
    manifest_kb: int | None = 64
    fingerprint_s: float | None = 30.0


#: Every field of :class:`SubmissionLimits`, as the YAML spells it.
SUBMISSION_KEYS = tuple(f.name for f in fields(SubmissionLimits))


class SubmissionProblem(Exception):
    """Why a submission cannot be read within its limits, in one line."""


@dataclass(frozen=True)
class Entry:
    """A file or link of a submission: ``name`` relative to its folder (``/``
    between folders), ``path`` absolute, its ``lstat``, and for a link its target."""

    name: str
    path: str
    info: os.stat_result
    link: str | None = None


def deadline_of(limits: SubmissionLimits) -> float | None:
    """The monotonic time by which reading a submission must be done."""
    return None if limits.fingerprint_s is None else time.monotonic() + limits.fingerprint_s


def check_time(deadline: float | None, limits: SubmissionLimits) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise SubmissionProblem(f"reading its folder took more than {limits.fingerprint_s:g} s (fingerprint_s)")


def folder_entries(folder: Path, limits: SubmissionLimits, deadline: float | None = None) -> list[Entry]:
    """The files and links of ``folder`` (the folders of :data:`LEFT_OUT`
    aside), by name.  Walked without recursion and without following a
    link; raises :class:`SubmissionProblem` at the first special file, link
    out of the folder, or bound passed."""
    root = os.fspath(folder)
    real_root = os.path.realpath(root)
    max_bytes = None if limits.folder_mb is None else limits.folder_mb * MB
    found: list[Entry] = []
    count = total = 0
    todo: list[tuple[str, int]] = [("", 0)]
    while todo:
        relative, depth = todo.pop()
        try:
            listing = os.scandir(os.path.join(root, relative) if relative else root)
        except OSError as exc:
            raise SubmissionProblem(f"cannot read its folder {_shown(relative or '.')}: {exc.strerror or exc}") from None
        with listing:
            for entry in listing:
                name = f"{relative}/{entry.name}" if relative else entry.name
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError as exc:
                    raise SubmissionProblem(f"cannot read {_shown(name)}: {exc.strerror or exc}") from None
                if stat.S_ISDIR(info.st_mode) and entry.name in LEFT_OUT:
                    continue
                count += 1
                if limits.folder_files is not None and count > limits.folder_files:
                    raise SubmissionProblem(f"it holds more than {limits.folder_files} files and folders (folder_files)")
                check_time(deadline, limits)
                if stat.S_ISDIR(info.st_mode):
                    if limits.folder_depth is not None and depth >= limits.folder_depth:
                        raise SubmissionProblem(
                            f"its folders nest more than {limits.folder_depth} deep (folder_depth), at {_shown(name)}")
                    todo.append((name, depth + 1))
                elif stat.S_ISLNK(info.st_mode):
                    try:
                        target, text = os.path.realpath(entry.path), os.readlink(entry.path)
                    except OSError as exc:
                        raise SubmissionProblem(f"cannot read the link {_shown(name)}: {exc.strerror or exc}") from None
                    if not _inside(target, real_root):
                        raise SubmissionProblem(f"{_shown(name)} is a link out of its folder")
                    found.append(Entry(name, entry.path, info, text))
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
                    if max_bytes is not None and total > max_bytes:
                        raise SubmissionProblem(f"its files hold more than {limits.folder_mb} MB (folder_mb)")
                    found.append(Entry(name, entry.path, info))
                else:
                    kind = _KINDS.get(stat.S_IFMT(info.st_mode), "a special file")
                    raise SubmissionProblem(f"{_shown(name)} is {kind}; a submission holds only files, folders and links")
    return sorted(found, key=lambda e: e.name)


def open_regular(path: str, *, follow: bool = False) -> tuple[int, os.stat_result]:
    """A descriptor open for reading on ``path`` and its ``fstat``, only when
    it is a regular file: never blocks on a FIFO, never follows a link unless
    ``follow``.  Raises ``OSError`` (``EINVAL`` for something not a file)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"not a file but {_KINDS.get(stat.S_IFMT(info.st_mode), 'a special file')}")
    return fd, info


def read_manifest(path: Path, limits: SubmissionLimits) -> str | None:
    """The text of a manifest, None when there is none.  Raises
    :class:`SubmissionProblem` for a link, a special file, one over
    ``manifest_kb`` or not UTF-8."""
    return read_folder_file(path, None if limits.manifest_kb is None else limits.manifest_kb * 1024,
                            "a manifest", "manifest_kb")


def read_folder_file(path: Path, limit: int | None, what: str, bound: str) -> str | None:
    """The text of ``what`` (a manifest, a requirements file) in a
    submission, None when there is none.  Raises :class:`SubmissionProblem`
    for a link, a special file, one over ``limit`` bytes (the setting
    ``bound``) or not UTF-8."""
    try:
        fd, info = open_regular(os.fspath(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "a link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise SubmissionProblem(f"it cannot be read: {why}; {what} is a file of the folder's own") from None
    try:
        if limit is not None and info.st_size > limit:
            raise SubmissionProblem(f"it holds {info.st_size} bytes; {what} may hold at most "
                                    f"{limit // 1024} KB ({bound})")
        data = os.read(fd, (limit if limit is not None else info.st_size) + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionProblem(f"it is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def outside_word(cmd: Sequence[str], folder: Path) -> str | None:
    """The first word of a submission's command that names a path outside
    its ``folder`` (links resolved), or None.  The program may also be a
    system one (``/usr/bin/java``) or the arena's own Python; a word with a
    space and no leading ``/`` is taken for code (``python -c``), not a path."""
    real_root = os.path.realpath(folder)
    for number, word in enumerate(cmd):
        if number == 0 and ("/" not in word or word == sys.executable):
            continue  # a program on the PATH: the interpreter
        for text in (word, word.partition("=")[2]) if word.startswith("-") else (word,):
            if not _names_a_path(text, folder):
                continue
            try:
                target = os.path.realpath(os.path.join(folder, os.path.expanduser(text)))
            except ValueError:  # a NUL byte: no path the bot could use either
                return word
            if _inside(target, real_root):
                continue
            if number == 0 and any(_inside(target, system) for system in _SYSTEM_DIRS):
                continue
            return word
    return None


def _names_a_path(text: str, folder: Path) -> bool:
    if not text:
        return False
    if text.startswith(("/", "~")):
        return True
    if "/" in text and not any(ch.isspace() for ch in text):
        return True
    try:
        return os.path.lexists(os.path.join(folder, text))
    except (OSError, ValueError):
        return False


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _shown(name: str) -> str:
    """A name from a submission, on one line, quoted."""
    return f"'{safe(name, limit=200)}'"
