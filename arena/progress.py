"""How ``arena run``, ``arena match`` and ``arena check FILE`` show their
progress: a live bar where a terminal shows it, lines
(:class:`~arena.run.progress_lines.ProgressLines`) where the output goes to
a log.

One :class:`Presenter` shows any of them; what differs is the command's
:class:`View`: its bar's columns and how a state of its run reads, as the
bar's fields and as a log's line.  Each is made only when it is shown (a
match's line computes its statistics)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from arena.base.text import safe
from arena.check import BotCheck
from arena.game.records import GameRecord
from arena.results.sprt import SprtStatus
from arena.results.standings import RunningLeader
from arena.run.carried_run import carried_leader
from arena.run.config import TournamentConfig
from arena.run.match import MatchResult
from arena.run.progress_lines import Periodic, ProgressLines
from arena.run.tournament import RunSummary

__all__ = ["CheckView", "Checked", "MatchView", "Presenter", "RunView", "View"]

S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)


class View(Protocol[S_contra]):
    """What a command's progress says of a state ``S`` of its run."""

    #: The bar's columns; the fields they name come from :meth:`fields`.
    columns: Sequence[ProgressColumn]

    def line(self, state: S_contra) -> str:
        """The state as a log's line."""
        ...

    def fields(self, state: S_contra) -> dict[str, Any]:
        """The state as the bar's ``description`` and the fields its columns name."""
        ...


class Presenter(Generic[S]):
    """The progress of a run whose state after each game is an ``S``, as
    ``view`` says it: a bar on ``bar`` when that is a terminal, and a line
    written with ``write`` every tenth of the games (or bots checked) (and
    every 30 s) when ``log`` is not one."""

    def __init__(self, view: View[S], *, bar: Console, log: Console, write: Callable[[str], None]) -> None:
        self._view = view
        self._bar = Progress(*view.columns, console=bar) if bar.is_terminal else None
        self._task: TaskID | None = None
        # Made after each game for the thread that may print it at any time: a string, replaced whole.
        self._line = ""
        self._lines = ProgressLines(write, lambda: self._line) if not log.is_terminal else None

    def start(self, done: int, total: int, state: S) -> None:
        """The run starts, ``done`` of its ``total`` games already played (a resumed run)."""
        if self._lines is not None:
            self._line = self._view.line(state)
            self._lines.start(done, total)
        if self._bar is not None:
            fields = self._view.fields(state)
            self._task = self._bar.add_task(fields.pop("description"), total=total, completed=done, **fields)
            self._bar.start()

    def update(self, done: int, total: int, state: S) -> None:
        """After a game."""
        if self._lines is not None:
            self._line = self._view.line(state)
            self._lines.update(done, total)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total, **self._view.fields(state))

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


def _sprt_field(status: SprtStatus | None) -> str:
    return "" if status is None else status.describe(short=True)


class RunView:
    """What ``arena run``'s progress says of a tournament: games done, the
    leader and where a Swiss or knockout is, and the SPRT.  The leader and
    the round are read from every record: computed now and then
    (:class:`Periodic`), not after each game.  A resume whose records were
    not read starts from the standings its index keeps (:func:`carried_leader`)."""

    #: The tournament (and its round), games done, times, the leader and the SPRT.
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[leader]}"), TextColumn("{task.fields[sprt]}"))

    def __init__(self, config: TournamentConfig) -> None:
        self.name, self._config, self._running = config.name, config, RunningLeader(config.competition.rules)
        self._standing: Periodic[tuple[str | None, str]] | None = None

    def start(self, summary: RunSummary) -> None:
        carried = carried_leader(self._config, summary.records)
        if carried is not None:
            self._running = carried
        else:
            for record in summary.records:
                self.add(record)
        self._standing = Periodic(lambda: self._standing_of(summary))

    def add(self, record: GameRecord) -> None:
        self._running.add(record)

    def line(self, summary: RunSummary) -> str:
        best, where = self._now(summary)
        parts = [f"{len(summary.records)} of {summary.total} games",
                 *([f"leader {best}"] if best is not None else []),
                 *([summary.sprt.describe(short=True)] if summary.sprt is not None else [])]
        return f"{self.name}{where}: " + ", ".join(parts)

    def fields(self, summary: RunSummary) -> dict[str, str]:
        best, where = self._now(summary)
        return {"description": escape(safe(self.name + where)),
                "leader": "" if best is None else escape(f"leader: {safe(best)}"), "sprt": escape(_sprt_field(summary.sprt))}

    def _now(self, summary: RunSummary) -> tuple[str | None, str]:
        assert self._standing is not None
        return self._standing.value(final=len(summary.records) >= summary.total)

    def _standing_of(self, summary: RunSummary) -> tuple[str | None, str]:
        rounds = summary.rounds
        return self._running.describe(rounds), (f", {rounds.describe()}" if rounds is not None and rounds.pairings else "")


class MatchView:
    """What ``arena match``'s progress says of the match so far: the two bots, games done, W-D-L and the SPRT
    (a log's line: :meth:`MatchResult.progress_line`)."""

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[score]}"))

    def __init__(self, a: str, b: str) -> None:
        self._title = escape(safe(f"{a} vs {b}"))

    def line(self, result: MatchResult) -> str:
        return result.progress_line()

    def fields(self, result: MatchResult) -> dict[str, str]:
        return {"description": self._title,
                "score": escape(f"{result.wins}-{result.draws}-{result.losses}  {_sprt_field(result.sprt)}")}


@dataclass(frozen=True)
class Checked:
    """The progress of ``arena check FILE``: a snapshot, replaced after each bot (the log's thread reads it)."""

    total: int
    checked: int = 0
    failed: int = 0
    warned: int = 0

    def add(self, row: BotCheck) -> Checked:
        return replace(self, checked=self.checked + 1, failed=self.failed + (not row.passed),
                       warned=self.warned + bool(row.warnings))

    def status(self) -> str:
        return f"{self.failed} failed, {self.warned} with warnings"


class CheckView:
    """What ``arena check FILE``'s progress says: the bots checked, and how many failed or warned."""

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[status]}"))

    def line(self, checked: Checked) -> str:
        return f"checked {checked.checked} of {checked.total} bots: {checked.status()}"

    def fields(self, checked: Checked) -> dict[str, str]:
        return {"description": "check", "status": escape(checked.status())}
