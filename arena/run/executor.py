"""Runs game specs in parallel and hands back their records as they finish.

The local executor keeps ``concurrency`` worker processes (``multiprocess``).
Each worker owns one :class:`BotPlayer` per bot and reuses its process from
game to game.  The executor never writes files beyond the bots' logs and knows
nothing of ratings: the caller stores each record as it arrives.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import select
import signal
import time
import traceback
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import multiprocess
from multiprocess.connection import Connection

import engine
from arena.bot.limits import cgroup_mode, kill_cgroups_of
from arena.bot.player import BotPlayer, NOTICE_TIMEOUT_S, close_all
from arena.bot.process import become_subreaper, die_with_parent, kill_adopted, kill_all_now
from arena.game.records import GameRecord, GameSpec
from arena.game.referee import play_game
from arena.run.config import TournamentConfig

__all__ = ["Executor", "LocalExecutor", "BotPool", "WorkerDied", "WorkerStalled", "game_deadline_s", "die_killing_bots", "die_with_the_arena"]

#: Slack beyond the sum of every timeout a game can run into.
_DEADLINE_SLACK_S = 30.0


def game_deadline_s(config: TournamentConfig, quit_grace_s: float = 2.0) -> float:
    """The longest one game can take, however the bots behave: both start
    (each bounded by the start-up timeout), every ply uses its whole clock
    and margin, every notice (new_game, game_over) waits its full timeout,
    and a bot is stopped with its quit grace; plus slack.  A worker silent
    for longer is stuck (e.g. a bot stopped it with SIGSTOP)."""
    control = config.time_control
    margin_s = config.time_margin_ms / 1000
    plies = engine.get_game(config.game).max_game_length
    if control.per_move_ms is not None:
        thinking = plies * (control.per_move_ms / 1000 + margin_s)
    else:
        thinking = 2 * control.initial_ms / 1000 + plies * (control.increment_ms / 1000 + margin_s)
    return 2 * config.startup_timeout_s + thinking + 4 * NOTICE_TIMEOUT_S + 2 * quit_grace_s + _DEADLINE_SLACK_S


class Executor(Protocol):
    """Plays game specs and yields each record as soon as its game ends, in
    any order.  ``LocalExecutor`` uses this machine's cores; a cluster
    executor (Ray) plugs in with the same shape.

    ``specs`` is an iterator to walk once, lazily: one spec each time a
    player is free, and only after the caller has taken the records already
    yielded.  The caller ends the run early (an SPRT that is decided) by
    ending the iterator; the games in flight still finish and are yielded."""

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]: ...


class BotPool:
    """The bots of one tournament as one worker sees them: a player per bot,
    started on first use and kept for the next game.  Each bot's scratch
    directory is ``scratch_dir/<name><tag>`` (a temporary one when
    ``scratch_dir`` is None); a sandboxed bot sees neither the results
    directory nor the logs nor the tournament file."""

    def __init__(
        self,
        config: TournamentConfig,
        logs_dir: Path | None,
        tag: str = "",
        scratch_dir: Path | None = None,
        spin: bool = False,
    ) -> None:
        self.config = config
        self.logs_dir = logs_dir
        self.tag = tag
        self.scratch_dir = scratch_dir
        self.spin = spin
        self.hidden = tuple(p for p in (config.output, logs_dir, config.path) if p is not None)
        self.players: dict[str, BotPlayer] = {}

    def player(self, name: str) -> BotPlayer:
        if name not in self.players:
            log_path = None
            if self.logs_dir is not None:
                log_path = self.logs_dir / f"{name}{self.tag}.log"
            self.players[name] = BotPlayer(
                self.config.bot(name),
                self.config.game,
                log_path=log_path,
                startup_timeout_s=self.config.startup_timeout_s,
                scratch_dir=self.scratch_dir / f"{name}{self.tag}" if self.scratch_dir is not None else None,
                hidden=self.hidden,
                spin=self.spin,
            )
        return self.players[name]

    def play(self, spec: GameSpec) -> GameRecord:
        seats = [self.player(name) for name in spec.players]
        return play_game(spec, seats, self.config.time_control, self.config.time_margin_ms)

    def close(self) -> None:
        close_all(self.players.values())
        self.players.clear()


def _worker_main(
    conn: Connection,
    config: TournamentConfig,
    logs_dir: Path | None,
    scratch_dir: Path | None,
    number: int,
    spin: bool,
) -> None:
    """A worker process: play each spec the parent sends, answer with its record.

    Records travel as the very line the store writes (``GameRecord.to_line``),
    encoded here, once, with the plain JSON encoder: pickling them (which
    ``multiprocess`` does with dill, in pure Python) cost more than the game.
    Specs come the same way (``_spec_line``)."""
    die_with_the_arena()
    bots = BotPool(config, logs_dir, tag=f".w{number}", scratch_dir=scratch_dir, spin=spin)
    try:
        while (message := conn.recv_bytes()) != _QUIT:
            try:
                conn.send_bytes(_RECORD + bots.play(_spec_from_line(message)).to_line())
            except Exception:  # a bug, not a bot's misbehaviour: report it whole
                conn.send_bytes(_ERROR + traceback.format_exc().encode())
    except EOFError:  # the parent is gone
        pass
    finally:
        bots.close()


# The first byte of a worker's answer says what follows.
_RECORD, _ERROR = b"r", b"e"
_QUIT = b""
_SPEC_FIELDS = tuple(f.name for f in dataclasses.fields(GameSpec))


def _spec_line(spec: GameSpec) -> bytes:
    return json.dumps([getattr(spec, name) for name in _SPEC_FIELDS]).encode()


def _spec_from_line(line: bytes) -> GameSpec:
    # GameSpec holds tuples where JSON has lists.
    values = [tuple(v) if isinstance(v, list) else v for v in json.loads(line)]
    return GameSpec(*values)


def die_with_the_arena() -> None:
    """Set up a child process of the arena that starts bots (a worker, the
    pre-flight).  Ctrl-C reaches the whole foreground process group: the
    arena decides what to do and terminates its children.  SIGTERM, which
    the kernel also sends when the arena dies (even by ``kill -9``), kills
    every bot's tree before the process exits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, die_killing_bots)
    die_with_parent(signal.SIGTERM)


