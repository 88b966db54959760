"""What ``arena standings`` reads of a results directory, and the fold it
keeps in the directory's index to carry on from over the games added since.

A league of a million games takes minutes to fold from its records; most
reads (a course's ``arena standings`` every few minutes while its league
plays) come after a few more games.  The first read of a question (the
directory as named, its ``tournament.json``, the tournament file's
settings, the arena's code: :func:`~arena.run.answers.question_of`) folds
every game and keeps, sealed in the index, its answer, where in the log it
read to, and the fold itself; a later read of the same question reads only
the lines the log gained since and folds them in.  The first read is the
same carrying on, from none: the records stream from the log (through its
index) into the fold, each game found in the schedule from its id alone,
so that none is held and the whole schedule is never made.  TrueSkill
depends on the order of the games (schedule order, not the order they
finished in), so the fold keeps its last :data:`UNRATED_TAIL` games
unrated: a game that finishes late, up to that many games back, still
folds in its place.

Anything else reads every game, whole, as :func:`~arena.run.results_dir.read_results`
does: a log that no longer starts as it was read (a ``--replay`` rewrote
it), a game that comes before the fold's rated ones (a resumed run filling
the games it had left: the fold of that read is kept, sorted, and carried
on from), a format whose games are paired by results or numbered by
position, a match of two bots or a gauntlet (their game pairs come from the
records), a limit on the games.  Either way the answer is the same, to the
last bit.

``arena serve`` reads a large directory's standings the same way
(:func:`carried_standings`), with its latest games only
(:meth:`KeptStandings.latest`): the kept standings hold what its page
shows beyond the tables, a thinned rating history and, for each pair, the
rounds it played (a team's pairings not played yet).
"""

from __future__ import annotations

import os
import pickle
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.base import safe_files
from arena.formats.competition import Competition
from arena.formats.schedule import ScheduledGames, pairings, schedule_size
from arena.game.records import GameRecord, MAX_ROUND, schedule_key
from arena.formats.rounds import Rounds
from arena.results.game_index import LogPlace
from arena.results.meta import MetaError, TournamentMeta, read_meta
from arena.results.reading import ReadResults, SortedRecords, competition_as_played, left_out_line, rules_of
from arena.results.standings import Standings, StandingsFold
from arena.results.store import GAMES_FILE, LoadedResults, LogRewritten, ResultsStore, StoreError
from arena.run.answers import question_of, recall, remember
from arena.run.results_dir import FoundResults, find_results, read_loaded

__all__ = ["KeptStandings", "LatestResults", "StandingsRead", "carried_standings", "kept_of_read", "read_standings",
           "UNRATED_TAIL"]

#: The games a kept fold leaves unrated, the last in schedule order: a game
#: that finishes after a later one (another worker's) still folds in its place.
UNRATED_TAIL = 256


@dataclass
class StandingsRead:
    """What ``arena standings`` shows of a results directory."""

    warnings: list[str]
    #: The standings, each bot's rating history thinned (carried on: the live page's chart draws it) or none.
    standings: Standings
    #: The games lost by forfeit, in schedule order, whose details follow the tables.
    forfeits: list[GameRecord]


def read_standings(target: Path) -> StandingsRead:
    """The standings ``target`` means, read as
    :func:`~arena.run.results_dir.read_results` reads them, or carried on
    from those the index keeps over the games added since (see the module's
    doc); the same errors."""
    found = find_results(target)
    carried = carried_standings(found)
    if carried is not None:
        return carried[1]
    asked = _asked(found)
    question = _question(found, asked)
    stat = _log_stat(found.directory)
    results, head, loaded = read_loaded(found)
    kept = KeptStandings.first(found, results, head, loaded, stat)
    if kept is None:
        read = StandingsRead(results.warnings, results.standings(), _in_schedule_order(results.records))
        for bot in (*read.standings.bots, *read.standings.entrants):
            bot.history = []
        return read
    _keep(found, asked, question, kept)
    return kept.answer(found.directory, loaded)


