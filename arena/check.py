"""``arena check``: walk one bot through a checklist and say in plain words
what is wrong; or check every bot of a tournament file as its tournament
runs it, several at once, into one table."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

import multiprocess
from tabulate import tabulate
from multiprocess.connection import Connection, wait

import engine
from arena.bot.cgroups import cgroup_mode
from arena.bot.player import BotPlayer, Forfeit
from arena.bot.process import ArenaWriteError
from arena.bot.reaper import become_subreaper
from arena.bot.sandbox import check_sandbox
from arena.bot.spec import BotConfig, command_problem, split_command
from arena.bot.text import safe
from arena.game.clock import TimeControl
from arena.game.records import GameSpec
from arena.game.referee import play_game
from arena.results.forfeits import describe_forfeit
from arena.results.meta import META_FILE
from arena.results.store import GAMES_FILE
from arena.run.config import MAX_FILE_BYTES, TournamentConfig
from arena.run.pool import BotPool, die_with_the_arena, kill_leftovers, log_path
from arena.formats.game_pairs import game_seed

__all__ = ["BotCheck", "CheckStep", "DEFAULT_GAMES", "check_bot", "check_one", "check_tournament", "peak_memory_bytes", "render_checks"]

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


def check_bot(
    command: str,
    game: str,
    *,
    time_control: TimeControl = TimeControl(initial_ms=10_000, increment_ms=100),
    games: int = 2,
    startup_timeout_s: float = 10.0,
    quit_grace_s: float = 2.0,
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
    colors = rules.colors
    check_sandbox(sandbox)
    argv = split_command(command)
    cwd = (cwd or Path.cwd()).absolute()
    if not cwd.is_dir():
        raise ValueError(f"--cwd: no such directory {str(cwd)!r}")
    problem = command_problem(argv, cwd)
    if problem is not None:
        return [CheckStep("starts and answers 'hello' with 'ready'", False, problem)]
    hidden: tuple[Path, ...] = ()
    if sandbox != "none":  # only a sandbox hides anything: no need to look without one
        hidden = tournament_paths(cwd) + ((logs_dir.absolute(),) if logs_dir else ())
    bot = BotPlayer(
        BotConfig(name="candidate", cmd=argv, options={}, cwd=cwd, env={}, sandbox=sandbox),
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
    steps: list[CheckStep] = []
    try:
        try:
            ready = bot.ensure_started()
        except Forfeit as exc:
            steps.append(CheckStep("starts and answers 'hello' with 'ready'", False, exc.detail))
            return steps
        about = ", ".join(f"{k} {bot.ready[k]!s}" for k in ("name", "version", "author") if k in bot.ready)
        steps.append(CheckStep("starts and answers 'hello' with 'ready'", True, about or f"pid {ready.pid}"))
        for number in range(games):
            seat = number % 2
            seats = [bot, opponent] if seat == 0 else [opponent, bot]
            spec = GameSpec(index=number, game_id=f"check-{number + 1}", game=game, round=1,
                            players=(seats[0].name, seats[1].name), opening=number // 2 % rules.openings, seed=number)
            record = play_game(spec, seats, time_control)
            name = f"plays a whole game as {colors[seat]} against a random bot"
            if record.forfeit_by == colors[seat]:
                steps.append(CheckStep(name, False, describe_forfeit(record)))
                return steps
            times = [m.ms for m in record.moves[seat::2]]
            result = "draw" if record.winner is None else ("won" if record.winner == colors[seat] else "lost")
            mean = f", {sum(times) / len(times):.1f} ms a move on average" if times else ""
            steps.append(CheckStep(name, True, f"{result} by {record.reason} in {len(record.moves)} plies{mean}"))
        steps.append(CheckStep(
            "plays several games in one process",
            bot.starts == 1,
            "one process played every game" if bot.starts == 1 else f"the process had to be restarted ({bot.starts} starts)",
        ))
        process = bot.process
        bot.close()
        obeyed = process is not None and process.returncode is not None and process.returncode != -signal.SIGKILL
        steps.append(CheckStep(
            "exits on 'quit'",
            obeyed,
            f"exit code {process.returncode}" if obeyed else f"still running {quit_grace_s:g} s after 'quit': killed",
        ))
        return steps
    finally:
        bot.discard_process()
        opponent.close()


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
#: The tag of the check's bots in their logs and scratch directories.
CHECK_TAG = "check"
#: Slack beyond the games' longest possible time, for a bot's process
#: checks: start-up, quit, a loaded machine (see :func:`check_deadline_s`).
_DEADLINE_SLACK_S = 30.0
#: The longest game, in moves per player, for the deadline (OXONO's 32 and
#: YOXII's are well below).
_LONGEST_GAME_MOVES = 100


@dataclass(frozen=True)
class BotCheck:
    """One bot's row in ``arena check FILE.yaml``'s table.  ``reason`` is
    one line saying why it failed ("" when it passed); ``slowest_ms`` its
    slowest move (None before its first); ``peak_memory_bytes`` the most
    resident memory its processes held (see :func:`peak_memory_bytes`)."""

    bot: str
    passed: bool
    reason: str
    games: int
    forfeits: int
    slowest_ms: float | None
    peak_memory_bytes: int | None


def check_deadline_s(config: TournamentConfig, games: int) -> float:
    """The longest checking one bot may take however the bots behave: start-up
    and ``quit`` for each process it may need, and each game at its clock's
    worst for both players.  A bot's process silent for longer is stuck (its
    bot stopped it with ``SIGSTOP``, say) and is killed."""
    tc = config.time_control
    per_player_ms = (
        tc.per_move_ms * _LONGEST_GAME_MOVES if tc.per_move_ms is not None
        else tc.initial_ms + tc.increment_ms * _LONGEST_GAME_MOVES
    )
    per_game_s = 2 * (per_player_ms + config.time_margin_ms * _LONGEST_GAME_MOVES) / 1000
    restarts = MAX_FORFEITS + 1
    return games * per_game_s + restarts * (config.startup_timeout_s + 2.0) + _DEADLINE_SLACK_S


def check_tournament(
    config: TournamentConfig,
    *,
    games: int = DEFAULT_GAMES,
    reference: str = "random",
    jobs: int | None = None,
    logs_dir: Path | None = None,
    deadline_s: float | None = None,
) -> list[BotCheck]:
    """Check every bot of ``config`` as its tournament runs it: the same
    :class:`~arena.run.pool.BotPool` (its command, cwd, environment, options,
    limits and sandbox), the tournament's time control and start-up timeout,
    ``games`` games against the ``reference`` bot, both colours of each of
    the tournament's openings in turn.  ``jobs`` bots are checked at once
    (by default the file's concurrency), each in a process of its own that
    dies with the arena; one silent for ``deadline_s`` (by default
    :func:`check_deadline_s`) is killed with its bots, and so is one its
    bot killed.  Rows come in file order.  Raises
    :class:`~arena.bot.process.ArenaWriteError` when the arena cannot write
    a log or scratch directory, ``SandboxUnavailable`` when a bot's sandbox
    cannot run here, and ``ValueError`` for an unknown reference."""
    if reference not in REFERENCES:
        raise ValueError(f"unknown reference bot {reference!r}; use one of: {', '.join(REFERENCES)}")
    if games < 1:
        raise ValueError("--games must be at least 1")
    for sandbox in sorted({bot.sandbox for bot in config.bots}):
        check_sandbox(sandbox)  # as arena run would: a machine without it is refused in one line
    become_subreaper()  # the orphans of a killed check process come back here, to be killed
    cgroup_mode()  # found once, here, rather than in each process
    jobs = max(1, jobs or config.concurrency)
    deadline_s = check_deadline_s(config, games) if deadline_s is None else deadline_s
    pending = [bot.name for bot in config.bots]
    running: dict[Connection, tuple[str, multiprocess.Process, float]] = {}
    rows: dict[str, BotCheck] = {}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                name = pending.pop(0)
                ours, theirs = multiprocess.Pipe(duplex=False)
                process = multiprocess.Process(
                    target=_check_main, args=(theirs, config, name, games, reference, logs_dir),
                    name=f"arena-check-{name}", daemon=True,
                )
                process.start()
                theirs.close()
                running[ours] = (name, process, time.monotonic() + deadline_s)
            soonest = min(end for _, _, end in running.values())
            for conn in wait(list(running), max(0.0, soonest - time.monotonic())):
                name, process, _ = running.pop(conn)
                rows[name] = _answer(conn, name, process)
            for conn, (name, process, end) in list(running.items()):
                if time.monotonic() >= end:
                    del running[conn]
                    process.kill()
                    process.join()
                    conn.close()
                    kill_leftovers([process.pid] if process.pid is not None else [])
                    rows[name] = _failed(name, (
                        f"the arena's process checking it was silent for more than {deadline_s:.0f} s and was "
                        "killed (a bot that stops its parent with SIGSTOP does that)"
                    ))
    finally:
        for conn, (_, process, _) in running.items():  # Ctrl-C: each kills its bots on SIGTERM
            process.terminate()
            process.join(2.0)
            if process.is_alive():
                process.kill()
            conn.close()
    return [rows[bot.name] for bot in config.bots]


def _failed(name: str, reason: str) -> BotCheck:
    return BotCheck(name, False, reason, 0, 0, None, None)


def _answer(conn: Connection, name: str, process: multiprocess.Process) -> BotCheck:
    """What the process checking bot ``name`` answered, once it has."""
    try:
        kind, value = conn.recv()
    except EOFError:  # it died without a word: its bot may have killed it
        process.join(2.0)
        if process.is_alive():
            process.kill()
        process.join()
        kill_leftovers([process.pid] if process.pid is not None else [])
        return _failed(name, f"the arena's process checking it died (exit code {process.exitcode}; "
                             "a bot that kills its parent does that)")
    finally:
        conn.close()
    process.join()
    if kind == "arena":
        raise ArenaWriteError(value)
    if kind == "bug":
        raise RuntimeError(f"checking bot {name!r} failed:\n{value}")
    return value


def _check_main(
    conn: Connection, config: TournamentConfig, name: str, games: int, reference: str, logs_dir: Path | None
) -> None:
    die_with_the_arena()
    try:
        conn.send(("row", check_one(config, name, games=games, reference=reference, logs_dir=logs_dir)))
    except ArenaWriteError as exc:
        conn.send(("arena", str(exc)))
    except Exception:
        conn.send(("bug", traceback.format_exc()))


def check_one(
    config: TournamentConfig, name: str, *, games: int = DEFAULT_GAMES, reference: str = "random",
    logs_dir: Path | None = None,
) -> BotCheck:
    """Check bot ``name`` of ``config`` in this process (see :func:`check_tournament`)."""
    opponent = _reference_name(config, reference)
    config = replace(config, bots=config.bots + (BotConfig(
        name=opponent, cmd=(sys.executable, "-m", REFERENCES[reference]), options={}, cwd=_ARENA_ROOT, env={},
    ),))
    colors = engine.get_game(config.game).colors
    openings = config.competition.suite()
    pool = BotPool(config, logs_dir, CHECK_TAG)
    candidate = pool.player(name)
    played = forfeits = 0
    reasons: list[str] = []
    slowest: float | None = None
    peak: int | None = None
    try:
        try:
            candidate.ensure_started()
        except Forfeit as exc:
            return _failed(name, f"did not start: {exc.detail}")
        for number in range(games):
            seat = number % 2
            opening = openings[number // 2 % len(openings)]
            game_id = f"check-{number + 1}"
            spec = GameSpec(
                index=number, game_id=game_id, game=config.game, round=1,
                players=(name, opponent) if seat == 0 else (opponent, name),
                opening=opening.start, opening_moves=opening.moves, seed=game_seed(config.seed, f"{name}:{game_id}"),
            )
            record = pool.play(spec)
            played += 1
            times = [move.ms for move in record.moves[seat::2]]
            if times:
                slowest = max(slowest or 0.0, max(times))
            if candidate.process is not None and candidate.process.pid is not None:
                peak = _larger(peak, peak_memory_bytes(candidate.process.pid))
            if record.forfeit_by == colors[seat]:
                forfeits += 1
                reasons.append(f"{game_id} as {colors[seat]}: {describe_forfeit(record)}")
                if forfeits >= MAX_FORFEITS:
                    break
        process = candidate.process
        candidate.close()
        if not reasons and process is not None and process.returncode == -signal.SIGKILL:
            reasons.append(f"still running {candidate.quit_grace_s:g} s after 'quit': killed")
    finally:
        pool.close()
    reason = reasons[0] if reasons else ""
    if forfeits > 1:
        reason = f"{forfeits} forfeits; first: {reason}"
    return BotCheck(name, not reasons, reason, played, forfeits, slowest, peak)


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
    for member in _tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:  # exited meanwhile
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) * 1024
                found = True
    return total if found else None


def _tree(pid: int) -> list[int]:
    """``pid`` and its live descendants, from ``/proc/<pid>/task/*/children``."""
    seen, todo = [], [pid]
    while todo:
        current = todo.pop()
        seen.append(current)
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return seen


def render_checks(rows: list[BotCheck], time_control: TimeControl) -> str:
    """The table ``arena check FILE.yaml`` prints: a row per bot, the reason
    last (it is the longest), every bot's text made safe for a terminal."""
    table = [
        [
            safe(row.bot, "terminal"),
            "passed" if row.passed else "FAILED",
            str(row.games),
            str(row.forfeits),
            "-" if row.slowest_ms is None else f"{row.slowest_ms:.{1 if row.slowest_ms < 100 else 0}f} ms",
            "-" if row.peak_memory_bytes is None else f"{row.peak_memory_bytes / 2**20:.0f} MiB",
            safe(row.reason, "terminal") or "-",
        ]
        for row in rows
    ]
    headers = ["bot", "check", "games", "forfeits", f"slowest move (tc {time_control})", "peak memory", "reason"]
    return tabulate(table, headers=headers, colalign=["left", "left", "right", "right", "right", "right", "left"],
                    disable_numparse=True)
