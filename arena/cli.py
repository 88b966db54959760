"""The ``arena`` command: a thin layer over functions the tests call directly."""

from __future__ import annotations

import functools
import logging
import os
import random
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

import engine
from arena import __version__
from arena.progress import CheckView, Checked, MatchView, Presenter, RunView, View
from arena.base import stop_signals
from arena.bot.process import ArenaWriteError
from arena.bot.forfeits import FORFEIT_REASONS
from arena.bot.reaper import kill_all
from arena.bot.sandbox import SANDBOXES, SandboxUnavailable
from arena.bot.spec import STARTUP_TIMEOUT_S
from arena.base.text import safe
from arena.check import (CHECK_FORMATS, DEFAULT_GAMES, DEFAULT_REFERENCE, ONE_BOT_GAMES, ONE_BOT_TIME_CONTROL, REFERENCES, BotCheck,
                         check_bot, check_tournament, render_checks)
from arena.game.clock import TimeControl, parse_time_control
from arena.game.records import GameRecord, schedule_key
from arena.formats.competition import SEEDS
from arena.live.endings import HOLD_S
from arena.results.forfeits import describe_forfeit, forfeit_lines
from arena.results.games import RESULTS, GameFilter, render_games, select_games
from arena.results.grade import SHEET_FORMATS, grade_sheet, render_sheet
from arena.results.pending import pending_round, render_pending
from arena.results.report import (REPORT_FILE, ReportPathRefused, build_report_files, check_report_path, games_folder,
                                  games_href, logs_href, write_report)
from arena.results.show import find_game, frames, game_heading, protocol_logs, stderr_tails
from arena.results.standings import compute_standings
from arena.results.sprt import CAP_FACTOR, SPRT_MODELS, SprtConfig
from arena.results.store import ResultsConflict, ResultsStore, StoreBusy, StoreError
from arena.results.tables import OUTPUT_FORMATS, TABLE_ALIASES, TABLES, format_elo_interval, format_nelo, format_percent, render_standings
from arena.run import ray_executor
from arena.run.carried_run import carried_run_standings
from arena.run.config import ConfigError, EXECUTORS, TournamentConfig, check_programs, load_config, openings_from_option, sprt_from_option, with_debug, with_executor
from arena.run.environments import with_environments
from arena.run.bot_option import MatchBot, bot_from_option
from arena.run.match import MATCH_GAMES, MatchResult, clocks_text, match_config, match_header, other_test, play_match
from arena.run.preflight import StartupFailed
from arena.run.remote_settings import DEFAULT_HOST as REMOTE_HOST, RemoteSettings
from arena.run.remote_tokens import TokenFileError, make_token
from arena.results.meta import MetaCluster, MetaError, read_meta
from arena.results.reading import ReadResults
from arena.run.results_dir import read_results
from arena.run.standings_read import StandingsRead, read_standings
from arena.run.spec_queue import HeadLost, WorkerDied
from arena.run.tournament import REPLAYED_BY_DEFAULT, RunSummary, run_tournament


#: The game ``arena match``, ``arena check`` of one bot and ``arena play`` play unless told.
DEFAULT_GAME = "oxono"
#: Where the live view listens unless told: this machine only (its address holds the access token).
LIVE_HOST = "127.0.0.1"


def _epilog(example: str, page: str) -> str:
    # \b: click keeps these lines as they are instead of rewrapping them.
    return f"\b\nExample:\n  {example}\nDocs: docs/{page} (and README.md)"


app = typer.Typer(
    help="Totem Arena: play OXONO and YOXII bots against each other and rank them.",
    epilog=_epilog("arena run tournaments/oxono-demo.yaml", "tournaments.md"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: rich's panels label flags such as --help as taking a <bool>.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"arena (Totem Arena) {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_version, is_eager=True),
) -> None:
    """Totem Arena: play OXONO and YOXII bots against each other and rank them."""
    arena_log = logging.getLogger("arena")
    if not any(isinstance(handler, _WarningLines) for handler in arena_log.handlers):
        arena_log.addHandler(_WarningLines(logging.WARNING))


class _WarningLines(logging.Handler):
    """The warnings of the layers below, while a command runs (a Ray actor
    lost, its game played again), as the command's own warning lines."""

    def emit(self, record: logging.LogRecord) -> None:
        warn(record.getMessage())


# Messages quote bots' output, results files, paths and YAML text: markup
# only in our own literals (anything else is escaped or printed with
# markup=False), no emoji codes, and no control character but a line break
# (everything printed goes through safe()).
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)


def say(text: str, console: Console = out) -> None:
    """Print text literally: no markup, no highlighting, no wrapping (pipes get whole lines).
    Every line is cleaned (:func:`~arena.base.text.safe`) on the way out:
    messages quote bots and results files, and no escape sequence they hold
    may reach the terminal, whichever path brought it here."""
    console.print(safe(text, lines=True), markup=False, highlight=False, soft_wrap=True)


_failed = False


def fail(message: str, code: int = 2) -> NoReturn:
    global _failed
    _failed = True
    error(message)
    raise typer.Exit(code)


def error(message: str) -> None:
    """An error that stops only a part (the command goes on)."""
    err.print(f"[bold red]error:[/] {escape(safe(message, lines=True))}", highlight=False, soft_wrap=True)


def fail_store(exc: StoreError, kept: int, directory: Path) -> NoReturn:
    """A results directory that cannot be written, and the games it keeps (said only when there are some)."""
    fail(f"{exc}; {kept} finished games are kept in {directory}" if kept else str(exc))


def warn(text: str) -> None:
    err.print(f"[yellow]warning:[/] {escape(safe(text, lines=True))}", highlight=False, soft_wrap=True)


def check_format(fmt: str) -> str:
    if fmt.lower() not in OUTPUT_FORMATS:
        fail(f"unknown format {fmt!r}; use one of {', '.join(OUTPUT_FORMATS)}")
    return fmt.lower()


def show_forfeits(records: list[GameRecord], fmt: str, *, every: bool = False, hint: str = "") -> None:
    """Forfeit details under a text table (machine formats stay as they are)."""
    if fmt in ("plain", "github"):
        lines = forfeit_lines(records, every=every, hint=hint, destination="markdown" if fmt == "github" else "terminal")
        if lines:
            say("\n" + "\n".join(lines))


F = TypeVar("F", bound=Callable[..., None])
S = TypeVar("S")


def interruptible(command: F) -> F:
    """Ctrl-C (or SIGTERM/SIGHUP) where a command has no handler of its own,
    e.g. while it reads its input: the one line, not a traceback.

    ``arena run`` and ``arena match`` (and ``arena check`` of a file) take a
    stop signal as a flag (:func:`~arena.base.stop_signals.as_flag`): their
    loops wait on it and stop where that is safe.  Every other command (and
    those before their loops start) has no loop of its own: reading a long
    log, waiting on a bot or on stdin, a web server.  Nothing there would
    look at a flag, so the signal raises KeyboardInterrupt wherever the
    command is, as Python's own Ctrl-C does."""

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> None:
        try:
            command(*args, **kwargs)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper  # type: ignore[return-value]


