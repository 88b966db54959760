"""Shared fixtures, and the rule that CI runs every test.

``no_leaked_processes`` checks that a test leaves no process of its own behind;
``running_with`` finds processes by a marker in their command line,
``group_members`` by their process group;
``in_repo_root`` runs a test from the repository, as an organiser runs bots
from a checkout.  In CI (``CI=true``) a test that skips fails instead: CI
installs everything the tests need (the README's test command), so a skip
there hides a broken install.  Outside CI a skip says what to install (see ``needs.py``).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import needs
from builders import ROOT

#: CI sets CI=true; "", "0", "false" and "no" mean a person's machine.
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

_PR_SET_CHILD_SUBREAPER = 36
#: How long a test's processes get to die after it ends (SIGKILL is not instant).
LEAK_GRACE = 5.0
#: Deadline for things that should happen at once; generous for a busy machine.
SOON = 10.0


def _become_subreaper() -> None:
    # Orphans (a bot's child after the bot died) are re-parented to the nearest
    # subreaper instead of init, so they stay visible as our descendants.
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_become_subreaper()


def _fail_skip_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    _fail_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    # A whole module skipped at import (pytest.importorskip) is a collect report.
    outcome = yield
    _fail_skip_in_ci(outcome.get_result())


@pytest.fixture(autouse=True, scope="session")
def _digest_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fingerprints' digests are cached for this session only, never in the
    user's cache (see arena/bot/digest_cache.py); workers inherit it."""
    before = os.environ.get("TOTEM_ARENA_CACHE")
    os.environ["TOTEM_ARENA_CACHE"] = str(tmp_path_factory.mktemp("digest-cache"))
    yield
    if before is None:
        os.environ.pop("TOTEM_ARENA_CACHE", None)
    else:
        os.environ["TOTEM_ARENA_CACHE"] = before


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) of every process we may read."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # Fields after the command name, which may itself hold spaces and ')'.
        state, ppid = stat.rpartition(")")[2].split()[:2]
        table[int(entry.name)] = (int(ppid), state)
    return table


def _descendants() -> dict[int, str]:
    """pid -> state of every descendant of this test process.  Processes of
    other users of the machine are not descendants and are never counted."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _state) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, str] = {}
    todo = [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found[child] = table[child][1]
                todo.append(child)
    return found


def _reap(pids: dict[int, str]) -> None:
    """Reap the zombies among ``pids`` that are our own children."""
    for pid, state in pids.items():
        if state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours to reap, or reaped already
                pass


def soon() -> float:
    """The deadline :data:`SOON` from now."""
    return time.monotonic() + SOON


def proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, ...)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def group_members(pgid: int) -> set[int]:
    """Running processes of a process group."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = proc_stat(int(entry.name))
            if stat is not None and stat[0] != "Z" and int(stat[2]) == pgid:
                members.add(int(entry.name))
    return members


def running_with(marker: str) -> list[int]:
    """Pids of every process whose command line holds ``marker`` (a test's
    own tmp path), wherever it went in the process tree."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def _describe(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        cmdline = "?"
    return f"{pid} ({cmdline.strip()})"


def left_behind(before: set[int], grace: float) -> list[int]:
    """The descendants not in ``before`` still alive after up to ``grace``
    seconds; zombies among them are reaped (a dead process is not a leak)."""
    end = time.monotonic() + grace
    while True:
        new = {pid: state for pid, state in _descendants().items() if pid not in before}
        _reap(new)
        leaked = [pid for pid, state in new.items() if state != "Z"]
        if not leaked or time.monotonic() > end:
            return leaked
        time.sleep(0.05)


@pytest.fixture
def no_leaked_processes() -> Iterator[None]:
    """Fails the test if a process it started (or one of theirs) is still
    there ``LEAK_GRACE`` seconds after it ended.  Zombies are reaped first:
    a dead process is not a leak."""
    if not sys.platform.startswith("linux"):
        yield
        return
    before = set(_descendants())
    yield
    leaked = left_behind(before, LEAK_GRACE)
    assert not leaked, "processes left behind: " + ", ".join(_describe(pid) for pid in leaked)


@pytest.fixture
def in_repo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs the test from the repository, where bot commands such as
    ``python -m bots.greedy`` and ``python tests/bots/x.py`` are found."""
    monkeypatch.chdir(ROOT)
    return ROOT


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium, driven by selenium: one per test module (the report's and the live view's)."""
    needs.module("selenium", "pip install -e '.[test]'")
    driver_path = needs.program("chromedriver", "apt-get install chromium chromium-driver")
    chromium = needs.program("chromium", "apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="report-browser-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", f"--user-data-dir={profile}", "--window-size=1200,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The system's chromedriver, given by path: selenium-manager never downloads one.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(120)  # generous: the machine may be busy; correctness is what is checked
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
