"""One game in and out: the :class:`GameSpec` that asks the referee for a
game, and the :class:`GameRecord` of the played game: what the referee
returns, what the results store writes as one JSON line, and what ratings
and standings read back."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from arena.bot.protocol import MAX_DETAIL_CHARS, clean_text, strict_dumps

__all__ = ["GameSpec", "MoveRecord", "GameRecord", "timestamp"]


def timestamp() -> str:
    """Now, as ``started_at`` and ``ended_at`` hold it (UTC, ISO 8601, milliseconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")

@dataclass(frozen=True)
class GameSpec:
    """One game to play.  ``players`` holds bot names by seat (seat 0 moves
    first); ``index`` is the position in the schedule, the order in which
    ratings fold results; ``seed`` is handed to the engine and the referee.
    The game starts from start position ``opening`` after ``opening_moves``;
    ``pair`` numbers its game pair (the two games of one opening with colours
    swapped) across the schedule, from 0.  ``versions`` names the version of
    each player (by seat), as :func:`arena.bot.spec.bot_version` gives it."""

    index: int
    game_id: str
    game: str
    round: int
    players: tuple[str, str]
    opening: int
    seed: int
    pair: int = 0
    opening_moves: tuple[str, ...] = ()
    #: The version of each bot (by seat) that is to play it; empty when nobody asked.
    versions: tuple[str, ...] = ()


@dataclass(slots=True)
class MoveRecord:
    move: str
    #: Time charged to the bot for this move, in milliseconds.
    ms: float
    #: The bot's free-form ``info`` object, when it sent one.
    info: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MoveRecord:
        move, ms, info = data.get("move"), data.get("ms"), data.get("info")
        _check(isinstance(move, str), "move", move)
        _check(_is_number(ms) and ms >= 0, "move time", ms)
        _check(info is None or isinstance(info, dict), "move info", info)
        return cls(move, ms, info)

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
    #: The version of the bot that played each colour (``None`` in records
    #: written before versions were kept).
    versions: dict[str, str] | None = None
    #: The record's line as ``to_line`` made it or ``from_line`` read it, so
    #: that it is encoded once (in the worker that played the game) and the
    #: store writes those very bytes.  Not part of the record's JSON.
    _line: bytes | None = field(default=None, init=False, repr=False, compare=False)

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

    def end_by_forfeit(self, seat: int, reason: str, detail: str) -> None:
        """The player in ``seat`` (0 or 1, the order of ``players``) lost by
        ``reason``.  ``detail`` quotes what a bot sent or wrote, so it is kept
        as one bounded, printable line."""
        colors = self.colors
        self.winner, self.reason, self.forfeit_by = colors[1 - seat], reason, colors[seat]
        self.detail = clean_text(detail, MAX_DETAIL_CHARS)

    def end_by_rules(self, winner_seat: int | None, reason: str, scores: Sequence[int] | None) -> None:
        """The game ended by the rules (an engine ``Outcome``'s fields)."""
        colors = self.colors
        self.winner = None if winner_seat is None else colors[winner_seat]
        self.reason = reason
        if scores is not None:
            self.scores = dict(zip(colors, scores))

    def to_json(self) -> dict[str, Any]:
        # Built by hand (dataclasses.asdict deep-copies every move); the keys
        # keep the order of the fields, as asdict gave them.
        return {
            "game_id": self.game_id,
            "game": self.game,
            "players": self.players,
            "seed": self.seed,
            "opening": self.opening,
            "time_control": self.time_control,
            "moves": [m.to_json() for m in self.moves],
            "winner": self.winner,
            "reason": self.reason,
            "scores": self.scores,
            "forfeit_by": self.forfeit_by,
            "detail": self.detail,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "index": self.index,
            "round": self.round,
            "opening_moves": self.opening_moves,
            "pair": self.pair,
            "versions": self.versions,
        }

    def to_line(self) -> bytes:
        """The record as one line of ``games.jsonl`` (compact strict JSON, UTF-8,
        ending in a newline); encoded on the first call only.  A bot's
        ``info`` that strict JSON cannot hold (NaN, Infinity, nesting deeper
        than the encoder goes) is left out of the record."""
        if self._line is None:
            try:
                text = strict_dumps(self.to_json())
            except (ValueError, RecursionError):
                for move in self.moves:
                    if move.info is not None and not _encodable(move.info):
                        move.info = None
                text = strict_dumps(self.to_json())
            self._line = (text + "\n").encode()
        return self._line

    @classmethod
    def from_line(cls, line: bytes) -> GameRecord:
        """The record a ``to_line`` line holds, keeping the line itself.

        For lines a worker of this arena made with ``to_line`` (bots never
        write them): they are not checked again, unlike what the store reads
        from disk (``from_json``), as the driver reads one for every game."""
        data = json.loads(line)
        data["moves"] = [MoveRecord(m["move"], m["ms"], m.get("info")) for m in data["moves"]]
        record = cls(**data)
        record._line = line if line.endswith(b"\n") else line + b"\n"
        return record

    @classmethod
    def from_json(cls, data: Any) -> GameRecord:
        """The record in ``data`` (a line of ``games.jsonl``, parsed).  Raises
        ``ValueError`` naming the first field whose value cannot be right, so
        that a damaged line is skipped rather than breaking the ratings."""
        if not isinstance(data, dict):
            raise ValueError(f"a record is a JSON object, not {type(data).__name__}")
        fields = {k: v for k, v in data.items() if k in _INIT_FIELDS}
        moves = fields.get("moves", [])
        _check(isinstance(moves, list) and all(isinstance(m, dict) for m in moves), "moves", moves)
        fields["moves"] = [MoveRecord.from_json(m) for m in moves]
        record = cls(**fields)
        record._validate()
        return record

    def _validate(self) -> None:
        for name in ("game_id", "game", "reason", "started_at", "ended_at"):
            _check(isinstance(getattr(self, name), str), name, getattr(self, name))
        for name in ("seed", "opening", "index", "round"):
            value = getattr(self, name)
            _check(isinstance(value, int) and not isinstance(value, bool) and value >= 0, name, value)
        players = self.players
        _check(
            isinstance(players, dict) and len(players) == 2
            and all(isinstance(k, str) and isinstance(v, str) for k, v in players.items()),
            "players", players,
        )
        _check(self.winner is None or self.winner in players, "winner", self.winner)
        _check(self.forfeit_by is None or self.forfeit_by in players, "forfeit_by", self.forfeit_by)
        if self.forfeit_by is not None:
            _check(self.winner is not None and self.winner != self.forfeit_by, "forfeit_by",
                   self.forfeit_by, "the winner of a forfeit is the other colour")
        _check(self.detail is None or isinstance(self.detail, str), "detail", self.detail)
        _check(
            self.versions is None or (isinstance(self.versions, dict) and set(self.versions) == set(players)
                                      and all(isinstance(v, str) for v in self.versions.values())),
            "versions", self.versions,
        )
        _check(isinstance(self.time_control, dict), "time_control", self.time_control)
        _check(
            self.scores is None or (isinstance(self.scores, dict) and set(self.scores) <= set(players)
                                    and all(_is_number(v) for v in self.scores.values())),
            "scores", self.scores,
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check(ok: bool, name: str, value: Any, why: str = "") -> None:
    if not ok:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise ValueError(f"bad {name} {shown}" + (f": {why}" if why else ""))


_INIT_FIELDS = frozenset(name for name, f in GameRecord.__dataclass_fields__.items() if f.init)


def _encodable(value: Any) -> bool:
    try:
        strict_dumps(value)
    except (ValueError, RecursionError):
        return False
    return True