DEBUG_HELP = ("Log every line sent to and received from this bot, to logs/BOT/games/GAME.protocol.log "
              "(arena show --protocol); repeat it or list bots with commas.")


@app.command(epilog=_epilog("arena run tournaments/oxono-demo.yaml -j 2 -f github", "tournaments.md"))
@interruptible
def run(
    file: Path = typer.Argument(..., help="The tournament file (YAML)."),
    concurrency: int = typer.Option(None, "--concurrency", "-j", min=1, help="Games at once (default: the file's, else the number of cores)."),
    fmt: str = typer.Option("plain", "--format", "-f", help=f"Standings format at the end: {', '.join(OUTPUT_FORMATS)}."),
    replay_forfeits: str = typer.Option(
        ",".join(REPLAYED_BY_DEFAULT), "--replay-forfeits", metavar="REASONS",
        help=f"Play again on resume the games forfeited for these reasons, comma-separated: {', '.join(FORFEIT_REASONS)}; 'none' for none.",
    ),
    executor: str = typer.Option(None, "--executor", "-e", help=f"Where games run: {' or '.join(EXECUTORS)} (default: the file's, else local)."),
    ray_address: str = typer.Option(None, "--ray-address", help="The Ray cluster to run on, e.g. 'auto' or 'head:6379' (implies --executor ray)."),
    replay_bots: list[str] = typer.Option(
        [], "--replay", metavar="BOT", help="Play every game of this bot again (its old records go to replaced.jsonl); repeat it or list bots with commas.",
    ),
    keep_bots: list[str] = typer.Option(
        [], "--keep", metavar="BOT", help="Keep the games an earlier version of this bot played, marked as such; repeat it or list bots with commas.",
    ),
    replay_games: list[str] = typer.Option(
        [], "--replay-game", metavar="ID", help="Play this game again under its id, e.g. a disputed one (its record goes to replaced.jsonl); repeat it or list ids with commas.",
    ),
    serve_port: int = typer.Option(None, "--serve", metavar="PORT", min=1, max=65535, help="Also serve the live web page (arena serve) on this port while it plays."),
    serve_host: str = typer.Option(LIVE_HOST, "--serve-host", metavar="HOST", help="With --serve: the address to listen on (its address printed with the access token, which any other user needs)."),
    debug_bots: list[str] = typer.Option([], "--debug", metavar="BOT", help=DEBUG_HELP),
    remote_port: int = typer.Option(None, "--remote-port", metavar="PORT", min=0, max=65535, help=f"Listen for remote bots (remote: true) on this port of remote_listen's host (default {REMOTE_HOST}); see docs/remote.md."),
) -> None:
    """Play a tournament, resuming from the results already in its output directory."""
    try:
        config = with_debug(with_executor(load_config(file), executor, ray_address), debug_bots)
        # Installed before the progress bar: a long install says what it was.
        installs = with_environments(config, build=True)
    except ConfigError as exc:
        fail(str(exc))
    config = installs.config
    for line in installs.installed_now():
        say(line, err)
    if remote_port is not None:
        config = replace(config, remote=replace(config.remote, port=remote_port))
    fmt = check_format(fmt)
    replay = _reasons(replay_forfeits)
    show = _RunShow(config, named_replays=bool(replay_bots or replay_games))
    with _playing(show, serve_port, serve_host):
        summary = run_tournament(config, concurrency=concurrency, on_start=show.start, on_record=show.record,
                                 on_cluster=_say_cluster, on_remote=_say_remote, replay_forfeits=replay,
                                 replay=_listed(replay_bots), keep=_listed(keep_bots), replay_games=_listed(replay_games))
    show.warn_later(summary)
    _say_run(summary, config, fmt, file)


def _say_run(summary: RunSummary, config: TournamentConfig, fmt: str, file: Path) -> None:
    """``arena run``'s end: the standings (in ``fmt``) and forfeits on stdout, what was played and kept on stderr."""
    carried = carried_run_standings(config, summary.records, versions=summary.versions, opened=summary.opened)
    if carried is not None:
        shown, forfeits = carried
    else:
        at_limit = summary.sprt is not None and summary.sprt.at_limit
        names = [bot.name for bot in config.bots]
        shown = compute_standings(summary.records, names, config.competition.rules, at_limit=at_limit,
                                  versions=summary.versions, rounds=summary.rounds,
                                  challenger=config.competition.challenger, remote=config.remote_bots)
        forfeits = sorted(summary.records, key=schedule_key)
    say(render_standings(shown, fmt))
    show_forfeits(forfeits, fmt, hint=f"all of them: arena standings {file} --forfeits")
    if summary.sprt is not None and summary.sprt.decided and len(summary.records) < summary.total:
        say(f"the SPRT is decided: {len(summary.records)} of {summary.total} scheduled games were needed", err)
    say(f"{summary.played} games played, {summary.resumed} resumed; results in {config.output}", err)
    if summary.report is not None:
        say(f"report: {summary.report}", err)



def _progress(view: View[S], log: Console = err) -> Presenter[S]:
    """A command's progress as ``view`` says it: its bar on stderr where that is a terminal
    (stdout keeps what the command prints at the end), its lines on ``log`` where that is not one."""
    return Presenter(view, bar=err, log=log, write=lambda text: say(text, log))


class _Playing(Protocol):
    """``arena run`` or ``arena match`` as it plays (:func:`_playing`): its progress, and what it says when it ends early."""

    presenter: Presenter[Any]
    #: Its results directory, if it keeps one.
    output: Path | None

    def kept(self) -> int:
        """The finished games kept so far."""
        ...

    def interrupted(self) -> str:
        """The line of an interrupt."""
        ...

    def lost(self, exc: WorkerDied) -> str:
        """The line of a worker lost."""
        ...


@contextmanager
def _playing(show: _Playing, serve_port: int | None, serve_host: str) -> Iterator[None]:
    """The games of ``arena run`` or ``arena match`` played in the block: stop signals as a flag, the live view
    beside them (``--serve``), the progress stopped at the end, then an early end said in one line and its exit code."""
    try:
        try:
            with stop_signals.as_flag(), _live_view(show.output, serve_port, serve_host):
                yield
        finally:
            show.presenter.stop()  # first: the message comes after the progress's last line
    except KeyboardInterrupt:
        fail(show.interrupted(), 130)
    except (ConfigError, ResultsConflict, StoreBusy, StartupFailed) as exc:  # ConfigError: a bot's program is missing, Ray cannot be had
        fail(str(exc))
    except StoreError as exc:
        fail_store(exc, show.kept(), show.output)  # none kept when the directory could not even be made
    except WorkerDied as exc:
        fail(show.lost(exc), 1)


