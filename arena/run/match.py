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
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path

import engine
from arena.bot.spec import BotConfig, split_command
from arena.game.clock import TimeControl
from arena.game.openings import Opening
from arena.game.records import GameRecord
from arena.results.sprt import SprtConfig, SprtStatus
from arena.results.statistics import MatchStatistics, Tally, match_statistics, score_of, scores_of
from arena.results.store import ResultsStore
from arena.run.config import TournamentConfig
from arena.run.executor import LocalExecutor
from arena.run.results_dir import RunPlan, open_results
from arena.formats.schedule import make_schedule
from arena.run.tournament import RunningSprt, pending_specs, play_and_store, sprt_of, start_bots

__all__ = ["MatchResult", "match_config", "play_match"]


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

    def add_record(self, record: GameRecord) -> None:
        self.records.append(record)
        self.add(score_of(record, self.names[0]))
        if record.forfeit_by is not None:
            self.forfeits.setdefault(record.players[record.forfeit_by], Counter())[record.reason] += 1

    def statistics(self) -> MatchStatistics:
        """Elo difference, LOS, draw ratio and pentanomial counts, from the first bot's side."""
        return match_statistics(*scores_of(self.records, self.names[0]))


def match_config(
    commands: Sequence[str],
    game: str,
    time_control: TimeControl,
    *,
    names: Sequence[str] | None = None,
    seed: int = 0,
    concurrency: int = 1,
    time_margin_ms: int = 50,
    startup_timeout_s: float = 10.0,
    output: Path | None = None,
    openings: tuple[Opening, ...] | None = None,
    sprt: SprtConfig | None = None,
) -> TournamentConfig:
    """A two-bot round-robin config for ``commands``.  Raises ValueError for an unknown game."""
    engine.get_game(game)
    names = list(names) if names else _default_names(commands)
    bots = tuple(BotConfig(name=n, cmd=split_command(c), options={}, cwd=Path.cwd(), env={}) for n, c in zip(names, commands))
    return TournamentConfig(
        name="match",
        game=game,
        time_control=time_control,
        rounds=1,
        format="round-robin",
        concurrency=concurrency,
        seed=seed,
        output=output or Path.cwd() / "results" / "match",
        bots=bots,
        time_margin_ms=time_margin_ms,
        startup_timeout_s=startup_timeout_s,
        path=None,
        description="",
        openings=openings,
        sprt=sprt,
    )


#: Programs that run a script named by their first non-option argument.
_INTERPRETER = re.compile(r"(python|pypy|node|nodejs|deno|bun|ruby|perl|php|lua|bash|sh)[0-9.]*(\.exe)?")


def _default_names(commands: Sequence[str]) -> list[str]:
    """Short names from the commands: the module, the script an interpreter
    runs, or else the program (never a later argument such as ``0.05``), made unique."""
    names = []
    for command in commands:
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
        names.append(name or "bot")
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return names


def play_match(
    config: TournamentConfig,
    games: int,
    *,
    logs_dir: Path | None = None,
    keep_records: bool = False,
    on_start: Callable[[MatchResult], None] | None = None,
    on_record: Callable[[GameRecord, MatchResult], None] | None = None,
) -> MatchResult:
    """Play ``games`` games between the two bots of ``config`` in game pairs
    (each opening twice, colours swapped); with ``config.sprt``, ``games`` is
    the limit and the match stops once the test is decided.  With
    ``keep_records``, records go to ``config.output`` (its ``logs/`` holds
    the bots' stderr) and the games already there are not played again.
    Raises ``StartupFailed`` if a bot does not start."""
    openings = len(config.openings) if config.openings else engine.get_game(config.game).openings
    rounds = max(1, math.ceil(games / (2 * openings)))
    config = replace(config, rounds=rounds)
    schedule = make_schedule(config.competition)[:games]
    result = MatchResult(names=(config.bots[0].name, config.bots[1].name))
    with ResultsStore(config.output) as store:
        if keep_records:
            plan = RunPlan(config, store.directory, games=games)
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
        pending = [] if decided else pending_specs(schedule, result.records)
        start_bots(replace(config, startup_failures="stop"), pending, logs_dir)
        if on_start is not None:
            on_start(result)
        played = play_and_store(config, pending, LocalExecutor(config, logs_dir), running_sprt, store if keep_records else None)
        with closing(played):
            for record in played:
                result.add_record(record)
                result.sprt = running_sprt.status()
                if on_record is not None:
                    on_record(record, result)
    result.records.sort(key=lambda r: r.index)
    result.sprt = running_sprt.status(at_limit=result.games >= len(schedule), final=True)
    return result
