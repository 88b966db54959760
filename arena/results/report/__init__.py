"""The HTML report of a tournament: one self-contained page.

The page holds the standings (the same tables as ``arena standings``, but a
Swiss or knockout's rounds drawn by :mod:`.bracket` rather than as text),
three SVG charts, the list of games with filters and sorting, and a game viewer.
Nothing is fetched when it is opened: the stylesheet, the script, the piece
symbols and the games (as JSON) are all inlined from the files beside this
module (``report.css``, ``viewer.js``, ``pieces.svg``) into the page's template
(``templates/report.html``, rendered by :mod:`arena.results.pages`).
Past :data:`INLINE_GAMES` games, the games' moves are in files beside the
page instead (:func:`build_report_files`), which it loads as scripts when a
game is opened: its size then grows with the bots, not the moves.

:func:`build_report` is a pure function of the records; :func:`write_report`
replaces the file atomically, so a browser never reads half a report, and
:class:`LiveReport` rewrites it every few seconds while ``arena run`` plays.
"""

from __future__ import annotations

import hmac
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

import engine
from arena.base import safe_files
from arena.base.safe_files import RefusedFile
from arena.game.records import GameRecord
from arena.results.grade import grade_sheets
from arena.results.logs import game_log_tail, protocol_log_file, refused_note
from arena.results.report.board import board_svg, pieces_svg
from arena.results.report.bracket import rounds_html
from arena.results.report.charts import (HIGHLIGHTED, bot_colors, llr_chart, llr_history, move_time_chart, move_times,
                                         rating_chart, results_chart)
from arena.results.report.data import CHUNK_GAMES, GameChunks, game_list, games_data, sheet_json
from arena.results.meta import META_FILE, TournamentMeta
from arena.results.reading import ReadResults, results_of
from arena.results.standings import INITIAL_MU, INITIAL_SIGMA, Standings
from arena.results.sprt import SprtConfig
from arena.results.statistics import scores_of
from arena.results.game_index import INDEX_FILE
from arena.results.seals import seal, user_key
from arena.results.store import GAMES_FILE, LOCK_FILE, LOGS_DIR, REPLACED_FILE, SCRATCH_DIR, write_atomically
from arena.results.pages import Markup, render
from arena.results.tables import HEAD_TO_HEAD_MAX_BOTS, Table, standings_tables, standings_title, table_notes

__all__ = ["GAMES_FILE_NAME", "GAMES_SUFFIX", "INLINE_GAMES", "REPORT_FILE", "LiveReport", "Progress", "ReportPathRefused",
           "build_report", "build_report_files", "check_report_path", "games_folder", "games_href", "logs_href",
           "write_report"]

#: The report's file name in a results directory.
REPORT_FILE = "report.html"
#: Seconds between two refreshes of a live report (the page reloads as often).
REFRESH_S = 5.0
#: A report of more games than this keeps their moves in files beside the
#: page (:func:`build_report_files`); up to it, one file holds everything.
INLINE_GAMES = 2000
#: The folder of those files beside the page ``NAME.html``: ``NAME.games``.
GAMES_SUFFIX = ".games"
#: The name of each of those files (:attr:`GameChunks.names`).
GAMES_FILE_NAME = re.compile(r"\d{4,9}-[0-9a-f]{16}\.js")


@dataclass(frozen=True)
class Progress:
    """How far a running tournament is, for a live report."""

    played: int
    total: int


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def build_report(results: ReadResults, **options: Any) -> str:
    """The report page of ``results``, ranked as ``arena standings`` ranks
    them (the same :class:`ReadResults`), holding every game whole; the
    keywords are :func:`build_report_files`'s."""
    return build_report_files(results, None, **options)[0]