class _RunShow:
    """``arena run`` as it plays: the warnings and the resume said as it starts, its progress
    (:class:`~arena.progress.RunView`) on stderr, and what it says when it ends early."""

    def __init__(self, config: TournamentConfig, *, named_replays: bool) -> None:
        self._config, self.output, self._named_replays = config, config.output, named_replays
        self._view = RunView(config)
        self.presenter = _progress(self._view)
        self._warned = 0

    def start(self, summary: RunSummary) -> None:
        self._warned = len(summary.warnings)
        for warning in summary.warnings:
            warn(warning)
        if summary.resumed or summary.replayed:
            which = "" if self._named_replays else "forfeited "
            replayed = f"; playing {summary.replayed} {which}games again (the old records go to replaced.jsonl)" if summary.replayed else ""
            say(f"resuming: {summary.resumed} of {summary.total} games already in {self.output}{replayed}", err)
        _say_where(self._config)
        self._view.start(summary)
        self.presenter.start(len(summary.records), summary.total, summary)

    def record(self, record: GameRecord, summary: RunSummary) -> None:
        self._view.add(record)
        self.presenter.update(len(summary.records), summary.total, summary)

    def warn_later(self, summary: RunSummary) -> None:
        """The warnings that came after the start."""
        for warning in summary.warnings[self._warned:]:
            warn(warning)

    def kept(self) -> int:
        try:
            return len(ResultsStore(self.output).load().records)
        except StoreError:  # games.jsonl itself is what cannot be read: the error says so
            return 0

    def interrupted(self) -> str:
        return f"interrupted; {self.kept()} finished games are kept in {self.output}. Run the same command to resume."

    def lost(self, exc: WorkerDied) -> str:
        return f"{exc}: {self.kept()} games stored, run again to resume" if isinstance(exc, HeadLost) else f"{exc}. Run the same command to resume."


def _say_where(config: TournamentConfig) -> None:
    if config.executor == "ray":  # Ray takes seconds to connect or start: say what is going on
        say(f"playing on {ray_executor.describe_ray_address(ray_executor.ray_address(config))}", err)


def _say_cluster(cluster: MetaCluster) -> None:
    say(cluster.line(), err)


def _say_remote(line: str) -> None:
    say(f"remote: {escape(line)}", err)


@contextmanager
def _live_view(directory: Path | None, port: int | None, host: str) -> Iterator[None]:
    """``--serve PORT``: the live view's server beside the run, its address printed once it listens; else nothing.
    A server that cannot listen is said in one line, and the run goes on."""
    if port is None or directory is None:
        yield
        return
    from arena.live.background import LiveServer

    server = LiveServer(directory, port, host)
    with ExitStack() as stack:
        try:
            stack.enter_context(server)
        except OSError as exc:
            error(f"live view: cannot listen on {host}:{port}: {exc.strerror or exc}")
        else:
            _say_address("live view", server.url)
        yield


def _say_address(what: str, url: str, after: str = "") -> None:
    """The live view's address; for a server other machines reach, the machine's own addresses
    (never 0.0.0.0) and a QR code of the first, for a room to scan."""
    from arena.live.sharing import qr_text, room_urls

    room = room_urls(url)
    for address in room or [url]:
        say(f"{what}: {address}{after}", err)
    if room:
        say(f"scan to open {room[0]}:\n{qr_text(room[0])}", err)


def _listed(values: list[str]) -> list[str]:
    """Names (of bots, of games) from options given several times, each perhaps a comma-separated list."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def _reasons(text: str) -> frozenset[str]:
    """The forfeit reasons to replay: those listed besides the default ones, or none at all."""
    reasons = {word.strip().lower() for word in text.split(",") if word.strip()}
    if reasons == {"none"}:
        return frozenset()
    unknown = sorted(reasons - set(FORFEIT_REASONS))
    if unknown:
        fail(f"--replay-forfeits: unknown reason {unknown[0]!r}; use some of: {', '.join(FORFEIT_REASONS)} (or none)")
    return frozenset(reasons) | frozenset(REPLAYED_BY_DEFAULT)


def _game_name(name: str) -> str:
    """The engine's own name of a game given in any case (bots and records see that one)."""
    try:
        return engine.get_game(name).name
    except ValueError as exc:
        fail(str(exc))


@app.command(epilog=_epilog("arena standings results/oxono-demo --forfeits", "tournaments.md"))
@interruptible
def standings(
    target: Path = typer.Argument(
        ..., metavar="DIR", help="A results directory, its games.jsonl, or a tournament file (its output directory is used)."
    ),
    fmt: str = typer.Option("plain", "--format", "-f", help=f"One of: {', '.join(OUTPUT_FORMATS)}."),
    table: str = typer.Option(
        None, "--table", "-t", help=f"Only this table: {', '.join(TABLES)} (crosstable also as head-to-head; csv shows one table: the first, the ranking or a reference tournament's, unless named)."
    ),
    forfeits: bool = typer.Option(False, "--forfeits", help="List every forfeit with what the bot did (by default: each bot's first)."),
    pending: bool = typer.Option(False, "--pending", help="Who is still to play in the current round, and which games are being played."),
    by: str = typer.Option(None, "--by", help="node: games, mean move time and forfeits per node of a Ray cluster (--table nodes)."),
) -> None:
    """Rank the bots of a results directory with TrueSkill (works during a run too)."""
    fmt = check_format(fmt)
    if by is not None:
        if by.lower() != "node":
            fail(f"--by: unknown {by!r}; use node (games, move times and forfeits per node)")
        if table is not None and table.lower() != "nodes":
            fail(f"--by node shows the nodes table; --table {table} asks for another")
        table = "nodes"
    if table is not None and table.lower() not in (*TABLES, *TABLE_ALIASES):
        fail(f"unknown table {table!r}; use one of {', '.join(TABLES)}")
    if pending:
        try:
            say(render_pending(pending_round(_load_results(target))))
        except ValueError as exc:  # a schedule too big to make whole
            fail(str(exc))
        return
    try:
        read = _load_results(target, read_standings)
        shown = read.standings
        if table is not None and table.lower() == "rounds" and shown.rounds is None:
            shown = replace(shown, rounds=read_results(target).round_robin_rounds())
        say(render_standings(shown, fmt, table))
    except ValueError as exc:  # records no ranking can rate, or a table these results do not have
        fail(str(exc))
    if table is None or forfeits:
        show_forfeits(read.forfeits, fmt, every=forfeits, hint=f"all of them: arena standings {target} --forfeits")


