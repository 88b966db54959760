"""The arena-wide reaper: no bot outlives the arena, and nothing a bot
started outlives the bot.

Every process a bot starts dies with it, however it detached itself: the
bot's cgroup is killed where there is one, and the arena process is a child
subreaper (``PR_SET_CHILD_SUBREAPER``, :func:`become_subreaper`), so a
grandchild that escaped the bot's process group with ``setsid`` or a double
fork is re-parented to the arena rather than to init, and is killed
(:func:`kill_adopted`).

:data:`LIVE` holds the started, not yet killed bots of this OS process
(:class:`arena.bot.process.BotProcess` registers itself there), which
:func:`kill_all` kills at exit and :func:`kill_all_now` from a signal handler
or a worker whose parent died (:func:`die_with_parent`).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Protocol

from arena.base.processes import children, descendants
from arena.bot import cgroups

__all__ = [
    "LiveBot",
    "LIVE",
    "become_subreaper",
    "set_parent_death_signal",
    "die_with_parent",
    "kill_adopted",
    "kill_all",
    "kill_all_now",
]

# --- Linux prctl -----------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


# Resolved once at import: looking a symbol up between fork and exec (see
# set_parent_death_signal) could take locks that another thread of the
# parent held at fork time.
_PRCTL = _load_prctl()


def set_parent_death_signal(signum: int) -> None:
    """Ask the kernel to send this process ``signum`` when the thread that
    forked it exits, even by ``kill -9`` (Linux; elsewhere nothing).  A plain
    system call: safe between fork and exec."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signum, 0, 0, 0)


_SUBREAPER_PID: int | None = None


def become_subreaper() -> None:
    """Make this process the child subreaper of everything it starts (Linux),
    so orphans of a bot come back to it to be killed; idempotent, and done
    again in a forked child."""
    global _SUBREAPER_PID
    if _SUBREAPER_PID == os.getpid() or _PRCTL is None:
        return
    if _PRCTL(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        _SUBREAPER_PID = os.getpid()


def die_with_parent(signum: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Make sure this process does not outlive its parent, ``parent`` (the
    pid of the process that forked it, as that process knew it: by the time
    a child asks ``getppid``, its parent may be dead already).

    For the arena's worker processes: if the arena is killed with -9, each
    worker gets ``signum`` from the kernel (Linux), and a watchdog thread also
    checks the parent every half second, for systems without that signal and
    for a worker whose main thread cannot run a signal handler at that moment.
    The watchdog kills this process's bots and exits; so does this call when
    the parent died before the signal was asked for, since none will come."""
    become_subreaper()
    parent = os.getppid() if parent is None else parent
    set_parent_death_signal(int(signum))
    if os.getppid() != parent:
        kill_all_now()
        os._exit(128 + int(signum))

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        kill_all_now()
        os._exit(128 + int(signum))

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _adopted(leaders: set[int]) -> list[int]:
    """Children of this process that a bot left behind: bots run in sessions
    of their own, so a child in another session than ours that is not a live
    bot's leader came from a bot (our own helpers, such as executor workers,
    stay in our session)."""
    own = os.getsid(0)
    found = []
    for pid in children(os.getpid()):
        if pid in leaders:
            continue
        try:
            if os.getsid(pid) != own:
                found.append(pid)
        except OSError:
            pass
    return found


# --- the live bots -----------------------------------------------------------------


class LiveBot(Protocol):
    """What the reaper needs of a live bot (a :class:`arena.bot.process.BotProcess`)."""

    @property
    def pid(self) -> int | None:
        """The bot's leader, which is also its process group and session id."""

    def kill_processes(self) -> None:
        """SIGKILL every process of the bot and reap them; its pipes are left to their owner."""

    def kill_processes_now(self) -> None:
        """SIGKILL every process of the bot without locks or waiting (safe in a signal handler)."""


class _LiveBots:
    """The started, not yet killed bots of this OS process.  A bot is added
    under :attr:`lock` with its pid known, the lock held from before its
    spawn, so that :func:`kill_adopted` (which holds the lock while it looks)
    never mistakes a bot being born for an orphan."""

    def __init__(self) -> None:
        # Re-entrant: kill_all may run in a signal handler that interrupted
        # the main thread while it held this lock.
        self.lock = threading.RLock()
        self._bots: set[LiveBot] = set()

    def add(self, bot: LiveBot) -> None:
        with self.lock:
            self._bots.add(bot)

    def discard(self, bot: LiveBot) -> None:
        with self.lock:
            self._bots.discard(bot)

    def bots(self, *, locked: bool = True) -> tuple[LiveBot, ...]:
        """The live bots now.  Without the lock for a signal handler, whatever
        the interrupted thread holds: copying a set is one step for the GIL."""
        if not locked:
            return tuple(self._bots)
        with self.lock:
            return tuple(self._bots)

    def pids(self) -> set[int]:
        return {bot.pid for bot in self.bots() if bot.pid is not None}


LIVE = _LiveBots()


def kill_adopted(_leaders: set[int] | None = None) -> None:
    """SIGKILL every process this subreaper adopted from a bot, with all of
    its descendants, and reap them.  ``_leaders`` (the bots' pids) is for
    :func:`kill_all_now`, which may not take the registry's lock.

    A process that starts bots must not also start other programs in
    sessions of their own: they would look like a bot's leftovers."""
    if _SUBREAPER_PID != os.getpid():
        return
    for _ in range(20):
        if _leaders is None:
            with LIVE.lock:
                orphans = _adopted(LIVE.pids())
        else:
            orphans = _adopted(_leaders)
        if not orphans:
            return
        for pid in descendants(orphans):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in orphans:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass


def kill_all_now() -> None:
    """SIGKILL every live bot's process tree at once: no locks and no waiting
    on other threads, so it is safe in a signal handler whatever the
    interrupted thread holds.  For a process about to exit: it also reaps
    the bots, so what they left behind comes back to it and is killed."""
    bots = LIVE.bots(locked=False)
    for bot in bots:
        bot.kill_processes_now()
    end = time.monotonic() + 0.5
    leaders = {bot.pid for bot in bots if bot.pid is not None}
    while leaders and time.monotonic() < end:
        for pid in list(leaders):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == 0:
                    continue
            except ChildProcessError:
                pass
            leaders.discard(pid)
        time.sleep(0.005)
    kill_adopted(leaders)
    cgroups.remove_own_cgroups()  # the caller exits with os._exit, which skips atexit


def kill_all() -> None:
    """SIGKILL the process tree of every started, not yet killed bot in this
    OS process, and reap them.  Meant for signal handlers and atexit; pipes
    are left to their owners, whose next read or write then raises
    :class:`arena.bot.process.ProcessExited`."""
    for bot in LIVE.bots():
        bot.kill_processes()


atexit.register(kill_all)