def build_report_files(
    results: ReadResults,
    games_href: str | None,
    *,
    inline_games: int = INLINE_GAMES,
    chunk_games: int = CHUNK_GAMES,
    progress: Progress | None = None,
    live: bool = False,
    now: datetime | None = None,
    results_dir: Path | None = None,
    logs_href: str | None = None,
    bot: str | None = None,
    status: str | None = None,
    linked: Sequence[str] = (),
) -> tuple[str, GameChunks | None]:
    """The report page of ``results``, ranked as ``arena standings`` ranks
    them; the games of bots no longer in the tournament are in the viewer,
    out of the ranking.  ``progress`` says how far the run that writes the
    report is; ``live`` marks the report of a run still playing, which
    reloads itself.

    ``results_dir``: where the bots' logs are read, for the end of a
    forfeiting bot's stderr beside its forfeit; ``logs_href``: the logs
    folder as the page links it (relative to the page), None for no links.
    ``bot``: just that bot's page (its games only, its stderr, forfeit
    details and ``info`` in each of them, no other bot's; no standings): to
    hand to one team.

    ``status``: the line under the title, instead of the one ``progress``
    gives; ``linked``: the addresses of the stylesheets and scripts the page
    loads instead of inlining its own (the live view serves them as files,
    so that its Content-Security-Policy allows no inline script).

    With ``games_href`` and more than ``inline_games`` games, also the files
    of their moves (:class:`GameChunks`, of at most ``chunk_games`` games
    each), which the page loads from ``games_href`` (ending with ``/``,
    relative to the page) when a game is opened: the page then holds the
    standings, charts, bot pages and a compact list of the games, and its
    size grows with the bots, not the moves.  Else None: the page holds
    every game whole."""
    meta = results.meta
    records = results.records
    finished = progress is not None and not live and progress.played >= progress.total
    standings = results.standings(at_limit=finished)
    shown = [*records, *results.left_out]  # every game played, in the viewer and the bracket's links
    if bot is not None:
        records = [r for r in records if bot in r.players.values()]
        shown = [r for r in shown if bot in r.players.values()]
    game = engine.get_game(meta.competition.game if meta is not None else next((r.game for r in shown), None) or engine.GAMES[0])
    colors = bot_colors([b.name for b in standings.bots])
    drawing = rounds_html(results.rounds) if results.rounds is not None else Markup()
    # Each page's numbers, from the one scoring model: the script shows them, it does not count.
    sheets = grade_sheets(results, standings, [bot] if bot is not None else [b.name for b in standings.bots])
    chunks: GameChunks | None = None
    if games_href is not None and len(shown) > inline_games:
        tails = None if results_dir is None else lambda some: _stderr_tails(some, results_dir, bot)
        games, chunks = game_list(game, shown, [b.name for b in standings.bots], bot, chunk_games=chunk_games,
                                  tails=tails)
        rows = {record.game_id: row for row, record in enumerate(chunks.records)}
        data = {**games, "chunks": {"href": games_href, "starts": chunks.starts, "names": chunks.names},
                "sheets": {name: sheet_json(sheet, rows, game.colors) for name, sheet in sheets.items()}}
    else:
        data = {**games_data(game, shown, [b.name for b in standings.bots], _stderr_tails(shown, results_dir, bot),
                             only_bot=bot),
                "sheets": {name: sheet.to_json() for name, sheet in sheets.items()}}
    data.update({"live": live, "refresh_s": REFRESH_S, "only_bot": bot,
                 "logs_href": None if bot is not None else logs_href, "versions": _versions(shown, results.versions),
                 "protocol_bots": _protocol_bots(shown, results_dir) if bot is None and logs_href else []})
    title = (meta.name if meta is not None else "") or "Tournament"
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S UTC")
    if status is None:
        status = _status(standings, progress, live, stamp)
    charts: dict[str, Markup | None] = {"rating_chart": None, "llr_chart": None}
    if standings.total_games:
        charts["rating_chart"] = rating_chart({b.name: b.history for b in standings.bots}, colors,
                                              (INITIAL_MU, INITIAL_SIGMA))
        charts["results_chart"] = results_chart(standings.bots, colors)
        charts["move_time_chart"] = move_time_chart(standings, move_times(records), colors)
        if standings.sprt is not None and standings.match_bots is not None:
            llrs = llr_history(standings.sprt.config, scores_of(records, standings.match_bots[0])[1])
            config = standings.sprt.config
            charts["llr_chart"] = llr_chart(llrs, config.lower, config.upper)
    items = None
    if bot is None and (standings.total_games or shown):
        # Games played, if only by bots since removed: the ranking of those
        # still in, as arena standings gives it (0 games each, perhaps).
        items = _drawn(standings_tables(standings), drawing)
    if bot is not None:  # a team's page: its games, not the others' standings
        title = f"{title}: {bot}"
    page = render(
        "report.html",
        # The name and description come from tournament.json: input like the records.
        title=f"{title}: {standings_title(standings)}", heading=title,
        description=meta.description if meta is not None else "",
        subtitle=f"{standings_title(standings)} · {_time_control(meta)}", status=status, live=live, bot=bot,
        stylesheets=[a for a in linked if a.endswith(".css")], css=Markup(_asset("report.css")),
        scripts=[a for a in linked if a.endswith(".js")], script=Markup(_asset("viewer.js")),
        pieces=Markup(pieces_svg()), board=board_svg(game.name, game.to_json(game.new_state())["board"]),
        items=items, notes={t.key: table_notes(standings, t.key) for t in items or () if isinstance(t, Table)},
        fold_above=HEAD_TO_HEAD_MAX_BOTS, drawing=drawing, chart_names=[b.name for b in standings.bots], highlighted=HIGHLIGHTED, **charts, data=data,
    )
    return page, chunks