@app.command(epilog=_epilog("arena games results/course --bot team-ann --result lost", "tournaments.md"))
@interruptible
def games(
    target: Path = typer.Argument(..., metavar="DIR", help="A results directory, its games.jsonl, or a tournament file."),
    fmt: str = typer.Option("plain", "--format", "-f", help=f"The table's format: {', '.join(OUTPUT_FORMATS)}."),
    bot: str = typer.Option(None, "--bot", help="Only this bot's games; the result is then from its side."),
    opponent: str = typer.Option(None, "--opponent", help="Only the games against this bot."),
    result: str = typer.Option(None, "--result", help=f"Only these: {', '.join(RESULTS)} (won, lost and forfeit from --bot's side)."),
    round_: int = typer.Option(None, "--round", min=1, help="Only this round's games."),
) -> None:
    """List the games, one a line: id (for arena show), round, players as seated, result, reason, plies, time."""
    fmt = check_format(fmt)
    wanted = GameFilter(bot, opponent, None if result is None else result.lower(), round_)
    if (problem := wanted.problem()) is not None:
        fail(problem)
    results = _load_results(target)
    known = set(results.names).union(*(r.players.values() for r in results.records))
    for name in (bot, opponent):
        if name is not None and name not in known:
            fail(f"no bot {safe(name)!r} in {results.directory}; its bots: {', '.join(map(safe, results.names)) or 'none'}")
    # Every cell is made safe for its format already; a hundred thousand lines through rich would take seconds.
    print(render_games(select_games(results.records, wanted), fmt))


def _stored_seed(output: Path) -> int | None:
    """The seed of the match already in ``output``, if any."""
    try:
        meta = read_meta(output)
    except MetaError:
        return None  # the run says why in one line
    except StoreError as exc:  # a link or a special file in its place
        fail(str(exc))
    return meta.competition.seed if meta is not None and not meta.unsaid.seed else None


R = TypeVar("R", ReadResults, StandingsRead)


def _load_results(target: Path, reader: Callable[[Path], R] = read_results) -> R:  # type: ignore[assignment]
    """What ``reader`` reads of the results ``target`` means (see
    :func:`read_results`), warnings printed; one line and exit when there
    are none."""
    try:
        results = reader(target)
    except (ConfigError, FileNotFoundError, StoreError) as exc:
        fail(str(exc))
    for warning in results.warnings:
        warn(warning)
    return results


@app.command(epilog=_epilog("arena report results/oxono-demo -o cup.html", "report.md"))
def report(
    target: Path = typer.Argument(
        ..., metavar="DIR", help="A results directory, its games.jsonl, or a tournament file (its output directory is used)."
    ),
    output: Path = typer.Option(None, "--output", "-o", help=f"The HTML file to write (default: DIR/{REPORT_FILE}, with --bot DIR/bot-NAME.html)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file that is not an HTML page (never a file of a results directory)."),
    bot: str = typer.Option(None, "--bot", help="Write just this bot's page (its place, points, rounds, games, forfeits, versions and stderr), to hand to its team."),
    fmt: str = typer.Option("html", "--format", "-f", help=f"html, or with --bot its grade sheet as {' or '.join(SHEET_FORMATS)} (to stdout unless -o), to mail."),
) -> None:
    """Write the tournament's HTML report: standings, charts, every game in a viewer, a page per bot (one file, works offline)."""
    fmt = fmt.lower()
    if fmt not in ("html", *SHEET_FORMATS):
        fail(f"unknown report format {fmt!r}; use html, or with --bot one of {', '.join(SHEET_FORMATS)}")
    if fmt != "html" and bot is None:
        fail(f"-f {fmt} writes a bot's grade sheet: name the bot with --bot NAME")
    results = _load_results(target)
    if bot is not None and bot not in results.names and not any(bot in r.players.values() for r in results.records):
        fail(f"no bot {safe(bot)!r} in {results.directory}; its bots: {', '.join(map(safe, results.names)) or 'none'}")
    if fmt != "html":
        _grade_sheet(results, bot, fmt, output, force)
        return
    if bot is not None and output is None and ("/" in bot or bot.startswith(".")):
        fail(f"the bot's name {safe(bot)!r} cannot name a file: name the page with -o")
    path = output or results.directory / (REPORT_FILE if bot is None else f"bot-{bot}.html")
    try:
        check_report_path(path, force=force)
    except ReportPathRefused as exc:
        fail(str(exc))
    try:
        page, files = build_report_files(results, games_href(path), results_dir=results.directory,
                                         logs_href=logs_href(results.directory, path), bot=bot)
    except ValueError as exc:  # records that contradict themselves
        fail(f"cannot report on {results.directory}: {exc}")
    try:
        write_report(path, page, files)
    except OSError as exc:
        fail(f"cannot write the report to {path}: {exc.strerror or exc}")
    games = len(results.records) if bot is None else sum(bot in r.players.values() for r in results.records)
    beside = f" (their moves in {games_folder(path)}, {len(files)} files)" if files is not None else ""
    say(f"{'report' if bot is None else f'page of {safe(bot)}'} of {games} games written to {path}{beside}", err)


def _grade_sheet(results: ReadResults, bot: str, fmt: str, output: Path | None, force: bool) -> None:
    """``arena report --bot NAME -f text|md``: the bot's grade sheet, to stdout or ``output``."""
    try:
        sheet = grade_sheet(results, results.standings(), bot)
    except ValueError as exc:  # records that contradict themselves; a bot only of games left out
        fail(f"cannot write the grade sheet of {safe(bot)!r} from {results.directory}: {safe(str(exc))}")
    title = results.meta.name if results.meta is not None else ""
    text = render_sheet(sheet, fmt, title=title) + "\n"
    if output is None:
        say(text.rstrip("\n"))
        return
    try:
        # A sheet is text: only a file of the same kind is replaced without --force.
        check_report_path(output, force=force or output.suffix.lower() in (".md", ".txt", ".text"), games=False)
        write_report(output, text)
    except ReportPathRefused as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the grade sheet to {output}: {exc.strerror or exc}")
    say(f"grade sheet of {safe(bot)} written to {output}", err)


