"""Soak the league model: random sequences of events, for as long as asked.

    python scripts/league_soak.py --minutes 30 [--formats swiss,stages] [--steps 6] [--seed 1000] [--avoid delete,garble]

Runs the model of ``tests/league_model.py`` (each sequence: a format, in
turn, and a seed, counting up from ``--seed``; random events on a league of
small deterministic bots, runs killed and resumed, checked after each step
against an undisturbed twin) until the time is up, one line a sequence.  At
the end: how many sequences ran, and each violation with its seed, format
and events; ``--seed S --formats F --count 1`` replays one (the moments the
runs are killed vary with the machine).  ``--avoid`` leaves events out, to
look past a bug already known (events: run, late, change, break, shuffle,
tear, delete, garble, remove, back, rounds, more, index).  The exit status is 1
when a violation was found.  CI runs one short sequence a format instead
(``tests/test_league_model.py``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from league_model import FORMATS, run_sequence  # noqa: E402  (after the path is set)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="stop starting sequences after this long")
    parser.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated, of: {', '.join(FORMATS)}")
    parser.add_argument("--steps", type=int, default=6, help="events a sequence (after its first run)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000, help="the first sequence's seed")
    parser.add_argument("--count", type=int, default=None, help="stop after this many sequences")
    parser.add_argument("--avoid", default="", help="comma-separated events to leave out")
    args = parser.parse_args()
    formats = [f for f in args.formats.split(",") if f]
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        parser.error(f"unknown format {unknown[0]!r}; formats: {', '.join(FORMATS)}")
    avoid = frozenset(e for e in args.avoid.split(",") if e)
    end = time.monotonic() + 60 * args.minutes
    found, runs, count = [], 0, 0
    print(f"league soak: formats {', '.join(formats)}, {args.steps} steps a sequence, seeds from {args.seed}", flush=True)
    with tempfile.TemporaryDirectory(prefix="league-soak-") as work:
        while time.monotonic() < end and (args.count is None or count < args.count):
            seed, fmt = args.seed + count, formats[count % len(formats)]
            start = time.monotonic()
            log = run_sequence(seed, fmt, Path(work) / f"s{count}", args.steps, avoid)
            count += 1
            runs += log.runs
            verdict = "ok" if not log.violations else "VIOLATION: " + log.violations[0].splitlines()[0][:200]
            print(f"{count:5d}  {fmt:11}  seed {seed:6d}  {len(log.steps):2d} steps  {log.runs:3d} runs  "
                  f"{time.monotonic() - start:5.1f} s  {verdict}", flush=True)
            if log.violations:
                found.append(log)
    print(f"\n{count} sequences run ({runs} arena runs) in {args.minutes:g} minutes; {len(found)} with a violation")
    for log in found:
        print(f"\n--seed {log.seed} --formats {log.fmt} --count 1\n{log.describe()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
