"""The signals that stop the arena (Ctrl-C, ``kill``, a closed terminal),
taken as a flag.

The handler records the first stop signal, and the C-level wake-up of
:func:`signal.set_wakeup_fd` makes a byte readable on :func:`wakeup_fd` at
once, whichever thread the signal interrupted.  A run's loops (the
executors' waits for results, the tournament and match loops, the store
reading a long log) wait on that file descriptor as well and call
:func:`check` where stopping is safe; it raises :class:`Stopped` there.
Raised by the handler itself, a ``KeyboardInterrupt`` landed in whatever
code ran at that instant: a fork hook or a weak reference's callback, where
Python prints and drops it (and the run played on to its end), or a
cleanup it cut short.

A command with no loop of its own (reading a file, waiting on a bot or on
stdin, a web server) has no safe point to check; for it the handler raises
``KeyboardInterrupt`` as Python's own does, unless :func:`as_flag` is in
force.  Either way only the first signal counts: a second Ctrl-C while the
arena stops must not cut its way out short.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["STOP_SIGNALS", "Stopped", "as_flag", "check", "install", "wakeup_fd", "woken"]

#: The signals that stop the arena: Ctrl-C, ``kill``, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal, raised at a safe point of a loop.  A KeyboardInterrupt,
    so that whatever stops on Ctrl-C (the cleanup of a run, the commands' one
    line) stops the same way on it."""


_first: int | None = None
_as_flag = False
_wake_read = -1


def install() -> None:
    """Handle the stop signals in this process (from its main thread).  One
    ignored by whoever started the arena stays ignored: under ``nohup``,
    closing the terminal does not stop it."""
    global _wake_read
    if _wake_read < 0:
        _wake_read, write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _handle)


def _handle(signum: int, frame: FrameType | None) -> None:
    global _first
    if _first is not None:
        return
    _first = signum
    if not _as_flag:
        raise KeyboardInterrupt


@contextmanager
def as_flag() -> Iterator[None]:
    """While inside, a stop signal only sets the flag that the loops check.
    One that came before is raised on entering, and one that no loop saw
    (after the last game, say) on leaving: a stop is never lost."""
    global _as_flag
    _as_flag = True
    try:
        check()
        yield
        check()
    finally:
        _as_flag = False


def check() -> None:
    """Under :func:`as_flag`, raise :class:`Stopped` if a stop signal came.
    Outside, the handler raised already, and what runs then (the cleanup,
    counting the games kept) must not be stopped again."""
    if _as_flag and _first is not None:
        raise Stopped


def wakeup_fd() -> int | None:
    """A file descriptor that turns readable when a signal comes (None until
    :func:`install`): a loop that waits on files waits on it too, then calls
    :func:`woken`."""
    return _wake_read if _wake_read >= 0 else None


def woken() -> None:
    """The wake-up file descriptor was readable: empty it, and raise
    :class:`Stopped` if a stop signal came (the byte may be another signal's)."""
    try:
        while os.read(_wake_read, 512):
            pass
    except BlockingIOError:
        pass
    check()
