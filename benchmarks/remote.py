"""What playing through ``arena connect`` costs: a bridged instant bot
against the same bot played locally, on 127.0.0.1.

Two runs of the same tournament (the random bot, which answers at once,
against itself, one game at a time): both bots local, then the second one
remote, through a real ``arena connect`` process and the run's listener.
Printed for each: moves per second of the whole run (from the first game's
start to the last game's end) and the mean time charged per move to the
second bot, whose difference is what the relay adds to each move (worker ->
hub -> WebSocket -> bridge -> bot, and back).  Then a tournament of three, the two local bots
and the bridged one, quiet and under attack (tests/hostile_clients.py: a
storm of connections, slowloris, wrong tokens and megabyte heads, from
127.0.0.2, each kind up to 200 tries a second, at the lowest priority, as
from another machine): the moves per second of its games between the local
bots (their moves over the time they lasted), those of its bridged games,
the arena's CPU time a game (its own process, the listener's and the
workers' with their bots, not the attacker's or the bridge's: on one
machine the attacker's own work is no cost of the arena's), and how much
the arena's process grew.

    python benchmarks/remote.py [--rounds 10] [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
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


def rate(records: list[GameRecord]) -> float:
    """Moves per second of ``records``, over the time each game lasted (games played one at a time)."""
    moves = sum(len(record.moves) for record in records)
    return moves / sum((datetime.fromisoformat(r.ended_at) - datetime.fromisoformat(r.started_at)).total_seconds()
                       for r in records)


def figures(records: list[GameRecord]) -> tuple[float, float, float]:
    """Moves per second of the games of ``q`` and of the others (0: none), and the mean ms charged per move to ``q``."""
    with_q = [record for record in records if "q" in record.players.values()]
    others = [record for record in records if "q" not in record.players.values()]
    times = []
    for record in with_q:
        seat = list(record.players.values()).index("q")
        times += [move.ms for move in record.moves[seat::2]]
    return rate(with_q), rate(others) if others else 0.0, statistics.fmean(times)


def cpu_seconds() -> float:
    """User and system time of this process and of its children waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(directory: Path, rounds: int, remote: bool, three: bool = False,
        attacked: bool = False) -> tuple[float, float, float, float]:
    """Moves per second of ``q``'s games and of the others', ms per move of ``q``, and the arena's CPU seconds a game."""
    port = free_port()
    file = directory / f"{'attacked' if attacked else 'remote' if remote else 'local'}{3 if three else 2}.yaml"
    file.write_text(tournament_text(port, rounds, remote, file.stem, three))
    bridge = None
    if remote:
        token = make_token(file.with_suffix(".tokens"), "q")
        bridge = subprocess.Popen(
            [sys.executable, "-m", "arena", "connect", f"ws://127.0.0.1:{port}/", "--token", token, "--", *BOT],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    config = parse_config(file.read_text(), path=file)
    try:
        # The attacker is a process of its own, as it would be on another machine.
        attacker = subprocess.Popen([sys.executable, str(ROOT / "tests" / "hostile_clients.py"), str(port)],
                                    stdout=subprocess.PIPE, text=True, preexec_fn=lambda: os.nice(19)) if attacked else None
        try:
            before = cpu_seconds()
            summary = run_tournament(config)
            # (taken before the bridge and the attacker are waited for: their time is not counted)
            cpu = (cpu_seconds() - before) / len(summary.records)
        finally:
            if attacker is not None:
                attacker.terminate()
                print(f"the attacker tried: {attacker.communicate(timeout=30)[0].strip()}")
    finally:
        if bridge is not None:
            bridge.kill()
            bridge.wait()
    forfeits = [record for record in summary.records if record.forfeit_by is not None]
    if forfeits:
        raise SystemExit(f"a game was forfeited: {forfeits[0].reason}: {forfeits[0].detail}")
    return (*figures(summary.records), cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of 4 games each (default 10)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    with tempfile.TemporaryDirectory(prefix="remote-bench-") as scratch:
        local = run(Path(scratch), rounds, remote=False)
        bridged = run(Path(scratch), rounds, remote=True)
        quiet = run(Path(scratch), rounds, remote=True, three=True)
        before = resident_mb()
        attacked = run(Path(scratch), rounds, remote=True, three=True, attacked=True)
        grown = resident_mb() - before
    print(f"{4 * rounds} games of the random bot against itself, one at a time, on 127.0.0.1")
    print(f"{'second bot':<10} {'moves/s':>9} {'ms/move':>9}")
    for label, (moves_s, _, per_move, _) in (("local", local), ("bridged", bridged)):
        print(f"{label:<10} {moves_s:>9.0f} {per_move:>9.3f}")
    print(f"added per move by the bridge: {bridged[2] - local[2]:.3f} ms")
    print(f"\n{12 * rounds} games of three (p and o local, q bridged), one at a time:")
    print(f"{'':<14} {'local games, moves/s':>21} {'bridged games, moves/s':>23} {'arena CPU ms/game':>18}")
    for label, (bridged_s, local_s, _, cpu) in (("quiet", quiet), ("under attack", attacked)):
        print(f"{label:<14} {local_s:>21.0f} {bridged_s:>23.0f} {cpu * 1000:>18.1f}")
    print(f"under attack: the local games at {attacked[1] / quiet[1]:.2f} of their quiet moves per second, the "
          f"bridged ones at {attacked[0] / quiet[0]:.2f}; the arena's CPU a game {attacked[3] / quiet[3]:.2f} of "
          f"the quiet run's; its process grew {grown:.0f} MB")


if __name__ == "__main__":
    main()
