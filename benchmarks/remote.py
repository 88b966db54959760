"""What playing through ``arena connect`` costs: a bridged instant bot
against the same bot played locally, on 127.0.0.1; and what an attack on
the listener costs the games played beside it.

Two runs of the same tournament (the random bot, which answers at once,
against itself, one game at a time): both bots local, then the second one
remote, through a real ``arena connect`` process and the run's listener.
Printed for each: moves per second and the mean time charged per move to
the second bot, whose difference is what the relay adds to each move
(worker -> hub -> WebSocket -> bridge -> bot, and back).

Then a tournament of three, the two local bots and the bridged one, quiet
and under attack (tests/hostile_clients.py: a storm of connections,
slowloris, wrong tokens and megabyte heads, from 127.0.0.2, each kind up to
200 tries a second, at the lowest priority, as from another machine), a
quiet run and an attacked one ``--repeats`` times in turn: the games per
second of its games between the local bots (over the time they lasted),
the moves per second of its bridged games, the arena's CPU time a game (its
own process, the listener's and the workers' with their bots, not the
attacker's or the bridge's: on one machine the attacker's own work is no
cost of the arena's), the listener's CPU, the cores the attacker, the
bridge and everything else on the machine kept busy meanwhile, and how much
the arena's process grew.

A whole run lasts a few seconds of games, among seconds of starting, while
the machine's other load (other people's work) comes and goes: so the games
per second are compared as well within one long tournament, the attacker
stopped and continued every ``--period`` seconds (SIGSTOP, SIGCONT), each
spell of it on against the spells off either side, the games that began
and ended within a spell counted in it.  Once aimed at the listener, once
at a decoy (a server that closes each connection as it takes it, not the
arena's): what the attack costs on this machine that is not the listener's.
The listener's CPU comes from its own process (a ``sitecustomize`` put on
the children's path: its ``getrusage`` at exit, and with ``--profile`` a
cProfile of its event loop's thread; /proc for each spell).

    python benchmarks/remote.py [--rounds 10] [--repeats 3] [--switched-rounds 150] [--period 1] [--profile] [--quick]
"""

from __future__ import annotations

import argparse
import ast
import bisect
import contextlib
import io
import json
import math
import os
import pstats
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from arena.game.records import GameRecord  # noqa: E402
from arena.run.config import parse_config  # noqa: E402
from arena.run.remote_tokens import make_token  # noqa: E402
from arena.run.tournament import run_tournament  # noqa: E402
from hostile_clients import resident_mb  # noqa: E402

BOT = [sys.executable, str(ROOT / "bots" / "random_bot.py")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tournament_text(port: int, rounds: int, remote: bool, output: str, three: bool) -> str:
    """Bots ``p`` and ``q`` (remote or local), and with ``three`` a local ``o`` besides."""
    second = "{name: q, remote: true}" if remote else f"{{name: q, cmd: {' '.join(BOT)}}}"
    third = f"  - {{name: o, cmd: {' '.join(BOT)}}}\n" if three else ""
    return (f"name: bench\ngame: oxono\ntime_control: 60+1\nrounds: {rounds}\nconcurrency: 1\nseed: 1\n"
            f"output: {output}\nremote_listen: 127.0.0.1:{port}\nremote_wait_s: 30\n"
            f"bots:\n  - {{name: p, cmd: {' '.join(BOT)}}}\n  - {second}\n{third}")


def cpu_seconds() -> float:
    """User and system time of this process and of its children waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def machine_busy() -> float:
    """Seconds the cores of this machine have been busy, all added up (/proc/stat)."""
    with open("/proc/stat") as stat:
        user, nice, system, _, _, irq, softirq, steal = map(int, stat.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


#: Put on the PYTHONPATH of the run's children: in the listener's process
#: only, its CPU time (and with --profile, a profile of its event loop's
#: thread) written to $REMOTE_BENCH_OUT when it ends.  The listener is not
#: changed for it.
_HOOK = """
import os
if b"arena.run.listener_process" in open("/proc/self/cmdline", "rb").read():
    import atexit, json, resource, threading, time
    _out = os.environ["REMOTE_BENCH_OUT"]

    def _cpu():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.path.join(_out, "listener-%d.json" % os.getpid()), "w") as file:
            json.dump({"cpu": usage.ru_utime + usage.ru_stime}, file)

    atexit.register(_cpu)
    if os.environ.get("REMOTE_BENCH_PROFILE"):
        import cProfile
        _run = threading.Thread.run

        def _profiled(thread):
            if thread.name != "remote-listener":
                return _run(thread)
            profile = cProfile.Profile(time.thread_time)
            try:
                profile.runcall(_run, thread)
            finally:
                profile.dump_stats(os.path.join(_out, "listener-%d.prof" % os.getpid()))

        threading.Thread.run = _profiled
