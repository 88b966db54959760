"""The SPRT (sequential probability ratio test) of two bots: pure functions
of game pairs; no I/O.

* **Models** (:data:`SPRT_MODELS`), as fastchess names and computes them:
  ``normalized`` (the default) tests normalized Elo on the pentanomial
  counts of game pairs (M. Van den Bergh, "Comments on Normalized Elo");
  ``logistic`` tests logistic Elo on the same counts (Van den Bergh,
  "Comparing the approximations for the generalized log likelihood ratio
  of a multinomial distribution", proposition 1.1); ``bayesian`` tests
  BayesElo on the wins, draws and losses of the games, its draw Elo
  estimated from them (fastchess gives it no pentanomial form).  An
  outcome never seen counts as 0.001 (of pairs, or games).
* **The verdict** (:class:`SprtFold`): the test takes the complete game
  pairs in schedule order, and its verdict is the first pair after which
  the LLR reaches a bound.  Pairs after that one do not change it, so the
  same records give the same verdict however many workers, actors or
  machines played them and in whatever order their games ended, and
  reading the results back gives the verdict the run stopped at.
* **Its length** (:meth:`SprtConfig.expected_pairs`): Wald's approximation
  of the expected number of pairs under each hypothesis, whence the cap of
  a test left to run until it decides (:meth:`SprtConfig.game_cap`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.formats.sprt_config import CAP_FACTOR, MAX_SPRT_ELO, NELO_UNIT, SPRT_MODELS, SprtConfig
from arena.results.statistics import Pentanomial, normalized_elo

__all__ = [
    "SPRT_MODELS",
    "MAX_SPRT_ELO",
    "CAP_FACTOR",
    "SprtConfig",
    "SprtStatus",
    "SprtFold",
    "sprt_llr",
    "sprt_status",
    "normalized_mle",
]

#: Scores of the pentanomial outcomes LL, LD, WL+DD, WD, WW (per pair), and of a loss, draw, win.
_PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
_GAME_SCORES = (0.0, 0.5, 1.0)
#: What an outcome never seen counts as.
_UNSEEN = 1e-3


# -- the log-likelihood ratio of each model --------------------------------------


def _observed(counts: Sequence[int]) -> tuple[list[float], float]:
    regularized = [c if c else _UNSEEN for c in counts]
    total = sum(regularized)
    return [c / total for c in regularized], total


def _tilted(observed: Sequence[float], phi: Sequence[float], theta: float | None) -> tuple[list[float], float]:
    """The distribution ``q_i / (1 + θ φ_i)`` whose θ makes ``g(θ) = Σ q_i φ_i
    / (1 + θ φ_i)`` zero, and θ.  ``g`` falls from +inf to -inf on (-1 / max φ,
    -1 / min φ): Newton's steps from ``theta`` (else the middle), kept inside
    the bracket by bisection, to machine precision."""
    terms = list(zip(observed, phi))
    low, high = -1 / max(phi), -1 / min(phi)
    x = theta if theta is not None and low < theta < high else (low + high) / 2
    for _ in range(200):
        value = slope = 0.0
        for q, f in terms:
            r = f / (1 + x * f)
            value += q * r
            slope -= q * r * r
        if value > 0:
            low = x
        elif value < 0:
            high = x
        else:
            break
        step = x - value / slope if slope < 0 else math.nan
        if not low < step < high:
            step = (low + high) / 2
        done = step in (low, high) or abs(step - x) <= 4e-16 * max(1.0, abs(x))
        x = step
        if done:
            break
    return [q / (1 + x * f) for q, f in terms], x


def normalized_mle(
    observed: Sequence[float], scores: Sequence[float], t: float, start: Sequence[float] | None = None,
) -> list[float]:
    """The distribution on ``scores`` closest in likelihood to ``observed``
    among those with ``(mean - ½) / sd = t`` (section 4.1 of Van den Bergh's
    note): ``p_i = q_i / (1 + θ φ_i)``, iterated from ``start`` (else the
    uniform distribution) until it stops moving."""
    p = list(start) if start is not None else [1 / len(scores)] * len(scores)
    theta: float | None = None
    for _ in range(1000):
        mu = sum(a * x for a, x in zip(scores, p))
        sigma = math.sqrt(sum(x * (a - mu) ** 2 for a, x in zip(scores, p)))
        half = 0.5 * t * sigma
        phi = [a - 0.5 - half * (1 + ((a - mu) / sigma) ** 2) for a in scores]
        new, theta = _tilted(observed, phi, theta)
        moved = max(abs(a - b) for a, b in zip(new, p))
        p = new
        if moved < 1e-10:  # floating-point noise alone moves it by ~1e-11
            break
    return p


def _logistic_mle(observed: Sequence[float], scores: Sequence[float], s: float) -> list[float]:
    """The distribution on ``scores`` closest in likelihood to ``observed``
    among those of mean ``s`` (proposition 1.1 of Van den Bergh's note)."""
    return _tilted(observed, [a - s for a in scores], None)[0]


def _ratio(total: float, observed: Sequence[float], p0: Sequence[float], p1: Sequence[float]) -> float:
    return total * sum(q * (math.log(b) - math.log(a)) for q, a, b in zip(observed, p0, p1))


def _logistic_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def _bayeselo_score(elo: float, drawelo: float) -> float:
    win = 1 / (1 + 10 ** ((-elo + drawelo) / 400))
    loss = 1 / (1 + 10 ** ((elo + drawelo) / 400))
    return win + 0.5 * (1 - win - loss)


def sprt_llr(
    penta: Pentanomial, elo0: float, elo1: float, model: str = SPRT_MODELS[0], wdl: tuple[int, int, int] = (0, 0, 0),
) -> float:
    """The log-likelihood ratio of H1 over H0, as fastchess computes it for
    ``model``: on the pair counts ``penta`` (normalized, logistic), or on
    the games' wins, draws and losses ``wdl`` (bayesian)."""
    return _Llr(model, elo0, elo1).of(penta, wdl)


class _Llr:
    """One model's LLR, remembering the last maximum-likelihood solutions:
    a test computes it after every pair, and from the pair before's
    solution the normalized model's iteration takes a step or two."""

    def __init__(self, model: str, elo0: float, elo1: float) -> None:
        self.model, self.elo0, self.elo1 = model, elo0, elo1
        self._last: tuple[list[float], list[float]] | None = None

    def of(self, penta: Pentanomial, wdl: tuple[int, int, int]) -> float:
        if self.model == "bayesian":
            return self._bayesian(*wdl)
        if penta.pairs == 0:
            return 0.0
        observed, total = _observed(penta.counts())
        if self.model == "logistic":
            p0 = _logistic_mle(observed, _PAIR_SCORES, _logistic_score(self.elo0))
            p1 = _logistic_mle(observed, _PAIR_SCORES, _logistic_score(self.elo1))
            return _ratio(total, observed, p0, p1)
        t0, t1 = (math.sqrt(2) * elo / NELO_UNIT for elo in (self.elo0, self.elo1))
        last = self._last
        p0 = normalized_mle(observed, _PAIR_SCORES, t0, last[0] if last else None)
        p1 = normalized_mle(observed, _PAIR_SCORES, t1, last[1] if last else None)
        self._last = (p0, p1)
        return _ratio(total, observed, p0, p1)

    def _bayesian(self, wins: int, draws: int, losses: int) -> float:
        if wins == 0 or losses == 0:  # no draw Elo to estimate
            return 0.0
        observed, total = _observed((losses, draws, wins))
        loss, win = observed[0], observed[2]
        drawelo = 200 * math.log10((1 - loss) / loss * (1 - win) / win)
        p0 = _logistic_mle(observed, _GAME_SCORES, _bayeselo_score(self.elo0, drawelo))
        p1 = _logistic_mle(observed, _GAME_SCORES, _bayeselo_score(self.elo1, drawelo))
        return _ratio(total, observed, p0, p1)


# -- the test, pair by pair ----------------------------------------------------------


@dataclass(frozen=True)
class SprtStatus:
    """Where an SPRT stands: its settings; the LLR, the pairs and their
    pentanomial counts it was computed over (up to the verdict, once there
    is one); the verdict, ``"H1"`` (accepted), ``"H0"`` (accepted) or
    ``"undecided"``; ``at_limit`` when no more games are scheduled;
    ``later`` the complete pairs after the verdict (in flight when it came),
    which count in the Elo but not in the test."""

    config: SprtConfig
    llr: float
    pairs: int
    verdict: str
    at_limit: bool = False
    penta: Pentanomial = field(default_factory=Pentanomial)
    later: int = 0

    @property
    def decided(self) -> bool:
        return self.verdict != "undecided"

    @property
    def verdict_text(self) -> str:
        """``H1 accepted``, ``H0 accepted``, ``undecided`` or ``undecided at the limit``."""
        text = {"H1": "H1 accepted", "H0": "H0 accepted"}.get(self.verdict, "undecided")
        return text + " at the limit" if self.at_limit else text

    @property
    def nelo(self) -> tuple[float, float]:
        """The normalized Elo of the pairs the test counted, and its 95 % margin:
        once decided, the normalized Elo the test decided on."""
        return normalized_elo(self.penta)

    def describe(self, short: bool = False) -> str:
        """One line for the end of a run; ``short`` for a progress line."""
        c = self.config
        if short:
            return f"LLR {self.llr:.2f} ({c.lower:.2f}, {c.upper:.2f}) {self.verdict_text}"
        return (
            f"SPRT {c.describe()} LLR {self.llr:.2f} ({c.lower:.2f}, {c.upper:.2f}): "
            f"{self.verdict_text} after {self.pairs} pair{'' if self.pairs == 1 else 's'}"
        )

    @property
    def later_text(self) -> str:
        """`` (+1 pair after the verdict, not counted in the test)``, or nothing."""
        if not self.later:
            return ""
        return f" (+{self.later} pair{'' if self.later == 1 else 's'} after the verdict, not counted in the test)"

    def to_json(self) -> dict[str, Any]:
        nelo, margin = self.nelo
        return {
            "llr": self.llr, "lower": self.config.lower, "upper": self.config.upper,
            **self.config.to_json(), "verdict": self.verdict, "pairs": self.pairs, "at_limit": self.at_limit,
            "later_pairs": self.later, "nelo": nelo, "nelo_margin": margin,
        }


_KINDS = {0.0: 0, 0.5: 1, 1.0: 2, 1.5: 4, 2.0: 5}


class SprtFold:
    """An SPRT fed complete game pairs in schedule order (:meth:`add`): the
    LLR after each, and the verdict at the first pair where it reaches a
    bound.  From then on the test is over: later pairs are only counted
    (:attr:`SprtStatus.later`)."""

    def __init__(self, config: SprtConfig) -> None:
        self.config = config
        self._llr = _Llr(config.model, config.elo0, config.elo1)
        # LL, LD, WL, DD, WD, WW; and the games' wins, draws, losses.
        self._counts = [0] * 6
        self._wdl = [0, 0, 0]
        self.llr = 0.0
        self.verdict = "undecided"
        self.later = 0

    def add(self, pair: tuple[float, float]) -> None:
        """The next complete pair, as the first bot's two scores (1, ½, 0)."""
        if self.verdict != "undecided":
            self.later += 1
            return
        x, y = pair
        self._counts[3 if x == y == 0.5 else _KINDS[x + y]] += 1
        for score in pair:
            self._wdl[0 if score == 1 else 1 if score == 0.5 else 2] += 1
        penta = Pentanomial(*self._counts)
        self.llr = self._llr.of(penta, (self._wdl[0], self._wdl[1], self._wdl[2]))
        if self.llr >= self.config.upper:
            self.verdict = "H1"
        elif self.llr <= self.config.lower:
            self.verdict = "H0"

    @property
    def decided(self) -> bool:
        return self.verdict != "undecided"

    def status(self, *, at_limit: bool = False) -> SprtStatus:
        penta = Pentanomial(*self._counts)
        return SprtStatus(self.config, self.llr, penta.pairs, self.verdict, at_limit and not self.decided,
                          penta, self.later)


def sprt_status(config: SprtConfig, pairs: Iterable[tuple[float, float]], *, at_limit: bool = False) -> SprtStatus:
    """The test after the complete ``pairs``, in schedule order (each the
    first bot's two scores): decided at the first pair that takes the LLR
    to a bound."""
    fold = SprtFold(config)
    for pair in pairs:
        fold.add(pair)
    return fold.status(at_limit=at_limit)
