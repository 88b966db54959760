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

Printed per size: the mean and the slowest round, in seconds.

Then the driver's own cost per game in a whole Swiss run: ``run_tournament``
as ``arena run`` calls it (store, pairing, ``tournament.json``, rounds,
progress), with an executor that ends each game at once (the records of
instant bots, 18 moves each, results drawn from the same Elo model) and no
bot started; the CPU time of this process per game, over the first and the
last thousand games (a tenth of them at small sizes), and the same without
the time spent in Python's full garbage collections::

    python benchmarks/large_fields.py             # Swiss 100/1,000/10,000 bots, adaptive 100/1,000,
                                                  # the driver in a 10-round Swiss of 200 and 1,000 bots (minutes)
    python benchmarks/large_fields.py --quick     # tiny sizes, a few seconds
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402
from arena.formats.adaptive import adaptive_round, fit, idle_rounds, in_scope, ranking, verdicts  # noqa: E402
from arena.formats.pairing import opponents_of, swiss_round  # noqa: E402
from arena.game.records import GameRecord, GameSpec, MoveRecord, timestamp  # noqa: E402
from arena.run import tournament  # noqa: E402
from arena.run.config import load_config  # noqa: E402

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
        pairs, bye = swiss_round([(b, score[b]) for b in names], opponents_of(played), byes)
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


class InstantExecutor:
    """Ends each game as it is handed over: a record as an instant bot's
    game leaves it (18 moves), the winner drawn from the Elo model."""

    dropped = 0

    def __init__(self, elo: dict[str, float], rng: random.Random) -> None:
        self.elo, self.rng = elo, rng
        self.colors = engine.get_game("oxono").colors

    def session(self) -> AbstractContextManager[None]:
        return nullcontext()

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]:
        for spec in specs:
            record = GameRecord.for_spec(spec, self.colors, {"initial_ms": 10_000, "increment_ms": 0})
            record.moves = [MoveRecord(f"Xa{ply % 6 + 1} b{ply % 6 + 1}", 0.05) for ply in range(18)]
            a, b = (self.elo[name] for name in spec.players)
            u = self.rng.random()
            first_wins = 1.0 / (1.0 + 10 ** ((b - a) / 400))
            record.end_by_rules(None if u < DRAW else 0 if u < DRAW + (1 - DRAW) * first_wins else 1,
                                "exhausted" if u < DRAW else "alignment", None)
            record.ended_at = timestamp()
            yield record


def swiss_driver(n: int, rounds: int, seed: int) -> tuple[list[float], list[float]]:
    """The driver's CPU seconds at the end of each game of a ``rounds``-round
    Swiss of ``n`` bots, played through ``run_tournament`` (see the module's
    doc), and of those the seconds spent in Python's full garbage
    collections so far."""
    names, elo, rng = field(n, seed)
    collecting: list[float] = []
    collected = [0.0]

    def count_full_collections(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            collecting.append(time.process_time())
        elif collecting:
            collected[0] += time.process_time() - collecting.pop()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "swiss.yaml"
        bots = "".join(f"  - {{name: {name}, cmd: [{sys.executable}], version: '1'}}\n" for name in names)
        path.write_text(f"name: swiss\ngame: oxono\ntime_control: 10+0\nformat: swiss\nrounds: {rounds}\n"
                        f"seed: {seed}\noutput: {Path(tmp) / 'out'}\nbots:\n{bots}")
        config = load_config(path)
        ended: list[float] = []
        in_collections: list[float] = []

        def on_record(record: GameRecord, summary: object) -> None:
            ended.append(time.process_time())
            in_collections.append(collected[0])

        preflight = tournament.preflight
        tournament.preflight = lambda *args, **kwargs: []  # no bot is started: none plays
        gc.callbacks.append(count_full_collections)
        try:
            tournament.run_tournament(config, executor=InstantExecutor({b: elo[int(b[1:])] for b in names}, rng),
                                      on_record=on_record)
        finally:
            tournament.preflight = preflight
            gc.callbacks.remove(count_full_collections)
    return ended, in_collections


def driver_line(n: int, rounds: int, ended: list[float], in_collections: list[float]) -> str:
    span = min(1000, len(ended) // 10)
    first = (ended[span] - ended[0]) / span
    last = (ended[-1] - ended[-1 - span]) / span
    # A full collection's cost grows with the heap (every record a run keeps):
    # one or none falls in a window, so the driver's own cost is shown without them too.
    own_first = first - (in_collections[span] - in_collections[0]) / span
    own_last = last - (in_collections[-1] - in_collections[-1 - span]) / span
    return (f"| swiss, driver | {n:,} | {rounds} | {len(ended):,} games: CPU per game over the first {span:,} "
            f"{first * 1e3:.3f} ms, the last {span:,} {last * 1e3:.3f} ms ({last / first:.2f}x); "
            f"without Python's full garbage collections {own_first * 1e3:.3f} → {own_last * 1e3:.3f} ms "
            f"({own_last / own_first:.2f}x) |")


def line(kind: str, n: int, times: list[float]) -> str:
    return f"| {kind} | {n:,} | {len(times)} | {statistics.fmean(times):.3f} | {max(times):.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny fields: a check that it runs, in seconds")
    parser.add_argument("--swiss", default="100,1000,10000", help="Swiss field sizes")
    parser.add_argument("--adaptive", default="100,1000", help="adaptive field sizes")
    parser.add_argument("--rounds", type=int, default=10, help="Swiss rounds")
    parser.add_argument("--adaptive-rounds", type=int, default=5)
    parser.add_argument("--driver", default="200,1000", help="field sizes of the driver's Swiss runs")
    parser.add_argument("--driver-rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.swiss, args.adaptive, args.rounds, args.adaptive_rounds = "20,200", "20,60", 5, 3
        args.driver, args.driver_rounds = "40", 4
    print("| format | bots | rounds | mean s a round | slowest s |")
    print("|---|---:|---:|---:|---:|")
    for n in [int(s) for s in args.swiss.split(",") if s]:
        print(line("swiss", n, swiss_times(n, args.rounds, args.seed)), flush=True)
    for n in [int(s) for s in args.adaptive.split(",") if s]:
        print(line("adaptive", n, adaptive_times(n, args.adaptive_rounds, args.seed)), flush=True)
    for n in [int(s) for s in args.driver.split(",") if s]:
        print(driver_line(n, args.driver_rounds, *swiss_driver(n, args.driver_rounds, args.seed)), flush=True)


if __name__ == "__main__":
    main()