"""


#: The decoy: a server that closes each connection as it takes it (what the listener does with a shed
#: address's), not the arena's; aimed at, the attacker does its work on this machine, the listener none.
_DECOY = """
import socket
server = socket.create_server(("127.0.0.1", 0), backlog=128)
print(server.getsockname()[1], flush=True)
while True:
    server.accept()[0].close()
"""


def process_cpu(pid: int) -> float:
    """User and system seconds of process ``pid`` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def the_listener() -> int | None:
    """The id of this process's child that runs the listener, if one does now."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if (int(stat.read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()
                    and b"arena.run.listener_process" in (stat.parent / "cmdline").read_bytes()):
                return int(stat.parent.name)
        except (OSError, ValueError, IndexError):
            continue
    return None


class Switch(threading.Thread):
    """Stops and continues the attacker every ``period`` seconds (SIGSTOP, SIGCONT), from on; notes when,
    and the listener's CPU seconds then, in :attr:`marks`."""

    def __init__(self, attacker: subprocess.Popen[str], period: float) -> None:
        super().__init__(daemon=True)
        self.attacker, self.period = attacker, period
        self.marks: list[tuple[float, bool, float]] = []
        self.done = threading.Event()

    def run(self) -> None:
        on, listener = True, None
        while True:
            listener = listener or the_listener()
            self.marks.append((time.time(), on, process_cpu(listener) if listener else 0.0))
            if self.done.wait(self.period):
                break
            on = not on
            self.attacker.send_signal(signal.SIGCONT if on else signal.SIGSTOP)
        self.attacker.send_signal(signal.SIGCONT)  # (a stopped process would not end on SIGTERM)


@dataclass
class Run:
    """One tournament's figures (the rates over the time each game lasted, games played one at a time)."""

    #: "quiet", "attacked" (the listener), or "decoy" (the attacker aimed at a decoy, the listener left alone).
    kind: str
    local_games_s: float
    bridged_moves_s: float
    q_ms_per_move: float
    #: The arena's CPU seconds a game: its process, the listener's and the workers' with their bots.
    arena_cpu: float
    listener_cpu: float
    wall: float
    #: Cores busy on average while the run lasted: the attacker (and its decoy), the bridge, and everything
    #: else on the machine but the arena (other people's work: /proc/stat's busy time less all of this benchmark's).
    attacker_cores: float
    bridge_cores: float
    other_cores: float
    tries_s: float
    records: list[GameRecord]
    #: With the attacker switched on and off: when, whether on, and the listener's CPU seconds then.
    marks: list[tuple[float, bool, float]]


def game_seconds(records: list[GameRecord]) -> float:
    return sum((datetime.fromisoformat(r.ended_at) - datetime.fromisoformat(r.started_at)).total_seconds()
               for r in records)


def local_and_bridged(records: list[GameRecord]) -> tuple[list[GameRecord], list[GameRecord]]:
    """The games between local bots, and those of ``q``."""
    return ([record for record in records if "q" not in record.players.values()],
            [record for record in records if "q" in record.players.values()])


