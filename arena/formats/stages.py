"""The stages of a Swiss, knockout or staged tournament, and the rounds
paired in them, as the tournament file gives them and ``tournament.json``
keeps them.  One validation (:func:`stage_problem`) serves the tournament
file's reader and ``tournament.json``'s, so the two never disagree on what
a stage may be."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = ["ADAPTIVE_DEFAULTS", "BYE_SCORES", "MAX_GAMES_PER_MATCH", "MAX_STAGE_ROUNDS", "STAGE_FORMATS", "STAGE_NAMES", "Pairing", "Stage",
           "StageEntry", "pairing_problem", "stage_problem"]

#: Bounds of a stage: a tournament.json is input too, and a Swiss of a
#: billion rounds or a match of a billion game pairs would exhaust memory.
MAX_STAGE_ROUNDS = 10_000
MAX_GAMES_PER_MATCH = 100
MAX_FIELD = 100_000

#: The formats a stage may have.
STAGE_FORMATS = ("round-robin", "swiss", "knockout", "adaptive")
#: An adaptive stage's stop rule when the file gives no ``settle:`` (see :mod:`arena.formats.adaptive`).
ADAPTIVE_DEFAULTS = {"confidence": 0.95, "within_elo": 20.0}
#: The most games an adaptive stage may be given (``max_games``).
MAX_ADAPTIVE_GAMES = 10**8
#: Each stage format's name in a sentence or a title.
STAGE_NAMES = {"round-robin": "round-robin", "swiss": "Swiss", "knockout": "knockout", "adaptive": "adaptive"}
#: What a Swiss bye scores, per game of the game pair it stands for (``bye:`` in a tournament file).
BYE_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}


@dataclass(frozen=True)
class Stage:
    """One stage of a tournament, as the file gives it."""

    format: str
    #: Swiss and round-robin: the rounds; a knockout's follow from its field.
    rounds: int = 1
    #: A later stage: the number of best bots of the stage before that play it.
    top: int | None = None
    #: Knockout: game pairs a match has, and the most it adds while tied.
    games_per_match: int = 1
    tiebreak_pairs: int = 3
    #: Swiss: what a bye scores (see :data:`BYE_SCORES`).
    bye: str = "win"
    #: Adaptive: the stop rule (``settle:``), each adjacent pair down to place
    #: ``settle_top`` (all: None) separated or tied within ``within_elo`` at
    #: ``confidence``; and the games it may play at most.
    confidence: float = ADAPTIVE_DEFAULTS["confidence"]
    within_elo: float = ADAPTIVE_DEFAULTS["within_elo"]
    settle_top: int | None = None
    max_games: int = 0

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"format": self.format}
        if self.format in ("swiss", "round-robin"):
            entry["rounds"] = self.rounds
        if self.top is not None:
            entry["top"] = self.top
        if self.format == "knockout":
            entry |= {"games_per_match": self.games_per_match, "tiebreak_pairs": self.tiebreak_pairs}
        if self.format == "swiss":
            entry["bye"] = self.bye
        if self.format == "adaptive":
            entry["settle"] = {"confidence": self.confidence, "within_elo": self.within_elo, "top": self.settle_top}
            entry["max_games"] = self.max_games
        return entry


class _Settle(msgspec.Struct, frozen=True):
    """An adaptive stage's stop rule as ``tournament.json`` holds it (``settle``)."""

    confidence: float = ADAPTIVE_DEFAULTS["confidence"]
    within_elo: float = ADAPTIVE_DEFAULTS["within_elo"]
    top: int | None = None


class StageEntry(msgspec.Struct, frozen=True):
    """A stage as ``tournament.json`` holds it (:meth:`Stage.to_json`): msgspec
    checks its types as it decodes the file, :meth:`stage` its bounds."""

    format: str
    rounds: int = 1
    top: int | None = None
    games_per_match: int = 1
    tiebreak_pairs: int = 3
    bye: str = "win"
    settle: _Settle | None = None
    max_games: int = 0

    def stage(self) -> Stage:
        """The stage; ``ValueError`` when :func:`stage_problem` finds one."""
        settle = self.settle or _Settle()
        stage = Stage(self.format, self.rounds, self.top, self.games_per_match, self.tiebreak_pairs, self.bye,
                      settle.confidence, settle.within_elo, settle.top, self.max_games)
        problem = stage_problem(stage)
        if problem is not None:
            raise ValueError(f"not a stage ({problem[0]}: {problem[1]})")
        return stage