@app.command(epilog=_epilog("arena serve results/oxono-demo --port 8000", "live.md"))
def serve(
    target: Path = typer.Argument(..., metavar="DIR", help="A results directory, its games.jsonl, or a tournament file (its output directory is used)."),
    host: str = typer.Option(LIVE_HOST, "--host", help="The address to listen on (0.0.0.0: every one, printed as this machine's own addresses with a QR code, for a room); the address printed holds the access token, which any other user (any other machine) needs."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="The port to listen on (0: any free one)."),
    bot: str = typer.Option(None, "--bot", help="Show just this bot's page (its games and stderr), to hand to its team."),
    hold: float = typer.Option(HOLD_S, "--hold", min=0, max=600, help="Seconds a finished game stays on its card, with its final position and result."),
    beside_run: bool = typer.Option(False, "--beside-run", hidden=True, help="For arena run --serve: print nothing once listening (the run prints the address), stop when stdin closes."),
    listen_fd: int = typer.Option(None, "--listen-fd", hidden=True, help="For arena run --serve: the socket the run bound, listening already."),
) -> None:
    """A live web page of the tournament, updated as it plays: standings, rounds, every game in progress move by move;
    works during a run (from another terminal) and on finished results. Read-only; Ctrl-C stops it."""
    from arena.live.background import TOKEN_ENV, until_stdin_closes
    from arena.live.server import serve as serve_forever
    from arena.live.state import LiveState

    try:
        state = LiveState(target, bot, hold_s=hold)
    except (ConfigError, FileNotFoundError) as exc:
        fail(str(exc))
    results = state.results()
    if bot is not None and results.names and bot not in results.names:
        fail(f"no bot {safe(bot)!r} in {results.directory}; its bots: {', '.join(map(safe, results.names))}")
    token = os.environ.get(TOKEN_ENV) or None
    if beside_run:
        os.nice(19)  # the games come first: the page takes what CPU they leave

    def ready(url: str) -> None:
        if not beside_run:
            _say_address(f"live view of {state.directory}", url, "  (Ctrl-C stops it)")

    try:
        # The signal as a flag the server's loop checks: raised wherever it landed (printing the QR code, say),
        # it was now and then lost, and the server ran on, deaf to every later Ctrl-C and kill.
        with stop_signals.as_flag():
            serve_forever(state, host, port, on_ready=ready, token=token, stop=until_stdin_closes() if beside_run else None,
                          sock=socket.socket(fileno=listen_fd) if listen_fd is not None else None)
    except OSError as exc:
        fail(f"live view: cannot listen on {host}:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass


@app.command(epilog=_epilog("arena show results/oxono-demo r1-greedy~random-g1 --final", "report.md"))
def show(
    target: Path = typer.Argument(..., metavar="DIR", help="A results directory, its games.jsonl, or a tournament file."),
    game_id: str = typer.Argument(..., help="The game's id, as in the report or games.jsonl (e.g. r1-alpha~beta-g1)."),
    final: bool = typer.Option(False, "--final", help="Show only the final position."),
    stderr_lines: int = typer.Option(
        20, "--stderr", min=0, help="Lines of each bot's stderr in this game shown after the replay (0: none)."),
    protocol: bool = typer.Option(False, "--protocol", help="Instead of the replay: every line each bot was sent and sent back, "
                                  "for a bot that played with debug on."),
) -> None:
    """Replay one game in the terminal: the board after each move, with its time and info,
    then the end of each bot's stderr in that game. On a terminal, Enter shows the next move (q then Enter stops)."""
    try:
        results = _load_results(target)
        record = find_game(results.records + results.left_out, game_id)
        replay = frames(record)
    except (LookupError, ValueError) as exc:  # ValueError: a stored move the engine refuses
        fail(str(exc))
    say(game_heading(record))
    if protocol:
        logged = protocol_logs(record, results.directory)
        if logged is None:
            fail(f"no protocol log of this game in {results.directory}: play it with 'debug: true' on the bot (or --debug BOT)")
        say(logged)
        return
    if final:
        say(replay[-1])
    else:
        stepping = sys.stdin.isatty() and sys.stdout.isatty()
        for i, frame in enumerate(replay):
            say(("\n" if i else "") + frame)
            if stepping and i < len(replay) - 1:
                try:
                    if input(f"[{i + 1}/{len(replay) - 1}] Enter: next move, q: quit ").strip().lower() == "q":
                        return
                except EOFError:
                    return
    tails = stderr_tails(record, results.directory, stderr_lines) if stderr_lines else ""
    if tails:
        say("\n" + tails)


@app.command(epilog=_epilog(
    "arena match 'python -m bots.greedy' 'python -m bots.random_bot' -n 20 --tc 5+0.1 --output results/g-vs-r",
    "tournaments.md"))
@interruptible
def match(
    cmd_a: str = typer.Argument(None, help="First bot's command, e.g. 'python -m bots.greedy' (or give it with --bot)."),
    cmd_b: str = typer.Argument(None, help="Second bot's command."),
    bots: list[str] = typer.Option(
        [], "--bot", metavar="SETTINGS",
        help="A bot with a name, options and a clock of its own: name=dev,cmd='python my.py',option.depth=3,tc=10+0.1 "
             "(keys: cmd, name, dir, tc, debug, option.NAME); twice, or after one command.",
    ),
    game: str = typer.Option(DEFAULT_GAME, "--game", "-g", help=f"One of: {', '.join(engine.GAMES)}."),
    games: int = typer.Option(
        None, "--games", "-n", min=1,
        help=f"Number of games, in pairs with colours swapped (default {MATCH_GAMES}; with --sprt, the cap: by default "
             f"{CAP_FACTOR} times the test's expected length).",
    ),
    tc: str = typer.Option("5+0.1", "--tc", help="Time control: '5+0.1' (seconds, initial+increment) or 'move 0.5'."),
    concurrency: int = typer.Option(None, "--concurrency", "-j", min=1, help="Games at once (default: 1; on Ray, the cluster's CPUs)."),
    seed: int = typer.Option(None, "--seed", min=SEEDS.start, max=SEEDS.stop - 1, help="Seed of the start positions and the bots' randomness (default: drawn at random, and printed)."),
    output: Path = typer.Option(None, "--output", "-o", help="Keep the records in this directory, as 'arena run' does: the same command resumes, 'arena standings' reads it."),
    new: bool = typer.Option(False, "--new", help="When --output holds another test (other bots, settings or SPRT), start this one in DIR-2 (DIR-3, ...) instead of refusing; the same command resumes it there."),
    startup_timeout: float = typer.Option(STARTUP_TIMEOUT_S, "--startup-timeout", min=0.1, help="Seconds each bot has to answer 'hello'."),
    logs: Path = typer.Option(None, "--logs", help="Directory for the bots' stderr logs (default: discarded; with --output, its logs/)."),
    openings: str = typer.Option(
        None, "--openings", help="An opening suite: 'plies=4,count=50' (drawn from --seed) or a file, one opening a line.",
    ),
    sprt: str = typer.Option(
        None, "--sprt",
        help=f"Stop when decided: 'elo0=0,elo1=5[,alpha=0.05,beta=0.05,model={'|'.join(SPRT_MODELS)}]' (the first bot is the candidate).",
    ),
    executor: str = typer.Option(None, "--executor", "-e", help=f"Where games run: {' or '.join(EXECUTORS)} (default: local)."),
    ray_address: str = typer.Option(None, "--ray-address", help="The Ray cluster to run on, e.g. 'auto' or 'head:6379' (implies --executor ray)."),
    serve_port: int = typer.Option(None, "--serve", metavar="PORT", min=1, max=65535, help="Also serve the live web page (arena serve) on this port while it plays (needs --output)."),
    serve_host: str = typer.Option(LIVE_HOST, "--serve-host", metavar="HOST", help="With --serve: the address to listen on (its address printed with the access token, which any other user needs)."),
    debug_bots: list[str] = typer.Option([], "--debug", metavar="BOT", help=DEBUG_HELP),
    remote_port: int = typer.Option(None, "--remote-port", metavar="PORT", min=0, max=65535, help=f"With a remote bot (--bot name=X,remote=true): listen for it on this port of {REMOTE_HOST}; see docs/remote.md."),
    tokens: Path = typer.Option(None, "--tokens", metavar="FILE", help="With a remote bot: the tokens file (arena remote token)."),
) -> None:
    """Play a match between two bots and print W/D/L, Elo, LOS, game pairs and forfeits;
    under --sprt, until the test decides."""
    entrants, test, control = _match_terms(cmd_a, cmd_b, bots, sprt, tc)
    game = _game_name(game)
    capped = games is not None
    if games is None:
        games = test.game_cap() if test is not None else MATCH_GAMES
    drawn = random.SystemRandom().randrange(2**31)

    def configured(at: Path | None) -> TournamentConfig:
        """The match, resuming the seed stored ``at`` its directory unless --seed says one."""
        chosen = seed if seed is not None else (_stored_seed(at) if at is not None else None)
        chosen = drawn if chosen is None else chosen
        try:
            suite = openings_from_option(openings, game, chosen) if openings is not None else None
            return with_debug(with_executor(match_config(
                entrants, game, control, seed=chosen, concurrency=concurrency or 1, openings=suite, sprt=test,
                startup_timeout_s=startup_timeout, output=at.resolve() if at else None, actors=concurrency,
                remote=RemoteSettings(port=remote_port, tokens=tokens.resolve() if tokens else None),
            ), executor, ray_address), debug_bots)
        except ValueError as exc:  # ConfigError included
            fail(str(exc))

    config = configured(output)
    if output is None and logs is None and any(bot.debug for bot in config.bots):
        fail("--debug: the protocol log goes beside the bot's stderr: give --output or --logs")
    if new and output is not None:
        config = _new_test(config, configured, output, games)
    try:
        check_programs(config)
    except ConfigError as exc:
        fail(str(exc))
    if logs is not None:
        try:
            logs.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"cannot create {logs}: {exc.strerror or exc}")
    if serve_port is not None and output is None:
        fail("--serve shows a results directory: name one with --output")
    show = _MatchShow(config, games, capped=capped, drawn=drawn, kept=output is not None)
    with _playing(show, serve_port, serve_host):
        result = play_match(config, games, logs_dir=logs, keep_records=output is not None, on_start=show.start,
                            on_record=show.record, on_cluster=_say_cluster, on_remote=_say_remote)
    _say_match(result, config, game, kept=output is not None)


