"""A tournament's results directory as the run layer sees it: what a run
does with the results already there (:class:`RunPlan`), and which results a
command pointed at a directory, its ``games.jsonl`` or a tournament file
means (:func:`read_results`).

A run is an explicit sequence: open the store (lock it, read the records)
→ decide the plan (:meth:`RunPlan.decide`, a pure function of the config,
the directory's ``tournament.json`` and its records) → archive the records
played again → write ``tournament.json`` → play.  The plan sorts the games
there: those this tournament schedules (kept), those of bots no longer in
it (left on disk, out of the ranking), those played by a version of a bot
other than the one that runs now (the run stops and asks: ``--replay BOT``
or ``--keep BOT``), and anything else, which belongs to another tournament
(refused).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.bot.spec import BotConfig
from arena.bot.submission import SubmissionProblem
from arena.base.text import safe
from arena.bot.version import Fingerprint, describe_change, fingerprint
from arena.formats.competition import Competition
from arena.formats.pairing import PairingError
from arena.formats.progression import (FixedGames, ProgressFold, fixed_games, next_pairing, rounds_schedule,
                                      schedule_so_far)
from arena.formats.rounds import Rounds
from arena.formats.schedule import FixedSchedule
from arena.formats.stages import Pairing
from arena.game.records import GameRecord, GameSpec
from arena.results.meta import META_FILE, ForgedPairing, MetaBot, MetaError, TournamentMeta, read_meta, write_meta
from arena.results.reading import ReadResults, SortedRecords, results_of, sort_records
from arena.results.sprt import SprtConfig
from arena.results.store import GAMES_FILE, LoadedResults, LogRewritten, ResultsConflict, ResultsStore, StoreError
from arena.run.answers import question_of, recall, remember
from arena.run.config import ConfigError, TournamentConfig, load_config
from arena.run.resume_read import KeptResume

__all__ = ["FoundResults", "RunPlan", "VersionChanged", "find_results", "open_results", "read_loaded", "read_results",
           "ranking_order", "run_meta", "schedule_conflict", "seeding_of", "settings_conflict", "tournament_meta"]

_ADVICE = "use another output directory, or remove that one to start over"


class VersionChanged(ResultsConflict):
    """A bot runs in another version than the one that played its recorded games."""


def tournament_meta(
    config: TournamentConfig, fingerprints: dict[str, Fingerprint] | None = None,
    earlier_versions: dict[str, list[str]] | None = None, games: int | None = None,
    departed: Sequence[MetaBot] = (), seeding: Sequence[str] = (), pairings: Sequence[Pairing] = (),
) -> TournamentMeta:
    """What ``tournament.json`` says of a run of ``config``.  ``earlier_versions``
    lists, per bot, the versions whose games were kept (``--keep``);
    ``games`` is the limit of a match (``arena match --games``); a Swiss,
    knockout or staged tournament adds the first stage's ``seeding`` and
    every round's pairing so far."""
    fingerprints = fingerprints or {}
    earlier_versions = earlier_versions or {}
    bots = tuple(
        MetaBot(bot.name, bot.options, fingerprints[bot.name].version if bot.name in fingerprints else None,
                fingerprints[bot.name].to_json() if bot.name in fingerprints else None,
                tuple(sorted(earlier_versions.get(bot.name) or ())), config.time_odds.get(bot.name),
                remote=bot.remote is not None)
        for bot in config.bots
    )
    return TournamentMeta(
        name=config.name, description=config.description, bots=bots, competition=config.competition,
        time_control=config.time_control, games=games, departed=tuple(departed), seeding=tuple(seeding),
        pairings=tuple(pairings),
    )


