"""arena/results/sprt.py: the three models of fastchess against its published
examples and against numbers computed here by other means (the constrained
maxima by plain bisection, BayesElo's draw Elo by hand); the verdict as the
first crossing in schedule order, whatever order the games end in; the
expected length against a simulation; normalized Elo against fastchess's
formulas."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist, fmean

import pytest

from arena.game.records import GameRecord
from arena.results.sprt import CAP_FACTOR, SPRT_MODELS, SprtConfig, SprtFold, normalized_mle, sprt_llr, sprt_status
from arena.results.statistics import Pentanomial, match_statistics, normalized_elo, pentanomial
from arena.run.match import match_config
from arena.game.clock import TimeControl
from arena.formats.schedule import make_schedule
from arena.results.meta import MetaError, TournamentMeta
from arena.run.config import ConfigError, parse_config, sprt_from_option
from builders import bisect, frequencies
from arena.run.tournament import RunningSprt, sprt_of

Z = NormalDist().inv_cdf(0.975)
NELO = 800 / math.log(10)
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
GAME_SCORES = (0.0, 0.5, 1.0)


def penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> Pentanomial:
    """fastchess's ``Stats(ll, ld, wl, dd, wd, ww)``."""
    return Pentanomial(ll=ll, ld=ld, wl=wl, dd=dd, wd=wd, ww=ww)


# -- fastchess's published examples (app/tests/sprt_test.cpp) -------------------------


