"""The simulation and the statistics of benchmarks/formats.py, against numbers
computed here."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

# benchmarks/ is a folder of scripts, not a package: load the script itself.
_SPEC = importlib.util.spec_from_file_location(
    "formats_benchmark", Path(__file__).resolve().parent.parent / "benchmarks" / "formats.py"
)
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