class RunPlan:
    """What a run of ``config`` does with the results already in its directory.

    :meth:`decide`, given the directory's ``tournament.json`` and records,
    fixes the game ids' scheme, the schedule, the records kept and left out,
    and which records are played again (:attr:`replaced`: those of the bots
    in ``replay``, and the forfeits for one of ``replay_forfeits`` unless the
    SPRT is decided).  It raises :class:`ResultsConflict` (or
    :class:`VersionChanged`) and writes nothing; the run then archives the
    records played again and writes :attr:`meta`, in that order, so the file
    never names a version that no record was played or kept for.  ``games``
    cuts the schedule (a match's limit).  Bots that left keep their entries
    (under ``departed``), so a ``--keep`` holds when they come back."""

    def __init__(
        self, config: TournamentConfig, directory: Path, *, replay: Collection[str] = (), keep: Collection[str] = (),
        replay_forfeits: Collection[str] = (), games: int | None = None, replay_games: Collection[str] = (),
    ) -> None:
        self.config, self.directory, self.games = config, directory, games
        self.replay_forfeits = set(replay_forfeits)
        #: Disputed games to play again under their ids (``--replay-game``).
        self.replay_games = list(dict.fromkeys(replay_games))
        self.replay, self.keep = set(replay), set(keep)
        names = {bot.name for bot in config.bots}
        for flag, asked in (("--replay", self.replay), ("--keep", self.keep)):
            unknown = sorted(asked - names)
            if unknown:
                raise ResultsConflict(f"{flag}: no bot named {unknown[0]!r} in this tournament; bots: {', '.join(sorted(names))}")
        self.fingerprints: dict[str, Fingerprint] = {}
        bots = []
        for bot in config.bots:
            bot, self.fingerprints[bot.name] = _fingerprinted(bot, config)
            bots.append(bot)
        self.config = config = replace(config, bots=tuple(bots))
        self.competition: Competition = config.competition
        self.schedule: Sequence[GameSpec] = []
        self.records = SortedRecords(frozenset())
        #: Records played again, and why: kept ones of the bots ``--replay``
        #: names (theirs against bots that left included, played again when
        #: those come back), and unplayed forfeits.
        self.replaced: dict[str, str] = {}
        #: The ``tournament.json`` written for the run.
        self.meta: TournamentMeta | None = None
        #: A Swiss, knockout or staged tournament: the first stage's seeding,
        #: the rounds paired so far and what they hold.
        self.seeding: list[str] = []
        self.pairings: list[Pairing] = []
        self.rounds: Rounds | None = None
        # The games of the rounds no result changes, kept from one advance to the next.
        self._fixed: FixedGames | None = None
        # The rounds of the records the run has given so far (advance, progress):
        # the list they are in, how many of them are folded, and the last of those.
        self._fold: ProgressFold | None = None
        self._folded: tuple[Sequence[GameRecord], int, GameRecord | None] = ((), 0, None)
        # What a resume needs of the games read (to keep in the index), and whether the plan was carried on from it.
        self._resume: KeptResume | None = None
        self._carried = False

    def open(self, store: ResultsStore) -> LoadedResults:
        """Open ``store`` for the run (:meth:`ResultsStore.open_for_run`) and
        :meth:`decide` it: carried on from what the index keeps of a resume
        over the games added since, or, where it keeps nothing, from every
        game folded in from what the index holds of it, few records made
        (its records, not read, are then empty: :attr:`kept` reads them when
        looked at; that is kept for the next resume: :meth:`remember`); a
        run that needs the records before its first game reads them all.
        See :mod:`arena.run.resume_read`."""
        try:  # (before the lock: an unreadable file is said after it, as a read of every record says it)
            meta = read_meta(store.directory)
        except (MetaError, StoreError):
            meta = None
        game, question = self.config.competition.game, self._question(meta.game_ids(True) if meta is not None else None)
        kept = recall(store.directory, question) if question is not None else None
        first = question is not None and not isinstance(kept, KeptResume)
        if first:  # (nothing kept: every game folded in from the start, few records made)
            kept = KeptResume.anew(replace(self.config.competition, game_ids="names"))
        if isinstance(kept, KeptResume):
            try:
                loaded = store.open_for_run(game, since=kept.place, seen=kept, into=kept.add,
                                            take=kept.take if first else None)
            except LogRewritten:
                kept, loaded = None, store.load(game)
        else:
            kept, loaded = None, store.open_for_run(game)
        meta = run_meta(store.directory)
        if kept is not None and question_of(store.directory, self._asked()) == question:
            loaded = kept.read_on(loaded, store.directory)
            self._decide(meta, kept.count + len(kept.left_out) + len(kept.foreign), kept=kept)
            return loaded
        if kept is not None:  # (tournament.json changed while it was read: read whole)
            loaded = store.load(game)
        self.decide(meta, loaded.records)
        if self._question(self.config.competition.game_ids) is not None and loaded.place is not None:
            self._resume = KeptResume.of(store.directory, self.competition, self.records, loaded)
        return loaded

    def remember(self) -> None:
        """Keep in the index what the next resume needs of the games read
        (once ``tournament.json`` is written: it is part of the question),
        unless the run plays some of them again (it rewrites the log)."""
        question = self._question(self.config.competition.game_ids) if self._resume is not None and not self.replaced else None
        if question is not None:
            remember(self.directory, question, self._resume)

    def _asked(self) -> tuple[Any, ...]:
        return ("resume", replace(self.config.competition, game_ids="names"))

    def _question(self, game_ids: str | None) -> str | None:
        """The question a resume's kept games answer (see :func:`question_of`),
        its games named by ``game_ids``; None for a run that needs every
        record before its first game."""
        config = self.config
        needs_records = (game_ids != "names" or config.competition.paired_by_results
                         or self.games is not None or self.replay or self.replay_games
                         or config.competition.rules.sprt is not None or config.report)
        return None if needs_records else question_of(self.directory, self._asked())

    def decide(self, meta: TournamentMeta | None, records: list[GameRecord]) -> None:
        """Decide the run from the directory's ``meta`` and ``records``."""
        self._decide(meta, len(records), records=records)

    def _decide(self, meta: TournamentMeta | None, read: int, *, records: Sequence[GameRecord] = (),
                kept: KeptResume | None = None) -> None:
        """:meth:`decide`, from the ``records`` read, or from what a resume
        ``kept`` of them (``read``: how many games were read either way)."""
        config = self.config
        if meta is not None:
            problem = settings_conflict(meta, tournament_meta(config), played=bool(read), asker=self._asker())
            if problem is not None:
                raise ResultsConflict(f"the results in {self.directory} {problem}; {_ADVICE}")
        game_ids = meta.game_ids(bool(read)) if meta is not None else "names"
        self.config = config = replace(config, competition=replace(config.competition, game_ids=game_ids))
        self.competition = competition = config.competition
        self._fold = None
        if competition.paired_by_results:
            self.seeding = seeding_of(config, meta)
            self.pairings = list(meta.pairings) if meta is not None else []
        try:
            schedule: Sequence[GameSpec]
            if competition.paired_by_results or competition.game_ids != "names":
                schedule, self.rounds = schedule_so_far(competition, self.seeding, self.pairings, records, self._versions)
            else:  # (a league's schedule, made only as far as its rounds not complete: see pending)
                schedule, self.rounds = FixedSchedule(competition, self._versions), None
        except (KeyError, ValueError) as exc:  # a hand-edited pairing naming a bot the seeding does not hold
            raise ResultsConflict(f"{self.directory / META_FILE}: its pairings do not fit the tournament ({exc}); "
                                  f"{_ADVICE}") from None
        if kept is not None:
            self.records = SortedRecords(frozenset(competition.names), kept.records(self.directory),  # type: ignore[arg-type]
                                         list(kept.left_out), list(kept.foreign))
            self._resume, self._carried = kept, True
        else:
            self.records = sort_records(records, schedule, competition.names)
        if self.records.foreign:
            problem = schedule_conflict(self.records.foreign[0], schedule, self._asker())
            raise ResultsConflict(f"the results in {self.directory} {problem}; {_ADVICE}")
        if self.games is not None:
            # A smaller limit than a run before: the games played count all the same.
            self.games = max([self.games, *(r.index + 1 for r in self.records.kept)])
        self.schedule = schedule if self.games is None else schedule[: self.games]
        earlier = self._check_versions(meta)
        for record in (*self.records.kept, *self.records.left_out) if self.replay else ():
            replayed = sorted(self.replay & set(record.players.values()))
            if replayed:
                self.replaced[record.game_id] = f"--replay {replayed[0]}"
        self.records.left_out = [r for r in self.records.left_out if r.game_id not in self.replaced]
        for game_id in self.replay_games:
            self._replay_game(game_id)
        departed = [entry for entry in (*(meta.bots if meta else ()), *(meta.departed if meta else ()))
                    if entry.name not in self.fingerprints]
        self.meta = tournament_meta(config, self.fingerprints, earlier, self.games, departed, self.seeding, self.pairings)

    def _replay_game(self, game_id: str) -> None:
        """Mark the kept game ``game_id`` to be played again under its id,
        or refuse in one line: a game not in the directory, one of a bot
        that left, or a knockout game whose match decided a round already
        paired (its winner may change: the bracket after it would be wrong)."""
        where = f"--replay-game {game_id}"
        record = next((r for r in self.records.kept if r.game_id == game_id), None)
        if record is None:
            gone = any(r.game_id == game_id for r in self.records.left_out)
            raise ResultsConflict(f"{where}: {'a bot of that game is no longer in the tournament' if gone else 'no such game'} "
                                  f"in {self.directory}; the games are named as in arena standings --table rounds, "
                                  f"the report or {GAMES_FILE}")
        if self.rounds is not None:
            for stage in self.rounds.stages:
                later = [p for p in self.pairings if p.stage == stage.number and p.round > record.round]
                in_knockout = stage.stage.format == "knockout" and any(p.round == record.round for p in stage.pairings)
                if in_knockout and later:
                    raise ResultsConflict(
                        f"{where}: its knockout match decided who plays round {later[0].round}, which is paired "
                        f"already; a new result could change that match's winner, so the bracket after it would "
                        f"be wrong: the game stands")
        self.replaced[game_id] = "--replay-game"

    def replay_forfeits_unless(self, decided: bool) -> None:
        """Add the unplayed forfeits to :attr:`replaced`, unless the SPRT is
        ``decided`` (a decided test plays nothing more: forfeits stand).  A
        bot that could not start is not tried again while its version and
        its opponent's are those of the record (a team that did not build its
        bot would otherwise add its games to ``replaced.jsonl`` on every
        resume): a new version is, and ``--replay BOT`` asks for it."""
        if decided:
            return
        out_of_play = self.competition.out_of_play
        for record in self._resume.forfeits if self._carried and self._resume is not None else self.records.kept:
            if record.forfeit_by is not None and record.players[record.forfeit_by] in out_of_play:
                continue  # a withdrawn or disqualified bot's forfeits stand
            if record.reason == "startup_failure" and self._same_versions(record):
                continue
            if record.forfeit_by is not None and record.reason in self.replay_forfeits and record.game_id not in self.replaced:
                self.replaced[record.game_id] = f"--replay-forfeits {record.reason}"

    def _same_versions(self, record: GameRecord) -> bool:
        """The bots of ``record`` are the versions that played it."""
        now = {color: fp.version for color, name in record.players.items() if (fp := self.fingerprints.get(name))}
        return bool(record.versions) and record.versions == now

    @property
    def kept(self) -> list[GameRecord]:
        """The records the run starts from: those kept, less those played
        again; a plan carried on from a resume's kept games reads them only
        when they are looked at (:class:`~arena.run.resume_read.KeptRecords`:
        more games can be appended to it)."""
        if self._carried and self._resume is not None and not self.replaced:
            return self._resume.records(self.directory)  # type: ignore[return-value]
        return [r for r in self.records.kept if r.game_id not in self.replaced]

    @property
    def _versions(self) -> dict[str, str]:
        return {name: fp.version for name, fp in self.fingerprints.items()}

    def advance(self, records: Sequence[GameRecord]) -> list[GameSpec]:
        """A Swiss, knockout or staged tournament, once the games before are
        in ``records``: the games to play next.  Those of the rounds paired
        so far not yet played (a tied knockout match's next game pair, a
        game played again), else those of the next round, paired now
        (:attr:`meta` then holds it, for the run to write before its first
        game).  Empty when the tournament is over."""
        while self.competition.paired_by_results:
            fold = self._progress(records)
            self.rounds = fold.rounds()
            schedule = rounds_schedule(self.competition, self.rounds, self._versions, self._fixed)
            self.schedule = schedule
            self._fixed = fixed_games(self.rounds, schedule)
            pending = [spec for spec in schedule if not fold.recorded(spec.game_id)]
            if pending:
                return pending
            try:
                pairing = next_pairing(self.competition, self.rounds)
            except PairingError as exc:  # e.g. a hand-edited knockout round of 3 matches
                raise ResultsConflict(f"{self.directory}: cannot pair round {len(self.pairings) + 1}: {exc}; "
                                      "every finished game is kept") from None
            if pairing is None:
                return []
            self.pairings.append(pairing)
            fold.pair(pairing)
            assert self.meta is not None
            self.meta = self.meta.with_pairing(self.seeding, pairing)
        return []

    def progress(self, records: Sequence[GameRecord]) -> Rounds:
        """The rounds paired so far with the results of ``records``."""
        return self._progress(records).rounds()

    def _progress(self, records: Sequence[GameRecord]) -> ProgressFold:
        """The rounds of ``records``: the run gives the list it appends each
        stored game to, whose records are folded once each, as they come; a
        list that is not the one folded so far grown is folded anew."""
        source, count, last = self._folded
        if self._fold is None or records is not source or len(records) < count \
                or (count and records[count - 1] is not last):
            self._fold, count = ProgressFold(self.competition, self.seeding, self.pairings), 0
        for record in records[count:]:
            self._fold.add(record)
        self._folded = (records, len(records), records[-1] if records else None)
        return self._fold

    def _asker(self) -> str:
        # arena match has no tournament file: its command line is what asks.
        return "the tournament file" if self.config.path is not None else "this command"

    def _check_versions(self, meta: TournamentMeta | None) -> dict[str, list[str]]:
        """The earlier versions whose games stay (those kept before, and those
        ``--keep`` keeps now); raises :class:`VersionChanged` for a bot whose
        recorded games another version played, unless ``--replay`` or ``--keep`` names it.
        ``--keep`` keeps the bot's games against bots that left too, so that
        they count when those come back."""
        entries = {entry.name: entry for entry in (*(meta.departed if meta else ()), *(meta.bots if meta else ()))}
        earlier = {name: set(entry.earlier_versions) for name, entry in entries.items()}
        played = (((*key, games) for key, games in self._resume.versions.items()) if self._carried and self._resume
                  else _played_by(self.records.kept))
        stale = self._stale_versions(played, earlier)
        for name, versions in self._stale_versions(_played_by(self.records.left_out), earlier).items():
            if name in self.keep:
                earlier.setdefault(name, set()).update(versions)
        changed = []
        for name, versions in sorted(stale.items()):
            if name in self.keep:
                earlier.setdefault(name, set()).update(versions)
            elif name not in self.replay:
                entry = entries.get(name)
                old = Fingerprint.from_json(entry.fingerprint if entry is not None else None)
                changed.append(f"{name!r} ({describe_change(old, self.fingerprints[name])}; "
                               f"{sum(versions.values())} games by version {', '.join(sorted(versions))})")
        since = f"changed since {'their' if len(changed) > 1 else 'its'} games were played; nothing was played"
        if changed and self.config.path is None:  # arena match: no file, no --replay
            raise VersionChanged(f"bot {', '.join(changed)} {since}. To match the new version, use another output directory")
        if changed:
            bots = ",".join(name for name in sorted(stale) if name not in self.keep and name not in self.replay)
            command = f"arena run {self.config.path}"
            raise VersionChanged(
                f"bot{'s' if len(changed) > 1 else ''} {', '.join(changed)} {since}. "
                f"To play {'their' if len(changed) > 1 else 'its'} games again: {command} --replay {bots}; "
                f"to keep them, marked as played by an earlier version: {command} --keep {bots}"
            )
        return {name: sorted(versions) for name, versions in earlier.items() if versions}

    def _stale_versions(self, played: Iterable[tuple[str, str, str | None, int]],
                        earlier: dict[str, set[str]]) -> dict[str, Counter[str]]:
        """Per bot, the versions other than its current one (and than those
        kept before) that ``played`` games (see :func:`_played_by`), with how many games each."""
        stale: dict[str, Counter[str]] = {}
        for name, version, reason, games in played:
            if reason is not None and reason in self.replay_forfeits:
                continue  # played again anyway
            current = self.fingerprints.get(name)
            if current is not None and version != current.version and version not in earlier.get(name, ()):
                stale.setdefault(name, Counter())[version] += games
        return stale


