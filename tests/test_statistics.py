"""arena/results/statistics.py against numbers computed independently here: a plain
MM fit for Bradley–Terry, finite differences for its covariance, fastchess's
formulas written out by hand, and brute-force checks of the SPRT's
constrained maximum likelihood."""

from __future__ import annotations

import itertools
import math
import random
from statistics import NormalDist, fmean, pvariance

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.results.sprt import SprtConfig, normalized_mle, sprt_llr, sprt_status
from arena.results.statistics import (
    PairTally,
    Pentanomial,
    counted_statistics,
    fit_elo,
    los,
    match_statistics,
    pentanomial,
    scores_of,
)
from builders import bisect, frequencies, record

Z = NormalDist().inv_cdf(0.975)
counts = st.integers(min_value=0, max_value=500)
#: The same examples on every run, nothing written to disk.
DETERMINISTIC = settings(derandomize=True, database=None, max_examples=200)


def logistic_elo(p: float) -> float:
    return 400 * math.log10(p / (1 - p))


def games(a: str, b: str, wins: int, draws: int, losses: int) -> list[tuple[str, str, float]]:
    return [(a, b, 1.0)] * wins + [(a, b, 0.5)] * draws + [(a, b, 0.0)] * losses


# -- Bradley–Terry ------------------------------------------------------------------


def mm_fit(results: list[tuple[str, str, float]], iterations: int = 20000) -> dict[str, float]:
    """Hunter's MM algorithm for Bradley–Terry strengths (a draw is half a win
    for each side), then Elo = 400 log10(strength), shifted to mean 0."""
    names = sorted({x for a, b, _ in results for x in (a, b)})
    wins = {n: 0.0 for n in names}
    meetings: dict[tuple[str, str], int] = {}
    for a, b, s in results:
        wins[a] += s
        wins[b] += 1 - s
        meetings[a, b] = meetings.get((a, b), 0) + 1
        meetings[b, a] = meetings.get((b, a), 0) + 1
    strength = {n: 1.0 for n in names}
    for _ in range(iterations):
        strength = {
            i: wins[i] / sum(m / (strength[i] + strength[j]) for (x, j), m in meetings.items() if x == i)
            for i in names
        }
    elo = {n: 400 * math.log10(v) for n, v in strength.items()}
    mean = fmean(elo.values())
    return {n: v - mean for n, v in elo.items()}


def log_likelihood(results, elo):
    return sum(
        s * math.log(1 / (1 + 10 ** ((elo[b] - elo[a]) / 400)))
        + (1 - s) * math.log(1 / (1 + 10 ** ((elo[a] - elo[b]) / 400)))
        for a, b, s in results
    )


THREE = games("a", "b", 6, 2, 2) + games("b", "c", 5, 0, 3) + games("a", "c", 4, 1, 0) + games("c", "a", 1, 0, 2)


def test_the_fit_is_the_maximum_likelihood_found_by_mm():
    fit = fit_elo(THREE)
    reference = mm_fit(THREE)
    assert fit.elo == pytest.approx(reference, abs=1e-3)
    assert sum(fit.elo.values()) == pytest.approx(0, abs=1e-9)
    assert not fit.regularized


def test_two_bots_is_the_elo_of_the_score():
    # 6 wins, 2 draws, 2 losses: 70 %, so the difference is 400 log10(0.7 / 0.3), split around 0.
    fit = fit_elo(games("a", "b", 6, 2, 2))
    assert fit.elo["a"] - fit.elo["b"] == pytest.approx(logistic_elo(0.7))
    assert fit.elo["a"] == pytest.approx(-fit.elo["b"])