def die_killing_bots(signum: int, frame: object) -> None:
    """The SIGTERM handler of a process that starts bots (a worker, the
    pre-flight): kill every bot's tree, then exit at once."""
    kill_all_now()
    os._exit(128 + signum)


class WorkerDied(RuntimeError):
    """A worker process of the local executor disappeared (killed from outside)."""


class WorkerStalled(WorkerDied):
    """Games whose worker went silent past the game deadline, twice: every
    other game was played and handed back first."""


class LocalExecutor:
    """Plays specs on ``concurrency`` worker processes of this machine.

    Each worker has a pipe of its own and gets one spec at a time, so a worker
    that dies is noticed at once (its pipe closes) and nothing else waits on
    a lock it held, which ``multiprocessing.Pool`` cannot promise."""

    def __init__(
        self,
        config: TournamentConfig,
        logs_dir: Path | None = None,
        concurrency: int | None = None,
        *,
        scratch_dir: Path | None = None,
        game_deadline: float | None = None,
    ) -> None:
        self.config = config
        self.logs_dir = logs_dir
        self.scratch_dir = scratch_dir
        self.concurrency = max(1, concurrency or config.concurrency)
        #: Seconds a worker may stay silent on one game before it is killed.
        self.game_deadline = game_deadline if game_deadline is not None else game_deadline_s(config)

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]:
        """Yield each game's record as soon as it is finished (not in schedule order).

        A lazy iterable of specs is read one spec per free worker, after the
        caller has taken the record that freed it, so the caller may end
        ``specs`` in the light of that record (an SPRT that is decided).  A
        sequence is known in full, so a worker gets its next spec before the
        caller sees the record and never waits for this process between
        games.  Closing the generator early (or an exception in the caller,
        such as Ctrl-C) terminates the workers, and with them every bot
        process.  Raises :class:`WorkerDied` if a worker is killed from
        outside.  A worker
        silent on one game for longer than ``game_deadline`` is killed and
        its game played again by a fresh worker; a game that stalls twice is
        given up, and :class:`WorkerStalled` is raised once every other game
        is done."""
        # Orphans of bots whose worker died come back to this process.
        become_subreaper()
        # Where bots' cgroups go is found once, here, and inherited by the workers.
        cgroup_mode()
        ahead = isinstance(specs, Sequence)
        # A worker waiting for a move may spin only where that takes no core
        # from a bot: with a core for each worker and each bot to move.
        spin = 2 * self.concurrency <= len(os.sched_getaffinity(0))
        todo = iter(specs)
        retry: deque[GameSpec] = deque()
        workers: dict[Connection, multiprocess.Process] = {}
        # The game each worker plays and its deadline, and the specs sent to
        # it after that one, which it has not started yet.
        playing: dict[Connection, tuple[GameSpec, float]] = {}
        waiting: dict[Connection, deque[GameSpec]] = {}
        stalls: Counter[str] = Counter()
        abandoned: list[str] = []
        finished = False

        def next_spec() -> GameSpec | None:
            return retry.popleft() if retry else next(todo, None)

        def start_worker() -> Connection:
            ours, theirs = multiprocess.Pipe()
            number = len(workers) + sum(stalls.values()) + 1
            process = multiprocess.Process(
                target=_worker_main,
                args=(theirs, self.config, self.logs_dir, self.scratch_dir, number, spin),
                name=f"arena-worker-{number}", daemon=True,
            )
            process.start()
            theirs.close()
            workers[ours] = process
            by_fd[ours.fileno()] = ours
            return ours

        def hand_out(conn: Connection, spec: GameSpec) -> None:
            conn.send_bytes(_spec_line(spec))
            if conn in playing:
                waiting[conn].append(spec)
            else:
                poller.register(conn.fileno(), select.POLLIN)
                playing[conn] = (spec, time.monotonic() + self.game_deadline)
                waiting[conn] = deque()

        def idle(conn: Connection) -> deque[GameSpec]:
            del playing[conn]
            poller.unregister(conn.fileno())
            return waiting.pop(conn)

        # One poll object for the whole run, of the workers playing a game
        # (multiprocess's wait() builds a selector at every call, which cost
        # more than storing a record).
        poller = select.poll()
        by_fd: dict[int, Connection] = {}

        try:
            for _ in range(self.concurrency):
                spec = next_spec()
                if spec is None:
                    break
                hand_out(start_worker(), spec)
            while playing:
                first_deadline = min(deadline for _, deadline in playing.values())
                wait_ms = max(0, math.ceil((first_deadline - time.monotonic()) * 1000))
                for fd, _ in poller.poll(wait_ms):
                    conn = by_fd[fd]
                    try:
                        answer = conn.recv_bytes()
                    except (EOFError, OSError):  # its end of the pipe closed: it is dead
                        raise _died(workers[conn]) from None
                    if answer[:1] != _RECORD:
                        raise RuntimeError(f"{workers[conn].name} failed:\n{answer[1:].decode(errors='replace')}")
                    now = time.monotonic()
                    quick = now - (playing[conn][1] - self.game_deadline) < _QUEUE_AHEAD_BELOW_S
                    if waiting[conn]:  # it has started the next one already
                        playing[conn] = (waiting[conn].popleft(), now + self.game_deadline)
                    else:
                        idle(conn)
                    lost = None
                    if ahead:
                        # The next game first, so that the worker plays on while
                        # this process stores the record; after a quick game,
                        # the one after it too, so that it never waits for this
                        # process.  Not after a long one: at the end, a game
                        # queued behind it would wait while other workers idle.
                        sent = 2 if quick else 1  # games sent and not finished: the one playing, one waiting
                        try:
                            while len(waiting.get(conn, ())) + (conn in playing) < sent and (spec := next_spec()):
                                hand_out(conn, spec)
                        except OSError:
                            lost = _died(workers[conn])  # after handing over the record it did send
                    yield GameRecord.from_line(answer[1:])
                    if lost is not None:
                        raise lost
                    if ahead or conn in playing:
                        continue
                    spec = next_spec()
                    if spec is None:
                        continue
                    try:
                        hand_out(conn, spec)
                    except OSError:
                        raise _died(workers[conn]) from None
                now = time.monotonic()
                for conn, (spec, deadline) in list(playing.items()):
                    if now < deadline:
                        continue
                    not_started = idle(conn)
                    _kill_worker(workers.pop(conn), conn)
                    stalls[spec.game_id] += 1
                    if stalls[spec.game_id] < 2:
                        retry.append(spec)
                    else:
                        abandoned.append(spec.game_id)
                    retry.extend(not_started)
                    replacement = next_spec()
                    if replacement is not None:
                        hand_out(start_worker(), replacement)
            finished = True
            if abandoned:
                raise WorkerStalled(
                    f"no result for game{'s' if len(abandoned) > 1 else ''} {', '.join(abandoned)}: "
                    f"its worker went silent for more than {self.game_deadline:.0f} s, twice "
                    "(a bot may have stopped it); every other game is kept"
                )
        finally:
            _stop(workers, gently=finished)


