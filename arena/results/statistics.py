"""How sure the results are: Elo with 95 % intervals, LOS, pentanomial counts
and the SPRT.  Pure functions of game results; no I/O.

* **Elo** (:func:`fit_elo`): the maximum-likelihood Bradley–Terry fit over
  every game on the logistic Elo scale, ``P(a beats b) = 1 / (1 +
  10^((elo_b - elo_a) / 400))``, a draw counting as half a win for each side,
  the bots' mean at 0.  Its 95 % intervals are Wald intervals from the fit's
  covariance: the Moore–Penrose pseudo-inverse of the Fisher information
  (the sum-to-zero constraint removes the one free direction).
* **LOS** (likelihood of superiority) of one bot over another: the normal
  probability that the difference of their Elo is above 0, from the same
  covariance (:meth:`EloFit.los`).
* **Two bots** (:func:`match_statistics`): Elo difference, 95 % margin and
  LOS as fastchess computes them from game pairs (the pentanomial model),
  or from single games when no pair is complete; the draw ratio; the
  pentanomial counts LL, LD, WL+DD, WD, WW.
* **Normalized Elo** (:func:`normalized_elo`): the score's distance from
  ½ in units of its spread, as fastchess prints it (``nElo``); the SPRT's
  default model tests it (:mod:`arena.results.sprt`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arena.formats.bradley_terry import bradley_terry
from arena.formats.scoring import Tally, score_of
from arena.formats.sprt_config import NELO_UNIT
from arena.game.records import GameRecord, schedule_key

__all__ = [
    "scores_of",
    "ELO_METHOD",
    "Z95",
    "EloFit",
    "fit_elo",
    "fit_elo_tally",
    "los",
    "Pentanomial",
    "pentanomial",
    "MatchStatistics",
    "PairTally",
    "counted_statistics",
    "match_statistics",
    "NELO_UNIT",
    "normalized_elo",
]

#: The two-sided 95 % quantile of the standard normal distribution.
Z95 = 1.959963984540054
#: Natural-log units per Elo point: P(win) = 1 / (1 + exp(-C * elo_difference)).
_C = math.log(10) / 400
#: How the Elo intervals are computed, in words for tables and reports.
ELO_METHOD = "maximum-likelihood Bradley–Terry fit; 95 % Wald intervals from the inverse Fisher information"


def _phi(z: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * math.erfc(-z / math.sqrt(2))


def los(difference: float, sd: float) -> float:
    """The probability that a true difference is above 0 when its estimate is
    ``difference`` with standard deviation ``sd`` (normal approximation)."""
    if sd > 0 and math.isfinite(sd):
        return _phi(difference / sd)
    return 0.5 if difference == 0 or math.isnan(difference) else float(difference > 0)


def scores_of(records: Iterable[GameRecord], bot: str) -> tuple[list[float], list[tuple[float, float]]]:
    """``bot``'s score (1, 0.5, 0) in each of its games, in schedule order,
    and its two scores in each complete game pair."""
    games: list[float] = []
    by_pair: dict[int, list[float]] = {}
    for record in sorted(records, key=schedule_key):
        if bot not in record.players.values():
            continue
        score = score_of(record, bot)
        games.append(score)
        if record.pair is not None:
            by_pair.setdefault(record.pair, []).append(score)
    return games, [(pair[0], pair[1]) for pair in by_pair.values() if len(pair) == 2]


# -- Elo: Bradley–Terry over every game -----------------------------------------


@dataclass(frozen=True)
class EloFit:
    """A Bradley–Terry fit.  ``elo`` maps each bot that played to its Elo
    (mean 0); ``covariance`` maps pairs of those bots to the covariance of
    their estimates.  ``regularized`` is true when the plain maximum
    likelihood does not exist (some bot, or group of bots, won or lost every
    game against the others, which would put it at infinity) and one virtual
    draw between every two bots was added to keep the numbers finite."""

    elo: dict[str, float]
    covariance: dict[tuple[str, str], float]
    regularized: bool = False

    def margin(self, name: str) -> float:
        """Half the width of the bot's 95 % interval."""
        return Z95 * math.sqrt(max(self.covariance[name, name], 0.0))

    def difference_sd(self, a: str, b: str) -> float:
        """Standard deviation of ``elo[a] - elo[b]``."""
        c = self.covariance
        return math.sqrt(max(c[a, a] + c[b, b] - 2 * c[a, b], 0.0))

    def los(self, a: str, b: str) -> float:
        """The likelihood that ``a`` is stronger than ``b``."""
        return los(self.elo[a] - self.elo[b], self.difference_sd(a, b))


