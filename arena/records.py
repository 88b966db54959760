"""The record of one played game: what the referee returns, what the results
store writes as one JSON line, and what ratings and standings read back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["MoveRecord", "GameRecord"]


@dataclass(slots=True)
class MoveRecord:
    move: str
    #: Time charged to the bot for this move, in milliseconds.
    ms: float
    #: The bot's free-form ``info`` object, when it sent one.
    info: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"move": self.move, "ms": self.ms}
        if self.info is not None:
            data["info"] = self.info
        return data


@dataclass(slots=True)
class GameRecord:
    """One finished game.

    ``players`` maps colour to bot name, in seat order.  ``winner`` is a colour or
    ``None`` for a draw.  ``reason`` is a rule reason (``alignment``,
    ``exhausted``, ``blocked``) or a forfeit reason (``timeout``,
    ``illegal_move``, ...); for a forfeit, ``forfeit_by`` names the colour that
    forfeited and ``detail`` says what it did in plain words.  The game starts
    from start position ``opening`` after ``opening_moves`` (the opening
    suite's, not the bots'); ``moves`` are the bots' moves from there.
    ``pair`` is the schedule's game pair (``None`` in records written before
    game pairs existed).
    """

    game_id: str
    game: str
    players: dict[str, str]
    seed: int
    opening: int
    time_control: dict[str, int]
    moves: list[MoveRecord] = field(default_factory=list)
    winner: str | None = None
    reason: str = ""
    scores: dict[str, int] | None = None
    forfeit_by: str | None = None
    detail: str | None = None
    started_at: str = ""
    ended_at: str = ""
    #: Position in the tournament's schedule; ratings fold games in this order.
    index: int = 0
    round: int = 1
    opening_moves: list[str] = field(default_factory=list)
    pair: int | None = None

    @property
    def colors(self) -> list[str]:
        return list(self.players)

    @property
    def loser(self) -> str | None:
        if self.winner is None:
            return None
        return next(c for c in self.players if c != self.winner)

    def name_of(self, color: str | None) -> str | None:
        return None if color is None else self.players[color]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["moves"] = [m.to_json() for m in self.moves]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        fields = dict(data)
        fields["moves"] = [MoveRecord(**m) for m in data.get("moves", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in fields.items() if k in known})
