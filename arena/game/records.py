"""One game in and out: the :class:`GameSpec` that asks the referee for a
game, and the :class:`GameRecord` of the played game: what the referee
returns, what the results store writes as one JSON line, and what ratings
and standings read back."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

import msgspec

import engine
from arena.bot.forfeits import FORFEIT_REASONS, MAX_DETAIL_CHARS
from arena.bot.protocol import MAX_INFO_BYTES, MAX_INFO_DEPTH, bound_info, strict_dumps
from arena.base.text import clean_text

__all__ = [
    "GameSpec", "MoveRecord", "GameRecord", "timestamp", "RULE_REASONS", "RESIGNATION", "REASONS", "MAX_RECORD_BYTES", "MAX_ROUND",
    "game_id", "pair_id", "parse_game_id", "schedule_key",
]

#: How a game ends by the rules, as the engines' ``Outcome.reason`` says
#: (OXONO: an alignment, or every piece played; YOXII: the totem blocked).
RULE_REASONS = ("alignment", "exhausted", "blocked")
#: A person's resignation in ``arena play`` (a forfeit no bot can commit).
RESIGNATION = "resign"
#: Every reason a record can give; a record read from disk with another is refused.
REASONS = RULE_REASONS + FORFEIT_REASONS + (RESIGNATION,)

# Bounds on what a record read from disk may hold (the arena writes far
# less): a hand-edited or forged line must not make a reader build a huge
# schedule, print a huge table or recurse without end.
#: The longest game id and bot name (the arena's are at most 64 characters
#: and a bot's ``ready`` name 100).
MAX_ID_CHARS = 200
MAX_NAME_CHARS = 100
#: The highest round and schedule index (a match of four million games has a million rounds).
MAX_ROUND = 1_000_000
MAX_INDEX = 1 << 31
#: Seeds are below 2**31; the protocol hands them to bots as JSON numbers.
MAX_SEED = 1 << 63
#: The longest line of ``games.jsonl`` read (the arena's longest record, a
#: game of 36 moves each with an ``info`` of 4096 bytes, is under 200 KiB).
MAX_RECORD_BYTES = 1 << 20
#: The longest move text the referee accepts, and the longest time stamp.
MAX_MOVE_CHARS = 32
MAX_STAMP_CHARS = 64
#: The longest host name (a DNS name is at most 253 characters) and Ray node id (56 hex digits in Ray 2.60).
MAX_HOST_CHARS = 253
MAX_NODE_ID_CHARS = 128
#: The largest speed ratio or clock scale a record may hold, and the most a
#: clock is scaled by (a node 100 times slower than the driver's machine is no place for a game).
MAX_RATIO = 100.0


def pair_id(a: str, b: str) -> str:
    """The part of a game id that names its pair: ``a~b``, the names in
    order (``~`` cannot occur in a bot's name, so the id is unambiguous)."""
    return f"{a}~{b}"


def game_id(round_: int, pair: str, k: int) -> str:
    """A game's id, ``r<round>-<pair>-g<k>``: the schedule names its games so
    (``pair`` from :func:`pair_id`, or ``p<n>`` in directories of 0.1), and
    the readers of a Swiss's or a knockout's rounds find them so."""
    return f"r{round_}-{pair}-g{k}"


def parse_game_id(text: str) -> tuple[int, str, str, int] | None:
    """The round, the two bots (in name order) and ``k`` of a game id
    :func:`game_id` made of a pair by names, or None for any other text."""
    parsed = _GAME_ID.fullmatch(text)
    if parsed is None or not parsed[2] < parsed[3]:
        return None
    return int(parsed[1]), parsed[2], parsed[3], int(parsed[4])


#: What :func:`game_id` makes of a pair by names: numbers in ASCII digits without leading zeros, one ``~``
#: (a first read of a league parses every record's id: one match, not partitions and the id made again).
_GAME_ID = re.compile(r"r(0|[1-9][0-9]*)-([^~]+)~([^~]+)-g(0|[1-9][0-9]*)")


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


class MoveRecord(msgspec.Struct):
    """One move of a record.  A msgspec ``Struct``: :meth:`GameRecord.from_bytes`
    decodes a line's moves straight into these (tens of millions in a
    league: as dataclasses they cost twice as much to make)."""

    move: str
    #: Time charged to the bot for this move, in milliseconds.
    ms: int | float
    #: The bot's free-form ``info`` object, when it sent one.
    info: dict[str, Any] | None = None
    #: A remote bot's round trip to the arena as last measured when it moved, in milliseconds.
    latency_ms: int | float | None = None

    def check(self) -> None:
        """``ValueError`` naming what is wrong with this move read from disk
        (:func:`_check_moves` checks them all at once)."""
        move, ms, info, latency = self.move, self.ms, self.info, self.latency_ms
        if not (type(move) is str and 0 < len(move) <= MAX_MOVE_CHARS and move.isprintable()):
            _check(False, "move", move)
        if not (type(ms) in (int, float) and 0 <= ms < math.inf):  # no NaN, no boolean
            _check(False, "move time", ms)
        if not (latency is None or (type(latency) in (int, float) and 0 <= latency < math.inf)):
            _check(False, "move latency_ms", latency)
        if info is not None:
            # The bounds the referee holds a bot's info to (see bound_info).
            bounded = bound_info(info)
            if bounded is not info:
                _check(False, "move info", info, (bounded or {}).get("dropped", ""))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"move": self.move, "ms": self.ms}
        if self.info is not None:
            data["info"] = self.info
        if self.latency_ms is not None:
            data["latency_ms"] = self.latency_ms
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
    # Named at every making (a record read from disk must say both: see
    # _REQUIRED), yet kept in their place among the fields: the order of a line's keys.
    winner: str | None = field(kw_only=True)
    reason: str = field(kw_only=True)
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
    #: Each colour's own clock, in ``time_control``'s form, when a bot had
    #: one (time odds); ``None`` when both had ``time_control``, and in
    #: records written before time odds existed.
    time_controls: dict[str, dict[str, int]] | None = None
    #: Where the game was played: ``host``, and a Ray node's ``node_id`` and
    #: ``actor`` number or a local ``worker``'s, and ``nice``, the niceness
    #: its bots started at (Ray's plain ``ray start`` makes it 15), and on
    #: a calibrated cluster ``speed``, the node's over the driver's machine; ``None`` when not
    #: known (records written before it was kept, forfeits the driver
    #: records itself).  Not compared: the same game is the same wherever played.
    played_on: dict[str, str | int | float] | None = field(default=None, compare=False)
    #: The network margin each remote bot's moves were granted in this game
    #: (ms, by colour; see ``network_margin_ms``); ``None`` when no remote bot played.
    network_margin_ms: dict[str, int | float] | None = None
    #: What the file's clocks were multiplied by for this game, the node being
    #: that much slower than the driver's machine (``ray.time_scaling:
    #: speed``): ``time_control`` is the clock it was played at.  ``None``: not scaled.
    time_scale: float | None = None
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

    def is_game(self, seed: int, opening: int, opening_moves: Sequence[str], players: Sequence[str]) -> bool:
        """Whether this record is of the game with this seed, opening (its
        number and moves) and players in seat order: the one comparison of a
        record with the game the schedule names by its id."""
        return (self.seed == seed and self.opening == opening and tuple(self.opening_moves) == tuple(opening_moves)
                and tuple(self.players.values()) == tuple(players))

    def name_of(self, color: str | None) -> str | None:
        return None if color is None else self.players[color]

    def clock_of(self, color: str) -> dict[str, int]:
        """The time control ``color`` played under."""
        return self.time_controls[color] if self.time_controls is not None else self.time_control

    @classmethod
    def for_spec(
        cls, spec: GameSpec, colors: Sequence[str], time_control: dict[str, int],
        seat_controls: Sequence[dict[str, int]] | None = None,
    ) -> GameRecord:
        """The record of ``spec`` before its first move, ``colors`` the
        game's in seat order, with each seat's own clock when there are time
        odds (``seat_controls``); started now."""
        return cls(
            game_id=spec.game_id,
            game=spec.game,
            players={colors[seat]: spec.players[seat] for seat in (0, 1)},
            seed=spec.seed,
            opening=spec.opening,
            time_control=time_control,
            winner=None,
            reason="",
            index=spec.index,
            round=spec.round,
            started_at=timestamp(),
            opening_moves=list(spec.opening_moves),
            pair=spec.pair,
            versions={colors[seat]: spec.versions[seat] for seat in (0, 1)} if spec.versions else None,
            time_controls={colors[seat]: seat_controls[seat] for seat in (0, 1)} if seat_controls else None,
        )

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
        # keep the order of the fields, as asdict gave them.  Without time
        # odds the record is the very line written before they existed.
        data = {
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
        if self.time_controls is not None:
            data["time_controls"] = self.time_controls
        if self.played_on is not None:
            data["played_on"] = self.played_on
        if self.network_margin_ms is not None:
            data["network_margin_ms"] = self.network_margin_ms
        if self.time_scale is not None:
            data["time_scale"] = self.time_scale
        return data

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
        from disk (:meth:`from_bytes`), as the driver reads one for every game."""
        record = _decode(line)
        record._line = line if line.endswith(b"\n") else line + b"\n"
        return record

    @classmethod
    def from_bytes(cls, line: bytes) -> GameRecord:
        """The record on a line of ``games.jsonl`` read from disk: what
        :meth:`from_json` makes of the line parsed, with the same checks and
        the same ``ValueError`` (or none) for every line.  msgspec decodes
        the line straight into the record, its types checked in C (a first
        read of a league spent most of its time in ``json.loads`` and in
        walking its dictionaries); a line it refuses is parsed by Python and
        read by :meth:`from_json`, which says what is wrong, or accepts what
        only Python's reader reads (a byte order mark, NaN in a key no record has)."""
        try:
            record = _decode(line)
        except msgspec.MsgspecError:
            return cls.from_json(json.loads(line))
        record._line = None  # (msgspec fills it like any field: a line must not choose the bytes it is written as)
        return record._checked(plain=_plain(line))

    @classmethod
    def from_json(cls, data: Any) -> GameRecord:
        """The record in ``data`` (a line of ``games.jsonl``, parsed), which
        anyone who could write the file may have forged.  Every field is
        checked (type, range, a known reason, a game the engine knows and
        its colours) and the forfeit's ``detail`` is cleaned, so that what a
        reader prints, ranks or replays is sane.  Raises ``ValueError``
        naming the first field whose value cannot be right (and no other
        exception, whatever ``data`` is), so that a damaged line is skipped
        rather than breaking the ratings."""
        if not isinstance(data, dict):
            raise ValueError(f"a record is a JSON object, not {type(data).__name__}")
        fields = {k: v for k, v in data.items() if k in _INIT_FIELDS}
        for name in _REQUIRED:
            _check(name in fields, name, None, "missing")
        moves = fields.get("moves", [])
        _check(isinstance(moves, list) and all(isinstance(m, dict) for m in moves), "moves", moves)
        fields["moves"] = [MoveRecord(m.get("move"), m.get("ms"), m.get("info"), m.get("latency_ms")) for m in moves]
        return cls(**fields)._checked()

    def _checked(self, *, plain: bool = False) -> GameRecord:
        """This record, read from disk, once its moves and every field are
        checked and its ``detail`` cleaned; ``plain``: msgspec decoded it
        from a line of printable ASCII (see :func:`_surely_valid_moves`)."""
        if not (plain and _surely_valid_moves(self.moves)):
            _check_moves(self.moves)
        if not self._plainly_valid():
            self._validate()
        if self.detail is not None:
            self.detail = clean_text(self.detail, MAX_DETAIL_CHARS)
        return self

    def _plainly_valid(self) -> bool:
        """Whether this record passes :meth:`_validate` as the arena writes
        records: its checks inline, exact types, the rarer fields set aside
        (a first read of a league checks every record: a call a field cost
        a tenth of reading it).  False sends the record to :meth:`_validate`,
        which says what is wrong, if anything."""
        if not (type(self.game) is str and self.game in engine.GAMES):
            return False
        game = engine.get_game(self.game)
        players, winner, versions, opening_moves = self.players, self.winner, self.versions, self.opening_moves
        if type(players) is not dict or list(players) != list(game.colors) or type(opening_moves) is not list:
            return False
        game_id, started, ended, seed, opening, index, round_, pair = (
            self.game_id, self.started_at, self.ended_at, self.seed, self.opening, self.index, self.round, self.pair)
        return (type(game_id) is str and 0 < len(game_id) <= MAX_ID_CHARS and game_id.isprintable()
                and type(started) is str and len(started) <= MAX_STAMP_CHARS and started.isprintable()
                and type(ended) is str and len(ended) <= MAX_STAMP_CHARS and ended.isprintable()
                and type(seed) is int and 0 <= seed < MAX_SEED and type(opening) is int and 0 <= opening < game.openings
                and type(index) is int and 0 <= index < MAX_INDEX and type(round_) is int and 0 <= round_ < MAX_ROUND
                and (pair is None or type(pair) is int and 0 <= pair < MAX_INDEX)
                and all(type(v) is str and 0 < len(v) <= MAX_NAME_CHARS and v.isprintable() for v in players.values())
                and len(opening_moves) <= game.max_game_length and len(self.moves) <= game.max_game_length
                and (not opening_moves
                     or all(type(m) is str and 0 < len(m) <= MAX_MOVE_CHARS and m.isprintable() for m in opening_moves))
                and self.forfeit_by is None and type(self.reason) is str and self.reason in RULE_REASONS
                and (winner is None or type(winner) is str and winner in players)
                and self.detail is None and self.time_controls is None and self.scores is None
                and self.network_margin_ms is None and self.time_scale is None
                and (versions is None or type(versions) is dict and versions.keys() == players.keys()
                     and all(type(v) is str and len(v) <= MAX_NAME_CHARS and v.isprintable() for v in versions.values()))
                and (self.played_on is None or _is_place(self.played_on))
                and _is_clock(self.time_control))

    def _validate(self) -> None:
        _check(_is_text(self.game_id, MAX_ID_CHARS, empty=False), "game_id", self.game_id)
        # (The reasons in words are built only for a bad record: every record is read here.)
        if not (isinstance(self.game, str) and self.game in engine.GAMES):
            _check(False, "game", self.game, f"not one of {', '.join(engine.GAMES)}")
        game = engine.get_game(self.game)
        for name in ("started_at", "ended_at"):
            _check(_is_text(getattr(self, name), MAX_STAMP_CHARS), name, getattr(self, name))
        for name, top in (("seed", MAX_SEED), ("opening", game.openings), ("index", MAX_INDEX), ("round", MAX_ROUND)):
            value = getattr(self, name)
            if not _is_int(value, top):
                _check(False, name, value, f"a whole number from 0 to {top - 1}")
        _check(self.pair is None or _is_int(self.pair, MAX_INDEX), "pair", self.pair)
        players = self.players
        if not (isinstance(players, dict) and list(players) == list(game.colors)
                and all(_is_text(v, MAX_NAME_CHARS, empty=False) for v in players.values())):
            _check(False, "players", players, f"the {game.name} colours {' then '.join(game.colors)}, each with a bot's name")
        _check(
            isinstance(self.opening_moves, list) and len(self.opening_moves) <= game.max_game_length
            and all(_is_text(m, MAX_MOVE_CHARS, empty=False) for m in self.opening_moves),
            "opening_moves", self.opening_moves,
        )
        if len(self.moves) > game.max_game_length:
            _check(False, "moves", f"{len(self.moves)} moves", f"a game of {game.name} has at most {game.max_game_length}")
        if not (isinstance(self.reason, str) and self.reason in REASONS):
            _check(False, "reason", self.reason, f"not a known reason ({', '.join(REASONS)})")
        # A colour is text: ``in`` a dict would raise for a list (unhashable).
        _check(self.winner is None or (isinstance(self.winner, str) and self.winner in players), "winner", self.winner)
        _check(self.forfeit_by is None or (isinstance(self.forfeit_by, str) and self.forfeit_by in players),
               "forfeit_by", self.forfeit_by)
        if self.forfeit_by is not None:
            _check(self.winner is not None and self.winner != self.forfeit_by, "forfeit_by",
                   self.forfeit_by, "the winner of a forfeit is the other colour")
        _check((self.forfeit_by is None) == (self.reason in RULE_REASONS), "reason", self.reason,
               "a forfeit names the colour that forfeited, an end by the rules does not")
        _check(self.detail is None or isinstance(self.detail, str), "detail", self.detail)
        _check(
            self.versions is None or (isinstance(self.versions, dict) and set(self.versions) == set(players)
                                      and all(_is_text(v, MAX_NAME_CHARS) for v in self.versions.values())),
            "versions", self.versions,
        )
        _check(_is_clock(self.time_control), "time_control", self.time_control)
        _check(
            self.time_controls is None or (isinstance(self.time_controls, dict) and set(self.time_controls) == set(players)
                                           and all(_is_clock(c) for c in self.time_controls.values())),
            "time_controls", self.time_controls,
        )
        _check(
            self.scores is None or (isinstance(self.scores, dict) and set(self.scores) <= set(players)
                                    and all(_is_number(v) for v in self.scores.values())),
            "scores", self.scores,
        )
        _check(self.played_on is None or _is_place(self.played_on), "played_on", self.played_on)
        margins = self.network_margin_ms
        _check(margins is None or (isinstance(margins, dict) and set(margins) <= set(players)
                                   and all(_is_number(v) and v >= 0 for v in margins.values())),
               "network_margin_ms", margins)
        _check(self.time_scale is None or _is_ratio(self.time_scale), "time_scale", self.time_scale)


def _check_moves(moves: list[MoveRecord]) -> None:
    """:meth:`MoveRecord.check` of each move, its checks inline for the
    moves that pass them (a league's records hold tens of millions of
    moves: a call each cost a tenth of reading them); a move that does not
    is checked by it, to say what is wrong."""
    inf, longest = math.inf, MAX_MOVE_CHARS
    for each in moves:
        move, ms, info = each.move, each.ms, each.info
        if not (type(move) is str and 0 < len(move) <= longest and move.isprintable()
                and (type(ms) is float or type(ms) is int) and 0 <= ms < inf
                and (info is None or bound_info(info) is info) and each.latency_ms is None):
            each.check()


def _plain(line: bytes) -> bool:
    """Whether every text of the JSON on ``line`` is printable ASCII: the
    line is ASCII, with no escape and no DEL (a JSON reader refuses the
    other control characters in a text, as msgspec does)."""
    return line.isascii() and b"\\" not in line and b"\x7f" not in line


def _surely_valid_moves(moves: list[MoveRecord]) -> bool:
    """Whether moves msgspec decoded from a :func:`_plain` line pass
    :func:`_check_moves`, checked a field at a time over them all (a
    league's first read checks tens of millions of moves, each once).
    msgspec typed them as :class:`MoveRecord` holds them (text, numbers,
    an object with text keys or nothing) and refused a number JSON cannot
    hold as a finite one; the line's texts are printable; what is left is
    bounds.  False (a move out of them, a latency, a large or deep
    ``info``) sends the moves to :func:`_check_moves`, which says what is wrong."""
    if not moves:
        return True
    lengths, times = [len(m.move) for m in moves], [m.ms for m in moves]
    if not (min(lengths) > 0 and max(lengths) <= MAX_MOVE_CHARS and min(times) >= 0 and max(times) < math.inf
            and [m.latency_ms for m in moves].count(None) == len(moves)):
        return False
    infos = [m.info for m in moves if m.info]  # (an empty info is within any bounds)
    # All at once (the list's bracket aside, none is larger or deeper than all of them), else each alone.
    return (not infos or _surely_bounded(_encode_json(infos), 1)
            or all(_surely_bounded(_encode_json(info)) for info in infos))


def _surely_bounded(text: bytes, brackets: int = 0) -> bool:
    """Whether an info msgspec wrote as ``text`` (with ``brackets`` of its
    own) is within :func:`bound_info`'s bounds: it measures strict_dumps's
    text, which differs only in a float's exponent (see
    :data:`_SURE_INFO_BYTES`), and walks a value for its depth only past
    that many brackets."""
    return len(text) <= _SURE_INFO_BYTES and text.count(b"[") + text.count(b"{") <= MAX_INFO_DEPTH + brackets


_encode_json = msgspec.json.Encoder().encode
#: An ``info`` msgspec writes in this many bytes or fewer is within MAX_INFO_BYTES as :func:`bound_info`
#: measures it (strict_dumps): the two write the same text but for a float's exponent (``1e16``, ``1e-7``
#: against ``1e+16``, ``1e-07``: two bytes more at most, for a float of three bytes at least).
_SURE_INFO_BYTES = MAX_INFO_BYTES * 3 // 5


def _is_clock(value: Any) -> bool:
    """A time control as a record holds it: ``{"initial_ms", "increment_ms"}`` or ``{"per_move_ms"}``."""
    return (isinstance(value, dict) and 0 < len(value) <= 2
            and all(k in _CLOCK_FIELDS and _is_int(v, MAX_INDEX) for k, v in value.items()))


def _is_place(value: Any) -> bool:
    """A ``played_on`` as the executors write it: a host name, and only known keys, each in bounds."""
    return (isinstance(value, dict) and _is_text(value.get("host"), MAX_HOST_CHARS, empty=False)
            and all(key in _PLACE_CHECKS and _PLACE_CHECKS[key](v) for key, v in value.items()))


def _is_ratio(value: Any) -> bool:
    """A node's speed or a clock's scale: a positive number, at most :data:`MAX_RATIO`."""
    return _is_number(value) and 0 < value <= MAX_RATIO


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any, top: int) -> bool:
    """A whole number (not a boolean) from 0 to ``top - 1``."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < top


def _is_text(value: Any, limit: int, *, empty: bool = True) -> bool:
    """One printable line of at most ``limit`` characters: a record's ids,
    names and moves are shown as they are, so none may hold an escape
    sequence or a lone surrogate (the arena never writes one)."""
    return isinstance(value, str) and len(value) <= limit and (empty or bool(value)) and value.isprintable()


def _check(ok: bool, name: str, value: Any, why: str = "") -> None:
    if not ok:
        raise ValueError(f"bad {name} {_shown(value)}" + (f": {why}" if why else ""))


def _shown(value: Any) -> str:
    """A short, printable view of a bad value: never a deep list printed
    whole, never a control character (repr escapes them)."""
    if isinstance(value, (dict, list)):
        try:
            shown = repr(value) if len(value) <= 8 and len(strict_dumps(value)) <= 60 else ""
        except (ValueError, RecursionError):
            shown = ""
        if not shown:
            return f"({type(value).__name__} of {len(value)})"
    else:
        shown = repr(value) if not isinstance(value, str) or len(value) <= 60 else repr(value[:57])
    return shown if len(shown) <= 60 else shown[:57] + "..."


_INIT_FIELDS = frozenset(f.name for f in fields(GameRecord) if f.init)
#: The fields without which a record says nothing, those without a default
#: (the others have defaults that older records rely on).
_REQUIRED = tuple(f.name for f in fields(GameRecord) if f.default is MISSING and f.default_factory is MISSING)
#: A line decoded into its record, its fields' types checked (see GameRecord.from_bytes).
_decode = msgspec.json.Decoder(GameRecord).decode
_CLOCK_FIELDS = frozenset(("initial_ms", "increment_ms", "per_move_ms"))
#: What ``played_on`` may say, each with its check.
_PLACE_CHECKS = {
    "host": lambda v: _is_text(v, MAX_HOST_CHARS, empty=False),
    "node_id": lambda v: _is_text(v, MAX_NODE_ID_CHARS, empty=False),
    "actor": lambda v: _is_int(v, MAX_INDEX),
    "worker": lambda v: _is_int(v, MAX_INDEX),
    # Niceness runs from -20 to 19.
    "nice": lambda v: isinstance(v, int) and not isinstance(v, bool) and -20 <= v <= 19,
    "speed": _is_ratio,
}


def _encodable(value: Any) -> bool:
    try:
        strict_dumps(value)
    except (ValueError, RecursionError):
        return False
    return True


def schedule_key(record: GameRecord) -> tuple[int, str]:
    """The order games are rated in: the schedule's, a tie (two records of
    one place, from a hand-edited file) by game id."""
    return record.index, record.game_id