def test_the_intervals_come_from_the_curvature_of_the_likelihood():
    """Covariance of (a, b) with c = -a - b, by inverting a finite-difference
    Hessian of the log-likelihood: the sum-to-zero constrained Wald interval."""
    fit = fit_elo(THREE)
    x0 = (fit.elo["a"], fit.elo["b"])

    def f(x, y):
        return log_likelihood(THREE, {"a": x, "b": y, "c": -x - y})

    h = 1.0
    fxx = (f(x0[0] + h, x0[1]) - 2 * f(*x0) + f(x0[0] - h, x0[1])) / h**2
    fyy = (f(x0[0], x0[1] + h) - 2 * f(*x0) + f(x0[0], x0[1] - h)) / h**2
    fxy = (f(x0[0] + h, x0[1] + h) - f(x0[0] + h, x0[1] - h) - f(x0[0] - h, x0[1] + h) + f(x0[0] - h, x0[1] - h)) / (4 * h**2)
    det = fxx * fyy - fxy**2
    var_a, var_b, cov_ab = -fyy / det, -fxx / det, fxy / det
    var_c = var_a + var_b + 2 * cov_ab
    assert fit.margin("a") == pytest.approx(Z * math.sqrt(var_a), rel=1e-3)
    assert fit.margin("b") == pytest.approx(Z * math.sqrt(var_b), rel=1e-3)
    assert fit.margin("c") == pytest.approx(Z * math.sqrt(var_c), rel=1e-3)
    # LOS of a over b: the normal chance that their difference is above 0.
    sd = math.sqrt(var_a + var_b - 2 * cov_ab)
    assert fit.los("a", "b") == pytest.approx(NormalDist().cdf((x0[0] - x0[1]) / sd), rel=1e-3)


def test_two_bot_interval_by_hand():
    # The Fisher information of the difference d is n p (1 - p) (ln 10 / 400)^2;
    # each bot is d / 2 from 0, so its standard deviation is half that of d.
    fit = fit_elo(games("a", "b", 6, 2, 2))
    p, n, c = 0.7, 10, math.log(10) / 400
    sd_d = 1 / math.sqrt(n * p * (1 - p) * c * c)
    assert fit.margin("a") == pytest.approx(Z * sd_d / 2)
    assert fit.difference_sd("a", "b") == pytest.approx(sd_d)
    assert fit.los("a", "b") == pytest.approx(NormalDist().cdf(logistic_elo(0.7) / sd_d))
    assert fit.los("b", "a") == pytest.approx(1 - fit.los("a", "b"))


def test_a_perfect_score_is_regularized_with_a_virtual_draw():
    # 3-0: the maximum likelihood is infinite; one virtual draw makes it 3.5/4.
    fit = fit_elo(games("a", "b", 3, 0, 0))
    assert fit.regularized
    assert fit.elo["a"] - fit.elo["b"] == pytest.approx(logistic_elo(3.5 / 4))
    assert math.isfinite(fit.margin("a"))


def test_no_games_no_fit():
    assert fit_elo([]).elo == {}


def test_los_helper():
    assert los(0.0, 10.0) == 0.5
    assert los(1.96, 1.0) == pytest.approx(0.975, abs=1e-4)
    assert los(5.0, 0.0) == 1.0 and los(-5.0, 0.0) == 0.0


# -- two bots: the match figures ------------------------------------------------------


def trinomial(wins: int, draws: int, losses: int):
    return match_statistics([1.0] * wins + [0.5] * draws + [0.0] * losses, [])


@DETERMINISTIC
@given(counts, counts, counts)
def test_elo_is_antisymmetric(wins, draws, losses):
    one, two = trinomial(wins, draws, losses), trinomial(losses, draws, wins)
    if math.isfinite(one.elo):
        assert two.elo == pytest.approx(-one.elo, rel=1e-9, abs=1e-9)
        assert two.los == pytest.approx(1 - one.los, abs=1e-12)
        if math.isfinite(one.margin):
            assert two.margin == pytest.approx(one.margin, rel=1e-6)
    else:
        assert two.elo == -one.elo


@pytest.mark.parametrize(("wins", "draws", "losses"), [(1, 0, 1), (5, 0, 5), (3, 4, 3)])
def test_an_even_score_is_zero_elo_and_even_los(wins, draws, losses):
    stats = trinomial(wins, draws, losses)
    assert stats.elo == pytest.approx(0.0, abs=1e-9) and stats.los == pytest.approx(0.5)
    assert stats.margin > 0


def test_a_known_trinomial_value():
    outcomes = [1.0] * 6 + [0.5] * 2 + [0.0] * 2
    score = fmean(outcomes)
    se = math.sqrt(pvariance(outcomes) / len(outcomes))
    stats = trinomial(6, 2, 2)
    assert stats.model == "trinomial"
    assert stats.elo == pytest.approx(147.19, abs=0.01)
    assert stats.margin == pytest.approx((logistic_elo(score + Z * se) - logistic_elo(score - Z * se)) / 2)
    assert stats.los == pytest.approx(NormalDist().cdf((score - 0.5) / se))
    assert stats.draw_ratio == pytest.approx(0.2)


