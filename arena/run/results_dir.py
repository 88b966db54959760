"""A tournament's results directory as the run layer sees it.

A results directory describes itself: ``tournament.json`` holds everything
needed to rebuild the schedule and the ranking (the format, the rounds, the
bots and their versions, the opening suite's moves, the SPRT), so that any
command pointed at the directory, at its ``games.jsonl`` or at the tournament
file gives the same standings, report and replays.

Before a run appends to a directory, :class:`RunPlan` sorts the games there:
those this tournament schedules (kept), those of bots no longer in it (left
on disk, out of the ranking), those played by a version of a bot other than
the one that runs now (the run stops and asks: ``--replay BOT`` or ``--keep
BOT``), and anything else, which belongs to another tournament (refused).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import engine
from arena.bot.spec import BotConfig
from arena.bot.submission import SubmissionProblem
from arena.bot.text import safe
from arena.bot.version import Fingerprint, describe_change, fingerprint
from arena.game.clock import TimeControl
from arena.game.openings import Opening, suite_digest
from arena.game.records import GameRecord, GameSpec, MAX_ROUND
from arena.results.rounds import Pairing, Rounds, Stage, pairings_from_json
from arena.results.standings import compute_standings, meta_ranking
from arena.results.statistics import SprtConfig
from arena.results.store import GAMES_FILE, LoadedResults, ResultsConflict, ResultsStore, StoreError, bot_versions, meta_bots
from arena.run.config import FORMATS, STAGED, ConfigError, TournamentConfig, load_config
from arena.run.pairing import PairingError
from arena.run.progression import next_pairing, read_progress, rounds_schedule
from arena.run.schedule import make_schedule

__all__ = [
    "FoundResults", "RunPlan", "VersionChanged", "find_results", "open_results", "read_results",
    "ReadResults", "ranking_order", "schedule_of", "seeding_of", "sort_records", "tournament_meta",
]

#: The key of ``tournament.json`` that says how game ids name pairs; results
#: directories written before it existed number pairs by the bots' places.
GAME_IDS_KEY = "game_ids"
#: The most openings a suite rebuilt from the records may have (suites are files of lines).
_MAX_SUITE = 100_000


class VersionChanged(ResultsConflict):
    """A bot runs in another version than the one that played its recorded games."""


def tournament_meta(
    config: TournamentConfig, fingerprints: dict[str, Fingerprint] | None = None,
    earlier_versions: dict[str, list[str]] | None = None, games: int | None = None,
    departed: Sequence[dict[str, Any]] = (), seeding: Sequence[str] = (), pairings: Sequence[Pairing] = (),
) -> dict[str, Any]:
    """What ``tournament.json`` says of the tournament: everything a reader
    needs to rebuild its schedule and ranking.  ``earlier_versions`` lists,
    per bot, the versions whose games were kept (``--keep``); ``games`` is the
    limit of a match (``arena match --games``).  A Swiss, knockout or staged
    tournament adds its stages, the first stage's ``seeding`` and every
    round's pairing so far."""
    fingerprints = fingerprints or {}
    earlier_versions = earlier_versions or {}
    bots = []
    for bot in config.bots:
        entry: dict[str, Any] = {"name": bot.name, "options": bot.options}
        if bot.name in fingerprints:
            entry["version"] = fingerprints[bot.name].version
            entry["fingerprint"] = fingerprints[bot.name].to_json()
        if earlier_versions.get(bot.name):
            entry["earlier_versions"] = sorted(earlier_versions[bot.name])
        bots.append(entry)
    return {
        "name": config.name,
        "description": config.description,
        "game": config.game,
        "time_control": config.time_control.to_json(),
        "seed": config.seed,
        "format": config.format,
        "rounds": config.rounds,
        "reference": list(config.reference),
        "ranking": config.ranking,
        "withdraw_after_crashes": config.withdraw_after_crashes,
        GAME_IDS_KEY: config.game_ids,
        "games": games,
        "bots": bots,
        # Bots that left, as they were: not in the schedule, remembered for their return.
        "departed": list(departed),
        "openings": None if config.openings is None else {
            "count": len(config.openings), "digest": suite_digest(config.openings),
            "suite": [[opening.start, list(opening.moves)] for opening in config.openings],
        },
        # Not part of what identifies the games (a new SPRT may judge them),
        # but ``arena standings`` reads it to show the test.
        "sprt": None if config.sprt is None else config.sprt.to_json(),
        "stages": [stage.to_json() for stage in config.stages],
        "seeding": list(seeding),
        "pairings": [pairing.to_json() for pairing in pairings],
    }