def run(directory: Path, rounds: int, remote: bool, three: bool = False, kind: str = "quiet", number: int = 0,
        period: float | None = None) -> Run:
    """One tournament of ``p`` and ``q`` (remote or local), with ``three`` a local ``o`` besides; ``kind``
    says what attacks: nothing ("quiet"), the listener ("attacked"), a decoy beside it ("decoy"); with
    ``period``, the attacker is stopped and continued every ``period`` seconds."""
    port = free_port()
    file = directory / f"{kind}{3 if three else 2}{'remote' if remote else 'local'}{'switched' if period else ''}-{number}.yaml"
    file.write_text(tournament_text(port, rounds, remote, file.stem, three))
    out = directory / file.stem
    out.mkdir()
    os.environ["REMOTE_BENCH_OUT"] = str(out)
    # (the machine's busy time counted from before the bridge starts to after it is waited for)
    outer_cpu, outer_busy, outer_start = cpu_seconds(), machine_busy(), time.monotonic()
    bridge = None
    if remote:
        token = make_token(file.with_suffix(".tokens"), "q")
        bridge = subprocess.Popen(
            [sys.executable, "-m", "arena", "connect", f"ws://127.0.0.1:{port}/", "--token", token, "--", *BOT],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    config = parse_config(file.read_text(), path=file)
    tried: str | None = ""  # (None: the attacker did not say)
    decoy = subprocess.Popen([sys.executable, "-c", _DECOY], stdout=subprocess.PIPE, text=True) if kind == "decoy" else None
    target = int(decoy.stdout.readline()) if decoy is not None and decoy.stdout is not None else port
    switch = None
    try:
        # The attacker is a process of its own, as it would be on another machine.
        attacker = subprocess.Popen([sys.executable, str(ROOT / "tests" / "hostile_clients.py"), str(target)],
                                    stdout=subprocess.PIPE, text=True,
                                    preexec_fn=lambda: os.nice(19)) if kind != "quiet" else None
        if attacker is not None and period:
            switch = Switch(attacker, period)
            switch.start()
        try:
            before, start = cpu_seconds(), time.monotonic()
            summary = run_tournament(config)
            # (taken before the bridge and the attacker are waited for: their time is not counted)
            cpu, wall = cpu_seconds() - before, time.monotonic() - start
        finally:
            if switch is not None:
                switch.done.set()
                switch.join()
            if attacker is not None:
                with contextlib.suppress(OSError):  # (at the lowest priority on a busy machine it may take minutes to end)
                    os.setpriority(os.PRIO_PROCESS, attacker.pid, 0)
                attacker.terminate()
                try:
                    tried = attacker.communicate(timeout=60)[0].strip()
                except subprocess.TimeoutExpired:
                    attacker.kill()
                    attacker.communicate()
                    tried = None
            if decoy is not None:
                decoy.kill()
                decoy.communicate()
            attacker_cpu = cpu_seconds() - before - cpu
    finally:
        if bridge is not None:
            bridge.kill()
            bridge.wait()
    bridge_cpu = cpu_seconds() - before - cpu - attacker_cpu
    elsewhere = (machine_busy() - outer_busy - (cpu_seconds() - outer_cpu)) / (time.monotonic() - outer_start)
    forfeits = [record for record in summary.records if record.forfeit_by is not None]
    if forfeits:
        raise SystemExit(f"a game was forfeited: {forfeits[0].reason}: {forfeits[0].detail}")
    listener = sum(json.loads(path.read_text())["cpu"] for path in out.glob("listener-*.json"))
    local, with_q = local_and_bridged(summary.records)
    times = []
    for record in with_q:
        seat = list(record.players.values()).index("q")
        times += [move.ms for move in record.moves[seat::2]]
    # (the attacker's tries over the whole of its life, a little longer than the run's)
    return Run(kind, len(local) / game_seconds(local) if local else 0.0,
               sum(len(record.moves) for record in with_q) / game_seconds(with_q), statistics.fmean(times),
               cpu / len(summary.records), listener, wall, attacker_cpu / wall, bridge_cpu / wall,
               elsewhere, math.nan if tried is None else sum(ast.literal_eval(tried).values()) / wall if tried else 0.0,
               summary.records, switch.marks if switch is not None else [])


def tries_text(tries_s: float) -> str:
    if math.isnan(tries_s):  # (it printed its count at SIGTERM, but did not end within a minute)
        return "its tries not counted: it did not end within a minute of the run"
    return f"{tries_s:.0f} tries a second on average"

@dataclass
class Spell:
    """One spell of a switched run, the attacker on or off: the games that began and ended within it."""

    on: bool
    seconds: float
    listener_cpu: float
    local: list[GameRecord]
    bridged: list[GameRecord]

    def local_games_s(self) -> float:
        return len(self.local) / game_seconds(self.local)

    def bridged_moves_s(self) -> float:
        return sum(len(record.moves) for record in self.bridged) / game_seconds(self.bridged)


def spells(played: Run) -> list[Spell]:
    """The spells of a switched run in order (a game across a switch is in none)."""
    marks = played.marks
    found = [Spell(on, marks[index + 1][0] - at, marks[index + 1][2] - cpu, [], [])
             for index, (at, on, cpu) in enumerate(marks[:-1])]
    starts = [at for at, _, _ in marks]
    for record in played.records:
        begun = datetime.fromisoformat(record.started_at).timestamp()
        ended = datetime.fromisoformat(record.ended_at).timestamp()
        index = bisect.bisect_right(starts, begun) - 1
        if 0 <= index < len(found) and ended < starts[index + 1]:
            (found[index].bridged if "q" in record.players.values() else found[index].local).append(record)
    return found


def switched_lines(played: Run) -> list[str]:
    """What the attacker switched on and off did to the games and the listener."""
    found = spells(played)
    # Each spell on against the spells off either side of it (the machine's other load drifts little in
    # three spells, and as much up as down).
    triples = [found[index - 1:index + 2] for index in range(1, len(found) - 1) if found[index].on]
    games = sorted(on.local_games_s() / statistics.fmean(off.local_games_s() for off in (before, after))
                   for before, on, after in triples if before.local and on.local and after.local)
    moves = sorted(on.bridged_moves_s() / statistics.fmean(off.bridged_moves_s() for off in (before, after))
                   for before, on, after in triples if before.bridged and on.bridged and after.bridged)
    lines = []
    for state in (False, True):
        chosen = [spell for spell in found if spell.on is state and spell.local]
        local = [record for spell in chosen for record in spell.local]
        seconds = sum(spell.seconds for spell in chosen)
        lines.append(f"  attacker {'on ' if state else 'off'}: {len(chosen)} spells, {len(local)} local games, "
                     f"{len(local) / game_seconds(local):.1f} local games a second; the listener "
                     f"{sum(spell.listener_cpu for spell in chosen) / seconds:.3f} of a core")
    if games:
        lines.append(f"  on / off, the median of {len(games)} spells on, each against the mean of the two off around it: local games "
                     f"a second {statistics.median(games):.2f} (lowest to highest {games[0]:.2f} to {games[-1]:.2f}; "
                     f"middle half {quantile(games, 0.25):.2f} to {quantile(games, 0.75):.2f})")
    if moves:
        lines.append(f"  bridged moves a second {statistics.median(moves):.2f} "
                     f"(middle half {quantile(moves, 0.25):.2f} to {quantile(moves, 0.75):.2f})")
    return lines


def quantile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(share * len(values)))]


