"""Runs game specs in parallel and hands back their records as they finish.

The local executor keeps ``concurrency`` worker processes (:mod:`arena.run.supervised`).
Each worker keeps a :class:`~arena.run.pool.BotPool`, which reuses each bot's
process from game to game; within a :meth:`LocalExecutor.session` (the rounds
of a Swiss) the workers, and so their bots, last from run to run.  A
:class:`~arena.run.spec_queue.SpecQueue` hands out the specs and decides what
becomes of the games of a worker that dies or stalls.  The executor never
writes files beyond the bots' logs and knows nothing of ratings: the caller
stores each record as it arrives.  When the
arena itself cannot write (a bot's log or scratch directory on a full disk)
a worker says so and :meth:`LocalExecutor.run` raises
:class:`~arena.bot.process.ArenaWriteError`: no game is charged with it.
"""

from __future__ import annotations

import math
import os
import select
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

import msgspec
from multiprocess.connection import Connection

import engine
from arena.bot.spec import QUIT_GRACE_S
from arena.base.stop_signals import wakeup_fd, woken
from arena.game.records import GameRecord, GameSpec
from arena.run.config import TournamentConfig
from arena.results.live_feed import LiveFeed
from arena.run.pool import BotPool, here
from arena.run.spec_queue import SpecQueue
from arena.run.supervised import EXIT_GRACE_S, Child, child_deadline_s, reply, start_child

__all__ = ["Executor", "LocalExecutor", "game_deadline_s"]


def game_deadline_s(config: TournamentConfig, quit_grace_s: float = QUIT_GRACE_S) -> float:
    """The longest one game can take, however the bots behave
    (:func:`~arena.run.supervised.child_deadline_s`): both bots start and
    quit, the game runs to its longest with every ply using its whole clock
    (the slowest, under time odds) and margin, and each bot waits out both
    notices (``new_game``, ``game_over``); plus 30 s.  A worker silent for
    longer is stuck (e.g. a bot stopped it with SIGSTOP)."""
    return max(
        child_deadline_s(
            starts=2, startup_timeout_s=config.startup_timeout_s, quit_grace_s=quit_grace_s,
            games=1, plies=engine.get_game(config.competition.game).max_game_length, time_control=control,
            margin_ms=config.time_margin_ms, notices=4, slack_s=30.0,
        )
        for control in (config.time_control, *config.time_odds.values())
    )


class Executor(Protocol):
    """Plays game specs and yields each record as soon as its game ends, in
    any order.  ``LocalExecutor`` uses this machine's cores; a cluster
    executor (Ray) plugs in with the same shape.

    ``specs`` is an iterator to walk once, lazily: one spec each time a
    player is free, and only after the caller has taken the records already
    yielded.  The caller ends the run early (an SPRT that is decided) by
    ending the iterator; the games in flight still finish and are yielded.
    From :class:`~arena.run.spec_queue.StoppableSpecs` an executor may take
    specs ahead (a Ray actor's next game pair); once they stop it drops
    those not started, and counts them in ``dropped``."""

    #: Games of the last run taken ahead and dropped unplayed when the specs stopped.
    dropped: int

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]: ...

    def session(self) -> AbstractContextManager[None]:
        """What several runs in a row share (the rounds of a Swiss): a Ray
        connection, made once and closed at the end; locally, the workers and their bots."""
        ...


def _worker_main(
    conn: Connection,
    config: TournamentConfig,
    logs_dir: Path | None,
    scratch_dir: Path | None,
    number: int,
    spin: bool,
    live_dir: Path | None = None,
) -> None:
    """A worker process: play each spec the parent sends, answer with its record.

    Records travel as the very line the store writes (``GameRecord.to_line``),
    encoded here, once, with the plain JSON encoder: pickling them (which
    ``multiprocess`` does with dill, in pure Python) cost more than the game.
    Specs come the same way (``_spec_line``)."""
    tag = _slot(number)
    feed = LiveFeed(live_dir, tag) if live_dir is not None else None
    bots = BotPool(config, logs_dir, tag=tag, scratch_dir=scratch_dir, spin=spin, feed=feed,
                   played_on=here(worker=number))
    try:
        while (message := conn.recv_bytes()) != _QUIT:
            reply(conn, _play, bots, message)
    except EOFError:  # the parent is gone
        pass
    finally:
        bots.close()


def _slot(number: int) -> str:
    return f"w{number}"


def _play(bots: BotPool, message: bytes) -> bytes:
    return bots.play(_spec_from_line(message)).to_line()