def carried_standings(found: FoundResults, *, streamed: bool = True) -> tuple[KeptStandings, StandingsRead] | None:
    """The standings of ``found`` carried on from those its index keeps (or
    from none, as a stream, unless not ``streamed``) over the games added
    since, and kept again for the next reader; None when they cannot be
    carried on (see the module's doc): the games must be read whole."""
    asked = _asked(found)
    question = _question(found, asked)
    kept = recall(found.directory, question) if question is not None else None
    if not isinstance(kept, KeptStandings):
        kept = KeptStandings.empty(found) if streamed else None  # read as a stream, every game carried on from none
    if kept is None or (read := kept.carry_on(found.directory)) is None:
        return None
    if kept.changed:
        _keep(found, asked, question, kept)
    return kept, read


def kept_of_read(found: FoundResults, loaded: LoadedResults, sorted_: SortedRecords) -> KeptStandings | None:
    """The standings of ``loaded``, a whole read of ``found``'s log that a
    run made for itself (its records sorted into ``sorted_`` through the
    schedule of the tournament file), as ``arena standings`` reads and keeps them,
    carried on over the lines the log gained since (the run's own games)
    and kept for the next reader; None where they cannot be kept (see the
    module's doc).  A run that read every record folds them once, here,
    rather than into standings of its own: the next run, ``arena
    standings`` or ``arena serve`` of the same question carries them on."""
    asked, config = _asked(found), found.config
    question = _question(found, asked)
    if question is None or config is None:
        return None
    try:
        meta = read_meta(found.directory)
    except (MetaError, StoreError):
        return None
    if meta is None:
        return None
    # The records as a whole read sorts them (results_of), through the schedule
    # as far as the rounds played: the same records (a run refuses any other).
    rules = rules_of(config.competition, meta)
    competition = competition_as_played(config.competition, meta, loaded.records, rules)
    if not _carried(competition, meta, None) or sorted_.foreign:
        return None
    left_out = sorted_.left_out_line()
    results = ReadResults(found.directory, sorted_.kept, meta, competition, list(competition.names), rules,
                          [*loaded.warnings, *([left_out] if left_out is not None else [])], sorted_.left_out,
                          scheduled=schedule_size(competition))
    # (no warning of tournament.json or the tournament file: a run wrote the one and read the other)
    kept = KeptStandings.first(found, results, [], loaded, None)
    if kept is None or kept.carry_on(found.directory) is None:
        return None
    _keep(found, asked, question, kept)
    return kept


def _keep(found: FoundResults, asked: tuple[Any, ...], question: str | None, kept: KeptStandings) -> None:
    """Keep ``kept`` in the index as the answer to ``question``, unless the
    question changed while it was read (a file edited meanwhile)."""
    if question is not None and question_of(found.directory, asked) == question:
        kept.changed = False  # (as kept: the next read that reads nothing new keeps nothing again)
        remember(found.directory, question, kept)


def _asked(found: FoundResults) -> tuple[Any, ...]:
    """What ``arena standings`` asks of ``found`` besides its games (see :func:`question_of`)."""
    config = found.config
    return ("standings", None if config is None else
            (config.competition, config.seeding))  # (the seed is the competition's)


def _question(found: FoundResults, asked: tuple[Any, ...]) -> str | None:
    # (A seeding from another results directory depends on that one too: read every time.)
    config = found.config
    return question_of(found.directory, asked) if config is None or config.seed_from is None else None


def _in_schedule_order(records: list[GameRecord]) -> list[GameRecord]:
    return sorted((r for r in records if r.forfeit_by is not None), key=schedule_key)


def _log_stat(directory: Path) -> tuple[int, int] | None:
    """The log's length and last change, taken before it is read (a read
    of the same log asked again is the same read)."""
    try:
        info = os.stat(directory / GAMES_FILE, follow_symlinks=False)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


