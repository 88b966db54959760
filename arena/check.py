"""``arena check``: walk one bot through a checklist and say in plain words
what is wrong; or walk every bot of a tournament file through the same
checklist (:func:`_walk`) as its tournament runs it, several at once, each
in a supervised child (:mod:`arena.run.supervised`), into one table."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from tabulate import tabulate

import engine
from arena.bot.forfeits import Forfeit
from arena.bot.player import BotPlayer
from arena.base.processes import descendants
from arena.bot.sandbox import check_sandbox, unclosed_channel
from arena.bot.spec import QUIT_GRACE_S, STARTUP_TIMEOUT_S, BotConfig, command_problem, split_command
from arena.bot.submission import SubmissionProblem
from arena.bot.version import Fingerprint, describe_change, fingerprint
from arena.base.text import safe
from arena.game.clock import TimeControl
from arena.game.openings import Opening
from arena.game.records import GameRecord, GameSpec
from arena.game.referee import play_game
from arena.results.forfeits import describe_forfeit
from arena.results.meta import META_FILE
from arena.results.store import GAMES_FILE
from arena.run.config import MANIFEST, MAX_FILE_BYTES, TournamentConfig
from arena.run.environments import TeamPackages, with_environments
from arena.run.pool import BotPool, log_path
from arena.run.supervised import Lost, child_deadline_s, supervise
from arena.formats.game_pairs import game_seed

__all__ = ["BotCheck", "CHECK_FORMATS", "CheckStep", "DEFAULT_GAMES", "DEFAULT_REFERENCE", "ONE_BOT_GAMES", "ONE_BOT_TIME_CONTROL", "check_bot", "check_one", "check_tournament", "peak_memory_bytes", "render_checks"]

#: The opponent: the stdlib random bot shipped with the arena.
RANDOM_BOT = (sys.executable, "-m", "bots.random_bot")
#: Where ``bots`` lives: the reference bots' working directory.
_ARENA_ROOT = Path(__file__).resolve().parent.parent
#: How deep under its working directory the check looks for what a
#: tournament would hide from the bot (see :func:`tournament_paths`).
HIDDEN_SEARCH_DEPTH = 5
#: A ``bots:`` or ``bots_from:`` key (block or flow style), which every
#: tournament file has: such a YAML file may hold other bots' secrets.
_TOURNAMENT_KEY = re.compile(r"""(?m)(^|[{,])[ \t]*["']?bots(_from)?["']?[ \t]*:""")
#: Folders never searched: they hold no tournament (and many files).
_UNSEARCHED = frozenset({"node_modules", "__pycache__"})


@dataclass
class CheckStep:
    name: str
    ok: bool
    detail: str = ""
    #: A warning (see :func:`_warnings`): passed, but worth fixing.
    warning: bool = False


#: The checklist's first step.
_STARTS = "starts and answers 'hello' with 'ready'"


@dataclass
class _Walk:
    """What a bot did on the checklist (:func:`_walk`)."""

    #: Why it did not start; None once it did.
    no_start: str | None = None
    #: Who it said it is in ``ready`` (name, version, author), else its pid.
    about: str = ""
    #: The game's colours, by seat.
    colors: tuple[str, ...] = ()
    #: Each game it played, with its seat in it.
    games: list[tuple[GameRecord, int]] = field(default_factory=list)
    forfeits: int = 0
    #: Its slowest move, in milliseconds (None before its first).
    slowest_ms: float | None = None
    #: See :func:`peak_memory_bytes`.
    peak_memory_bytes: int | None = None
    #: The processes it took (1: one played every game), once it played every game.
    starts: int = 0
    #: The most it wrote to stderr in one game, in bytes.
    most_stderr_bytes: int = 0
    #: Its exit code once told to ``quit`` (``-SIGKILL``: killed after its
    #: quit grace); None when it was not, or its last process was already gone.
    exit_code: int | None = None


def _walk(
    candidate: BotPlayer, specs: Iterable[GameSpec], play: Callable[[GameSpec], GameRecord], *, max_forfeits: int
) -> _Walk:
    """The one checklist, for one bot and for every bot of a file: start
    ``candidate``, play ``specs`` with ``play`` until it has forfeited
    ``max_forfeits`` games, and tell it to ``quit`` if it has not (once it
    has failed, its process is killed: there is nothing left to see)."""
    walk = _Walk()
    try:
        process = candidate.ensure_started()
    except Forfeit as exc:
        walk.no_start = exc.detail
        return walk
    fields = ("name", "version", "author")
    walk.about = ", ".join(f"{k} {candidate.ready[k]!s}" for k in fields if k in candidate.ready) or f"pid {process.pid}"
    walk.colors = colors = tuple(engine.get_game(candidate.game).colors)
    for spec in specs:
        seat = spec.players.index(candidate.name)
        before, written = candidate.process, candidate.process.stderr_bytes if candidate.process is not None else 0
        record = play(spec)
        walk.games.append((record, seat))
        if candidate.process is not None:  # a process started in the game wrote all it did in it
            since = candidate.process.stderr_bytes - (written if candidate.process is before else 0)
            walk.most_stderr_bytes = max(walk.most_stderr_bytes, since)
        times = [move.ms for move in record.moves[seat::2]]
        if times:
            walk.slowest_ms = max(walk.slowest_ms or 0.0, max(times))
        if candidate.process is not None and candidate.process.pid is not None:
            walk.peak_memory_bytes = _larger(walk.peak_memory_bytes, peak_memory_bytes(candidate.process.pid))
        if record.forfeit_by == colors[seat]:
            walk.forfeits += 1
            if walk.forfeits >= max_forfeits:
                candidate.discard_process()
                return walk
    walk.starts = candidate.starts
    last = candidate.process
    candidate.close()
    walk.exit_code = last.returncode if last is not None else None
    return walk


def _check_games(
    candidate: str, opponent: str, game: str, openings: Sequence[Opening], seeds: Sequence[int]
) -> list[GameSpec]:
    """A game per seed against ``opponent``, the candidate on each seat in
    turn, both colours of each opening in turn."""
    specs = []
    for number, seed in enumerate(seeds):
        opening = openings[number // 2 % len(openings)]
        specs.append(GameSpec(
            index=number, game_id=f"check-{number + 1}", game=game, round=1,
            players=(candidate, opponent) if number % 2 == 0 else (opponent, candidate),
            opening=opening.start, opening_moves=opening.moves, seed=seed,
        ))
    return specs


#: One bot's checklist by default (``arena check './mybot'``): its games against the random bot, and their clock.
ONE_BOT_GAMES = 2
ONE_BOT_TIME_CONTROL = TimeControl(initial_ms=10_000, increment_ms=100)


def check_bot(
    command: str,
    game: str,
    *,
    time_control: TimeControl = ONE_BOT_TIME_CONTROL,
    games: int = ONE_BOT_GAMES,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    quit_grace_s: float = QUIT_GRACE_S,
    logs_dir: Path | None = None,
    sandbox: str = "none",
    cwd: Path | None = None,
) -> list[CheckStep]:
    """Run the checklist; stops at the first step that fails, since later ones depend on it.
    The bot runs as a tournament runs it: with the default limits, a clean
    environment and ``sandbox``, which hides from it what a tournament's
    would (:func:`tournament_paths`, and the logs), in ``cwd`` (by default
    the current directory).  Raises ``SandboxUnavailable`` when the sandbox
    cannot run here, ``ValueError`` when ``cwd`` is not a directory."""
    rules = engine.get_game(game)
    check_sandbox(sandbox)
    argv = split_command(command)
    cwd = (cwd or Path.cwd()).absolute()
    if not cwd.is_dir():
        raise ValueError(f"--cwd: no such directory {str(cwd)!r}")
    problem = command_problem(argv, cwd)
    if problem is not None:
        return [CheckStep(_STARTS, False, problem)]
    hidden: tuple[Path, ...] = ()
    if sandbox != "none":  # only a sandbox hides anything: no need to look without one
        hidden = tournament_paths(cwd) + ((logs_dir.absolute(),) if logs_dir else ())
    candidate = BotConfig(name="candidate", cmd=argv, options={}, cwd=cwd, env={}, sandbox=sandbox)
    # A team's folder (it holds its bot.yaml) is its version whole, as bots_from digests it.
    versioned = replace(candidate, source=cwd) if (cwd / MANIFEST).is_file() else candidate
    files = _files_of(versioned)
    bot = BotPlayer(
        candidate,
        game,
        log_path=log_path(logs_dir, "candidate", "check") if logs_dir else None,
        log_root=logs_dir,
        startup_timeout_s=startup_timeout_s,
        quit_grace_s=quit_grace_s,
        hidden=hidden,
    )
    opponent = BotPlayer(
        BotConfig(name="random", cmd=RANDOM_BOT, options={}, cwd=_ARENA_ROOT, env={}), game, startup_timeout_s=startup_timeout_s
    )
    seats = {bot.name: bot, opponent.name: opponent}
    openings = tuple(Opening(start, ()) for start in range(rules.openings))  # the game's start positions
    try:
        walk = _walk(
            bot, _check_games(bot.name, opponent.name, game, openings, range(games)),
            lambda spec: play_game(spec, [seats[name] for name in spec.players], time_control), max_forfeits=1,
        )
    finally:
        bot.discard_process()
        opponent.close()
    steps = _steps(walk, quit_grace_s)
    if walk.no_start is None:
        steps += [CheckStep(name, True, text, warning=True)
                  for name, text in _warnings(walk, files, _files_of(versioned)) + _machine_warnings(sandbox)]
    return steps


def _steps(walk: _Walk, quit_grace_s: float) -> list[CheckStep]:
    """The single-bot check's steps, up to the first that failed."""
    if walk.no_start is not None:
        return [CheckStep(_STARTS, False, walk.no_start)]
    steps = [CheckStep(_STARTS, True, walk.about)]
    for record, seat in walk.games:
        color = walk.colors[seat]
        name = f"plays a whole game as {color} against a random bot"
        if record.forfeit_by == color:
            return steps + [CheckStep(name, False, describe_forfeit(record))]
        times = [m.ms for m in record.moves[seat::2]]
        result = "draw" if record.winner is None else ("won" if record.winner == color else "lost")
        mean = f", {sum(times) / len(times):.1f} ms a move on average" if times else ""
        steps.append(CheckStep(name, True, f"{result} by {record.reason} in {len(record.moves)} plies{mean}"))
    steps.append(CheckStep(
        "plays several games in one process",
        walk.starts == 1,
        "one process played every game" if walk.starts == 1 else f"the process had to be restarted ({walk.starts} starts)",
    ))
    obeyed = walk.exit_code is not None and walk.exit_code != -signal.SIGKILL
    steps.append(CheckStep(
        "exits on 'quit'",
        obeyed,
        f"exit code {walk.exit_code}" if obeyed else f"still running {quit_grace_s:g} s after 'quit': killed",
    ))
    return steps


def tournament_paths(directory: Path) -> tuple[Path, ...]:
    """What a tournament run from ``directory`` hides from a sandboxed bot
    that sees the directory: its tournament file and its results directory.
    The check does not know which tournament, so it is every tournament file
    (a YAML file with a ``bots`` or ``bots_from`` key) and every
    results directory (one holding ``games.jsonl`` or ``tournament.json``)
    under ``directory``, down to :data:`HIDDEN_SEARCH_DEPTH` folders, hidden
    folders (``.git``, a ``.venv``) and ``node_modules`` left out."""
    found: list[Path] = []
    root = directory.absolute()
    for top, folders, files in os.walk(root):
        here = Path(top)
        if GAMES_FILE in files or META_FILE in files:
            found.append(here)  # hidden whole: nothing under it to look at
            folders.clear()
            continue
        depth = len(here.relative_to(root).parts)
        folders[:] = [] if depth >= HIDDEN_SEARCH_DEPTH else sorted(
            name for name in folders if not name.startswith(".") and name not in _UNSEARCHED
        )
        found += [here / name for name in sorted(files) if _is_tournament_file(here / name)]
    return tuple(found)


def _is_tournament_file(path: Path) -> bool:
    # A link is left alone: the sandbox cannot mount over one, and what it
    # points to is found where it is, if the bot can see it at all.
    if path.suffix not in (".yaml", ".yml") or path.is_symlink():
        return False
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:  # too big to be one
            return False
        return _TOURNAMENT_KEY.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:  # unreadable to the arena: a bot cannot read it either
        return False


# -- every bot of a tournament file ------------------------------------------------

#: Games per bot by default: a bot that forfeits one game in ten passes
#: 30 games with probability 0.9**30, about 4 %.
DEFAULT_GAMES = 30
#: A bot that has forfeited this many games has failed: more games would
#: only make the organiser wait on a broken bot.
MAX_FORFEITS = 3
#: The reference bots the candidates play, by ``--reference`` name.
REFERENCES = {"random": "bots.random_bot", "greedy": "bots.greedy"}
#: The reference bot by default.
DEFAULT_REFERENCE = "random"
#: The tag of the check's bots in their logs and scratch directories.
CHECK_TAG = "check"
#: The longest game, in moves per player, for the deadline (OXONO's 32 and
#: YOXII's are well below).
_LONGEST_GAME_MOVES = 100


#: The formats of ``arena check FILE.yaml``'s table (``github``: ``md``).
CHECK_FORMATS = ("plain", "md", "csv", "json")
#: Stderr a bot may write in one game before the check warns: a tournament's
#: game log keeps its first and last 32 KiB (:mod:`arena.bot.stderr_log`).
STDERR_WARN_BYTES = 64 * 1024
#: The width the plain table wraps a reason or warning at.
REASON_WIDTH = 60


#: The row of a remote bot, which runs on its author's machine (docs/remote.md).
REMOTE_NOT_CHECKED = ("not checked here: a remote bot runs on its author's machine, who checks it there "
                      "(arena check \"./mybot\")")


@dataclass(frozen=True)
class BotCheck:
    """One bot's row in ``arena check FILE.yaml``'s table.  ``reason`` is
    one line saying why it failed ("" when it passed); ``slowest_ms`` its
    slowest move (None before its first); ``peak_memory_bytes`` the most
    resident memory its processes held (see :func:`peak_memory_bytes`);
    ``warnings`` what does not fail it but should be fixed (see :func:`check_one`)."""

    bot: str
    passed: bool
    reason: str
    games: int
    forfeits: int
    slowest_ms: float | None
    peak_memory_bytes: int | None
    warnings: tuple[str, ...] = ()
    #: A submission's own ``requirements.txt``: what was installed (or why
    #: not), in one line, and pip's output (see :mod:`arena.run.environments`).
    packages: str = ""
    packages_output: str = ""


def check_deadline_s(config: TournamentConfig, games: int) -> float:
    """The longest checking one bot may take however the bots behave
    (:func:`~arena.run.supervised.child_deadline_s`): start-up and ``quit``
    for each process it may need, and each game at its clock's worst for
    both players; plus 30 s.  A bot's process silent for longer is stuck
    (its bot stopped it with ``SIGSTOP``, say) and is killed."""
    return child_deadline_s(
        starts=MAX_FORFEITS + 1, startup_timeout_s=config.startup_timeout_s, quit_grace_s=QUIT_GRACE_S,
        games=games, plies=2 * _LONGEST_GAME_MOVES, time_control=config.time_control,
        margin_ms=config.time_margin_ms, notices=0, slack_s=30.0,
    )


def check_tournament(
    config: TournamentConfig,
    *,
    games: int = DEFAULT_GAMES,
    reference: str = DEFAULT_REFERENCE,
    jobs: int | None = None,
    logs_dir: Path | None = None,
    deadline_s: float | None = None,
    build: bool = False,
    on_checked: Callable[[BotCheck], None] = lambda row: None,
) -> list[BotCheck]:
    """Check every bot of ``config`` as its tournament runs it: the same
    :class:`~arena.run.pool.BotPool` (its command, cwd, environment, options,
    limits and sandbox), the tournament's time control and start-up timeout,
    ``games`` games against the ``reference`` bot, both colours of each of
    the tournament's openings in turn.  ``jobs`` bots are checked at once
    (by default the file's concurrency), each in a process of its own that
    dies with the arena; one silent for ``deadline_s`` (by default
    :func:`check_deadline_s`) is killed with its bots, and so is one its
    bot killed.  Its Python packages (``python_packages``, a team's
    ``requirements.txt``) are installed first with ``build``; without, a
    bot whose packages are not installed yet cannot start (and the file's
    own refuse the check).  Rows come in file order; ``on_checked`` sees
    each as its check ends (without its packages' summary).  Raises
    :class:`~arena.bot.process.ArenaWriteError` when the arena cannot write
    a log or scratch directory, ``SandboxUnavailable`` when a bot's sandbox
    cannot run here, and ``ValueError`` for an unknown reference."""
    if reference not in REFERENCES:
        raise ValueError(f"unknown reference bot {reference!r}; use one of: {', '.join(REFERENCES)}")
    if games < 1:
        raise ValueError("--games must be at least 1")
    for sandbox in sorted({bot.sandbox for bot in config.bots}):
        check_sandbox(sandbox)  # as arena run would: a machine without it is refused in one line
    installs = with_environments(config, build=build)
    config, teams = installs.config, installs.teams
    jobs = max(1, jobs or config.concurrency)
    deadline_s = check_deadline_s(config, games) if deadline_s is None else deadline_s
    checked: dict[str, BotCheck] = {}

    def take(name: str, answer: bytes | Lost) -> None:
        checked[name] = row = _row(name, answer)
        on_checked(row)

    supervise(
        _check_child, {bot.name: (config, bot.name, games, reference, logs_dir) for bot in config.bots if bot.remote is None},
        kind="check", doing="checking it", at_once=jobs, deadline_s=deadline_s, on_answer=take,
    )
    rows = [
        BotCheck(bot.name, True, "", 0, 0, None, None, (REMOTE_NOT_CHECKED,)) if bot.remote is not None
        else checked[bot.name]
        for bot in config.bots
    ]
    return [_with_packages(row, teams[row.bot]) if row.bot in teams else row for row in rows]


def _with_packages(row: BotCheck, team: TeamPackages) -> BotCheck:
    """``row`` with what became of its team's ``requirements.txt``."""
    if team.warning:
        return replace(row, warnings=(*row.warnings, team.summary))
    return replace(row, packages=team.summary, packages_output=team.output)


def _row(name: str, answer: bytes | Lost) -> BotCheck:
    return _failed(name, answer.reason) if isinstance(answer, Lost) else BotCheck(**json.loads(answer))


def _failed(name: str, reason: str) -> BotCheck:
    return BotCheck(name, False, reason, 0, 0, None, None)


def _check_child(config: TournamentConfig, name: str, games: int, reference: str, logs_dir: Path | None) -> bytes:
    """In a check's process: bot ``name``'s row, in JSON."""
    row = check_one(config, name, games=games, reference=reference, logs_dir=logs_dir)
    return json.dumps(asdict(row)).encode()


def check_one(
    config: TournamentConfig, name: str, *, games: int = DEFAULT_GAMES, reference: str = DEFAULT_REFERENCE,
    logs_dir: Path | None = None,
) -> BotCheck:
    """Check bot ``name`` of ``config`` in this process (see :func:`check_tournament`)."""
    opponent = _reference_name(config, reference)
    config = config.with_bots(config.bots + (BotConfig(
        name=opponent, cmd=(sys.executable, "-m", REFERENCES[reference]), options={}, cwd=_ARENA_ROOT, env={},
    ),))
    pool = BotPool(config, logs_dir, CHECK_TAG)
    candidate = pool.player(name)
    seeds = [game_seed(config.competition.seed, f"{name}:check-{number + 1}") for number in range(games)]
    bot = next(b for b in config.bots if b.name == name)
    files = _files_of(bot, config)
    try:
        walk = _walk(candidate, _check_games(name, opponent, config.competition.game, config.competition.suite(), seeds),
                     pool.play, max_forfeits=MAX_FORFEITS)
    finally:
        pool.close()
    if walk.no_start is not None:
        return _failed(name, f"did not start: {walk.no_start}")
    warnings = [text for _, text in _warnings(walk, files, _files_of(bot, config)) + _machine_warnings(bot.sandbox)]
    reasons = [
        f"{record.game_id} as {walk.colors[seat]}: {describe_forfeit(record)}"
        for record, seat in walk.games if record.forfeit_by == walk.colors[seat]
    ]
    if not reasons and walk.exit_code == -signal.SIGKILL:
        reasons.append(f"still running {candidate.quit_grace_s:g} s after 'quit': killed")
    reason = reasons[0] if reasons else ""
    if walk.forfeits > 1:
        reason = f"{walk.forfeits} forfeits; first: {reason}"
    return BotCheck(name, not reasons, reason, len(walk.games), walk.forfeits, walk.slowest_ms, walk.peak_memory_bytes,
                    tuple(warnings))


def _files_of(bot: BotConfig, config: TournamentConfig | None = None) -> Fingerprint | None:
    """What ``bot``'s version is a digest of, or None when its folder cannot be read."""
    try:
        return fingerprint(bot, config.submission_limits) if config is not None else fingerprint(bot)
    except SubmissionProblem:
        return None


def _machine_warnings(sandbox: str) -> list[tuple[str, str]]:
    """What this machine leaves open that ``sandbox`` would close elsewhere
    (docs/security.md, 'What is shared between sandboxes')."""
    open_channel = unclosed_channel() if sandbox == "bwrap" else None
    if open_channel is None:
        return []
    return [("the sandbox keeps bots from signalling to each other", f"{open_channel}; see docs/security.md")]


def _warnings(walk: _Walk, before: Fingerprint | None, after: Fingerprint | None) -> list[tuple[str, str]]:
    """What the bot did that passes the check but should be fixed, as (what
    it should do, what it did): more than :data:`STDERR_WARN_BYTES` of
    stderr in a game, a write into the files its version is a digest of
    (its folder, or the files its command names)."""
    warnings = []
    if walk.most_stderr_bytes > STDERR_WARN_BYTES:
        warnings.append((f"writes at most {STDERR_WARN_BYTES // 1024} KiB to stderr a game",
                         f"wrote {walk.most_stderr_bytes // 1024} KiB to stderr in one game (over "
                         f"{STDERR_WARN_BYTES // 1024} KiB: a game's log keeps its first and last 32 KiB)"))
    if before is not None and after is not None and after.files != before.files:
        warnings.append(("leaves its own folder as it is",
                         f"wrote into its own folder ({describe_change(before, after)}): a new version of it "
                         "as it plays, so a run forfeits its later starts; write to $TMPDIR instead"))
    return warnings


def _reference_name(config: TournamentConfig, reference: str) -> str:
    """A name for the reference bot that no bot of ``config`` has."""
    taken = {bot.name for bot in config.bots}
    name, n = f"reference-{reference}", 1
    while name in taken:
        n += 1
        name = f"reference-{reference}-{n}"
    return name


def _larger(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def peak_memory_bytes(pid: int) -> int | None:
    """The peak resident memory of the process tree under ``pid``: the sum of
    each live process's high-water mark (``VmHWM`` in ``/proc/<pid>/status``,
    which the kernel keeps for the whole life of the process).  A sum of
    peaks, it may exceed what the tree held at any one moment; a process
    that already exited is not counted.  None where ``/proc`` has no such
    figure (not Linux, or the process is gone)."""
    total, found = 0, False
    for member in descendants([pid]):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:  # exited meanwhile
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) * 1024
                found = True
    return total if found else None


def render_checks(rows: list[BotCheck], time_control: TimeControl, fmt: str = "plain") -> str:
    """The table ``arena check FILE.yaml`` prints, in ``fmt`` (one of
    :data:`CHECK_FORMATS`): a row per bot, the reason last (it is the
    longest), every bot's text made safe for where it goes.  The plain table
    wraps the reason at :data:`REASON_WIDTH` and puts the warnings under it
    (``warning: ...``), md gives them a column, csv and json a field."""
    if fmt == "json":
        return json.dumps([{**asdict(row), "warnings": list(row.warnings)} for row in rows], indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["bot", "check", "games", "forfeits", "slowest_move_ms", "peak_memory_bytes", "reason", "warnings"])
        for row in rows:
            writer.writerow([safe(row.bot, "csv"), "passed" if row.passed else "failed", row.games, row.forfeits,
                             "" if row.slowest_ms is None else f"{row.slowest_ms:.1f}",
                             "" if row.peak_memory_bytes is None else row.peak_memory_bytes,
                             safe(row.reason, "csv"), safe("; ".join(row.warnings), "csv")])
        return out.getvalue().rstrip("\n")
    md = fmt == "md"
    where = "markdown" if md else "terminal"

    def wrapped(text: str) -> str:
        return textwrap.fill(safe(text, where, limit=None), REASON_WIDTH, break_on_hyphens=False)

    def last(row: BotCheck) -> list[str]:
        if md:
            return [safe(row.reason, where, limit=None) or "-", safe("; ".join(row.warnings), where, limit=None) or "-"]
        lines = ([wrapped(row.reason)] if row.reason else []) + [wrapped(f"warning: {w}") for w in row.warnings]
        lines += [wrapped(f"packages: {row.packages}")] if row.packages and row.passed else []
        return ["\n".join(lines) or "-"]

    table = [
        [
            safe(row.bot, where),
            "passed" if row.passed else "FAILED",
            str(row.games),
            str(row.forfeits),
            "-" if row.slowest_ms is None else f"{row.slowest_ms:.{1 if row.slowest_ms < 100 else 0}f} ms",
            "-" if row.peak_memory_bytes is None else f"{row.peak_memory_bytes / 2**20:.0f} MiB",
            *last(row),
        ]
        for row in rows
    ]
    headers = ["bot", "check", "games", "forfeits", f"slowest move (tc {time_control})", "peak memory", "reason",
               *(["warnings"] if md else [])]
    return tabulate(table, headers=headers, tablefmt="github" if md else "simple",
                    colalign=["left", "left", "right", "right", "right", "right", "left", "left"][:len(headers)],
                    disable_numparse=True)