def game_ids_of(meta: dict[str, Any] | None, records: Sequence[GameRecord]) -> str:
    """How the games of a directory are named: as its ``tournament.json``
    says; a directory written before that key existed numbers pairs by
    position, unless it holds no game yet."""
    if meta is not None and meta.get(GAME_IDS_KEY) in ("names", "positions"):
        return meta[GAME_IDS_KEY]
    return "positions" if meta is not None and records else "names"


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
        if not self.left_out:
            return None
        names = Counter(name for record in self.left_out for name in record.players.values())
        gone = sorted(names, key=lambda n: (-names[n], n))
        return (f"{len(self.left_out)} games of bots no longer in the tournament are left out of the ranking "
                f"(kept in {GAMES_FILE}): " + ", ".join(f"{n} ({names[n]})" for n in gone if n not in self.current))


def sort_records(records: Iterable[GameRecord], schedule: Sequence[GameSpec], names: Collection[str]) -> SortedRecords:
    """Sort ``records`` against ``schedule`` (whose bots are ``names``).  A
    kept record takes the schedule's ``index``, ``pair`` and ``round``:
    ratings fold in the order of the schedule as it is now, whatever it was
    when the game was played, so the same results always give the same
    table (and a round edited into a record is not believed)."""
    by_id = {spec.game_id: spec for spec in schedule}
    out = SortedRecords(frozenset(names))
    for record in records:
        spec = by_id.get(record.game_id)
        if spec is not None and _same_game(record, spec):
            if record.index != spec.index or record.pair != spec.pair or record.round != spec.round:
                record = replace(record, index=spec.index, pair=spec.pair, round=spec.round)
            out.kept.append(record)
        elif spec is None and not set(record.players.values()) <= out.current:
            out.left_out.append(record)
        else:  # an id the schedule gives to another game counts as neither: it would be played twice
            out.foreign.append(record)
    return out


def _same_game(record: GameRecord, spec: GameSpec) -> bool:
    return (
        spec.seed == record.seed and spec.opening == record.opening
        and tuple(record.opening_moves) == spec.opening_moves and tuple(record.players.values()) == spec.players
    )


