"""The same tournament of CPU-bound bots at concurrency 1 and 2.

    python benchmarks/tournament_scaling.py [--bots 4] [--rounds 3] [--game yoxii]

Each bot is the greedy reference bot (it applies every move and every reply on
the engine, so it keeps a core busy while it thinks).  Prints the wall time at
each concurrency and the speed-up.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.run.config import load_config  # noqa: E402
from arena.run.tournament import run_tournament  # noqa: E402


def tournament_file(directory: Path, game: str, bots: int, rounds: int, concurrency: int) -> Path:
    entries = "\n".join(
        f"  - {{name: greedy-{n}, cmd: python -m bots.greedy, options: {{seed: {n}}}, cwd: {ROOT}}}" for n in range(bots)
    )
    path = directory / f"scaling-{concurrency}.yaml"
    path.write_text(
        f"game: {game}\ntime_control: 60+1\nrounds: {rounds}\nconcurrency: {concurrency}\nseed: 1\n"
        f"output: out-{concurrency}\nbots:\n{entries}\n"
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="yoxii")
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.game, args.bots, args.rounds = "oxono", 2, 1
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 2):
            config = load_config(tournament_file(Path(tmp), args.game, args.bots, args.rounds, concurrency))
            started = time.perf_counter()
            summary = run_tournament(config)
            times[concurrency] = time.perf_counter() - started
            plies = sum(len(r.moves) for r in summary.records)
            print(f"concurrency {concurrency}: {summary.played} games, {plies} plies in {times[concurrency]:.1f} s "
                  f"({summary.played / times[concurrency]:.2f} games/s)")
    print(f"speed-up at concurrency 2: {times[1] / times[2]:.2f}x")


if __name__ == "__main__":
    main()