#: Given a sequence of specs, a worker whose last game took less than this
#: has the spec after its next one sent as well.
_QUEUE_AHEAD_BELOW_S = 0.2


def _died(process: multiprocess.Process) -> WorkerDied:
    process.join(1)
    return WorkerDied(
        f"{process.name} died (exit code {process.exitcode}) in the middle of a game; "
        "that game is lost, every finished game is kept"
    )


def _kill_worker(process: multiprocess.Process, conn: Connection) -> None:
    """SIGKILL a worker (a stopped one too) and whatever its bots left."""
    process.kill()
    process.join()
    conn.close()
    _kill_leftovers([process])


def _kill_leftovers(processes: Iterable[multiprocess.Process]) -> None:
    # A worker that could not clean up (killed, stopped) leaves bots behind:
    # in its cgroups, or orphaned to this subreaper (one look at the orphans
    # covers every worker).
    for process in processes:
        if process.pid is not None:
            kill_cgroups_of(process.pid)
    kill_adopted()


def _stop(workers: dict[Connection, multiprocess.Process], gently: bool) -> None:
    """End the workers: after the work, let them quit their bots and exit;
    otherwise SIGTERM them (their handler kills their bots at once)."""
    for conn, process in workers.items():
        if gently:
            try:
                conn.send_bytes(_QUIT)
            except OSError:
                pass
        elif process.is_alive():
            process.terminate()
    for conn, process in workers.items():
        # A gentle stop waits for the bots' quit grace; SIGKILL is the last word.
        process.join(10 if gently else 2)
        if process.is_alive():
            process.kill()
            process.join()
        conn.close()
    _kill_leftovers(workers.values())
