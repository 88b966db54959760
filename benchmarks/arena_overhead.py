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
   skews far less than the rates, and the driver's own CPU time per game
   (the ``arena run`` process, which stores, folds and shows every game);
6. where the gap is: one ``turn`` exchange through the arena's I/O path
   (``BotPlayer.ask_move``, as a worker at concurrency 1 calls it) against
   the bare ``os.write``/``os.read`` of the same line, paired in one
   process; and the referee's own work per ply with no process at all
   (the recorded games replayed: rules, clock, JSON, records), which gives
   the best ratio any arena running this referee could reach; and the
   ratio of the same games played in this process (``BotPool.play``),
   without the worker process, driver, store or progress line;
7. the arena's own work per ply for each game, random moves, full turns.

    python benchmarks/arena_overhead.py [--short 100] [--long 600] [--repeat 5] [--modes full,compact]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from arena.bot import protocol  # noqa: E402
from arena.bot.player import BotPlayer  # noqa: E402
from arena.bot.spec import BotConfig
from arena.game.clock import Clock, TimeControl  # noqa: E402
from arena.game.records import GameSpec
from arena.game.referee import play_game  # noqa: E402
from arena.run.config import load_config  # noqa: E402
from arena.run.pool import BotPool  # noqa: E402
from arena.formats.schedule import make_schedule  # noqa: E402

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


#: ``arena run`` as the command line runs it, writing on the way out the CPU
#: seconds of its own process (the driver: not its workers, not the bots)
#: to the file its first argument names.
DRIVER = """import resource, sys
out = sys.argv.pop(1)
sys.argv[0] = "arena"
from arena.__main__ import main
try:
    main()
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    open(out, "w").write(repr(usage.ru_utime + usage.ru_stime))
"""


@dataclass
class ArenaRun:
    seconds: float
    #: CPU seconds of all its processes: driver, workers, bots.
    cpu: float
    #: CPU seconds of the driver alone.
    driver_cpu: float
    records: list[dict]


def arena_run(directory: Path, binary: Path, games: int, concurrency: int, tag: str) -> ArenaRun:
    """A whole ``arena run`` (fresh output directory), timed."""
    path = tournament(directory, binary, games, tag)
    driver_file = directory / f"{tag}.driver-cpu"
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(driver_file), "run", str(path), "-j", str(concurrency)],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
    records = [json.loads(line) for line in (directory / tag / "games.jsonl").read_text().splitlines()]
    subprocess.run(["rm", "-rf", str(directory / tag)], check=True)
    return ArenaRun(seconds, cpu, float(driver_file.read_text()), records)


def plies(records: list[dict]) -> int:
    return sum(len(r["moves"]) for r in records)


def steady_rate(records: list[dict]) -> float:
    """Plies per second while games were being played, from the records' own
    end times: from the first game's end to the last one's, so neither
    start-up nor shut-down counts (steadier than a difference of two runs)."""
    ends = sorted((datetime.fromisoformat(r["ended_at"]), len(r["moves"])) for r in records)
    return sum(n for _, n in ends[1:]) / (ends[-1][0] - ends[0][0]).total_seconds()


@dataclass
class Marginal:
    """What the games a long run plays beyond a short one cost."""

    plies_per_s: float
    #: CPU microseconds per ply, all processes.
    cpu_per_ply_us: float
    #: CPU milliseconds per game of the driver alone.
    driver_per_game_ms: float
    #: The long run's records.
    records: list[dict]


def marginal_rate(directory: Path, binary: Path, short: int, long: int, concurrency: int) -> Marginal:
    """Between a ``short``- and a ``long``-game run."""
    a = arena_run(directory, binary, short, concurrency, "short")
    b = arena_run(directory, binary, long, concurrency, "long")
    extra = plies(b.records) - plies(a.records)
    return Marginal(extra / (b.seconds - a.seconds), (b.cpu - a.cpu) / extra * 1e6,
                    (b.driver_cpu - a.driver_cpu) / (len(b.records) - len(a.records)) * 1e3, b.records)


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

    hello = protocol.hello(GAME, "raw", {})
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


