"""The start-up of ``arena run`` for a course of 40 teams from folders:
reading the tournament file (each submission's manifest and folder) and
fingerprinting every team, on the first run and on each run after it.

    python benchmarks/league_startup.py [--teams 40] [--files 50] [--kb 20] [--runs 4] [--hostile] [--keep DIR]

Each team is a folder with a ``bot.yaml``, the course's ``bot.py`` and
``--files`` more files of ``--kb`` KB (a vendored library, say).  Each run
is a fresh Python process, as ``arena run`` is, that loads the file and
makes the run's plan (``RunPlan``: every bot's fingerprint); it prints how
long each took.  The digest cache is the course's own
(``TOTEM_ARENA_CACHE`` in the course folder): the first run starts without
one, the others find what it left.  With ``--hostile`` two more teams hold
what the security hunt of issue 31 used: a 5 GB sparse file and 200,000
empty files.  Run it with ``PYTHONPATH`` at another checkout to time that
one (it needs only ``load_config`` and ``RunPlan``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "tournaments" / "course" / "submissions" / "team-ann" / "bot.py"

#: Runs in a fresh process: the time to load the file, then to fingerprint every bot.
CHILD = """
import sys, time
from arena.run.config import load_config
from arena.run.results_dir import RunPlan
began = time.perf_counter()
config = load_config(sys.argv[1])
loaded = time.perf_counter()
RunPlan(config, config.output)
print(loaded - began, time.perf_counter() - loaded)
"""


def team(folder: Path, files: int, kb: int) -> None:
    (folder / "lib").mkdir(parents=True)
    shutil.copy(BOT, folder / "bot.py")
    (folder / "bot.yaml").write_text("cmd: python bot.py\n")
    for number in range(files):
        (folder / "lib" / f"part{number}.py").write_bytes(os.urandom(kb * 512).hex().encode())


def hostile(submissions: Path) -> None:
    sparse = submissions / "team-sparse"
    sparse.mkdir()
    (sparse / "bot.yaml").write_text("cmd: python bot.py\n")
    shutil.copy(BOT, sparse / "bot.py")
    with open(sparse / "weights.bin", "wb") as handle:
        handle.truncate(5 << 30)
    many = submissions / "team-many"
    (many / "data").mkdir(parents=True)
    (many / "bot.yaml").write_text("cmd: python bot.py\n")
    shutil.copy(BOT, many / "bot.py")
    for number in range(200_000):
        open(many / "data" / f"f{number}", "wb").close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=40)
    parser.add_argument("--files", type=int, default=50, help="files in each team's lib/ besides bot.py")
    parser.add_argument("--kb", type=int, default=20, help="size of each of those files")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--hostile", action="store_true", help="add a 5 GB sparse file and 200,000 empty files")
    parser.add_argument("--keep", type=Path, help="build the course here and keep it (default: a temporary directory)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.teams, args.files, args.kb, args.runs = 2, 2, 1, 1
    base = args.keep or Path(tempfile.mkdtemp(prefix="league-startup-"))
    submissions = base / "submissions"
    for n in range(1, args.teams + 1):
        team(submissions / f"team-{n:02d}", args.files, args.kb)
    if args.hostile:
        hostile(submissions)
    path = base / "course.yaml"
    path.write_text("name: course\ngame: oxono\ntime_control: 5+0.1\noutput: out\nstartup_failures: forfeit\n"
                    "bots_from: submissions\n")
    time.sleep(2.5)  # a course's files are older than the cache's 2 s of doubt (digest_cache.RACY_NS)
    env = dict(os.environ, TOTEM_ARENA_CACHE=str(base / "cache"))
    size = sum(f.stat().st_size for f in submissions.rglob("*") if f.is_file()) if not args.hostile else None
    print(f"{args.teams} teams of {args.files + 2} files" + (f", {size / 1e6:.1f} MB in all" if size else "")
          + (", and 2 hostile ones" if args.hostile else ""))
    print(f"{'run':>4} {'load s':>8} {'fingerprint s':>14} {'total s':>8}")
    for run in range(1, args.runs + 1):
        done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=base, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{run:4d} failed: {done.stderr.strip().splitlines()[-1]}")
            break
        load, prints = map(float, done.stdout.split())
        print(f"{run:4d} {load:8.3f} {prints:14.3f} {load + prints:8.3f}")
    if args.keep is None:
        subprocess.run(["rm", "-rf", str(base)], check=False)


if __name__ == "__main__":
    main()
