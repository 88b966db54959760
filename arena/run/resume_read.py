"""What a resumed run of a round-robin, reference or gauntlet tournament
needs of the games already played, kept in the results directory's index
and carried on over the games added since: not the records themselves.

A resumed league of a million games read and held every record to decide
what to play next (some 17 µs and a kilobyte a record).  Its plan needs
far less: per round how many games it holds and, for the rounds not
complete, their ids (the games left to play); each bot's versions that
played them, with how many games (a bot of another version stops the run);
the forfeits (some are played again); and the games of bots that left.
The first resume of a directory reads every record, as before, and keeps
that (:class:`KeptResume`, through :mod:`arena.run.answers`: sealed, one
question per directory, ``tournament.json`` and tournament); a later one
reads only the lines the log gained since and folds them in.  The records
themselves (:class:`KeptRecords`) are read whole only when something
looks at them (the standings at the end of the run, when the index keeps
none: that read then keeps them), the same records, from the same lines,
as the whole read gives.  The forfeits the run may play again (of a bot
that could not start, withdrawn or disqualified, under the default
``--replay-forfeits``) are told from those kept: those that stand leave
the records unread.

Anything that needs the records before the first game reads them whole,
as before: ``--replay``, ``--replay-game``, a limit on the games, an SPRT
(its test folds the game pairs), ``report: true`` (the report shows
them), a format paired by results or numbered by position, and a log that
no longer starts as it was read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.base.loaded_on_use import LoadedOnUse
from arena.formats.competition import Competition
from arena.formats.schedule import FixedSchedule
from arena.game.records import GameRecord, GameSpec
from arena.results.game_index import LazyMoves, LogPlace
from arena.results.reading import SortedRecords, sort_records
from arena.results.store import GAMES_FILE, LoadedResults, ResultsStore, StoreError

__all__ = ["KeptRecords", "KeptResume"]


@dataclass
class KeptResume:
    """What a resume needs of the games of a log as far as it was read (see the module's doc)."""

    #: Where the read ended.
    place: LogPlace
    game: str
    competition: Competition
    #: The games kept (those the schedule holds), per round, and their number.
    per_round: Counter[int]
    count: int
    #: The ids of the games kept in each round not complete.
    open_ids: dict[int, set[str]]
    #: Per bot, version and (for a forfeit) its reason, the games kept that version played.
    versions: Counter[tuple[str, str, str | None]]
    #: The forfeits kept, and the games of bots no longer in the tournament, in the log's order.
    forfeits: list[GameRecord]
    left_out: list[GameRecord]
    #: The warnings of the lines read (see :meth:`LoadedResults.line_warnings`).
    lines: list[str]
    #: Games read since that the schedule does not hold as they were played (the run refuses them).
    foreign: list[GameRecord] = field(default_factory=list)
    _fixed: FixedSchedule | None = field(default=None, repr=False, compare=False)
    _left_ids: set[str] = field(default_factory=set, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._left_ids = {record.game_id for record in self.left_out}

    @classmethod
    def of(cls, directory: Path, competition: Competition, records: SortedRecords, loaded: LoadedResults) -> KeptResume:
        """What a whole read (``loaded``, its records sorted into ``records``) keeps."""
        assert loaded.place is not None
        kept = cls(place=loaded.place, game=competition.game, competition=competition, per_round=Counter(), count=0,
                   open_ids={}, versions=Counter(), forfeits=[], left_out=list(records.left_out),
                   lines=loaded.line_warnings(directory))
        per_round = FixedSchedule(competition).per_round
        kept.per_round.update(record.round for record in records.kept)
        for record in records.kept:
            kept._count(record, per_round, open_round=False)
        kept.open_ids = {r: set() for r, n in kept.per_round.items() if n < per_round}
        for record in records.kept:
            if record.round in kept.open_ids:
                kept.open_ids[record.round].add(record.game_id)
        return kept

    def _count(self, record: GameRecord, per_round: int, *, open_round: bool = True) -> None:
        """Count ``record``, a game kept, in all but its round's count (and ids, unless ``open_round``)."""
        self.count += 1
        reason = record.reason if record.forfeit_by is not None else None
        for color, version in (record.versions or {}).items():
            self.versions[record.players[color], version, reason] += 1
        if record.forfeit_by is not None:
            self.forfeits.append(record)
        if open_round:
            ids = self.open_ids.setdefault(record.round, set())
            ids.add(record.game_id)
            if len(ids) == per_round:  # complete: its count says so
                del self.open_ids[record.round]

    def __contains__(self, game_id: object) -> bool:
        """Whether a game of id ``game_id`` was read before (a second record of it is skipped, as a whole read skips it)."""
        if not isinstance(game_id, str):
            return False
        index = self._schedule().index_of(game_id)
        if index is not None:
            round_ = index // self._schedule().per_round + 1
            if round_ in self.open_ids:
                return game_id in self.open_ids[round_]
            if self.per_round.get(round_):
                return True  # a complete round holds every game of its ids
        return game_id in self._left_ids

    def _schedule(self) -> FixedSchedule:
        if self._fixed is None:
            self._fixed = FixedSchedule(self.competition)
        return self._fixed

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fixed": None}  # (made again from the competition)

    def add(self, record: GameRecord) -> None:
        """Fold in ``record``, read after :attr:`place`, as a whole read sorts it."""
        sorted_ = sort_records([record], self._schedule(), self.competition.names)
        for kept in sorted_.kept:
            self.per_round[kept.round] += 1
            self._count(kept, self._schedule().per_round)
        self.left_out += sorted_.left_out
        self._left_ids.update(r.game_id for r in sorted_.left_out)
        self.foreign += sorted_.foreign

    def read_on(self, loaded: LoadedResults, directory: Path) -> LoadedResults:
        """The read of the lines since (``loaded``, its records folded in
        through :meth:`add`), as a whole read of the log would have given
        it, but its records: its warnings in the same order, and where it
        ended, from where the next read goes on."""
        assert loaded.place is not None
        self.place = loaded.place
        self.lines += loaded.line_warnings(directory)
        torn = [loaded.torn] if loaded.torn is not None else []
        return LoadedResults([], [*loaded.rebuilt(directory), *self.lines, *torn], loaded.good_bytes, loaded.place,
                             loaded.torn)

    def records(self, directory: Path) -> KeptRecords:
        """The records kept, read from the log only when looked at."""
        place, game, competition = self.place, self.game, self.competition

        def read() -> tuple[list[GameRecord], LoadedResults, SortedRecords]:
            # The lines up to where this was read: the run appends its own games after them.
            loaded = ResultsStore(directory).load(game)
            sorted_ = sort_records(loaded.records, FixedSchedule(competition), competition.names)
            before = [r for r in sorted_.kept if isinstance(r.moves, LazyMoves) and r.moves.offset < place.offset]
            return before, loaded, sorted_

        return KeptRecords(self.count, read, self.per_round, {i for ids in self.open_ids.values() for i in ids},
                           directory / GAMES_FILE)


class KeptRecords(LoadedOnUse[GameRecord]):
    """The records a resumed run keeps, and those it adds (:meth:`append`),
    the kept ones read only when looked at (see the module's doc):
    :attr:`per_round` and :attr:`open_ids` say which games they are."""

    def __init__(self, count: int, read: Callable[[], tuple[list[GameRecord], LoadedResults, SortedRecords]],
                 per_round: Counter[int], open_ids: set[str], where: Path) -> None:
        self._count, self._read, self._where = count, read, where
        self.per_round, self.open_ids = per_round, open_ids
        self._records: list[GameRecord] | None = None
        self._added: list[GameRecord] = []
        self._whole: tuple[LoadedResults, SortedRecords] | None = None

    @property
    def read(self) -> bool:
        """Whether the kept records were read (something looked at them)."""
        return self._records is not None

    def load(self) -> list[GameRecord]:
        if self._records is None:
            records, loaded, sorted_ = self._read()
            self._whole = loaded, sorted_
            if len(records) != self._count:  # (the same lines as the read kept: only a log edited meanwhile differs)
                raise StoreError(f"{self._where} changed while the run used it: {len(records)} games kept where "
                                 f"{self._count} were read; run again to resume")
            self._records = records + self._added
            self._added = []
        return self._records

    def whole_read(self) -> tuple[LoadedResults, SortedRecords]:
        """The read of the whole log that gave the kept records, its records
        sorted through the schedule (made now if nothing looked at them yet)."""
        self.load()
        assert self._whole is not None
        return self._whole

    def pending(self, schedule: FixedSchedule) -> list[GameSpec]:
        """:meth:`FixedSchedule.pending` of these records, from their counts
        while none is read or added (a resume's first plan)."""
        if self._records is None and not self._added:
            return schedule.pending_of(self.per_round, self.open_ids)
        return schedule.pending(self)

    def append(self, record: GameRecord) -> None:
        (self._added if self._records is None else self._records).append(record)

    def __len__(self) -> int:
        return len(self._records) if self._records is not None else self._count + len(self._added)

    def __repr__(self) -> str:
        return f"KeptRecords({len(self)} records{'' if self.read else ', not read yet'})"
