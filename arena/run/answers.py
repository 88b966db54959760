"""Answers a reader worked out, kept in the results directory's index for
the next reader that asks the same question of the same results.

Reading a league of a million games costs minutes of parsing and folding
however little changed; most reads (a course's ``arena standings`` every few
minutes, a page reloaded) ask again what was just answered, of a few more
games.  A question is a digest of everything its answer depends on but the
games: where the directory is and how it was named from where (an answer's
warnings and records name it so), ``tournament.json``'s bytes, the
tournament file's settings when the user named one, what was asked, and the
arena's own code.  Any change to one of them is another question, read from
the games again.  The answer itself says how far into the log it read, and
its reader reads on from there, or reads the games again when the log no
longer starts as it read it (:mod:`arena.run.standings_read`).

An answer is a pickle, and a pickle runs code when loaded: the index seals
each answer with this user's key (:mod:`arena.results.seals`), so only one
this user's arena wrote is ever loaded; an index from someone else answers
nothing.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import engine
from arena.base import safe_files
from arena.results.game_index import GameIndex, IndexUnusable
from arena.results.meta import MAX_META_BYTES, META_FILE
from arena.results.store import GAMES_FILE

__all__ = ["question_of", "recall", "remember"]

T = TypeVar("T")

def question_of(directory: Path, asked: Sequence[object]) -> str | None:
    """The question ``asked`` (what was asked, as values with a stable
    ``repr``: a command, its options, the tournament file's settings) of the
    results in ``directory`` as they are now, but their games; None when
    they cannot be pinned down (no log, a link in its place): such a read
    is never kept."""
    try:
        os.close(safe_files.open_file(directory, GAMES_FILE, os.O_RDONLY))
        try:
            meta = safe_files.read_file(directory, META_FILE, MAX_META_BYTES)
        except FileNotFoundError:
            meta = b""
        named = os.path.join(os.getcwd(), directory)  # (as named: not made normal)
    except OSError:
        return None
    digest = hashlib.blake2b(digest_size=20)
    # Where the directory is, and how it was named from where: the answer names it as it was named
    # (its warnings; its records read their moves from there, a relative name from the folder it was read from).
    for part in (_code(), os.fsencode(directory.resolve()), os.fsencode(named), meta, repr(tuple(asked)).encode()):
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


def recall(directory: Path, question: str) -> object | None:
    """The answer kept for ``question``, or None."""
    value = _with_index(directory, lambda index: index.answer(question))
    if value is None:
        return None
    try:
        return pickle.loads(value)
    except Exception:  # (sealed by this user's arena, yet of classes since changed: read again)
        return None


def remember(directory: Path, question: str, answer: object) -> None:
    """Keep ``answer`` for ``question`` (none kept where the index cannot be written)."""
    value = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
    _with_index(directory, lambda index: index.remember(question, value))


def _with_index(directory: Path, use: Callable[[GameIndex], T]) -> T | None:
    """``use`` of the directory's index as it is (never rebuilt here); None when there is none to use."""
    try:
        fd = safe_files.open_file(directory, GAMES_FILE, os.O_RDONLY)
    except OSError:
        return None
    index = GameIndex(directory)
    try:
        index.open(fd, repair=False)
        return use(index)
    except IndexUnusable:
        return None
    finally:
        index.close()
        os.close(fd)


@functools.cache
def _code() -> bytes:
    """The arena's code as installed (each module's path, size and last
    change): an answer from another version of the arena is another question."""
    parts = []
    for root in (Path(__file__).resolve().parents[1], Path(engine.__file__).resolve().parent):  # arena/, engine/
        for path in sorted(root.rglob("*.py")):
            info = path.stat()
            parts.append(f"{path.relative_to(root.parent)}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts).encode()
