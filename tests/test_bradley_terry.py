"""The one Bradley–Terry fit (arena/formats/bradley_terry.py) against numbers
computed here another way: the closed form of two bots, Zermelo's iteration
for the maximum likelihood, plain gradient descent under a prior."""

from __future__ import annotations

import math
import random

import pytest

from arena.formats.bradley_terry import bradley_terry

#: Five bots, every one reachable from every other along "scored something against" edges.
FIVE = [(0, 1, 6.0, 8), (1, 2, 5.5, 8), (0, 2, 3.0, 4), (2, 3, 4.0, 6), (3, 4, 1.5, 4), (4, 0, 1.0, 6), (1, 3, 2.0, 2)]


def hessian(n: int, results, theta, prior: float) -> list[list[float]]:
    h = [[prior if i == j else 0.0 for j in range(n)] for i in range(n)]
    for i, j, _, g in results:
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        w = g * p * (1 - p)
        h[i][i] += w
        h[j][j] += w
        h[i][j] -= w
        h[j][i] -= w
    return h


def gradient(n: int, results, theta, prior: float) -> list[float]:
    """Of the negative log-posterior."""
    g = [prior * t for t in theta]
    for i, j, s, games in results:
        r = games / (1 + math.exp(theta[j] - theta[i])) - s
        g[i] += r
        g[j] -= r
    return g


def test_two_bots_without_a_prior_fit_the_log_odds_of_the_score() -> None:
    theta, cov = bradley_terry(2, [(0, 1, 7.0, 10)])
    assert theta[0] - theta[1] == pytest.approx(math.log(7 / 3), abs=1e-9)
    assert theta[0] + theta[1] == pytest.approx(0.0, abs=1e-12)
    # The Fisher information of the difference is g·p(1−p); each bot carries half of it, with opposite signs.
    w = 10 * 0.7 * 0.3
    assert cov[0][0] == pytest.approx(1 / (4 * w), rel=1e-9)
    assert cov[0][1] == pytest.approx(-1 / (4 * w), rel=1e-9)


def test_without_a_prior_the_fit_is_zermelos_iteration_s_and_the_covariance_a_pseudo_inverse() -> None:
    n = 5
    wins = [0.0] * n
    for i, j, s, g in FIVE:
        wins[i] += s
        wins[j] += g - s
    gamma = [1.0] * n
    for _ in range(20000):  # Zermelo (1929): γᵢ ← Wᵢ / Σⱼ nᵢⱼ / (γᵢ + γⱼ)
        denominator = [0.0] * n
        for i, j, _, g in FIVE:
            denominator[i] += g / (gamma[i] + gamma[j])
            denominator[j] += g / (gamma[i] + gamma[j])
        gamma = [w / d for w, d in zip(wins, denominator)]
    logs = [math.log(x) for x in gamma]
    expected = [x - sum(logs) / n for x in logs]
    theta, cov = bradley_terry(n, FIVE)
    assert list(theta) == pytest.approx(expected, abs=1e-7)
    # The Moore–Penrose inverse of H (null space: all ones): cov·H is the projection off that direction.
    h = hessian(n, FIVE, list(theta), 0.0)
    for i in range(n):
        assert sum(cov[i]) == pytest.approx(0.0, abs=1e-9)
        for j in range(n):
            assert sum(cov[i][k] * h[k][j] for k in range(n)) == pytest.approx((i == j) - 1 / n, abs=1e-9)


def test_with_a_prior_the_fit_is_gradient_descent_s_and_the_covariance_the_inverse_hessian() -> None:
    n, prior = 5, 0.3
    theta = [0.0] * n
    for _ in range(20000):
        theta = [t - 0.05 * g for t, g in zip(theta, gradient(n, FIVE, theta, prior))]
    fitted, cov = bradley_terry(n, FIVE, prior)
    assert list(fitted) == pytest.approx(theta, abs=1e-9)
    h = hessian(n, FIVE, theta, prior)
    for i in range(n):
        for j in range(n):
            assert sum(cov[i][k] * h[k][j] for k in range(n)) == pytest.approx(float(i == j), abs=1e-9)


def test_a_bot_that_won_everything_stays_finite_under_a_prior_and_a_warm_start_ends_alike() -> None:
    rng = random.Random(4)
    results = [(i, j, float(rng.randint(0, 6)), 6) for i in range(8) for j in range(i + 1, 8) if rng.random() < 0.5]
    results.append((0, 7, 6.0, 6))
    cold, cold_cov = bradley_terry(8, results, 0.05)
    warm, warm_cov = bradley_terry(8, results, 0.05, start=[rng.uniform(-3, 3) for _ in range(8)])
    assert all(math.isfinite(t) for t in cold)
    assert list(warm) == pytest.approx(list(cold), abs=1e-9)
    assert warm_cov.tolist() == [pytest.approx(row, abs=1e-9) for row in cold_cov.tolist()]
    assert max(abs(g) for g in gradient(8, results, list(cold), 0.05)) < 1e-9


def test_no_bots_no_fit() -> None:
    theta, cov = bradley_terry(0, [])
    assert theta.shape == (0,) and cov.shape == (0, 0)
