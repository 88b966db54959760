"""arena/progress.py: one presenter for ``arena run``, ``arena match`` and ``arena check``,
a bar where a terminal shows it and lines where a log takes the output."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import MofNCompleteColumn, TextColumn

from arena.progress import Presenter

COLUMNS = (TextColumn("{task.description}"), MofNCompleteColumn(), TextColumn("{task.fields[score]}"))


def console(terminal: bool) -> tuple[Console, io.StringIO]:
    text = io.StringIO()
    return Console(file=text, force_terminal=terminal, width=80, emoji=False), text


class Counting:
    """A view of a count of games, noting what the presenter asked of it."""

    columns = COLUMNS

    def __init__(self, asked: list[str]) -> None:
        self.asked = asked

    def line(self, state: int) -> str:
        self.asked.append("line")
        return f"{state} done"

    def fields(self, state: int) -> dict[str, str]:
        self.asked.append("fields")
        return {"description": "a vs b", "score": f"score {state}"}


def presenter(bar: Console, log: Console, asked: list[str]) -> tuple[Presenter[int], list[str]]:
    written: list[str] = []
    return Presenter(Counting(asked), bar=bar, log=log, write=written.append), written


def test_a_log_gets_lines_and_no_bar():
    (bar, bar_text), (log, _) = console(False), console(False)
    asked: list[str] = []
    shown, written = presenter(bar, log, asked)
    shown.start(0, 10, 0)
    for done in range(1, 11):
        shown.update(done, 10, done)
    shown.stop()
    shown.stop()  # again, as an error path does: nothing more
    assert [line.split("] ")[1] for line in written] == [f"{n} done" for n in range(1, 11)]
    assert bar_text.getvalue() == "" and "fields" not in asked


def test_a_terminal_gets_a_bar_and_no_lines():
    (bar, bar_text), (log, _) = console(True), console(True)
    asked: list[str] = []
    shown, written = presenter(bar, log, asked)
    shown.start(2, 10, 2)
    shown.update(3, 10, 3)
    shown.stop()
    shown.stop()
    assert written == [] and "line" not in asked
    assert "a vs b" in bar_text.getvalue() and "3/10" in bar_text.getvalue() and "score 3" in bar_text.getvalue()


def test_a_bar_on_stderr_and_lines_on_a_redirected_stdout_at_once():
    """``arena match`` on a terminal with its stdout sent to a file: both."""
    (bar, bar_text), (log, _) = console(True), console(False)
    shown, written = presenter(bar, log, [])
    shown.start(0, 1, 0)
    shown.update(1, 1, 1)
    shown.stop()
    assert [line.split("] ")[1] for line in written] == ["1 done"]
    assert "1/1" in bar_text.getvalue()


def test_stopping_what_never_started_shows_nothing():
    """A bot that cannot start: its one line, no bar and no progress line before it."""
    (bar, bar_text), (log, _) = console(True), console(False)
    shown, written = presenter(bar, log, [])
    shown.stop()
    assert written == [] and bar_text.getvalue() == ""


def test_each_command_view_fills_its_own_columns_and_its_log_line():
    """arena check's and arena match's views through the one presenter: a bar whose
    columns find every field they name (rich raises on a missing one), lines on a log."""
    from arena.progress import CheckView, Checked, MatchView
    from arena.run.match import MatchResult

    cases = [(CheckView(), Checked(3), Checked(3, checked=1, failed=1), "check", "1 failed, 0 with warnings",
              "checked 1 of 3 bots: 1 failed, 0 with warnings"),
             (MatchView("dev", "base[1]"), MatchResult(names=("dev", "base[1]")), MatchResult(names=("dev", "base[1]")),
              "dev vs base[1]", "0-0-0", "0 of 0 games, 0 pairs: W/D/L 0/0/0")]
    for view, first, then, title, status, line in cases:
        (bar, bar_text), (log, _) = console(True), console(False)
        written: list[str] = []
        shown = Presenter(view, bar=bar, log=log, write=written.append)
        shown.start(0, 3, first)
        shown.update(1, 3, then)
        shown.stop()
        assert title in bar_text.getvalue() and status in bar_text.getvalue()
        assert written and written[-1].split("] ", 1)[1].startswith(line)