def fit_elo(games: Iterable[tuple[str, str, float]]) -> EloFit:
    """Fit Elo ratings to ``games``, each ``(a, b, score of a)`` with the
    score 1, 0.5 or 0 (a forfeit counts like any loss).  Bots that played no
    game are not in the fit.  The fit is :func:`arena.formats.bradley_terry.bradley_terry`
    without a prior, on the Elo scale."""
    tally: dict[tuple[str, str], tuple[float, int]] = {}
    for a, b, score in games:
        key, points = ((a, b), score) if a < b else ((b, a), 1.0 - score)
        s, g = tally.get(key, (0.0, 0))
        tally[key] = (s + points, g + 1)
    return fit_elo_tally(tally)


def fit_elo_tally(tally: Mapping[tuple[str, str], tuple[float, int]]) -> EloFit:
    """:func:`fit_elo` of the games tallied by pair: ``(a, b)`` (any order)
    to a's points against b and their games.  The bots are numbered in
    name order, so the fit does not depend on the order the games came in
    (the same numbers to the last bit, whichever order a fold saw them)."""
    index = {name: i for i, name in enumerate(sorted({name for pair in tally for name in pair}))}
    by_number: dict[tuple[int, int], tuple[float, int]] = {}
    for (a, b), (points, count) in tally.items():
        i, j = index[a], index[b]
        key, points = ((i, j), points) if i < j else ((j, i), count - points)
        s, g = by_number.get(key, (0.0, 0))
        by_number[key] = (s + points, g + count)
    n = len(index)
    if not n:
        return EloFit({}, {})
    regularized = not _strongly_connected(n, by_number)
    if regularized:
        for i in range(n):
            for j in range(i + 1, n):
                s, g = by_number.get((i, j), (0.0, 0))
                by_number[i, j] = (s + 0.5, g + 1)
    theta, cov = bradley_terry(n, [(i, j, s, g) for (i, j), (s, g) in sorted(by_number.items())])
    elo, covariance = (theta / _C).tolist(), (cov / (_C * _C)).tolist()
    bots = list(index)
    return EloFit(
        elo={name: elo[i] for name, i in index.items()},
        covariance={(a, b): covariance[index[a]][index[b]] for a in bots for b in bots},
        regularized=regularized,
    )


def _strongly_connected(n: int, tally: Mapping[tuple[int, int], tuple[float, int]]) -> bool:
    """Whether every bot can reach every other along "scored something
    against" edges: the condition for the maximum likelihood to be finite."""
    forward: list[list[int]] = [[] for _ in range(n)]
    backward: list[list[int]] = [[] for _ in range(n)]
    for (i, j), (s, g) in tally.items():
        for winner, loser, points in ((i, j, s), (j, i, g - s)):
            if points > 0:
                forward[winner].append(loser)
                backward[loser].append(winner)

    def reach(edges: list[list[int]]) -> int:
        seen, todo = {0}, [0]
        while todo:
            for b in edges[todo.pop()]:
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return len(seen)

    return reach(forward) == n == reach(backward)


# -- two bots: game pairs --------------------------------------------------------


@dataclass(frozen=True)
class Pentanomial:
    """Complete game pairs counted by the first bot's points in the pair:
    LL 0, LD ½, WL and DD 1, WD 1½, WW 2."""

    ll: int = 0
    ld: int = 0
    wl: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    @property
    def pairs(self) -> int:
        return self.ll + self.ld + self.wl + self.dd + self.wd + self.ww

    def counts(self) -> tuple[int, int, int, int, int]:
        """``(LL, LD, WL+DD, WD, WW)``: pairs scoring 0, ¼, ½, ¾ and 1."""
        return self.ll, self.ld, self.wl + self.dd, self.wd, self.ww


def pentanomial(pairs: Iterable[tuple[float, float]]) -> Pentanomial:
    """Count pairs given as the first bot's two game scores (1, 0.5 or 0)."""
    tally = dict.fromkeys(_PAIR_NAMES, 0)
    for x, y in pairs:
        tally[_pair_kind(x, y)] += 1
    return Pentanomial(**tally)


_PAIR_KINDS = {0: "ll", 0.5: "ld", 1: "wl", 1.5: "wd", 2: "ww"}
_PAIR_NAMES = ("ll", "ld", "wl", "dd", "wd", "ww")


def _pair_kind(x: float, y: float) -> str:
    return "dd" if x == 0.5 and y == 0.5 else _PAIR_KINDS[x + y]


