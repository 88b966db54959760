"""The pre-flight: before the first game, start every bot once and see it
answer ``hello``.

A bot that cannot start would otherwise forfeit every one of its games, each
after the start-up timeout, and a typo in its command would cost the whole
tournament.  The bots are started at once, each by the same
:class:`~arena.run.pool.BotPool` a worker uses for its games (so the same
spawn path, environment, limits and sandbox apply), and quit again at once.

Each bot is started in a process of its own that dies with the arena as a
worker does (:func:`~arena.run.pool.die_with_the_arena`): after a ``kill
-9`` of the arena it still kills its bot, what it forked, and a sandbox
caught half set up, which no parent-death signal reaches.  A bot can stop
or kill the process that started it (``SIGSTOP`` to its parent when
greeted): so each process has a deadline, :func:`preflight_deadline_s`, and
one that stays silent past it is killed with everything its bot started.
A process per bot is what lets the arena name the bot: a process stopped
while it started several could not say which one stopped it.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import multiprocess
from multiprocess.connection import Connection, wait

from arena.bot.cgroups import cgroup_mode
from arena.bot.player import Forfeit
from arena.bot.process import ArenaWriteError
from arena.bot.reaper import become_subreaper
from arena.run.config import TournamentConfig
from arena.run.pool import BotPool, PREFLIGHT_TAG, die_with_the_arena, kill_leftovers, start_child

__all__ = ["StartupProblem", "StartupFailed", "preflight", "preflight_deadline_s"]

#: Slack beyond the start-up timeout and the quit grace: forking the
#: process, spawning the bot (a sandbox's set-up), a loaded machine.
_DEADLINE_SLACK_S = 10.0
#: How long a pre-flight process gets to exit once it has answered (or,
#: after Ctrl-C, to kill its bot on SIGTERM) before it is killed.
_EXIT_GRACE_S = 2.0


def preflight_deadline_s(config: TournamentConfig, quit_grace_s: float = 2.0) -> float:
    """The longest starting one bot in the pre-flight can take, however the
    bot behaves: its start-up timeout, then ``quit`` and the quit grace;
    plus slack.  A pre-flight process silent for longer is stuck (its bot
    stopped it with ``SIGSTOP``, say)."""
    return config.startup_timeout_s + quit_grace_s + _DEADLINE_SLACK_S


@dataclass(frozen=True)
class StartupProblem:
    bot: str
    detail: str
    #: False when the bot stopped or killed the arena's process that started
    #: it: it must not be started again, in a worker it would do the same.
    restartable: bool = True

    def __str__(self) -> str:
        return f"bot {self.bot!r} did not start: {self.detail}"


class StartupFailed(Exception):
    """A bot failed the pre-flight and the tournament stops (``startup_failures: stop``)."""

    def __init__(self, problems: list[StartupProblem]) -> None:
        self.problems = problems
        first, *others = problems
        text = f"bot {first.bot!r} did not start, so no game was played: {first.detail}"
        text += "".join(f"; bot {p.bot!r} did not start either: {p.detail}" for p in others)
        super().__init__(text)


# What a pre-flight process answers: the first item says what the second is.
_READY, _FAILED, _BUG, _ARENA = "ready", "failed", "bug", "arena"


@dataclass(eq=False)
class _Start:
    """One bot started in a pre-flight process of its own, and its answer
    (``None`` until there is one)."""

    bot: str
    process: multiprocess.Process
    conn: Connection
    answer: tuple[str, str] | None = None
    #: The process stopped answering (past the deadline, or dead): it was killed.
    lost: bool = False


def preflight(
    config: TournamentConfig,
    names: Iterable[str],
    logs_dir: Path | None = None,
    *,
    deadline_s: float | None = None,
) -> list[StartupProblem]:
    """Start the bots called ``names`` at once, each within the start-up
    timeout, and stop them again.  Returns the bots that did not answer
    ``hello`` with ``ready``, in file order, and those whose pre-flight
    process stayed silent for ``deadline_s`` (by default
    :func:`preflight_deadline_s`) or died: such a process is killed with
    everything its bot started, and its problem is not ``restartable``.
    Raises :class:`~arena.bot.process.ArenaWriteError` when the arena cannot
    write a bot's log or scratch directory: that is no bot's failure."""
    wanted = set(names)
    deadline_s = preflight_deadline_s(config) if deadline_s is None else deadline_s
    # Orphans of the bots of a killed pre-flight process come back to this
    # process to be killed; where bots' cgroups go is found once, here.
    become_subreaper()
    cgroup_mode()
    starts: list[_Start] = []
    finished = False
    try:
        for bot in config.bots:
            if bot.name in wanted:
                starts.append(_begin(config, bot.name, logs_dir))
        _collect(starts, time.monotonic() + deadline_s)
        finished = True
    finally:
        _end(starts, gently=not finished)
    for start in starts:
        if start.answer is not None and start.answer[0] == _BUG:  # a bug, not a bot's misbehaviour: report it whole
            raise RuntimeError(f"the pre-flight of bot {start.bot!r} failed:\n{start.answer[1]}")
        if start.answer is not None and start.answer[0] == _ARENA:  # the arena's disk, not the bot's doing
            raise ArenaWriteError(start.answer[1])
    problems = []
    for start in starts:
        if start.answer is None:
            problems.append(StartupProblem(start.bot, (
                f"the arena's process starting it was silent for more than {deadline_s:.0f} s and was killed "
                "(a bot that stops its parent with SIGSTOP does that)"
            ), restartable=False))
        elif start.lost:
            problems.append(StartupProblem(start.bot, start.answer[1], restartable=False))
        elif start.answer[0] == _FAILED:
            problems.append(StartupProblem(start.bot, start.answer[1]))
    return problems


def _begin(config: TournamentConfig, name: str, logs_dir: Path | None) -> _Start:
    ours, theirs = multiprocess.Pipe(duplex=False)
    process = multiprocess.Process(
        target=_preflight_main, args=(theirs, config, name, logs_dir), name=f"arena-preflight-{name}", daemon=True
    )
    start_child(process)
    theirs.close()
    return _Start(name, process, ours)


def _collect(starts: list[_Start], deadline: float) -> None:
    """Take each process's answer as it comes, until ``deadline``."""
    waiting = {start.conn: start for start in starts}
    while waiting and (left := deadline - time.monotonic()) > 0:
        for conn in wait(list(waiting), left):
            start = waiting.pop(conn)
            try:
                start.answer = conn.recv()
            except EOFError:  # it died without a word: its bot may have killed it
                start.process.join(_EXIT_GRACE_S)
                start.lost = True
                start.answer = (_FAILED, f"the arena's process starting it died ({_exit_text(start.process.exitcode)}; "
                                         "a bot that kills its parent does that)")


