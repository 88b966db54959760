"""How close ``arena run`` comes to the pipe itself.

Measures, in one run, interleaved and repeated (medians are printed, so a
busy machine skews both sides alike):

1. ``arena run`` itself (a subprocess, progress line, store and all) between
   two instant C bots playing OXONO at concurrency 1: the *marginal* rate in
   plies per second between a short and a long tournament, which cancels
   start-up and shut-down;
2. the raw pipe: the very same games' lines (``new_game``, every ``turn``,
   ``game_over``) written over bare pipes to two processes of the same bot,
   with nothing but ``os.write`` and ``os.read`` and no checks: the ceiling;
3. both for full turns (``bots/c/random_bot.c``, which reads ``legal_moves``)
   and compact turns (``bots/c/oxono_bot.c``, which keeps its own board);
4. instant-bot throughput of ``arena run`` at concurrency 1 and 2: the
   steady rate of the long runs, from the records' end times;
5. the CPU time per ply of every process involved, which a busy machine
   skews far less than the rates;
6. the arena's own work per ply with no process at all (rules, clock, JSON).

    python benchmarks/arena_overhead.py [--short 100] [--long 600] [--repeat 5] [--modes full,compact]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from arena import protocol  # noqa: E402
from arena.clock import TimeControl  # noqa: E402
from arena.referee import play_game  # noqa: E402
from arena.schedule import GameSpec  # noqa: E402

GAME = "oxono"
TIME_CONTROL = "600+0"
#: The clock every raw turn carries (its digits count as much as the arena's).
RAW_CLOCK = {"remaining_ms": 599_987, "opponent_ms": 599_991, "increment_ms": 0}
BOTS = {"full": "random_bot", "compact": "oxono_bot"}


def build(directory: Path, name: str) -> Path:
    binary = directory / name
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(ROOT / "bots" / "c" / f"{name}.c")], check=True)
    return binary


def tournament(directory: Path, binary: Path, games: int, tag: str) -> Path:
    """Two instances of one bot; OXONO schedules 4 games per round."""
    path = directory / f"{tag}.yaml"
    path.write_text(
        f"name: {tag}\ngame: {GAME}\ntime_control: {TIME_CONTROL}\nrounds: {games // 4}\nseed: 1\n"
        f"output: {directory / tag}\nbots:\n  - {{name: a, cmd: {binary}}}\n  - {{name: b, cmd: {binary}}}\n"
    )
    return path


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def arena_run(directory: Path, binary: Path, games: int, concurrency: int, tag: str) -> tuple[float, float, list[dict]]:
    """Seconds of a whole ``arena run`` (fresh output directory), the CPU
    seconds of all its processes (bots included), and its records."""
    path = tournament(directory, binary, games, tag)
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(path), "-j", str(concurrency)],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
    records = [json.loads(line) for line in (directory / tag / "games.jsonl").read_text().splitlines()]
    subprocess.run(["rm", "-rf", str(directory / tag)], check=True)
    return seconds, cpu, records


def plies(records: list[dict]) -> int:
    return sum(len(r["moves"]) for r in records)


def steady_rate(records: list[dict]) -> float:
    """Plies per second while games were being played, from the records' own
    end times: from the first game's end to the last one's, so neither
    start-up nor shut-down counts (steadier than a difference of two runs)."""
    ends = sorted((datetime.fromisoformat(r["ended_at"]), len(r["moves"])) for r in records)
    return sum(n for _, n in ends[1:]) / (ends[-1][0] - ends[0][0]).total_seconds()


def marginal_rate(
    directory: Path, binary: Path, short: int, long: int, concurrency: int
) -> tuple[float, float, list[dict]]:
    """Plies per second between a ``short``- and a ``long``-game run, the
    CPU microseconds per ply of all processes between them, and the records."""
    t_short, cpu_short, r_short = arena_run(directory, binary, short, concurrency, "short")
    t_long, cpu_long, r_long = arena_run(directory, binary, long, concurrency, "long")
    extra = plies(r_long) - plies(r_short)
    return extra / (t_long - t_short), (cpu_long - cpu_short) / extra * 1e6, r_long


def wire_lines(records: list[dict], compact: bool) -> list[tuple[bytes, bytes, list[tuple[int, bytes]], bytes]]:
    """Per game: both new_game lines, each turn (seat, line), and game_over,
    exactly as a referee would send them (the clock aside)."""
    game = engine.get_game(GAME)
    games = []
    for record in records:
        players = record["players"]
        colors = list(players)
        state = game.new_state(seed=record["seed"], opening=record["opening"])
        starts = [
            protocol.encode(protocol.new_game(record["game_id"], GAME, color, players, record["time_control"],
                                              game.to_json(state), record["seed"]))
            for color in colors
        ]
        turns = []
        last = None
        for move in (m["move"] for m in record["moves"]):
            seat = game.to_move(state)
            if compact:
                message = protocol.compact_turn(record["game_id"], game.ply(state), last, RAW_CLOCK)
            else:
                message = protocol.turn(record["game_id"], game.ply(state), game.to_json(state),
                                        game.legal_moves(state), last, RAW_CLOCK)
            line = protocol.encode(message)
            turns.append((seat, line))
            state = game.apply(state, move)
            last = move
        over = protocol.encode(protocol.game_over(record["game_id"], record["winner"], record["reason"],
                                                  [m["move"] for m in record["moves"]], record.get("scores")))
        games.append((starts[0], starts[1], turns, over))
    return games


def raw_pipe_rate(binary: Path, games: list, compact: bool) -> tuple[float, float]:
    """Plies per second of the same lines over bare pipes to two bot
    processes, and the CPU microseconds per ply of this loop and the bots."""
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    bots = [subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, bufsize=0) for _ in range(2)]
    outs = [bot.stdin.fileno() for bot in bots]  # type: ignore[union-attr]
    ins = [bot.stdout.fileno() for bot in bots]  # type: ignore[union-attr]
    buffers = [b"", b""]

    def answer(seat: int) -> bytes:
        while b"\n" not in buffers[seat]:
            buffers[seat] += os.read(ins[seat], 65536)
        line, _, buffers[seat] = buffers[seat].partition(b"\n")
        return line

    hello = {"type": "hello", "protocol": 1, "game": GAME, "name": "raw", "options": {}}
    if compact:
        hello["compact_turns"] = True
    for seat in (0, 1):
        os.write(outs[seat], protocol.encode(hello))
        answer(seat)
    count = 0
    started = time.perf_counter()
    for start_0, start_1, turns, over in games:
        os.write(outs[0], start_0)
        os.write(outs[1], start_1)
        for seat, line in turns:
            os.write(outs[seat], line)
            answer(seat)
        os.write(outs[0], over)
        os.write(outs[1], over)
        count += len(turns)
    elapsed = time.perf_counter() - started
    for bot in bots:
        bot.stdin.close()  # type: ignore[union-attr]
        bot.wait(5)
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
    return count / elapsed, cpu / count * 1e6


class InProcessPlayer:
    """An instant random player without a process: what is left is the
    arena's own work per ply (rules, clock, JSON), the floor under any pipe."""

    compact_turns = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.rng = random.Random(name)

    def start_game(self, line: bytes) -> None:
        pass

    def end_game(self, line: bytes) -> None:
        pass

    def ask_move(self, turn_line: bytes, budget_ms: float) -> tuple[str, None, float]:
        start = turn_line.index(b'"legal_moves":["') + 16
        moves = turn_line[start : turn_line.index(b'"]', start)].split(b'","')
        return self.rng.choice(moves).decode(), None, 0.0