def test_a_perfect_score_is_infinite():
    stats = trinomial(4, 0, 0)
    assert stats.elo == math.inf and stats.margin == math.inf and stats.los == 1.0
    assert trinomial(0, 0, 4).elo == -math.inf
    empty = trinomial(0, 0, 0)
    assert (empty.games, empty.elo, empty.los) == (0, 0.0, 0.5)


@DETERMINISTIC
@given(st.integers(1, 200), st.integers(0, 200), st.integers(1, 200))
def test_a_better_score_means_a_higher_elo(wins, draws, losses):
    assert trinomial(wins + 1, draws, losses).elo > trinomial(wins, draws, losses).elo


def test_pentanomial_counts():
    pairs = [(1, 1), (1, 0.5), (0.5, 1), (1, 0), (0, 1), (0.5, 0.5), (0.5, 0), (0, 0), (0, 0)]
    penta = pentanomial(pairs)
    assert (penta.ww, penta.wd, penta.wl, penta.dd, penta.ld, penta.ll) == (1, 2, 2, 1, 1, 2)
    assert penta.counts() == (2, 1, 3, 2, 1) and penta.pairs == 9


def test_pentanomial_figures_by_hand():
    # fastchess's formulas: the mean and variance of the pair score, per pair.
    pairs = [(1, 1)] * 3 + [(1, 0.5)] * 4 + [(1, 0)] * 5 + [(0.5, 0.5)] * 2 + [(0, 0.5)] * 2 + [(0, 0)] * 1
    flat = [x for pair in pairs for x in pair]
    stats = match_statistics(flat, pairs)
    per_pair = [(x + y) / 2 for x, y in pairs]
    n = len(per_pair)
    score = sum(per_pair) / n
    var = sum((v - score) ** 2 for v in per_pair) / n
    low, high = score - Z * math.sqrt(var / n), score + Z * math.sqrt(var / n)
    assert stats.model == "pentanomial"
    assert stats.score == pytest.approx(score)
    assert stats.elo == pytest.approx(logistic_elo(score))
    assert stats.margin == pytest.approx((logistic_elo(high) - logistic_elo(low)) / 2)
    assert stats.los == pytest.approx((1 - math.erf(-(score - 0.5) / math.sqrt(2 * var / n))) / 2)
    assert (stats.wins, stats.draws, stats.losses) == (3 * 2 + 4 + 5, 4 + 2 * 2 + 2, 5 + 2 + 2)


def test_scores_of_groups_complete_pairs_from_one_bots_side():
    records = [
        record(0, "a", "b", "pink", pair=0), record(1, "b", "a", "pink", pair=0),   # a wins, then loses
        record(2, "a", "b", None, pair=1), record(3, "b", "a", "black", pair=1),     # a draws, then wins
        record(4, "a", "b", "black", pair=2),                                        # pair 2 is not complete
    ]
    games_, pairs = scores_of(reversed(records), "a")
    assert games_ == [1.0, 0.0, 0.5, 1.0, 0.0]
    assert pairs == [(1.0, 0.0), (0.5, 1.0)]
    assert scores_of(records, "b")[1] == [(0.0, 1.0), (0.5, 0.0)]
    assert scores_of([record(0, "a", "b", "pink", pair=None)], "a") == ([1.0], [])


def test_pair_tally_counts_what_pentanomial_counts_at_every_step():
    # Random games in a random order (second games before first ones, pairs
    # left open, games the bot did not play): after each record, the running
    # tally equals a fresh count of the complete pairs so far.
    rng = random.Random(5)
    records = []
    for pair in range(60):
        for seat in range(rng.choice((1, 2, 2, 2))):
            pink, black = ("a", "b") if seat == 0 else ("b", "a")
            if pair % 13 == 0:
                pink, black = "c", "b"
            records.append(record(len(records), pink, black, rng.choice(("pink", "black", None)), pair=pair))
    records.append(record(len(records), "a", "b", "pink", pair=None))
    rng.shuffle(records)
    tally = PairTally("a")
    for seen, game in enumerate(records, 1):
        tally.add(game)
        assert tally.pentanomial() == pentanomial(scores_of(records[:seen], "a")[1])
    assert tally.pentanomial().pairs == sum(1 for p in range(60) if p % 13 and
                                            sum(1 for r in records if r.pair == p) == 2)