def _status(standings: Standings, progress: Progress | None, live: bool, stamp: str) -> str:
    """The line under the title: how far the run that wrote the report is."""
    if live and progress is not None:
        return f"live: {progress.played} of {progress.total} games played, updated {stamp}; this page reloads every {REFRESH_S:g} s"
    if progress is not None and progress.played < progress.total and standings.sprt is not None and standings.sprt.decided:
        return f"{progress.played} of {progress.total} games played: the SPRT is decided; written {stamp}"
    if progress is not None and progress.played < progress.total:
        return f"{progress.played} of {progress.total} games played: the run stopped (run it again to resume); written {stamp}"
    return f"{standings.total_games} games; written {stamp}"


class ReportPathRefused(ValueError):
    """The report would replace a file it must not; ``str()`` is one line saying which and why."""


#: What a results directory holds besides reports: a report never replaces one.
_RESULTS_FILES = (GAMES_FILE, META_FILE, REPLACED_FILE, LOCK_FILE, INDEX_FILE, f"{INDEX_FILE}-wal", f"{INDEX_FILE}-shm")
_RESULTS_DIRS = (LOGS_DIR, SCRATCH_DIR)


def check_report_path(path: Path, *, force: bool = False, games: bool = True) -> None:
    """Refuse (:class:`ReportPathRefused`) to write a report at ``path`` when
    that would replace a file of a results directory (its games, its
    ``tournament.json``, its archive, its lock, anything under its logs or
    scratch directories), whatever ``force`` says, or, unless ``force``, an
    existing file that is not an HTML page: ``-o`` naming the wrong file
    must not lose what was there.  With ``games``, the folder of its games
    beside it (:func:`games_folder`) must be one the report may write in:
    none there yet, or a folder (not a link) outside the results' own."""
    folder = games_folder(path)
    if games and folder == path:
        raise ReportPathRefused(f"{path}: a report's name cannot end with {GAMES_SUFFIX} (the folder of its games "
                                f"beside it is named so); name another file with -o")
    for target, what in ((path, "report"), (folder, "report's games")) if games else ((path, "report"),):
        real = target.resolve()  # a link is judged by what it points to
        for parent in real.parents:
            if _is_results_dir(parent):
                inside = real.relative_to(parent)
                if str(inside) in _RESULTS_FILES or inside.parts[0] in _RESULTS_DIRS:
                    raise ReportPathRefused(
                        f"{target} is part of the results in {parent} ({inside}): the {what} is not written over it; "
                        f"name another file with -o"
                    )
                break
    if games and (folder.is_symlink() or (os.path.lexists(folder) and not folder.is_dir())):
        kind = "a link" if folder.is_symlink() else "not a folder"
        raise ReportPathRefused(f"{folder} is {kind}: the report's games are written into a folder of their own "
                                f"beside it, never through a link; name another file with -o")
    target = path.resolve()
    if force or not target.is_file():
        return
    try:
        with open(target, "rb") as handle:
            head = handle.read(1024)
    except OSError:
        return  # unreadable: writing will say why
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n").lower().startswith((b"<!doctype html", b"<html")):
        raise ReportPathRefused(f"{path} exists and is not an HTML page: the report is not written over it; "
                                f"--force replaces it")


