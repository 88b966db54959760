"""What this user's arena wrote itself, told apart from what was planted.

A results directory is untrusted input, yet the arena keeps files of its
own there (the index of ``games.jsonl``, a large report's files of games)
that are costly to check or to make again.  A seal under this user's key
says "this user's arena wrote these bytes, for this purpose": nobody else
can make one, so a sealed entry or file is taken as it is, and anything
else is checked (or written anew) as if the arena had never seen it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat

from arena.bot.digest_cache import cache_directory

__all__ = ["seal", "user_key"]


def seal(key: bytes, data: bytes, purpose: bytes, size: int = 16) -> bytes:
    """The seal of ``data`` under ``key``, of ``size`` bytes; ``purpose``
    (at most 16 bytes) keeps the seal of one kind of thing from passing for
    another's."""
    return hashlib.blake2b(data, key=key, digest_size=size, person=purpose).digest()


def user_key() -> bytes | None:
    """This user's key for seals (made on first use, readable by this user
    only), or None where it cannot be had: then nothing is taken as sealed."""
    folder = cache_directory()  # (the arena's own cache: TOTEM_ARENA_CACHE=off keeps no key either)
    if folder is None:
        return None
    path = folder / "index.key"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not os.path.lexists(path):  # whole or not at all: an empty key would turn the seals off for good
            new = folder / f".index.key.{secrets.token_hex(8)}"
            fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                with open(fd, "wb") as handle:
                    handle.write(secrets.token_bytes(32))
                try:
                    os.link(new, path)
                except FileExistsError:  # another process made it first: theirs is the key
                    pass
            finally:
                os.unlink(new)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with open(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            key = handle.read(33)
    except OSError:
        return None
    mine = stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077
    return key if mine and len(key) == 32 else None