@dataclass(frozen=True)
class Pairing:
    """One round as it was paired: its number counts through the stages
    (a knockout after a 7-round Swiss starts at round 8)."""

    round: int
    stage: int
    #: Each pair's bots in the order of the pairing; a knockout's in bracket
    #: order, a bye as ``(bot, None)``.
    pairs: tuple[tuple[str, str | None], ...]
    #: Swiss: the bot with the bye.
    byes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "stage": self.stage, "pairs": [list(p) for p in self.pairs], "byes": list(self.byes)}


def stage_problem(stage: Stage, field_size: int | None = None) -> tuple[str, str] | None:
    """What is wrong with ``stage`` as (key, problem), or None.  With
    ``field_size``, the bots of the stage before (of the tournament, for the
    first stage), ``top`` and a Swiss's rounds are checked against it too."""
    if stage.format not in STAGE_FORMATS:
        return "format", f"unknown stage format {stage.format!r}; known: {', '.join(STAGE_FORMATS)}"
    if stage.bye not in BYE_SCORES:
        return "bye", f"must be one of {', '.join(BYE_SCORES)}, got {stage.bye!r}"
    if not 0 < stage.rounds <= MAX_STAGE_ROUNDS:
        return "rounds", f"must be from 1 to {MAX_STAGE_ROUNDS}, got {stage.rounds}"
    if not 1 <= stage.games_per_match <= MAX_GAMES_PER_MATCH:
        return "games_per_match", f"must be from 1 to {MAX_GAMES_PER_MATCH}, got {stage.games_per_match}"
    if not 0 <= stage.tiebreak_pairs <= MAX_GAMES_PER_MATCH:
        return "tiebreak_pairs", f"must be from 0 to {MAX_GAMES_PER_MATCH}, got {stage.tiebreak_pairs}"
    if stage.top is not None and not 2 <= stage.top <= (field_size or MAX_FIELD):
        return "top", (f"must be from 2 to the {field_size} bots the stage before has, got {stage.top}"
                       if field_size else f"must be from 2 to {MAX_FIELD}, got {stage.top}")
    played_by = stage.top or field_size
    if stage.format == "adaptive":
        problem = _adaptive_problem(stage, played_by)
        if problem is not None:
            return problem
    if played_by is not None and stage.format == "swiss" and stage.rounds >= played_by:
        return "rounds", (f"{played_by} bots can play at most {played_by - 1} Swiss rounds (by then each "
                          f"has met every other, as in a round-robin), got {stage.rounds}")
    return None


def _adaptive_problem(stage: Stage, played_by: int | None) -> tuple[str, str] | None:
    if not 0.5 < stage.confidence < 1:  # also refuses NaN
        return "settle", f"confidence: must be between 0.5 and 1 (exclusive), got {stage.confidence}"
    if not 0 <= stage.within_elo <= 1000:
        return "settle", f"within_elo: must be from 0 to 1000, got {stage.within_elo}"
    if stage.settle_top is not None and not 1 <= stage.settle_top <= (played_by or MAX_FIELD):
        return "settle", f"top: must be from 1 to the {played_by or MAX_FIELD} bots the stage has, got {stage.settle_top}"
    if not 2 <= stage.max_games <= MAX_ADAPTIVE_GAMES:
        return "max_games", f"must be from 2 to {MAX_ADAPTIVE_GAMES:,}, got {stage.max_games}"
    return None


def pairing_problem(pairing: Pairing, stages: int) -> str | None:
    """What is wrong with ``pairing`` (``round <n> ...``), or None: a stage
    the tournament does not have, a bot paired with itself, a bot twice in
    the round (in two pairs, or paired and given a bye).  A hand-edited
    pairing is input: one such would play a game against itself, or two
    games of one bot at once.  (A bot no longer among the bots is not one:
    it left, and its matches are walkovers.)"""
    where = f"round {pairing.round}"
    if not 1 <= pairing.stage <= stages:
        return f"{where} is of stage {pairing.stage}, the tournament has {stages}"
    seen: set[str] = set()
    for bot in (*(b for pair in pairing.pairs for b in pair), *pairing.byes):
        if bot is None:  # a knockout's bye
            continue
        if bot in seen:
            pairs = [f"{a!r} vs {b!r}" for a, b in pairing.pairs if bot in (a, b)]
            if any(a == b for a, b in pairing.pairs if a == bot):
                return f"{where} pairs {bot!r} with itself"
            byes = " and a bye" if bot in pairing.byes else ""
            return f"{where} pairs {bot!r} twice ({', '.join(pairs[:2])}{byes})"
        seen.add(bot)
    return None