@dataclass
class KeptStandings:
    """The standings of a log as far as it was read, and what carries them on."""

    #: Where the read ended, and the log's length and last change before it was read.
    place: LogPlace
    stat: tuple[int, int] | None
    #: The directory's game (records of another are skipped with a warning).
    game: str | None
    competition: Competition
    #: The most rounds the schedule can have, and the most its records name so far (the schedule's).
    known_rounds: int
    rounds: int
    #: What :meth:`StandingsFold.standings` is asked with.
    settings: dict[str, Any]
    #: The read's warnings: those of ``tournament.json`` and the tournament
    #: file, the lines skipped, the games the schedule does not hold.
    head: list[str]
    lines: list[str]
    foreign: list[str]
    #: The bots of the games of bots no longer in the tournament, and how many such games.
    left_out: Counter[str]
    left_out_games: int
    #: The ids of the games read and not folded (left out, or not the schedule's): a second record of one is skipped.
    unfolded: set[str]
    #: The games lost by forfeit, with their place in the schedule.
    forfeits: list[tuple[Any, GameRecord]]
    #: The fold, pickled before its last games were rated.
    fold: bytes
    #: The standings as read to :attr:`place`.
    standings: Standings | None = None
    #: By pair (its names in order), the rounds it has a game folded in, as the bits of a number (round r: 1 << r):
    #: what a grade sheet's "pairings not played yet" counts, without the games.
    played_rounds: dict[tuple[str, str], int] = field(default_factory=dict)
    #: The warning of the torn line after :attr:`place` when it was read (said again while the log is unchanged).
    torn: str | None = None
    #: Whether :meth:`carry_on` read on since it was kept.
    changed: bool = field(default=False, compare=False)

    @classmethod
    def first(cls, found: FoundResults, results: ReadResults, head: list[str], loaded: LoadedResults,
              stat: tuple[int, int] | None) -> KeptStandings | None:
        """The standings of a whole read, kept; None for a read that could not be carried on."""
        competition, meta = results.competition, results.meta
        if competition is None or meta is None or loaded.place is None or not _carried(competition, meta, results.rounds):
            return None
        ordered = sorted(results.records, key=schedule_key)
        keys = [ScheduledGames.order(r.game_id) for r in ordered]
        if None in keys or any(a >= b for a, b in zip(keys, keys[1:])):  # (type: the ids of a schedule by names)
            return None
        fold = StandingsFold(results.names, results.rules, history=False)
        for record, key in zip(ordered, keys):
            fold.add(record, key)
        known = min(max(competition.rounds, meta.competition.rounds), MAX_ROUND)
        given = len(head) + len(loaded.warnings)
        foreign = results.warnings[given:len(results.warnings) - bool(results.left_out)]
        kept = cls(
            place=loaded.place, stat=stat, game=meta.competition.game, competition=competition, known_rounds=known,
            rounds=max((r.round for r in loaded.records if r.round <= known), default=1),
            settings=results.fold_settings(), head=head, lines=loaded.line_warnings(found.directory), foreign=foreign,
            left_out=Counter(name for r in results.left_out for name in r.players.values()),
            left_out_games=len(results.left_out),
            unfolded={r.game_id for r in loaded.records} - {r.game_id for r in results.records},
            forfeits=[(key, r) for r, key in zip(ordered, keys) if r.forfeit_by is not None], fold=b"", torn=loaded.torn)
        for record, key in zip(ordered, keys):
            kept._played(record, key)
        kept._settle(fold)
        return kept

    @classmethod
    def empty(cls, found: FoundResults) -> KeptStandings | None:
        """The standings of no game of ``found``, to be carried on over
        every game of its log as a stream (a reader of a million games need
        not hold them), where the directory's ``tournament.json`` says all
        that takes (see :func:`_carried`); else None."""
        try:
            meta = read_meta(found.directory)
        except (MetaError, StoreError):  # (the whole read says why, in its warnings or its error)
            return None
        config = found.config
        if meta is None or meta.game_ids(True) != "names" or meta.unsaid.suite is not None:
            return None
        competition = meta.rebuilt() if config is None else config.competition
        if competition is None:
            return None
        # The rules a whole read works out (results_of): the tournament file's, else the directory's.
        competition = replace(competition, game_ids="names", rules=rules_of(competition, meta))
        if not _carried(competition, meta, None):
            return None
        settings = ReadResults(found.directory, [], meta, competition, list(competition.names),
                               competition.rules).fold_settings()
        fold = StandingsFold(competition.names, competition.rules, history=False)
        return cls(place=LogPlace.start(), stat=None, game=meta.competition.game, competition=competition,
                   known_rounds=min(max(competition.rounds, meta.competition.rounds), MAX_ROUND), rounds=1, settings=settings,
                   head=[], lines=[], foreign=[], left_out=Counter(), left_out_games=0, unfolded=set(), forfeits=[],
                   fold=pickle.dumps(fold, protocol=pickle.HIGHEST_PROTOCOL))

    def _settle(self, fold: StandingsFold) -> None:
        """Keep ``fold`` (its last games unrated), then work out its standings."""
        fold.settle(UNRATED_TAIL)
        self.fold = pickle.dumps(fold, protocol=pickle.HIGHEST_PROTOCOL)
        self.standings = fold.standings(**self.settings)

    def answer(self, directory: Path, loaded: LoadedResults | None = None) -> StandingsRead:
        """The standings read, with the warnings of the read ``loaded`` (the
        index rebuilt, a torn last line) where a read has them, in the
        places a whole read gives them."""
        rebuilt = loaded.rebuilt(directory) if loaded is not None else []
        torn = [self.torn] if self.torn is not None else []
        left_out = left_out_line(self.left_out_games, self.left_out, frozenset(self.competition.names))
        assert self.standings is not None
        return StandingsRead([*self.head, *rebuilt, *self.lines, *torn, *self.foreign, *([left_out] if left_out else [])],
                             self.standings, [record for _, record in self.forfeits])

    def carry_on(self, directory: Path) -> StandingsRead | None:
        """The standings of the log as it is now, carried on from those
        kept over the lines added since, read as a stream (which this then
        keeps); None when they cannot be (see the module's doc): the games
        are read again, whole."""
        stat = _log_stat(directory)
        if stat is not None and stat == self.stat and self._still_read(directory):
            return self.answer(directory)
        fold: StandingsFold = pickle.loads(self.fold)
        seen, games = _Seen(self.unfolded, fold.unrated()), ScheduledGames(self.competition)
        try:
            loaded = ResultsStore(directory).load(self.game, since=self.place, seen=seen,
                                                  into=lambda record: self._fold_in(record, fold, games))
        except (LogRewritten, ValueError):  # (a game before those rated; a record no fold rates says why read whole)
            return None
        if loaded.place is None:
            return None
        self.forfeits.sort(key=lambda kept: kept[0])
        self.lines += loaded.line_warnings(directory)
        self.place, self.stat, self.torn, self.changed = loaded.place, stat, loaded.torn, True
        self._settle(fold)
        return self.answer(directory, loaded)

    def _played(self, record: GameRecord, key: tuple[int, bytes, int]) -> None:
        pair = _pair_of(*record.players.values())
        self.played_rounds[pair] = self.played_rounds.get(pair, 0) | 1 << key[0]

    def unplayed(self) -> dict[str, int]:
        """Each bot's pairings of the rounds scheduled so far with no game folded."""
        competition, rounds = self.competition, self.rounds
        every = (1 << (rounds + 1)) - 2  # (rounds 1 to rounds)
        out: dict[str, int] = {}
        for a, b in pairings(competition.names, competition.format, competition.rules.reference):
            missing = rounds - (self.played_rounds.get(_pair_of(a, b), 0) & every).bit_count()
            out[a], out[b] = out.get(a, 0) + missing, out.get(b, 0) + missing
        return out

    @property
    def games(self) -> int:
        """The games of the log read: those folded and those of bots no longer in the tournament."""
        assert self.standings is not None
        return self.standings.total_games + self.left_out_games

    def latest(self, directory: Path, count: int) -> LatestResults:
        """These standings, with the games of the last ``count`` lines read
        (from the log's end by offset, not every record) as a whole read
        sorts them: those the schedule holds (the first record of each),
        and those of bots no longer in the tournament; :class:`LogRewritten`
        when the log no longer starts as it was read."""
        assert self.standings is not None
        names = frozenset(self.competition.names)
        games, records, left_out, seen = ScheduledGames(self.competition), [], [], set()
        for record in ResultsStore(directory).last_records(self.place, count, self.game):
            if record.game_id in seen:
                continue
            seen.add(record.game_id)
            found = games.match(record, self.rounds)
            if found is not None and found[0]:
                records.append(record)
            elif found is None and not set(record.players.values()) <= names:
                left_out.append(record)
        meta = read_meta(directory)
        return LatestResults(directory, records, meta, self.competition, list(self.competition.names),
                             self.competition.rules, left_out=left_out, kept=self.standings,
                             kept_unplayed=self.unplayed())

    def _fold_in(self, record: GameRecord, fold: StandingsFold, games: ScheduledGames) -> None:
        """Fold ``record`` in if the schedule holds its game, else count it
        as a whole read would; ``ValueError`` when that cannot be told here."""
        if self.rounds < record.round <= self.known_rounds:
            if self.unfolded:  # (a game not held before may be one of the rounds the schedule now holds)
                raise ValueError("the schedule grew past a game it did not hold")
            self.rounds = record.round
        found = games.match(record, self.rounds)
        if found is not None and found[0]:
            key = found[1]
            fold.add(record, key)
            self._played(record, key)
            if record.forfeit_by is not None:
                self.forfeits.append((key, record))
            if len(fold.unrated()) >= 2 * UNRATED_TAIL:
                fold.settle(UNRATED_TAIL)
            return
        if found is not None and fold.last_key is not None and found[1] <= fold.last_key:
            raise ValueError("another record of a game rated already")  # (the first one read counts)
        self.unfolded.add(record.game_id)
        if found is None and not set(record.players.values()) <= frozenset(self.competition.names):
            self.left_out.update(record.players.values())
            self.left_out_games += 1
        else:
            self.foreign.append(f"ignored game {record.game_id!r} ({' vs '.join(record.players.values())}): "
                                "this tournament does not schedule it")

    def _still_read(self, directory: Path) -> bool:
        try:
            fd = safe_files.open_file(directory, GAMES_FILE, os.O_RDONLY)
        except OSError:
            return False
        try:
            return self.place.still_in(fd)
        finally:
            os.close(fd)


