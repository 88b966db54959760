"""The pre-flight: before the first game, start every bot once and see it
answer ``hello``.

A bot that cannot start would otherwise forfeit every one of its games, each
after the start-up timeout, and a typo in its command would cost the whole
tournament.  The bots are started in parallel, by the same
:class:`~arena.run.pool.BotPool` a worker uses for its games (so the same
spawn path, environment, limits and sandbox apply), and quit again at once.

This happens in a process of its own that dies with the arena as a worker
does (:func:`~arena.run.pool.die_with_the_arena`): after a ``kill -9`` of
the arena it still kills its bots, what they forked, and a sandbox caught
half set up, which no parent-death signal reaches.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import multiprocess
from multiprocess.connection import Connection

from arena.bot.player import BotPlayer, Forfeit
from arena.bot.process import ArenaWriteError
from arena.run.config import TournamentConfig
from arena.run.pool import BotPool, die_with_the_arena

__all__ = ["StartupProblem", "StartupFailed", "preflight"]


@dataclass(frozen=True)
class StartupProblem:
    bot: str
    detail: str

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


def preflight(config: TournamentConfig, names: Iterable[str], logs_dir: Path | None = None) -> list[StartupProblem]:
    """Start the bots called ``names`` at once, each within the start-up
    timeout, and stop them again.  Returns the bots that did not answer
    ``hello`` with ``ready``, in file order.  Raises
    :class:`~arena.bot.process.ArenaWriteError` when the arena cannot write
    a bot's log or scratch directory: that is no bot's failure."""
    ours, theirs = multiprocess.Pipe(duplex=False)
    process = multiprocess.Process(
        target=_preflight_main, args=(theirs, config, sorted(set(names)), logs_dir), name="arena-preflight", daemon=True
    )
    process.start()
    theirs.close()
    try:
        try:
            answer = ours.recv()
        except EOFError:
            raise RuntimeError(f"the pre-flight process died (exit code {process.exitcode})") from None
        process.join()
    except BaseException:  # Ctrl-C: its SIGTERM handler kills the bots
        process.terminate()
        process.join()
        raise
    finally:
        ours.close()
    if isinstance(answer, str):  # a bug, not a bot's misbehaviour: report it whole
        raise RuntimeError(f"the pre-flight failed:\n{answer}")
    if isinstance(answer, ArenaWriteError):
        raise answer
    return [StartupProblem(bot, detail) for bot, detail in answer]


def _preflight_main(conn: Connection, config: TournamentConfig, names: list[str], logs_dir: Path | None) -> None:
    die_with_the_arena()
    try:
        conn.send([(p.bot, p.detail) for p in _start_and_stop(config, set(names), logs_dir)])
    except ArenaWriteError as exc:
        conn.send(exc)
    except Exception:
        conn.send(traceback.format_exc())


def _start_and_stop(config: TournamentConfig, wanted: set[str], logs_dir: Path | None) -> list[StartupProblem]:
    pool = BotPool(config, logs_dir)
    players = [pool.player(bot.name) for bot in config.bots if bot.name in wanted]
    problems: dict[str, StartupProblem] = {}
    arena_failures: list[ArenaWriteError] = []

    def start(player: BotPlayer) -> None:
        # Started and stopped on the same thread: a bot is killed when the
        # thread that spawned it ends (PR_SET_PDEATHSIG follows the thread).
        try:
            player.ensure_started()
        except Forfeit as exc:
            problems[player.name] = StartupProblem(player.name, exc.detail)
        except ArenaWriteError as exc:  # the arena's disk, not the bot's doing
            arena_failures.append(exc)
        finally:
            player.close()

    threads = [threading.Thread(target=start, args=(p,), name=f"preflight-{p.name}", daemon=True) for p in players]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if arena_failures:
        raise arena_failures[0]
    return [problems[p.name] for p in players if p.name in problems]
