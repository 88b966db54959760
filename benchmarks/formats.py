"""How good a ranking each tournament format gives for the games it costs.

Simulated, so it runs in seconds without playing a game: n bots with set
Elo ratings spread evenly over 0..1000 (bot i of n has 1000·i/(n−1); the
strongest is 1000 Elo above the weakest, neighbours 1000/(n−1) apart).  A
game is a draw with probability 10 %, otherwise won by A with the
Bradley–Terry (Elo) probability 1/(1 + 10^((Eb − Ea)/400)).  Each pairing is
a game pair, as in the arena (two games, both colours; colour does not
matter to the model); every result of one repetition is drawn from one
``random.Random`` seeded by the repetition, so a run is reproducible.  The
seeding (the order of the tournament file) is a random shuffle: the
organiser does not know the strengths.

Formats, each ranked as it would be by a tournament director:

* ``round-robin``: every pair meets once; ranked by points, then Buchholz,
  then Sonneborn–Berger, then seeding (:func:`arena.formats.rounds.points_order`);
* ``swiss R``: R rounds of :func:`arena.formats.pairing.swiss_round`, a bye worth
  a won game pair; ranked like the round-robin;
* ``knockout``: :func:`arena.formats.pairing.knockout_bracket` from the seeding, a
  match of one game pair, a tied match up to 3 more game pairs, then the
  better seed; ranked by places (1, 2, 3–4, 5–8, ...; a shared place counts as
  its middle rank);
* ``swiss+ko8``: ⌈log2 n⌉ Swiss rounds, then a knockout of the top 8 seeded
  by the Swiss order; the top 8 ranked by places, the rest by the Swiss.
* ``adaptive``: :func:`arena.formats.adaptive.adaptive_round` round after
  round (``format: adaptive``, ``settle: {confidence: 0.95, within_elo:
  20}``), ranked by its Bradley–Terry fit.  One run of ``n(n−1)`` games at
  most (a round-robin's) per repetition, read at three budgets: the last
  whole round within a ``swiss 2⌈log2 n⌉``'s games (``adaptive @ swiss``),
  within a quarter of a round-robin's (``adaptive @ rr/4``), and where it
  stopped (``adaptive``: settled, or at the round-robin's games).  A run
  with ``max_games`` set to a budget pairs the same rounds up to it.
  Fewer repetitions (``--adaptive-repeat``): a 128-bot fit takes a
  fraction of a second a round.  Also printed: the games it needs for the
  round-robin's mean Spearman (the first round where its mean over the
  repetitions reaches it), and the calibration of its verdicts at each of
  the three budgets, pooled: of the adjacent pairs declared separated, the
  fraction whose true order is the declared one; of those declared tied
  within 20 Elo, the fraction truly within 20 Elo.  Neighbours 8–32 Elo
  apart are rarely shown tied within 20, so the calibration is also
  measured on fields of tiers of two equal bots (:func:`tiered`, 300 Elo
  between tiers, tied meaning within 100 Elo, 600 games at most), where
  half the adjacent pairs are truly tied.

These are the arena's rules (``format: swiss``, ``format: knockout``,
``stages:`` with ``tiebreak_pairs: 3``): tests/test_formats_benchmark.py
plays the same results through the arena's own pairing and reading and
checks that both rank alike.

Printed per format and field size: games played, how often the strongest bot
wins the format (first place alone), and the Spearman rank correlation
between the true order and the format's ranking, both as the mean over the
repetitions with its standard error:

    python benchmarks/formats.py [--sizes 32,64,128] [--repeat 1000] [--adaptive-repeat 20] [--draw 0.1] [--seed 1]

``--real`` confirms it with real games instead of the model: the same
formats between bots of graded strength (:class:`EngineField`) playing
OXONO with the rules engine in this process (no bot processes, no clock):

    python benchmarks/formats.py --real --sizes 16 --repeat 20
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.formats.adaptive import Verdict, adaptive_round, fit, idle_rounds, in_scope, ranking, verdicts  # noqa: E402
from arena.formats.scoring import points_order, total_scores  # noqa: E402
from arena.formats.pairing import (  # noqa: E402
    knockout_bracket,
    knockout_places,
    knockout_next_round,
    opponents_of,
    swiss_round,
)

TIEBREAK_PAIRS = 3


class Field:
    """n bots of known Elo and the random source all their results come from."""

    def __init__(self, n: int, rng: random.Random, draw: float) -> None:
        self.elo = [1000.0 * i / (n - 1) for i in range(n)]  # bot i: higher i is stronger
        self.rng = rng
        self.draw = draw
        self.games = 0

    def game_pair(self, a: int, b: int) -> float:
        """A's points (0..2) from a game pair against B."""
        p = 1.0 / (1.0 + 10 ** ((self.elo[b] - self.elo[a]) / 400))
        total = 0.0
        for _ in range(2):
            u = self.rng.random()
            total += 0.5 if u < self.draw else 1.0 if u < self.draw + (1 - self.draw) * p else 0.0
        self.games += 2
        return total