class RunPlan:
    """What a run of ``config`` does with the results already in its directory.

    Given to :meth:`ResultsStore.open_for_run` as its ``check``: with the
    directory's old ``tournament.json`` and records it fixes the game ids'
    scheme, the schedule, the records kept and left out, and which records
    ``--replay`` replaces; a forfeit for one of ``replay_forfeits`` is not
    held against a changed bot (it is played again anyway).  It raises
    :class:`ResultsConflict` (or :class:`VersionChanged`) before anything is
    written, and leaves the new ``tournament.json`` in :attr:`meta`, for the
    run to write once the old records are replaced (so the file never names
    a version that no record was played or kept for).  ``games`` cuts the
    schedule (a match's limit).  Bots that left keep their entries (under
    ``departed``), so a ``--keep`` holds when they come back."""

    def __init__(
        self, config: TournamentConfig, directory: Path, *, replay: Collection[str] = (), keep: Collection[str] = (),
        replay_forfeits: Collection[str] = (), games: int | None = None,
    ) -> None:
        self.config, self.directory, self.games = config, directory, games
        self.replay_forfeits = set(replay_forfeits)
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
        self.schedule: list[GameSpec] = []
        self.records = SortedRecords(frozenset())
        #: Kept records that ``--replay`` replaces, and why.
        self.replaced: dict[str, str] = {}
        #: The ``tournament.json`` written for the run.
        self.meta: dict[str, Any] = {}
        #: A Swiss, knockout or staged tournament: the first stage's seeding,
        #: the rounds paired so far and what they hold.
        self.seeding: list[str] = []
        self.pairings: list[Pairing] = []
        self.rounds: Rounds | None = None

    def __call__(self, meta: dict[str, Any] | None, records: list[GameRecord]) -> None:
        config = self.config
        if meta is not None:
            self._check_settings(meta)
        self.config = config = replace(config, game_ids=game_ids_of(meta, records))
        if config.paired_by_results:
            self.seeding = seeding_of(config, meta or {})
            try:
                self.pairings = pairings_from_json((meta or {}).get("pairings") or [])
            except (KeyError, TypeError, ValueError) as exc:
                raise ResultsConflict(f"{self.directory}/tournament.json: its pairings cannot be read ({exc}); "
                                      "use another output directory, or remove that one to start over") from None
        try:
            schedule, self.rounds = schedule_of(config, self.seeding, self.pairings, records, self._versions)
        except (KeyError, ValueError) as exc:  # a hand-edited pairing naming a bot the seeding does not hold
            raise ResultsConflict(f"{self.directory}/tournament.json: its pairings do not fit the tournament ({exc}); "
                                  "use another output directory, or remove that one to start over") from None
        self.records = sort_records(records, schedule, [bot.name for bot in config.bots])
        if self.records.foreign:
            self._refuse(self.records.foreign[0], schedule)
        if self.games is not None:
            # A smaller limit than a run before: the games played count all the same.
            self.games = max([self.games, *(r.index + 1 for r in self.records.kept)])
        self.schedule = schedule if self.games is None else schedule[: self.games]
        earlier = self._check_versions(meta or {})
        for record in self.records.kept:
            replayed = sorted(self.replay & set(record.players.values()))
            if replayed:
                self.replaced[record.game_id] = f"--replay {replayed[0]}"
        departed = [entry for entry in meta_bots(meta) + meta_bots(meta, "departed")
                    if entry["name"] not in self.fingerprints]
        self.meta = tournament_meta(config, self.fingerprints, earlier, self.games, departed, self.seeding, self.pairings)

    @property
    def _versions(self) -> dict[str, str]:
        return {name: fp.version for name, fp in self.fingerprints.items()}

    def advance(self, records: Sequence[GameRecord]) -> list[GameSpec]:
        """A Swiss, knockout or staged tournament, once the games before are
        in ``records``: the games to play next.  Those of the rounds paired
        so far not yet played (a tied knockout match's next game pair), else
        those of the next round, paired now (:attr:`meta` then holds it, for
        the run to write before its first game).  Empty when the tournament
        is over."""
        while self.config.paired_by_results:
            schedule, self.rounds = schedule_of(self.config, self.seeding, self.pairings, records, self._versions)
            self.schedule = schedule
            done = {record.game_id for record in records}
            pending = [spec for spec in schedule if spec.game_id not in done]
            if pending:
                return pending
            try:
                pairing = next_pairing(self.config, self.rounds, records)
            except PairingError as exc:  # e.g. a hand-edited knockout round of 3 matches
                raise ResultsConflict(f"{self.directory}: cannot pair round {len(self.pairings) + 1}: {exc}; "
                                      "every finished game is kept") from None
            if pairing is None:
                return []
            self.pairings.append(pairing)
            self.meta["seeding"] = self.seeding
            self.meta["pairings"] = [p.to_json() for p in self.pairings]
        return []

    def _asker(self) -> str:
        # arena match has no tournament file: its command line is what asks.
        return "the tournament file" if self.config.path is not None else "this command"

    def _check_settings(self, meta: dict[str, Any]) -> None:
        where, advice = f"the results in {self.directory}", "use another output directory, or remove that one to start over"
        new = tournament_meta(self.config)
        for key in ("game", "time_control", "seed", "format"):
            if meta.get(key) != new[key]:
                raise ResultsConflict(
                    f"{where} were played with {key} {_show(meta.get(key))}, {self._asker()} now says {_show(new[key])}; {advice}"
                )
        # A Swiss may be given more rounds (or fewer) between runs; anything else of a stage is what was paired.
        identity = [{k: v for k, v in stage.items() if k != "rounds"} for stage in meta.get("stages") or []]
        if identity != [{k: v for k, v in stage.items() if k != "rounds"} for stage in new["stages"]]:
            raise ResultsConflict(f"{where} were played with stages {_show(meta.get('stages'))}, "
                                  f"{self._asker()} now says {_show(new['stages'])}; {advice}")
        # ... but only while no later stage is paired: its field is the stage's order as it ended.
        paired = {p.get("stage") for p in meta.get("pairings") or [] if isinstance(p, dict)}
        for number, (old_stage, new_stage) in enumerate(zip(meta.get("stages") or [], new["stages"]), start=1):
            if old_stage.get("rounds") != new_stage.get("rounds") and any(
                    isinstance(later, int) and later > number for later in paired):
                raise ResultsConflict(
                    f"{where} played stage {number} with rounds {_show(old_stage.get('rounds'))} and paired the stage "
                    f"after it from that; {self._asker()} now says rounds {_show(new_stage.get('rounds'))}; {advice}")
        old = meta.get("openings")
        identity = (lambda o: {k: o.get(k) for k in ("count", "digest")} if isinstance(o, dict) else o)
        if identity(old) != identity(new["openings"]):
            raise ResultsConflict(f"{where} were played with another opening suite than {self._asker()} gives; {advice}")

    def _refuse(self, record: GameRecord, schedule: Sequence[GameSpec]) -> None:
        where, advice = f"the results in {self.directory}", "use another output directory, or remove that one to start over"
        spec = next((s for s in schedule if s.game_id == record.game_id), None)
        if spec is not None and tuple(record.players.values()) != spec.players:
            raise ResultsConflict(
                f"{where} hold game {record.game_id!r} between {' and '.join(record.players.values())}, "
                f"but {self._asker()} pairs {' and '.join(spec.players)} there; {advice}"
            )
        raise ResultsConflict(f"{where} hold game {record.game_id!r}, which {self._asker()} does not schedule; {advice}")

    def _check_versions(self, meta: dict[str, Any]) -> dict[str, list[str]]:
        """The earlier versions whose games stay (those kept before, and those
        ``--keep`` keeps now); raises :class:`VersionChanged` for a bot whose
        recorded games another version played, unless ``--replay`` or ``--keep`` names it."""
        old_entries = {entry["name"]: entry for entry in meta_bots(meta, "departed") + meta_bots(meta)}
        earlier = {name: {v for v in entry.get("earlier_versions") or () if isinstance(v, str)}
                   if isinstance(entry.get("earlier_versions"), list) else set() for name, entry in old_entries.items()}
        stale: dict[str, Counter[str]] = {}
        for record in self.records.kept:
            if record.forfeit_by is not None and record.reason in self.replay_forfeits:
                continue  # played again anyway
            for color, version in (record.versions or {}).items():
                name = record.players[color]
                current = self.fingerprints.get(name)
                if current is not None and version != current.version and version not in earlier.get(name, ()):
                    stale.setdefault(name, Counter())[version] += 1
        changed = []
        for name, versions in sorted(stale.items()):
            if name in self.keep:
                earlier.setdefault(name, set()).update(versions)
            elif name not in self.replay:
                old = Fingerprint.from_json(old_entries.get(name, {}).get("fingerprint"))
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


