"""``arena check``: walk one bot through a checklist and say in plain words what is wrong."""

from __future__ import annotations

import os
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import engine
from arena.bot.player import BotPlayer, Forfeit
from arena.bot.sandbox import check_sandbox
from arena.bot.spec import BotConfig, command_problem, split_command
from arena.game.clock import TimeControl
from arena.game.records import GameSpec
from arena.game.referee import play_game
from arena.results.forfeits import describe_forfeit
from arena.results.store import GAMES_FILE, META_FILE
from arena.run.config import MAX_FILE_BYTES
from arena.run.pool import log_path

__all__ = ["CheckStep", "check_bot"]

#: The opponent: the stdlib random bot shipped with the arena.
RANDOM_BOT = (sys.executable, "-m", "bots.random_bot")
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
) -> list[CheckStep]:
    """Run the checklist; stops at the first step that fails, since later ones depend on it.
    The bot runs as a tournament runs it: with the default limits, a clean
    environment and ``sandbox``, which hides from it what a tournament's
    would (:func:`tournament_paths`, and the logs).  Raises
    ``SandboxUnavailable`` when the sandbox cannot run here."""
    colors = engine.get_game(game).colors
    check_sandbox(sandbox)
    argv = split_command(command)
    problem = command_problem(argv, Path.cwd())
    if problem is not None:
        return [CheckStep("starts and answers 'hello' with 'ready'", False, problem)]
    hidden: tuple[Path, ...] = ()
    if sandbox != "none":  # only a sandbox hides anything: no need to look without one
        hidden = tournament_paths(Path.cwd()) + ((logs_dir.absolute(),) if logs_dir else ())
    bot = BotPlayer(
        BotConfig(name="candidate", cmd=argv, options={}, cwd=Path.cwd(), env={}, sandbox=sandbox),
        game,
        log_path=log_path(logs_dir, "candidate", "check") if logs_dir else None,
        startup_timeout_s=startup_timeout_s,
        quit_grace_s=quit_grace_s,
        hidden=hidden,
    )
    opponent = BotPlayer(
        BotConfig(name="random", cmd=RANDOM_BOT, options={}, cwd=Path.cwd(), env={}), game, startup_timeout_s=startup_timeout_s
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
                            players=(seats[0].name, seats[1].name), opening=number // 2 % 2, seed=number)
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