def io_path_vs_raw(binary: Path, rounds: int = 15, exchanges: int = 2000) -> tuple[float, float]:
    """Microseconds per ``turn`` exchange with a full-turn bot: through
    ``BotPlayer.ask_move`` (spinning, as at concurrency 1 on two cores) and
    through a bare blocking ``os.write``/``os.read`` of the same line to
    another process of the same bot; medians of interleaved blocks."""
    control = TimeControl(initial_ms=600_000)
    player = BotPlayer(BotConfig(name="a", cmd=(str(binary),), options={}, cwd=ROOT, env={}), GAME, spin=True)
    player.ensure_started()
    game = engine.get_game(GAME)
    state = game.new_state(opening=0)
    start = protocol.new_game_lines("g1", GAME, {"pink": "a", "black": "b"}, [control.to_json()] * 2,
                                    game.to_json_text(state), 1)
    player.start_game(start[0])
    line = protocol.TurnLines("g1").full(0, game.to_json_text(state), game.legal_moves(state), None,
                                         Clock(control).to_json_text(0))
    bare = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=0)
    fd_in, fd_out = bare.stdin.fileno(), bare.stdout.fileno()  # type: ignore[union-attr]
    for message in (protocol.encode(protocol.hello(GAME, "raw", {})), start[0]):
        os.write(fd_in, message)
    os.read(fd_out, 65536)  # its ready

    def raw() -> float:
        started = time.perf_counter()
        for _ in range(exchanges):
            os.write(fd_in, line)
            os.read(fd_out, 65536)
        return (time.perf_counter() - started) / exchanges * 1e6

    def arena() -> float:
        started = time.perf_counter()
        for _ in range(exchanges):
            player.ask_move(line, 600_000.0, lambda: (b"", line))  # a local bot never rejoins
        return (time.perf_counter() - started) / exchanges * 1e6

    pairs = [(arena(), raw()) for _ in range(rounds)]
    player.close()
    bare.stdin.close()  # type: ignore[union-attr]
    bare.wait(5)
    return statistics.median(a for a, _ in pairs), statistics.median(r for _, r in pairs)


def in_process_rate(directory: Path, binary: Path, games: int) -> float:
    """Plies per second of the same tournament's games played one after
    another in this process (``BotPool.play``, spinning as a worker at
    concurrency 1 on two cores does): the arena's bots, referee and I/O,
    without the worker process, the driver, the store or the progress line."""
    config = load_config(tournament(directory, binary, games, "in-process"))
    pool = BotPool(config, None, tag="bench", spin=True)
    specs = make_schedule(config.competition)
    try:
        pool.play(specs[0])  # both bots started and greeted first
        started = time.perf_counter()
        count = sum(len(pool.play(spec).moves) for spec in specs)
        return count / (time.perf_counter() - started)
    finally:
        pool.close()


class ReplayPlayer:
    """Plays a recorded game's moves back without a process: the referee's
    work around it is all that is left."""

    #: A local player's: no network between it and the referee.
    network_margin_ms = None
    latency_ms = None

    def __init__(self, name: str, compact: bool, moves: Iterator[str]) -> None:
        self.name = name
        self.compact_turns = compact
        self.moves = moves

    def start_game(self, line: bytes) -> None:
        pass

    def end_game(self, line: bytes) -> None:
        pass

    def ask_move(self, turn_line: bytes, budget_ms: float, rejoin: object = None) -> tuple[str, None, float]:
        return next(self.moves), None, 0.01


