"""Runs game specs in parallel and hands back their records as they finish.

The local executor keeps ``concurrency`` worker processes (``multiprocess``).
Each worker owns one :class:`BotPlayer` per bot and reuses its process from
game to game.  The executor never writes files beyond the bots' logs and knows
nothing of ratings: the caller stores each record as it arrives.
"""

from __future__ import annotations

import os
import signal
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

import multiprocess
from multiprocess.connection import Connection, wait

from arena.config import TournamentConfig
from arena.player import BotPlayer, close_all
from arena.process import die_with_parent, kill_all_now
from arena.records import GameRecord
from arena.referee import play_game
from arena.schedule import GameSpec

__all__ = ["Executor", "LocalExecutor", "BotPool", "WorkerDied"]


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
    started on first use and kept for the next game."""

    def __init__(self, config: TournamentConfig, logs_dir: Path | None, tag: str = "") -> None:
        self.config = config
        self.logs_dir = logs_dir
        self.tag = tag
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
            )
        return self.players[name]

    def play(self, spec: GameSpec) -> GameRecord:
        seats = [self.player(name) for name in spec.players]
        return play_game(spec, seats, self.config.time_control, self.config.time_margin_ms)

    def close(self) -> None:
        close_all(self.players.values())
        self.players.clear()


def _worker_main(conn: Connection, config: TournamentConfig, logs_dir: Path | None, number: int) -> None:
    """A worker process: play each spec the parent sends, answer with its record."""
    # Ctrl-C reaches the whole foreground process group: the parent decides
    # what to do and terminates the workers, whose bots die with them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _die)
    die_with_parent(signal.SIGTERM)
    bots = BotPool(config, logs_dir, tag=f".w{number}")
    try:
        while (spec := conn.recv()) is not None:
            try:
                conn.send(("record", bots.play(spec)))
            except Exception:  # a bug, not a bot's misbehaviour: report it whole
                conn.send(("error", traceback.format_exc()))
    except EOFError:  # the parent is gone
        pass
    finally:
        bots.close()


def _die(signum: int, frame: object) -> None:
    kill_all_now()
    os._exit(128 + signum)


class WorkerDied(RuntimeError):
    """A worker process of the local executor disappeared (killed from outside)."""


class LocalExecutor:
    """Plays specs on ``concurrency`` worker processes of this machine.

    Each worker has a pipe of its own and gets one spec at a time, so a worker
    that dies is noticed at once (its pipe closes) and nothing else waits on
    a lock it held, which ``multiprocessing.Pool`` cannot promise."""

    def __init__(self, config: TournamentConfig, logs_dir: Path | None = None, concurrency: int | None = None) -> None:
        self.config = config
        self.logs_dir = logs_dir
        self.concurrency = max(1, concurrency or config.concurrency)

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]:
        """Yield each game's record as soon as it is finished (not in schedule order).

        The next spec is taken from ``specs`` after the caller has taken the
        record, so it may end ``specs`` in the light of that record.  Closing
        the generator early (or an exception in the caller, such as Ctrl-C)
        terminates the workers, and with them every bot process.  Raises
        :class:`WorkerDied` if a worker is killed from outside."""
        todo = iter(specs)
        workers: dict[Connection, multiprocess.Process] = {}
        finished = False
        try:
            for number in range(1, self.concurrency + 1):
                first = next(todo, None)
                if first is None:
                    break
                ours, theirs = multiprocess.Pipe()
                process = multiprocess.Process(
                    target=_worker_main, args=(theirs, self.config, self.logs_dir, number),
                    name=f"arena-worker-{number}", daemon=True,
                )
                process.start()
                theirs.close()
                workers[ours] = process
                ours.send(first)
            busy = set(workers)
            while busy:
                for conn in wait(list(busy)):
                    try:
                        kind, payload = conn.recv()
                    except (EOFError, OSError):  # its end of the pipe closed: it is dead
                        raise _died(workers[conn]) from None
                    if kind == "error":
                        raise RuntimeError(f"{workers[conn].name} failed:\n{payload}")
                    yield payload
                    spec = next(todo, None)
                    if spec is None:
                        busy.discard(conn)
                        continue
                    try:
                        conn.send(spec)
                    except OSError:
                        raise _died(workers[conn]) from None
            finished = True
        finally:
            _stop(workers, gently=finished)


def _died(process: multiprocess.Process) -> WorkerDied:
    process.join(1)
    return WorkerDied(
        f"{process.name} died (exit code {process.exitcode}) in the middle of a game; "
        "that game is lost, every finished game is kept"
    )


def _stop(workers: dict[Connection, multiprocess.Process], gently: bool) -> None:
    """End the workers: after the work, let them quit their bots and exit;
    otherwise SIGTERM them (their handler kills their bots at once)."""
    for conn, process in workers.items():
        if gently:
            try:
                conn.send(None)
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
