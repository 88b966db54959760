"""The process tree, read from ``/proc``: the one walk of it that the
reaper, the checks, the guardian and the tests share (Linux only)."""

from __future__ import annotations

import os

__all__ = ["children", "descendants", "proc_stat"]


def proc_stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid,
    pgrp, session, ...), or None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()
    except OSError:
        return None


#: /proc/<pid>/task/<tid>/children needs CONFIG_PROC_CHILDREN; without it
#: the whole process table is read instead.
_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def children(pid: int) -> list[int]:
    """The children of process ``pid`` (none once it is gone)."""
    if not _CHILDREN_FILES:
        return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and (proc_stat(entry) or ["", ""])[1] == str(pid)]
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                kids += [int(child) for child in handle.read().split()]
        except OSError:
            pass
    return kids


def descendants(roots: list[int]) -> list[int]:
    """``roots`` and their live descendants, each once, parents first (from
    :func:`children`: the one walk of a process tree)."""
    found: list[int] = []
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.append(pid)
            todo += children(pid)
    return found