@DETERMINISTIC
@given(st.lists(st.tuples(st.sampled_from((0.0, 0.5, 1.0)), st.sampled_from((0.0, 0.5, 1.0))), max_size=60),
       st.lists(st.sampled_from((0.0, 0.5, 1.0)), max_size=3))
def test_the_figures_from_counts_are_fastchess_formulas_over_the_games(pairs, odd):
    """Computed here from the list of pair (or game) scores, as fastchess does."""
    games_ = [x for pair in pairs for x in pair] + odd
    stats = counted_statistics(games_.count(1.0), games_.count(0.5), games_.count(0.0), pentanomial(pairs))
    values, per = ([(x + y) / 2 for x, y in pairs], 2) if pairs else (games_, 1)
    assert (stats.wins + stats.draws + stats.losses, stats.model) == (len(games_), "pentanomial" if pairs else "trinomial")
    if not values:
        return
    n, score = len(values), fmean(values)
    var = pvariance(values)
    assert stats.score == pytest.approx(score)
    if 0 < score < 1:
        assert stats.elo == pytest.approx(logistic_elo(score))
    if var > 0:
        assert stats.los == pytest.approx(NormalDist().cdf((score - 0.5) / math.sqrt(var / n)))
        assert stats.nelo == pytest.approx((score - 0.5) / math.sqrt(per * var) * 800 / math.log(10))
        assert stats.nelo_margin == pytest.approx(Z * math.sqrt(var / n) / math.sqrt(per * var) * 800 / math.log(10))


# -- SPRT ---------------------------------------------------------------------------

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
NELO = 800 / math.log(10)


def t_of(p):
    mu = sum(a * x for a, x in zip(SCORES, p))
    return (mu - 0.5) / math.sqrt(sum(x * (a - mu) ** 2 for a, x in zip(SCORES, p)))


def test_bounds_are_walds():
    config = SprtConfig(0, 5, alpha=0.05, beta=0.1)
    assert config.lower == pytest.approx(math.log(0.1 / 0.95))
    assert config.upper == pytest.approx(math.log(0.9 / 0.05))
    assert SprtConfig(0, 5).upper == pytest.approx(2.944, abs=1e-3)


def test_at_elo_zero_the_constraint_is_a_mean_of_one_half():
    """t = 0 fixes the mean at 1/2, a linear constraint: the maximum likelihood
    is q_i / (1 + θ (a_i - 1/2)) with θ from a one-dimensional equation."""
    q, _ = frequencies(Pentanomial(ll=3, ld=7, wl=10, dd=12, wd=9, ww=6).counts())
    theta = bisect(lambda x: sum(qi * (a - 0.5) / (1 + x * (a - 0.5)) for qi, a in zip(q, SCORES)), -1.999, 1.999)
    expected = [qi / (1 + theta * (a - 0.5)) for qi, a in zip(q, SCORES)]
    assert normalized_mle(q, SCORES, 0.0) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("t", [0.05, -0.1, 0.3])
def test_the_constrained_maximum_beats_every_nearby_distribution_on_the_constraint(t):
    q, _ = frequencies(Pentanomial(ll=3, ld=7, wl=10, dd=12, wd=9, ww=6).counts())
    p = normalized_mle(q, SCORES, t)
    assert sum(p) == pytest.approx(1, abs=1e-9)
    assert t_of(p) == pytest.approx(t, abs=1e-9)
    best = sum(qi * math.log(pi) for qi, pi in zip(q, p))
    rng = random.Random(1)
    fix = [1.0, -1.0, 0.0, -1.0, 1.0]  # a direction that changes sigma, not the sum
    checked = 0
    for _ in range(200):
        d = [rng.uniform(-1, 1) for _ in SCORES]
        d = [x - fmean(d) for x in d]
        moved = [pi + 0.003 * di for pi, di in zip(p, d)]
        lam = bisect(lambda x: t_of([m + x * f for m, f in zip(moved, fix)]) - t, -0.1, 0.1)
        other = [m + lam * f for m, f in zip(moved, fix)]
        if min(other) <= 0 or abs(t_of(other) - t) > 1e-9:
            continue
        assert sum(qi * math.log(oi) for qi, oi in zip(q, other)) <= best + 1e-12
        checked += 1
    assert checked > 150


