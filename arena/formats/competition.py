"""What decides a tournament's games and its ranking, wherever it is read from.

:class:`Rules` is the one record of the settings that decide which games are
played and how they rank, beyond the schedule itself: the ranking rule, the
SPRT, the reference bots, and the bots withdrawn or disqualified.  The
tournament file's reader makes it (:func:`arena.run.config.parse_config`),
``tournament.json`` holds it (:class:`arena.results.meta.TournamentMeta`),
and the standings take it whole (:func:`arena.results.standings.compute_standings`).

:class:`Competition` is the one record of everything that decides the games
and the ranking: the game, the seed, the format, its rounds, stages and
openings, the bots' names, and those :class:`Rules`.  The tournament file's
reader makes it once (:class:`arena.run.config.TournamentConfig` holds it as
``competition``), ``tournament.json`` is it written out
(:class:`arena.results.meta.TournamentMeta` holds it whole, and what an older
file leaves out beside it), and every function of this package takes it, so
a schedule rebuilt from the directory is the one the file makes, with no
field copied from one record to another on the way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import engine
from arena.base.json_checks import listed, mapping, text, whole
from arena.formats.sprt_config import SprtConfig
from arena.formats.stages import Stage
from arena.game.openings import Opening, suite_digest

__all__ = ["FIXED_FORMATS", "FORMATS", "RANKINGS", "STAGED", "Competition", "Rules"]

#: The formats whose schedule is fixed in advance.
FIXED_FORMATS = ("round-robin", "gauntlet", "reference")
#: The formats a tournament file may name (``stages:`` is the staged one).
FORMATS = (*FIXED_FORMATS, "swiss", "knockout", "adaptive")
#: The format of a tournament given as ``stages:``.
STAGED = "stages"
#: The rules that may order the ranking (``ranking:`` in a tournament file);
#: the first is that of a directory written before the key existed.
RANKINGS = ("trueskill", "elo", "points")


@dataclass(frozen=True)
class Rules:
    """The settings that decide the games and the ranking beyond the
    schedule (see the module's doc); a new such setting is a field here."""

    #: The rule that orders the ranking, one of :data:`RANKINGS`.
    ranking: str = RANKINGS[0]
    #: A sequential test between the two bots of a match; None: play every game.
    sprt: SprtConfig | None = None
    #: ``format: reference``: the bots every other bot plays (and only those).
    reference: tuple[str, ...] = ()
    #: A bot that loses this many games in a row by a crash is withdrawn; None: never.
    withdraw_after_crashes: int | None = None
    #: Bots the organiser withdrew: their results stand; not paired again.
    withdrawn: tuple[str, ...] = ()
    #: Bots disqualified: each of their games scores as a loss; not paired again.
    disqualified: tuple[str, ...] = ()

    @property
    def withdraws(self) -> bool:
        """Some bot is, or may be, withdrawn or disqualified: its games are then forfeited unplayed."""
        return self.withdraw_after_crashes is not None or bool(self.withdrawn) or bool(self.disqualified)

    def without_schedule(self) -> Rules:
        """The rules that still hold where no schedule could be rebuilt (every
        readable game is then ranked): the ranking rule and the SPRT."""
        return Rules(ranking=self.ranking, sprt=self.sprt)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], names: Collection[str]) -> Rules:
        """The rules a ``tournament.json`` holds (its keys of :meth:`to_json`;
        a key missing, from a file written before it existed, takes its
        default), checked: the file is untrusted.  ``ValueError``, one line
        naming the key, for a value out of bounds or a bot not among ``names``."""
        bots = {key: tuple(text(name, key, limit=100) for name in listed(data.get(key) or [], key))
                for key in ("reference", "withdrawn", "disqualified")}
        if not set(bots["reference"]) <= set(names):
            raise ValueError("reference: names a bot that is not among the bots")
        ranking = data.get("ranking")
        try:
            sprt = None if not data.get("sprt") else SprtConfig(**mapping(data["sprt"], "sprt"))
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
            raise ValueError(f"sprt: {exc}") from None
        crashes = data.get("withdraw_after_crashes")
        return cls(
            ranking=ranking if ranking in RANKINGS else RANKINGS[0], sprt=sprt, reference=bots["reference"],
            withdraw_after_crashes=None if crashes is None else whole(crashes, "withdraw_after_crashes", 1, 10**6),
            withdrawn=bots["withdrawn"], disqualified=bots["disqualified"],
        )

    def to_json(self) -> dict[str, Any]:
        """As ``tournament.json`` holds it: a key each, at its top level."""
        return {
            "reference": list(self.reference),
            "ranking": self.ranking,
            "withdraw_after_crashes": self.withdraw_after_crashes,
            "withdrawn": list(self.withdrawn),
            "disqualified": list(self.disqualified),
            "sprt": None if self.sprt is None else self.sprt.to_json(),
        }


@dataclass(frozen=True)
class Competition:
    """What decides a tournament's games and its ranking (see the module's
    doc); a new setting of the schedule is a field here."""

    game: str
    seed: int
    #: One of :data:`FORMATS`, or :data:`STAGED`.
    format: str
    #: The bots, in the file's order.
    names: tuple[str, ...]
    #: The rounds of a format fixed in advance.
    rounds: int = 1
    #: The opening suite; None: the game's start positions.
    openings: tuple[Opening, ...] | None = None
    #: How game ids name a pair: ``names``, or ``positions`` (directories written before 0.2).
    game_ids: str = "names"
    #: Swiss, knockout and staged tournaments: their stages (a single format is one stage).
    stages: tuple[Stage, ...] = ()
    #: What else decides the games and the ranking (the reference bots, the bots out of play, ...).
    rules: Rules = Rules()

    @property
    def paired_by_results(self) -> bool:
        """The rounds are paired one by one from the results (Swiss, knockout, stages)."""
        return bool(self.stages)

    @property
    def out_of_play(self) -> frozenset[str]:
        """The bots that play no more games: withdrawn or disqualified."""
        return frozenset(self.rules.withdrawn) | frozenset(self.rules.disqualified)

    @property
    def challenger(self) -> str | None:
        """A gauntlet's first bot, which meets each other bot."""
        return self.names[0] if self.format == "gauntlet" else None

    @cached_property
    def suite_id(self) -> tuple[int, str] | None:
        """What identifies the opening suite: its size and digest (worked out
        once: ``tournament.json`` is written each round); None: the game's start positions."""
        return None if self.openings is None else (len(self.openings), suite_digest(self.openings))

    def suite(self) -> tuple[Opening, ...]:
        """The openings every pairing plays: the suite, else the game's start positions."""
        if self.openings is not None:
            return self.openings
        return tuple(Opening(start, ()) for start in range(engine.get_game(self.game).openings))
