"""The simulation and the statistics of benchmarks/formats.py, against numbers
computed here."""

from __future__ import annotations

import importlib.util
import random
import sys

import pytest

from builders import ROOT, result, start, tournament

# benchmarks/ is a folder of scripts, not a package: load the script itself.
_SPEC = importlib.util.spec_from_file_location("formats_benchmark", ROOT / "benchmarks" / "formats.py")
_MODULE = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = _MODULE  # its dataclasses look their module up
_SPEC.loader.exec_module(_MODULE)
Field, formats, mean_ranks, spearman = _MODULE.Field, _MODULE.formats, _MODULE.mean_ranks, _MODULE.spearman


def test_spearman_matches_the_textbook_formula_without_ties():
    rng = random.Random(3)
    n = 20
    x = [float(i) for i in range(n)]
    y = x[:]
    rng.shuffle(y)
    d2 = sum((a - b) ** 2 for a, b in zip(x, y))
    assert spearman(x, y) == pytest.approx(1 - 6 * d2 / (n * (n * n - 1)))
    assert spearman(x, x) == pytest.approx(1.0)
    assert spearman(x, x[::-1]) == pytest.approx(-1.0)


def test_the_information_bound_of_a_round_robin():
    # Two bots 1000 Elo apart: each game tells p(1-p) of what a game between equals does.
    p = 1 / (1 + 10 ** 2.5)
    assert _MODULE.information_share([0.0, 1000.0]) == pytest.approx(4 * p * (1 - p))
    assert _MODULE.information_share([0.0, 0.0, 0.0]) == pytest.approx(1.0)
    # Three bots 0, 400, 800: pairs at 400 (twice) and 800 Elo.
    near, far = 1 / (1 + 10 ** 1), 1 / (1 + 10 ** 2)
    assert _MODULE.information_share([0.0, 400.0, 800.0]) == pytest.approx(4 * (2 * near * (1 - near) + far * (1 - far)) / 3)


def test_ties_take_their_mean_rank():
    assert mean_ranks([5.0, 1.0, 3.0, 3.0]) == [4.0, 1.0, 2.5, 2.5]


def test_game_pairs_follow_the_elo_model():
    field = Field(2, random.Random(7), draw=0.1)  # Elo 0 and 1000
    field.elo = [400.0, 0.0]
    pairs = 20000
    mean = sum(field.game_pair(0, 1) for _ in range(pairs)) / pairs
    expected = 2 * (0.1 * 0.5 + 0.9 / (1 + 10 ** (-400 / 400)))
    assert mean == pytest.approx(expected, abs=0.01)
    assert field.games == 2 * pairs


def test_formats_cost_what_they_should():
    n = 8
    games = {}
    for name, play in formats(n).items():
        field = Field(n, random.Random(1), draw=0.1)
        ranks = play(field, list(range(n)))
        assert sorted(ranks)[0] == 1.0 and len(ranks) == n
        games[name] = field.games
    assert games["round-robin"] == n * (n - 1)
    assert games["swiss 3"] == 3 * n and games["swiss 6"] == 6 * n
    # 7 matches of one game pair, up to 3 more game pairs each when tied
    assert 2 * 7 <= games["knockout"] <= 2 * 7 * 4
    assert games["swiss 3+ko8"] >= 3 * n + 14


def test_real_games_of_graded_bots():
    from benchmarks.formats import EngineField

    field = EngineField(2, random.Random(4))  # bot 0 random, bot 1 greedy
    results = [field.game_pair(1, 0) for _ in range(10)]
    assert field.games == 20
    assert all(0 <= r <= 2 for r in results)
    assert sum(results) / len(results) > 1.5  # the greedy bot wins most games
    again = EngineField(2, random.Random(4))
    assert [again.game_pair(1, 0) for _ in range(10)] == results


# -- the benchmark measures what the arena does ------------------------------------------


def _outcome(lo: int, hi: int, meeting: int, game: int, elo: list[float]) -> int | None:
    """The winner (a bot number) of game ``game`` of the ``meeting``-th game
    pair between bots ``lo`` < ``hi``, or None for a draw: drawn from a hash
    under the benchmark's Elo model, so that both sides see the same games
    whatever order they play them in."""
    import hashlib

    u = int.from_bytes(hashlib.sha256(f"{lo}:{hi}:{meeting}:{game}".encode()).digest()[:8], "big") / 2**64
    p = 1.0 / (1.0 + 10 ** ((elo[hi] - elo[lo]) / 400))
    return None if u < 0.1 else lo if u < 0.1 + 0.9 * p else hi


class _HashedField(Field):
    """The benchmark's field with each game pair's results from :func:`_outcome`."""

    def __init__(self, n: int) -> None:
        super().__init__(n, random.Random(0), draw=0.1)
        self.met: dict[frozenset[int], int] = {}

    def game_pair(self, a: int, b: int) -> float:
        lo, hi = sorted((a, b))
        meeting = self.met.get(frozenset((a, b)), 0)
        self.met[frozenset((a, b))] = meeting + 1
        self.games += 2
        winners = [_outcome(lo, hi, meeting, game, self.elo) for game in (0, 1)]
        return sum(0.5 if w is None else float(w == a) for w in winners)


