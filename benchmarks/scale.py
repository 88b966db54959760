"""What reading a results directory costs as the league grows: ``arena
standings`` on round-robins of 1,000 to 100,000 games (real random games
rewritten onto the schedule, as benchmarks/read_results.py writes them),
each a fresh process as a user runs it, measured with ``wait4``: its CPU
time and peak memory (resident), when it must build the index of
``games.jsonl`` (the first command after the games were written), when it
is asked again of the same games (the answer the index kept), when 1 % more
games were added since (the standings kept are carried on over them), when
the index is current but keeps no standings (another tournament file asks,
say: the games stream into the fold), and with no index at all (a directory
it cannot write in);
``arena serve``'s first page, the standings kept (what its server does
before it answers: the results read, the page built, the status and the
games in progress);
and a resumed ``arena run`` to its first new game (the results read, its
plan decided, ``tournament.json`` written).

    python benchmarks/scale.py                        # 1,000, 10,000 and 100,000 games
    python benchmarks/scale.py --sizes 1000000        # a million (about 1 GB of games.jsonl)
    python benchmarks/scale.py --quick                # a tiny size, as CI runs it
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from read_results import write_results  # noqa: E402
from arena.results.game_index import INDEX_FILE  # noqa: E402


#: What a resumed run does before its first new game: the results read (Python's garbage
#: collector held off them, as the run holds it), the plan decided, tournament.json written.
RESUME = """import sys
from pathlib import Path
from arena.results.store import ResultsStore
from arena.run.config import load_config
from arena.run.gc_held import frozen, read_uncollected
from arena.run.results_dir import RunPlan, open_results
config = load_config(Path(sys.argv[1]))
with ResultsStore(config.output) as store, frozen(), read_uncollected():
    open_results(store, RunPlan(config, store.directory))
"""

#: What ``arena serve`` does before its first answer: the results read, the page built, the status and the games
#: in progress (the server's own start aside: an HTTP server listening).
SERVE = """import sys
from pathlib import Path
from arena.live.state import LiveState
state = LiveState(Path(sys.argv[1]))
state.page()
state.snapshot()
"""


def standings(directory: Path) -> tuple[float, float, float]:
    """Wall time (s), CPU time (s) and peak resident memory (MB) of one
    ``arena standings`` process."""
    return measured([sys.executable, "-m", "arena", "standings", str(directory), "-f", "plain"])


def resume(tournament: Path) -> tuple[float, float, float]:
    """The same of a resumed run, to its first new game (its plan decided)."""
    return measured([sys.executable, "-c", RESUME, str(tournament)])


def serve(directory: Path) -> tuple[float, float, float]:
    """The same of ``arena serve``'s first page."""
    return measured([sys.executable, "-c", SERVE, str(directory)])


def measured(command: list[str]) -> tuple[float, float, float]:
    start = time.perf_counter()
    # With its modules compiled, as pip installs them: where the environment says not to write bytecode
    # (PYTHONDONTWRITEBYTECODE), every command would compile the arena anew, a quarter of a second each.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command[-2:])} failed: {process.stderr.read().decode()[-500:]}")
    process.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(games: int, bots: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        # Written by a process of its own: a child's peak memory as the kernel
        # counts it starts from its parent's (the fork before the exec), and
        # this one would hold the records it wrote.
        with multiprocessing.get_context("spawn").Pool(1) as writer:
            tournament = writer.apply(write_results, (Path(tmp), games, bots))
        out = tournament.parent / "out"
        log = out / "games.jsonl"
        size = log.stat().st_size / 1e6
        later = held_back(log, max(1, games // 100))  # (the last 1 %, added after the first reads)
        built = standings(out)
        kept = standings(out)  # asked again of the same games: the answer the index kept
        served = serve(out)  # the live page of the same, from the standings kept
        with open(log, "ab") as appended:
            appended.write(later)
        grown = standings(out)  # the standings kept, carried on over the games added
        with sqlite3.connect(out / INDEX_FILE) as index:
            index.execute("DELETE FROM answers")
        streamed = standings(out)  # the index current, no standings kept
        resumed = resume(tournament)
        for name in os.listdir(out):
            if name.startswith(INDEX_FILE):
                os.unlink(out / name)
        os.mkfifo(out / INDEX_FILE)  # no index can be made: the log alone
        log_only = standings(out)
        shutil.rmtree(out)
    return [f"{games:,}", f"{size:.1f}", *(f"{wall:.2f} / {cpu:.2f} / {mb:.0f}" for wall, cpu, mb in
                                           (built, kept, grown, streamed, log_only, served, resumed))]


def held_back(log: Path, lines: int) -> bytes:
    """Cut the last ``lines`` lines off ``log`` and return them (read from
    the end: this process must not hold the log, see :func:`measure`)."""
    with open(log, "r+b") as file:
        end = file.seek(0, os.SEEK_END)
        start, tail = end, b""
        while tail.count(b"\n") <= lines and start > 0:
            start = max(0, start - (1 << 20))
            file.seek(start)
            tail = file.read(end - start)
        cut = len(tail) - 1  # (the last line's newline)
        for _ in range(lines):
            cut = tail.rfind(b"\n", 0, cut)
        file.truncate(start + cut + 1)
        return tail[cut + 1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="games in each directory, comma-separated")
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="one tiny directory (CI)")
    args = parser.parse_args()
    sizes = [300] if args.quick else [int(s) for s in args.sizes.split(",")]
    from tabulate import tabulate
    rows = [measure(games, 6 if args.quick else args.bots) for games in sizes]
    print(tabulate(rows, headers=["games", "games.jsonl MB", "index built: s / CPU s / MB",
                                  "asked again", "1 % more games", "index current, nothing kept",
                                  "no index (log alone)", "serve: first page", "resume to its first game"],
                   disable_numparse=True))


if __name__ == "__main__":
    main()