def _match_terms(cmd_a: str | None, cmd_b: str | None, bots: list[str], sprt: str | None,
                 tc: str) -> tuple[list[str | MatchBot], SprtConfig | None, TimeControl]:
    """``arena match``'s two bots (commands, ``--bot`` settings, or one of each), its SPRT and its clock."""
    try:
        entrants = [*(c for c in (cmd_a, cmd_b) if c is not None), *(bot_from_option(text) for text in bots)]
        if len(entrants) != 2:
            raise ConfigError(f"a match is between two bots: give two commands, --bot twice, or one of each "
                              f"(got {len(entrants)})", file="")
        return entrants, sprt_from_option(sprt) if sprt is not None else None, parse_time_control(tc)
    except ValueError as exc:  # ConfigError included
        fail(str(exc))


class _MatchShow:
    """``arena match`` as it plays: the seed, what it plays and the resume said once its bots started, its progress
    (:class:`~arena.progress.MatchView`: a bar on stderr, lines on stdout when that goes to a file), and what it says
    when it ends early.  ``kept``: its records are kept (``--output``)."""

    def __init__(self, config: TournamentConfig, games: int, *, capped: bool, drawn: int, kept: bool) -> None:
        self._config, self._games, self._capped, self._drawn = config, games, capped, drawn
        self.output = config.output
        a, b = self._names = tuple(bot.name for bot in config.bots)
        self._so_far = MatchResult(names=(a, b))
        self._records_kept = f"; records in {config.output}: the same command resumes" if kept else ""
        self.presenter = _progress(MatchView(a, b), log=out)

    def start(self, result: MatchResult) -> None:
        # After the pre-flight: a bot that cannot start gets its one line, no bar.
        self._so_far = result
        seed = self._config.competition.seed
        if seed == self._drawn:
            say(f"seed {seed} (drawn at random; --seed {seed} plays the same games again)", err)
        say(match_header(self._config, self._games, capped=self._capped))
        if result.resumed:
            say(f"resuming: {result.resumed} of {result.total} games already in {self.output}", err)
        _say_where(self._config)
        self.presenter.start(result.games, result.total, result)

    def record(self, record: GameRecord, result: MatchResult) -> None:
        self.presenter.update(result.games, result.total, result)

    def kept(self) -> int:
        return len(self._so_far.records)

    def interrupted(self) -> str:
        so_far = self._so_far
        return (f"interrupted after {so_far.games} of {so_far.total or self._games} games; "
                f"W/D/L for {self._names[0]}: {so_far.wins}/{so_far.draws}/{so_far.losses}{self._records_kept}")

    def lost(self, exc: WorkerDied) -> str:
        return str(exc)