_QUIT = b""
# msgspec, in C, and to tuples where GameSpec has them: json.dumps of the
# fields and GameSpec(*json.loads(...)) cost the driver and the worker several
# times as much, every game.
_spec_line = msgspec.json.Encoder().encode
_spec_from_line = msgspec.json.Decoder(GameSpec).decode


class LocalExecutor:
    """Plays specs on ``concurrency`` worker processes of this machine (see :class:`_Workers`)."""

    def __init__(
        self,
        config: TournamentConfig,
        logs_dir: Path | None = None,
        concurrency: int | None = None,
        *,
        scratch_dir: Path | None = None,
        game_deadline: float | None = None,
        live_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.logs_dir = logs_dir
        self.scratch_dir = scratch_dir
        #: Where each worker publishes its game in progress (:mod:`arena.results.live_feed`).
        self.live_dir = live_dir
        self.concurrency = max(1, concurrency or config.concurrency)
        #: Seconds a worker may stay silent on one game before it is killed.
        self.game_deadline = game_deadline if game_deadline is not None else game_deadline_s(config)
        # A worker takes a spec only when free: nothing is ahead to drop.
        self.dropped = 0
        #: The workers a session keeps between its runs; None outside one.
        self._kept: _Workers | None = None

    @contextmanager
    def session(self) -> Iterator[None]:
        """Keep the workers, and their bots, from run to run (the rounds of a
        Swiss): starting them again each round cost a start of every bot a
        round.  A bot keeps the files it started with until the session ends;
        one started again for a game (it crashed, or a worker made room) is
        started only while its files are the version the run recorded at its
        start (:class:`~arena.run.pool.BotPool`).  At the
        end the workers quit, and their bots with them; at once, on an
        exception (a stop signal between rounds)."""
        self._kept = _Workers(self)
        gently = False
        try:
            yield
            gently = True
        finally:
            workers, self._kept = self._kept, None
            workers.stop(gently)

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]:
        """Yield each game's record as soon as it is finished (not in schedule order).

        A lazy iterable of specs is read one spec per free worker, after the
        caller has taken the record that freed it, so the caller may end
        ``specs`` in the light of that record (an SPRT that is decided).  A
        sequence is known in full, so a worker gets its next spec before the
        caller sees the record and never waits for this process between
        games.  A stop signal raises :class:`~arena.base.stop_signals.Stopped`
        as soon as it comes.  Closing the generator early (or an exception in the caller,
        a stop included) terminates the workers, and with them every bot
        process.  Raises :class:`~arena.run.spec_queue.WorkerDied` if a worker
        is killed from outside, and :class:`~arena.bot.process.ArenaWriteError`
        as soon as a worker cannot write a bot's log or scratch directory.  A
        worker silent on one game for longer than ``game_deadline`` is killed
        and its game played again by a fresh worker; a game that stalls twice is given up, and
        :class:`~arena.run.spec_queue.WorkerStalled` is raised once every
        other game is done.  Within a :meth:`session` the workers of a run that
        finished are kept for the next one (its exceptions end them as above)."""
        queue: SpecQueue[Child] = SpecQueue(specs, self.game_deadline, worker_kind="worker")
        workers = self._kept if self._kept is not None else _Workers(self)
        finished = False
        try:
            yield from workers.records(queue, ahead=isinstance(specs, Sequence))
            finished = True
            queue.finish()
        finally:
            if workers is not self._kept or not finished:
                workers.stop(gently=finished)


#: Given a sequence of specs, a worker whose last game took less than this
#: has the spec after its next one sent as well.
_QUEUE_AHEAD_BELOW_S = 0.2


