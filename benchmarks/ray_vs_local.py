"""Games per second of the same tournament on the local executor and on Ray, on this machine.

    python benchmarks/ray_vs_local.py [--rounds-python 120] [--rounds-cpu 4] [--cpus N] [--repeat 3]

Two tournaments, each played by each executor in turn, ``--repeat`` times,
with the same number of games at once (one per CPU):

- *Python bots*: four random bots playing OXONO.  Each move costs the bot
  almost nothing, so this measures what the executor adds per game.
- *CPU-bound bots*: four greedy bots playing YOXII (each applies every move
  and every reply on the engine), so the bots keep the cores busy.

Ray is started once, before anything is timed, as the executor starts a
local instance (``LOCAL_RAY``), with a throw-away token in ``RAY_AUTH_TOKEN``
so that no file is written in the home directory.  Each run gives two rates:
the whole run (``run_tournament`` from call to return: the bots' pre-flight,
starting the workers or actors, every game, stopping), and the steady rate
while games are played (from the records' end times, between the first and
the last game to end), which a long tournament approaches.  Prints both for
each run, then the medians and Ray's as a percentage of local's: the runs
alternate, so a neighbour's load on a shared machine spreads over both.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.run.config import load_config  # noqa: E402
from arena.run.ray_executor import LOCAL_RAY  # noqa: E402
from arena.run.tournament import run_tournament  # noqa: E402

TOURNAMENTS = {
    "python bots": ("oxono", "python -m bots.random_bot", "rounds_python"),
    "cpu-bound bots": ("yoxii", "python -m bots.greedy", "rounds_cpu"),
}


def tournament_file(
    directory: Path, label: str, executor: str, game: str, cmd: str, rounds: int, cpus: int, run: int = 0
) -> Path:
    entries = "\n".join(f"  - {{name: bot-{n}, cmd: {cmd}, options: {{seed: {n}}}, cwd: {ROOT}}}" for n in range(4))
    path = directory / f"{label.replace(' ', '-')}-{executor}-{run}.yaml"
    path.write_text(
        f"game: {game}\ntime_control: 60+1\nrounds: {rounds}\nconcurrency: {cpus}\nseed: 1\n"
        f"executor: {executor}\noutput: out-{path.stem}\nbots:\n{entries}\n"
    )
    return path


def steady_rate(records: list) -> float:
    """Games per second between the first and the last game to end."""
    ends = sorted(datetime.fromisoformat(r.ended_at) for r in records)
    return (len(ends) - 1) / (ends[-1] - ends[0]).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds-python", type=int, default=120, help="rounds of the Python-bot tournament (24 games each)")
    parser.add_argument("--rounds-cpu", type=int, default=4, help="rounds of the CPU-bound tournament (12 games each)")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="games at once, and Ray's CPUs")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each tournament by each executor")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    tournaments = dict(TOURNAMENTS)
    if args.quick:
        args.rounds_python, args.repeat = 1, 1
        # Its smallest size (a round of greedy yoxii games) takes half a minute.
        del tournaments["cpu-bound bots"]
        print("--quick: the CPU-bound tournament is left out")
    # Before importing ray, which reads its settings once.
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(16))
    executors = ["local", "ray"]
    try:
        import ray

        started = time.perf_counter()
        ray.init(num_cpus=args.cpus, logging_level=logging.ERROR, log_to_driver=False, **LOCAL_RAY)
        print(f"ray {ray.__version__}: local instance with {args.cpus} CPUs started in {time.perf_counter() - started:.1f} s")
    except Exception as exc:  # ImportError, or a Ray that cannot start here: the local side is still measured
        print(f"ray cannot start ({type(exc).__name__}: {exc}); only the local executor is measured")
        executors = ["local"]
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min average), {os.cpu_count()} cores")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for label, (game, cmd, rounds_arg) in tournaments.items():
                rates: dict[str, list[float]] = {executor: [] for executor in executors}
                steady: dict[str, list[float]] = {executor: [] for executor in executors}
                for run in range(args.repeat):
                    for executor in executors:
                        rounds = getattr(args, rounds_arg)
                        path = tournament_file(Path(tmp), label, executor, game, cmd, rounds, args.cpus, run)
                        config = load_config(path)
                        begun = time.perf_counter()
                        summary = run_tournament(config)
                        seconds = time.perf_counter() - begun
                        rates[executor].append(summary.played / seconds)
                        steady[executor].append(steady_rate(summary.records))
                        print(f"{label:15} {executor:5}: {summary.played:4} games of {game} in {seconds:6.2f} s "
                              f"= {rates[executor][-1]:6.1f} games/s; steady {steady[executor][-1]:6.1f} games/s")
                for kind, figures in (("whole run", rates), ("steady", steady)):
                    rate = {executor: statistics.median(runs) for executor, runs in figures.items()}
                    versus = (f", ray {rate['ray']:6.1f} games/s, ray / local: {100 * rate['ray'] / rate['local']:.0f} %"
                              if "ray" in rate else "")
                    print(f"{label:15} median, {kind + ':':10} local {rate['local']:6.1f} games/s{versus}")
    finally:
        if "ray" in executors:
            ray.shutdown()

if __name__ == "__main__":
    main()
