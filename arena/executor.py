"""Runs game specs in parallel and hands back their records as they finish.

The local executor keeps ``concurrency`` worker processes (``multiprocess``).
Each worker owns one :class:`BotPlayer` per bot and reuses its process from
game to game.  The executor never writes files beyond the bots' logs and knows
nothing of ratings: the caller stores each record as it arrives.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import multiprocess
import multiprocess.pool
from multiprocess.util import Finalize

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
    executor (Ray) plugs in with the same shape."""

    def run(self, specs: Sequence[GameSpec]) -> Iterator[GameRecord]: ...


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


# One pool per worker process, set up by the pool initializer.
_pool: BotPool | None = None


def _init_worker(config: TournamentConfig, logs_dir: Path | None) -> None:
    global _pool
    # Ctrl-C reaches the whole foreground process group: the parent decides
    # what to do and terminates the workers, whose bots die with them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _die)
    die_with_parent(signal.SIGTERM)
    identity = multiprocess.current_process()._identity
    _pool = BotPool(config, logs_dir, tag=f".w{identity[0]}" if identity else "")
    # Runs when the worker exits normally (pool.close + join): bots get quit.
    Finalize(_pool, _pool.close, exitpriority=10)


def _die(signum: int, frame: object) -> None:
    kill_all_now()
    os._exit(128 + signum)


def _play(spec: GameSpec) -> GameRecord:
    assert _pool is not None
    return _pool.play(spec)


#: How often a waiting executor checks that its workers are still there.
_WATCH_INTERVAL_S = 0.5


class WorkerDied(RuntimeError):
    """A worker process of the local executor disappeared (killed from outside)."""


def _worker_pids(pool: multiprocess.pool.Pool) -> set[int]:
    # Pool keeps its processes in ``_pool`` and puts a fresh one there when
    # one dies; there is no public way to see that.
    return {process.pid for process in pool._pool}


class LocalExecutor:
    """Plays specs on ``concurrency`` worker processes of this machine."""

    def __init__(self, config: TournamentConfig, logs_dir: Path | None = None, concurrency: int | None = None) -> None:
        self.config = config
        self.logs_dir = logs_dir
        self.concurrency = max(1, concurrency or config.concurrency)

    def run(self, specs: Sequence[GameSpec]) -> Iterator[GameRecord]:
        """Yield each game's record as soon as it is finished (not in schedule order).

        Closing the generator early (or an exception in the caller, such as
        Ctrl-C) terminates the workers, and with them every bot process."""
        if not specs:
            return
        workers = min(self.concurrency, len(specs))
        pool = multiprocess.Pool(workers, initializer=_init_worker, initargs=(self.config, self.logs_dir))
        finished = False
        try:
            results = pool.imap_unordered(_play, specs, chunksize=1)
            # A Pool silently replaces a worker that dies (OOM killer, a stray
            # kill) and waits forever for the game it was playing; so watch
            # the workers' pids and stop rather than hang.
            pids = _worker_pids(pool)
            while True:
                try:
                    yield results.next(timeout=_WATCH_INTERVAL_S)
                except StopIteration:
                    break
                except multiprocess.TimeoutError:
                    if _worker_pids(pool) != pids:
                        raise WorkerDied(
                            "a worker process died in the middle of its work; the games it was playing are lost, "
                            "every finished game is kept"
                        ) from None
            finished = True
        finally:
            if finished:
                pool.close()
            else:
                pool.terminate()
            pool.join()