class EngineField(Field):
    """n real bots of graded strength playing OXONO in this process: bot i
    plays ``bots.greedy``'s move with probability i/(n−1) and a random legal
    move otherwise (bot 0 is the random bot, bot n−1 the greedy one).  The
    two games of a pair share an opening and swap colours."""

    def __init__(self, n: int, rng: random.Random, draw: float = 0.0) -> None:
        import engine
        from bots.greedy import choose_move

        super().__init__(n, rng, draw)
        self.strength = [i / (n - 1) for i in range(n)]
        self.engine = engine.get_game("oxono")
        self.choose = choose_move

    def game_pair(self, a: int, b: int) -> float:
        game, rng = self.engine, self.rng
        seed = rng.randrange(2**31)
        total = 0.0
        for players in ((a, b), (b, a)):
            state = game.new_state(seed=seed)
            while (outcome := game.outcome(state)) is None:
                moves = game.legal_moves(state)
                greedy = rng.random() < self.strength[players[game.to_move(state)]]
                state = game.apply(state, self.choose(game, state, moves, rng) if greedy else rng.choice(moves))
            total += 0.5 if outcome.winner is None else float(players[outcome.winner] == a)
        self.games += 2
        return total


def meet(field: Field, points: dict[tuple[int, int], float], a: int, b: int) -> None:
    pa = field.game_pair(a, b)
    points[(a, b)] = points.get((a, b), 0.0) + pa
    points[(b, a)] = points.get((b, a), 0.0) + 2 - pa


def round_robin(field: Field, seeding: list[int]) -> list[float]:
    points: dict[tuple[int, int], float] = {}
    for i, a in enumerate(seeding):
        for b in seeding[i + 1:]:
            meet(field, points, a, b)
    return ranks_of(points_order(seeding, points, total_scores(points)))


def swiss(field: Field, seeding: list[int], rounds: int) -> list[int]:
    """The Swiss order after ``rounds`` rounds, best first."""
    points: dict[tuple[int, int], float] = {}
    byes: set[int] = set()
    played: set[frozenset[int]] = set()
    for _ in range(rounds):
        scores = full_scores(points, byes, seeding)
        pairs, bye = swiss_round([(b, scores[b]) for b in seeding], opponents_of(played), byes)
        for a, b in pairs:
            played.add(frozenset((a, b)))
            meet(field, points, a, b)
        if bye is not None:
            byes.add(bye)
    return points_order(seeding, points, full_scores(points, byes, seeding))


def full_scores(points: dict[tuple[int, int], float], byes: set[int], seeding: list[int]) -> dict[int, float]:
    """Scores with a bye worth a won game pair (2 points)."""
    scores = total_scores(points)
    return {b: scores.get(b, 0.0) + 2.0 * (b in byes) for b in seeding}


