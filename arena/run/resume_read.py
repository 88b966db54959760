"""What a resumed run of a round-robin, reference or gauntlet tournament
needs of the games already played, kept in the results directory's index
and carried on over the games added since: not the records themselves.

A resumed league of a million games read and held every record to decide
what to play next (some 17 µs and a kilobyte a record).  Its plan needs
far less: per round how many games it holds and, for the rounds not
complete, their ids (the games left to play); each bot's versions that
played them, with how many games (a bot of another version stops the run);
the forfeits (some are played again); and the games of bots that left.
The first resume of a directory folds every game in without making its
record (:meth:`KeptResume.take`): the index holds, beside each record, its
id, seed, players, opening and versions (:meth:`GameIndex.games`), and a
game whose all of these are what the schedule names by its id is counted
from them, a byte marking it among its round's games; the others (a
forfeit, a game of a bot that left, a second record, a line of the log
the index does not cover yet) are made and sorted as a whole read sorts
them.  It keeps that (:class:`KeptResume`, through :mod:`arena.run.answers`:
sealed, one question per directory, ``tournament.json`` and tournament); a
later one reads only the lines the log gained since and folds them in.  The records
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

import json
from collections import Counter
from collections.abc import Callable
from itertools import compress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.base.loaded_on_use import LoadedOnUse
from arena.formats.competition import Competition
from arena.formats.game_pairs import game_seed
from arena.formats.schedule import FixedSchedule
from arena.game.records import MAX_NAME_CHARS, GameRecord, GameSpec, parse_game_id
from arena.results.game_index import LazyMoves, LogPlace, shape_text, text_of
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
    #: While a first read folds the games in: per round, a byte for each of its games, 1 for those kept
    #: (the round's count and :attr:`open_ids` are made of them when the read ends: :meth:`read_on`).
    _marks: dict[int, bytearray] | None = field(default=None, repr=False, compare=False)
    #: What :meth:`take` made of the parts of the ids it read (see :meth:`_round_of`, :meth:`_pair_of`,
    #: :meth:`_games_of`), and of versions.
    _rounds: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _pairs: dict[str, tuple[int, str, str] | None] = field(default_factory=dict, repr=False, compare=False)
    _games: dict[str, tuple[int, int, str]] = field(default_factory=dict, repr=False, compare=False)
    _played: dict[tuple[str, str], tuple[tuple[str, str, None], ...] | None] = field(default_factory=dict, repr=False,
                                                                                  compare=False)

    def __post_init__(self) -> None:
        self._left_ids = {record.game_id for record in self.left_out}

    @classmethod
    def anew(cls, competition: Competition) -> KeptResume:
        """Nothing read yet: a first resume's read folds every game in
        (:meth:`take`, else :meth:`add`) from the start of the log."""
        return cls(place=LogPlace.start(), game=competition.game, competition=competition, per_round=Counter(), count=0,
                   open_ids={}, versions=Counter(), forfeits=[], left_out=[], lines=[], _marks={})

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
        if self._marks is not None:
            self._marked(record.round)[record.index % per_round] = 1
        elif open_round:
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
            round_, within = divmod(index, self._schedule().per_round)
            round_ += 1
            if self._marks is not None:
                marks = self._marks.get(round_)
                return bool(marks is not None and marks[within]) or game_id in self._left_ids
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
        # (the schedule made again from the competition; what a first read used, read again by the next first read)
        return {**self.__dict__, "_fixed": None, "_marks": None, "_rounds": {}, "_pairs": {}, "_games": {},
                "_played": {}}

    def take(self, game: tuple[Any, ...]) -> bool:
        """Fold in a game from what the index holds of its line (a row of
        :meth:`~arena.results.game_index.GameIndex.games`), its record not
        made, where all of that is what the schedule names by its id (what
        :meth:`FixedSchedule.place` asks of a record: the same seed,
        opening and seats), it is no forfeit and the first of its id:
        True; else False, and the record is made and :meth:`add`-ed."""
        _, _, game_id, seed, seats, shape, versions = game
        if type(game_id) is not str or self._marks is None:
            return False
        # (a million ids: each round's part and pair's read once, not the whole id parsed every time;
        # the part before the first "-" is the round's, after the last "-g" the game's: neither can hold one)
        head, _, rest = game_id.partition("-")
        pair, _, k = rest.rpartition("-g")
        round_ = self._rounds[head] if head in self._rounds else self._rounds.setdefault(head, self._round_of(head))
        place = self._pairs[pair] if pair in self._pairs else self._pairs.setdefault(pair, self._pair_of(pair))
        slot = (self._games or self._games_of()).get(k)
        if (not round_ or place is None or slot is None or seats != place[1 + slot[1]] or shape != slot[2]
                or seed != game_seed(self.competition.seed, game_id)):
            return False
        within = place[0] + slot[0]
        played = () if versions is None else self._versions_of(seats, versions)
        marks = self._marks.get(round_) or self._marked(round_)
        if played is None or marks[within]:
            return False
        marks[within] = 1
        for key in played:
            self.versions[key] += 1
        return True

    def _round_of(self, head: str) -> int:
        """The round ``head``, the part of an id before its first ``-``, names (0: none of this schedule)."""
        parsed = parse_game_id(f"{head}-a~b-g1")
        return parsed[0] if parsed is not None and 1 <= parsed[0] <= self.competition.rounds else 0

    def _pair_of(self, pair: str) -> tuple[int, str, str] | None:
        """Where the games of ``pair`` (an id's ``a~b``) start among their
        round's, and the seats their lines hold, its first bot on seat 0 and
        on seat 1 (see :func:`text_of`); None when the schedule holds no such pair."""
        schedule = self._schedule()
        first = schedule.index_of(f"r1-{pair}-g1")
        if first is None:
            return None
        players = list(schedule[first].players)
        return first, text_of(players), text_of(players[::-1])

    def _games_of(self) -> dict[str, tuple[int, int, str]]:
        """Each game of a pair in a round, by its ``k`` as an id writes it:
        its place among the pair's, its first bot's seat and the shape its
        line holds (see :func:`shape_text`)."""
        schedule = self._schedule()
        for k in range(1, min(2 * len(self.competition.suite()), len(schedule)) + 1):
            spec = schedule[k - 1]  # (the first pair's, in the first round)
            self._games[str(k)] = (k - 1, (k - 1) % 2, shape_text(spec.game, spec.opening, spec.opening_moves, None))
        return self._games

    def _versions_of(self, seats: str, versions: object) -> tuple[tuple[str, str, None], ...] | None:
        """Each bot (of ``seats``) and the version that played, as :attr:`versions`
        counts them, from the ``versions`` a line holds; None when that is not
        what a record can hold (its record is then made, and checked)."""
        if (seats, versions) not in self._played:
            try:
                names, played = json.loads(seats), json.loads(versions) if type(versions) is str else None
            except ValueError:
                names, played = None, None
            good = (type(played) is list and type(names) is list and len(played) == len(names) == 2
                    and all(type(v) is str and len(v) <= MAX_NAME_CHARS and v.isprintable() for v in played))
            self._played[seats, versions] = tuple((n, v, None) for n, v in zip(names, played)) if good else None
        return self._played[seats, versions]

    def _marked(self, round_: int) -> bytearray:
        """The marks of round ``round_`` (see :attr:`_marks`)."""
        assert self._marks is not None
        marks = self._marks.get(round_)
        if marks is None:
            marks = self._marks[round_] = bytearray(self._schedule().per_round)
        return marks

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
        if self._marks is not None:  # a first read: the rounds' counts and the ids of those not complete, from their marks
            schedule = self._schedule()
            self.per_round = Counter({round_: count for round_, marks in self._marks.items() if (count := marks.count(1))})
            self.count = sum(self.per_round.values())
            self.open_ids = {round_: {schedule.game_id_at((round_ - 1) * schedule.per_round + within)
                                      for within in compress(range(schedule.per_round), self._marks[round_])}
                             for round_, count in self.per_round.items() if count < schedule.per_round}
            self._marks = None
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
