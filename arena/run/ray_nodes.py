"""Which bots start on which node of a Ray cluster.

Each actor, before its first game, starts every bot it may play on its
node (the driver's pre-flight, run there: a node may lack a program, a
library or a file the driver's machine has) and reports those that did
not start.  A bot that did not start on a node keeps that node's actors
from its games, which go to nodes where it starts; a bot that started on
no node is a start-up failure under the tournament's rule, as in the
driver's pre-flight.  :class:`NodeChecks` keeps the reports and says what
follows from them; the executor says when every actor has reported.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from arena.run.preflight import StartupFailed, StartupProblem

__all__ = ["NodeChecks"]

_log = logging.getLogger(__name__)


@dataclass
class NodeChecks:
    """The bots every actor checks (``names``), and what the actors
    reported: each bot's failures by node, and the bots that started on no
    node and forfeit their games wherever they are played."""

    names: list[str]
    failures: dict[str, dict[str, str]] = field(default_factory=dict)
    nowhere: set[str] = field(default_factory=set)

    def report(self, where: str, problems: Sequence[StartupProblem]) -> list[StartupProblem]:
        """Note what an actor on node ``where`` reported; the failures not
        known yet for that node (to be said, once a node)."""
        new = [problem for problem in problems if where not in self.failures.get(problem.bot, {})]
        for problem in problems:
            self.failures.setdefault(problem.bot, {})[where] = problem.detail
        return new

    def warn(self, where: str, problems: Sequence[StartupProblem]) -> None:
        """Say, once a node, which bots did not start there (a bot that
        started on no node is said otherwise, see :meth:`settle`)."""
        for problem in problems:
            if problem.bot not in self.nowhere:
                _log.warning(f"bot {problem.bot!r} did not start on {where}: {problem.detail}; "
                             "its games go to the other nodes")

    def barred(self, cannot_play: frozenset[str]) -> frozenset[str]:
        """The bots an actor that could not start ``cannot_play`` is not
        given games of: all of them, but those that start on no node."""
        return cannot_play - self.nowhere

    def settle(self, placed: Collection[frozenset[str]], rule: str) -> bool:
        """Given each placed actor's bots that did not start (every actor
        having reported), apply the tournament's ``startup_failures`` rule
        to the bots that started on none: ``stop`` raises
        :class:`StartupFailed` naming each node's reason, ``forfeit`` says
        so and lets their games be played, and forfeited, anywhere.
        Whether a bot was let go so."""
        if not placed:
            return False
        bots = [bot for bot in self.names if bot not in self.nowhere and all(bot in failed for failed in placed)]
        if not bots:
            return False
        problems = [StartupProblem(bot, _by_detail(self.failures[bot])) for bot in bots]
        if rule == "stop":
            raise StartupFailed(problems, " on any node of the Ray cluster (every finished game is kept)")
        for problem in problems:
            _log.warning(f"bot {problem.bot!r} did not start on any node of the Ray cluster ({problem.detail}); "
                         "its games are forfeited (startup_failures: forfeit)")
        self.nowhere.update(bots)
        return True


def _by_detail(failures: dict[str, str]) -> str:
    """Why a bot did not start, by node (``{where: detail}``), each detail
    once: ``on node A and node B: detail; on node C: other detail``."""
    nodes: dict[str, list[str]] = {}
    for where, detail in failures.items():
        nodes.setdefault(detail, []).append(where)
    return "; ".join(f"on {' and '.join(wheres)}: {detail}" for detail, wheres in nodes.items())
