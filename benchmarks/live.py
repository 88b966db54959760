"""The live view's figures: whether every move reaches a client, how soon,
and what the clients cost the tournament.

1. Latency: ``arena serve`` of an empty results directory, one client of its
   event stream, then ``arena run`` of bots that sleep a random 20-300 ms
   before each move and note the wall time at which they send it; the client
   notes when each game's ply first reaches it.  The difference, per move,
   gives the median and the 99th percentile (a move the feed's throttle
   folded into the next one counts from its own time).
2. Delivery: the same with bots of fast moves (2-10 ms): of every game's
   plies, how many reached the client (in the longest list of moves it was
   sent for the game, as far as that list is the record's), and whether
   each list it was sent extended the one before (in order).  Must be 100 %.
3. Throughput: the games per second of ``arena run`` of instant bots
   (``bots.random_bot``), without ``--serve``, with it and no client, and
   with it while 100 clients hold the event stream (each fetches the page
   whole at the first change of the results and reads the changes after
   it, as live.js does); runs interleaved, medians printed, with the CPU
   per game and the bytes each client read per game.  The rate is the
   steady one, from the records' end times (the middle 80 % of the games,
   and with clients only once the server answers: start-up and the last
   games are left out; the CPU figures count everything).  The clients run
   in this process, on the same machine as the tournament (from as many
   loopback addresses as the server's bound of 64 an address needs); only
   the first parses what it reads.

With ``--executor ray`` the tournaments run on a Ray instance started on
this machine: the moves then reach the live files as messages from the
actors to the run (see docs/live.md).

4. Bytes per event: what the server sends each open page after a game is
   stored, in round-robins of 100 and 1,000 bots: the page whole (before:
   live.js fetched it again) against the page's change (now).

    python benchmarks/live.py [--moves 300] [--rounds 60] [--repeat 3] [--clients 100] [--executor local|ray]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TIMED_BOT = textwrap.dedent('''\
    import json, random, sys, time
    sys.path.insert(0, {tests_bots!r})
    from _botlib import play
    rng = random.Random()
    out = open(sys.argv[1], "a", buffering=1)
    game = [None]
    def on_other(message):
        if message.get("type") == "new_game":
            game[0] = message["game_id"]
    def on_turn(turn, count):
        time.sleep(rng.uniform({pause_s[0]!r}, {pause_s[1]!r}))
        out.write(json.dumps([game[0], turn["ply"] + 1, time.time()]) + "\\n")
        return {{"type": "move", "move": rng.choice(turn["legal_moves"])}}
    play(on_turn, on_other=on_other)
''')


#: Clients of one loopback address (the server's bound is 64).
PER_ADDRESS = 50


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tournament(directory: Path, bots: dict[str, str], rounds: int, executor: str, concurrency: int = 2) -> Path:
    entries = "".join(f"  - {{name: {name}, cmd: {cmd}, cwd: {ROOT}}}\n" for name, cmd in bots.items())
    path = directory / "t.yaml"
    path.write_text(f"name: bench\ngame: oxono\ntime_control: 60+1\nrounds: {rounds}\nconcurrency: {concurrency}\n"
                    f"executor: {executor}\nseed: 5\noutput: out\nbots:\n{entries}")
    return path


def start_run(file: Path, port: int | None) -> subprocess.Popen[bytes]:
    serve = ["--serve", str(port)] if port is not None else []
    return subprocess.Popen([sys.executable, "-m", "arena", "run", str(file), *serve], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


@dataclass
class Seen:
    """What the clients of :func:`clients` saw: when each (game, ply) first came (the first client's view),
    each game's longest list of moves and whether a list ever failed to extend the one before (the first
    client's), the events and bytes read by all of them."""

    arrivals: dict[tuple[str, int], float] = field(default_factory=dict)
    moves: dict[str, list[str]] = field(default_factory=dict)
    disordered: set[str] = field(default_factory=set)
    events: int = 0
    bytes: int = 0

    def take(self, data: dict, now: float) -> None:
        self.arrivals.setdefault(("", 0), now)  # connected: moves before this are not counted
        for game in data["live"]:
            before, moves = self.moves.get(game["id"], []), game["moves"]
            if moves[:len(before)] != before:
                self.disordered.add(game["id"])
            if len(moves) >= len(before):
                self.moves[game["id"]] = moves
            # A game held after its end shows the record's moves, read seconds later: not the live path.
            if "ended" not in game:
                for ply in range(1, len(moves) + 1):
                    self.arrivals.setdefault((game["id"], ply), now)


async def clients(url: str, count: int, stop: threading.Event, seen: Seen) -> None:
    """``count`` clients of the event stream until ``stop``; each fetches the
    page whole at the first change of the results, and reads the changes
    the stream sends after it (as live.js does).  The first reads each state
    into ``seen``; the others only take the bytes, as a browser's cost here
    is not the server's."""
    from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector

    async def one(session: ClientSession, index: int) -> None:
        fetched, name = False, ""
        while not stop.is_set():
            buffer = b""
            try:
                async with session.get(url + "events") as response:
                    # In chunks, split here: an event's line may be longer than aiohttp's longest line.
                    async for chunk in response.content.iter_any():
                        if stop.is_set():
                            return
                        seen.bytes += len(chunk)
                        if fetched and index != 0:
                            continue
                        *lines, buffer = (buffer + chunk).split(b"\n")
                        for line in lines:
                            if line.startswith(b"event: "):
                                name = line[7:].decode().strip()
                            if not line.startswith(b"data: "):
                                continue
                            seen.events += 1
                            if name == "state" and index == 0:
                                seen.take(json.loads(line[6:]), time.time())
                            if name == "page" and not fetched:
                                async with session.get(url + "page") as page:
                                    seen.bytes += len(await page.read())
                                fetched = True
            except (ClientError, OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.1)  # not up yet, or gone at the end

    # The server takes 64 connections from one address: the clients come from as many loopback addresses as they need.
    sessions = [ClientSession(timeout=ClientTimeout(total=None, sock_connect=2),
                              connector=TCPConnector(local_addr=(f"127.0.0.{1 + group}", 0), limit=0))
                for group in range((count + PER_ADDRESS - 1) // PER_ADDRESS)]
    try:
        await asyncio.gather(*(one(sessions[i // PER_ADDRESS], i) for i in range(count)))
    finally:
        for session in sessions:
            await session.close()


def with_clients(url: str, count: int, seen: Seen,
                 cpu: list[float] | None = None) -> tuple[threading.Event, threading.Thread]:
    """The clients on a thread of their own; ``cpu`` gets the CPU seconds that thread used."""
    stop = threading.Event()

    def run() -> None:
        started = time.thread_time()
        asyncio.run(clients(url, count, stop, seen))
        if cpu is not None:
            cpu.append(time.thread_time() - started)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return stop, thread


@dataclass
class TimedRun:
    """A run of bots that note when they send each move, watched by one client from its start."""

    #: The seconds from each move sent to the first state that held it.
    delays: list[float]
    #: The plies of the games the client saw start, and how many of them reached it (in each game's
    #: longest list of moves, as far as that list is the record's).
    plies: int
    delivered: int
    #: The games whose lists of moves did not each extend the one before, or ended off the record's.
    disordered: int
    games: int


def timed_run(moves: int, executor: str, pause_s: tuple[float, float], bots: int = 3) -> TimedRun:
    """``moves`` moves or so of ``bots`` bots that think a random ``pause_s`` seconds before each, watched by one client."""
    with tempfile.TemporaryDirectory(prefix="live-latency-") as tmp:
        directory = Path(tmp)
        bot = directory / "timed_bot.py"
        bot.write_text(TIMED_BOT.format(tests_bots=str(ROOT / "tests" / "bots"), pause_s=pause_s))
        sent = directory / "sent.jsonl"
        cmd = f"[python, {bot}, {sent}]"
        # Enough rounds for ``moves`` moves (about 25 a game, bots × (bots - 1) games a round).
        rounds = max(1, moves // (25 * bots * (bots - 1)) + 1)
        file = tournament(directory, {name: cmd for name in "abc"[:bots]}, rounds, executor)
        port = free_port()
        seen = Seen()
        # The server first (``arena serve`` from another terminal), the client on it, then the run: every game is seen from its start.
        (directory / "out").mkdir()
        server = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(directory / "out"), "--port", str(port)],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        stop, thread = with_clients(f"http://127.0.0.1:{port}/", 1, seen)
        try:
            deadline = time.monotonic() + 60
            while ("", 0) not in seen.arrivals and time.monotonic() < deadline:
                time.sleep(0.05)
            start_run(file, None).wait()
            time.sleep(1.0)  # the last records read (the server looks every 0.25 s)
        finally:
            stop.set()
            # The server first: its end closes the stream the client waits on (the next event may be seconds away).
            server.terminate()
            server.wait(30)
            thread.join(10)
        connected = seen.arrivals.get(("", 0), float("inf"))
        delays, started = [], {}
        for line in sent.read_text().splitlines():
            game, ply, at = json.loads(line)
            started.setdefault(game, at)
            if at < connected:
                continue
            # The first view holding this ply or a later one of the same game.
            shown = [t for (g, p), t in seen.arrivals.items() if g == game and p >= ply]
            if shown:
                delays.append(min(shown) - at)
        records = [json.loads(line) for line in (directory / "out" / "games.jsonl").read_text().splitlines()]
        watched = [r for r in records if started.get(r["game_id"], 0.0) > connected]
        plies = delivered = disordered = 0
        for record in watched:
            played = [move["move"] for move in record["moves"]]
            got = seen.moves.get(record["game_id"], [])
            common = next((i for i, (a, b) in enumerate(zip(played, got)) if a != b), min(len(played), len(got)))
            plies, delivered = plies + len(played), delivered + common
            disordered += record["game_id"] in seen.disordered or got != played[:len(got)]
        return TimedRun(delays[:moves], plies, delivered, disordered, len(watched))


def steady_rate(results: Path, since: float = 0.0) -> float:
    """Games per second between the end of the first tenth of the games (or
    ``since``, when later: the server up) and the start of the last tenth."""
    ends = sorted(datetime.fromisoformat(json.loads(line)["ended_at"].replace("Z", "+00:00")).timestamp()
                  for line in (results / "games.jsonl").read_text().splitlines())
    first, last = max(len(ends) // 10, sum(end < since for end in ends)), len(ends) - 1 - len(ends) // 10
    if last <= first:  # a run too short (--quick) for two games to end once the server was up: no rate to tell
        return math.nan
    return (last - first) / (ends[last] - ends[first])


@dataclass
class Rate:
    """A run of instant bots: its games per second (steady), CPU milliseconds per game of the run
    (workers, bots, server) and of the clients, and the bytes each client read per game."""

    games_s: float
    cpu_ms: float
    clients_cpu_ms: float
    client_bytes: float


def throughput(rounds: int, serve: bool, count: int, executor: str, bots: int = 4) -> Rate:
    """A run of ``rounds`` rounds of ``bots`` random bots, with ``--serve`` and ``count`` clients or without."""
    with tempfile.TemporaryDirectory(prefix="live-rate-") as tmp:
        directory = Path(tmp)
        random_bot = "python -m bots.random_bot"
        file = tournament(directory, {name: random_bot for name in "abcd"[:bots]}, rounds, executor)
        port = free_port() if serve else None
        stop = thread = None
        client_cpu: list[float] = []
        seen = Seen()
        if serve and count:
            stop, thread = with_clients(f"http://127.0.0.1:{port}/", count, seen, cpu=client_cpu)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = start_run(file, port)
        run.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if stop is not None and thread is not None:
            stop.set()
            thread.join(10)
        games = len((directory / "out" / "games.jsonl").read_text().splitlines())
        used = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        up = seen.arrivals.get(("", 0), 0.0)
        return Rate(steady_rate(directory / "out", up), 1000 * used / games, 1000 * sum(client_cpu) / games,
                    seen.bytes / max(count, 1) / games)


def event_bytes(bots: int, games: int) -> tuple[int, int, int, float]:
    """What one open page is sent after a game is stored, in a round-robin of
    ``bots`` bots that played ``games`` games: (before: the state event and
    the page fetched whole, as live.js did; after: the state event and the
    page's change; the page's size; the seconds the server took to make the change)."""
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]
    from arena.live.server import event
    from arena.live.state import LiveState
    from read_results import write_results

    with tempfile.TemporaryDirectory() as tmp:
        out = write_results(Path(tmp), games, bots).parent / "out"
        lines = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
        (out / "games.jsonl").write_bytes(b"".join(lines[:-1]))
        state = LiveState(out)
        state.page()  # what the open pages show
        with open(out / "games.jsonl", "ab") as log:
            log.write(lines[-1])
        state.refresh()
        page = state.page()
        started = time.perf_counter()
        change = state.page_change()
        took = time.perf_counter() - started
        status = len(event("state", {**state.snapshot(), "results": state.generation}))
        return status + len(page), status + len(event("page", change)), len(page), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.moves, args.rounds, args.repeat, args.clients = 40, 1, 1, 2  # 40 moves: one round of two games in the timed run

    for bots, games in ((6, 60),) if args.quick else ((100, 2_000), (1_000, 4_000)):
        before, after, page, took = event_bytes(bots, games)
        print(f"bytes to each open page after a game, {bots} bots, {games} games: before (the page whole) "
              f"{before / 1e3:,.1f} KB, after (its change) {after / 1e3:,.1f} KB; page {page / 1e6:.2f} MB, "
              f"change made in {took:.2f} s", flush=True)

    # --quick: two bots, a few games a run, in the timed runs and the throughput's (each run's start-up is
    # most of its time).
    bots = 2 if args.quick else 3
    rate_bots = 2 if args.quick else 4
    # --quick: one run of fast moves gives both the latency and the delivery lines (the same code measures
    # both; a second run would only cost another tournament's start-up).
    timed = timed_run(args.moves, args.executor, (0.002, 0.01) if args.quick else (0.02, 0.3), bots)
    delays = sorted(timed.delays) or [math.nan]  # none: the run was over before the client came (--quick, a busy machine)
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))]
    print(f"latency from a move sent to an event-stream client ({args.executor} executor), {len(delays)} moves: "
          f"median {1000 * statistics.median(delays):.0f} ms, p99 {1000 * p99:.0f} ms, max {1000 * delays[-1]:.0f} ms")
    fast = timed if args.quick else timed_run(args.moves, args.executor, (0.002, 0.01), bots)
    print(f"moves delivered to an event-stream client, games of fast moves (2-10 ms a move), {fast.games} games: "
          f"{fast.delivered} of {fast.plies} plies ({100 * fast.delivered / max(fast.plies, 1):.1f} %), "
          f"{fast.games - fast.disordered} of {fast.games} games in order", flush=True)

    runs: dict[str, list[Rate]] = {"without": [], "0 clients": [], f"{args.clients} clients": []}
    for _ in range(args.repeat):
        runs["without"].append(throughput(args.rounds, False, 0, args.executor, rate_bots))
        runs["0 clients"].append(throughput(args.rounds, True, 0, args.executor, rate_bots))
        runs[f"{args.clients} clients"].append(throughput(args.rounds, True, args.clients, args.executor, rate_bots))
    rate = {name: statistics.median(r.games_s for r in each) for name, each in runs.items()}
    cpu = {name: statistics.median(r.cpu_ms for r in each) for name, each in runs.items()}
    crowd = runs[f"{args.clients} clients"]
    a, b, c = rate.values()
    print(f"games per second, {args.rounds} rounds of {rate_bots} random bots, concurrency 2, median of {args.repeat}: "
          f"without --serve {a:.1f}, with --serve and 0 clients {b:.1f}, with {args.clients} clients {c:.1f} "
          f"({100 * c / b:.0f} % of 0 clients', {100 * c / a:.0f} % of without)")
    for name, each in runs.items():
        print(f"  runs {name}:", ", ".join(f"{r.games_s:.1f}" for r in each))
    ca, cb, cc = cpu.values()
    print(f"CPU per game (every process of the run, server included): without --serve {ca:.2f} ms, "
          f"0 clients {cb:.2f} ms, {args.clients} clients {cc:.2f} ms ({100 * cb / cc:.0f} % of 0 clients' games "
          f"per CPU second); the {args.clients} clients themselves "
          f"{statistics.median(r.clients_cpu_ms for r in crowd):.2f} ms")
    print(f"bytes per client per game ({args.clients} clients): "
          f"{statistics.median(r.client_bytes for r in crowd):,.0f}")

if __name__ == "__main__":
    main()
