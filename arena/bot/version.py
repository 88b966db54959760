"""Which version of a bot runs: a fingerprint of what it is started with.

A tournament that runs for weeks sees teams fix their bots.  Every game
record names the version of each bot that played it, and a run refuses to
mix versions silently (see :mod:`arena.run.results_dir`).  A bot's version
is the one its entry declares (``version:``), or else a digest of:

- its command (the arena's interpreter written as ``python``, so that a new
  virtual environment is not a new bot), options and environment;
- the content of every file its command names inside its working directory
  or by path (the script, the binary, the jar, a ``-m`` module), and, for a
  bot submitted as a folder (``bots_from``), of every file in that folder
  but hidden ones (``.git``, ``.venv``) and Python's byte-code caches, which
  running the bot writes there.

Programs found on the PATH (``python``, ``java``, ``node``) are not part of
it: upgrading the machine does not make every bot a new version.  Values of
``env`` enter as digests, so ``tournament.json`` holds no secret.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bot.spec import BotConfig

__all__ = ["Fingerprint", "fingerprint", "describe_change"]

#: Files read for one bot's fingerprint at the most; the rest count by name and size only.
MAX_FILES = 10_000


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
    #: File (relative to the bot's folder, or absolute) -> SHA-256 of its content
    #: (past :data:`MAX_FILES`, its size).
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


def fingerprint(bot: BotConfig) -> Fingerprint:
    """The version of ``bot`` and what it is made of."""
    cmd = tuple("python" if word == sys.executable else word for word in bot.cmd)
    files = _files(bot)
    env = {name: hashlib.sha256(value.encode()).hexdigest()[:16] for name, value in bot.env.items()}
    digest = hashlib.sha256(json.dumps(
        {"cmd": cmd, "options": bot.options, "env": env, "files": files}, sort_keys=True, default=str
    ).encode()).hexdigest()[:8]
    return Fingerprint(bot.version or digest, bot.version, cmd, bot.options, env, files)


def describe_change(old: Fingerprint | None, new: Fingerprint) -> str:
    """What differs between two fingerprints of one bot, in a few words."""
    if old is None:
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
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            changes.append(f"{shown} {verb}")
    return "; ".join(changes) or f"its version changed from {old.version} to {new.version}"


def _files(bot: BotConfig) -> dict[str, str]:
    found: dict[str, Path] = {}
    if bot.source is not None:
        for path in sorted(_folder_files(bot.source)):
            found[str(path.relative_to(bot.source))] = path
    words = list(bot.cmd)
    for i, word in enumerate(words):
        if i == 0 and "/" not in word:
            continue  # a program on the PATH
        if i > 0 and words[i - 1] == "-m":
            word = word.replace(".", "/") + ".py"  # python -m package.module
        path = bot.cwd / word
        for candidate in (path, path.with_suffix("") / "__main__.py") if word.endswith(".py") else (path,):
            if candidate.is_file() and str(candidate) != sys.executable:
                found.setdefault(_name(candidate, bot), candidate)
                break
    return {name: _digest(path) if i < MAX_FILES else _size(path) for i, (name, path) in enumerate(sorted(found.items()))}


def _folder_files(folder: Path) -> list[Path]:
    """The files of a submission's folder, hidden ones and byte-code caches left out."""
    files = []
    for directory, subdirectories, names in os.walk(folder):
        subdirectories[:] = [d for d in subdirectories if not d.startswith(".") and d != "__pycache__"]
        files += [Path(directory, name) for name in names
                  if not name.startswith(".") and not name.endswith((".pyc", ".pyo"))
                  and not os.path.islink(os.path.join(directory, name))]
    return files


def _size(path: Path) -> str:
    try:
        return f"size {path.stat().st_size}"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def _name(path: Path, bot: BotConfig) -> str:
    base = bot.source or bot.cwd
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path.resolve())


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                sha.update(chunk)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return sha.hexdigest()