def _played_by(records: Iterable[GameRecord]) -> Iterator[tuple[str, str, str | None, int]]:
    """Each bot, version and (for a forfeit) reason of ``records``' games, one game each."""
    for record in records:
        reason = record.reason if record.forfeit_by is not None else None
        for color, version in (record.versions or {}).items():
            yield record.players[color], version, reason, 1


def settings_conflict(old: TournamentMeta, new: TournamentMeta, *, played: bool, asker: str) -> str | None:
    """How the tournament ``new`` differs from ``old``, the one whose results
    are in the directory, in a way that would mix two tournaments (the end of
    a sentence naming both values); None when it may go on.  ``played``:
    the directory holds games; ``asker``: who asks (the tournament file)."""
    old_json, new_json = old.to_json(), new.to_json()
    for key in ("game", "time_control", "seed", "format"):
        if old_json[key] != new_json[key]:
            return f"were played with {key} {_show(old_json[key])}, {asker} now says {_show(new_json[key])}"
    # Time odds are part of the test: another clock for a bot is another match.
    for bot in new.bots:
        before = old.entry(bot.name)
        if before is not None and (before.time_control or old.time_control) != (bot.time_control or new.time_control):
            return (f"were played with bot {bot.name!r} on the clock {before.time_control or old.time_control}, "
                    f"{asker} now says {bot.time_control or new.time_control}")
    # The test decides from the games played: other bounds would be another test.
    if played and old.competition.rules.sprt != new.competition.rules.sprt:
        return f"were played as the SPRT {_sprt_text(old.competition.rules.sprt)}, {asker} now says {_sprt_text(new.competition.rules.sprt)}"
    # A Swiss may be given more rounds (or fewer) between runs, an adaptive stage more games; anything
    # else of a stage is what was paired.
    if [replace(s, rounds=1, max_games=2) for s in old.competition.stages] != [replace(s, rounds=1, max_games=2) for s in new.competition.stages]:
        return f"were played with stages {_show(old_json['stages'])}, {asker} now says {_show(new_json['stages'])}"
    # ... but only while no later stage is paired: its field is the stage's order as it ended.
    paired = {p.stage for p in old.pairings}
    for number, (old_stage, new_stage) in enumerate(zip(old.competition.stages, new.competition.stages), start=1):
        for key in ("rounds", "max_games"):
            was, now = getattr(old_stage, key), getattr(new_stage, key)
            if was != now and any(later > number for later in paired):
                return (f"played stage {number} with {key} {was} and paired the stage after it from that; "
                        f"{asker} now says {key} {now}")
    if old.suite_id != new.suite_id:
        return f"were played with another opening suite than {asker} gives"
    return None


