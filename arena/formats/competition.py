"""What decides a tournament's games and pairings, wherever it is read from.

A tournament file (:class:`arena.run.config.TournamentConfig`) and a
results directory's ``tournament.json`` (:class:`arena.results.meta.TournamentMeta`)
both describe a competition; each gives a :class:`Competition`, and every
function of this package takes that, so a schedule rebuilt from the
directory is the one the file makes, with no made-up config in between.
"""

from __future__ import annotations

from dataclasses import dataclass

import engine
from arena.formats.stages import Stage
from arena.game.openings import Opening

__all__ = ["FIXED_FORMATS", "FORMATS", "STAGED", "Competition"]

#: The formats whose schedule is fixed in advance.
FIXED_FORMATS = ("round-robin", "gauntlet", "reference")
#: The formats a tournament file may name (``stages:`` is the staged one).
FORMATS = (*FIXED_FORMATS, "swiss", "knockout", "adaptive")
#: The format of a tournament given as ``stages:``.
STAGED = "stages"


@dataclass(frozen=True)
class Competition:
    game: str
    seed: int
    #: One of :data:`FORMATS`, or :data:`STAGED`.
    format: str
    #: The bots, in the file's order.
    names: tuple[str, ...]
    #: The rounds of a format fixed in advance.
    rounds: int = 1
    #: ``format: reference``: the bots every other bot plays.
    reference: tuple[str, ...] = ()
    #: The opening suite; None: the game's start positions.
    openings: tuple[Opening, ...] | None = None
    #: How game ids name a pair: ``names``, or ``positions`` (directories written before 0.2).
    game_ids: str = "names"
    #: Swiss, knockout and staged tournaments: their stages (a single format is one stage).
    stages: tuple[Stage, ...] = ()
    #: A bot that loses this many games in a row by a crash is withdrawn; None: never.
    withdraw_after_crashes: int | None = None
    #: Bots the organiser withdrew: their results stand; not paired again.
    withdrawn: tuple[str, ...] = ()
    #: Bots disqualified: each of their games scores as a loss; not paired again.
    disqualified: tuple[str, ...] = ()

    @property
    def paired_by_results(self) -> bool:
        """The rounds are paired one by one from the results (Swiss, knockout, stages)."""
        return bool(self.stages)

    @property
    def out_of_play(self) -> frozenset[str]:
        """The bots that play no more games: withdrawn or disqualified."""
        return frozenset(self.withdrawn) | frozenset(self.disqualified)

    def suite(self) -> tuple[Opening, ...]:
        """The openings every pairing plays: the suite, else the game's start positions."""
        if self.openings is not None:
            return self.openings
        return tuple(Opening(start, ()) for start in range(engine.get_game(self.game).openings))