def _say_match(result: MatchResult, config: TournamentConfig, game: str, *, kept: bool) -> None:
    """``arena match``'s verdict: W/D/L, Elo, LOS, game pairs, the SPRT, forfeits; where the records are ``kept``."""
    stats = result.statistics()
    penta = stats.penta
    a, b = result.names
    say(f"{a} vs {b}: {result.games} game{'s' if result.games != 1 else ''} of {game} {clocks_text(config)}")
    say(f"  W/D/L for {a}: {result.wins}/{result.draws}/{result.losses}  score {result.score_pct or 0.0:.1f}%"
        f"  draw ratio {format_percent(stats.draw_ratio)}")
    basis = (f"{penta.pairs} game pair{'' if penta.pairs == 1 else 's'}" if stats.model == "pentanomial"
             else f"{stats.games} single game{'' if stats.games == 1 else 's'}")
    say(f"  Elo difference: {format_elo_interval(stats)}, normalized {format_nelo(stats.nelo, stats.nelo_margin)} "
        f"(95%, from {basis})  LOS {format_percent(stats.los)}")
    say("  game pairs LL/LD/WL+DD/WD/WW: " + "/".join(str(n) for n in penta.counts()))
    if result.sprt is not None:
        decided_on = f" at normalized Elo {format_nelo(*result.sprt.nelo)}" if result.sprt.pairs else ""
        say(f"  {result.sprt.describe()}{decided_on}{result.sprt.later_text}")
    if result.dropped:
        say(f"  {result.dropped} game{'s' if result.dropped != 1 else ''} queued on the Ray actors "
            f"{'were' if result.dropped != 1 else 'was'} dropped unplayed at the verdict")
    if result.forfeits:
        for name, reasons in sorted(result.forfeits.items()):
            listed = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
            say(f"  forfeits by {name}: {listed}")
        for record in result.records:
            if record.forfeit_by is not None:
                say(f"    {record.game_id}: {record.players[record.forfeit_by]} {describe_forfeit(record)}")
    else:
        say("  forfeits: none")
    if kept:
        say(f"records in {config.output} (seed {config.competition.seed}); arena standings {config.output} ranks them", err)


def _new_test(
    config: TournamentConfig, configured: Callable[[Path], TournamentConfig], output: Path, games: int,
) -> TournamentConfig:
    """``--new``: the match in ``output``, or, when that holds another test,
    in the first of ``output-2``, ``output-3``, ... that holds none or this one."""
    problem = other_test(config, games)
    number = 1
    while problem is not None:
        number += 1
        if number > _MAX_NEW_DIRS:
            fail(f"{output} and the next {_MAX_NEW_DIRS - 1} directories after it all hold other tests; choose another --output")
        config = configured(output.with_name(f"{output.name}-{number}"))
        problem = other_test(config, games)
    if number > 1:
        say(f"{output} holds another test; this one is in {config.output}", err)
    return config


#: How many directories ``--new`` tries (DIR, DIR-2, ...).
_MAX_NEW_DIRS = 100


@app.command(epilog=_epilog("arena check tournaments/course.yaml   or   arena check './mybot' --game yoxii", "tournaments.md"))
@interruptible
def check(
    target: str = typer.Argument(..., help="A tournament file (every bot of it is checked), or one bot's command, e.g. './mybot'."),
    games: int = typer.Option(None, "--games", "-n", min=1, help=f"Games per bot (default: {DEFAULT_GAMES} for a tournament file, {ONE_BOT_GAMES} for one bot)."),
    reference: str = typer.Option(DEFAULT_REFERENCE, "--reference", help=f"The bot a tournament file's bots play: {', '.join(REFERENCES)}."),
    jobs: int = typer.Option(None, "--jobs", "-j", min=1, help="Bots checked at once (default: the file's concurrency, else all cores)."),
    game: str = typer.Option(None, "--game", "-g", help=f"One bot: one of: {', '.join(engine.GAMES)} (default: {DEFAULT_GAME})."),
    tc: str = typer.Option(None, "--tc", help=f"One bot: time control for the test games (default: {ONE_BOT_TIME_CONTROL})."),
    cwd: Path = typer.Option(None, "--cwd", help="One bot: its working directory (default: the current one)."),
    startup_timeout: float = typer.Option(None, "--startup-timeout", min=0.1, help=f"One bot: seconds the bot has to answer 'hello' (default: {STARTUP_TIMEOUT_S:g})."),
    sandbox: str = typer.Option(None, "--sandbox", help=f"One bot: run it as a tournament with this sandbox would: {', '.join(SANDBOXES)} (default: none)."),
    fmt: str = typer.Option(None, "--format", "-f", help=f"A tournament file: the table as {', '.join(CHECK_FORMATS)} (default: plain)."),
    build: bool = typer.Option(False, "--build", help="A tournament file: install its Python packages first (python_packages, the teams' requirements.txt)."),
) -> None:
    """Check every bot of a tournament file as the tournament runs it, into one
    table; or walk one bot through a checklist.  Exit status 1 when a bot fails."""
    if target.endswith((".yaml", ".yml")):
        given = [flag for flag, value in (("--game", game), ("--tc", tc), ("--cwd", cwd),
                                          ("--startup-timeout", startup_timeout), ("--sandbox", sandbox)) if value is not None]
        if given:
            fail(f"{', '.join(given)}: for one bot's command; a tournament file gives each of its bots these settings")
        _check_file(Path(target), games or DEFAULT_GAMES, reference, jobs, _check_format(fmt or "plain"), build)
        return
    if build:
        fail("--build: for a tournament file, whose python_packages and teams' requirements.txt it installs")
    if fmt is not None:
        fail("--format: for a tournament file's table; one bot's checklist is plain text")
    _check_one(target, games or ONE_BOT_GAMES, game or DEFAULT_GAME, tc, cwd, startup_timeout or STARTUP_TIMEOUT_S, sandbox or "none")


def _check_one(command: str, games: int, game: str, tc: str | None, cwd: Path | None, startup_timeout: float,
               sandbox: str) -> None:
    """``arena check './mybot'``: the bot walked through the checklist, a line a step."""
    game = _game_name(game)
    try:
        control = parse_time_control(tc) if tc else ONE_BOT_TIME_CONTROL
    except ValueError as exc:
        fail(str(exc))
    if sandbox not in SANDBOXES:
        fail(f"unknown sandbox {sandbox!r}; use one of {', '.join(SANDBOXES)}")
    try:
        steps = check_bot(command, game, time_control=control, games=games, startup_timeout_s=startup_timeout,
                          sandbox=sandbox, cwd=cwd)
    except (ValueError, SandboxUnavailable, ArenaWriteError) as exc:  # ArenaWriteError: the bot's log or scratch on a full disk
        fail(str(exc))
    for step in steps:
        mark = "[yellow]warn[/]" if step.warning else "[green]ok[/]  " if step.ok else "[bold red]FAIL[/]"
        text = safe(step.name + (f": {step.detail}" if step.detail else ""), limit=None)
        out.print(f"{mark} " + escape(text), highlight=False, soft_wrap=True)
    if all(step.ok for step in steps):
        out.print("[green]all checks passed[/]")
    else:
        raise typer.Exit(1)


def _check_format(fmt: str) -> str:
    fmt = "md" if fmt.lower() == "github" else fmt.lower()
    if fmt not in CHECK_FORMATS:
        fail(f"unknown format {fmt!r}; use one of {', '.join(CHECK_FORMATS)}")
    return fmt