def games_folder(path: Path) -> Path:
    """The folder of the games of a large report written at ``path``: ``report.games`` beside ``report.html``."""
    return path.with_name(path.stem + GAMES_SUFFIX)


def games_href(path: Path) -> str:
    """:func:`games_folder` as the page at ``path`` links it."""
    return quote(games_folder(path).name) + "/"


def _is_results_dir(directory: Path) -> bool:
    return (directory / GAMES_FILE).is_file() or (directory / META_FILE).is_file()


def logs_href(results_dir: Path, report_path: Path) -> str | None:
    """The results directory's logs folder as a page at ``report_path`` links
    it; None when there is none (records copied without their logs)."""
    if not (results_dir / LOGS_DIR).is_dir():
        return None
    relative = os.path.relpath((results_dir / LOGS_DIR).resolve(), report_path.resolve().parent)
    return Path(relative).as_posix() + "/"


#: The most of a file of games read to see whether it can be kept (a few hundred games' moves are far less).
_MAX_GAMES_FILE_BYTES = 64 << 20


def write_report(path: str | Path, text: str, games: GameChunks | None = None) -> None:
    """Replace the file at ``path`` with ``text`` in one step, so a browser
    never reads half a report.  ``games``: the files of its games, written
    first into :func:`games_folder` (made if need be, no link followed), each
    in one step; a file already there under its name holds the same games
    and is kept when this user's arena sealed it (:func:`_seal`), and the
    files of an earlier writing it no longer names are removed."""
    path = Path(path)
    if games is not None:
        folder = games_folder(path).name
        fd = safe_files.open_dir(path.parent, folder, create=True)
        key = user_key()
        try:
            there = {name for name in os.listdir(fd) if GAMES_FILE_NAME.fullmatch(name)}
            for number, name in enumerate(games.names):
                if key is None or name not in there or not _sealed(path.parent, PurePath(folder, name), key):
                    script = games.script(number).encode()
                    safe_files.write_atomically_in(path.parent, PurePath(folder, name), _seal(key, name, script) + script)
            for name in there - set(games.names):
                os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)
    write_atomically(path, text)


def _seal(key: bytes | None, name: str, script: bytes) -> bytes:
    """A first line saying this user's arena wrote ``script`` as file ``name``:
    a file planted under that name in the results directory (it runs as a
    script of the organiser's page) is never kept as one of ours."""
    if key is None:
        return b""
    digest = seal(key, name.encode() + b"\0" + script, b"report-games", 64)
    return b"// arena %s\n" % digest.hex().encode()


def _sealed(root: Path, file: PurePath, key: bytes) -> bool:
    """``file`` below ``root`` (no link followed) is one this user's arena wrote, as it is."""
    try:
        data = safe_files.read_file(root, file, _MAX_GAMES_FILE_BYTES)
    except OSError:
        return False
    first, _, script = data.partition(b"\n")
    return hmac.compare_digest(first + b"\n", _seal(key, file.name, script))


