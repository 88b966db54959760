"""A quick match between two bot commands, outside any tournament file.

``arena match`` builds a two-bot tournament in memory and plays it with the
same schedule, pre-flight, executor and referee as ``arena run``, so colours
and start positions alternate exactly as in a tournament.  With an output
directory its records are stored as ``arena run`` stores them: the match
resumes, and ``arena standings`` reads it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

import engine
from arena.bot.spec import STARTUP_TIMEOUT_S, BotConfig, split_command
from arena.game.clock import MARGIN_MS, TimeControl
from arena.game.openings import Opening
from arena.game.records import GameRecord
from arena.results.live_feed import LIVE_DIR
from arena.results.meta import MetaCluster, write_meta
from arena.results.sprt import CAP_FACTOR, SprtConfig, SprtStatus
from arena.results.statistics import MatchStatistics, PairTally, Tally, counted_statistics, score_of
from arena.results.store import ResultsConflict, ResultsStore, StoreError
from arena.results.tables import format_elo_interval, format_nelo
from arena.run.bot_option import MatchBot
from arena.run.config import RaySettings, TournamentConfig
from arena.run.remote_bots import event_log, serve_remote_bots
from arena.run.remote_settings import RemoteSettings
from arena.run.gc_held import frozen, read_uncollected
from arena.run.results_dir import RunPlan, open_results, run_meta
from arena.formats.competition import Competition, Rules
from arena.formats.schedule import make_schedule
from arena.run.tournament import (RunningSprt, cluster_of, holes, make_executor, pending_specs, play_and_store, sprt_of,
                                  start_bots)

__all__ = ["MATCH_GAMES", "MatchResult", "match_config", "clocks_text", "match_header", "other_test", "play_match"]

#: Games of a match that names no number and no SPRT (whose cap it is then).
MATCH_GAMES = 10


@dataclass
class MatchResult(Tally):
    """The match from the first bot's point of view."""

    names: tuple[str, str]
    #: Forfeits committed, by bot then by reason.
    forfeits: dict[str, Counter[str]] = field(default_factory=dict)
    records: list[GameRecord] = field(default_factory=list)
    #: The SPRT after the games so far, when the match has one.
    sprt: SprtStatus | None = None
    #: Games already in the output directory when the match started.
    resumed: int = 0
    #: Games the match plays at most: its limit, or the games already in
    #: its directory when an earlier run's limit was higher.
    total: int = 0
    #: Games queued on Ray actors and dropped unplayed at the verdict.
    dropped: int = 0
    _pairs: PairTally = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._pairs = PairTally(self.names[0])

    def add_record(self, record: GameRecord) -> None:
        self.records.append(record)
        self.add(score_of(record, self.names[0]))
        self._pairs.add(record)
        if record.forfeit_by is not None:
            self.forfeits.setdefault(record.players[record.forfeit_by], Counter())[record.reason] += 1

    def progress_line(self) -> str:
        """The match so far in one line, for a log: games and pairs, W/D/L,
        the pentanomial counts, Elo and normalized Elo with their margins,
        and the LLR with its bounds."""
        stats = self.statistics()
        sprt = f", {self.sprt.describe(short=True)}" if self.sprt is not None else ""
        pairs = stats.penta.pairs
        return (f"{self.games} of {self.total} games, {pairs} pair{'' if pairs == 1 else 's'}: "
                f"W/D/L {self.wins}/{self.draws}/{self.losses}, LL/LD/WL+DD/WD/WW {'/'.join(map(str, stats.penta.counts()))}, "
                f"Elo {format_elo_interval(stats)}, nElo {format_nelo(stats.nelo, stats.nelo_margin)}{sprt}")

    def statistics(self) -> MatchStatistics:
        """Elo difference, LOS, normalized Elo, draw ratio and pentanomial
        counts, from the first bot's side: from the counts, so in constant
        time (a progress line after every game)."""
        return counted_statistics(self.wins, self.draws, self.losses, self._pairs.pentanomial())