def schedule_conflict(record: GameRecord, schedule: Sequence[GameSpec], asker: str) -> str:
    """Why ``record``, a game the ``schedule`` does not hold as it was played, belongs to another tournament."""
    spec = next((s for s in schedule if s.game_id == record.game_id), None)
    if spec is not None and tuple(record.players.values()) != spec.players:
        return (f"hold game {record.game_id!r} between {' and '.join(record.players.values())}, "
                f"but {asker} pairs {' and '.join(spec.players)} there")
    return f"hold game {record.game_id!r}, which {asker} does not schedule"


def run_meta(directory: Path) -> TournamentMeta | None:
    """The ``tournament.json`` a run starts from: a run refuses one it cannot
    read (it would write over what the directory says), in one line."""
    try:
        return read_meta(directory)
    except MetaError as exc:
        raise ResultsConflict(f"{exc}; {_ADVICE}") from None


def open_results(store: ResultsStore, plan: RunPlan) -> LoadedResults:
    """Open ``store`` for the run ``plan`` decides on, write its
    ``tournament.json`` and return the games already there that its
    tournament schedules.  For a run that archives nothing (``arena match``);
    :func:`~arena.run.tournament.run_tournament` archives first."""
    loaded = plan.open(store)
    store.start_appending(loaded)
    assert plan.meta is not None
    write_meta(store.directory, plan.meta)
    plan.remember()
    return LoadedResults(plan.records.kept, loaded.warnings, loaded.good_bytes)


