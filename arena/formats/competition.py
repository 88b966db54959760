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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal

import msgspec

import engine
from arena.formats.sprt_config import SprtConfig
from arena.formats.stages import MAX_FIELD, Stage, StageEntry
from arena.game.openings import Opening, suite_digest

__all__ = ["FIXED_FORMATS", "FORMATS", "GAME_IDS", "MAX_SUITE", "RANKINGS", "STAGED", "BotName", "Competition",
           "CompetitionEntry", "Rules", "Unsaid"]

#: The formats whose schedule is fixed in advance.
FIXED_FORMATS = ("round-robin", "gauntlet", "reference")
#: The tournament seeds a file may give: what ``tournament.json`` holds (msgspec's 64-bit integers).
SEEDS = range(-(1 << 63), 1 << 63)

#: The formats a tournament file may name (``stages:`` is the staged one).
FORMATS = (*FIXED_FORMATS, "swiss", "knockout", "adaptive")
#: The format of a tournament given as ``stages:``.
STAGED = "stages"
#: How game ids name a pair (see :func:`arena.formats.schedule.make_schedule`).
GAME_IDS = ("names", "positions")
#: The most openings a suite of ``tournament.json`` may hold.
MAX_SUITE = 100_000
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
    doc); a new setting of the schedule is a field here, with its key in
    :meth:`to_json` and its type and check in :class:`CompetitionEntry`."""

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

    def to_json(self, unsaid: Unsaid | None = None) -> dict[str, Any]:
        """As ``tournament.json`` holds it: a key each at its top level (the
        rules' too), and null, or the suite without its moves, where
        ``unsaid`` says the file it was read from left them out."""
        unsaid = unsaid or Unsaid()
        suite_id = unsaid.suite or self.suite_id
        return {
            "game": self.game,
            "seed": None if unsaid.seed else self.seed,
            "format": None if unsaid.format else self.format,
            "rounds": self.rounds,
            # (The SPRT is not part of what identifies the games, but a resumed
            # test must be the same test: a run refuses other bounds; see the plan.)
            **self.rules.to_json(),
            "game_ids": None if unsaid.game_ids else self.game_ids,
            "openings": None if suite_id is None else {
                "count": suite_id[0], "digest": suite_id[1],
                **({} if unsaid.suite is not None or self.openings is None else
                   {"suite": [[opening.start, list(opening.moves)] for opening in self.openings]}),
            },
            "stages": [stage.to_json() for stage in self.stages],
        }


@dataclass(frozen=True)
class Unsaid:
    """What a ``tournament.json`` leaves out of its competition: an older
    file, written before a key existed, or one written by hand.  Its
    :class:`Competition` holds the default in each such place;
    :meth:`arena.results.meta.TournamentMeta.rebuilt` fills what it can."""

    #: No seed, or no format (a file written by hand): no schedule can be
    #: rebuilt, and the games are ranked as they are.
    seed: bool = False
    format: bool = False
    #: No ``game_ids`` (before 0.2): the games played named pairs by position.
    game_ids: bool = False
    #: The suite's size and digest without its moves (a file written before
    #: they were kept): the moves are read from the records.
    suite: tuple[int, str] | None = None


#: A bot's name (or version) as ``tournament.json`` may hold it.
BotName = Annotated[str, msgspec.Meta(max_length=100)]
#: An opening suite's moves as ``tournament.json`` holds them: ``[start, [move, ...]]`` each.
_SuiteMoves = tuple[tuple[int, Annotated[tuple[Annotated[str, msgspec.Meta(max_length=20)], ...],
                                         msgspec.Meta(max_length=1000)]], ...]


class _OpeningsEntry(msgspec.Struct, frozen=True):
    """``openings`` in ``tournament.json``: the suite's size and digest, and
    its moves (none in a file written before they were kept)."""

    count: Annotated[int, msgspec.Meta(ge=1, le=MAX_SUITE)]
    digest: Annotated[str, msgspec.Meta(max_length=100)]
    suite: Annotated[_SuiteMoves, msgspec.Meta(max_length=MAX_SUITE)] | None = None

    def openings(self, game: str) -> tuple[Opening, ...] | None:
        """The suite; None when the file holds no moves.  ``ValueError`` for
        moves that are not the suite the count and the digest say."""
        if self.suite is None:
            return None
        if len(self.suite) != self.count:
            raise ValueError(f"openings.suite: {len(self.suite)} openings, the count says {self.count}")
        starts = engine.get_game(game).openings
        if not all(0 <= start < starts for start, _ in self.suite):
            raise ValueError(f"openings.suite: a start must be from 0 to {starts - 1}")
        suite = tuple(Opening(start, moves) for start, moves in self.suite)
        if suite_digest(suite) != self.digest:
            raise ValueError("openings: the suite's moves do not match its digest")
        return suite


class CompetitionEntry(msgspec.Struct, frozen=True):
    """The keys of :meth:`Competition.to_json` (the rules' too) as
    ``tournament.json`` holds them, at its top level: msgspec checks each
    key's type and bounds as it decodes the file (untrusted), and
    :meth:`competition` what no type says.  A key missing from a file
    written before it existed takes its default; a new setting is a field
    here too."""

    game: str
    seed: Annotated[int, msgspec.Meta(ge=SEEDS.start, le=SEEDS.stop - 1)] | None = None
    format: Literal[FORMATS + (STAGED,)] | None = None  # type: ignore[valid-type]
    rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_FIELD)] = 1
    reference: tuple[BotName, ...] | None = None
    #: Any text: a rule a later version added reads as the default.
    ranking: str | None = None
    withdraw_after_crashes: Annotated[int, msgspec.Meta(ge=1, le=10**6)] | None = None
    withdrawn: tuple[BotName, ...] | None = None
    disqualified: tuple[BotName, ...] | None = None
    sprt: SprtConfig | None = None
    #: Any text: an unknown scheme reads as unsaid.
    game_ids: str | None = None
    openings: _OpeningsEntry | None = None
    stages: tuple[StageEntry, ...] | None = None

    def competition(self, names: Sequence[str]) -> tuple[Competition, Unsaid]:
        """The competition of ``names``, and what the file left out;
        ``ValueError``, one line naming the key, for what no type says:
        an unknown game, stages that do not go with the format, a reference
        bot not among ``names``, a suite other than its digest says."""
        if self.game not in engine.GAMES:
            raise ValueError(f"game: must be one of {', '.join(engine.GAMES)}, got {self.game[:60]!r}")
        stages = []
        for i, entry in enumerate(self.stages or ()):
            try:
                stages.append(entry.stage())
            except ValueError as exc:
                raise ValueError(f"stages[{i}]: {exc}") from None
        if self.format is not None and bool(stages) != (self.format in ("swiss", "knockout", "adaptive", STAGED)):
            raise ValueError(f"stages: {'missing for' if not stages else 'do not go with'} format {self.format}")
        if not set(self.reference or ()) <= set(names):
            raise ValueError("reference: names a bot that is not among the bots")
        suite = None if self.openings is None else self.openings.openings(self.game)
        rules = Rules(ranking=self.ranking if self.ranking in RANKINGS else RANKINGS[0], sprt=self.sprt,
                      reference=self.reference or (), withdraw_after_crashes=self.withdraw_after_crashes,
                      withdrawn=self.withdrawn or (), disqualified=self.disqualified or ())
        game_ids = self.game_ids if self.game_ids in GAME_IDS else None
        competition = Competition(
            game=self.game, seed=self.seed or 0, format=self.format or FORMATS[0], names=tuple(names),
            rounds=self.rounds, openings=suite, game_ids=game_ids or GAME_IDS[0], stages=tuple(stages), rules=rules,
        )
        unsaid = Unsaid(seed=self.seed is None, format=self.format is None, game_ids=game_ids is None,
                        suite=(self.openings.count, self.openings.digest)
                        if self.openings is not None and suite is None else None)
        return competition, unsaid
