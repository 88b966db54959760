"""arena/progress.py: one presenter for ``arena run`` and ``arena match``,
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


def presenter(bar: Console, log: Console, asked: list[str]) -> tuple[Presenter[int], list[str]]:
    written: list[str] = []

    def line(state: int) -> str:
        asked.append("line")
        return f"{state} done"

    def fields(state: int) -> dict[str, str]:
        asked.append("fields")
        return {"description": "a vs b", "score": f"score {state}"}

    return Presenter(COLUMNS, bar=bar, log=log, write=written.append, line=line, fields=fields), written


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
