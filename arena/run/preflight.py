"""The pre-flight: before the first game, start every bot once and see it
answer ``hello``.

A bot that cannot start would otherwise forfeit every one of its games, each
after the start-up timeout, and a typo in its command would cost the whole
tournament.  The bots are started at once, each by the same
:class:`~arena.run.pool.BotPool` a worker uses for its games (so the same
spawn path, environment, limits and sandbox apply), and quit again at once.

Each bot is started in a process of its own, a supervised child
(:mod:`arena.run.supervised`) that dies with the arena as a worker does:
after a ``kill -9`` of the arena it still kills its bot, what it forked,
and a sandbox caught half set up, which no parent-death signal reaches.  A
bot can stop or kill the process that started it (``SIGSTOP`` to its parent
when greeted): so each process has a deadline, :func:`preflight_deadline_s`,
and one that stays silent past it is killed with everything its bot
started.  A process per bot is what lets the arena name the bot: a process
stopped while it started several could not say which one stopped it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arena.bot.forfeits import Forfeit
from arena.bot.spec import QUIT_GRACE_S
from arena.run.config import TournamentConfig
from arena.run.pool import BotPool, PREFLIGHT_TAG
from arena.run.supervised import Lost, child_deadline_s, supervise

__all__ = ["StartupProblem", "StartupFailed", "preflight", "preflight_deadline_s"]


def preflight_deadline_s(config: TournamentConfig, quit_grace_s: float = QUIT_GRACE_S) -> float:
    """The longest starting one bot in the pre-flight can take, however the
    bot behaves (:func:`~arena.run.supervised.child_deadline_s`): its
    start-up timeout, then ``quit`` and the quit grace; plus 10 s.  A
    pre-flight process silent for longer is stuck (its bot stopped it with
    ``SIGSTOP``, say)."""
    return child_deadline_s(
        starts=1, startup_timeout_s=config.startup_timeout_s, quit_grace_s=quit_grace_s,
        games=0, plies=0, time_control=config.time_control, margin_ms=config.time_margin_ms, notices=0, slack_s=10.0,
    )


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
    """A bot failed the pre-flight and the tournament stops (``startup_failures: stop``).
    ``outcome`` follows "did not start" in the message (on a cluster, games
    of other bots may have been played meanwhile)."""

    def __init__(self, problems: list[StartupProblem], outcome: str = ", so no game was played") -> None:
        self.problems = problems
        first, *others = problems
        text = f"bot {first.bot!r} did not start{outcome}: {first.detail}"
        text += "".join(f"; bot {p.bot!r} did not start either: {p.detail}" for p in others)
        super().__init__(text)


def preflight(
    config: TournamentConfig,
    names: Iterable[str],
    logs_dir: Path | None = None,
    *,
    deadline_s: float | None = None,
    tag: str = PREFLIGHT_TAG,
) -> list[StartupProblem]:
    """Start the bots called ``names`` at once, each within the start-up
    timeout, and stop them again.  Returns the bots that did not answer
    ``hello`` with ``ready``, in file order, and those whose pre-flight
    process stayed silent for ``deadline_s`` (by default
    :func:`preflight_deadline_s`) or died: such a process is killed with
    everything its bot started, and its problem is not ``restartable``.
    Raises :class:`~arena.bot.process.ArenaWriteError` when the arena cannot
    write a bot's log or scratch directory: that is no bot's failure.
    ``tag`` names the bots' logs (a Ray actor's pre-flight on its node has
    its own, beside the driver's)."""
    wanted = set(names)
    deadline_s = preflight_deadline_s(config) if deadline_s is None else deadline_s
    jobs = {bot.name: (config, bot.name, logs_dir, tag) for bot in config.bots if bot.name in wanted}
    answers = supervise(_start_and_stop, jobs, kind="preflight", doing="starting it", at_once=len(jobs),
                        deadline_s=deadline_s, signal_names=True)
    problems = []
    for name in jobs:
        answer = answers[name]
        if isinstance(answer, Lost):
            problems.append(StartupProblem(name, answer.reason, restartable=False))
        elif (detail := json.loads(answer)) is not None:
            problems.append(StartupProblem(name, detail))
    return problems


def _start_and_stop(config: TournamentConfig, name: str, logs_dir: Path | None, tag: str) -> bytes:
    """In a pre-flight process: start bot ``name`` and quit it again; the
    answer is why it did not start, or null, in JSON."""
    pool = BotPool(config, logs_dir, tag)
    try:
        pool.player(name).ensure_started()
    except Forfeit as exc:
        return json.dumps(exc.detail).encode()
    finally:
        pool.close()
    return json.dumps(None).encode()