def _exit_text(code: int | None) -> str:
    if code is None:
        return "its pipe closed"
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


def _end(starts: list[_Start], gently: bool) -> None:
    """End every pre-flight process.  One that answered exits by itself.
    One still silent is stuck and is killed (SIGKILL reaches a stopped
    process too), or after Ctrl-C (``gently``) terminated first, which lets
    its handler kill its bot at once; what its bot left is killed with it."""
    silent = [start for start in starts if start.answer is None or start.lost]
    if gently:
        for start in silent:
            start.process.terminate()
    for start in starts:
        if gently or start not in silent:
            start.process.join(_EXIT_GRACE_S)
        if start.process.is_alive():
            start.process.kill()
        start.process.join()
        start.conn.close()
    if silent:
        kill_leftovers(start.process.pid for start in silent if start.process.pid is not None)


def _preflight_main(conn: Connection, config: TournamentConfig, name: str, logs_dir: Path | None) -> None:
    die_with_the_arena()
    try:
        problem = _start_and_stop(config, name, logs_dir)
        conn.send((_READY, "") if problem is None else (_FAILED, problem))
    except ArenaWriteError as exc:
        conn.send((_ARENA, str(exc)))
    except Exception:
        conn.send((_BUG, traceback.format_exc()))


def _start_and_stop(config: TournamentConfig, name: str, logs_dir: Path | None) -> str | None:
    """Start bot ``name`` and quit it again: why it did not start, or None."""
    pool = BotPool(config, logs_dir, PREFLIGHT_TAG)
    try:
        pool.player(name).ensure_started()
    except Forfeit as exc:
        return exc.detail
    finally:
        pool.close()
    return None
