"""The bots of one tournament as a process of the arena keeps them (a local
worker, a Ray actor, the pre-flight), and how such a process dies with the
arena.

A :class:`BotPool` starts a bot on first use and keeps its process from game
to game: starting a fresh Python bot for every game would make Python bots
about 20 times slower.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from arena.bot.player import BotPlayer, close_all
from arena.bot.reaper import die_with_parent, kill_all_now
from arena.game.records import GameRecord, GameSpec
from arena.game.referee import play_game
from arena.run.config import TournamentConfig

__all__ = ["BotPool", "die_killing_bots", "die_with_the_arena"]


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
    pre-flight, a Ray actor): kill every bot's tree, then exit at once."""
    kill_all_now()
    os._exit(128 + signum)
