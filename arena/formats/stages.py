"""The stages of a Swiss, knockout or staged tournament, and the rounds
paired in them, as the tournament file gives them and ``tournament.json``
keeps them.  One validation (:func:`stage_problem`) serves the tournament
file's reader and ``tournament.json``'s, so the two never disagree on what
a stage may be."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BYE_SCORES", "MAX_GAMES_PER_MATCH", "MAX_STAGE_ROUNDS", "STAGE_FORMATS", "Pairing", "Stage",
           "pairings_from_json", "stage_problem"]

#: Bounds of a stage: a tournament.json is input too, and a Swiss of a
#: billion rounds or a match of a billion game pairs would exhaust memory.
MAX_STAGE_ROUNDS = 10_000
MAX_GAMES_PER_MATCH = 100
MAX_FIELD = 100_000

#: The formats a stage may have.
STAGE_FORMATS = ("round-robin", "swiss", "knockout")
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

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"format": self.format}
        if self.format != "knockout":
            entry["rounds"] = self.rounds
        if self.top is not None:
            entry["top"] = self.top
        if self.format == "knockout":
            entry |= {"games_per_match": self.games_per_match, "tiebreak_pairs": self.tiebreak_pairs}
        if self.format == "swiss":
            entry["bye"] = self.bye
        return entry

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Stage:
        """A stage as ``tournament.json`` holds it; ``ValueError`` when it is not one."""
        try:
            stage = cls(
                format=str(entry["format"]), rounds=int(entry.get("rounds", 1)),
                top=None if entry.get("top") is None else int(entry["top"]),
                games_per_match=int(entry.get("games_per_match", 1)), tiebreak_pairs=int(entry.get("tiebreak_pairs", 3)),
                bye=str(entry.get("bye", "win")),
            )
        except (KeyError, TypeError, AttributeError, OverflowError):
            raise ValueError(f"not a stage: {str(entry)[:200]}") from None
        problem = stage_problem(stage)
        if problem is not None:
            raise ValueError(f"not a stage ({problem[0]}: {problem[1]}): {str(dict(entry))[:200]}")
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
    if played_by is not None and stage.format == "swiss" and stage.rounds >= played_by:
        return "rounds", (f"{played_by} bots can play at most {played_by - 1} Swiss rounds (by then each "
                          f"has met every other, as in a round-robin), got {stage.rounds}")
    return None


def pairings_from_json(entries: Any) -> list[Pairing]:
    """The pairings ``tournament.json`` holds; ``ValueError`` when they are not."""
    if not isinstance(entries, list):
        raise ValueError("pairings must be a list")
    out = []
    for entry in entries:
        try:
            pairs = tuple((a, b) for a, b in _list(entry["pairs"]))
            byes = tuple(_list(entry.get("byes", [])))
            pairing = Pairing(int(entry["round"]), int(entry["stage"]), pairs, byes)
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"pairing {len(out) + 1} is not one the arena writes") from None
        # Names as the arena writes them: a bot's is a string, a bye's partner None.
        if not all(isinstance(a, str) and (b is None or isinstance(b, str)) for a, b in pairs) \
                or not all(isinstance(b, str) for b in byes):
            raise ValueError(f"pairing {len(out) + 1} names a bot by something else than a string")
        out.append(pairing)
    if [p.round for p in out] != list(range(1, len(out) + 1)):
        raise ValueError("pairings must number their rounds 1, 2, 3, ...")
    return out


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"not a list: {value!r}")
    return value


