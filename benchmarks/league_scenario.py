"""A teaching assistant's term, measured: 40 teams from folders, then a late
team, then a fixed bot; how many games each step plays, and how long it takes.

    python benchmarks/league_scenario.py [--teams 40] [--keep DIR]

Each team is a folder with a bot.yaml and a small standard-library Python
bot (a random legal move), as a course's submissions are.  The tournament is
a round-robin of OXONO on its 2 start positions (4 games a pair).  It prints,
per step: games played, games resumed, games archived in replaced.jsonl, and
the wall time of the whole ``arena run`` (bots' start-up included).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "tournaments" / "course" / "submissions" / "team-ann" / "bot.py"


def team(folder: Path) -> None:
    folder.mkdir(parents=True)
    shutil.copy(BOT, folder / "bot.py")
    (folder / "bot.yaml").write_text("cmd: python bot.py\n")


def run(path: Path, *args: str) -> tuple[int, int, float, str]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(path), *args], cwd=ROOT,
                          capture_output=True, text=True)
    elapsed = time.monotonic() - start
    found = re.search(r"^(\d+) games played, (\d+) resumed", done.stderr, re.M)
    if found is None:
        return 0, 0, elapsed, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    return int(found[1]), int(found[2]), elapsed, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=40)
    parser.add_argument("--keep", type=Path, help="build the course here and keep it (default: a temporary directory)")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.teams = 2
    base = args.keep or Path(tempfile.mkdtemp(prefix="league-"))
    submissions = base / "submissions"
    for n in range(1, args.teams + 1):
        team(submissions / f"team-{n:02d}")
    path = base / "course.yaml"
    path.write_text("name: course\ngame: oxono\ntime_control: 5+0.1\noutput: out\nbots_from: submissions\n")
    out = base / "out"

    def archived() -> int:
        archive = out / "replaced.jsonl"
        return len(archive.read_text().splitlines()) if archive.exists() else 0

    rows = []
    played, resumed, seconds, error = run(path)
    rows.append((f"{args.teams} teams, first run", played, resumed, archived(), seconds, error))
    team(submissions / "team-late")
    played, resumed, seconds, error = run(path)
    rows.append(("a late team joins", played, resumed, archived(), seconds, error))
    # team-07 of a full class; the last team of a smaller one (--quick)
    fixed_team = f"team-{min(7, args.teams):02d}"
    fixed = submissions / fixed_team / "bot.py"
    fixed.write_text(fixed.read_text() + "# fixed\n")
    played, resumed, seconds, error = run(path)
    rows.append((f"{fixed_team} fixed: the run stops", played, resumed, archived(), seconds, error))
    played, resumed, seconds, error = run(path, "--replay", fixed_team)
    rows.append((f"--replay {fixed_team}", played, resumed, archived(), seconds, error))
    played, resumed, seconds, error = run(path)
    rows.append(("run again", played, resumed, archived(), seconds, error))

    print(f"{'step':32} {'played':>7} {'resumed':>8} {'archived':>9} {'seconds':>8}")
    for step, played, resumed, archived_now, seconds, error in rows:
        print(f"{step:32} {played:7d} {resumed:8d} {archived_now:9d} {seconds:8.1f}" + (f"   {error[:90]}" if error else ""))
    total = len((out / "games.jsonl").read_text().splitlines())
    versions = json.loads((out / "tournament.json").read_text())["bots"]
    print(f"games.jsonl: {total} records; tournament.json: {len(versions)} bots with versions; course in {base}")
    if args.keep is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