def _fingerprinted(bot: BotConfig, config: TournamentConfig) -> tuple[BotConfig, Fingerprint]:
    """``bot`` and its fingerprint.  A submission whose folder cannot be
    read within the file's ``submission_limits`` (slower than
    ``fingerprint_s``, or changed since the file was read) is one that
    cannot start: it stops the run under ``startup_failures: stop``, else it
    forfeits its games."""
    try:
        return bot, fingerprint(bot, config.submission_limits)
    except SubmissionProblem as exc:
        problem = f"{safe(str(bot.source), limit=None)}: {exc}"
        if config.startup_failures == "stop":
            raise ConfigError(f"bot {bot.name!r}: {problem}", file="") from None
        bot = replace(bot, problem=problem)
        return bot, fingerprint(bot, config.submission_limits)


def seeding_of(config: TournamentConfig, meta: TournamentMeta | None) -> list[str]:
    """The first stage's seeding, best first: as ``tournament.json`` stored it
    when the first round was paired (bots that joined since come after, in
    the file's order); before that, the ranking of the results directory
    ``seed_from`` names (the bots it does not rank after, in the file's
    order), under ``seeding: random`` an order drawn from the tournament's
    seed (the same every run), or else the file's order."""
    names = [bot.name for bot in config.bots]
    if meta is not None and meta.seeding:
        seeding = list(dict.fromkeys(meta.seeding))
    elif config.seeding == "random":
        seeding = random.Random(f"seeding {config.competition.seed}").sample(names, len(names))
    elif config.seed_from is not None:
        try:
            seeding = [name for name in ranking_order(read_results(config.seed_from)) if name in names]
        except (FileNotFoundError, StoreError, ConfigError) as exc:
            raise ResultsConflict(f"seed_from: {exc}") from None
    else:
        seeding = []
    return seeding + [name for name in names if name not in seeding]