@dataclass
class LatestResults(ReadResults):
    """Results of which only the latest games are held (:attr:`records`,
    :attr:`left_out`), ranked by the standings of them all (``kept``,
    carried on: :class:`KeptStandings`): what the live view reads of a
    league of a million games, whose page lists the latest."""

    kept: Standings | None = None
    kept_unplayed: dict[str, int] = field(default_factory=dict)

    def unplayed(self) -> dict[str, int]:
        return self.kept_unplayed

    def standings(self, *, at_limit: bool = False) -> Standings:
        # (at_limit only tells a match's SPRT, and no kept standings are a match's)
        assert self.kept is not None
        return self.kept

    def played(self) -> int:
        assert self.kept is not None
        return self.kept.total_games


def _carried(competition: Competition, meta: TournamentMeta, rounds: Rounds | None) -> bool:
    """Whether standings of these results can be carried on: a schedule of
    a round-robin or reference tournament, whole and by names, that finds
    a game from its id alone, of more than two bots (a match's and a
    gauntlet's figures are made of game pairs, from the records)."""
    return (not competition.paired_by_results and competition.format in ("round-robin", "reference")
            and competition.game_ids == "names" and meta.games is None and rounds is None and len(competition.names) > 2)


def _pair_of(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


class _Seen:
    """The games a stream read that a second record of is skipped as the
    whole read skips it: those not folded, and those folded and not rated
    (one rated already cannot be told from a game come late: read whole)."""

    def __init__(self, unfolded: set[str], unrated: set[str]) -> None:
        self._unfolded, self._unrated = unfolded, unrated

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._unfolded or game_id in self._unrated
