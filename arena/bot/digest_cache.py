"""The digests of a bot's files from the last run, so that a run does not
hash again what did not change (forty teams' folders on every start).

As git's index does, a digest is kept with the file's size, modification
and change times (nanoseconds), inode and device, and reused only while all
five are the same.  A write changes the change time, which no user can set
back (``touch`` sets the modification time only): a file rewritten to its
old size and given its old modification time is read again.  A file changed
in the same clock tick as it was read could still keep all five, so a
digest is kept only for a file whose last change was at least
:data:`RACY_NS` older than the read (git's "racily clean" entries): a file
changed just now is read again next time.

One JSON file per bot (per folder, for a submission), in ``$TOTEM_ARENA_CACHE``, else
``$XDG_CACHE_HOME/totem-arena``, else ``~/.cache/totem-arena``: outside
every submission and every results directory, out of a sandboxed bot's
sight.  ``TOTEM_ARENA_CACHE=off`` keeps none.  A cache that cannot be read
or written is no cache: the files are hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["DigestCache", "RACY_NS", "cache_directory"]

#: A file changed less than this before it was read is read again next time.
RACY_NS = 2_000_000_000
#: The largest cache file read back (a folder of 5,000 files takes about 1 MB).
_MAX_CACHE_BYTES = 16 << 20


def cache_directory() -> Path | None:
    """Where the digests are kept; None when ``TOTEM_ARENA_CACHE=off``."""
    chosen = os.environ.get("TOTEM_ARENA_CACHE", "")
    if chosen.lower() in ("off", "0", "no", "false"):
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "totem-arena"


def _key(info: os.stat_result) -> list[int]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]


class DigestCache:
    """The digests of one bot's files by name, kept under ``key`` (its
    folder, for a submission; see the module)."""

    def __init__(self, key: str) -> None:
        directory = cache_directory()
        self.path = None if directory is None else (
            directory / "fingerprints" / f"{hashlib.sha256(key.encode(errors='surrogateescape')).hexdigest()[:32]}.json")
        self._old = self._load()
        self._new: dict[str, list[Any]] = {}

    def _load(self) -> dict[str, list[Any]]:
        if self.path is None:
            return {}
        try:
            with open(self.path, "rb") as handle:
                data = json.loads(handle.read(_MAX_CACHE_BYTES + 1)[:_MAX_CACHE_BYTES])
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {name: entry for name, entry in data.items() if isinstance(name, str) and isinstance(entry, list)
                and len(entry) == 6 and all(type(v) is int for v in entry[:5]) and isinstance(entry[5], str)}

    def get(self, name: str, info: os.stat_result) -> str | None:
        """The digest of ``name`` if the file is as it was when it was hashed."""
        entry = self._old.get(name)
        if entry is None or entry[:5] != _key(info):
            return None
        self._new[name] = entry
        return entry[5]

    def put(self, name: str, info: os.stat_result, digest: str, read_at_ns: int) -> None:
        """Remember ``digest`` of ``name`` as it was (``info``) when read at ``read_at_ns``."""
        if max(info.st_mtime_ns, info.st_ctime_ns) <= read_at_ns - RACY_NS:
            self._new[name] = [*_key(info), digest]

    def save(self) -> None:
        """Keep the digests of this fingerprint (files gone are forgotten), if any changed."""
        if self.path is None or self._new == self._old:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".digests-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as handle:
                    json.dump(self._new, handle)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # no cache: the next run hashes again