def ranking_order(results: ReadResults) -> list[str]:
    """The bots of ``results`` from the first: by places in a Swiss,
    knockout or staged tournament; in a reference tournament the entrants
    by their score against the reference bots, then those; else by its
    ranking rule."""
    if results.rounds is not None:
        return [bot for bot, _ in results.rounds.places()]
    standings = results.standings()
    entrants = [bot.name for bot in standings.entrants]
    return entrants + [bot.name for bot in standings.bots if bot.name not in entrants]


@dataclass(frozen=True)
class FoundResults:
    directory: Path
    #: The tournament file's config, when the user named the file.
    config: TournamentConfig | None = None


def find_results(target: Path) -> FoundResults:
    """The results directory ``target`` means.  Raises ``ConfigError`` for a
    broken tournament file and ``FileNotFoundError`` (its message one line for
    the user) when there are no results there."""
    wanted = f"a results directory holding {GAMES_FILE}, that file, or a tournament file"
    if target.is_file():
        if target.name == GAMES_FILE:
            return FoundResults(target.parent)
        if target.suffix == ".jsonl":
            raise FileNotFoundError(f"{target} is not a results file: expected {wanted}")
        config = load_config(target)
        if not os.path.lexists(config.output / GAMES_FILE):
            raise FileNotFoundError(f"no results yet for {target}: no {GAMES_FILE} in its output directory {config.output}")
        return FoundResults(config.output, config)
    if target.is_dir():
        # Whatever is there (a link, a FIFO) is the store's to read or refuse, in one line.
        if os.path.lexists(target / GAMES_FILE):
            return FoundResults(target)
        inside = sorted(str(p.parent) for p in target.glob(f"*/{GAMES_FILE}"))
        if inside:
            listed = ", ".join(inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
            raise FileNotFoundError(f"no results in {target} itself (no {GAMES_FILE}); it holds results directories: {listed}")
        raise FileNotFoundError(f"no results in {target}: no {GAMES_FILE} there; expected {wanted}")
    raise FileNotFoundError(f"no such file or directory: {target}; expected {wanted}")


def read_results(target: Path) -> ReadResults:
    """The results ``target`` means (see :func:`find_results`), read as
    :func:`arena.results.reading.results_of` reads them: with the tournament
    file's competition when the user named the file.  Raises
    ``ConfigError``, ``FileNotFoundError`` or ``StoreError`` (each one line)
    when there are none to read, or its ``tournament.json`` pairs bots as no
    format does (:class:`~arena.results.meta.ForgedPairing`)."""
    return read_loaded(find_results(target))[0]


def read_loaded(found: FoundResults) -> tuple[ReadResults, list[str], LoadedResults]:
    """The results ``found`` (see :func:`read_results`), the warnings of its
    ``tournament.json`` and tournament file, and the records as loaded."""
    store = ResultsStore(found.directory)
    warnings: list[str] = []
    try:
        meta = read_meta(found.directory)
    except ForgedPairing as exc:
        raise StoreError(str(exc)) from None
    except MetaError as exc:
        warnings.append(f"{exc}; it is ignored, every readable game is ranked")
        meta = None
    loaded = store.load(meta.competition.game if meta is not None else None)
    config = found.config
    if config is None:
        return results_of(found.directory, meta, loaded.records, [*warnings, *loaded.warnings]), warnings, loaded
    seeding = None
    if config.competition.paired_by_results:
        try:
            seeding = seeding_of(config, meta)
        except ResultsConflict as exc:
            warnings.append(str(exc))
    results = results_of(found.directory, meta, loaded.records, [*warnings, *loaded.warnings],
                         competition=config.competition, seeding=seeding)
    return results, warnings, loaded


def _sprt_text(sprt: SprtConfig | None) -> str:
    return "none" if sprt is None else ",".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                                                for k, v in sprt.to_json().items())


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (dict, list)) else repr(value)