class LiveReport:
    """Keeps the report of a running tournament fresh without slowing it:
    :meth:`update` rewrites it at most every :data:`REFRESH_S` seconds, and
    never spends more than a tenth of the run's time on it however large the
    tournament grows; :meth:`finish` writes the final report.

    A report that cannot be written (disk full, no permission) must never stop
    the games: the first error is kept in :attr:`error` and no write is tried again."""

    def __init__(
        self, path: str | Path, meta: TournamentMeta, sprt: SprtConfig | None = None,
        clock: Callable[[], float] = time.monotonic, left_out: Sequence[GameRecord] = (),
    ) -> None:
        self.path = Path(path)
        # The report of a run is written into its results directory: the logs are beside it.
        self.results_dir = self.path.parent
        self.logs_href = logs_href(self.results_dir, self.path)
        #: The run's ``tournament.json``, as it is now (a new round adds its pairing).
        self.meta = meta
        self.sprt = sprt
        #: Games of bots no longer in the tournament: on show, out of the ranking.
        self.left_out = list(left_out)
        self.error: str | None = None
        self._clock = clock
        self._next = 0.0

    def update(self, records: Sequence[GameRecord], total: int) -> bool:
        """Rewrite the live report if it is due; True when it was written."""
        started = self._clock()
        if started < self._next or self.error:
            return False
        self._write(*build_report_files(self._results(records), games_href(self.path), live=True,
                                        progress=Progress(len(records), total), results_dir=self.results_dir,
                                        logs_href=self.logs_href))
        self._next = started + max(REFRESH_S, 10 * (self._clock() - started))
        return self.error is None

    def finish(self, records: Sequence[GameRecord], total: int) -> None:
        """Write the report of a run that has ended, all ``total`` games played or not."""
        if not self.error:
            self._write(*build_report_files(self._results(records), games_href(self.path),
                                            progress=Progress(len(records), total), results_dir=self.results_dir,
                                            logs_href=self.logs_href))

    def _results(self, records: Sequence[GameRecord]) -> ReadResults:
        # The run's records are those it keeps: read as arena report reads the directory.
        return results_of(self.results_dir, self.meta, [*records, *self.left_out], sprt=self.sprt)

    def _write(self, text: str, games: GameChunks | None) -> None:
        try:
            write_report(self.path, text, games)
        except OSError as exc:
            self.error = f"cannot write the report {self.path}: {exc.strerror or exc}; the games are kept"


def _stderr_tails(
    records: Sequence[GameRecord], results_dir: Path | None, bot: str | None,
) -> dict[str, list[str | None]]:
    """By game id, the end of the stderr shown for each seat: on a bot's page
    that bot's in every game, else the forfeiting bot's in a forfeit."""
    if results_dir is None:
        return {}
    tails: dict[str, list[str | None]] = {}
    for record in records:
        seats = list(record.players.values())
        if bot is not None:
            shown = [name == bot for name in seats]
        elif record.forfeit_by is not None:
            shown = [color == record.forfeit_by for color in record.players]
        else:
            continue
        tail = [_stderr_tail(results_dir, name, record.game_id) if show else None for name, show in zip(seats, shown)]
        if any(t is not None for t in tail):
            tails[record.game_id] = tail
    return tails


def _stderr_tail(results_dir: Path, bot: str, game_id: str) -> str | None:
    """The end of ``bot``'s log of ``game_id``, or the note saying why it is not read."""
    try:
        return game_log_tail(results_dir, bot, game_id)
    except RefusedFile as exc:
        return f"[{refused_note(exc, results_dir)}]"


def _protocol_bots(records: Sequence[GameRecord], results_dir: Path | None) -> list[str]:
    """The bots whose last game shown has a protocol log (``debug``), whose
    pages link each game's: one look per bot, not one per game."""
    last = {name: record.game_id for record in records for name in record.players.values()}
    if results_dir is None:
        return []
    return sorted(name for name, game_id in last.items()
                  if (path := protocol_log_file(results_dir, name, game_id)) is not None and path.is_file())


def _versions(records: Sequence[GameRecord], now: dict[str, str]) -> dict[str, dict[str, Any]]:
    """By bot: its version ``now`` (``tournament.json``'s) and the games each
    version played (the records'), for the bot pages."""
    out: dict[str, dict[str, Any]] = {name: {"now": version, "played": {}} for name, version in now.items()}
    for record in records:
        for color, name in record.players.items():
            version = (record.versions or {}).get(color)
            entry = out.setdefault(name, {"now": None, "played": {}})
            if version is not None:
                entry["played"][version] = entry["played"].get(version, 0) + 1
    return out


def _time_control(meta: TournamentMeta | None) -> str:
    if meta is None or meta.time_control is None:
        return "time control unknown"
    return f"time control {meta.time_control}"


#: The text tables of the rounds (``arena standings``), which the report draws instead.
_DRAWN_TABLES = ("rounds", "bracket")


def _drawn(tables: Sequence[Table], drawing: Markup) -> list[Table | Markup]:
    """The standings tables, the rounds' text tables giving way to their
    ``drawing``, where the first of them was."""
    out: list[Table | Markup] = []
    for table in tables:
        if table.key not in _DRAWN_TABLES:
            out.append(table)
        elif drawing:
            out.append(drawing)
            drawing = Markup()
    return out
