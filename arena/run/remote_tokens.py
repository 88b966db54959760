"""The tokens remote bots authenticate with: one per bot, made by
``arena remote token``, shown once and stored only as its SHA-256 digest.

A token is 32 random bytes (``secrets``), so a plain digest is as safe as
a slow key derivation would be: nothing of that size can be guessed, and
the file never holds what a bot presents.  The file is text, a line per
bot (``team-x sha256:<hex>``), written with mode 0600.  A token is looked
up by comparing its digest with every bot's in constant time
(:func:`hmac.compare_digest`, no early exit), so the time taken says
nothing of which bot's digest it is close to.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

__all__ = ["TokenFileError", "make_token", "read_tokens", "token_owner", "MAX_TOKEN_CHARS"]

#: The longest token a client may present (ours are 43 characters).
MAX_TOKEN_CHARS = 200
_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.+-]{0,63}) sha256:([0-9a-f]{64})")
_MAX_FILE_BYTES = 1_000_000


class TokenFileError(Exception):
    """A tokens file that cannot be read or is not one ``arena remote token`` writes; one line."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def read_tokens(path: Path) -> dict[str, str]:
    """Each bot's token digest in the file at ``path`` (none when it does not exist)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > _MAX_FILE_BYTES:
        raise TokenFileError(f"{path}: over {_MAX_FILE_BYTES} bytes, not a tokens file")
    digests: dict[str, str] = {}
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line.strip())
        if match is None:
            raise TokenFileError(f"{path}:{number}: not a line 'BOT sha256:DIGEST' (made by arena remote token)")
        digests[match.group(1)] = match.group(2)
    return digests


def make_token(path: Path, bot: str) -> str:
    """A new token for ``bot``, its digest stored in ``path`` in place of any
    earlier one (which stops working); the token itself is stored nowhere."""
    if not _LINE.fullmatch(f"{bot} sha256:{'0' * 64}"):
        raise TokenFileError(f"bad bot name {bot!r}: use 1 to 64 letters, digits and _.+- , starting with one of the first two")
    token = secrets.token_urlsafe(32)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # One at a time (a script making every team's token at once): each reads the file the last one wrote.
        lock = os.open(path.with_name(f".{path.name}.lock"), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot write beside it: {exc.strerror or exc}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digests = read_tokens(path)
        digests[bot] = _digest(token)
        text = "# remote bots' token digests, written by arena remote token\n" + "".join(
            f"{name} sha256:{digest}\n" for name, digest in sorted(digests.items()))
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise TokenFileError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    finally:
        os.close(lock)
    return token


def token_owner(digests: Mapping[str, str], token: str) -> str | None:
    """The bot whose token ``token`` is, or None.  Every digest is compared,
    each in constant time, whichever matches."""
    if not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():  # (a token is ASCII: no other is anyone's)
        return None
    presented = _digest(token).encode()
    owner = None
    for bot, digest in digests.items():
        if hmac.compare_digest(presented, digest.encode()) and owner is None:
            owner = bot
    return owner
