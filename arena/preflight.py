"""The pre-flight: before the first game, start every bot once and see it
answer ``hello``.

A bot that cannot start would otherwise forfeit every one of its games, each
after the start-up timeout, and a typo in its command would cost the whole
tournament.  The bots are started in parallel, by the same
:class:`~arena.executor.BotPool` a worker uses for its games (so the same
spawn path, environment, limits and sandbox apply), and quit again at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arena.config import TournamentConfig
from arena.executor import BotPool
from arena.player import BotPlayer, Forfeit
from arena.process import kill_all

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
    ``hello`` with ``ready``, in file order."""
    wanted = set(names)
    pool = BotPool(config, logs_dir)
    players = [pool.player(bot.name) for bot in config.bots if bot.name in wanted]
    problems: dict[str, StartupProblem] = {}

    def start(player: BotPlayer) -> None:
        # Started and stopped on the same thread: a bot is killed when the
        # thread that spawned it ends (PR_SET_PDEATHSIG follows the thread).
        try:
            player.ensure_started()
        except Forfeit as exc:
            problems[player.name] = StartupProblem(player.name, exc.detail)
        finally:
            player.close()

    threads = [threading.Thread(target=start, args=(p,), name=f"preflight-{p.name}", daemon=True) for p in players]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    except BaseException:  # Ctrl-C: the bots must not outlive the arena's clean exit
        kill_all()
        raise
    return [problems[p.name] for p in players if p.name in problems]
