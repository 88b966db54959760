"""Which version of a bot runs: a fingerprint of what it is started with.

A tournament that runs for weeks sees teams fix their bots.  Every game
record names the version of each bot that played it, and a run refuses to
mix versions silently (see :mod:`arena.run.results_dir`).  A bot's version
is the one its entry declares (``version:``), or else a digest of:

- its command (the arena's interpreter written as ``python``, so that a new
  virtual environment is not a new bot), options and environment;
- for a bot of the tournament file, the content of every file its command
  names inside its working directory or by path (the script, the binary,
  the jar, a ``-m`` module);
- for a bot submitted as a folder (``bots_from``), every file of that
  folder, hidden ones included, and the target of every link in it, but
  the folders Python's byte-code caches and git's history live in (see
  :mod:`arena.bot.submission`), and nothing outside it: the files it names
  in those folders count, and a digest is never of a file the team could
  not read itself.

A submission's folder is read within its :class:`SubmissionLimits` (bytes,
files, depth, time); the digests of files unchanged since the last run are
taken from :class:`~arena.bot.digest_cache.DigestCache` rather than read
again.  Programs found on the PATH (``python``, ``java``, ``node``) are not
part of a version: upgrading the machine does not make every bot a new
version.  Values of ``env`` enter as digests, so ``tournament.json`` holds
no secret.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bot.digest_cache import DigestCache
from arena.bot.limits import MB
from arena.bot.spec import BotConfig
from arena.bot.submission import (
    SubmissionLimits, SubmissionProblem, check_time, deadline_of, folder_entries, open_regular,
)
from arena.base.text import safe

__all__ = ["Fingerprint", "fingerprint", "describe_change", "changed_since"]


@dataclass(frozen=True)
class Fingerprint:
    """A bot's version and what it was computed from (kept in ``tournament.json``
    so that a later run can say what changed)."""

    version: str
    #: The declared version, or None.
    declared: str | None
    cmd: tuple[str, ...]
    options: dict[str, Any]
    #: Variable -> a digest of its value.
    env: dict[str, str]
    #: File (relative to the bot's folder, or absolute) -> SHA-256 of its
    #: content (``link to <target>`` for a link, ``unreadable: <why>``).
    files: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "declared": self.declared, "cmd": list(self.cmd),
                "options": self.options, "env": self.env, "files": self.files}

    @classmethod
    def from_json(cls, data: Any) -> Fingerprint | None:
        """The fingerprint ``tournament.json`` holds, or None when it holds none readable."""
        try:
            return cls(str(data["version"]), data.get("declared"), tuple(data["cmd"]), dict(data["options"]),
                       dict(data["env"]), {str(k): str(v) for k, v in data["files"].items()})
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


#: The name a remote bot's files go by in its fingerprint.
REPORTED = "(as its bridge reports)"


def fingerprint(bot: BotConfig, limits: SubmissionLimits = SubmissionLimits()) -> Fingerprint:
    """The version of ``bot`` and what it is made of.  Raises
    :class:`SubmissionProblem` when a submission's folder cannot be read
    within ``limits`` (a submission that cannot start has no files)."""
    cmd = tuple("python" if word == sys.executable else word for word in bot.cmd)
    # A remote bot's files are on its author's machine: what its bridge reports of them stands for them.
    files = {REPORTED: bot.remote.reported_version} if bot.remote is not None and bot.remote.reported_version \
        else _files(bot, limits)
    env = {name: hashlib.sha256(value.encode()).hexdigest()[:16] for name, value in bot.env.items()}
    digest = hashlib.sha256(json.dumps(
        {"cmd": cmd, "options": bot.options, "env": env, "files": files}, sort_keys=True, default=str
    ).encode()).hexdigest()[:8]
    return Fingerprint(bot.version or digest, bot.version, cmd, bot.options, env, files)


def changed_since(bot: BotConfig, recorded: str, limits: SubmissionLimits = SubmissionLimits()) -> str | None:
    """Why a process of ``bot`` must not start for a game recorded under
    version ``recorded``: its files make another version now, or its folder
    can no longer be read within ``limits``; None when they are still
    ``recorded``.  A declared version is taken at its word, and a remote
    bot's files are on its author's machine: neither is read again."""
    if bot.version is not None or bot.remote is not None:
        return None
    try:
        now = fingerprint(bot, limits).version
    except SubmissionProblem as exc:
        return f"its files can no longer be read since the run started (version {recorded} recorded): {exc}"
    if now == recorded:
        return None
    return (f"its files changed since the run started (version {recorded} recorded, now {now}): "
            "the next run plays this game as the new version")


def describe_change(old: Fingerprint | None, new: Fingerprint) -> str:
    """What differs between two fingerprints of one bot, in a few words."""
    if old is None or old.version == new.version:  # nothing to compare: only the version is to say
        return f"its version is now {new.version}"
    if old.declared != new.declared and new.declared is not None:
        return f"its declared version changed from {old.declared or old.version} to {new.declared}"
    changes = []
    if old.cmd != new.cmd:
        changes.append(f"its command changed from {' '.join(old.cmd)!r} to {' '.join(new.cmd)!r}")
    if old.options != new.options:
        changes.append("its options changed")
    if old.env != new.env:
        changes.append("its env changed")
    changed = sorted(name for name in new.files.keys() & old.files.keys() if new.files[name] != old.files[name])
    added = sorted(new.files.keys() - old.files.keys())
    removed = sorted(old.files.keys() - new.files.keys())
    for verb, names in (("changed", changed), ("added", added), ("removed", removed)):
        if names:
            # A submission names its files: one line whatever the names hold.
            shown = ", ".join(safe(name, limit=100) for name in names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else "")
            changes.append(f"{shown} {verb}")
    return "; ".join(changes) or f"its version changed from {old.version} to {new.version}"


def _files(bot: BotConfig, limits: SubmissionLimits) -> dict[str, str]:
    if bot.source is not None and bot.problem is not None:
        return {}
    base = bot.cwd if bot.source is not None else None
    deadline = deadline_of(limits) if base is not None else None
    # A folder's digests serve every tournament it is in; bots of a file may share a cwd.
    cache = DigestCache(str(bot.cwd) if base is not None else f"{bot.cwd}\0{bot.name}")
    read = _Reader(cache, limits if base is not None else None, deadline)
    files: dict[str, str] = {}
    if base is not None:
        for entry in folder_entries(base, limits, deadline):
            files[entry.name] = (f"link to {entry.link}" if entry.link is not None
                                 else read.digest(entry.name, entry.path, entry.info))
    for name, path in _named_files(bot, base).items():
        if name not in files:
            files[name] = read.digest(name, path)
    cache.save()
    return dict(sorted(files.items()))


def _named_files(bot: BotConfig, folder: Path | None) -> dict[str, str]:
    """The files ``bot``'s command names (by name in its folder, or
    absolute), found from its working directory; for a submission
    (``folder``), only those inside its folder."""
    found: dict[str, str] = {}
    words = list(bot.cmd)
    for i, word in enumerate(words):
        if i == 0 and "/" not in word:
            continue  # a program on the PATH
        if i > 0 and words[i - 1] == "-m":
            word = word.replace(".", "/") + ".py"  # python -m package.module
        path = bot.cwd / word
        for candidate in (path, path.with_suffix("") / "__main__.py") if word.endswith(".py") else (path,):
            try:
                if not candidate.is_file() or str(candidate) == sys.executable:
                    continue
                resolved = candidate.resolve()
            except (OSError, ValueError):
                break
            if folder is not None and not resolved.is_relative_to(folder.resolve()):
                break  # not the team's to publish a digest of
            found.setdefault(_name(resolved, bot), str(resolved))
            break
    return found


def _name(resolved: Path, bot: BotConfig) -> str:
    try:
        return str(resolved.relative_to(bot.cwd.resolve()))
    except ValueError:
        return str(resolved)


class _Reader:
    """Digests of files, from the cache when a file is unchanged; for a
    submission (``limits``) within its bytes and its time."""

    def __init__(self, cache: DigestCache, limits: SubmissionLimits | None, deadline: float | None) -> None:
        self.cache = cache
        self.limits = limits
        self.deadline = deadline
        self.left = None if limits is None or limits.folder_mb is None else limits.folder_mb * MB

    def digest(self, name: str, path: str, seen: os.stat_result | None = None) -> str:
        """SHA-256 of the file at ``path`` (``seen``: its ``lstat``, when
        the walk of its folder took it), or ``unreadable: <why>``."""
        cached = self.cache.get(name, seen) if seen is not None else None
        if cached is not None:  # the same inode, size and times: not even opened
            return cached
        read_at = time.time_ns()
        try:
            fd, info = open_regular(path, follow=self.limits is None)
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
        try:
            cached = self.cache.get(name, info)
            if cached is not None:
                return cached
            sha = hashlib.sha256()
            size = info.st_size  # /proc's files say 0 and never end
            if self.left is not None:
                self.left -= size
                if self.left < 0:
                    raise SubmissionProblem(f"its files hold more than {self.limits.folder_mb} MB (folder_mb)")
            while size > 0:
                if self.limits is not None:
                    check_time(self.deadline, self.limits)
                chunk = os.read(fd, min(size, 1 << 20))
                if not chunk:
                    break
                sha.update(chunk)
                size -= len(chunk)
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
        finally:
            os.close(fd)
        self.cache.put(name, info, sha.hexdigest(), read_at)
        return sha.hexdigest()
