"""What a results directory holds, as every reading command sees it.

:func:`results_of` is the one path from a ``tournament.json`` and the
records of ``games.jsonl`` to what ``arena standings``, ``report``, ``show``,
the live report and ``seed_from`` read: the schedule rebuilt from the
competition, the records it holds (with the schedule's index, pair and
round), those of bots no longer in the tournament (out of the ranking, on
show), and a warning for every other one.  Given the tournament file's
competition instead of the directory's, it reads the same games the same
way, so every command gives one answer whichever the user points at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.formats.competition import Competition, Rules
from arena.formats.progression import schedule_so_far
from arena.formats.schedule import FixedSchedule, make_schedule, pairings, schedule_size
from arena.formats.rounds import Rounds, read_rounds
from arena.formats.stages import Pairing, Stage
from arena.game.records import GameRecord, GameSpec, MAX_ROUND
from arena.results.meta import TournamentMeta
from arena.results.sprt import SprtConfig
from arena.results.standings import Standings, compute_standings
from arena.results.store import GAMES_FILE

__all__ = ["WHOLE_SCHEDULE", "ReadResults", "SortedRecords", "competition_as_played", "left_out_line", "results_of", "rules_of", "same_game",
           "sort_records"]

#: The most games of a schedule fixed in advance that a reader makes whole
#: when the records do not hold as many.  A round-robin of n bots has n²
#: games, and a tournament.json of thousands of bots is a few hundred
#: kilobytes: past this, a reader makes the games of the pairs the records
#: name, and reads in time and memory what the file and the records hold.
WHOLE_SCHEDULE = 200_000


@dataclass
class SortedRecords:
    #: The tournament's bots.
    current: frozenset[str]
    #: Games the schedule holds, with the schedule's index and pair (the fold order).
    kept: list[GameRecord] = field(default_factory=list)
    #: Games of bots that are no longer in the tournament.
    left_out: list[GameRecord] = field(default_factory=list)
    #: Games the schedule does not hold (another tournament's, or edited).
    foreign: list[GameRecord] = field(default_factory=list)

    def left_out_line(self) -> str | None:
        """One line for the games of bots no longer in the tournament, or None."""
        names = Counter(name for record in self.left_out for name in record.players.values())
        return left_out_line(len(self.left_out), names, self.current)


def left_out_line(games: int, names: Counter[str], current: Collection[str]) -> str | None:
    """One line for ``games`` games of bots no longer in the tournament
    (whose bots played ``names`` of them; ``current`` are the tournament's), or None."""
    if not games:
        return None
    gone = sorted(names, key=lambda n: (-names[n], n))
    return (f"{games} games of bots no longer in the tournament are left out of the ranking "
            f"(kept in {GAMES_FILE}): " + ", ".join(f"{n} ({names[n]})" for n in gone if n not in current))


def sort_records(records: Iterable[GameRecord], schedule: Sequence[GameSpec], names: Collection[str]) -> SortedRecords:
    """Sort ``records`` against ``schedule`` (whose bots are ``names``).  A
    kept record takes the schedule's ``index``, ``pair`` and ``round``:
    ratings fold in the order of the schedule as it is now, whatever it was
    when the game was played, so the same results always give the same
    table (and a round edited into a record is not believed).  A
    :class:`FixedSchedule` places each record from its id, its specs never made."""
    place = schedule.place if isinstance(schedule, FixedSchedule) else _placed_by_id(schedule)
    out = SortedRecords(frozenset(names))
    for record in records:
        found = place(record)
        if found is not None and found[0]:
            _, index, pair, round_ = found
            if record.index != index or record.pair != pair or record.round != round_:
                record = replace(record, index=index, pair=pair, round=round_)
            out.kept.append(record)
        elif found is None and not set(record.players.values()) <= out.current:
            out.left_out.append(record)
        else:  # an id the schedule gives to another game counts as neither: it would be played twice
            out.foreign.append(record)
    return out


def _placed_by_id(schedule: Sequence[GameSpec]) -> Callable[[GameRecord], tuple[bool, int, int, int] | None]:
    """:meth:`FixedSchedule.place` of any schedule, through its specs by id."""
    by_id = {spec.game_id: spec for spec in schedule}

    def place(record: GameRecord) -> tuple[bool, int, int, int] | None:
        spec = by_id.get(record.game_id)
        return None if spec is None else (same_game(record, spec), spec.index, spec.pair, spec.round)

    return place


def same_game(record: GameRecord, spec: GameSpec) -> bool:
    """Whether ``record`` is of the game ``spec`` (its id named it): the same seed, opening and seats."""
    return record.is_game(spec.seed, spec.opening, spec.opening_moves, spec.players)


@dataclass
class ReadResults:
    """The results a user pointed at, as every reading command sees them."""

    directory: Path
    #: The games the tournament schedules, with the schedule's index and pair.
    records: list[GameRecord]
    #: The directory's ``tournament.json``; None when there is none (or none readable).
    meta: TournamentMeta | None
    #: What rebuilt the schedule; None when nothing could (every readable game is then ranked).
    competition: Competition | None
    #: The tournament's bots, in the file's order.
    names: list[str]
    #: What ranks them: the competition's rules, also where no schedule could
    #: be rebuilt (the organiser's disqualifications hold over every readable game).
    rules: Rules = Rules()
    warnings: list[str] = field(default_factory=list)
    #: Games of bots no longer in the tournament: out of the ranking, still shown.
    left_out: list[GameRecord] = field(default_factory=list)
    #: A Swiss, knockout or staged tournament's rounds as far as they are played.
    rounds: Rounds | None = None
    #: The games scheduled so far (a result-dependent format's: those of the
    #: rounds paired), played or not; empty when nothing rebuilt the schedule.
    #: Past :data:`WHOLE_SCHEDULE` games, only those of the pairs the records
    #: name, each ``index`` its place among them (see :attr:`scheduled`).
    schedule: list[GameSpec] = field(default_factory=list)
    #: How many games the whole schedule has; None: ``schedule`` is whole.
    scheduled: int | None = None

    def whole_schedule(self, wanted_by: str) -> list[GameSpec]:
        """:attr:`schedule`, whole; ``ValueError`` (one line naming
        ``wanted_by``, what needs it) when only a part of it was made."""
        if self.scheduled is None:
            return self.schedule
        raise ValueError(f"{wanted_by}: the schedule of {self.directory} has {self.scheduled:,} games, more than "
                         f"the {WHOLE_SCHEDULE:,} a reader makes beyond the games played")

    @property
    def challenger(self) -> str | None:
        """A gauntlet's first bot, which meets each other bot."""
        return self.competition.challenger if self.competition is not None else None

    def standings(self, *, at_limit: bool = False) -> Standings:
        """The standings of these results, as every command shows them."""
        return compute_standings(self.records, self.names, self.rules, at_limit=at_limit, rounds=self.rounds,
                                 challenger=self.challenger, **self.fold_settings())

    def played(self) -> int:
        """How many games of the schedule the results hold."""
        return len(self.records)

    def unplayed(self) -> dict[str, int] | None:
        """Each bot's pairings scheduled so far with no game recorded, where
        these results hold fewer games than were played (a grade sheet's
        count); None: the sheets count them from :attr:`schedule` and :attr:`records`."""
        return None

    def fold_settings(self) -> dict[str, Any]:
        """What the standings of these results are asked with besides
        their games' order and :attr:`rules` (:meth:`StandingsFold.standings` takes them)."""
        return dict(versions=self.versions, remote=self.remote)

    def round_robin_rounds(self) -> Rounds | None:
        """A round-robin tournament's rounds read as a round-robin stage's,
        for ``--table rounds``: each round, every pair on the whole suite;
        None for any other format, and for game ids by position (which name
        no pair)."""
        competition = self.competition
        if (competition is None or competition.format != "round-robin" or competition.paired_by_results
                or competition.game_ids == "positions"):
            return None
        pairs = tuple(pairings(competition.names, "round-robin"))
        total = max(competition.rounds, self.meta.competition.rounds if self.meta is not None else 1)
        played = [Pairing(round_, 1, pairs) for round_ in range(1, competition.rounds + 1)]
        return read_rounds([Stage("round-robin", rounds=total)], competition.names, played, self.records,
                           len(competition.suite()))

    @property
    def remote(self) -> tuple[str, ...]:
        """The bots that played from another machine, as ``tournament.json`` says."""
        return tuple(bot.name for bot in self.meta.bots if bot.remote) if self.meta is not None else ()

    @property
    def versions(self) -> dict[str, str]:
        """Each bot's version, as the run that wrote the directory last found it."""
        return self.meta.versions if self.meta is not None else {}


def rules_of(competition: Competition | None, meta: TournamentMeta | None, sprt: SprtConfig | None = None) -> Rules:
    """The rules results are ranked by: ``competition``'s, else the
    directory's; and the SPRT of a run in progress (``sprt``), else theirs,
    else the directory's (a tournament file without one reads its test)."""
    rules = competition.rules if competition is not None else meta.competition.rules if meta is not None else Rules()
    return replace(rules, sprt=sprt or rules.sprt or (meta.competition.rules.sprt if meta is not None else None))


def competition_as_played(competition: Competition, meta: TournamentMeta | None, records: Sequence[GameRecord],
                          rules: Rules) -> Competition:
    """``competition`` (ranked by ``rules``) as :func:`results_of` reads
    ``records`` with it: its games named as they were played, its schedule
    covering the rounds played (a league) or its stages as played."""
    competition = replace(competition, rules=rules)
    if meta is not None:  # the games are named as they were when played
        competition = replace(competition, game_ids=meta.game_ids(bool(records)))
    if not competition.paired_by_results:
        # The schedule covers the rounds played, as far as the tournament goes:
        # the file's rounds, or more when tournament.json says more were played
        # (the file was cut short since).  A record's own round is never believed
        # beyond that, so an edited one cannot make a huge schedule; its game is
        # then one the schedule does not hold, ignored with a warning.
        known = min(max(competition.rounds, meta.competition.rounds if meta is not None else 1), MAX_ROUND)
        competition = replace(competition, rounds=max((r.round for r in records if r.round <= known), default=1))
    elif meta is not None and meta.competition.stages:
        # The stages as they were played: a file given more Swiss rounds since
        # reads as the directory does until a run plays them.
        competition = replace(competition, stages=meta.competition.stages)
    return competition


def results_of(
    directory: Path, meta: TournamentMeta | None, records: Sequence[GameRecord], warnings: Sequence[str] = (), *,
    competition: Competition | None = None, sprt: SprtConfig | None = None,
    seeding: Sequence[str] | None = None, pairings: Sequence[Pairing] | None = None,
) -> ReadResults:
    """The results of ``records`` under ``meta`` (see the module's doc).
    ``competition`` (with its rules) is the tournament file's when the user
    named it (else the directory's); ``sprt``, that of a run in progress;
    the directory's SPRT where neither gives one.  ``seeding`` and
    ``pairings`` are those of a run in progress (else the directory's)."""
    warnings = list(warnings)
    if competition is None and meta is not None:
        competition = meta.rebuilt(records)
    rules = rules_of(competition, meta, sprt)
    if competition is None:  # no tournament.json, or one that does not say enough: every readable game counts
        names = meta.names if meta is not None else list(dict.fromkeys(n for r in records for n in r.players.values()))
        return ReadResults(directory, list(records), meta, None, names, rules, warnings)
    competition = competition_as_played(competition, meta, records, rules)
    if seeding is None:
        stored = list(meta.seeding) if meta is not None else []
        seeded = set(stored)
        seeding = stored + [name for name in competition.names if name not in seeded]
    if pairings is None:
        pairings = meta.pairings if meta is not None else ()
    whole = None if competition.paired_by_results else schedule_size(competition)
    try:
        if whole is not None and whole > max(WHOLE_SCHEDULE, len(records)):
            met = {(min(a, b), max(a, b)) for r in records for a, b in [tuple(r.players.values())]}
            schedule, rounds = make_schedule(competition, among=met), None
        else:
            whole = None
            schedule, rounds = schedule_so_far(competition, seeding, pairings, records)
    except (ValueError, KeyError) as exc:
        # e.g. a 0.1 directory (ids by position) read with a file of a later format
        warnings.append(f"cannot rebuild the schedule of {directory} ({exc}); every readable game is ranked")
        return ReadResults(directory, list(records), meta, None, list(competition.names), rules,
                           warnings)
    if meta is not None and meta.games is not None and whole is None:
        schedule = schedule[: meta.games]
    sorted_ = sort_records(records, schedule, competition.names)
    warnings += [f"ignored game {r.game_id!r} ({' vs '.join(r.players.values())}): this tournament does not schedule it"
                 for r in sorted_.foreign]
    if (line := sorted_.left_out_line()) is not None:
        warnings.append(line)
    return ReadResults(directory, sorted_.kept, meta, competition, list(competition.names), rules, warnings,
                       sorted_.left_out, rounds, list(schedule), whole)
