"""``format: adaptive``: a Bradley–Terry model of fixed-strength bots, the
verdict on each adjacent pair of its ranking, and the next round's pairs,
chosen where they most narrow the pairs not settled yet.

Model: bot i has a strength θᵢ (natural log-odds; Elo = θ·400/ln 10); a
game of i against j scores 1 with probability σ(θᵢ − θⱼ), a draw counts
as half a win (the Elo convention).  The ratings are the posterior mode
under a weak normal prior (mean 0, sd :data:`PRIOR_ELO`), which keeps a bot
that won every game finite; their covariance is the inverse of the
posterior's Hessian at the mode (Laplace).  The difference of two ratings
is then normal, which gives each adjacent pair of the ranking its verdict
(:func:`verdicts`).

Every function is pure: the same games, seed and round number give the
same fit and the same pairs, so a resumed run pairs exactly as an
uninterrupted one.  The fit is :func:`arena.formats.bradley_terry.bradley_terry`
(numpy: about a second at 1,000 bots), and the last few are remembered, so
reading a stage again with the same results (after every game of a round in
play) does not fit again.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING
from statistics import NormalDist

from arena.formats.bradley_terry import bradley_terry

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ELO_PER_NAT", "PRIOR_ELO", "Fit", "Verdict", "adaptive_round", "fit", "idle_rounds", "in_scope", "ranking",
           "settle_rule", "verdicts"]

#: Elo points per unit of log-odds.
ELO_PER_NAT = 400 / math.log(10)
#: The prior's sd, in Elo: wide enough to move no rating of a real field
#: much, narrow enough that a bot that won or lost everything stays finite.
PRIOR_ELO = 1000.0
#: The narrowest the prior's sd gets, however close the field looks.
MIN_PRIOR_ELO = 50.0
#: The scale of the differences the anytime-valid test is tuned to (see :func:`_anytime_p`): the
#: evidence it needs grows with the log of this over the difference's sd, and it loses all power
#: once the sd is well above it, so it is wide.
MIXTURE_ELO = 200.0
#: The verdicts of an adjacent pair.
SEPARATED, TIED, UNSETTLED = "separated", "tied", "not settled"
#: How many places apart two bots may be to be paired on information (the
#: information a game gives on an adjacent pair falls fast with the distance).
WINDOW = 4
#: A bot plays at least once in this many rounds, settled or not.
MAX_IDLE = 3


@dataclass(frozen=True)
class Fit:
    """The ratings (Elo, mean about 0) and their covariance (Elo², in the
    order of ``bots``), by bot."""

    bots: tuple[str, ...]
    elo: dict[str, float]
    # The same games give the same covariance: the ratings decide equality.
    cov: np.ndarray = field(compare=False, repr=False)

    @cached_property
    def index(self) -> dict[str, int]:
        return {b: i for i, b in enumerate(self.bots)}

    @cached_property
    def cov_rows(self) -> list[list[float]]:
        """``cov`` as lists, for reading entry by entry (a numpy element is slow to read one at a time)."""
        return self.cov.tolist()

    def var_diff(self, a: str, b: str) -> float:
        i, j = self.index[a], self.index[b]
        c = self.cov_rows
        return max(c[i][i] + c[j][j] - 2 * c[i][j], 1e-12)


@dataclass(frozen=True)
class Verdict:
    """An adjacent pair of the ranking, the better first, and what the games show of it."""

    better: str
    worse: str
    #: :data:`SEPARATED`, :data:`TIED` or :data:`UNSETTLED`.
    status: str
    #: The probability that ``better`` is the stronger.
    p_order: float
    #: The probability that the two are within ``within_elo`` of each other.
    p_tied: float

    @property
    def settled(self) -> bool:
        return self.status != UNSETTLED


#: How many fits :func:`fit` remembers: a run reads its stage after every game, and the results of the rounds
#: complete change once a round.
_REMEMBERED = 4
_fits: dict[tuple[tuple[str, ...], tuple[tuple[tuple[str, str], tuple[float, int]], ...]], Fit] = {}


def fit(bots: Sequence[str], results: Mapping[tuple[str, str], tuple[float, int]]) -> Fit:
    """The posterior mode of the bots' ratings and its Laplace covariance.
    ``results[(a, b)]`` is (a's points, games) over all games of a against b,
    each unordered pair once.

    The prior's spread is the field's, estimated from the games (empirical
    Bayes, one EM step from :data:`PRIOR_ELO`): a prior much wider than the
    field would take the largest of many noisy gaps between neighbours at
    face value, and declare them separated too often.

    The same bots and results give the same fit, the one remembered if it
    is one of the last few."""
    key = (tuple(bots), tuple(sorted(results.items())))
    if (known := _fits.get(key)) is not None:
        return known
    n = len(bots)
    index = {b: i for i, b in enumerate(bots)}
    edges = [(index[a], index[b], s, g) for (a, b), (s, g) in key[1] if g > 0]
    wide = (ELO_PER_NAT / PRIOR_ELO) ** 2  # precision of θ
    theta, cov = bradley_terry(n, edges, wide)
    if n > 1 and edges:
        spread = float(theta @ theta + cov.trace()) / n
        prior = min(max(1 / spread, wide), (ELO_PER_NAT / MIN_PRIOR_ELO) ** 2)
        theta, cov = bradley_terry(n, edges, prior, start=theta)
    model = Fit(tuple(bots), {b: float(theta[i]) * ELO_PER_NAT for b, i in index.items()}, cov * ELO_PER_NAT ** 2)
    if len(_fits) >= _REMEMBERED:
        del _fits[next(iter(_fits))]
    _fits[key] = model
    return model


def ranking(bots: Sequence[str], model: Fit) -> list[str]:
    """``bots`` by rating, the better first; equal ratings in the order given (the seeding)."""
    position = {b: i for i, b in enumerate(bots)}
    return sorted(bots, key=lambda b: (-round(model.elo[b], 6), position[b]))


def verdicts(order: Sequence[str], model: Fit, confidence: float, within_elo: float,
             top: int | None = None) -> list[Verdict]:
    """Each adjacent pair of ``order`` (by rating, the better first):
    ``separated`` when the games show the better to be the stronger,
    ``tied`` when they show the two within ``within_elo`` of each other,
    ``not settled`` otherwise.

    The rule is checked after every round and stops the stage at the first
    round it holds, so a pair-by-pair threshold on the posterior would be
    crossed by chance by two equal bots sooner or later, and would declare
    the luckiest of many close pairs.  So each pair's evidence is an
    anytime-valid p-value (:func:`_anytime_p`: valid however often it is
    looked at), and which pairs are declared is decided by the
    Benjamini–Hochberg rule at 1 − ``confidence`` over the pairs
    :func:`in_scope` of ``top`` (and apart over the rest): of the pairs
    declared separated (tied), the share declared wrongly is at most
    1 − ``confidence``.  ``p_order`` and ``p_tied`` are the plain posterior
    probabilities, for the tables.
    """
    pairs = list(zip(order, order[1:]))
    p_order, p_tied, p_apart, p_within = [], [], [], []
    scale = MIXTURE_ELO
    for a, b in pairs:
        d, sd = model.elo[a] - model.elo[b], math.sqrt(model.var_diff(a, b))
        normal = NormalDist(d, sd)
        p_order.append(1 - normal.cdf(0.0))
        p_tied.append(normal.cdf(within_elo) - normal.cdf(-within_elo) if within_elo > 0 else 0.0)
        p_apart.append(_anytime_p(d, sd, scale))
        # Within: both δ ≥ N and δ ≤ −N refuted.
        p_within.append(max(_anytime_p(within_elo - d, sd, scale), _anytime_p(within_elo + d, sd, scale))
                        if within_elo > 0 else 1.0)
    scope = len(pairs) if top is None else min(top, len(pairs))
    alpha = 1 - confidence
    separated, tied = set(), set()
    for group in (range(scope), range(scope, len(pairs))):
        apart = _benjamini_hochberg({i: p_apart[i] for i in group}, alpha)
        separated |= apart
        tied |= _benjamini_hochberg({i: p_within[i] for i in group if i not in apart}, alpha)
    return [Verdict(a, b, SEPARATED if i in separated else TIED if i in tied else UNSETTLED, p_order[i], p_tied[i])
            for i, (a, b) in enumerate(pairs)]


def _anytime_p(d: float, sd: float, scale: float) -> float:
    """An anytime-valid p-value against "the difference is at most 0", from
    its estimate ``d`` ± ``sd`` (Elo): one over Robbins' mixture likelihood
    ratio, the alternative's difference half-normal of scale ``scale``.
    With information I = 1/sd² and v = I·scale², the ratio is
    2·exp(z²·v / (2(1+v)))·Φ(z·√(v/(1+v))) / √(1+v), z = d/sd; by Ville's
    inequality it passes 1/α at some look with probability α at most."""
    if sd <= 0:
        return 0.0 if d > 0 else 1.0
    z, v = d / sd, (scale / sd) ** 2
    log_ratio = (math.log(2) + z * z * v / (2 * (1 + v)) + math.log(max(NormalDist().cdf(z * math.sqrt(v / (1 + v))), 1e-300))
                 - 0.5 * math.log1p(v))
    return min(1.0, math.exp(-log_ratio)) if log_ratio < 700 else 0.0


def _benjamini_hochberg(p_values: Mapping[int, float], alpha: float) -> set[int]:
    """The keys declared at false discovery rate ``alpha``: the k smallest
    p-values, for the largest k whose k-th smallest is at most k·alpha/m."""
    ranked = sorted(p_values, key=lambda i: (p_values[i], i))
    m = len(ranked)
    k = max((r for r in range(1, m + 1) if p_values[ranked[r - 1]] <= r * alpha / m), default=0)
    return set(ranked[:k])


def settle_rule(confidence: float, within_elo: float, top: int | None, max_games: int) -> str:
    """The stop rule, in one line."""
    scope = f" down to place {top}" if top else ""
    return (f"adaptive: stops when every adjacent pair{scope} is separated (the better is the stronger) or tied "
            f"within {within_elo:g} Elo under a Bradley–Terry fit, at most {1 - confidence:.0%} of either "
            f"declared wrongly (confidence {confidence:g}), or at {max_games:,} games")


def in_scope(order_verdicts: Sequence[Verdict], top: int | None) -> list[Verdict]:
    """The adjacent pairs the stop rule looks at: all, or those down to place ``top`` (its pair with the next included)."""
    return list(order_verdicts if top is None else order_verdicts[:top])


def adaptive_round(order: Sequence[str], model: Fit, scope: Sequence[Verdict], idle: Mapping[str, int],
                   last_opponent: Mapping[str, str], seed: int, round_number: int, room: int,
                   ) -> tuple[list[tuple[str, str]], str | None]:
    """The next round: at most ``room`` pairs, and the bot left out to make
    the players even (None if they are).

    The bots that play: those of an adjacent pair of ``scope`` not settled,
    and every bot idle for :data:`MAX_IDLE` rounds or more (``idle``), so
    that a settled bot is still checked now and then.  When they are odd,
    the most idle bot resting joins them (the nearest in place of equals);
    when none rests, one sits out (a settled one first).
    Among them, each candidate pair (at most :data:`WINDOW` places apart in
    ``order``, not the two bots' last meeting again) is worth the expected
    relative narrowing of the unsettled adjacent pairs' differences that
    one game pair between them brings; pairs are taken greedily by worth,
    then the bots left are paired by nearest place; past ``room`` pairs,
    the least worth are dropped.  Ties are broken by a
    hash of ``seed``, ``round_number`` and the pair, so the round is a pure
    function of its arguments.
    """
    place = {b: i for i, b in enumerate(order)}
    open_pairs = [v for v in scope if not v.settled]
    playing = {b for v in open_pairs for b in (v.better, v.worse)}
    playing |= {b for b in order if idle.get(b, MAX_IDLE) >= MAX_IDLE}
    players = sorted(playing, key=place.__getitem__)
    odd_out = None
    if len(players) % 2:
        open_bots = {b for v in open_pairs for b in (v.better, v.worse)}
        spare = [b for b in order if b not in playing]
        if spare:
            # A bot more rather than one less: the most idle of those resting, of equals the nearest to
            # a player (its games tell most about the open pairs), then the better placed.
            near = {b: min(abs(place[b] - place[p]) for p in players) for b in spare} if players else {}
            joins = min(spare, key=lambda b: (-idle.get(b, MAX_IDLE), near.get(b, 0), place[b]))
            players = sorted([*players, joins], key=place.__getitem__)
        else:
            # Everyone plays: a settled bot sits out first, the least idle, the lowest placed.
            odd_out = min(players, key=lambda b: (b in open_bots, idle.get(b, MAX_IDLE), -place[b]))
            players.remove(odd_out)
    if not players:
        return [], odd_out
    index = model.index
    cov = model.cov_rows
    info_per_pair = 2 * 0.25 / ELO_PER_NAT ** 2  # Fisher information of a game pair, per Elo², at p = ½
    # The open pairs by their better bot's place: a candidate looks at those near it only.
    open_at = {place[v.better]: v for v in open_pairs}

    def worth(a: str, b: str) -> float:
        i, j = index[a], index[b]
        d = model.elo[a] - model.elo[b]
        p = 1 / (1 + 10 ** (-d / 400))
        info = info_per_pair * 4 * p * (1 - p)
        u_var = max(cov[i][i] + cov[j][j] - 2 * cov[i][j], 1e-12)
        gain = 0.0
        low, high = min(place[a], place[b]) - WINDOW, max(place[a], place[b]) + WINDOW
        # The pairs far from both bots in the order hardly move: their covariance with a − b is small.
        for at in range(max(low, 0), high + 1):
            if (v := open_at.get(at)) is None:
                continue
            k, m = index[v.better], index[v.worse]
            # Cov(θk − θm, θa − θb): the reduction of var(θk − θm) one game pair of a with b brings.
            c = cov[k][i] - cov[k][j] - cov[m][i] + cov[m][j]
            var_km = max(cov[k][k] + cov[m][m] - 2 * cov[k][m], 1e-12)
            gain += c * c * info / (1 + info * u_var) / var_km
        # To 9 digits: the last bits of the linear algebra vary with the machine's BLAS, and must not pick the pairs.
        return float(f"{gain:.9g}")

    candidates = []
    for x, a in enumerate(players):
        for b in players[x + 1: x + 1 + WINDOW]:
            if last_opponent.get(a) == b and last_opponent.get(b) == a:
                continue  # not the same pair twice in a row: the information is wider when opponents vary
            candidates.append((-worth(a, b), _tiebreak(seed, round_number, a, b), a, b))
    candidates.sort()
    taken: set[str] = set()
    pairs = []
    for _, _, a, b in candidates:
        if a not in taken and b not in taken:
            pairs.append((a, b))
            taken |= {a, b}
    left = [b for b in players if b not in taken]
    # Whoever is left (the worth ran out near them) meets the nearest bot left.
    pairs += [(left[i], left[i + 1]) for i in range(0, len(left) - 1, 2)]
    return sorted(pairs[:max(room, 0)], key=lambda p: place[p[0]]), odd_out


def _tiebreak(seed: int, round_number: int, a: str, b: str) -> str:
    return hashlib.sha256(f"{seed}/{round_number}/{a}/{b}".encode()).hexdigest()


def idle_rounds(bots: Collection[str], played_in: Sequence[Collection[str]]) -> dict[str, int]:
    """Rounds since each bot last played (the rounds given, the latest last); never played: all of them."""
    out = {}
    for b in bots:
        gap = 0
        for round_bots in reversed(played_in):
            if b in round_bots:
                break
            gap += 1
        out[b] = gap
    return out
