"""What playing through ``arena connect`` costs: a bridged instant bot
against the same bot played locally, on 127.0.0.1.

Two runs of the same tournament (the random bot, which answers at once,
against itself, one game at a time): both bots local, then the second one
remote, through a real ``arena connect`` process and the run's listener.
Printed for each: moves per second of the whole run (from the first game's
start to the last game's end) and the mean time charged per move to the
second bot, whose difference is what the relay adds to each move (worker ->
hub -> WebSocket -> bridge -> bot, and back).

    python benchmarks/remote.py [--rounds 10] [--quick]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.game.records import GameRecord  # noqa: E402
from arena.run.config import parse_config  # noqa: E402
from arena.run.remote_tokens import make_token  # noqa: E402
from arena.run.tournament import run_tournament  # noqa: E402

BOT = [sys.executable, str(ROOT / "bots" / "random_bot.py")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tournament_text(port: int, rounds: int, remote: bool) -> str:
    second = "{name: q, remote: true}" if remote else f"{{name: q, cmd: {' '.join(BOT)}}}"
    return (f"name: bench\ngame: oxono\ntime_control: 60+1\nrounds: {rounds}\nconcurrency: 1\nseed: 1\n"
            f"output: {'remote' if remote else 'local'}\nremote_listen: 127.0.0.1:{port}\nremote_wait_s: 30\n"
            f"bots:\n  - {{name: p, cmd: {' '.join(BOT)}}}\n  - {second}\n")


def figures(records: list[GameRecord]) -> tuple[float, float]:
    """Moves per second over the run, and the mean ms charged per move to ``q``."""
    moves = sum(len(record.moves) for record in records)
    start = min(datetime.fromisoformat(record.started_at) for record in records)
    end = max(datetime.fromisoformat(record.ended_at) for record in records)
    times = []
    for record in records:
        seat = list(record.players.values()).index("q")
        times += [move.ms for move in record.moves[seat::2]]
    return moves / (end - start).total_seconds(), statistics.fmean(times)


def run(directory: Path, rounds: int, remote: bool) -> tuple[float, float]:
    port = free_port()
    file = directory / ("remote.yaml" if remote else "local.yaml")
    file.write_text(tournament_text(port, rounds, remote))
    bridge = None
    if remote:
        token = make_token(directory / "remote.tokens", "q")
        bridge = subprocess.Popen(
            [sys.executable, "-m", "arena", "connect", f"ws://127.0.0.1:{port}/", "--token", token, "--", *BOT],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    try:
        summary = run_tournament(parse_config(file.read_text(), path=file))
    finally:
        if bridge is not None:
            bridge.kill()
            bridge.wait()
    forfeits = [record for record in summary.records if record.forfeit_by is not None]
    if forfeits:
        raise SystemExit(f"a game was forfeited: {forfeits[0].reason}: {forfeits[0].detail}")
    return figures(summary.records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of 4 games each (default 10)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    with tempfile.TemporaryDirectory(prefix="remote-bench-") as scratch:
        local = run(Path(scratch), rounds, remote=False)
        bridged = run(Path(scratch), rounds, remote=True)
    print(f"{4 * rounds} games of the random bot against itself, one at a time, on 127.0.0.1")
    print(f"{'second bot':<12} {'moves/s':>9} {'ms/move':>9}")
    for label, (rate, per_move) in (("local", local), ("bridged", bridged)):
        print(f"{label:<12} {rate:>9.0f} {per_move:>9.3f}")
    print(f"added per move by the bridge: {bridged[1] - local[1]:.3f} ms")


if __name__ == "__main__":
    main()
