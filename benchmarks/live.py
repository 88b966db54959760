"""The live view's two figures: how soon a move reaches a client, and what it
costs the tournament.

1. Latency: ``arena run --serve`` plays bots that sleep a random 20-300 ms
   before each move and note the wall time at which they send it; a client
   of the event stream notes when each game's ply first reaches it.  The
   difference, per move, gives the median and the 99th percentile (a move
   the feed's throttle folded into the next one counts from its own time).
2. Throughput: the games per second of ``arena run`` of instant bots
   (``bots.random_bot``), without ``--serve`` and with it while 20 clients
   hold the event stream and fetch the page again whenever the results
   change (what a browser's live.js does); runs interleaved, medians printed.
   The rate is the steady one, from the records' end times (the middle 80 %
   of the games, and with ``--serve`` only once the server answers: start-up
   and the last games are left out; the CPU figures count everything).  The clients
   run in this process, on the same machine as the tournament.

With ``--executor ray`` the tournaments run on a Ray instance started on
this machine: the moves then reach the live files as messages from the
actors to the run (see docs/live.md).

3. Bytes per event: what the server sends each open page after a game is
   stored, in round-robins of 100 and 1,000 bots: the page whole (before:
   live.js fetched it again) against the page's change (now).

    python benchmarks/live.py [--moves 300] [--rounds 60] [--repeat 3] [--clients 20] [--executor local|ray]
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


async def clients(url: str, count: int, stop: threading.Event, arrivals: dict[tuple[str, int], float] | None) -> int:
    """``count`` clients of the event stream until ``stop``; each fetches the
    page whole at the first change of the results, and reads the changes
    the stream sends after it (as live.js does).  ``arrivals``: when each
    (game, ply) first came (the first client's view).  Returns the events
    read in all."""
    from aiohttp import ClientError, ClientSession, ClientTimeout

    read = 0

    async def one(session: ClientSession, index: int) -> None:
        nonlocal read
        version, fetched, name = None, False, ""
        while not stop.is_set():
            try:
                async with session.get(url + "events") as response:
                    async for line in response.content:
                        if stop.is_set():
                            return
                        if line.startswith(b"event: "):
                            name = line[7:].decode().strip()
                        if not line.startswith(b"data: ") or name != "state":
                            continue
                        now = time.time()
                        data = json.loads(line[6:])
                        read += 1
                        if arrivals is not None and index == 0:
                            arrivals.setdefault(("", 0), now)  # connected: moves before this are not counted
                            # A game held after its end shows the record's moves, read seconds later: not the live path.
                            for game in (g for g in data["live"] if "ended" not in g):
                                for ply in range(1, len(game["moves"]) + 1):
                                    arrivals.setdefault((game["id"], ply), now)
                        if version is not None and data["results"] != version and not fetched:
                            async with session.get(url + "page") as page:
                                await page.read()
                            fetched = True
                        version = data["results"]
            except (ClientError, OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.1)  # not up yet, or gone at the end

    async with ClientSession(timeout=ClientTimeout(total=None, sock_connect=2)) as session:
        await asyncio.gather(*(one(session, i) for i in range(count)))
    return read


def with_clients(url: str, count: int, arrivals: dict | None = None,
                 cpu: list[float] | None = None) -> tuple[threading.Event, threading.Thread]:
    """The clients on a thread of their own; ``cpu`` gets the CPU seconds that thread used."""
    stop = threading.Event()

    def run() -> None:
        started = time.thread_time()
        asyncio.run(clients(url, count, stop, arrivals))
        if cpu is not None:
            cpu.append(time.thread_time() - started)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return stop, thread


def latency(moves: int, executor: str, pause_s: tuple[float, float] = (0.02, 0.3)) -> list[float]:
    """The delays of ``moves`` moves of bots that think a random ``pause_s`` seconds before each."""
    with tempfile.TemporaryDirectory(prefix="live-latency-") as tmp:
        directory = Path(tmp)
        bot = directory / "timed_bot.py"
        bot.write_text(TIMED_BOT.format(tests_bots=str(ROOT / "tests" / "bots"), pause_s=pause_s))
        sent = directory / "sent.jsonl"
        cmd = f"[python, {bot}, {sent}]"
        # Enough rounds for ``moves`` moves (about 25 a game, 8 games a round).
        rounds = max(1, moves // 200 + 1)
        file = tournament(directory, {"a": cmd, "b": cmd, "c": cmd}, rounds, executor)
        port = free_port()
        arrivals: dict[tuple[str, int], float] = {}
        stop, thread = with_clients(f"http://127.0.0.1:{port}/", 1, arrivals)
        run = start_run(file, port)
        run.wait()
        time.sleep(0.5)
        stop.set()
        delays = []
        connected = arrivals.get(("", 0), float("inf"))
        for line in sent.read_text().splitlines():
            game, ply, at = json.loads(line)
            if at < connected:
                continue
            # The first view holding this ply or a later one of the same game.
            seen = [t for (g, p), t in arrivals.items() if g == game and p >= ply]
            if seen:
                delays.append(min(seen) - at)
        return delays[:moves] if len(delays) > moves else delays


def steady_rate(results: Path, since: float = 0.0) -> float:
    """Games per second between the end of the first tenth of the games (or
    ``since``, when later: the server up) and the start of the last tenth."""
    ends = sorted(datetime.fromisoformat(json.loads(line)["ended_at"].replace("Z", "+00:00")).timestamp()
                  for line in (results / "games.jsonl").read_text().splitlines())
    first, last = max(len(ends) // 10, sum(end < since for end in ends)), len(ends) - 1 - len(ends) // 10
    if last <= first:  # a run too short (--quick) for two games to end once the server was up: no rate to tell
        return math.nan
    return (last - first) / (ends[last] - ends[first])


def throughput(rounds: int, serve: bool, count: int, executor: str) -> tuple[float, float, float]:
    """Games per second; CPU milliseconds per game of the run (workers, bots, server); of the clients."""
    with tempfile.TemporaryDirectory(prefix="live-rate-") as tmp:
        directory = Path(tmp)
        random_bot = "python -m bots.random_bot"
        file = tournament(directory, {"a": random_bot, "b": random_bot, "c": random_bot, "d": random_bot}, rounds, executor)
        port = free_port() if serve else None
        stop = thread = None
        client_cpu: list[float] = []
        arrivals: dict[tuple[str, int], float] = {}
        if serve:
            stop, thread = with_clients(f"http://127.0.0.1:{port}/", count, arrivals, cpu=client_cpu)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = start_run(file, port)
        run.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if stop is not None and thread is not None:
            stop.set()
            thread.join(10)
        games = len((directory / "out" / "games.jsonl").read_text().splitlines())
        used = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        up = arrivals.get(("", 0), 0.0)
        return steady_rate(directory / "out", up), 1000 * used / games, 1000 * sum(client_cpu) / games


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
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.moves, args.rounds, args.repeat, args.clients = 20, 6, 1, 2

    for bots, games in ((6, 60),) if args.quick else ((100, 2_000), (1_000, 4_000)):
        before, after, page, took = event_bytes(bots, games)
        print(f"bytes to each open page after a game, {bots} bots, {games} games: before (the page whole) "
              f"{before / 1e3:,.1f} KB, after (its change) {after / 1e3:,.1f} KB; page {page / 1e6:.2f} MB, "
              f"change made in {took:.2f} s", flush=True)

    delays = sorted(latency(args.moves, args.executor, (0.01, 0.04) if args.quick else (0.02, 0.3)))
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))]
    print(f"latency from a move sent to an event-stream client ({args.executor} executor), {len(delays)} moves: "
          f"median {1000 * statistics.median(delays):.0f} ms, p99 {1000 * p99:.0f} ms, max {1000 * delays[-1]:.0f} ms")

    without, served = [], []
    for _ in range(args.repeat):
        without.append(throughput(args.rounds, False, 0, args.executor))
        served.append(throughput(args.rounds, True, args.clients, args.executor))
    a, b = (statistics.median(r[0] for r in runs) for runs in (without, served))
    print(f"games per second, {args.rounds} rounds of 4 random bots, concurrency 2, median of {args.repeat}: "
          f"without --serve {a:.1f}, with --serve and {args.clients} clients {b:.1f} ({100 * b / a:.0f} %)")
    print("  runs without:", ", ".join(f"{r[0]:.1f}" for r in without), "; with:", ", ".join(f"{r[0]:.1f}" for r in served))
    ca, cb, cc = (statistics.median(r[i] for r in runs) for runs, i in ((without, 1), (served, 1), (served, 2)))
    print(f"CPU per game (every process of the run, server included): without --serve {ca:.1f} ms, "
          f"with {cb:.1f} ms ({100 * ca / cb:.0f} % of the games per CPU second); the {args.clients} clients {cc:.1f} ms")


if __name__ == "__main__":
    main()
