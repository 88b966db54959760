"""The specs of one run as an executor's workers take them, and what happens
to the games of a worker that dies or stalls: one policy for local worker
processes and Ray actors alike.

An executor takes specs for a worker (:meth:`SpecQueue.take`) and hands back
the records that come from it (:meth:`SpecQueue.done`); so the queue knows
which games each worker has in flight and since when the one it plays began.
A worker silent on one game past the game deadline is stalled: its game is
put back once and given up the second time (:class:`WorkerStalled`, once
every other game is done).  A worker that dies loses its games, which are put
back first in line, until one has lost ``max_attempts`` workers: then the
run stops (:class:`WorkerDied`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

from arena.game.records import GameRecord, GameSpec

_log = logging.getLogger(__name__)

__all__ = ["HeadLost", "SpecQueue", "StoppableSpecs", "WorkerDied", "WorkerStalled"]

#: A worker of an executor, as the executor tells one from another.
W = TypeVar("W", bound=Hashable)

#: A game whose worker went silent past the deadline this many times is given up.
MAX_STALLS = 2
#: Most specs read ahead, and kept in line, while looking for one a worker
#: can play (a Ray actor on whose node a bot does not start): enough for
#: the others to wait there, not so many that a lazy schedule is read whole.
MAX_SKIPPED = 256

#: Whether a worker can play a spec (None: every spec).
Playable = Callable[[GameSpec], bool] | None


class WorkerDied(RuntimeError):
    """A worker of an executor (a local worker process, a Ray actor) died, or
    none could play: the run stops, every finished game kept."""


class HeadLost(WorkerDied):
    """The Ray cluster's head is gone: no actor can be started or stopped,
    and Ray would end the run a minute later."""


class WorkerStalled(WorkerDied):
    """Games whose worker went silent past the game deadline, twice: every
    other game was played and handed back first."""


class StoppableSpecs:
    """Specs read lazily until ``stop()`` says to stop (an SPRT decided):
    from then on only those of ``keep`` (game ids: games the test counted
    when it was decided, lost since, see
    :func:`arena.run.tournament.holes`) are handed out, and once those are,
    the specs are stopped: none more, not even one read ahead, and an
    executor drops the games it queued on a worker that have not started
    (see :meth:`SpecQueue.stopped`)."""

    def __init__(self, specs: Iterable[GameSpec], stop: Callable[[], bool], keep: Collection[str] = ()) -> None:
        self._specs = iter(specs)
        self._stop = stop
        self._keep = set(keep)

    def __iter__(self) -> StoppableSpecs:
        return self

    def __next__(self) -> GameSpec:
        for spec in self._specs:
            if spec.game_id in self._keep:
                self._keep.discard(spec.game_id)
                return spec
            if not self._stop():
                return spec
        raise StopIteration

    @property
    def stopped(self) -> bool:
        return not self._keep and self._stop()


class SpecQueue(Generic[W]):
    """The specs of one run: ``specs`` read lazily, one each time a worker
    takes one, and the games put back (those of a worker that died or
    stalled), which go out before any new spec.

    ``worker_kind`` names a worker in the errors (``worker``, ``Ray
    actor``).  With ``max_attempts`` 1 a worker that dies stops the run at
    once: the local executor's workers die only when killed from outside."""

    def __init__(
        self, specs: Iterable[GameSpec], game_deadline: float, *, worker_kind: str, max_attempts: int = 1
    ) -> None:
        self._new = iter(specs)
        self._stoppable = specs if isinstance(specs, StoppableSpecs) else None
        self._again: deque[GameSpec] = deque()
        #: Seconds a worker may stay silent on one game before it is stalled.
        self.game_deadline = game_deadline
        self.worker_kind = worker_kind
        self.max_attempts = max_attempts
        # The games sent to each worker with one in flight, the first being
        # played (the others queued so that it never waits for the executor),
        # and when that one began, as far as the executor knows.
        self._sent: dict[W, deque[GameSpec]] = {}
        self._since: dict[W, float] = {}
        self._attempts: Counter[str] = Counter()
        self._stalls: Counter[str] = Counter()
        self._abandoned: list[str] = []
        self._handed: set[str] = set()
        #: With stoppable specs (an SPRT), how far past the first game pair
        #: not yet complete a pair may be to be handed out (None: any): while
        #: a worker stalls on a pair the verdict needs, the others play only
        #: this far ahead, not on until its deadline, so that the games
        #: stored past the verdict stay within it.
        self.window: int | None = None

    # -- handing out ---------------------------------------------------------

    def fill(self, count: int) -> int:
        """Read new specs until ``count`` wait to be taken (fewer when they
        run out); how many wait."""
        while len(self._again) < count and (spec := next(self._new, None)) is not None:
            self._again.append(spec)
        return len(self._again)

    def waiting(self) -> int:
        """Specs put back or read ahead, to be taken before any new one."""
        self._drop_if_stopped()
        return len(self._again)

    @property
    def stoppable(self) -> bool:
        """The specs may be stopped early (:class:`StoppableSpecs`: an SPRT)."""
        return self._stoppable is not None

    def stopped(self) -> bool:
        """The specs were stopped (an SPRT decided): no game is to start any more."""
        return self._stoppable is not None and self._stoppable.stopped

    def take_pair(self, worker: W, playable: Playable = None) -> list[GameSpec]:
        """The next spec ``worker`` can play and, when the one after it is of
        the same game pair, that one too (a Ray actor plays a test's pair as
        one unit; both games have the same players)."""
        specs = self.take(worker, 1, playable)
        if specs and self.fill(1) and self._again[0].pair == specs[0].pair:
            specs += self.take(worker)
        return specs

    def cancel(self, worker: W, game_ids: Collection[str]) -> None:
        """``worker`` dropped these games, queued there, unplayed (the specs were stopped)."""
        games = self._sent.get(worker)
        if games is None:
            return
        for spec in [spec for spec in games if spec.game_id in game_ids]:
            games.remove(spec)
        if not games:
            del self._sent[worker], self._since[worker]

    def take(self, worker: W, count: int = 1, playable: Playable = None) -> list[GameSpec]:
        """Up to ``count`` specs for ``worker`` (fewer when they run out), in
        flight there from now on; its clock starts if it was idle.  With
        ``playable``, only specs it says ``worker`` can play: the others
        keep their place in line for other workers."""
        specs = []
        while len(specs) < count and (spec := self._next(playable)) is not None:
            specs.append(spec)
        if specs:
            if worker not in self._sent:
                self._sent[worker] = deque()
                self._since[worker] = time.monotonic()
            self._sent[worker].extend(specs)
        return specs

    # -- in flight -----------------------------------------------------------

    def in_flight(self, worker: W) -> int:
        """Games sent to ``worker`` and not handed back."""
        games = self._sent.get(worker)
        return len(games) if games is not None else 0

    def busy(self) -> bool:
        """Whether some worker has a game in flight."""
        return bool(self._sent)

    def unfinished(self) -> bool:
        """Whether a game is in flight or waits to be taken again."""
        self._drop_if_stopped()
        return bool(self._sent or self._again)

    def since(self, worker: W) -> float:
        """When the game ``worker`` plays began (``time.monotonic()``)."""
        return self._since[worker]

    def done(self, worker: W, records: Sequence[GameRecord]) -> list[GameRecord]:
        """Take back the games of ``records``, played by ``worker``; the clock
        of the next game it has restarts now.  Returns the records to hand
        back: each game's first (a game played again counts once)."""
        games = self._sent[worker]
        finished = {record.game_id for record in records}
        for spec in [spec for spec in games if spec.game_id in finished]:
            games.remove(spec)
        if games:
            self._since[worker] = time.monotonic()
        else:
            del self._sent[worker], self._since[worker]
        fresh = [record for record in records if record.game_id not in self._handed]
        self._handed.update(record.game_id for record in fresh)
        return fresh

    # -- workers that stall or die ------------------------------------------

    def next_deadline(self) -> float | None:
        """When the first worker to stall will have (``time.monotonic()``), if one plays."""
        return min(self._since.values()) + self.game_deadline if self._since else None

    def stalled(self) -> list[W]:
        """The workers silent on one game past the game deadline."""
        late = time.monotonic() - self.game_deadline
        return [worker for worker, since in self._since.items() if since <= late]

    def stall(self, worker: W) -> None:
        """``worker`` stalled and is killed: the games queued behind its game
        go back first in line, and its game last (every other game waiting is
        tried before it), or is given up if it stalled ``MAX_STALLS`` times."""
        game, *behind = self._forget(worker)
        self._again.extendleft(reversed(behind))
        self._stalls[game.game_id] += 1
        if self._stalls[game.game_id] < MAX_STALLS:
            self._again.append(game)
        else:
            self._abandoned.append(game.game_id)

    def lose(self, worker: W, why: str) -> None:
        """``worker`` died (``why`` says how, in a few words): its games go
        back first in line.  Raises :class:`WorkerDied` once the game it
        played has lost ``max_attempts`` workers."""
        lost = self._forget(worker)
        if not lost:
            return
        # Only the first was being played: the others count no attempt.
        game = lost[0].game_id
        self._attempts[game] += 1
        if self._attempts[game] >= self.max_attempts:
            if self.max_attempts == 1:
                raise WorkerDied(f"{why} in the middle of a game; that game is lost, every finished game is kept")
            raise WorkerDied(f"game {game} lost its {self.worker_kind} {self.max_attempts} times (last: {why}); "
                             "every finished game is kept")
        self._again.extendleft(reversed(lost))
        # (the run goes on: said as a warning, which the command prints as one)
        _log.warning(f"a {self.worker_kind} was lost ({why}) in the middle of game {game}: it is played again")

    def finish(self) -> None:
        """At the end of the run: raise :class:`WorkerStalled` naming the
        games given up, if any."""
        if self._abandoned:
            raise WorkerStalled(
                f"no result for game{'s' if len(self._abandoned) > 1 else ''} {', '.join(self._abandoned)}: "
                f"its {self.worker_kind} went silent for more than {self.game_deadline:.0f} s, twice "
                "(a bot may have stopped it); every other game is kept"
            )

    def _next(self, playable: Playable = None) -> GameSpec | None:
        self._drop_if_stopped()
        reach = self._reach()
        if playable is None and reach is None:
            return self._again.popleft() if self._again else next(self._new, None)
        # A spec beyond the window holds back every new one (pairs come in order).
        beyond = False
        for number, spec in enumerate(self._again):
            if reach is not None and spec.pair >= reach:
                beyond = True
            elif playable is None or playable(spec):
                del self._again[number]
                return spec
        while not beyond and len(self._again) < MAX_SKIPPED and (spec := next(self._new, None)) is not None:
            beyond = reach is not None and spec.pair >= reach
            if not beyond and (playable is None or playable(spec)):
                return spec
            self._again.append(spec)
        return None

    def _reach(self) -> int | None:
        """The first pair past the window (see :attr:`window`), if one is set
        and a game is in flight or waits."""
        if self.window is None:
            return None
        pairs = [spec.pair for games in self._sent.values() for spec in games] + [spec.pair for spec in self._again]
        return min(pairs) + self.window if pairs else None

    def _drop_if_stopped(self) -> None:
        # Once stopped, what was read ahead or put back is not wanted either:
        # every game before the verdict was in.
        if self._again and self.stopped():
            self._again.clear()

    def _forget(self, worker: W) -> list[GameSpec]:
        self._since.pop(worker, None)
        return list(self._sent.pop(worker, ()))