def seeding_of(config: TournamentConfig, meta: dict[str, Any]) -> list[str]:
    """The first stage's seeding, best first: as ``tournament.json`` stored it
    when the first round was paired (bots that joined since come after, in
    the file's order); before that, the ranking of the results directory
    ``seed_from`` names (the bots it does not rank after, in the file's
    order), or else the file's order."""
    names = [bot.name for bot in config.bots]
    stored = meta.get("seeding")
    if isinstance(stored, list) and stored and all(isinstance(n, str) for n in stored):
        seeding = list(dict.fromkeys(stored))
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
    standings = compute_standings(results.records, results.names, reference=results.reference,
                                  versions=results.versions, ranking=results.ranking)
    entrants = [bot.name for bot in standings.entrants]
    return entrants + [bot.name for bot in standings.bots if bot.name not in entrants]


def schedule_of(config: TournamentConfig, seeding: Sequence[str], pairings: Sequence[Pairing],
                records: Sequence[GameRecord], versions: dict[str, str] | None = None) -> tuple[list[GameSpec], Rounds | None]:
    """The schedule as far as it goes now: every game of a format fixed in
    advance; the games of the rounds ``pairings`` made for a Swiss, knockout
    or staged tournament (a knockout match's tie-break pairs as its recorded
    games call for), with those rounds as far as ``records`` play them."""
    if not config.paired_by_results:
        return make_schedule(config, versions), None
    rounds = read_progress(config, seeding, pairings, records)
    return rounds_schedule(config, rounds, versions), rounds