def arena_work_per_ply(game: str, games: int) -> float:
    seats = [InProcessPlayer("a"), InProcessPlayer("b")]
    control = TimeControl(initial_ms=60_000)
    count = 0
    started = time.perf_counter()
    for number in range(games):
        spec = GameSpec(index=number, game_id=f"g{number}", game=game, round=1, players=("a", "b"),
                        opening=number % engine.get_game(game).openings, seed=number)
        count += len(play_game(spec, seats, control).moves)  # type: ignore[arg-type]
    return (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", type=int, default=100, help="games of the short run (a multiple of 4)")
    parser.add_argument("--long", type=int, default=600, help="games of the long run (a multiple of 4)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of interleaved measurements")
    parser.add_argument("--modes", default="full,compact", help="turn modes to measure: full, compact or both")
    args = parser.parse_args()
    modes = args.modes.split(",")
    figures: dict[str, list[float]] = {}

    def note(key: str, value: float) -> None:
        figures.setdefault(key, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        binaries = {mode: build(directory, BOTS[mode]) for mode in modes}
        for _ in range(args.repeat):
            for mode in modes:
                compact = mode == "compact"
                rate, cpu, records = marginal_rate(directory, binaries[mode], args.short, args.long, 1)
                raw, raw_cpu = raw_pipe_rate(binaries[mode], wire_lines(records, compact), compact)
                note(f"{mode} arena", rate)
                note(f"{mode} raw", raw)
                note(f"{mode} ratio", rate / raw)
                note(f"{mode} cpu", cpu)
                note(f"{mode} raw cpu", raw_cpu)
                if mode == "full":
                    _, _, records_2 = marginal_rate(directory, binaries[mode], args.short, args.long, 2)
                    note("j1", steady_rate(records))
                    note("j2", steady_rate(records_2))
                    note("j2/j1", steady_rate(records_2) / steady_rate(records))

    med = {key: statistics.median(values) for key, values in figures.items()}
    spread = {key: (min(values), max(values)) for key, values in figures.items()}
    print(f"arena run, {GAME}, two instant C bots, marginal plies/s between {args.short} and {args.long} games; "
          f"medians of {args.repeat} interleaved rounds (min-max)")
    for mode in modes:
        lo, hi = spread[f"{mode} ratio"]
        print(f"  {mode + ' turns:':15} arena {med[mode + ' arena']:8,.0f} plies/s   raw pipe {med[mode + ' raw']:8,.0f} "
              f"plies/s   arena/raw = {med[mode + ' ratio']:.2f} ({lo:.2f}-{hi:.2f})")
    # CPU time barely depends on what else the machine runs, so it tells the
    # same story on a busy machine: all processes (driver, worker, bots).
    for mode in modes:
        print(f"  {mode + ' turns:':15} CPU per ply, all processes: arena {med[mode + ' cpu']:.1f} us, "
              f"raw pipe {med[mode + ' raw cpu']:.1f} us")
    if "full" in modes:
        lo, hi = spread["j2/j1"]
        print(f"  concurrency 1: {med['j1']:,.0f} plies/s   concurrency 2: {med['j2']:,.0f} plies/s   "
              f"2 vs 1 = {med['j2/j1']:.2f}x ({lo:.2f}-{hi:.2f})   (full turns, steady rate of the {args.long}-game runs)")
    for game in engine.GAMES:
        print(f"  {game}: the arena's own work per ply without any process (rules, clock, JSON): "
              f"{arena_work_per_ply(game, 300) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
