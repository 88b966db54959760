"""What the Ray tests share: a Ray runtime started once per test module with
token authentication that needs no file in the home directory, a check that
it left no process behind, a way to find a test's bot processes, their
tournament files and what a run must play alike on every executor.

Ray 2.60 turns token authentication on for a new local ``ray.init()`` and
writes a token to ``~/.ray/auth_token``.  The tests give the token in
``RAY_AUTH_TOKEN`` instead (Ray's first choice), with ``RAY_AUTH_MODE=token``,
before Ray is imported: Ray reads these settings once.  Every Ray process the
tests start inherits them.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import needs
from arena.results.standings import compute_standings
from builders import tournament_file
from conftest import _descendants, left_behind

_AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16), "RAY_AUTH_TOKEN_PATH": None}
#: Environment variable set on the test bots, so their processes can be found.
MARK = "TOTEM_TEST_MARK"
#: Keyword arguments of every ray.init of the tests.
QUIET = {"logging_level": logging.ERROR, "log_to_driver": False}
#: Three random bots, by name: each one's command.
RANDOM = {name: "python -m bots.random_bot" for name in ("a", "b", "c")}


def marked_tournament(directory: Path, bots: dict[str, str], *, rounds: int = 1, executor: str = "ray",
                      extra: str = "", concurrency: int | None = 2) -> Path:
    """A tournament file whose bots (each one's command) carry the test's
    mark in their environment, results in ``out-<executor>``; with no
    ``concurrency``, as many actors as the cluster's CPUs hold."""
    return tournament_file(directory, list(bots), extra, file=f"{executor}.yaml", cmds=bots,
                           bot_keys=f"env: {{{MARK}: '{directory}'}}", name="t", time_control="30+0.1", rounds=rounds,
                           seed=11, executor=executor, output=f"out-{executor}", concurrency=concurrency)


def played(records: list[dict]) -> dict[str, tuple]:
    """What must not depend on the executor: by game, who played which colour,
    every move, and how the game ended."""
    return {
        r["game_id"]: (r["players"], [m["move"] for m in r["moves"]], r["winner"], r["reason"], r["forfeit_by"])
        for r in records
    }


def ranking(records, bots=None) -> list:
    """The standings without the time the bots took (which no executor repeats)."""
    standings = compute_standings(records, list(bots or RANDOM))
    rows = [(b.name, b.mu, b.sigma, b.wins, b.draws, b.losses, b.forfeits) for b in standings.bots]
    return [rows, standings.crosstable, standings.by_color]


@contextmanager
def ray_runtime(start: Callable[[Any], Callable[[], None]]) -> Iterator[Any]:
    """Import Ray with token authentication from the environment, run
    ``start(ray)`` (which returns how to stop what it started), yield ``ray``,
    stop, and fail if any process started meanwhile is still alive 30 s later."""
    needs.module("ray", "pip install -e '.[ray]'")
    saved = {key: os.environ.get(key) for key in _AUTH}
    for key, value in _AUTH.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    import ray

    before = set(_descendants())
    stop = start(ray)
    try:
        yield ray
    finally:
        stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        left = left_behind(before, 30.0)  # Ray's processes end up as our children: we are a subreaper
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, "Ray left processes behind: " + ", ".join(_describe(pid) for pid in left)


def marked(mark: str) -> list[int]:
    """Processes whose environment holds ``TOTEM_TEST_MARK=mark``: a test's
    bots and whatever they started, on any node of a cluster on this machine."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue
            if state != "Z" and needle in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


def niceness_watch(mark: str) -> tuple[set[int], Callable[..., None]]:
    """The niceness of every marked process seen, and an ``on_record`` hook
    of a run that looks at them after each game (while the bots live)."""
    seen: set[int] = set()

    def look(*_: Any) -> None:
        for pid in marked(mark):
            try:
                seen.add(os.getpriority(os.PRIO_PROCESS, pid))
            except OSError:  # it ended meanwhile
                pass

    return seen, look


def wait_until_gone(mark: str, timeout: float = 10.0) -> list[str]:
    """The marked processes still alive after ``timeout`` seconds, each as
    ``pid (parent ppid): command line``, so that a failure shows what leaked."""
    end = time.monotonic() + timeout
    while (left := marked(mark)) and time.monotonic() < end:
        time.sleep(0.1)
    return [text for pid in left if (text := _describe(pid)) is not None]


def _describe(pid: int) -> str | None:
    try:
        parent = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[1]
        command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None  # it ended meanwhile
    return f"{pid} (parent {parent}): {command.strip()}"
