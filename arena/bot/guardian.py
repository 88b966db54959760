"""Kills what a Ray actor's bots leave behind when the actor dies.

    python -m arena.bot.guardian   (stdin: the read end of a pipe the actor holds open)

A bot gets a parent-death signal, so it dies with its actor however the
actor ends, but whatever the bot forked does not: when an actor is
``kill -9``'ed (by Ray, a person, the OOM killer), its subreaper is gone and
nobody is left on that node to end the bots' children.  The guardian is
started by the actor in a process group of its own, notes the session of
every bot the actor has (each bot leads its own), and when the pipe closes
(the actor is gone, whatever the way) it SIGKILLs every process still in one
of those sessions.  (The actor's bot cgroups, if any, are swept as stale by
the next arena process on the node: see :mod:`arena.bot.cgroups`.)
"""

from __future__ import annotations

import os
import select
import signal
import sys

from arena.base.processes import children, proc_stat

#: How often the actor's children are looked at.
POLL_S = 0.25


def kill_sessions(sessions: set[int]) -> None:
    """SIGKILL every process whose session is one of ``sessions``, until none is left."""
    for _ in range(10):  # a process may fork while we look; it is in the same session
        found = False
        for entry in os.listdir("/proc"):
            fields = proc_stat(entry) if entry.isdigit() else None
            if fields is not None and fields[0] != "Z" and int(fields[3]) in sessions:
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        if not found:
            return


def guard(actor: int) -> None:
    # Only the bots alive now: the session id of a bot that ended long ago
    # may belong to an unrelated process by the time the actor dies.
    sessions: set[int] = set()
    while True:
        readable, _, _ = select.select([sys.stdin.buffer], [], [], POLL_S)
        if readable and not os.read(sys.stdin.fileno(), 64):
            break  # end of file: the actor is gone
        bots = {child for child in children(actor) if child != os.getpid() and (proc_stat(child) or [""] * 4)[3] == str(child)}
        state = proc_stat(actor)
        if bots or (state is not None and state[0] != "Z"):  # a dying actor has no children left to show
            sessions = bots
    kill_sessions(sessions)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is the driver's business
    guard(os.getppid())