def match_config(
    commands: Sequence[str | MatchBot],
    game: str,
    time_control: TimeControl,
    *,
    names: Sequence[str] | None = None,
    seed: int = 0,
    concurrency: int = 1,
    time_margin_ms: int = MARGIN_MS,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    output: Path | None = None,
    openings: tuple[Opening, ...] | None = None,
    sprt: SprtConfig | None = None,
    actors: int | None = None,
    remote: RemoteSettings = RemoteSettings(),
) -> TournamentConfig:
    """A two-bot round-robin config for ``commands`` (each a command, or a
    :class:`MatchBot` with its name, options, directory and clock, or a
    remote bot, reached as ``remote`` says).  Raises ValueError for an
    unknown game, or for two bots of one name."""
    engine.get_game(game)
    bots = [MatchBot(command) if isinstance(command, str) else command for command in commands]
    names = list(names) if names else _names(bots)
    if names[0] == names[1]:
        raise ValueError(f"both bots are named {names[0]!r}: give one another name (--bot name=...,cmd=...)")
    configs = tuple(BotConfig(name=name, cmd=() if bot.remote else split_command(bot.command), options=dict(bot.options),
                              cwd=bot.cwd or Path.cwd(), env={}, debug=bot.debug,
                              remote=remote.link() if bot.remote else None)
                    for name, bot in zip(names, bots))
    return TournamentConfig(
        name="match",
        competition=Competition(game=game, seed=seed, format="round-robin", names=tuple(names), openings=openings,
                                rules=Rules(sprt=sprt)),
        time_control=time_control,
        concurrency=concurrency,
        output=output or Path.cwd() / "results" / "match",
        bots=configs,
        time_margin_ms=time_margin_ms,
        startup_timeout_s=startup_timeout_s,
        path=None,
        description="",
        ray=RaySettings(actors=actors),
        time_odds={name: bot.time_control for name, bot in zip(names, bots) if bot.time_control is not None},
        remote=remote,
    )


#: Programs that run a script named by their first non-option argument.
_INTERPRETER = re.compile(r"(python|pypy|node|nodejs|deno|bun|ruby|perl|php|lua|bash|sh)[0-9.]*(\.exe)?")


def _names(bots: Sequence[MatchBot]) -> list[str]:
    """Each bot's name, or else a short one from its command (see
    :func:`_default_name`); two alike become ``x-1`` and ``x-2``, and a
    default never takes the other bot's given name."""
    names = [bot.name or _default_name(bot.command) for bot in bots]
    unnamed = [i for i, bot in enumerate(bots) if bot.name is None]
    if names[0] == names[1] and unnamed:
        if len(unnamed) == 2:
            return [f"{names[0]}-1", f"{names[1]}-2"]
        names[unnamed[0]] += "-2"
    return names


def _default_name(command: str) -> str:
    """A short name from a command: the module, the script an interpreter
    runs, or else the program (never a later argument such as ``0.05``)."""
    argv = split_command(command)
    stem = Path(argv[0]).stem
    if _INTERPRETER.fullmatch(Path(argv[0]).name):
        for i, arg in enumerate(argv[1:], start=1):
            if arg == "-m" and i + 1 < len(argv):
                stem = argv[i + 1].rsplit(".", 1)[-1]
                break
            if not arg.startswith("-"):
                stem = Path(arg).stem
                break
    name = "".join(ch if ch.isalnum() or ch in "_.+-" else "_" for ch in stem)[:60].lstrip("_.+-")
    return name or "bot"


def match_header(config: TournamentConfig, games: int, *, capped: bool) -> str:
    """What the match will play, in one line: the bots and their clocks, and
    the number of games, or the SPRT and its cap (given with ``--games`` when
    ``capped``, else computed from the bounds: say how)."""
    a, b = (bot.name for bot in config.bots)
    sprt = config.competition.rules.sprt
    if sprt is None:
        return f"{a} vs {b}: playing {games} game{'s' if games != 1 else ''} of {config.competition.game} {clocks_text(config)}"
    why = "--games" if capped else (f"{CAP_FACTOR} × the {sprt.expected_pairs():.0f} pairs expected under "
                                    f"{sprt.worse_hypothesis}")
    return (f"{a} vs {b}: SPRT {sprt.describe()} (alpha {sprt.alpha:g}, beta {sprt.beta:g}) on {config.competition.game} "
            f"{clocks_text(config)}; until decided, at most {games} games ({why})")


def clocks_text(config: TournamentConfig) -> str:
    """``at 5+0.1``, or with time odds ``with dev at 10+0.1 and base at 5+0.1``."""
    if not config.time_odds:
        return f"at {config.time_control}"
    a, b = (bot.name for bot in config.bots)
    return f"with {a} at {config.clock_of(a)} and {b} at {config.clock_of(b)}"


