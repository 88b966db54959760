"""``arena check``: walk one bot through a checklist and say in plain words what is wrong."""

from __future__ import annotations

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

__all__ = ["CheckStep", "check_bot"]

#: The opponent: the stdlib random bot shipped with the arena.
RANDOM_BOT = (sys.executable, "-m", "bots.random_bot")


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
    environment and ``sandbox``.  Raises ``SandboxUnavailable`` when the
    sandbox cannot run here."""
    colors = engine.get_game(game).colors
    check_sandbox(sandbox)
    argv = split_command(command)
    problem = command_problem(argv, Path.cwd())
    if problem is not None:
        return [CheckStep("starts and answers 'hello' with 'ready'", False, problem)]
    bot = BotPlayer(
        BotConfig(name="candidate", cmd=argv, options={}, cwd=Path.cwd(), env={}, sandbox=sandbox),
        game,
        log_path=logs_dir / "candidate.log" if logs_dir else None,
        startup_timeout_s=startup_timeout_s,
        quit_grace_s=quit_grace_s,
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
