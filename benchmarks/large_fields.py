"""What pairing a round costs in a large field: Swiss and adaptive.

Simulated, like benchmarks/formats.py: n bots with Elo spread evenly over
0..1000, game pairs drawn from the Elo model (10 % draws) by one
``random.Random`` seeded per size, a random seeding.  Only the pairing is
timed, not the simulated games:

* Swiss: :func:`arena.formats.pairing.swiss_round` for rounds 1..R, no
  rematch (a bye worth a won game pair), as ``format: swiss`` pairs them;
* adaptive: per round, what :mod:`arena.formats.rounds` and
  :mod:`arena.formats.progression` do once a round is in: the Bradley–Terry
  fit (warm-started from the round before, as in a run), the ranking, the
  verdicts and :func:`arena.formats.adaptive.adaptive_round`.

Printed per size: the mean and the slowest round, in seconds::

    python benchmarks/large_fields.py             # Swiss 100/1,000/10,000 bots, adaptive 100/1,000 (minutes)
    python benchmarks/large_fields.py --quick     # tiny sizes, a few seconds
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.formats.adaptive import adaptive_round, fit, idle_rounds, in_scope, ranking, verdicts  # noqa: E402
from arena.formats.pairing import swiss_round  # noqa: E402

DRAW = 0.1


def game_pair(elo: list[float], a: int, b: int, rng: random.Random) -> float:
    """A's points (0..2) from a game pair against B."""
    p = 1.0 / (1.0 + 10 ** ((elo[b] - elo[a]) / 400))
    total = 0.0
    for _ in range(2):
        u = rng.random()
        total += 0.5 if u < DRAW else 1.0 if u < DRAW + (1 - DRAW) * p else 0.0
    return total


def field(n: int, seed: int) -> tuple[list[str], list[float], random.Random]:
    """The bots' names in seeding order, their Elo by number, and the source of their results."""
    rng = random.Random(f"{seed}/{n}")
    elo = [1000.0 * i / (n - 1) for i in range(n)]
    seeding = list(range(n))
    rng.shuffle(seeding)
    return [f"b{i}" for i in seeding], elo, rng


def swiss_times(n: int, rounds: int, seed: int) -> list[float]:
    """The seconds each of ``rounds`` Swiss rounds of ``n`` bots takes to pair."""
    names, elo, rng = field(n, seed)
    number = {name: int(name[1:]) for name in names}
    score = dict.fromkeys(names, 0.0)
    played: set[frozenset[str]] = set()
    byes: set[str] = set()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        pairs, bye = swiss_round([(b, score[b]) for b in names], played, byes)
        times.append(time.perf_counter() - start)
        for a, b in pairs:
            points = game_pair(elo, number[a], number[b], rng)
            score[a] += points
            score[b] += 2 - points
            played.add(frozenset((a, b)))
        if bye is not None:
            byes.add(bye)
            score[bye] += 2
    return times


def adaptive_times(n: int, rounds: int, seed: int) -> list[float]:
    """The seconds each of ``rounds`` adaptive rounds of ``n`` bots takes to
    pair: fit, ranking, verdicts and pairs, as once a round in the arena."""
    names, elo, rng = field(n, seed)
    number = {name: int(name[1:]) for name in names}
    results: dict[tuple[str, str], tuple[float, int]] = {}
    played: list[set[str]] = []
    last: dict[str, str] = {}
    times = []
    for round_number in range(1, rounds + 1):
        start = time.perf_counter()
        model = fit(names, results)
        order = ranking(names, model)
        scope = in_scope(verdicts(order, model, 0.95, 20.0), None)
        pairs, _ = adaptive_round(order, model, scope, idle_rounds(order, played), last, seed, round_number, n * n)
        times.append(time.perf_counter() - start)
        for a, b in pairs:
            points = game_pair(elo, number[a], number[b], rng)
            key, first = ((a, b), points) if a < b else ((b, a), 2 - points)
            s, g = results.get(key, (0.0, 0))
            results[key] = (s + first, g + 2)
            last[a], last[b] = b, a
        played.append({b for pair in pairs for b in pair})
    return times


def line(kind: str, n: int, times: list[float]) -> str:
    return f"| {kind} | {n:,} | {len(times)} | {statistics.fmean(times):.3f} | {max(times):.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny fields: a check that it runs, in seconds")
    parser.add_argument("--swiss", default="100,1000,10000", help="Swiss field sizes")
    parser.add_argument("--adaptive", default="100,1000", help="adaptive field sizes")
    parser.add_argument("--rounds", type=int, default=10, help="Swiss rounds")
    parser.add_argument("--adaptive-rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.swiss, args.adaptive, args.rounds, args.adaptive_rounds = "20,200", "20,60", 5, 3
    print("| format | bots | rounds | mean s a round | slowest s |")
    print("|---|---:|---:|---:|---:|")
    for n in [int(s) for s in args.swiss.split(",") if s]:
        print(line("swiss", n, swiss_times(n, args.rounds, args.seed)), flush=True)
    for n in [int(s) for s in args.adaptive.split(",") if s]:
        print(line("adaptive", n, adaptive_times(n, args.adaptive_rounds, args.seed)), flush=True)


if __name__ == "__main__":
    main()
