"""Games by the node that played them (a record's ``played_on``), so that
per-node conditions can be audited: a node whose bots run at another
niceness, or on slower cores, shows in its mean move time and its forfeits
on time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.game.records import GameRecord

__all__ = ["NodeTally", "NodeTallies", "NOT_RECORDED"]

#: The host shown for games whose record does not say where they were
#: played (written before records said so, or forfeits the driver recorded).
NOT_RECORDED = "(not recorded)"


@dataclass
class NodeTally:
    #: The host name; None for games whose node is not recorded.
    host: str | None
    #: The Ray node's id; None off Ray.
    node_id: str | None
    games: int = 0
    moves: int = 0
    #: The time of those moves, in whole microseconds (records hold them so:
    #: a sum that does not depend on the order the games were added in).
    move_us: int = 0
    #: Forfeit reason -> games forfeited on this node that way (by either bot).
    forfeits: dict[str, int] = field(default_factory=dict)
    #: The Ray actors' or local workers' numbers that played here.
    workers: set[int] = field(default_factory=set)
    #: Every niceness the bots started at here.
    nice: set[int] = field(default_factory=set)
    #: The node's speeds over the driver's machine, on a calibrated cluster.
    speeds: set[float] = field(default_factory=set)
    #: What the clocks of its games were scaled by (``ray.time_scaling: speed``).
    scales: set[float] = field(default_factory=set)

    @property
    def move_ms(self) -> float:
        return self.move_us / 1000

    @property
    def mean_move_ms(self) -> float | None:
        return self.move_ms / self.moves if self.moves else None


#: The key of the games whose node is not recorded.
_NOT_RECORDED_KEY: tuple[str | None, str | None] = (None, None)


class NodeTallies:
    """The tallies of each node, added to a record at a time."""

    def __init__(self) -> None:
        self._nodes: dict[tuple[str | None, str | None], NodeTally] = {}

    def add(self, record: GameRecord, times: Sequence[float]) -> None:
        """Count ``record``, whose moves took ``times`` (ms)."""
        place = record.played_on
        if place:
            host, node_id = place.get("host"), place.get("node_id")
            key = (host if isinstance(host, str) else None, node_id if isinstance(node_id, str) else None)
        else:
            key = _NOT_RECORDED_KEY
        tally = self._nodes.get(key)
        if tally is None:
            tally = self._nodes[key] = NodeTally(*key)
        tally.games += 1
        tally.moves += len(times)
        tally.move_us += round(sum(times) * 1000)
        if record.forfeit_by is not None:
            tally.forfeits[record.reason] = tally.forfeits.get(record.reason, 0) + 1
        if place:  # (a league's records mostly say nothing of it: looked into only when they do)
            for name, into in (("actor", tally.workers), ("worker", tally.workers), ("nice", tally.nice)):
                if isinstance(value := place.get(name), int):
                    into.add(value)
            if isinstance(speed := place.get("speed"), (int, float)):
                tally.speeds.add(float(speed))
        if record.time_scale is not None:
            tally.scales.add(record.time_scale)

    def tallies(self) -> list[NodeTally]:
        """Every node by host name and id, the games whose node is not recorded last."""
        return sorted(self._nodes.values(), key=lambda t: (t.host is None, t.host or "", t.node_id or ""))