def _arena_run(tmp_path, seeding: list[int], settings: str, elo: list[float]):
    """The same tournament through the arena's pairing, scheduling and
    reading (``RunPlan.advance``'s loop), each game's result from :func:`_outcome`."""
    name = {i: f"b{i}" for i in seeding}
    number = {v: k for k, v in name.items()}
    tmp_path.mkdir()
    run = start(tournament(tmp_path, [name[i] for i in seeding], settings))

    def decide(spec):
        a, b = sorted(number[p] for p in spec.players)
        k = int(spec.game_id.rpartition("-g")[2])
        # Game pairs these two played in the rounds before, then this one's place in its round.
        before = sum(1 for r in run.records if r.round < spec.round
                     and {number[p] for p in r.players.values()} == {a, b}) // 2
        winner = _outcome(a, b, before + (k - 1) // 2, (k - 1) % 2, elo)
        return result(spec, None if winner is None else name[winner])

    run.play(decide)
    return run, number


@pytest.mark.parametrize("n, rounds", [(12, 4), (13, 4), (16, 4), (27, 5), (32, 5)])
def test_the_benchmark_ranks_each_format_as_the_arena_does(tmp_path, n, rounds):
    seeding = list(range(n))
    random.Random(n).shuffle(seeding)
    bench = _MODULE
    elo = Field(n, random.Random(0), 0.1).elo

    run, number = _arena_run(tmp_path / "swiss", seeding, f"format: swiss\nrounds: {rounds}\n", elo)
    assert [number[b] for b in run.rounds.stages[0].order] == bench.swiss(_HashedField(n), seeding, rounds)

    run, number = _arena_run(tmp_path / "knockout", seeding, "format: knockout\n", elo)
    places = {number[b]: p for b, p in run.rounds.stages[0].places.items()}
    assert places == bench.knockout(_HashedField(n), seeding)

    staged = f"stages:\n  - {{format: swiss, rounds: {rounds}}}\n  - {{format: knockout, top: 8}}\n"
    run, number = _arena_run(tmp_path / "staged", seeding, staged, elo)
    ranks = [0.0] * n
    for bot, (first, last) in run.rounds.places():
        ranks[number[bot]] = (first + last) / 2
    assert ranks == bench.swiss_then_ko(_HashedField(n), seeding, rounds)


@pytest.mark.parametrize("n", [12, 13])
def test_the_benchmark_runs_the_adaptive_stage_as_the_arena_does(tmp_path, n):
    seeding = list(range(n))
    random.Random(n).shuffle(seeding)
    elo = Field(n, random.Random(0), 0.1).elo
    run, number = _arena_run(tmp_path / "adaptive", seeding, "format: adaptive\nmax_games: 90\n", elo)
    stage = run.rounds.stages[0]
    bench = _MODULE.adaptive(_HashedField(n), seeding, 90)
    games, order, said = bench[-1]
    assert games == stage.spent == len(run.records) <= 90
    assert [number[b] for b in stage.order] == order
    assert [(v.better, v.worse, v.status) for v in stage.verdicts] == [(v.better, v.worse, v.status) for v in said]
    assert len(bench) == len(run.pairings) + 1  # the state before each round, and where it stopped


def test_the_verdicts_are_calibrated_on_a_small_simulated_field():
    """Two tiers of two equal bots, 300 Elo apart: of the adjacent pairs
    declared separated, the share truly in that order, and of those declared
    tied within 100 Elo, the share truly within 100, both at least the
    confidence (0.95), counted here from the true ratings."""
    separated = right = tied = within = 0
    for rep in range(40):
        rng = random.Random(f"calibration/{rep}")
        seeding = list(range(4))
        rng.shuffle(seeding)
        field = _MODULE.tiered(2, 300.0, rng, 0.1)
        assert field.elo == [0.0, 0.0, 300.0, 300.0]
        _, _, said = _MODULE.adaptive(field, seeding, 600, within_elo=100.0)[-1]
        true = {f"b{i}": e for i, e in enumerate(field.elo)}
        for v in said:
            if v.status == "separated":
                separated += 1
                right += true[v.better] > true[v.worse]
            elif v.status == "tied":
                tied += 1
                within += abs(true[v.better] - true[v.worse]) <= 100
    assert separated >= 20 and tied >= 10  # enough of each to say something
    assert right / separated >= 0.95 and within / tied >= 0.95
    assert _MODULE.calibration(said, field.elo, 100.0) == (
        sum(v.status == "separated" for v in said), sum(v.status == "separated" and true[v.better] > true[v.worse] for v in said),
        sum(v.status == "tied" for v in said), sum(v.status == "tied" and abs(true[v.better] - true[v.worse]) <= 100 for v in said))