def open_results(store: ResultsStore, plan: RunPlan) -> LoadedResults:
    """Open ``store`` for the run ``plan`` prepares, write its ``tournament.json``
    and return the games already there that its tournament schedules (with
    ``plan`` filled in).  For a run that replaces nothing (``arena match``);
    :func:`~arena.run.tournament.run_tournament` writes ``tournament.json``
    only once the records it replays are archived."""
    loaded = store.open_for_run(plan.config.game, plan)
    store.write_meta(plan.meta)
    return LoadedResults(plan.records.kept, loaded.warnings, loaded.good_bytes)


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
        if not (config.output / GAMES_FILE).is_file():
            raise FileNotFoundError(f"no results yet for {target}: no {GAMES_FILE} in its output directory {config.output}")
        return FoundResults(config.output, config)
    if target.is_dir():
        if (target / GAMES_FILE).is_file():
            return FoundResults(target)
        inside = sorted(str(p.parent) for p in target.glob(f"*/{GAMES_FILE}"))
        if inside:
            listed = ", ".join(inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
            raise FileNotFoundError(f"no results in {target} itself (no {GAMES_FILE}); it holds results directories: {listed}")
        raise FileNotFoundError(f"no results in {target}: no {GAMES_FILE} there; expected {wanted}")
    raise FileNotFoundError(f"no such file or directory: {target}; expected {wanted}")


@dataclass
class ReadResults:
    """The results a user pointed at, as every reading command sees them."""

    directory: Path
    #: The games the tournament schedules, with the schedule's index and pair.
    records: list[GameRecord]
    #: The directory's tournament.json ({} when there is none).
    meta: dict[str, Any]
    #: The tournament, from the file the user named or else from tournament.json
    #: (None when neither says enough to rebuild the schedule: every record is kept).
    config: TournamentConfig | None
    sprt: SprtConfig | None
    warnings: list[str] = field(default_factory=list)
    #: Games of bots no longer in the tournament: out of the ranking, still shown by ``arena show``.
    left_out: list[GameRecord] = field(default_factory=list)
    #: A Swiss, knockout or staged tournament's rounds as far as they are played.
    rounds: Rounds | None = None

    @property
    def versions(self) -> dict[str, str]:
        """Each bot's version, as the run that wrote the directory last found it."""
        return bot_versions(self.meta)

    @property
    def reference(self) -> tuple[str, ...]:
        return self.config.reference if self.config is not None else ()

    @property
    def ranking(self) -> str:
        """The rule that orders the ranking: the file's, else tournament.json's."""
        return self.config.ranking if self.config is not None else meta_ranking(self.meta)

    @property
    def names(self) -> list[str]:
        """The tournament's bots, in the file's order."""
        if self.config is not None:
            return [bot.name for bot in self.config.bots]
        return [bot["name"] for bot in meta_bots(self.meta)]


def read_results(target: Path) -> ReadResults:
    """The results ``target`` means (see :func:`find_results`): the games its
    tournament schedules, with a warning for each other one, its settings
    and SPRT.  Raises ``ConfigError``, ``FileNotFoundError`` or ``StoreError``
    (each one line) when there are none to read."""
    found = find_results(target)
    store = ResultsStore(found.directory)
    meta = store.read_meta() or {}
    loaded = store.load(meta.get("game"))
    warnings = list(loaded.warnings)
    try:
        sprt = SprtConfig(**meta["sprt"]) if meta.get("sprt") else None
    except (TypeError, ValueError) as exc:
        warnings.append(f"{store.meta_path}: ignored an unreadable sprt setting ({exc})")
        sprt = None
    config = found.config or config_from_meta(meta, loaded.records)
    if config is None:  # no tournament.json, or one that does not say enough: every readable game counts
        return ReadResults(found.directory, loaded.records, meta, None, sprt, warnings)
    config = replace(config, game_ids=game_ids_of(meta or None, loaded.records))
    if not config.paired_by_results:
        # The schedule covers the rounds played, as far as the tournament goes:
        # the file's rounds, or more when tournament.json says more were played
        # (the file was cut short since).  A record's own round is never believed
        # beyond that, so an edited one cannot make a huge schedule; its game is
        # then one the schedule does not hold, ignored with a warning.
        known = max(config.rounds, _meta_rounds(meta) or 1)
        config = replace(config, rounds=max((r.round for r in loaded.records if r.round <= known), default=1))
    if found.config is not None and config.sprt is not None:
        sprt = config.sprt
    if config.paired_by_results and found.config is not None and meta.get("stages"):
        # The stages as they were played: a file given more Swiss rounds since
        # reads as the directory does until a run plays them.
        try:
            stored = tuple(Stage.from_json(entry) for entry in meta["stages"])
        except (TypeError, ValueError):  # a hand-edited tournament.json: the file's stages
            stored = ()
        if stored:
            config = replace(config, stages=stored)
    try:
        pairings = pairings_from_json(meta.get("pairings") or []) if config.paired_by_results else []
        schedule, rounds = schedule_of(config, seeding_of(config, meta), pairings, loaded.records)
    except (ValueError, KeyError, TypeError, ResultsConflict) as exc:
        # e.g. a 0.1 directory (ids by position) read with a file of a later format
        warnings.append(f"cannot rebuild the schedule of {found.directory} ({exc}); every readable game is ranked")
        return ReadResults(found.directory, loaded.records, meta, None, sprt, warnings)
    if isinstance(meta.get("games"), int):
        schedule = schedule[: meta["games"]]
    sorted_ = sort_records(loaded.records, schedule, [bot.name for bot in config.bots])
    warnings += [f"ignored game {r.game_id!r} ({' vs '.join(r.players.values())}): this tournament does not schedule it"
                 for r in sorted_.foreign]
    if (line := sorted_.left_out_line()) is not None:
        warnings.append(line)
    return ReadResults(found.directory, sorted_.kept, meta, config, sprt, warnings, sorted_.left_out, rounds)


def config_from_meta(meta: dict[str, Any], records: Sequence[GameRecord] = ()) -> TournamentConfig | None:
    """Enough of a config to rebuild the schedule from ``tournament.json``;
    None when it does not say enough.  A ``tournament.json`` written before
    it held the opening suite's moves gets them from the records (each game
    id's ``g<k>`` names its place in the suite)."""
    try:
        openings = meta.get("openings")
        suite = None
        if openings:
            suite = tuple(Opening(int(start), tuple(str(m) for m in moves)) for start, moves in openings["suite"]) \
                if "suite" in openings else _suite_from_records(records, int(openings["count"]))
        names = [entry["name"] for entry in meta_bots(meta)]
        reference = tuple(meta.get("reference") or ())
        stages = tuple(Stage.from_json(entry) for entry in meta.get("stages") or ())
        if (meta["format"] not in (*FORMATS, STAGED) or meta["game"] not in engine.GAMES or len(set(names)) < 2
                or not set(reference) <= set(names) or bool(stages) != (meta["format"] in ("swiss", "knockout", STAGED))):
            return None
        return TournamentConfig(
            name=str(meta["name"]), game=meta["game"], time_control=TimeControl.from_json(meta["time_control"]),
            rounds=_meta_rounds(meta) or 1, format=meta["format"], concurrency=1, seed=int(meta["seed"]), output=Path("."),
            bots=tuple(BotConfig(name=name, cmd=("-",), options={}, cwd=Path("."), env={}) for name in names),
            time_margin_ms=0, startup_timeout_s=1.0, path=None, description=str(meta.get("description") or ""),
            openings=suite, reference=reference, ranking=meta_ranking(meta), stages=stages,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _meta_rounds(meta: dict[str, Any]) -> int | None:
    """The rounds ``tournament.json`` says, when they are a sane number
    (see :data:`~arena.game.records.MAX_ROUND`); None otherwise."""
    rounds = meta.get("rounds")
    return rounds if isinstance(rounds, int) and not isinstance(rounds, bool) and 0 < rounds <= MAX_ROUND else None


def _suite_from_records(records: Sequence[GameRecord], count: int) -> tuple[Opening, ...]:
    if not 0 < count <= _MAX_SUITE:  # tournament.json is input too: no list of a billion places
        raise ValueError(f"an opening suite of {count}")
    suite = [Opening(-1, ())] * count  # a place no record shows matches no game
    for record in records:
        k = record.game_id.rpartition("-g")[2]
        if k.isdigit() and 0 < int(k) <= 2 * count:
            suite[(int(k) - 1) // 2] = Opening(record.opening, tuple(record.opening_moves))
    return tuple(suite)


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (dict, list)) else repr(value)
