"""An SPRT's settings (``sprt:``, ``--sprt``): the bounds of the test, its
error rates and its model, checked once wherever they are read, and the
length expected of it.  A setting of the tournament
(:class:`arena.formats.competition.Rules` holds it): the test stops the
match, so it decides which games are played.  The test itself, a pure
function of the games, is :mod:`arena.results.sprt`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["CAP_FACTOR", "MAX_SPRT_ELO", "NELO_UNIT", "SPRT_MODELS", "SprtConfig"]

#: The models ``--sprt model=`` and ``sprt: {model: }`` take, the default first.
SPRT_MODELS = ("normalized", "logistic", "bayesian")
#: The largest |elo0| and |elo1| an SPRT takes.
MAX_SPRT_ELO = 200
#: A test left to run until it decides stops, undecided, after this many
#: times the pairs it is expected to need under the worse hypothesis.
CAP_FACTOR = 3

#: Normalized Elo per unit of t = (score - 1/2) / sigma, for single games.
NELO_UNIT = 800 / math.log(10)


@dataclass(frozen=True)
class SprtConfig:
    """A sequential test of H0 "the first bot is ``elo0`` stronger" against
    H1 "it is ``elo1`` stronger", in the Elo of ``model``, with error rates
    ``alpha`` (accepting H1 when H0 holds) and ``beta`` (the reverse)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = SPRT_MODELS[0]

    def __post_init__(self) -> None:
        if self.model not in SPRT_MODELS:
            raise ValueError(f"unknown model {self.model!r}; use one of: {', '.join(SPRT_MODELS)}")
        for key in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{key} must be a finite number, got {value!r}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got elo0={self.elo0:g}, elo1={self.elo1:g}")
        for key in ("elo0", "elo1"):
            # Beyond it the normalized MLE (normalized_mle) may have no step
            # that meets its constraint; an SPRT is for close calls anyway.
            if abs(getattr(self, key)) > MAX_SPRT_ELO:
                raise ValueError(f"{key} must be between -{MAX_SPRT_ELO:g} and {MAX_SPRT_ELO:g} ({self.model} Elo), "
                                 f"got {getattr(self, key):g}")
        for key in ("alpha", "beta"):
            value = getattr(self, key)
            if not 0 < value < 1:
                raise ValueError(f"{key} must be between 0 and 1, got {value:g}")
        if self.alpha + self.beta >= 1:
            raise ValueError("alpha + beta must be below 1")

    @property
    def lower(self) -> float:
        """Accept H0 when the LLR falls to this bound, ln(β / (1 − α))."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 when the LLR rises to this bound, ln((1 − β) / α)."""
        return math.log((1 - self.beta) / self.alpha)

    def describe(self) -> str:
        """``[0, 5] normalized``: the bounds and the model, as the lines and tables name the test."""
        return f"[{self.elo0:g}, {self.elo1:g}] {self.model}"

    def expected_pairs(self) -> float:
        """The game pairs the test is expected to need under the worse of
        its two hypotheses (:attr:`worse_hypothesis`)."""
        return max(self._expected())

    @property
    def worse_hypothesis(self) -> str:
        """``H0`` or ``H1``: the one under which the test is expected to be longer."""
        under_h0, under_h1 = self._expected()
        return "H0" if under_h0 >= under_h1 else "H1"

    def _expected(self) -> tuple[float, float]:
        """The expected pairs under H0 and under H1: Wald's approximation,
        with the LLR's normal drift of ∓Δt²/2 a pair, Δt = √2 (elo1 − elo0)
        / (800 / ln 10).  Exact for normalized Elo; for logistic Elo and
        BayesElo it is the length without draws, which draws only shorten."""
        t = math.sqrt(2) * (self.elo1 - self.elo0) / NELO_UNIT
        drift = t * t / 2
        under_h0 = ((1 - self.alpha) * self.lower + self.alpha * self.upper) / -drift
        under_h1 = (self.beta * self.lower + (1 - self.beta) * self.upper) / drift
        return under_h0, under_h1

    def game_cap(self) -> int:
        """The games a test left to run until it decides plays at most:
        :data:`CAP_FACTOR` times its expected length, in whole pairs."""
        return 2 * math.ceil(CAP_FACTOR * self.expected_pairs())

    def to_json(self) -> dict[str, Any]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta, "model": self.model}
