"""A child process of the arena that starts bots: a local executor's worker,
the pre-flight's process for one bot, ``arena check``'s for one bot.

A bot can stop (``SIGSTOP``) or kill the process that started it and leave
processes behind it, and the arena itself can die (even by ``kill -9``)
while such a process runs; so each is supervised the same way.
:func:`start_child` starts it with ``multiprocess``, set up to die with the
arena and kill its bots (:func:`~arena.run.pool.die_with_the_arena`); it
answers over a pipe (:func:`reply`), which tells its answer from the
arena's own write errors and from its bugs; the arena waits for the answer
until a deadline (:func:`child_deadline_s`, the one formula for how long a
child may stay silent), and one silent past it, or dead, is killed with
every bot it started (:meth:`Child.end`) and named in one line.
:func:`supervise` runs one-shot children (the pre-flight's, the check's) to
their answers; the executor feeds its workers game after game itself.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import multiprocess
from multiprocess.connection import Connection, wait

from arena.bot.cgroups import cgroup_mode
from arena.bot.player import NOTICE_TIMEOUT_S
from arena.bot.process import ArenaWriteError
from arena.bot.reaper import become_subreaper
from arena.base.stop_signals import wakeup_fd, woken
from arena.game.clock import TimeControl
from arena.run.pool import die_with_the_arena, kill_leftovers

__all__ = ["Child", "EXIT_GRACE_S", "Lost", "child_deadline_s", "reply", "start_child", "supervise"]

#: How long a child gets to exit by itself (once it has answered, or on
#: SIGTERM, whose handler kills its bots) before it is killed.
EXIT_GRACE_S = 2.0

# The first byte of a child's answer says what follows.
_ANSWER, _BUG, _ARENA = b"r", b"e", b"a"


def child_deadline_s(
    *,
    starts: int,
    startup_timeout_s: float,
    quit_grace_s: float,
    games: int,
    plies: int,
    time_control: TimeControl,
    margin_ms: float,
    notices: int,
    slack_s: float,
) -> float:
    """The longest a child can take to answer, however its bots behave:
    ``starts`` bot processes, each using its whole start-up timeout and quit
    grace; ``games`` games of ``plies`` plies, each ply using its whole clock
    (both players' initial time once, then the increment or the time per
    move) plus the margin; ``notices`` notices (``new_game``, ``game_over``),
    each waiting its whole timeout; plus ``slack_s`` for forking, a sandbox's
    set-up and a loaded machine.  A child silent for longer is stuck (a bot
    stopped it with ``SIGSTOP``, say)."""
    if time_control.per_move_ms is not None:
        clock_ms = plies * (time_control.per_move_ms + margin_ms)
    else:
        clock_ms = 2 * time_control.initial_ms + plies * (time_control.increment_ms + margin_ms)
    return starts * (startup_timeout_s + quit_grace_s) + games * clock_ms / 1000 + notices * NOTICE_TIMEOUT_S + slack_s


@dataclass(eq=False)
class Child:
    """A supervised child process (see the module's docstring) and the arena's
    end of its pipe; made by :func:`start_child`."""

    process: multiprocess.Process
    conn: Connection

    @property
    def name(self) -> str:
        return self.process.name

    def fileno(self) -> int:
        """Its pipe's, so that ``select.poll`` and ``multiprocess.connection.wait`` take a child."""
        return self.conn.fileno()

    def send(self, message: bytes) -> bool:
        """Send ``message``; False when its pipe is closed (it died)."""
        try:
            self.conn.send_bytes(message)
        except OSError:
            return False
        return True

    def receive(self) -> bytes | None:
        """Its next answer (see :func:`reply`), or None when its pipe closed
        without one: it died (:meth:`exit_status` says how).  Raises
        :class:`~arena.bot.process.ArenaWriteError` when it could not write a
        bot's log or scratch directory (the arena's disk: no bot is charged
        with it), and ``RuntimeError`` with its traceback for a bug."""
        try:
            answer = self.conn.recv_bytes()
        except (EOFError, OSError):
            return None
        kind, body = answer[:1], answer[1:]
        if kind == _ARENA:
            raise ArenaWriteError(body.decode(errors="replace"))
        if kind == _BUG:
            raise RuntimeError(f"{self.name} failed:\n{body.decode(errors='replace')}")
        return body

    def exit_status(self, *, signal_names: bool = False) -> str:
        """How it ended, once its pipe closed, given :data:`EXIT_GRACE_S` to
        exit: ``exit code N`` (with ``signal_names``, ``killed by signal N``
        for a signal), or ``its pipe closed`` when it still runs."""
        self.process.join(EXIT_GRACE_S)
        code = self.process.exitcode
        if code is None:
            return "its pipe closed"
        return f"killed by signal {-code}" if signal_names and code < 0 else f"exit code {code}"

    def terminate(self) -> None:
        """Ask it to end now: its SIGTERM handler kills its bots and exits (then :meth:`end` it)."""
        self.process.terminate()

    def end(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Give it ``grace_s`` to exit, SIGKILL it if it has not (SIGKILL
        reaches a stopped process too), close its pipe, and kill whatever its
        bots left behind: it may have died without killing them."""
        self.process.join(grace_s)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()
        if self.process.pid is not None:
            kill_leftovers([self.process.pid])

    def kill(self) -> None:
        """Kill it now, with every bot it started: it stayed silent past its deadline."""
        self.end(0)


def start_child(main: Callable[..., None], args: tuple[object, ...], *, name: str) -> Child:
    """Start ``main(conn, *args)`` in a child process called ``name`` that
    dies with the arena; ``conn`` is its end of a two-way pipe."""
    # The orphans of its bots come back to this process, to be killed when it
    # dies; where bots' cgroups go is found once, here, and inherited.
    become_subreaper()
    cgroup_mode()
    ours, theirs = multiprocess.Pipe()
    process = multiprocess.Process(target=_child_main, args=(main, theirs, args), name=name, daemon=True)
    process.start()
    theirs.close()
    return Child(process, ours)


def _child_main(main: Callable[..., None], conn: Connection, args: tuple[object, ...]) -> None:
    die_with_the_arena()
    main(conn, *args)


def reply(conn: Connection, work: Callable[..., bytes], *args: object) -> None:
    """In a child: send the answer ``work(*args)`` makes; or, when it raises,
    the arena's write error or the bug's whole traceback (see
    :meth:`Child.receive`)."""
    try:
        answer = _ANSWER + work(*args)
    except ArenaWriteError as exc:  # the arena's disk, not a bot: the caller stops
        answer = _ARENA + str(exc).encode()
    except Exception:  # a bug, not a bot's misbehaviour: report it whole
        answer = _BUG + traceback.format_exc().encode()
    conn.send_bytes(answer)


@dataclass(frozen=True)
class Lost:
    """A one-shot child that gave no answer, and why in one line: it was
    silent past its deadline and was killed, or it died."""

    reason: str


def supervise(
    work: Callable[..., bytes],
    jobs: Mapping[str, tuple[object, ...]],
    *,
    kind: str,
    doing: str,
    at_once: int,
    deadline_s: float,
    signal_names: bool = False,
    on_answer: Callable[[str, bytes | Lost], None] = lambda key, answer: None,
) -> dict[str, bytes | Lost]:
    """Run ``work(*args)`` for each job (a key such as a bot's name, and its
    args) in a child of its own called ``arena-<kind>-<key>``, ``at_once``
    at a time, and return each job's answer, or why there is none
    (:class:`Lost`, whose reason says what the arena's process was
    ``doing``, e.g. ``starting it``).  A child silent for ``deadline_s`` is
    killed with its bots; so is one that died, whose reason names the signal
    that killed it with ``signal_names`` (:meth:`Child.exit_status`).  An exception (a stop
    signal, :class:`~arena.base.stop_signals.Stopped` as soon as it comes, a
    bug, the arena's write error from :meth:`Child.receive`) ends the
    children still running, each killing its bots on SIGTERM.  ``on_answer``
    sees each job's key and answer as it comes (a command's progress)."""
    pending = list(jobs.items())
    wake = [fd] if (fd := wakeup_fd()) is not None else []
    running: dict[Child, tuple[str, float]] = {}
    answers: dict[str, bytes | Lost] = {}
    try:
        while pending or running:
            while pending and len(running) < at_once:
                key, args = pending.pop(0)
                child = start_child(_answer_once, (work, args), name=f"arena-{kind}-{key}")
                running[child] = (key, time.monotonic() + deadline_s)
            soonest = min(end for _, end in running.values())
            for child in wait([*running, *wake], max(0.0, soonest - time.monotonic())):
                if not isinstance(child, Child):
                    woken()
                    continue
                key, _ = running.pop(child)
                try:
                    answer = child.receive()
                    answers[key] = answer if answer is not None else Lost(
                        f"the arena's process {doing} died ({child.exit_status(signal_names=signal_names)}; "
                        "a bot that kills its parent does that)"
                    )
                finally:
                    child.end()
                on_answer(key, answers[key])
            now = time.monotonic()
            for child, (key, end) in list(running.items()):
                if now >= end:
                    del running[child]
                    child.kill()
                    answers[key] = Lost(
                        f"the arena's process {doing} was silent for more than {deadline_s:.0f} s and was killed "
                        "(a bot that stops its parent with SIGSTOP does that)"
                    )
                    on_answer(key, answers[key])
    finally:
        for child in running:
            child.terminate()
        for child in running:
            child.end()
    return answers


def _answer_once(conn: Connection, work: Callable[..., bytes], args: tuple[object, ...]) -> None:
    reply(conn, work, *args)
