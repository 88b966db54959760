"""What the live view shows, read from a results directory: nothing else.

:class:`LiveState` is the server's one reader.  It watches the directory
cheaply (the size and time of ``games.jsonl`` and ``tournament.json``, the
live files of :mod:`arena.results.live_feed`) and rebuilds the report's page
only when the results changed.  Whether the run is still going is the
results store's lock: held (by a live process) while ``arena run`` or
``arena match`` writes the directory.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from arena.base import safe_files
from arena.base.text import safe
from arena.game.records import GameRecord
from arena.live.champion import Champion, champion_of
from arena.live.delta import Step, pieces, recipe
from arena.live.endings import HOLD_S, Endings
from arena.live.interest import card_interest
from arena.live.titles import card_title
from arena.formats.schedule import schedule_size
from arena.results.live_feed import LIVE_DIR, read_live_games
from arena.results.meta import META_FILE
from arena.results.reading import ReadResults, results_of
from arena.results.report import INLINE_GAMES, build_report_files
from arena.results.report.data import GameChunks
from arena.results.store import GAMES_FILE, LogRewritten, StoreError, current_run
from arena.run.config import ConfigError, load_config
from arena.run.results_dir import FoundResults, find_results, read_loaded
from arena.run.standings_read import carried_standings

__all__ = ["LiveState", "Status", "results_directory"]

#: Where the page loads its styles and scripts from (served by :mod:`arena.live.server`).
LINKED = ("static/report.css", "static/live.css", "static/viewer.js", "static/live.js")
#: Where a large report's page loads the files of its games from (:meth:`LiveState.games_file`).
GAMES_HREF = "games/"
#: The most of the log read on at one look (the rest at the next): a look stays short whatever was written.
MAX_TAIL_BYTES = 4 << 20
#: The most games the page of a large directory lists, the latest (its standings count them all).
LATEST_GAMES = 4000
#: Fewer bytes than any record the arena writes (one that ends at the start, no move, is over 300):
#: a log shorter than ``LATEST_GAMES`` of these holds no more games than the page lists.
_SMALLEST_RECORD_BYTES = 250


def results_directory(target: Path) -> Path:
    """The results directory ``target`` (a directory, its ``games.jsonl``, a
    tournament file) names, even before its first game is stored.  Raises
    ``ConfigError`` for a broken tournament file, ``FileNotFoundError`` for
    nothing there."""
    if target.is_file() and target.suffix in (".yaml", ".yml"):
        return load_config(target).output
    if target.is_file() and target.name == GAMES_FILE:
        return target.parent
    if target.is_dir():
        return target
    return find_results(target).directory


@dataclass(frozen=True)
class Status:
    """How the run stands: ``state`` is ``running``, ``finished``, ``stopped``,
    ``waiting`` (no results yet) or ``problem`` (results that cannot be read)."""

    state: str
    line: str

    def to_json(self) -> dict[str, str]:
        return {"state": self.state, "line": self.line}


class LiveState:
    """The results directory of ``target`` as the live view shows it;
    ``bot``: only that team's page (its games, its stderr).  A page of more
    than ``inline_games`` games holds their list, and the server hands their
    moves in files (:meth:`games_file`)."""

    def __init__(self, target: Path, bot: str | None = None, inline_games: int = INLINE_GAMES,
                 hold_s: float = HOLD_S) -> None:
        self.target = target
        self.directory = results_directory(target)
        self.bot = bot
        self.inline_games = inline_games
        self._results: ReadResults | None = None
        #: How many times the results were read: the page and the status are those of the last reading.
        self.generation = 0
        self._page_generation = -1
        self._page = b""
        #: The page built before the last one, and its generation: what the open pages show, to change.
        self._before: tuple[int, bytes] | None = None
        self._games: GameChunks | None = None
        self._status: Status | None = None
        self._champion: Champion | None = None
        self._live_key: Any = None
        self._live: list[dict[str, Any]] = []
        #: Where the complete lines of the log ended at the last reading (None: no log read), and the
        #: records written after them, read on from there.
        self._offset: int | None = None
        self._appended: list[GameRecord] = []
        self._endings = Endings(hold_s)
        #: CPU seconds the last reading and page took: the server reads no more often than it can afford.
        #: Its CPU, not the wall clock's: on a machine the games keep busy, waiting for a core costs nobody.
        self.cost = 0.0

    # -- cheap checks, every poll ------------------------------------------------

    def results_key(self) -> Any:
        """Changes when the stored results change (a game recorded, a round paired, a run started or ended)."""
        return (_stat_key(self.directory / GAMES_FILE), _stat_key(self.directory / META_FILE),
                current_run(self.directory))

    def live_key(self) -> Any:
        """Changes when a game in progress moved (a live file replaced, added or removed) or a game was
        recorded (its card then holds the record's final position)."""
        try:
            with os.scandir(self.directory / LIVE_DIR) as entries:
                files = tuple(sorted((e.name, e.stat(follow_symlinks=False).st_mtime_ns) for e in entries))
        except OSError:
            files = ()
        return files, _stat_key(self.directory / GAMES_FILE)

    # -- what is shown: as of the last reading ------------------------------------------

    def refresh(self) -> None:
        """Read the results again (the costly part: the standings, and every record or the latest)."""
        started = time.thread_time()
        problem = None
        try:
            self._results, self._offset = _read(find_results(self.target))
        except (ConfigError, FileNotFoundError, StoreError) as exc:
            self._results = results_of(self.directory, None, [])
            self._offset = None
            problem = str(exc)
        self._appended = []
        self.generation += 1
        self._status = self._read_status(self._results, problem)
        # Named once the run is over: while it plays, the leader may still change.
        self._champion = champion_of(self._results) if self._status.state == "finished" else None
        self._live_key = None
        self.cost = time.thread_time() - started

    def results(self) -> ReadResults:
        """The results as ``arena standings`` read them at the last :meth:`refresh` (the first call reads them)."""
        if self._results is None:
            self.refresh()
        assert self._results is not None
        return self._results

    def page(self) -> bytes:
        """The report's page of the results, with the run's status line and
        the live view's script, in UTF-8: encoded once for every browser."""
        results = self.results()
        if self._page_generation != self.generation:
            started = time.thread_time()
            page, self._games = build_report_files(results, GAMES_HREF, inline_games=self.inline_games,
                                                   results_dir=self.directory, logs_href="logs/", bot=self.bot,
                                                   status=self.status().line, linked=LINKED)
            if self._page_generation >= 0:
                self._before = (self._page_generation, self._page)
            self._page = page.encode()
            self._page_generation = self.generation
            self.cost += time.thread_time() - started
        return self._page

    def page_change(self) -> dict[str, Any] | None:
        """How the page built before becomes the page of the results now
        (:mod:`arena.live.delta`), for the open pages to apply instead of
        fetching it whole: ``from`` and ``to`` are their generations.  None
        when no page was built before this one (no open page to change)."""
        page = self.page()
        if self._before is None:
            return None
        started = time.thread_time()
        generation, before = self._before
        self._before = None  # a change is told once: a page that missed it fetches the page whole
        steps: list[Step] = recipe(pieces(before.decode()), pieces(page.decode()))
        self.cost += time.thread_time() - started
        return {"from": generation, "to": self.generation, "steps": steps}

    def games_file(self, name: str) -> bytes | None:
        """The file of games ``name`` of the page as it is now (see
        :class:`~arena.results.report.data.GameChunks`), read from the results
        when asked for; None when that page has no such file (its games are
        in it, or changed since)."""
        self.page()
        if self._games is None or name not in self._games.names:
            return None
        return self._games.script(self._games.names.index(name)).encode()

    def live_games(self) -> list[dict[str, Any]]:
        """The games in progress (none when no run holds the directory: a
        killed worker's file is stale) and those that just ended
        (:mod:`arena.live.endings`), as the page's script takes them."""
        key = self.live_key()
        if key != self._live_key:
            results = self.results()
            self._live_key = key
            recorded = {r.game_id for r in results.records} | {r.game_id for r in results.left_out}
            records = results.records + self._records_since(recorded)
            recorded |= {r.game_id for r in self._appended}
            run = current_run(self.directory)
            games = read_live_games(self.directory, recorded, run.since) if run is not None else []
            cards = [g for g in self._endings.games(games, records, recorded, time.time())
                     if self.bot is None or self.bot in g["players"]]
            self._live = [{**g, "infos": infos, "title": card_title(g["id"], results.rounds),
                           "interest": card_interest(g["id"], results.rounds, infos)}
                          for g in cards for infos in [self._infos_shown(g)]]
        return self._live

    def _records_since(self, recorded: set[str]) -> list[GameRecord]:
        """The records written since the results were last read, read on from where that reading ended (the
        lines added, not the whole log, and not through its index): a game's card holds its final position
        once its record is written, not at the next reading of the results, which fast games outrun.  A
        line that is not a record is skipped, as every reader skips it."""
        if self._offset is None:
            return self._appended
        try:
            fd = safe_files.open_file(self.directory, GAMES_FILE, os.O_RDONLY)
        except OSError:
            return self._appended
        try:
            data = os.pread(fd, MAX_TAIL_BYTES, self._offset)
        finally:
            os.close(fd)
        complete = data[:data.rfind(b"\n") + 1]  # a line being written waits for its end
        self._offset += len(complete)
        for line in complete.splitlines():
            try:
                record = GameRecord.from_json(json.loads(line))
            except (ValueError, RecursionError):
                continue
            if record.game_id not in recorded:
                self._appended.append(record)
        return self._appended

    def _infos_shown(self, game: dict[str, Any]) -> list[str | None]:
        """A card's ``info`` lines: a team's page holds its own bot's alone, as the report's does."""
        return [info if self.bot is None or name == self.bot else None
                for info, name in zip(game["infos"], game["players"])]

    def status(self) -> Status:
        """``running``, ``finished``, ``stopped`` or ``waiting``, with the line the page shows."""
        self.results()
        assert self._status is not None
        return self._status

    def _read_status(self, results: ReadResults, problem: str | None) -> Status:
        if problem is not None and os.path.lexists(self.directory / GAMES_FILE):
            # Results there, but not readable (a link in place of games.jsonl, a broken file): say why.
            return Status("problem", f"cannot read the results: {safe(problem)}")
        # The room's time, not UTC: the server runs in the room it is shown in (the zone named all the same).
        stamp = datetime.now().astimezone().strftime("%H:%M:%S %Z")
        played = results.played()
        total = _scheduled(results)
        of = f"{played} of {total}" if total is not None else str(played)
        if current_run(self.directory) is not None:
            return Status("running", f"running: {of} games played; updated {stamp}")
        if not os.path.lexists(self.directory / GAMES_FILE):
            return Status("waiting", f"waiting for the run: no results in {self.directory} yet")
        # (Only an SPRT's verdict is read of the standings: without one, the page alone folds the games.)
        sprt = results.standings().sprt if results.rules.sprt is not None else None
        if sprt is not None and sprt.decided:
            return Status("finished", f"finished: the SPRT is decided ({sprt.verdict}) after {played} games")
        if (results.rounds is not None and results.rounds.finished) or (total is not None and played >= total):
            return Status("finished", f"finished: {played} games played")
        return Status("stopped", f"stopped: {of} games played (run it again to resume)")

    def snapshot(self) -> dict[str, Any]:
        """What the page's script gets: the status and the games in progress."""
        status = self.status()
        return {"status": status.to_json(), "live": self.live_games(), "hold_s": self._endings.hold_s,
                "champion": self._champion.to_json() if self._champion is not None else None, "time": time.time()}


def _read(found: FoundResults) -> tuple[ReadResults, int]:
    """The results of ``found`` as the page shows them, and where in the log
    their reading ended.  Past :data:`LATEST_GAMES` games, the standings
    ``arena standings`` keeps in the index, carried on over the games added
    since, and the latest games only (the page lists no more): what the
    server holds grows with the bots, not the games.  Else (or where the
    standings cannot be carried on: a Swiss, a match) every record."""
    log = _stat_key(found.directory / GAMES_FILE)
    small = log is not None and log[0] < LATEST_GAMES * _SMALLEST_RECORD_BYTES
    carried = None if small else carried_standings(found)
    if carried is not None and carried[0].games > LATEST_GAMES:
        kept = carried[0]
        try:
            return kept.latest(found.directory, LATEST_GAMES), kept.place.offset
        except LogRewritten:  # (a --replay since it was read: read whole)
            pass
    results, _, loaded = read_loaded(found)
    return results, loaded.place.offset if loaded.place is not None else 0


def _scheduled(results: ReadResults) -> int | None:
    """The games the tournament schedules in all, when known in advance (not
    for a Swiss or knockout, whose rounds are paired as they go)."""
    competition, meta = results.competition, results.meta
    if competition is None or competition.paired_by_results:
        return None
    if meta is None:
        return schedule_size(competition)
    # The whole run's, not the rounds played so far (what the readers schedule), and at
    # most its limit: a match under an SPRT says "at most N games", and so does the page.
    total = schedule_size(replace(competition, rounds=max(competition.rounds, meta.competition.rounds)))
    return min(total, meta.games) if meta.games is not None else total


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns)
