"""Running a whole tournament: schedule, resume, play, store.

The command line calls :func:`run_tournament`; so do the tests.  Progress is
reported through a callback so this module prints nothing itself.
"""

from __future__ import annotations

import copy
import os
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

import engine
from arena.bot.process import ArenaWriteError
from arena.bot.forfeits import UNPLAYED_FORFEITS
from arena.bot.quota import measure
from arena.base.stop_signals import check
from arena.game.records import GameRecord, GameSpec
from arena.formats.progression import bots_in_play, estimated_games, shut_out
from arena.formats.scoring import DISQUALIFIED_DETAIL
from arena.formats.rounds import Rounds
from arena.formats.schedule import FixedSchedule
from arena.results.game_index import LazyMoves
from arena.results.live_feed import LIVE_DIR
from arena.results.report import LiveReport, REPORT_FILE
from arena.results.reading import SortedRecords
from arena.formats.scoring import score_of
from arena.results.sprt import SprtFold, SprtStatus, sprt_status
from arena.results.statistics import scores_of
from arena.results.store import LOGS_DIR, LoadedResults, ResultsStore, SCRATCH_DIR, StoreError
from arena.run.config import TournamentConfig, check_programs
from arena.run.environments import with_environments
from arena.run.executor import Executor, LocalExecutor
from arena.run import gc_held
from arena.run.gc_held import frozen, read_uncollected
from arena.run.preflight import StartupFailed, preflight
from arena.run.remote_bots import event_log, serve_remote_bots
from arena.run.spec_queue import StoppableSpecs
from arena.results.meta import MetaCluster, write_meta
from arena.run.results_dir import RunPlan
from arena.run.resume_read import KeptRecords

__all__ = ["RunSummary", "run_tournament", "play_and_store", "pending_specs", "make_executor", "sprt_of", "RunningSprt", "until_decided", "holes", "start_bots", "REPLAYED_BY_DEFAULT", "Withdrawals"]

#: Forfeits played again on resume: the bot never played, so they are not a
#: result (a typo in a command, or a crash withdrawn for, since fixed, must not stand).
REPLAYED_BY_DEFAULT = UNPLAYED_FORFEITS


