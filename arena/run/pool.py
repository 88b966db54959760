"""The bots of one tournament as a process of the arena keeps them (a local
worker, a Ray actor, the pre-flight), and how such a process dies with the
arena.

A :class:`BotPool` starts a bot on first use and keeps its process from game
to game: starting a fresh Python bot for every game would make Python bots
about 20 times slower.  In a field of a hundred bots a worker would so end up
holding every one of them (a hundred Java bots, each with its heap): to
start another, it stops the bot it used least recently while it holds
:data:`MAX_LIVE_BOTS`, or while the machine's available memory is under
:data:`LOW_MEMORY` of the whole.  The reuse that pays most (a pair's games
in a row, a gauntlet's or a reference set's bots in every game) survives
that; in a round-robin of 40 bots, keeping all of them saves a start a
game (benchmarks/league_scenario.py: 9.7 s against 44.9 s with 16 kept).

Each bot's stderr during a game goes to ``logs/<name>/games/<game id>.log``,
and outside games to ``logs/<name>/<tag>.log``, one file per process of the
arena that starts it (``preflight``, a worker's ``w1``, an actor's
``ray1``); :mod:`arena.bot.stderr_log` bounds them.  A directory per bot,
since a bot's name cannot hold ``/``, keeps the logs of two bots apart
whatever their names (with ``<name>.<tag>.log``, a bot called ``x.w1``
would share a file with bot ``x``'s first worker).
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterable
from pathlib import Path

import multiprocess

from arena.bot.cgroups import kill_cgroups_of
from arena.bot.player import BotPlayer, close_all
from arena.bot.reaper import die_with_parent, kill_adopted, kill_all_now
from arena.base.stop_signals import STOP_SIGNALS
from arena.game.records import GameRecord, GameSpec
from arena.game.referee import play_game
from arena.results.live_feed import LiveFeed
from arena.run.config import TournamentConfig

__all__ = ["BotPool", "here", "LOW_MEMORY", "MAX_LIVE_BOTS", "PREFLIGHT_TAG", "memory_is_low", "die_killing_bots", "die_with_the_arena", "kill_leftovers", "log_path"]

#: The tag of the pre-flight's bots (a worker's is ``w<number>``, an actor's ``ray<number>``).
PREFLIGHT_TAG = "preflight"
#: The most bots a pool keeps started (a field of up to this many never restarts one).
MAX_LIVE_BOTS = 64
#: Below this share of the machine's memory available, a pool stops its
#: least recently used bots before it starts another.
LOW_MEMORY = 0.2


class BotPool:
    """The bots of one tournament as one worker sees them: a player per bot,
    started on first use and kept for the next game.  ``tag`` names the
    process that keeps the pool (:data:`PREFLIGHT_TAG`, ``w1``, ``ray1``).
    Each bot's log is :func:`log_path`, its scratch directory
    ``scratch_dir/<name>.<tag>`` (a temporary one when ``scratch_dir`` is
    None); a sandboxed bot sees neither the results directory nor the logs
    nor the tournament file.  Each record it plays names ``played_on`` (see
    :func:`here`) and ``time_scale``, what ``config``'s clocks were scaled by.
    With ``check_versions``, a bot is started for a game (its first start or
    a restart) only while its files are still the version the game's spec
    names, the one its record will; else it forfeits the game as a
    ``startup_failure`` (:func:`~arena.bot.version.changed_since`)."""

    def __init__(
        self,
        config: TournamentConfig,
        logs_dir: Path | None,
        tag: str,
        scratch_dir: Path | None = None,
        spin: bool = False,
        feed: LiveFeed | None = None,
        played_on: dict[str, str | int | float] | None = None,
        time_scale: float | None = None,
        check_versions: bool = True,
    ) -> None:
        self.config = config
        #: Start a bot for a game only while its files are the version the game's spec names (see :meth:`play`).
        self.check_versions = check_versions
        self.played_on = played_on
        #: What ``config``'s clocks were scaled by (recorded in each game), or None.
        self.time_scale = time_scale
        #: Where the game in progress is published for ``arena serve``; None for nowhere.
        self.feed = feed
        self.logs_dir = logs_dir
        self.tag = tag
        self.scratch_dir = scratch_dir
        self.spin = spin
        self.hidden = tuple(p for p in (config.output, logs_dir, config.path) if p is not None)
        self.players: dict[str, BotPlayer] = {}

    def player(self, name: str, keep: Iterable[str] = ()) -> BotPlayer:
        """Bot ``name``'s player, started on first use; to make room, the
        least recently used bot not in ``keep`` (the other seat) is stopped."""
        # Most recently used last: a dict keeps the order of insertion.
        player = self.players.pop(name, None)
        if player is None:
            kept = set(keep) | {name}
            while len(self.players) >= MAX_LIVE_BOTS or (self.players and memory_is_low()):
                oldest = next((other for other in self.players if other not in kept), None)
                if oldest is None:
                    break
                self.players.pop(oldest).close()
            player = BotPlayer(
                self.config.bot(name),
                self.config.competition.game,
                log_path=log_path(self.logs_dir, name, self.tag) if self.logs_dir is not None else None,
                log_root=self.logs_dir,
                startup_timeout_s=self.config.startup_timeout_s,
                scratch_dir=self.scratch_dir / f"{name}.{self.tag}" if self.scratch_dir is not None else None,
                hidden=self.hidden,
                spin=self.spin,
                submission_limits=self.config.submission_limits,
            )
        self.players[name] = player
        return player

    def play(self, spec: GameSpec) -> GameRecord:
        seats = [self.player(name, keep=spec.players) for name in spec.players]
        if self.check_versions and spec.versions:
            # The record names these versions: a bot whose files changed since is not started for it.
            for seat, version in zip(seats, spec.versions):
                seat.recorded_version = version
        # Each bot's stderr during the game goes to the game's own file.
        logged = list({id(seat): seat for seat in seats}.values())
        for seat in logged:
            seat.begin_log(spec.game_id)
        try:
            record = play_game(spec, seats, self.config.time_control, self.config.time_margin_ms,
                               self.config.seat_controls(spec.players), self.feed.move if self.feed is not None else None)
            record.played_on = self.played_on
            record.time_scale = self.time_scale
            return record
        finally:
            if self.feed is not None:
                self.feed.end()
            for seat in logged:
                seat.end_log()

    def close(self) -> None:
        close_all(self.players.values())
        self.players.clear()


def here(**ids: str | int | float) -> dict[str, str | int | float]:
    """A record's ``played_on`` for games played in this process: this host,
    ``ids`` (a worker's or an actor's number, a Ray node's id), and the
    niceness its bots start at, so that unequal conditions are on record."""
    return {"host": socket.gethostname(), **ids, "nice": os.getpriority(os.PRIO_PROCESS, 0)}


def memory_is_low() -> bool:
    """Whether the machine has less than :data:`LOW_MEMORY` of its memory
    available (``MemAvailable`` in ``/proc/meminfo``); False where it cannot tell."""
    try:
        with open("/proc/meminfo") as handle:
            fields = {line.split(":")[0]: int(line.split()[1]) for line in handle if line.split()[1:2]}
        return fields["MemAvailable"] < LOW_MEMORY * fields["MemTotal"]
    except (OSError, KeyError, ValueError, IndexError):
        return False


def log_path(logs_dir: Path, name: str, tag: str) -> Path:
    """Where bot ``name`` writes its stderr in the process tagged ``tag``:
    a file in a directory of the bot's own (see the module's docstring)."""
    return logs_dir / name / f"{tag}.log"


def die_with_the_arena() -> None:
    """Set up a child process of the arena that starts bots (a worker, the
    pre-flight).  Ctrl-C (and the hang-up of a closed terminal) reaches the
    whole foreground process group: the arena decides what to do and
    terminates its children.  SIGTERM, which the kernel also sends when the
    arena dies (even by ``kill -9``), kills every bot's tree before the
    process exits."""
    # The arena's wake-up pipe is inherited: a signal here must not wake the arena.
    signal.set_wakeup_fd(-1)
    for signum in STOP_SIGNALS:
        signal.signal(signum, die_killing_bots if signum == signal.SIGTERM else signal.SIG_IGN)
    arena = multiprocess.parent_process()  # known before the fork: the arena may be gone by now
    die_with_parent(signal.SIGTERM, arena.pid if arena is not None else None)


def die_killing_bots(signum: int, frame: object) -> None:
    """The SIGTERM handler of a process that starts bots (a worker, the
    pre-flight, a Ray actor): kill every bot's tree, then exit at once."""
    kill_all_now()
    os._exit(128 + signum)


def kill_leftovers(pids: Iterable[int]) -> None:
    """Kill what the bots of the arena processes ``pids`` left behind when
    such a process was killed (a stalled worker, a silent pre-flight) and so
    could not clean up: the processes in their cgroups, and the orphans that
    came back to this process, which must be a child subreaper (one look at
    the orphans covers every process)."""
    for pid in pids:
        kill_cgroups_of(pid)
    kill_adopted()