def ratio(pairs: list[tuple[Run, Run]], figure: Callable[[Run], float]) -> str:
    """The median of attacked / quiet over interleaved pairs of runs, and their lowest and highest."""
    values = sorted(figure(attacked) / figure(quiet) for quiet, attacked in pairs)
    return f"{statistics.median(values):.2f} ({values[0]:.2f} to {values[-1]:.2f})"


def profile_lines(directory: Path, top: int = 20) -> list[str]:
    """The functions the listener's event loop spent most time in, over every attacked run."""
    files = [str(path) for path in sorted(directory.glob("attacked*/listener-*.prof"))]
    if not files:
        return []
    stream = io.StringIO()
    stats = pstats.Stats(*files, stream=stream).sort_stats("tottime")
    stats.print_stats(top)
    stats.print_stats("accept|connection_limits|close")  # what a junk connection costs, shed or not
    return stream.getvalue().splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of each tournament (default 10)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="times a quiet run and an attacked one are played, one after the other (default 3)")
    parser.add_argument("--switched-rounds", type=int, default=150,
                        help="rounds of the two tournaments with the attacker switched on and off (default 150)")
    parser.add_argument("--period", type=float, default=1.0, help="seconds the attacker is on, then off (default 1)")
    parser.add_argument("--profile", action="store_true",
                        help="profile the listener's event loop in the attacked runs (slows it: figures not comparable)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    rounds, repeats, switched, period = (1, 1, 4, 0.2) if args.quick else (args.rounds, args.repeats, args.switched_rounds, args.period)
    with open("/proc/loadavg") as loadavg:
        load = " ".join(loadavg.read().split()[:3])
    with tempfile.TemporaryDirectory(prefix="remote-bench-") as scratch:
        hook = Path(scratch) / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(_HOOK)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(hook), os.environ.get("PYTHONPATH"))))
        if args.profile:
            os.environ["REMOTE_BENCH_PROFILE"] = "1"
        local = run(Path(scratch), rounds, remote=False)
        bridged = run(Path(scratch), rounds, remote=True)
        before = resident_mb()
        pairs = [(run(Path(scratch), rounds, remote=True, three=True, number=number),
                  run(Path(scratch), rounds, remote=True, three=True, kind="attacked", number=number))
                 for number in range(repeats)]
        grown = resident_mb() - before
        at_listener = run(Path(scratch), switched, remote=True, three=True, kind="attacked", period=period)
        at_decoy = run(Path(scratch), switched, remote=True, three=True, kind="decoy", period=period)
        profile = profile_lines(Path(scratch))
    print(f"{os.cpu_count()} cores, load average {load} before the runs")
    print(f"{4 * rounds} games of the random bot against itself, one at a time, on 127.0.0.1")
    print(f"{'second bot':<10} {'moves/s':>9} {'ms/move':>9}")
    for label, figures in (("local", local), ("bridged", bridged)):
        print(f"{label:<10} {figures.bridged_moves_s:>9.0f} {figures.q_ms_per_move:>9.3f}")
    print(f"added per move by the bridge: {bridged.q_ms_per_move - local.q_ms_per_move:.3f} ms")
    print(f"\n{12 * rounds} games of three (p and o local, q bridged) a run, one at a time; a quiet run and an "
          f"attacked one, {repeats} times:")
    print(f"{'':<8} {'local games':>12} {'bridged':>8} {'arena CPU':>10} {'listener':>9} "
          f"{'cores busy: attacker':>21} {'bridge':>7} {'others':>7} {'tries':>6}")
    print(f"{'':<8} {'a second':>12} {'moves/s':>8} {'ms a game':>10} {'CPU s':>9} {'':>21} {'':>7} {'':>7} {'a s':>6}")
    for figures in (figures for pair in pairs for figures in pair):
        print(f"{figures.kind:<8} {figures.local_games_s:>12.1f} {figures.bridged_moves_s:>8.0f} "
              f"{figures.arena_cpu * 1000:>10.1f} {figures.listener_cpu:>9.2f} {figures.attacker_cores:>21.2f} "
              f"{figures.bridge_cores:>7.2f} {figures.other_cores:>7.2f} {figures.tries_s:>6.0f}")
    shares = {kind: sorted(pair[index].listener_cpu / pair[index].wall for pair in pairs)
              for index, kind in enumerate(("quiet", "attacked"))}
    print(f"attacked / quiet, the median of the {repeats} (lowest to highest): local games a second "
          f"{ratio(pairs, lambda r: r.local_games_s)}, bridged moves a second {ratio(pairs, lambda r: r.bridged_moves_s)}, "
          f"arena CPU a game {ratio(pairs, lambda r: r.arena_cpu)}; the listener "
          + ", ".join(f"{statistics.median(values):.3f} of a core {kind}" for kind, values in shares.items())
          + f"; the arena's process grew {grown:.0f} MB")
    for label, played in (("the listener", at_listener), ("a decoy (not the arena's)", at_decoy)):
        print(f"\n{12 * switched} games of three, the attacker aimed at {label}, stopped and continued every "
              f"{period:g} s ({tries_text(played.tries_s)}; others on the machine "
              f"{played.other_cores:.2f} cores):")
        print("\n".join(switched_lines(played)))
    if profile:
        print("\nthe listener's event loop under attack (cProfile, by own time):")
        print("\n".join(profile))


if __name__ == "__main__":
    main()