def knockout(field: Field, seeds: list[int]) -> dict[int, tuple[int, int]]:
    """Places of a knockout seeded ``seeds`` (best seed first)."""
    seed_rank = {b: i for i, b in enumerate(seeds)}
    rounds = []
    matches = knockout_bracket(seeds)
    while True:
        results = []
        for a, b in matches:
            if b is None:
                results.append((a, None))
                continue
            margin = field.game_pair(a, b) - 1
            extra = 0
            while margin == 0 and extra < TIEBREAK_PAIRS:
                margin = field.game_pair(a, b) - 1
                extra += 1
            if margin == 0:  # still tied: the better seed goes through
                margin = 1 if seed_rank[a] < seed_rank[b] else -1
            results.append((a, b) if margin > 0 else (b, a))
        rounds.append(results)
        winners = [w for w, _ in results]
        if len(winners) == 1:
            return knockout_places(rounds, len(seeds))
        matches = knockout_next_round(winners)


def ranks_of(order: list[int]) -> list[float]:
    """rank[bot] (1 = best) from an order, best first."""
    ranks = [0.0] * len(order)
    for r, b in enumerate(order, 1):
        ranks[b] = float(r)
    return ranks


def knockout_only(field: Field, seeding: list[int]) -> list[float]:
    places = knockout(field, seeding)
    return [(lo + hi) / 2 for lo, hi in (places[b] for b in range(len(seeding)))]


def swiss_then_ko(field: Field, seeding: list[int], rounds: int, top: int = 8) -> list[float]:
    order = swiss(field, seeding, rounds)
    ranks = ranks_of(order)
    for b, (lo, hi) in knockout(field, order[:top]).items():
        ranks[b] = (lo + hi) / 2
    return ranks


#: The adaptive stage's stop rule in the benchmark (the arena's defaults).
CONFIDENCE, WITHIN_ELO = 0.95, 20.0


def bot_name(i: int) -> str:
    """Bot i's name, as an arena tournament of the benchmark names it (the names decide the ties)."""
    return f"b{i}"