def referee_work_per_ply(records: list[dict], compact: bool, repeat: int = 5) -> float:
    """Seconds of the referee's own work per ply (rules, clock, turn lines,
    record and its line), replaying ``records`` without any process; the
    fastest of ``repeat`` passes, as the floor it is."""
    specs = [
        GameSpec(index=r["index"], game_id=r["game_id"], game=GAME, round=r["round"], players=tuple(r["players"].values()),
                 opening=r["opening"], seed=r["seed"], pair=r["pair"])
        for r in records
    ]
    control = TimeControl(initial_ms=600_000)
    best = math.inf
    for _ in range(repeat):
        count = 0
        started = time.perf_counter()
        for spec, record in zip(specs, records):
            moves = iter([m["move"] for m in record["moves"]])
            seats = [ReplayPlayer(name, compact, moves) for name in spec.players]
            played = play_game(spec, seats, control)  # type: ignore[arg-type]
            played.to_line()
            count += len(played.moves)
        best = min(best, (time.perf_counter() - started) / count)
    return best


class InProcessPlayer(ReplayPlayer):
    """An instant random player without a process, for full turns: what is
    left is the arena's own work per ply (rules, clock, JSON)."""

    def __init__(self, name: str) -> None:
        super().__init__(name, False, iter(()))
        self.rng = random.Random(name)

    def ask_move(self, turn_line: bytes, budget_ms: float, rejoin: object = None) -> tuple[str, None, float]:
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
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.short, args.long, args.repeat = 8, 24, 1
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
                run = marginal_rate(directory, binaries[mode], args.short, args.long, 1)
                records = run.records
                raw, raw_cpu = raw_pipe_rate(binaries[mode], wire_lines(records, compact), compact)
                note(f"{mode} arena", run.plies_per_s)
                note(f"{mode} raw", raw)
                note(f"{mode} ratio", run.plies_per_s / raw)
                note(f"{mode} cpu", run.cpu_per_ply_us)
                note(f"{mode} driver", run.driver_per_game_ms)
                note(f"{mode} raw cpu", raw_cpu)
                note(f"{mode} referee", referee_work_per_ply(records, compact))
                note(f"{mode} in-process ratio", in_process_rate(directory, binaries[mode], args.long) / raw)
                if mode == "full":
                    run_2 = marginal_rate(directory, binaries[mode], args.short, args.long, 2)
                    records_2 = run_2.records
                    note("j2 driver", run_2.driver_per_game_ms)
                    note("j1", steady_rate(records))
                    note("j2", steady_rate(records_2))
                    note("j2/j1", steady_rate(records_2) / steady_rate(records))
        io_figures = io_path_vs_raw(binaries["full"], *((3, 200) if args.quick else ())) if "full" in modes else None

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
              f"raw pipe {med[mode + ' raw cpu']:.1f} us; the driver's CPU per game: {med[mode + ' driver']:.2f} ms"
              + (f" (2 workers: {med['j2 driver']:.2f} ms)" if mode == "full" else ""))
    if "full" in modes:
        lo, hi = spread["j2/j1"]
        print(f"  concurrency 1: {med['j1']:,.0f} plies/s   concurrency 2: {med['j2']:,.0f} plies/s   "
              f"2 vs 1 = {med['j2/j1']:.2f}x ({lo:.2f}-{hi:.2f})   (full turns, steady rate of the {args.long}-game runs)")
    if io_figures is not None:
        arena_us, raw_us = io_figures
        print(f"  one turn exchange, full turns: arena's I/O path (BotPlayer.ask_move) {arena_us:.1f} us, "
              f"bare os.write/os.read {raw_us:.1f} us")
    for mode in modes:
        # The best any arena running this referee could do: the raw pipe's
        # time per ply plus the referee's own work, nothing else.
        work = med[f"{mode} referee"]
        ceiling = (1 / med[f"{mode} raw"]) / (1 / med[f"{mode} raw"] + work)
        print(f"  {mode + ' turns:':15} the referee's own work per ply (recorded games replayed, no process): "
              f"{work * 1e6:.1f} us; raw pipe + that alone would be arena/raw = {ceiling:.2f}; "
              f"the games in one process (BotPool.play): {med[mode + ' in-process ratio']:.2f}")
    for game in engine.GAMES:
        print(f"  {game}: the arena's own work per ply without any process, random moves, full turns: "
              f"{arena_work_per_ply(game, 30 if args.quick else 300) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
