"""What reading a forged ``tournament.json`` costs: a results directory with
no game whose file names --bots bots (a round-robin, whose schedule has n²
games; a gauntlet; a Swiss with its first round paired; stages, that Swiss
then a knockout), read by ``arena standings`` and ``arena report``, each a
fresh process as a user runs it, measured with ``wait4``: wall time and peak
memory (resident); and the CPU time of ``read_meta`` alone, in this process
(the best of five runs of ten reads).  A reader costs what the file holds:
linear in the bots and pairings, not in the n² games a round-robin of them
would have.

    python benchmarks/forged_meta.py                  # 3,000 bots (an 840 KiB file)
    python benchmarks/forged_meta.py --bots 10000     # the most a tournament.json may name
    python benchmarks/forged_meta.py --quick          # 100 bots, the round-robin alone: only checks that it runs
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from arena.results.meta import read_meta  # noqa: E402
from builders import FORGED_SHAPES, forged_meta  # noqa: E402


def measured(*args: str) -> tuple[float, float, int]:
    """Seconds, peak resident MB and exit code of ``arena ARGS`` in a fresh process."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "arena", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    _, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def read_cpu_ms(directory: Path) -> float:
    """CPU milliseconds of one ``read_meta`` of ``directory``: the best of five runs of ten reads."""
    best = math.inf
    for _ in range(5):
        started = time.process_time()
        for _ in range(10):
            read_meta(directory)
        best = min(best, (time.process_time() - started) / 10)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=3000)
    parser.add_argument("--quick", action="store_true",
                        help="100 bots, the round-robin alone: only checks that it runs (tests/test_benchmarks.py; "
                             "every shape is read at 3,000 bots by tests/test_forged_records.py)")
    args = parser.parse_args()
    shapes = FORGED_SHAPES
    if args.quick:
        args.bots, shapes = 100, FORGED_SHAPES[:1]
    print(f"{'shape':<12} {'command':<10} {'bots':>6} {'file KiB':>9} {'seconds':>8} {'peak MB':>8} {'read CPU ms':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            directory = forged_meta(Path(tmp) / shape, args.bots, shape)
            size = (directory / "tournament.json").stat().st_size / 1024
            read_ms = read_cpu_ms(directory)
            for command in ("standings", "report"):
                seconds, peak, code = measured(command, str(directory))
                if code != 0:
                    raise SystemExit(f"arena {command} of the forged {shape} exited {code}")
                print(f"{shape:<12} {command:<10} {args.bots:>6} {size:>9.0f} {seconds:>8.2f} {peak:>8.0f} {read_ms:>12.2f}")


if __name__ == "__main__":
    main()