class _Workers:
    """The worker processes of a :class:`LocalExecutor`: of one run, or of
    every run of a session, each run feeding them from its own queue.  Each
    has a pipe of its own and gets one spec at a time (two after quick games,
    from a sequence), so a worker that dies is noticed at once (its pipe
    closes) and nothing else waits on a lock it held, which
    ``multiprocessing.Pool`` cannot promise."""

    def __init__(self, executor: LocalExecutor) -> None:
        self.executor = executor
        # A worker waiting for a move may spin only where that takes no core
        # from a bot: with a core for each worker and each bot to move.
        self.spin = 2 * executor.concurrency <= len(os.sched_getaffinity(0))
        self.workers: list[Child] = []
        #: Each worker's slot: its number, which names its log and live files.
        self.slots: dict[Child, str] = {}
        self.started = 0
        self.by_fd: dict[int, Child] = {}

    def records(self, queue: SpecQueue[Child], ahead: bool) -> Iterator[GameRecord]:
        """Play every spec of ``queue`` (``ahead``: a sequence, see
        :meth:`LocalExecutor.run`); yield each record as it comes.  The
        workers kept from a run before play first; one that died while idle
        is let go, not charged with a game."""
        self.queue = queue
        self.ahead = ahead
        # One poll object for the whole run, of the workers playing a game
        # (multiprocess's wait() builds a selector at every call, which cost
        # more than storing a record).
        self.poller = select.poll()
        # A stop signal wakes the wait for answers, to end the run at once.
        self.wake = wakeup_fd()
        if self.wake is not None:
            self.poller.register(self.wake, select.POLLIN)
        idle = [worker for worker in self.workers if worker.process.is_alive()]
        for worker in set(self.workers) - set(idle):
            self._drop(worker)
            worker.end(0)  # (its pipe closed, what its bots left killed)
        for _ in range(queue.fill(self.executor.concurrency)):
            self._feed(idle.pop(0) if idle else self._start(), 1)
        while self.queue.busy():
            for fd, _ in self.poller.poll(self._wait_ms()):
                if fd == self.wake:
                    woken()
                else:
                    yield from self._answer(self.by_fd[fd])
            for worker in self.queue.stalled():
                self._replace(worker)

    def _wait_ms(self) -> int:
        """How long to wait for an answer: until the first deadline."""
        deadline = self.queue.next_deadline()
        assert deadline is not None  # a game is in flight
        return max(0, math.ceil((deadline - time.monotonic()) * 1000))

    def _answer(self, worker: Child) -> Iterator[GameRecord]:
        """Read the answer of ``worker``, which has a game in flight, and give it its next spec."""
        answer = worker.receive()
        if answer is None:  # its end of the pipe closed: it is dead
            self._lose(worker)
            return
        quick = time.monotonic() - self.queue.since(worker) < _QUEUE_AHEAD_BELOW_S
        fresh = self.queue.done(worker, [GameRecord.from_line(answer)])
        if not self.queue.in_flight(worker):
            self.poller.unregister(worker.fileno())
        alive = True
        if self.ahead:
            # The next game first, so that the worker plays on while this
            # process stores the record; after a quick game, the one after it
            # too, so that it never waits for this process.  Not after a long
            # one: at the end, a game queued behind it would wait while other
            # workers idle.
            alive = self._top_up(worker, 2 if quick else 1)
        yield from fresh
        if not alive:  # after handing over the record it did send
            self._lose(worker)
        elif not self.ahead:
            self._feed(worker, 1)

    def _feed(self, worker: Child, count: int) -> None:
        if not self._top_up(worker, count):
            self._lose(worker)

    def _top_up(self, worker: Child, count: int) -> bool:
        """Send ``worker`` specs until it has ``count`` games in flight (fewer
        when they run out); False if its pipe is closed (it died)."""
        while (playing := self.queue.in_flight(worker)) < count and (specs := self.queue.take(worker)):
            if not playing:
                self.poller.register(worker.fileno(), select.POLLIN)
            if not worker.send(_spec_line(specs[0])):
                return False
        return True

    def _lose(self, worker: Child) -> None:
        # Only a worker with a game in flight is polled, and a spec counts as
        # in flight before it is sent: with one attempt per game, this raises.
        self.queue.lose(worker, f"{worker.name} died ({worker.exit_status()})")

    def _replace(self, worker: Child) -> None:
        """Kill a stalled worker and its bots, put its games back, and start another for the next spec."""
        self.queue.stall(worker)
        self.poller.unregister(worker.fileno())
        self._drop(worker)
        worker.kill()
        if self.executor.live_dir is not None:  # its game is no longer in progress
            LiveFeed(self.executor.live_dir, self.slots[worker]).close()
        if self.queue.fill(1):
            self._feed(self._start(), 1)

    def _drop(self, worker: Child) -> None:
        del self.by_fd[worker.fileno()]
        self.workers.remove(worker)

    def _start(self) -> Child:
        self.started += 1
        executor = self.executor
        worker = start_child(
            _worker_main, (executor.config, executor.logs_dir, executor.scratch_dir, self.started, self.spin,
                           executor.live_dir),
            name=f"arena-worker-{self.started}",
        )
        self.workers.append(worker)
        self.slots[worker] = _slot(self.started)
        self.by_fd[worker.fileno()] = worker
        return worker

    def stop(self, gently: bool) -> None:
        """End the workers: after the work, let them quit their bots and exit;
        otherwise SIGTERM them (their handler kills their bots at once)."""
        for worker in self.workers:
            if gently:
                worker.send(_QUIT)
            else:
                worker.terminate()
        for worker in self.workers:
            # A gentle stop waits for the bots' quit grace; SIGKILL is the last word.
            worker.end(10 if gently else EXIT_GRACE_S)
        # Ended: a session's next run starts workers of its own.
        self.workers.clear()
        self.by_fd.clear()