def _check_file(path: Path, games: int, reference: str, jobs: int | None, fmt: str, build: bool) -> None:
    """``arena check FILE.yaml``: every bot of the file, one table (the
    verdict's line on stderr under csv and json, which stay documents)."""
    if reference not in REFERENCES:
        fail(f"--reference: unknown bot {reference!r}; use one of: {', '.join(REFERENCES)}")
    try:
        config = load_config(path)
    except ConfigError as exc:
        fail(str(exc))
    total = len(config.bots) - len(config.remote_bots)
    so_far = Checked(total)
    # On stderr (stdout keeps the table): a bar on a terminal, lines in a log; 1,000 bots take minutes.
    presenter = _progress(CheckView())

    def on_checked(row: BotCheck) -> None:
        nonlocal so_far
        so_far = so_far.add(row)
        presenter.update(so_far.checked, total, so_far)

    try:
        with stop_signals.as_flag():
            presenter.start(0, total, so_far)
            try:
                rows = check_tournament(config, games=games, reference=reference, jobs=jobs, build=build,
                                        on_checked=on_checked)
            finally:
                presenter.stop()
    except (ValueError, SandboxUnavailable, ArenaWriteError) as exc:
        fail(str(exc))
    say(render_checks(rows, config.time_control, fmt))
    verdict = err if fmt in ("csv", "json") else out
    warned = [row.bot for row in rows if row.warnings]
    if warned:
        say(f"warnings for {len(warned)} of {len(rows)} bots: {', '.join(warned)}", verdict)
    failed = [row.bot for row in rows if not row.passed]
    if failed:
        say(f"{len(failed)} of {len(rows)} bots failed: {', '.join(failed)}", verdict)
        raise typer.Exit(1)
    checked = len(rows) - len(config.remote_bots)
    remote = f" ({len(config.remote_bots)} remote, not checked here)" if config.remote_bots else ""
    say(f"all {checked} bots passed {games} games each against the {reference} bot{remote}", verdict)


@app.command(epilog=_epilog("arena play --game oxono --bot 'python -m bots.mcts'", "bots.md"))
@interruptible
def play(
    bot: str = typer.Option(..., "--bot", "-b", help="The bot's command, e.g. 'python -m bots.mcts'."),
    game: str = typer.Option(DEFAULT_GAME, "--game", "-g", help=f"One of: {', '.join(engine.GAMES)}."),
    color: str = typer.Option(None, "--color", "-c", help="Your colour (default: the first, which moves first)."),
    tc: str = typer.Option("300+5", "--tc", help="Time control for both sides: '300+5' or 'move 5'."),
    save: Path = typer.Option(None, "--save", help="Append the game to this file, in the games.jsonl format."),
    seed: int = typer.Option(0, "--seed", help="Seed of the start position and of the bot's randomness."),
    log: Path = typer.Option(None, "--log", help="Append the bot's stderr to this file (default: discarded)."),
) -> None:
    """Play a bot yourself: type moves; '?' lists them, 'undo' takes back, 'quit' resigns."""
    from arena.play import PlayError, PlayOptions, play as play_game

    game = _game_name(game)
    try:
        options = PlayOptions(game=game, bot=bot, color=color, time_control=parse_time_control(tc), save=save, seed=seed, log=log)
        play_game(options, sys.stdin, sys.stdout)
    except (PlayError, ValueError, ArenaWriteError) as exc:  # ArenaWriteError: the bot's log or scratch on a full disk
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot save the game to {save}: {exc.strerror or exc}")


remote_app = typer.Typer(help="Bots that play from another machine: their tokens (see docs/remote.md).", no_args_is_help=True)
app.add_typer(remote_app, name="remote")


@remote_app.command("token", epilog=_epilog("arena remote token team-x --tokens cup.tokens", "remote.md"))
def remote_token(
    bot: str = typer.Argument(..., help="The remote bot's name in the tournament file."),
    tokens: Path = typer.Option(None, "--tokens", metavar="FILE", help="The tokens file (default: the tournament's, with --tournament)."),
    tournament: Path = typer.Option(None, "--tournament", metavar="FILE", help="The tournament file whose tokens file to use (remote_tokens:, else FILE's name with .tokens)."),
) -> None:
    """Make a new token for a remote bot: printed once, only its digest kept (an earlier token of the bot stops working)."""
    if tokens is None and tournament is None:
        fail("say where to keep the token's digest: --tokens FILE, or --tournament FILE for the tournament's own")
    try:
        path = tokens if tokens is not None else load_config(tournament).remote.tokens
        assert path is not None
        token = make_token(path, bot)
    except (ConfigError, TokenFileError) as exc:
        fail(str(exc))
    say(token)
    say(f"the token of {bot}, shown this once (its digest is in {path}); give it to the bot's author for: "
        "arena connect URL --token TOKEN -- ./mybot", err)


@app.command(epilog=_epilog("arena connect ws://arena.example.org:8765/ --token T -- ./mybot --fast", "remote.md"))
def connect(
    url: str = typer.Argument(..., help="The arena's address, ws://HOST:PORT/ (wss:// behind a TLS proxy)."),
    cmd: list[str] = typer.Argument(None, metavar="-- BOT [ARGS]...", help="The bot's command, after --."),
    token: str = typer.Option(None, "--token", help="The bot's token from the organiser (default: $TOTEM_TOKEN, which other users cannot see in ps)."),
    connections: int = typer.Option(1, "--connections", "-n", min=1, max=8, help="Bots to run at once, one per game the arena plays with it at a time."),
    cwd: Path = typer.Option(None, "--cwd", help="Start the bot in this folder (default: the current one)."),
    delay_ms: float = typer.Option(0.0, "--delay-ms", min=0, help="Wait this long before each line to the arena: try the bot as on a slower network."),
) -> None:
    """Play your bot in an arena from this machine: run it here, relay its lines, reconnect when the network drops."""
    from arena.connect import bridge_options, run_bridge

    try:
        options = bridge_options(url, token, cmd or [], cwd, connections, delay_ms)
    except ValueError as exc:
        fail(str(exc))
    code = run_bridge(options, lambda line: say(escape(line), err))
    if code:
        raise typer.Exit(code)


def main() -> None:
    stop_signals.install()
    try:
        app(prog_name="arena")
    except SystemExit as exc:
        if exc.code != 130:
            raise
        _exit_interrupted()
    except KeyboardInterrupt:  # while typer builds the command, outside its own handler
        _exit_interrupted()


def _exit_interrupted() -> NoReturn:
    # Typer turns an interrupt outside a command (while it reads the command
    # line) into a silent exit 130: say it as everywhere else.  Then straight
    # out: an interrupt that cut an import short can make the interpreter end
    # itself by SIGINT on the way out, instead of with exit code 130.
    if not _failed:
        err.print("[bold red]error:[/] interrupted", highlight=False)
    kill_all()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


if __name__ == "__main__":
    sys.exit(main())