def _with_rounds(config: TournamentConfig, games: int) -> TournamentConfig:
    """``config`` with the rounds that hold ``games`` games in pairs."""
    openings = len(config.competition.openings) if config.competition.openings else engine.get_game(config.competition.game).openings
    return replace(config, competition=replace(config.competition, rounds=max(1, math.ceil(games / (2 * openings)))))


def other_test(config: TournamentConfig, games: int) -> str | None:
    """Why ``config.output`` holds another match than this one (the line a run
    would refuse it with), or None when it holds none or this one (which a
    run resumes).  Reads only."""
    directory = config.output
    if not directory.exists():
        return None
    try:
        records = ResultsStore(directory).load(config.competition.game).records
        RunPlan(_with_rounds(config, games), directory, games=games).decide(run_meta(directory), records)
    except (ResultsConflict, StoreError) as exc:
        return str(exc)
    return None


def play_match(
    config: TournamentConfig,
    games: int,
    *,
    logs_dir: Path | None = None,
    keep_records: bool = False,
    on_start: Callable[[MatchResult], None] | None = None,
    on_record: Callable[[GameRecord, MatchResult], None] | None = None,
    on_cluster: Callable[[MetaCluster], None] | None = None,
    on_remote: Callable[[str], None] | None = None,
) -> MatchResult:
    """Play ``games`` games between the two bots of ``config`` in game pairs
    (each opening twice, colours swapped), on the executor it names (this
    machine's cores, or a Ray cluster); with ``config.competition.rules.sprt``, ``games`` is
    the cap and the match stops once the test is decided.  With
    ``keep_records``, records go to ``config.output`` (its ``logs/`` holds
    the bots' stderr) and the games already there are not played again.
    On Ray, once connected, ``on_cluster`` gets the cluster's nodes (also
    written into ``tournament.json`` with ``keep_records``).
    Raises ``StartupFailed`` if a bot does not start, ``ConfigError`` when
    Ray is asked for and cannot be had, or a remote bot cannot be listened
    for (its events go to ``on_remote``, and with ``keep_records`` to ``logs/remote.log``)."""
    say = event_log(config.output if keep_records else None, on_remote)
    with serve_remote_bots(config, say) as config:
        config = _with_rounds(config, games)
        schedule = make_schedule(config.competition)[:games]
        result = MatchResult(names=(config.bots[0].name, config.bots[1].name))
        with ResultsStore(config.output) as store, frozen():
            if keep_records:
                plan = RunPlan(config, store.directory, games=games)
                with read_uncollected():
                    loaded = open_results(store, plan)
                schedule = plan.schedule
                for record in loaded.records:
                    result.add_record(record)
                result.resumed = len(result.records)
                logs_dir = store.logs_dir
            running_sprt = RunningSprt(config, schedule, result.records)
            # A test the stored games decide, as reading them back decides it, plays nothing more.
            read_back = sprt_of(config, result.records)
            decided = read_back is not None and read_back.decided
            result.sprt = read_back if decided else running_sprt.status()
            result.total = len(schedule)
            # Games before the last one recorded (a lost line) are played even when the test is decided.
            pending, gaps = holes(pending_specs(schedule, result.records), result.records, decided)
            # before any bot starts: a missing Ray is one line
            executor = make_executor(config, logs_dir, live_dir=store.directory / LIVE_DIR if keep_records else None)
            start_bots(replace(config, startup_failures="stop"), pending, logs_dir)
            if on_start is not None:
                on_start(result)
            with executor.session() if pending else nullcontext():
                if pending and (cluster := cluster_of(executor, on_cluster)) is not None and keep_records:
                    write_meta(store.directory, replace(plan.meta, cluster=cluster), known=plan.meta)
                played = play_and_store(config, pending, executor, running_sprt, store if keep_records else None, gaps=gaps)
                with closing(played):
                    for record in played:
                        result.add_record(record)
                        result.sprt = running_sprt.status()
                        if on_record is not None:
                            on_record(record, result)
    result.records.sort(key=lambda r: r.index)
    result.sprt = running_sprt.status(at_limit=result.games >= len(schedule), final=True)
    result.dropped = executor.dropped
    return result