class PairTally:
    """``bot``'s complete game pairs counted as records come in: a pair is
    counted once, when its second game arrives, so a progress line costs
    O(1) a game instead of a pass over every game so far."""

    def __init__(self, bot: str) -> None:
        self.bot = bot
        self._first_game: dict[int, float] = {}
        self._counts = dict.fromkeys(_PAIR_NAMES, 0)

    def add(self, record: GameRecord) -> None:
        if record.pair is None or self.bot not in record.players.values():
            return
        score = score_of(record, self.bot)
        first = self._first_game.pop(record.pair, None)
        if first is None:
            self._first_game[record.pair] = score
        else:
            self._counts[_pair_kind(first, score)] += 1

    def pentanomial(self) -> Pentanomial:
        return Pentanomial(**self._counts)


@dataclass(frozen=True)
class MatchStatistics:
    """Two bots, from the first one's side.  ``elo``/``margin``/``los`` come
    from the complete game pairs (pentanomial model) when there are any, else
    from single games (trinomial model): ``model`` says which."""

    wins: int
    draws: int
    losses: int
    penta: Pentanomial
    model: str
    #: The mean score per game, in the model's units.
    score: float
    elo: float
    #: The 95 % interval's ends (infinite beyond a 0 % or 100 % score) and half its width.
    lower: float
    upper: float
    margin: float
    los: float
    #: Normalized Elo (see :func:`normalized_elo`) and its 95 % margin.
    nelo: float = 0.0
    nelo_margin: float = math.inf

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def draw_ratio(self) -> float | None:
        return self.draws / self.games if self.games else None


def _score_to_elo(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def match_statistics(games: Sequence[float], pairs: Sequence[tuple[float, float]]) -> MatchStatistics:
    """Figures for a match: ``games`` holds the first bot's score in every
    game, ``pairs`` its two scores in every complete game pair."""
    tally = Tally()
    for score in games:
        tally.add(score)
    return counted_statistics(tally.wins, tally.draws, tally.losses, pentanomial(pairs))


def counted_statistics(wins: int, draws: int, losses: int, penta: Pentanomial) -> MatchStatistics:
    """:func:`match_statistics` from the counts alone (all it depends on):
    the first bot's wins, draws and losses, and its complete game pairs'
    pentanomial counts.  Constant time, for a progress line after every game."""
    if penta.pairs:
        values, counts, model = _PAIR_VALUES, penta.counts(), "pentanomial"
    else:
        values, counts, model = (0.0, 0.5, 1.0), (losses, draws, wins), "trinomial"
    n = sum(counts)
    if not n:
        return MatchStatistics(wins, draws, losses, penta, model, 0.5, 0.0, -math.inf, math.inf, math.inf, 0.5)
    score = sum(c * a for c, a in zip(counts, values)) / n
    variance = sum(c * (a - score) ** 2 for c, a in zip(counts, values)) / n
    sd = math.sqrt(variance / n)
    elo = _score_to_elo(score)
    lower, upper = _score_to_elo(score - Z95 * sd), _score_to_elo(score + Z95 * sd)
    margin = (upper - lower) / 2 if math.isfinite(upper - lower) else math.inf
    nelo, nelo_margin = _nelo(score, variance, n, 2 if model == "pentanomial" else 1)
    return MatchStatistics(wins, draws, losses, penta, model, score, elo, lower, upper, margin, los(score - 0.5, sd),
                           nelo, nelo_margin)


def _nelo(score: float, variance: float, n: int, per: int) -> tuple[float, float]:
    """fastchess's normalized Elo of a mean ``score`` over ``n`` samples of
    ``variance`` (``per`` games each: 2 for pairs), and its 95 % margin,
    ``(s − ½) / √(per · var) · 800 / ln 10`` with the interval of ``s``
    mapped the same way.  With no spread at all (every pair alike) it is
    ±inf, or 0 at an even score, and the margin is infinite."""
    if n == 0:
        return 0.0, math.inf
    if variance <= 0:
        return (0.0 if score == 0.5 else math.copysign(math.inf, score - 0.5)), math.inf
    unit = NELO_UNIT / math.sqrt(per * variance)
    return (score - 0.5) * unit, Z95 * math.sqrt(variance / n) * unit


def normalized_elo(penta: Pentanomial) -> tuple[float, float]:
    """The normalized Elo of the pairs counted in ``penta`` and its 95 % margin (see :func:`_nelo`)."""
    stats = counted_statistics(0, 0, 0, penta)
    return (0.0, math.inf) if not penta.pairs else (stats.nelo, stats.nelo_margin)


#: The pair score of the pentanomial outcomes LL, LD, WL+DD, WD, WW.
_PAIR_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)
