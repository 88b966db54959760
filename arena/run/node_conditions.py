"""The conditions bots play under on each node of a Ray cluster.

**One niceness.**  Ray starts its workers, hence the actors and their bots,
at the niceness its ``ray start`` was given (15 by default), and a process
may raise its niceness but not lower it without privilege (``CAP_SYS_NICE``).
Before the first game one task on each node reports its workers' niceness
and the lowest it can take of the driver's (:func:`report_here`); the bots
then start at :func:`common_niceness` on every node: the driver's where every
node can reach it, else the highest a node cannot go below.

**Speed** (``ray.calibrate``).  The same task plays a fixed chunk of random
games of the tournament's game again and again for :data:`BENCHMARK_S` on
one core (:func:`benchmark`, timed in CPU time), as does the driver on its own machine; a
node's speed is its plies per second over the driver's.  Under
``ray.time_scaling: speed`` each game on a node gets the clock of the file
multiplied by :func:`time_scale` (a node half as fast gets twice the time),
as fishtest scales its workers' time control.
"""

from __future__ import annotations

import math
import os
import random
import time
from dataclasses import dataclass, field, replace

import engine
from arena.game.clock import MAX_CLOCK_MS, TimeControl
from arena.game.records import MAX_RATIO
from arena.run.config import TournamentConfig

__all__ = [
    "BENCHMARK_S", "SLOW", "Conditions", "NodeReport", "report_here", "set_niceness", "common_niceness", "benchmark",
    "relative_speed", "time_scale", "scaled",
]

#: How long the benchmark plays on each node, and on the driver's machine (in
#: two halves, before the nodes and after: every node's figure is over its
#: own, which a moment's load on it would halve).  Half a second on a loaded
#: machine was off by up to half now and then; a second, by a few per cent.
BENCHMARK_S = 1.0
#: The games of one timed chunk (seeds 0 to this): the same work each time.
CHUNK_GAMES = 20
#: A node whose speed is below this share of the driver's is said to be slow.
SLOW = 0.8


@dataclass(frozen=True)
class NodeReport:
    """What a task on a node found: its Ray workers' niceness, the lowest
    of the driver's it can take (``floor``: the driver's, or its own when it
    cannot lower it), and its benchmark's plies per second (None unmeasured)."""

    nice: int
    floor: int
    speed: float | None = None


@dataclass(frozen=True)
class Conditions:
    """What the driver found before the first game, as each actor applies
    it: the bots' niceness on every node; calibrated, the driver's
    benchmark (``reference``) and each node's (``speeds``, by Ray node id),
    and whether the clock is scaled by them (``scaling``)."""

    nice: int
    reference: float | None = None
    speeds: dict[str, float] = field(default_factory=dict)
    scaling: bool = False

    def speed(self, node_id: str, game: str) -> tuple[float | None, float | None]:
        """Node ``node_id``'s speed over the driver's, measured here if it
        was not before (a node that joined since), and what its clocks are
        multiplied by; (None, None) uncalibrated."""
        if self.reference is None:
            return None, None
        plies = self.speeds.get(node_id) or benchmark(game)
        return relative_speed(plies, self.reference), time_scale(self.reference, plies) if self.scaling else None

    def measured(self, node_id: str) -> float | None:
        """Node ``node_id``'s speed over the driver's as measured before the first game; None unmeasured."""
        plies = self.speeds.get(node_id)
        return None if plies is None or self.reference is None else relative_speed(plies, self.reference)


def report_here(driver_nice: int, game: str | None) -> NodeReport:
    """This process's :class:`NodeReport`, the benchmark of ``game`` played
    when given.  Its niceness is as it found it (the process is Ray's, and
    may serve other tasks)."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    floor = nice
    if driver_nice >= nice or set_niceness(driver_nice) == driver_nice:
        floor = driver_nice
    os.setpriority(os.PRIO_PROCESS, 0, nice)  # (a rise back: always allowed)
    return NodeReport(nice, floor, benchmark(game) if game is not None else None)


def set_niceness(target: int) -> int:
    """Put this process (and so the bots it starts) at niceness ``target``
    when allowed; the niceness it is at then."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, target)
    except OSError:  # lower than now, without the privilege: it stays
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def common_niceness(driver_nice: int, floors: list[int]) -> int:
    """The niceness every node's bots can start at: the driver's, unless a
    node cannot go that low."""
    return max([driver_nice, *floors])


def benchmark(game: str, seconds: float = BENCHMARK_S) -> float:
    """Plies per second of random games of ``game`` on this core: the same
    chunk of :data:`CHUNK_GAMES` games played for about ``seconds``, over the
    CPU time of its fastest run.  The core's own speed, not what other work
    leaves of it at the moment (that shows in the bots' move times): on a
    loaded machine the median wall time of a chunk spread by ±50 % from one
    measurement to the next, its fastest CPU time by about ±20 %."""
    rules = engine.get_game(game)
    legal_moves, apply, outcome = rules.legal_moves, rules.apply, rules.outcome
    fastest = math.inf
    plies = 0
    deadline = time.perf_counter() + seconds
    while fastest == math.inf or time.perf_counter() < deadline:
        rng = random.Random(0)
        plies = 0
        start = time.thread_time()
        for seed in range(CHUNK_GAMES):
            state = rules.new_state(seed=seed)
            while outcome(state) is None:
                state = apply(state, rng.choice(legal_moves(state)))
            plies += rules.ply(state)
        fastest = min(fastest, time.thread_time() - start)
    return plies / max(fastest, 1e-9)


def relative_speed(speed: float, reference: float) -> float:
    """A node's benchmark ``speed`` over the driver's ``reference``, to 2
    decimals: at least 0.01, at most :data:`~arena.game.records.MAX_RATIO` (a record holds it)."""
    return min(max(round(speed / reference, 2), 0.01), MAX_RATIO)


def time_scale(reference: float, speed: float) -> float:
    """What a node of benchmark ``speed`` multiplies the clock by, the
    driver's machine measuring ``reference``: its slowness, to 2 decimals,
    within the same bounds."""
    return relative_speed(reference, speed)


def scaled(config: TournamentConfig, scale: float) -> TournamentConfig:
    """``config`` with every clock (the file's and each bot's own) ``scale``
    times as long, each time kept one a clock may hold (a millisecond at
    least, :data:`~arena.game.clock.MAX_CLOCK_MS` at most; an increment may stay 0)."""
    def times(ms: int, least: int = 1) -> int:
        return min(max(round(ms * scale), least), MAX_CLOCK_MS)

    def longer(control: TimeControl) -> TimeControl:
        if control.per_move_ms is not None:
            return TimeControl(per_move_ms=times(control.per_move_ms))
        return TimeControl(times(control.initial_ms), times(control.increment_ms, 0))

    return replace(config, time_control=longer(config.time_control),
                   time_odds={name: longer(control) for name, control in config.time_odds.items()})
