"""Progress as lines, for a log: where no terminal shows a live bar
(``arena run`` with stderr redirected, ``arena match`` with stdout
redirected), a line each time another tenth of the games is done, and at
least every :data:`EVERY_S` seconds whether a game ended or not (a thread
ticks between games), each stamped with the time since the start.

The caller keeps what the line says in an immutable snapshot, replaced after
each game, so that ``line()`` may read it from the ticking thread at any
time; lines are written under one lock, whole."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["EVERY_S", "PERIODIC_EVERY_S", "PERIODIC_SHARE", "TENTHS", "Periodic", "ProgressLines"]

T = TypeVar("T")

#: The longest a log goes without a line while a run plays.
EVERY_S = 30.0
#: A line each time the games done pass another 1/TENTHS of the total.
TENTHS = 10
#: The least seconds between two computations of a :class:`Periodic` view.
PERIODIC_EVERY_S = 0.5
#: The most of the time a :class:`Periodic` view may take, however large the tournament grows.
PERIODIC_SHARE = 0.02


class ProgressLines:
    """Writes ``line()`` through ``write``, prefixed with ``[h:mm:ss]``: when
    :meth:`update` says the games done crossed a tenth of the total, and
    whenever ``every_s`` seconds have gone by since the last line.  ``clock``
    and ``ticking`` (the thread) are the tests' to replace."""

    def __init__(
        self, write: Callable[[str], None], line: Callable[[], str], *, every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic, ticking: bool = True,
    ) -> None:
        self._write, self._line, self.every_s, self._clock = write, line, every_s, clock
        self._lock = threading.Lock()
        self._started = self._last = clock()
        self._done, self._total = 0, 0
        #: The games done when the last line was written.
        self._shown = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="progress-lines", daemon=True) if ticking else None

    def start(self, done: int, total: int) -> None:
        """The run starts with ``done`` of ``total`` games already played (a resumed run)."""
        with self._lock:
            self._started = self._last = self._clock()
            self._done, self._total, self._shown = done, total, done
        if self._thread is not None:
            self._thread.start()

    def update(self, done: int, total: int) -> None:
        """After a game: a line if it crossed a tenth, or if one is due anyway."""
        with self._lock:
            crossed = _tenth(done, total) > _tenth(self._done, self._total)
            self._done, self._total = done, total
            if crossed or self._clock() - self._last >= self.every_s:
                self._emit()

    def stop(self) -> None:
        """The end of the run: a last line if games ended since the one before, so a log ends on the state it stopped in."""
        self._stopped.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join()
        with self._lock:
            if self._done != self._shown:
                self._emit()

    def tick(self) -> None:
        """A line if ``every_s`` seconds went by without one (what the thread does)."""
        with self._lock:
            if self._clock() - self._last >= self.every_s:
                self._emit()

    def _tick(self) -> None:
        while not self._stopped.wait(max(0.0, self._last + self.every_s - self._clock())):
            self.tick()

    def _emit(self) -> None:
        elapsed = int(self._clock() - self._started)
        self._write(f"[{elapsed // 3600}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}] {self._line()}")
        self._last, self._shown = self._clock(), self._done


def _tenth(done: int, total: int) -> int:
    return TENTHS * done // total if total > 0 else 0


class Periodic(Generic[T]):
    """A view of a run that costs more as the run grows (a Swiss's leader
    and round, read from every record), computed by ``compute`` at most
    every ``every_s`` seconds and never in more than ``share`` of the time:
    after a computation that took ``c`` seconds, the next waits ``c /
    share``.  So a progress view costs the same at game 10,000 as at game
    10, a moment behind the games at most.  ``value(final=True)`` computes
    it now (the last line of a run)."""

    def __init__(self, compute: Callable[[], T], *, every_s: float = PERIODIC_EVERY_S,
                 share: float = PERIODIC_SHARE, clock: Callable[[], float] = time.monotonic) -> None:
        self._compute, self.every_s, self.share, self._clock = compute, every_s, share, clock
        self._next = -float("inf")
        self._value: T | None = None

    def value(self, final: bool = False) -> T:
        started = self._clock()
        if final or started >= self._next or self._value is None:
            self._value = self._compute()
            now = self._clock()
            self._next = now + max(self.every_s, (now - started) / self.share)
        return self._value
