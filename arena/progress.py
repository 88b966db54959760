"""How ``arena run``, ``arena match`` and ``arena check FILE`` show their
progress: a live bar where a terminal shows it, lines
(:class:`~arena.run.progress_lines.ProgressLines`) where the output goes to
a log.

The command says what its bar's columns are and how a state of its run
reads, as the bar's fields and as a log's line; each is made only when it is
shown (a match's line computes its statistics)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from rich.console import Console
from rich.progress import Progress, ProgressColumn, TaskID

from arena.run.progress_lines import ProgressLines

__all__ = ["Presenter"]

S = TypeVar("S")


class Presenter(Generic[S]):
    """The progress of a run whose state after each game is an ``S``: a bar
    of ``columns`` on ``bar`` when that is a terminal, and ``line(state)``
    written with ``write`` every tenth of the games (or bots checked) (and every 30 s) when
    ``log`` is not one.  ``fields(state)`` are the bar's: its
    ``description`` and the fields its columns name."""

    def __init__(
        self, columns: Sequence[ProgressColumn], *, bar: Console, log: Console, write: Callable[[str], None],
        line: Callable[[S], str], fields: Callable[[S], dict[str, Any]],
    ) -> None:
        self._line_of, self._fields_of = line, fields
        self._bar = Progress(*columns, console=bar) if bar.is_terminal else None
        self._task: TaskID | None = None
        # Made after each game for the thread that may print it at any time: a string, replaced whole.
        self._line = ""
        self._lines = ProgressLines(write, lambda: self._line) if not log.is_terminal else None

    def start(self, done: int, total: int, state: S) -> None:
        """The run starts, ``done`` of its ``total`` games already played (a resumed run)."""
        if self._lines is not None:
            self._line = self._line_of(state)
            self._lines.start(done, total)
        if self._bar is not None:
            fields = self._fields_of(state)
            self._task = self._bar.add_task(fields.pop("description"), total=total, completed=done, **fields)
            self._bar.start()

    def update(self, done: int, total: int, state: S) -> None:
        """After a game."""
        if self._lines is not None:
            self._line = self._line_of(state)
            self._lines.update(done, total)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total, **self._fields_of(state))

    def stop(self) -> None:
        """The end of the run, however it ends: the log's last line, the bar
        left in its last state.  Safe to call again; an error printed after
        it comes under the progress, not in the middle of a bar."""
        if self._lines is not None:
            self._lines.stop()
        # Only once, and only if started: on a non-interactive console every
        # Progress.stop() prints an empty line, even after an error message.
        if self._bar is not None and self._bar.live.is_started:
            try:
                self._bar.stop()
            except IndexError:  # a stop signal came while rich was starting it: nothing of it to undo
                pass