@dataclass
class RunSummary:
    total: int
    #: Games already in the results directory when the run started.
    resumed: int
    #: Games played by this run.
    played: int = 0
    records: list[GameRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The SPRT after the games so far, when the tournament has one.
    sprt: SprtStatus | None = None
    #: Forfeits found in the results and played again by this run.
    replayed: int = 0
    #: The HTML report written at the end (``report: true``), or None.
    report: Path | None = None
    #: Each bot's version in this run.
    versions: dict[str, str] = field(default_factory=dict)
    #: The whole log as the run read it to start, and its records as the plan
    #: sorted them, when it read every record and plays none of them again:
    #: what the standings kept at its end are folded from
    #: (:func:`~arena.run.carried_run.carried_run_standings`).
    opened: tuple[LoadedResults, SortedRecords] | None = field(default=None, repr=False)
    _rounds: Rounds | None = field(default=None, repr=False)
    _read_rounds: Callable[[], Rounds] | None = field(default=None, repr=False)

    @property
    def rounds(self) -> Rounds | None:
        """A Swiss, knockout or staged tournament's rounds, with every game
        recorded so far.  Read when asked, not after each game: a read folds
        the games recorded since the last one and then takes time that grows
        with the bots (the Swiss's tie-breaks, summed when asked, with the
        games); a progress view asks at most a share of its time, see
        :class:`~arena.run.progress_lines.Periodic`."""
        if self._read_rounds is not None:
            self._rounds, self._read_rounds = self._read_rounds(), None
        return self._rounds

    @rounds.setter
    def rounds(self, rounds: Rounds | None) -> None:
        self._rounds, self._read_rounds = rounds, None

    def rounds_changed(self, read: Callable[[], Rounds]) -> None:
        """A game of the rounds was recorded: ``read`` reads them anew, when they are asked for."""
        self._read_rounds = read


class RunningSprt:
    """The tournament's SPRT, from the first bot's side, over the complete
    game pairs of the records added so far, taken in schedule order: a pair
    whose game is still being played holds the pairs after it back, so the
    verdict is the first crossing in schedule order however the games end
    (see :mod:`arena.results.sprt`), the one reading the records back
    gives.  Its status is ``None`` without ``sprt:``."""

    def __init__(self, config: TournamentConfig, schedule: Iterable[GameSpec], records: Iterable[GameRecord] = ()) -> None:
        self.sprt = config.competition.rules.sprt
        self.bot = config.bots[0].name
        self._fold = SprtFold(config.competition.rules.sprt) if config.competition.rules.sprt is not None else None
        # The schedule's pairs, in order, still to be folded in (a league without a test makes none of its specs).
        self._order = deque(sorted({spec.pair for spec in schedule}) if self._fold is not None else ())
        self._first: dict[int, tuple[int, float]] = {}
        self._complete: dict[int, tuple[float, float]] = {}
        for record in records if self._fold is not None else ():  # (a resume's records, not read without a test)
            self.add(record)

    def add(self, record: GameRecord) -> None:
        if self._fold is None or record.pair is None or self.bot not in record.players.values():
            return
        score = score_of(record, self.bot)
        first = self._first.pop(record.pair, None)
        if first is None:
            self._first[record.pair] = (record.index, score)
            return
        self._complete[record.pair] = (first[1], score) if first[0] < record.index else (score, first[1])
        while self._order and self._order[0] in self._complete:
            self._fold.add(self._complete.pop(self._order.popleft()))

    def status(self, *, at_limit: bool = False, final: bool = False) -> SprtStatus | None:
        """The test so far; ``final``, at the end of a run, with the pairs
        after one that was never completed too (as reading the records back
        counts them)."""
        if self._fold is None:
            return None
        if final and self._complete:
            fold = copy.deepcopy(self._fold)
            for pair in sorted(self._complete):
                fold.add(self._complete[pair])
            return fold.status(at_limit=at_limit)
        return self._fold.status(at_limit=at_limit)

    @property
    def decided(self) -> bool:
        """The verdict is in, on the pairs in schedule order with none missing before it."""
        return self._fold is not None and self._fold.decided


def sprt_of(config: TournamentConfig, records: Iterable[GameRecord], *, at_limit: bool = False) -> SprtStatus | None:
    """The tournament's SPRT over the complete game pairs of ``records``,
    from the first bot's side, in schedule order; ``None`` without ``sprt:``."""
    if config.competition.rules.sprt is None:
        return None
    return sprt_status(config.competition.rules.sprt, scores_of(records, config.bots[0].name)[1], at_limit=at_limit)


def until_decided(specs: Iterable[GameSpec], running: RunningSprt, holes: Collection[str] = ()) -> StoppableSpecs:
    """``specs`` until the SPRT is decided, and the ``holes`` (ids, see
    :func:`holes`) in any case.  The executor pulls a spec only when a player
    is free (or, a Ray actor, a pair ahead), so the games in flight when the
    LLR crosses a bound still finish (and count in the Elo, not in the
    test); the games queued and not started are dropped."""
    return StoppableSpecs(specs, lambda: running.decided, keep=holes)


def holes(pending: Sequence[GameSpec], records: Sequence[GameRecord], decided: bool) -> tuple[list[GameSpec], set[str]]:
    """What a run with an SPRT plays of ``pending``, and the ids of its
    holes: the games scheduled before the last game recorded.  An SPRT
    decided when they were played counted them, so a lost line (or a game
    played again) is played even when the test is ``decided`` now, and
    then only those are."""
    last = max((record.index for record in records), default=-1)
    gaps = {spec.game_id for spec in pending if spec.index < last}
    return ([spec for spec in pending if spec.game_id in gaps] if decided else list(pending)), gaps


class Withdrawals:
    """The bots that play no more: those the file withdraws or disqualifies
    (``withdrawn:``, ``disqualified:``), and under ``withdraw_after_crashes``
    each bot whose run of games in a row lost by a ``crash`` forfeit, in the
    order the records come in (this run's games only: a resumed run starts
    every count at 0), reaches the limit.  :meth:`playable` keeps their games
    from the executor, and :meth:`forfeits` makes their records without
    starting anyone."""

    def __init__(self, config: TournamentConfig) -> None:
        self.limit = config.competition.rules.withdraw_after_crashes
        self.colors = engine.get_game(config.competition.game).colors
        self.config = config
        self.crashes: Counter[str] = Counter()
        #: The bots withdrawn so far, with the reason and detail of their forfeits.
        self.withdrawn: dict[str, tuple[str, str]] = {
            **{name: ("withdrawn", "not played: withdrawn by the organiser (withdrawn: in the tournament file)")
               for name in config.competition.rules.withdrawn},
            **{name: ("disqualified", DISQUALIFIED_DETAIL) for name in config.competition.rules.disqualified},
        }
        self._held: deque[GameSpec] = deque()

    def add(self, record: GameRecord) -> None:
        for color, name in record.players.items():
            if record.forfeit_by == color and record.reason == "crash":
                self.crashes[name] += 1
                if self.limit is not None and self.crashes[name] >= self.limit and name not in self.withdrawn:
                    self.withdrawn[name] = ("withdrawn", f"not started: withdrawn after {self.limit} games in a row "
                                                         f"lost by a crash (withdraw_after_crashes: {self.limit})")
            else:  # a game it finished (or its opponent forfeited) ends the run
                self.crashes[name] = 0

    def playable(self, specs: Iterable[GameSpec]) -> Iterator[GameSpec]:
        """``specs`` without those of a withdrawn bot, held for :meth:`forfeits`.
        Read lazily (one spec per free worker), so a bot withdrawn now keeps
        none of its games that have not started yet."""
        for spec in specs:
            if any(name in self.withdrawn for name in spec.players):
                self._held.append(spec)
            else:
                yield spec

    def forfeits(self) -> Iterator[GameRecord]:
        """The records of the games held so far: the withdrawn bot (seat 0's
        when both were) forfeits each, unplayed."""
        while self._held:
            spec = self._held.popleft()
            seat = 0 if spec.players[0] in self.withdrawn else 1
            controls = self.config.seat_controls(spec.players)
            record = GameRecord.for_spec(spec, self.colors, self.config.time_control.to_json(),
                                         [c.to_json() for c in controls] if controls else None)
            record.end_by_forfeit(seat, *self.withdrawn[spec.players[seat]])
            record.ended_at = record.started_at
            yield record


def play_and_store(
    config: TournamentConfig,
    pending: list[GameSpec],
    executor: Executor,
    running_sprt: RunningSprt,
    store: ResultsStore | None,
    withdrawals: Withdrawals | None = None,
    gaps: Collection[str] = (),
) -> Iterator[GameRecord]:
    """Play ``pending`` and yield each record once it is in ``store`` (when
    there is one) and in ``running_sprt``.  With ``sprt:`` no game starts
    once the test is decided, but those of ``gaps`` (see :func:`holes`).  A stop signal raises
    :class:`~arena.base.stop_signals.Stopped`, after the record of a game that ended meanwhile is stored.
    Close the generator (``contextlib.closing``) to stop the executor, and its bots, at once when the caller fails."""
    # Lazy only with an SPRT or withdrawals, so that the executor takes each
    # spec only once the records before it are in (see LocalExecutor.run); a
    # plain list lets it send the next games ahead.
    specs: Iterable[GameSpec] = pending
    if withdrawals is None and config.competition.rules.withdraws:
        withdrawals = Withdrawals(config)
    if withdrawals is not None:
        specs = withdrawals.playable(specs)
    if config.competition.rules.sprt is not None:  # outermost, so that the executor sees when the test stops
        specs = until_decided(specs, running_sprt, gaps)

    stored_so_far = 0

    def stored(record: GameRecord) -> GameRecord:
        nonlocal stored_so_far
        if store is not None:
            store.append(record)
        running_sprt.add(record)
        stored_so_far += 1
        gc_held.stored(stored_so_far)
        return record

    with frozen(), _arena_writes(store.directory if store is not None else None), \
            closing(executor.run(specs)) as finished:
        for record in finished:
            yield stored(record)
            check()  # a stop signal that came meanwhile: this record is stored, and the run ends here
            if withdrawals is not None:
                withdrawals.add(record)
                yield from map(stored, withdrawals.forfeits())
        if withdrawals is not None:  # games held while the last ones were played
            yield from map(stored, withdrawals.forfeits())


@contextmanager
def _arena_writes(directory: Path | None) -> Iterator[None]:
    """The arena's own writes failing (a bot's log or scratch directory,
    ``games.jsonl``) end the run as a :class:`StoreError`: one line, every
    game written before kept, and never a bot's forfeit.  On a full disk
    the line says what in ``directory`` takes the space."""
    try:
        yield
    except (ArenaWriteError, StoreError) as exc:
        raise StoreError(f"{exc}{_space_users(directory)}") from None


def _space_users(directory: Path | None, shown: int = 3) -> str:
    """When the disk of the results ``directory`` is full, what in its
    scratch directories and logs uses the most (files, when it is the
    inodes that ran out), as the end of an error line; else nothing."""
    if directory is None:
        return ""
    try:
        disk = os.statvfs(directory)
    except OSError:
        return ""
    no_inodes = disk.f_files > 0 and disk.f_favail == 0
    if disk.f_bavail > 0 and not no_inodes:
        return ""
    users = []
    for kind in (SCRATCH_DIR, LOGS_DIR):
        try:
            users += [(path, measure(path)) for path in (directory / kind).iterdir()]
        except OSError:
            pass
    users.sort(key=lambda user: user[1].files if no_inodes else user[1].bytes, reverse=True)
    listed = ", ".join(f"{path.relative_to(directory)} {usage}" for path, usage in users[:shown] if usage.files)
    if not listed:
        return f"; the disk of {directory} is full, not with the bots' scratch directories or logs"
    return f"; the disk of {directory} is full; the most {'files' if no_inodes else 'space'}: {listed}"


def pending_specs(schedule: Sequence[GameSpec], records: Sequence[GameRecord]) -> list[GameSpec]:
    """The games of ``schedule`` not in ``records``; those of a
    :class:`FixedSchedule` (a plan's, ``records`` the games it keeps) made
    only for the rounds not complete."""
    if isinstance(schedule, FixedSchedule):
        return records.pending(schedule) if isinstance(records, KeptRecords) else schedule.pending(records)
    done = {record.game_id for record in records}
    return [spec for spec in schedule if spec.game_id not in done]


def start_bots(
    config: TournamentConfig, specs: list[GameSpec], logs_dir: Path | None, names: Collection[str] | None = None,
) -> tuple[TournamentConfig, list[str]]:
    """The pre-flight for the bots that play in ``specs`` (or for ``names``): raises
    :class:`StartupFailed` if one does not start and ``startup_failures`` is
    ``stop``; otherwise returns the config to play with and a warning for
    each bot that did not start.  A bot that stopped or killed the process
    that started it is never started again: in the config returned it
    forfeits each of its games at once, with the pre-flight's detail.
    Raises ``StoreError`` when the arena cannot write a bot's log or
    scratch directory."""
    names = set(names) if names is not None else {name for spec in specs for name in spec.players}
    names -= config.competition.out_of_play  # never started: their games are forfeited
    # A remote bot is checked by its connection (serve_remote_bots); a greeting
    # here would cost its bridge a restart of the program, for nothing.
    names -= set(config.remote_bots)
    with _arena_writes(config.output):
        problems = preflight(config, names, logs_dir) if names else []
    if problems and config.startup_failures == "stop":
        raise StartupFailed(problems)
    barred = {problem.bot: problem.detail for problem in problems if not problem.restartable}
    if barred:
        config = replace(config, bots=tuple(
            replace(bot, problem=barred[bot.name]) if bot.name in barred else bot for bot in config.bots
        ))
    return config, [f"{problem}; its games are forfeited (startup_failures: forfeit)" for problem in problems]


def make_executor(
    config: TournamentConfig, logs_dir: Path | None, scratch_dir: Path | None = None, concurrency: int | None = None,
    live_dir: Path | None = None,
) -> Executor:
    """The executor ``config`` asks for, with the bots' logs and scratch
    directories there, publishing the games in progress in ``live_dir``.  Raises ``ConfigError`` (one line) when it is
    ``ray`` and Ray is not installed."""
    if config.executor == "ray":
        from arena.run.ray_executor import RayExecutor  # Ray is optional: imported only when asked for

        return RayExecutor(config, logs_dir, concurrency, scratch_dir=scratch_dir, live_dir=live_dir)
    return LocalExecutor(config, logs_dir, concurrency, scratch_dir=scratch_dir, live_dir=live_dir)


def cluster_of(executor: Executor, on_cluster: Callable[[MetaCluster], None] | None) -> MetaCluster | None:
    """The cluster ``executor`` plays on once connected (None off Ray, and
    for an executor of someone else's, plugged in, that need not know of
    clusters), handed to ``on_cluster`` too."""
    cluster = getattr(executor, "cluster", None)
    if cluster is not None and on_cluster is not None:
        on_cluster(cluster)
    return cluster


def run_tournament(
    config: TournamentConfig,
    *,
    concurrency: int | None = None,
    executor: Executor | None = None,
    on_start: Callable[[RunSummary], None] | None = None,
    on_record: Callable[[GameRecord, RunSummary], None] | None = None,
    on_cluster: Callable[[MetaCluster], None] | None = None,
    on_remote: Callable[[str], None] | None = None,
    replay_forfeits: Collection[str] = REPLAYED_BY_DEFAULT,
    replay: Collection[str] = (),
    keep: Collection[str] = (),
    replay_games: Collection[str] = (),
) -> RunSummary:
    """Play every game of ``config`` that its output directory does not hold
    yet, and again those it holds as forfeits for one of ``replay_forfeits``
    those of the bots in ``replay`` and the games ``replay_games`` names (a
    disputed game, played again under its id).  The records played again are moved
    to ``replaced.jsonl``, never deleted.  A bot whose recorded games another
    version of it played stops the run (:class:`VersionChanged`) unless it
    is in ``replay`` or ``keep`` (its old games stay, marked as such).  Games
    of bots no longer in ``config`` stay on disk, out of the summary, with
    one warning.

    On Ray, once connected, ``on_cluster`` gets the cluster's nodes (also
    written into ``tournament.json``).

    Before the first game every bot is started once (:func:`start_bots`).
    Each record is written to the store before ``on_record`` sees it, so an
    interruption at any point (an exception, Ctrl-C, ``kill -9``) loses at most
    the games in progress.  With ``sprt:`` no game starts once the LLR of the
    games so far has crossed a bound; a resumed run plays on only while the
    test is undecided.  Raises ``ResultsConflict`` (``VersionChanged``), ``StoreBusy``,
    ``StoreError`` or ``StartupFailed`` before anything is played, and
    ``ConfigError`` when a bot's program cannot be found.  A write of the
    arena's own that fails while it plays (``games.jsonl``, a bot's log or
    scratch directory) raises ``StoreError``, saying on a full disk what
    uses the space; no bot forfeits for it.

    With ``report: true`` the HTML report in the output directory is refreshed
    every few seconds while games finish and written once more at the end (also
    after an interruption).  A report that cannot be written is a warning in the
    summary, never a reason to stop playing.

    With remote bots (``remote: true``) a listener takes their connections
    while the run lasts (:func:`~arena.run.remote_bots.serve_remote_bots`):
    its events go to ``logs/remote.log`` and to ``on_remote``.

    The Python packages of the file and of the teams are installed first,
    unless they already are (:mod:`arena.run.environments`)."""
    config = with_environments(config, build=True).config
    check_programs(config)
    say = event_log(config.output, on_remote)
    # Listening from the start: the executor's workers are given the remote bots' hub.
    with serve_remote_bots(config, say) as config:
        store = ResultsStore(config.output)
        plan = RunPlan(config, store.directory, replay=replay, keep=keep, replay_forfeits=replay_forfeits,
                       replay_games=replay_games)
        own_executor = executor is None
        if executor is None:  # made now: a missing Ray is one line before any bot starts
            # The plan's bots: a submission it could not fingerprint cannot start.
            executor = make_executor(plan.config, store.logs_dir, store.scratch_dir, concurrency, store.directory / LIVE_DIR)
        with store, frozen():
            # The run, in order: open the store, decide the plan, start the bots,
            # archive what is played again, write tournament.json, play.
            with read_uncollected():
                loaded = plan.open(store)
            store.start_appending(loaded)
            config = plan.config
            # A decided SPRT plays nothing more: forfeits stand, no bot is started;
            # but the games of a bot played again (--replay) no longer count.
            decided = (sprt := sprt_of(config, plan.kept)) is not None and sprt.decided
            plan.replay_forfeits_unless(decided)
            kept = plan.kept
            running_sprt = RunningSprt(config, plan.schedule, kept)
            sprt = running_sprt.status()
            pending = plan.advance(kept) if config.competition.paired_by_results else pending_specs(plan.schedule, kept)
            # (the holes only an SPRT plays: a resume's records are not read for them)
            pending, gaps = holes(pending, kept, decided) if config.competition.rules.sprt is not None else (pending, set())
            warnings = list(loaded.warnings) + ([line] if (line := plan.records.left_out_line()) else [])
            if plan.rounds is not None:
                warnings += [f"bot {name!r} joined after the last round it could enter was paired: it plays no game "
                             "in this tournament" for name in shut_out(plan.competition, plan.rounds)]
            # A later round may pair any bot still in play: each is started once before the first.
            in_play = None
            if config.competition.paired_by_results and pending and plan.rounds is not None:
                in_play = bots_in_play(plan.competition, plan.rounds) | {name for spec in pending for name in spec.players}
            started, more = start_bots(config, pending, store.logs_dir, in_play)
            warnings += more
            if started is not config:  # a bot the pre-flight barred from starting again
                config = started
                if own_executor:  # (an executor given plays with the config it was given)
                    executor = make_executor(config, store.logs_dir, store.scratch_dir, concurrency, store.directory / LIVE_DIR)
            if plan.replaced:
                placed = store.replace(plan.replaced)
                for record in (*kept, *plan.records.left_out):  # read before: their lines moved up
                    if isinstance(record.moves, LazyMoves) and record.game_id in placed:
                        record.moves.moved_to(*placed[record.game_id])
            assert plan.meta is not None
            write_meta(store.directory, plan.meta)
            plan.remember()
            written = plan.meta
            summary = RunSummary(
                total=_total(plan, len(kept)), resumed=len(kept), records=kept, warnings=warnings,
                replayed=len(plan.replaced), sprt=sprt, versions={name: fp.version for name, fp in plan.fingerprints.items()},
                _rounds=plan.rounds,
                opened=None if plan.replaced or isinstance(kept, KeptRecords) else (loaded, plan.records),
            )
            report = LiveReport(config.output / REPORT_FILE, plan.meta, config.competition.rules.sprt, left_out=plan.records.left_out) \
                if config.report else None
            if on_start is not None:
                on_start(summary)
            withdrawals = Withdrawals(config) if config.competition.rules.withdraws else None
            # One Ray connection for every round (connecting starts a local Ray: seconds).
            with _final_report(report, summary), executor.session() if pending else nullcontext():
                # Connected: say where the games are played, and keep it.
                if pending and (cluster := cluster_of(executor, on_cluster)) is not None:
                    plan.meta = replace(plan.meta, cluster=cluster)
                    write_meta(store.directory, plan.meta, known=written)
                    written = plan.meta

                def read_progress() -> Rounds:
                    return plan.progress(summary.records)

                # A Swiss, knockout or staged tournament plays round by round: the
                # next round is paired, and written down, once this one is complete.
                while pending:
                    # closing(): an exception here (Ctrl-C included) must stop the workers
                    # and their bots now, not whenever the generator is collected.
                    with closing(play_and_store(config, pending, executor, running_sprt, store, withdrawals, gaps)) as played:
                        for record in played:
                            summary.played += 1
                            summary.records.append(record)
                            summary.sprt = running_sprt.status()
                            if config.competition.paired_by_results:
                                # The live leader is their first place: with the round's games so far.
                                summary.rounds_changed(read_progress)
                            if report is not None:
                                report.update(summary.records, summary.total)
                            if on_record is not None:
                                on_record(record, summary)
                    if not config.competition.paired_by_results:
                        break
                    pending = plan.advance(summary.records)
                    # The next round's pairing, before its first game; this run wrote the file, so it is not read back.
                    write_meta(store.directory, plan.meta, known=written)
                    written = plan.meta
                    if report is not None:
                        report.meta = plan.meta
                    summary.rounds = plan.rounds
                    summary.total = _total(plan, len(summary.records))
        summary.sprt = running_sprt.status(at_limit=len(summary.records) >= summary.total, final=True)
        return summary


def _total(plan: RunPlan, played: int) -> int:
    """The games of the whole tournament: as scheduled, or as far as a
    Swiss, knockout or staged tournament's rounds to pair can be foreseen
    (never fewer than the ``played`` ones)."""
    if plan.rounds is None:
        return len(plan.schedule)
    return max(estimated_games(plan.competition, plan.rounds, len(plan.schedule)), played)


@contextmanager
def _final_report(report: LiveReport | None, summary: RunSummary) -> Iterator[None]:
    """Write the live report at once, and the final one however the run ends."""
    if report is None:
        yield
        return
    report.update(summary.records, summary.total)
    try:
        yield
    finally:
        report.finish(summary.records, summary.total)
        if report.error:
            summary.warnings.append(report.error)
        else:
            summary.report = report.path
