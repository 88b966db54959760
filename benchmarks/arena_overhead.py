"""How much the arena costs on top of the pipe itself.

Prints, in one run:

1. plies per second of whole games refereed between two instant bots (the C
   random bot), with the engine, clock, JSON and protocol checks included;
2. the round-trip rate of the very same ``turn`` lines over a bare pipe to the
   same C bot, with nothing but ``os.write`` and ``os.read`` (the ceiling);
3. the arena's own work per ply with no process at all (rules, clock, JSON),
   the floor under any pipe;
4. games per second of the Python random bot with process reuse versus a new
   process for every game.

    python benchmarks/arena_overhead.py [--games 1000] [--python-games 40]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena import protocol  # noqa: E402
from arena.clock import TimeControl  # noqa: E402
from arena.config import BotConfig  # noqa: E402
from arena.player import BotPlayer  # noqa: E402
from arena.referee import play_game  # noqa: E402
from arena.schedule import GameSpec  # noqa: E402

CONTROL = TimeControl(initial_ms=60_000, increment_ms=0)


def build_c_bot(directory: Path) -> Path:
    binary = directory / "random_bot"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(ROOT / "bots" / "c" / "random_bot.c")], check=True)
    return binary


class RecordingPlayer(BotPlayer):
    """Keeps the turn lines it was sent, to replay them over a raw pipe."""

    recording = False
    turns: list[bytes] = []

    def ask_move(self, turn_line, budget_ms):  # type: ignore[no-untyped-def]
        if self.recording:
            self.turns.append(turn_line)
        return super().ask_move(turn_line, budget_ms)


def players(cmd_a: tuple[str, ...], cmd_b: tuple[str, ...], game: str) -> list[RecordingPlayer]:
    return [
        RecordingPlayer(BotConfig(name=name, cmd=cmd, options={}, cwd=ROOT, env={}), game)
        for name, cmd in (("a", cmd_a), ("b", cmd_b))
    ]


def spec(game: str, number: int) -> GameSpec:
    return GameSpec(index=number, game_id=f"bench-{number}", game=game, round=1,
                    players=("a", "b"), opening=number % 2 if game == "oxono" else 0, seed=number)


def refereed_games(game: str, cmd: tuple[str, ...], games: int) -> tuple[float, int, list[bytes]]:
    """Plays ``games`` games; returns seconds, plies, and one game's turn lines (for the raw run)."""
    seats = players(cmd, cmd, game)
    turns: list[bytes] = []
    try:
        for player in seats:
            player.turns = turns
            player.recording = True
        play_game(spec(game, 0), seats, CONTROL)  # also warms up
        for player in seats:
            player.recording = False
        plies = 0
        started = time.perf_counter()
        for number in range(games):
            plies += len(play_game(spec(game, number + 1), seats, CONTROL).moves)
        return time.perf_counter() - started, plies, turns
    finally:
        for player in seats:
            player.close()


class InProcessPlayer:
    """An instant random player without a process: what is left is the
    arena's own work per ply (rules, clock, JSON), the floor under any pipe.
    Picking the move from the line costs about a microsecond of that."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rng = random.Random(name)

    def start_game(self, message: dict) -> None:
        pass

    def end_game(self, message: dict) -> None:
        pass

    def ask_move(self, turn_line: bytes, budget_ms: float) -> tuple[str, None, float]:
        start = turn_line.index(b'"legal_moves":["') + 16
        moves = turn_line[start : turn_line.index(b'"]', start)].split(b'","')
        return self.rng.choice(moves).decode(), None, 0.0


def arena_work_per_ply(game: str, games: int) -> float:
    seats = [InProcessPlayer("a"), InProcessPlayer("b")]
    plies = 0
    started = time.perf_counter()
    for number in range(games):
        plies += len(play_game(spec(game, number), seats, CONTROL).moves)  # type: ignore[arg-type]
    return (time.perf_counter() - started) / plies


def raw_round_trips(game: str, cmd: tuple[str, ...], turns: list[bytes], seconds: float) -> float:
    """Round trips per second of the same turn lines over a bare pipe: one
    ``os.write`` and buffered ``os.read`` calls until the answer's newline."""
    bot = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert bot.stdin is not None and bot.stdout is not None
    out, into = bot.stdin.fileno(), bot.stdout.fileno()
    buffer = b""

    def answer() -> None:
        nonlocal buffer
        while b"\n" not in buffer:
            buffer += os.read(into, 65536)
        buffer = buffer[buffer.index(b"\n") + 1 :]

    os.write(out, protocol.encode(protocol.hello(game, "raw", {})))
    answer()
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for line in turns:
            os.write(out, line)
            answer()
        count += len(turns)
    elapsed = time.perf_counter() - started
    bot.stdin.close()
    bot.wait(5)
    return count / elapsed


def python_bot_games(game: str, games: int, reuse: bool) -> float:
    cmd = (sys.executable, str(ROOT / "bots" / "random_bot.py"))
    seats = players(cmd, cmd, game)
    started = time.perf_counter()
    try:
        for number in range(games):
            play_game(spec(game, number), seats, CONTROL)
            if not reuse:
                for player in seats:
                    player.close()
    finally:
        for player in seats:
            player.close()
    return games / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per game type for the C bot run")
    parser.add_argument("--python-games", type=int, default=40, help="games for the Python random bot runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        binary = build_c_bot(Path(tmp))
        for game in ("oxono", "yoxii"):
            seconds, plies, turns = refereed_games(game, (str(binary),), args.games)
            arena_rate = plies / seconds
            raw_rate = raw_round_trips(game, (str(binary),), turns, seconds=min(3.0, max(1.0, seconds)))
            work = arena_work_per_ply(game, args.games)
            print(f"{game}: arena {arena_rate:,.0f} plies/s ({args.games} games in {seconds:.2f} s, C random bots); "
                  f"raw pipe {raw_rate:,.0f} round trips/s with the same turn lines; "
                  f"arena/raw = {arena_rate / raw_rate:.2f}")
            print(f"{game}:   per ply: {1e6 / arena_rate:.1f} us in the arena, {1e6 / raw_rate:.1f} us raw round trip, "
                  f"{work * 1e6:.1f} us of it the arena's own work without any process (rules, clock, JSON)")
    for game in ("oxono", "yoxii"):
        reused = python_bot_games(game, args.python_games, reuse=True)
        fresh = python_bot_games(game, args.python_games, reuse=False)
        print(f"{game}: Python random bot {reused:.1f} games/s reusing processes, "
              f"{fresh:.1f} games/s with a new process per game ({reused / fresh:.1f}x)")


if __name__ == "__main__":
    main()
