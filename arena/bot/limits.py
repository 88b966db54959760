"""What one bot process tree may use (:class:`Limits`), and the rlimits
that enforce it in each process.

Memory and the number of processes are counted for the whole tree by the
bot's cgroup where there is one (:mod:`arena.bot.cgroups`); :func:`rlimits`
falls back to weaker per-process limits for what no cgroup holds.  File size
and CPU time are always rlimits (``RLIMIT_FSIZE``, ``RLIMIT_CPU``): the
kernel enforces them for every user, root included.  The scratch quota is
:mod:`arena.bot.quota`'s: a tmpfs of that size where the arena can mount
one for the bot, else measured.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.bot.cgroups import BotCgroup

__all__ = ["Limits", "LIMIT_KEYS", "MB", "rlimits"]

#: Bytes in a megabyte, as the limits count them.
MB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What one bot process tree may use; ``None`` means unlimited.

    ``memory_mb``: resident memory of the whole tree (cgroup) or writable data
    of each process (``RLIMIT_DATA`` fallback).  ``processes``: processes and
    threads of the tree.  ``file_mb``: the largest file it may write.
    ``cpu_s``: CPU seconds of each process over its whole life (it plays many
    games), off by default since the clock already bounds thinking time.
    ``scratch_mb`` and ``scratch_files``: what its scratch directory (its
    HOME and TMPDIR) may hold in all, in bytes and in files (directories
    count), so that no bot can fill the disk the results live on."""

    memory_mb: int | None = 1024
    processes: int | None = 64
    file_mb: int | None = 64
    cpu_s: float | None = None
    scratch_mb: int | None = 256
    scratch_files: int | None = 10000

    def to_json(self) -> dict[str, float | None]:
        return {"memory_mb": self.memory_mb, "processes": self.processes, "file_mb": self.file_mb, "cpu_s": self.cpu_s,
                "scratch_mb": self.scratch_mb, "scratch_files": self.scratch_files}


#: Every field of :class:`Limits`, as the YAML spells it.
LIMIT_KEYS = tuple(Limits().to_json())


def rlimits(limits: Limits, cgroup: BotCgroup | None) -> list[tuple[int, int, int]]:
    """The (resource, soft, hard) limits to set in the bot before exec.

    Memory and processes fall back to rlimits only without a cgroup that
    holds them: ``RLIMIT_DATA`` rather than ``RLIMIT_AS``, because Go, Node
    and the JVM reserve far more address space than they use, and
    ``RLIMIT_NPROC`` counts every process of the user (so it is set above
    what the user already runs) and is not enforced for root at all."""
    triples: list[tuple[int, int, int]] = []
    if limits.file_mb is not None:
        triples.append((resource.RLIMIT_FSIZE, limits.file_mb * MB, limits.file_mb * MB))
    if limits.cpu_s is not None:
        # SIGXCPU at the soft limit says why; SIGKILL a second later if it is ignored.
        seconds = max(1, int(limits.cpu_s + 0.999))
        triples.append((resource.RLIMIT_CPU, seconds, seconds + 1))
    if limits.memory_mb is not None and (cgroup is None or not cgroup.counts_memory):
        triples.append((resource.RLIMIT_DATA, limits.memory_mb * MB, limits.memory_mb * MB))
    if limits.processes is not None and (cgroup is None or not cgroup.counts_processes) and os.geteuid() != 0:
        count = _user_processes() + limits.processes
        triples.append((resource.RLIMIT_NPROC, count, count))
    return triples


def _user_processes() -> int:
    """Processes (threads count too, for RLIMIT_NPROC) of this user now."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count
