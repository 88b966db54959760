"""How long reading a results directory takes: ``read_results`` on a
round-robin of --games games (records of real random games, rewritten onto
the schedule), pointed at the directory and at the tournament file, as
``arena standings`` and ``arena report`` read it.  Reports the median of
--repeat readings.

    python benchmarks/read_results.py                 # 10,000 games of OXONO, 10 bots
    python benchmarks/read_results.py --games 2000 --repeat 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from arena.run.config import load_config  # noqa: E402
from arena.run.results_dir import read_results, tournament_meta  # noqa: E402
from arena.formats.schedule import make_schedule, schedule_size  # noqa: E402
from arena.results.reading import WHOLE_SCHEDULE  # noqa: E402
from played_games import played_games  # noqa: E402


def write_results(directory: Path, games: int, bots: int) -> Path:
    names = [f"bot{i}" for i in range(bots)]
    pairs = bots * (bots - 1) // 2
    rounds = max(1, -(-games // (pairs * 4)))  # 2 start positions, a game pair each
    path = directory / "rr.yaml"
    entries = "".join(f"  - {{name: {n}, cmd: python -m bots.random_bot}}\n" for n in names)
    path.write_text(f"name: rr\ngame: oxono\ntime_control: 5+0.1\nrounds: {rounds}\noutput: out\nbots:\n{entries}")
    config = load_config(path)
    out = config.output
    out.mkdir()
    pool = played_games("oxono", ["x", "y"], 64, seed=3)
    by_opening = {o: [r for r in pool if r.opening == o] for o in {r.opening for r in pool}}
    lines = []
    among = None
    if schedule_size(config.competition) // rounds > WHOLE_SCHEDULE:
        # A field too large for its whole schedule (1,000 bots): the games of a ring of pairs, as readers make them.
        ring = [(names[i], names[(i + 1) % bots]) for i in range(min(bots, -(-games // 4)))]
        among = {(min(pair), max(pair)) for pair in ring}
    for spec in make_schedule(config.competition, among=among)[:games]:
        source = by_opening[spec.opening][spec.index % len(by_opening[spec.opening])]
        lines.append(dataclasses.replace(source, game_id=spec.game_id, players=dict(zip(("pink", "black"), spec.players)),
                                         round=spec.round, index=spec.index, pair=spec.pair, seed=spec.seed).to_line())
    (out / "games.jsonl").write_bytes(b"".join(lines))
    (out / "tournament.json").write_text(json.dumps(tournament_meta(config).to_json()))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--bots", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.games, args.bots, args.repeat = 200, 4, 1
    with tempfile.TemporaryDirectory() as tmp:
        path = write_results(Path(tmp), args.games, args.bots)
        for label, target in (("directory", path.parent / "out"), ("tournament file", path)):
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                results = read_results(target)
                times.append(time.perf_counter() - started)
            print(f"read_results({label}): {len(results.records)} games in {statistics.median(times):.2f} s "
                  f"(median of {args.repeat})")


if __name__ == "__main__":
    main()
