"""How long ``arena match`` takes from the command to its first game.

Runs ``python -m arena match`` of two random bots (two games, into a fresh
``--output``) and measures, for each run, the time from just before the
process starts to the ``started_at`` of its first game record (the referee
stamps it as the game begins, after Python's start-up, the imports, the
command line, the results directory and the bots' pre-flight).  Several
trees are measured in turn, run after run, so that a busy machine slows all
of them alike; medians are printed.

    python benchmarks/match_startup.py [--root TREE ...] [--repeat 9] [--bots CMD CMD]

``--root`` (repeatable) is a checkout of the project to measure (default:
this one), e.g. a worktree of an earlier commit for a before/after figure:
``git worktree add /tmp/base fb7e257`` then ``--root /tmp/base --root .``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The bots matched by default: the smallest, so that the figure is the arena's.
BOTS = ["python -m bots.random_bot", "python -m bots.random_bot"]


def first_game_s(root: Path, python: str, bots: list[str]) -> float:
    """Seconds from starting ``arena match`` of ``bots`` in ``root`` to its first game's start."""
    with tempfile.TemporaryDirectory(prefix="match-startup-") as scratch:
        output = Path(scratch) / "out"
        env = {**os.environ, "PYTHONPATH": str(root)}
        started = time.time()
        command = ["match", *bots, "-n", "2", "--seed", "1", "-o", str(output)]
        done = subprocess.run([python, "-m", "arena", *command], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"{root}: arena match failed:\n{done.stderr}")
        records = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
        first = min(datetime.fromisoformat(record["started_at"]).timestamp() for record in records)
        return first - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", action="append", type=Path, help="a checkout to measure (repeatable; default: this one)")
    parser.add_argument("--repeat", type=int, default=9, help="runs of each tree (default 9)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter (default: this one)")
    parser.add_argument("--bots", nargs=2, default=BOTS, metavar="CMD", help="the two bots' commands (default: two random bots)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    roots = [root.resolve() for root in args.root or [ROOT]]
    times: dict[Path, list[float]] = {root: [] for root in roots}
    for _ in range(args.repeat):
        for root in roots:  # interleaved: a busy moment costs every tree alike
            times[root].append(first_game_s(root, args.python, args.bots))
    load = os.getloadavg()[0]
    print(f"arena match {' '.join(repr(bot) for bot in args.bots)}, command to first game "
          f"({args.repeat} runs each, load average {load:.2f}, {os.cpu_count()} CPUs):")
    for root, seconds in times.items():
        print(f"  {root}: median {statistics.median(seconds):.3f} s  (min {min(seconds):.3f}, max {max(seconds):.3f})")


if __name__ == "__main__":
    main()