@pytest.mark.parametrize(("counts", "elo0", "elo1", "model", "llr"), [
    ((365, 16618, 36029, 200, 16974, 390), 0, 2, "normalized", 2.25),
    ((127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    ((0, 0, 0, 0, 0, 5550), 0, 5, "normalized", 111.82),
    ((223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    ((871, 26175, 55003, 980, 26678, 821), 0, 2, "logistic", -4.98),
])
def test_pentanomial_models_give_fastchess_examples(counts, elo0, elo1, model, llr):
    # doctest's Approx(...).epsilon(0.01): within 1 %.
    assert sprt_llr(penta(*counts), elo0, elo1, model) == pytest.approx(llr, rel=0.01)


@pytest.mark.parametrize(("wins", "losses", "draws", "elo0", "elo1", "llr"), [
    (68965, 68526, 128429, 0, 2, -1.26),
    (21629, 21484, 41111, 0.5, 2.5, -1.13),
])
def test_the_bayesian_model_gives_fastchess_examples(wins, losses, draws, elo0, elo1, llr):
    # fastchess's Stats(wins, losses, draws); BayesElo is a model of games, not pairs.
    assert sprt_llr(Pentanomial(), elo0, elo1, "bayesian", (wins, draws, losses)) == pytest.approx(llr, rel=0.01)


# -- the models computed another way ------------------------------------------------


def mean_constrained(q, scores, s):
    """The distribution closest to ``q`` with mean ``s``, by bisection on its multiplier."""
    theta = bisect(lambda x: sum(qi * (a - s) / (1 + x * (a - s)) for qi, a in zip(q, scores)),
                   -1 / (max(scores) - s) + 1e-12, -1 / (min(scores) - s) - 1e-12)
    return [qi / (1 + theta * (a - s)) for qi, a in zip(q, scores)]


def score(elo):
    return 1 / (1 + 10 ** (-elo / 400))


@pytest.mark.parametrize("counts", [(3, 7, 10, 12, 9, 6), (0, 1, 30, 2, 40, 12), (50, 0, 0, 0, 0, 1)])
@pytest.mark.parametrize(("elo0", "elo1"), [(0, 5), (-20, 40), (-3, 0)])
def test_the_logistic_llr_is_the_ratio_of_two_mean_constrained_maxima(counts, elo0, elo1):
    q, total = frequencies(penta(*counts).counts())
    p0, p1 = (mean_constrained(q, PAIR_SCORES, score(e)) for e in (elo0, elo1))
    assert sum(p0) == pytest.approx(1) and sum(a * x for a, x in zip(PAIR_SCORES, p1)) == pytest.approx(score(elo1))
    expected = total * sum(qi * math.log(b / a) for qi, a, b in zip(q, p0, p1))
    assert sprt_llr(penta(*counts), elo0, elo1, "logistic") == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_the_mean_constrained_maximum_beats_nearby_distributions_of_that_mean():
    q, _ = frequencies((3, 7, 22, 9, 6))
    s = score(30)
    best_p = mean_constrained(q, PAIR_SCORES, s)
    best = sum(qi * math.log(p) for qi, p in zip(q, best_p))
    rng = random.Random(2)
    for _ in range(200):
        # A direction that keeps the sum and the mean: orthogonal to (1, ...) and to the scores.
        d = [rng.uniform(-1, 1) for _ in PAIR_SCORES]
        for basis in ([1.0] * 5, [a - 0.5 for a in PAIR_SCORES]):
            dot = sum(x * b for x, b in zip(d, basis)) / sum(b * b for b in basis)
            d = [x - dot * b for x, b in zip(d, basis)]
        other = [p + 0.002 * x for p, x in zip(best_p, d)]
        if min(other) > 0:
            assert sum(qi * math.log(o) for qi, o in zip(q, other)) <= best + 1e-12


@pytest.mark.parametrize(("wdl", "elo0", "elo1"), [((40, 25, 35), 0, 10), ((120, 3, 80), -5, 20), ((9, 90, 1), 0, 50)])
def test_the_bayesian_llr_by_hand(wdl, elo0, elo1):
    wins, draws, losses = wdl
    q, total = frequencies((losses, draws, wins))
    drawelo = 200 * math.log10((1 - q[0]) / q[0] * (1 - q[2]) / q[2])

    def bayes_score(elo):
        win = 1 / (1 + 10 ** ((drawelo - elo) / 400))
        loss = 1 / (1 + 10 ** ((drawelo + elo) / 400))
        return win + (1 - win - loss) / 2

    p0, p1 = (mean_constrained(q, GAME_SCORES, bayes_score(e)) for e in (elo0, elo1))
    expected = total * sum(qi * math.log(b / a) for qi, a, b in zip(q, p0, p1))
    assert sprt_llr(Pentanomial(), elo0, elo1, "bayesian", wdl) == pytest.approx(expected, rel=1e-9)
    assert sprt_llr(Pentanomial(), elo0, elo1, "bayesian", (wins, draws, 0)) == 0.0  # no draw Elo without losses


# -- the verdict: the first crossing in schedule order -------------------------------


def random_pairs(n, seed, bias=0.0):
    rng = random.Random(seed)
    outcomes = (0.0, 0.5, 1.0)
    weights = (1 - bias, 0.3, 1 + bias)
    return [tuple(rng.choices(outcomes, weights)[0] for _ in range(2)) for _ in range(n)]


@pytest.mark.parametrize("model", SPRT_MODELS)
@pytest.mark.parametrize("seed", range(4))
def test_the_verdict_is_the_first_pair_whose_llr_reaches_a_bound(model, seed):
    """Against the LLR computed afresh (no warm start) after every pair."""
    config = SprtConfig(-10, 30, alpha=0.1, beta=0.1, model=model)
    pairs = random_pairs(200, seed, bias=0.15 * (seed - 1.5))
    status = sprt_status(config, pairs)
    crossing = None
    for n in range(1, len(pairs) + 1):
        counted = pairs[:n]
        flat = [x for pair in counted for x in pair]
        wdl = (flat.count(1.0), flat.count(0.5), flat.count(0.0))
        llr = sprt_llr(pentanomial(counted), config.elo0, config.elo1, model, wdl)
        assert n != status.pairs or llr == pytest.approx(status.llr, abs=1e-7)
        if llr >= config.upper or llr <= config.lower:
            crossing = (n, "H1" if llr >= config.upper else "H0")
            break
    if crossing is None:
        assert (status.verdict, status.pairs, status.later) == ("undecided", len(pairs), 0)
    else:
        assert (status.pairs, status.verdict) == crossing
        assert status.later == len(pairs) - crossing[0]
        assert status.penta == pentanomial(pairs[:crossing[0]])


def test_pairs_after_the_verdict_change_nothing_but_are_counted():
    config = SprtConfig(0, 50)
    decided = [(1.0, 1.0)] * 40
    status = sprt_status(config, decided)
    assert status.verdict == "H1" and status.pairs < 40
    after = sprt_status(config, decided + [(0.0, 0.0)] * 100)
    assert (after.verdict, after.llr, after.pairs, after.penta) == (status.verdict, status.llr, status.pairs, status.penta)
    assert after.later == status.later + 100


def records_of(pairs, names=("a", "b")):
    """The records of a match's schedule whose pairs score ``pairs`` for ``a``."""
    config = match_config(["x", "y"], "oxono", TimeControl(1000, 0), names=list(names), seed=3)
    schedule = make_schedule(config.competition)
    while len(schedule) < 2 * len(pairs):
        config = replace(config, competition=replace(config.competition, rounds=config.competition.rounds * 2))
        schedule = make_schedule(config.competition)
    records = []
    for spec in schedule[: 2 * len(pairs)]:
        mine = pairs[spec.pair][spec.index % 2]
        colors = ("pink", "black")
        players = dict(zip(colors, spec.players))
        a_color = next(c for c, n in players.items() if n == "a")
        other = next(c for c in colors if c != a_color)
        winner = None if mine == 0.5 else a_color if mine == 1.0 else other
        records.append(GameRecord(game_id=spec.game_id, game="oxono", players=players, seed=spec.seed, opening=spec.opening,
                                  time_control={"initial_ms": 1000, "increment_ms": 0}, winner=winner,
                                  reason="alignment" if winner else "exhausted", index=spec.index, pair=spec.pair))
    return config, schedule, records


@pytest.mark.parametrize("seed", range(3))
def test_a_running_test_gives_the_read_back_verdict_whatever_order_the_games_end_in(seed):
    config, schedule, records = records_of(random_pairs(60, seed + 10, bias=0.6), ("a", "b"))
    config = replace(config, competition=replace(config.competition, rules=replace(config.competition.rules, sprt=SprtConfig(0, 60, alpha=0.1, beta=0.1))))
    read_back = sprt_of(config, records)
    assert read_back.decided
    rng = random.Random(seed)
    for _ in range(5):
        shuffled = list(records)
        # Each game ends at most a few places from its turn (games in flight at once).
        shuffled.sort(key=lambda r: r.index + rng.uniform(0, 6))
        running = RunningSprt(config, schedule)
        stopped_at = None
        for i, record in enumerate(shuffled):
            running.add(record)
            if running.decided and stopped_at is None:
                stopped_at = i
        assert stopped_at is not None
        final = running.status(final=True)
        assert (final.verdict, final.pairs, final.llr) == (read_back.verdict, read_back.pairs, read_back.llr)
        # Stopped only once every pair up to the verdict was in.
        seen = {r.pair for r in shuffled[: stopped_at + 1]}
        assert set(range(read_back.pairs)) <= seen


def test_a_pair_never_finished_holds_the_running_test_back_but_not_the_final_one():
    config, schedule, records = records_of([(1.0, 1.0)] * 30)
    config = replace(config, competition=replace(config.competition, rules=replace(config.competition.rules, sprt=SprtConfig(0, 100))))
    missing = [r for r in records if r.index != 1]  # the second game of the first pair never came
    running = RunningSprt(config, schedule, missing)
    assert not running.decided and running.status().pairs == 0
    assert running.status(final=True) == sprt_of(config, missing)
    assert sprt_of(config, missing).decided


# -- how long a test is --------------------------------------------------------------


def test_the_expected_length_is_walds_and_the_cap_three_times_it():
    config = SprtConfig(0, 5)
    dt = math.sqrt(2) * 5 / NELO
    a, b = math.log(0.05 / 0.95), math.log(0.95 / 0.05)
    under_h0 = (0.95 * a + 0.05 * b) / -(dt * dt / 2)
    assert config.expected_pairs() == pytest.approx(under_h0)
    assert config.expected_pairs() == pytest.approx(12795, abs=1)
    assert config.game_cap() == 2 * math.ceil(CAP_FACTOR * under_h0) == 76774
    # A larger beta brings the lower bound nearer: the test is longer under H1.
    lopsided = SprtConfig(0, 5, alpha=0.05, beta=0.2)
    a, b = math.log(0.2 / 0.95), math.log(0.8 / 0.05)
    assert lopsided.worse_hypothesis == "H1"
    assert lopsided.expected_pairs() == pytest.approx((0.2 * a + 0.8 * b) / (dt * dt / 2))
    assert lopsided.expected_pairs() > (0.95 * a + 0.05 * b) / -(dt * dt / 2)


@pytest.mark.parametrize("truth", ["elo0", "elo1"])
def test_the_expected_length_matches_a_simulated_test(truth):
    """Pairs drawn from a pentanomial distribution whose normalized Elo is
    exactly elo0 (or elo1): the mean length of the test is Wald's estimate,
    within the overshoot a discrete test has."""
    config = SprtConfig(0, 60)
    t = math.sqrt(2) * getattr(config, truth) / NELO
    p = normalized_mle([0.1, 0.2, 0.35, 0.2, 0.15], PAIR_SCORES, t)
    kinds = [(0.0, 0.0), (0.0, 0.5), (0.5, 0.5), (1.0, 0.5), (1.0, 1.0)]
    rng = random.Random(7)
    lengths, verdicts = [], []
    for _ in range(120):
        fold = SprtFold(config)
        while not fold.decided:
            fold.add(rng.choices(kinds, p)[0])
        status = fold.status()
        lengths.append(status.pairs)
        verdicts.append(status.verdict)
    assert fmean(lengths) == pytest.approx(config.expected_pairs(), rel=0.25)
    wrong = verdicts.count("H1" if truth == "elo0" else "H0") / len(verdicts)
    assert wrong < 0.12  # alpha = beta = 0.05, with sampling noise


# -- normalized Elo ------------------------------------------------------------------


def test_normalized_elo_of_pairs_is_fastchess_formula():
    pairs = [(1, 1)] * 30 + [(1, 0.5)] * 40 + [(1, 0)] * 50 + [(0.5, 0.5)] * 20 + [(0, 0.5)] * 25 + [(0, 0)] * 15
    # EloPentanomial: score and variance per pair, nElo = (s − ½) / √(2 var) · 800 / ln 10.
    values = [(x + y) / 2 for x, y in pairs]
    n = len(values)
    s = fmean(values)
    var = sum((v - s) ** 2 for v in values) / n

    def to_nelo(x):
        return (x - 0.5) / math.sqrt(2 * var) * NELO

    up, low = s + Z * math.sqrt(var / n), s - Z * math.sqrt(var / n)
    stats = match_statistics([x for pair in pairs for x in pair], pairs)
    assert stats.nelo == pytest.approx(to_nelo(s))
    assert stats.nelo_margin == pytest.approx((to_nelo(up) - to_nelo(low)) / 2)
    assert normalized_elo(pentanomial(pairs)) == pytest.approx((stats.nelo, stats.nelo_margin))


def test_normalized_elo_of_single_games_is_fastchess_formula():
    games = [1.0] * 13 + [0.5] * 4 + [0.0] * 7
    s = fmean(games)
    var = sum((g - s) ** 2 for g in games) / len(games)
    stats = match_statistics(games, [])
    # EloWDL: nElo = (s − ½) / √var · 800 / ln 10.
    assert stats.nelo == pytest.approx((s - 0.5) / math.sqrt(var) * NELO)
    assert stats.nelo_margin == pytest.approx(Z * math.sqrt(var / len(games)) / math.sqrt(var) * NELO)


def test_normalized_elo_without_spread():
    assert normalized_elo(Pentanomial(ww=10)) == (math.inf, math.inf)
    assert normalized_elo(Pentanomial(dd=10)) == (0.0, math.inf)
    assert normalized_elo(Pentanomial()) == (0.0, math.inf)


def test_the_status_gives_the_normalized_elo_the_test_decided_on():
    config = SprtConfig(0, 40)
    pairs = random_pairs(400, 3, bias=0.5)
    status = sprt_status(config, pairs)
    assert status.decided and status.later
    assert status.nelo == normalized_elo(pentanomial(pairs[: status.pairs]))
    data = status.to_json()
    assert (data["nelo"], data["nelo_margin"], data["later_pairs"], data["model"]) == (*status.nelo, status.later, "normalized")


# -- settings ------------------------------------------------------------------------


def test_settings_are_checked():
    with pytest.raises(ValueError, match="unknown model 'gaussian'"):
        SprtConfig(0, 5, model="gaussian")
    with pytest.raises(ValueError, match="elo1 must be between -200 and 200 \\(logistic Elo\\)"):
        SprtConfig(0, 300, model="logistic")
    with pytest.raises(ValueError, match="elo0 must be a finite number"):
        SprtConfig(math.nan, 5)
    assert SprtConfig(0, 5).describe() == "[0, 5] normalized"


def test_the_model_is_read_from_the_option_and_the_file():
    assert sprt_from_option("elo0=0,elo1=5").model == "normalized"
    assert sprt_from_option("elo0=0,elo1=5,model=Logistic").model == "logistic"
    with pytest.raises(ConfigError, match=r"^--sprt elo0=0,elo1=5,model=gauss: bad SPRT setting 'model=gauss': "
                                          r"unknown value 'gauss'; use one of: normalized, logistic, bayesian$"):
        sprt_from_option("elo0=0,elo1=5,model=gauss")
    config = parse_config("name: t\ngame: oxono\ntime_control: 1+0\nsprt: {elo0: 0, elo1: 5, model: bayesian}\n"
                          "bots: [{name: a, cmd: a}, {name: b, cmd: b}]\n", base_dir=Path("/tmp"))
    assert config.competition.rules.sprt == SprtConfig(0, 5, model="bayesian")


def test_a_results_directory_written_before_models_existed_reads_as_normalized():
    data = {"name": "m", "game": "oxono", "bots": [{"name": "a"}, {"name": "b"}],
            "sprt": {"elo0": 0, "elo1": 5, "alpha": 0.05, "beta": 0.05}}
    assert TournamentMeta.from_json(data).competition.rules.sprt == SprtConfig(0, 5)
    with pytest.raises(MetaError, match="unknown model"):
        TournamentMeta.from_json({**data, "sprt": {**data["sprt"], "model": "x"}})
    again = TournamentMeta.from_json(TournamentMeta.from_json({**data, "sprt": {**data["sprt"], "model": "logistic"}}).to_json())
    assert again.competition.rules.sprt == SprtConfig(0, 5, model="logistic")