def adaptive(field: Field, seeding: list[int], max_games: int, *, seed: int = 0, top: int | None = None,
             confidence: float = CONFIDENCE, within_elo: float = WITHIN_ELO,
             ) -> list[tuple[int, list[int], list[Verdict]]]:
    """An adaptive stage of at most ``max_games`` games, as the arena pairs
    it (:mod:`arena.formats.progression`): after each round (and before the
    first), the games played so far, the ranking (best first) and the
    verdict on each adjacent pair.  The last entry is where it stopped."""
    names = [bot_name(b) for b in seeding]
    number = dict(zip(names, seeding))
    results: dict[tuple[str, str], tuple[float, int]] = {}
    played: list[set[str]] = []
    last: dict[str, str] = {}
    out = []
    for round_number in range(1, 10**6):
        model = fit(names, results)
        order = ranking(names, model)
        said = verdicts(order, model, confidence, within_elo, top)
        out.append((field.games, [number[b] for b in order], said))
        scope = in_scope(said, top)
        if all(v.settled for v in scope) or field.games + 2 > max_games:
            return out
        pairs, _ = adaptive_round(order, model, scope, idle_rounds(order, played), last, seed, round_number,
                                  (max_games - field.games) // 2)
        for a, b in pairs:
            points = field.game_pair(number[a], number[b])
            key, first = ((a, b), points) if a < b else ((b, a), 2 - points)
            s, g = results.get(key, (0.0, 0))
            results[key] = (s + first, g + 2)
            last[a], last[b] = b, a
        played.append({b for pair in pairs for b in pair})
    raise AssertionError("unreachable")


def calibration(said: list[Verdict], elo: list[float], within_elo: float = WITHIN_ELO) -> tuple[int, int, int, int]:
    """(separated, of them truly in the declared order, tied, of them truly within ``within_elo``)."""
    true = {bot_name(i): e for i, e in enumerate(elo)}
    separated = [v for v in said if v.status == "separated"]
    tied = [v for v in said if v.status == "tied"]
    return (len(separated), sum(true[v.better] > true[v.worse] for v in separated),
            len(tied), sum(abs(true[v.better] - true[v.worse]) <= within_elo for v in tied))


def tiered(tiers: int, gap: float, rng: random.Random, draw: float) -> Field:
    """A field of ``tiers`` pairs of equal bots, the tiers ``gap`` Elo apart:
    half its adjacent pairs truly tied, half truly apart."""
    field = Field(2 * tiers, rng, draw)
    field.elo = [gap * (i // 2) for i in range(2 * tiers)]
    return field


def tiered_calibration(tiers: int, gap: float, within_elo: float, max_games: int, repeat: int, seed: int,
                       draw: float) -> tuple[list[int], float]:
    """The verdicts where an adaptive stage of a :func:`tiered` field stopped
    (settled, or at ``max_games``), pooled over ``repeat`` runs:
    :func:`calibration`'s counts, and the mean games played."""
    n = 2 * tiers
    counts, games = [0, 0, 0, 0], []
    for rep in range(repeat):
        rng = random.Random(f"{seed}/tiered/{n}/{rep}")
        seeding = list(range(n))
        rng.shuffle(seeding)
        field = tiered(tiers, gap, rng, draw)
        run = adaptive(field, seeding, max_games, within_elo=within_elo)
        for k, c in enumerate(calibration(run[-1][2], field.elo, within_elo)):
            counts[k] += c
        games.append(run[-1][0])
    return counts, statistics.fmean(games)


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rho: Pearson's correlation of the ranks (ties as their mean rank)."""
    rx, ry = mean_ranks(x), mean_ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def mean_ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def formats(n: int) -> dict[str, Callable[[Field, list[int]], list[float]]]:
    log = math.ceil(math.log2(n))
    return {
        "round-robin": round_robin,
        f"swiss {log}": lambda f, s: ranks_of(swiss(f, s, log)),
        f"swiss {2 * log}": lambda f, s: ranks_of(swiss(f, s, 2 * log)),
        "knockout": knockout_only,
        f"swiss {log}+ko8": lambda f, s: swiss_then_ko(f, s, log),
    }


def row(n: int, name: str, games: list[float], wins: list[float], rho: list[float]) -> str:
    g, _ = mean_se(games)
    w, w_se = mean_se(wins)
    r, r_se = mean_se(rho)
    return f"| {n} | {name} | {g:,.0f} | {w:.1%} ± {w_se:.1%} | {r:.3f} ± {r_se:.4f} |"


def games_to_reach(curves: list[list[tuple[int, float]]], target: float) -> str:
    """The mean games of the first round whose mean Spearman over the runs reaches ``target``."""
    for k in range(max(len(c) for c in curves)):
        # A run that stopped before round k stays as it stopped.
        points = [c[min(k, len(c) - 1)] for c in curves]
        if statistics.fmean(s for _, s in points) >= target:
            return f"({target:.3f}) at {statistics.fmean(g for g, _ in points):,.0f} games"
    return f"({target:.3f}) in none of its rounds, up to a round-robin's games"


def information_share(elo: list[float]) -> float:
    """A round-robin's Fisher information on a bot's rating, per game, over
    the most a game can give (¼, between equal bots), averaged over the
    field.  No pairing rule gives a bot's rating the round-robin's precision
    in fewer than this share of the round-robin's games: a game is worth at
    most ¼ whoever it pairs (the Cramér–Rao bound, draws aside)."""
    n = len(elo)
    total = 0.0
    for i, a in enumerate(elo):
        for j, b in enumerate(elo):
            if i != j:
                p = 1 / (1 + 10 ** ((b - a) / 400))
                total += p * (1 - p)
    return total / (n * (n - 1)) / 0.25


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def mean_se(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(len(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="32,64,128")
    parser.add_argument("--repeat", type=int, default=1000)
    parser.add_argument("--draw", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--adaptive-repeat", type=int, default=20, help="repetitions of the adaptive runs")
    parser.add_argument("--real", action="store_true", help="real OXONO games between bots of graded strength")
    parser.add_argument("--quick", action="store_true", help="a tiny size: only checks that it runs (tests/test_benchmarks.py)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeat, args.adaptive_repeat = "8", 3, 2
    started = time.perf_counter()
    make = EngineField if args.real else Field
    field_text = ("OXONO games, bot i greedy with probability i/(n-1), else random" if args.real
                  else f"Elo evenly over 0..1000, draws {args.draw:.0%}")
    print(f"{field_text}; random seeding, {args.repeat} repetitions; mean ± standard error")
    print("| bots | format | games | strongest wins | Spearman |")
    print("|---:|---|---:|---:|---:|")
    calibrated: dict[tuple[int, str], list[int]] = {}
    reached: dict[int, str] = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        truth = [float(n - b) for b in range(n)]  # true rank: bot n-1 is 1st
        rho_of: dict[str, float] = {}
        for name, play in formats(n).items():
            games, wins, rho = [], [], []
            for rep in range(args.repeat):
                rng = random.Random(f"{args.seed}/{n}/{rep}")
                seeding = list(range(n))
                rng.shuffle(seeding)
                field = make(n, rng, args.draw)
                ranks = play(field, seeding)
                games.append(field.games)
                wins.append(1.0 if ranks[n - 1] == 1 else 0.0)
                rho.append(spearman(truth, ranks))
            print(row(n, name, games, wins, rho), flush=True)
            rho_of[name] = statistics.fmean(rho)
        log = math.ceil(math.log2(n))
        budgets = {f"adaptive @ swiss {2 * log}": 2 * log * n, "adaptive @ rr/4": n * (n - 1) // 4, "adaptive": n * (n - 1)}
        at: dict[str, tuple[list[float], list[float], list[float]]] = {name: ([], [], []) for name in budgets}
        curves: list[list[tuple[int, float]]] = []
        for rep in range(args.adaptive_repeat):
            rng = random.Random(f"{args.seed}/{n}/adaptive/{rep}")
            seeding = list(range(n))
            rng.shuffle(seeding)
            field = make(n, rng, args.draw)
            run = adaptive(field, seeding, n * (n - 1))
            curves.append([(games, spearman(truth, ranks_of(order))) for games, order, _ in run])
            for name, budget in budgets.items():
                games, order, said = [entry for entry in run if entry[0] <= budget][-1]
                at[name][0].append(games)
                at[name][1].append(1.0 if order[0] == n - 1 else 0.0)
                at[name][2].append(spearman(truth, ranks_of(order)))
                counts = calibrated.setdefault((n, name), [0, 0, 0, 0])
                for k, c in enumerate(calibration(said, field.elo)):
                    counts[k] += c
        for name in budgets:
            print(row(n, name, *at[name]), flush=True)
        reached[n] = games_to_reach(curves, rho_of["round-robin"])
    print()
    for n, text in reached.items():
        print(f"{n} bots: the adaptive format reaches the round-robin's mean Spearman {text}; no pairing gives "
              f"a bot's rating the round-robin's precision in under {information_share(Field(n, random.Random(), 0).elo):.1%} "
              "of its games")
    print()
    print(f"Calibration of the verdicts at confidence {CONFIDENCE} (pooled over the adaptive runs):")
    print("| bots | read at | declared separated | truly in that order | declared tied within 20 | truly within 20 |")
    print("|---:|---|---:|---:|---:|---:|")
    for (n, name), (sep, right, tied, within) in calibrated.items():
        tied_text = "-" if args.real else share(within, tied)
        print(f"| {n} | {name} | {sep:,} | {share(right, sep)} | {tied:,} | {tied_text} |")
    if not args.real:
        # The even field above is too close for a tie within 20 Elo to be shown: tiers of equal bots are.
        runs = 2 if args.quick else args.adaptive_repeat * 10  # --quick: a run of each, only to show it runs
        print()
        print(f"Tiers of two equal bots, 300 Elo between tiers, tied meaning within 100 Elo, {runs} runs each, "
              f"stopped when settled or at 600 games:")
        print("| bots | games | declared separated | truly in that order | declared tied within 100 | truly within 100 |")
        print("|---:|---:|---:|---:|---:|---:|")
        for tiers in (2, 3):
            (sep, right, tied, within), games = tiered_calibration(tiers, 300.0, 100.0, 600, runs, args.seed, args.draw)
            print(f"| {2 * tiers} | {games:,.0f} | {sep:,} | {share(right, sep)} | {tied:,} | {share(within, tied)} |")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