def test_llr_is_the_log_likelihood_ratio_of_the_two_maxima():
    penta = Pentanomial(ll=3, ld=7, wl=10, dd=12, wd=9, ww=6)
    q, total = frequencies(penta.counts())
    t0, t1 = 0.0, math.sqrt(2) * 5 / NELO
    p0, p1 = normalized_mle(q, SCORES, t0), normalized_mle(q, SCORES, t1)
    expected = total * sum(qi * math.log(b / a) for qi, a, b in zip(q, p0, p1))
    assert sprt_llr(penta, 0, 5) == pytest.approx(expected, rel=1e-12)


def test_llr_agrees_with_the_normal_approximation_on_many_pairs():
    # For many pairs the GSPRT approaches the Gaussian one:
    # LLR ≈ N/2 ((t̂ - t0)^2 - (t̂ - t1)^2), with t̂ the sample's normalized score.
    penta = Pentanomial(ll=300, ld=700, wl=500, dd=500, wd=760, ww=320)
    q, total = frequencies(penta.counts())
    t_hat = t_of(q)
    t0, t1 = 0.0, math.sqrt(2) * 5 / NELO
    approx = total / 2 * ((t_hat - t0) ** 2 - (t_hat - t1) ** 2)
    assert sprt_llr(penta, 0, 5) == pytest.approx(approx, rel=0.02)


def pairs_of(penta: Pentanomial, cycle: bool = True) -> list[tuple[float, float]]:
    """Pairs with the counts of ``penta``, each kind in turn (``cycle``), so
    that every prefix holds about the same mix as the whole."""
    kinds = {(0.0, 0.0): penta.ll, (0.0, 0.5): penta.ld, (1.0, 0.0): penta.wl, (0.5, 0.5): penta.dd,
             (1.0, 0.5): penta.wd, (1.0, 1.0): penta.ww}
    if not cycle:
        return [kind for kind, n in kinds.items() for _ in range(n)]
    left, pairs = dict(kinds), []
    while any(left.values()):
        for kind in kinds:
            if left[kind]:
                pairs.append(kind)
                left[kind] -= 1
    return pairs


def test_llr_signs_and_verdicts():
    config = SprtConfig(0, 10)
    assert sprt_llr(Pentanomial(), 0, 10) == 0.0
    strong = sprt_status(config, pairs_of(Pentanomial(ww=200, wd=100, wl=50, dd=50, ld=20, ll=10)))
    weak = sprt_status(config, pairs_of(Pentanomial(ll=200, ld=100, wl=50, dd=50, wd=20, ww=10)))
    even = sprt_status(config, pairs_of(Pentanomial(ll=5, ld=5, wl=5, dd=5, wd=5, ww=5)), at_limit=True)
    assert strong.llr >= config.upper and strong.verdict == "H1" and strong.decided and strong.pairs < 430
    assert weak.llr < config.lower and weak.verdict == "H0"
    assert even.verdict == "undecided" and even.at_limit and even.verdict_text == "undecided at the limit"
    assert not sprt_status(config, pairs_of(Pentanomial(ww=300)), at_limit=True).at_limit  # decided, so not "at the limit"
    assert set(strong.to_json()) >= {"llr", "lower", "upper", "elo0", "elo1", "alpha", "beta", "model", "verdict", "pairs"}


def test_sprt_bounds_beyond_what_the_test_can_compute_are_refused_and_the_rest_always_compute():
    # An older bug: elo1 300 made the normalized MLE divide by zero mid-run.
    with pytest.raises(ValueError, match="elo1 must be between -200 and 200"):
        SprtConfig(elo0=0, elo1=300)
    for counts in itertools.product(range(3), repeat=6):
        penta = Pentanomial(*counts)
        for elo0, elo1 in ((-200, 200), (0, 200), (190, 200), (-200, -190)):
            assert math.isfinite(sprt_llr(penta, elo0, elo1))
