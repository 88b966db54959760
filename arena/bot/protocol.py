"""Message shapes of the bot protocol (version 1), arena side.

Builders return dicts; :func:`encode` turns one into a wire line and
:func:`decode` checks a bot's line.  Nothing here touches a process.
"""

from __future__ import annotations

import json
import math
from typing import Any

from arena.base.text import clean_text, json_kind

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_LINE_BYTES",
    "ProtocolError",
    "encode",
    "decode",
    "strict_dumps",
    "bound_info",
    "ready_fields",
    "MAX_INFO_BYTES",
    "MAX_INFO_DEPTH",
    "hello",
    "new_game",
    "turn",
    "compact_turn",
    "TurnLines",
    "plain_move",
    "game_over",
    "QUIT",
]

PROTOCOL_VERSION = 1
#: A line longer than this (without its newline) is a protocol error.
MAX_LINE_BYTES = 1 << 20

#: The most of a move's ``info`` kept in a game record, as compact UTF-8 JSON.
MAX_INFO_BYTES = 4096
#: The deepest nesting of ``info`` kept (records must cross process
#: boundaries and reach other tools, whose parsers recurse).
MAX_INFO_DEPTH = 16
class ProtocolError(Exception):
    """A bot's line that is not a valid message; the text says what is wrong."""


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
#: Compact JSON with no NaN or Infinity (ValueError instead), for what is
#: kept of a bot's words: Python's json reads them from a bot's line, but a
#: record holding one would make a line other readers refuse.
strict_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def encode(message: dict[str, Any]) -> bytes:
    """One message as one wire line (compact JSON, UTF-8, ending in a newline)."""
    return (_dumps(message) + "\n").encode()


def decode(line: str, expected: str) -> dict[str, Any]:
    """Parse a bot's line and check it is a JSON object.  A message of type
    ``error`` is returned as it is (the caller turns it into ``bot_error``);
    any other type than ``expected`` is a :class:`ProtocolError`."""
    try:
        message = json.loads(line)
    except ValueError:  # also an integer of more than 4300 digits
        raise ProtocolError(f"not JSON: {_excerpt(line)}") from None
    except RecursionError:
        raise ProtocolError(f"JSON nested too deeply to read: {_excerpt(line)}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"not a JSON object: {_excerpt(line)}")
    kind = message.get("type")
    if kind == "error" or kind == expected:
        return message
    shown = json_kind(kind) if isinstance(kind, (list, dict)) else repr(kind)[:40]  # never print a bot's deep list
    raise ProtocolError(f"expected a {expected!r} message, got type {shown}: {_excerpt(line)}")


def _excerpt(line: str, limit: int = 120) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "...")


def bound_info(info: Any) -> dict[str, Any] | None:
    """A move's ``info`` as the game record may keep it: an object of at most
    :data:`MAX_INFO_BYTES` of strict JSON, nested at most
    :data:`MAX_INFO_DEPTH` deep.  Any other is replaced by a note saying why
    it was dropped, so a record stays small, strict and safe to pass on."""
    if info is None:
        return None
    if not isinstance(info, dict):
        return {"dropped": f"'info' must be a JSON object, not {json_kind(info)}"}
    if _surely_within_bounds(info):
        return info
    try:
        text = strict_dumps(info)
        size = len(text.encode())
    except RecursionError:
        return {"dropped": "'info' is nested too deeply"}
    except UnicodeEncodeError:
        return {"dropped": "'info' holds text that is not valid Unicode (a lone surrogate)"}
    except ValueError:
        return {"dropped": "'info' holds NaN or Infinity, which JSON does not allow"}
    if size > MAX_INFO_BYTES:
        return {"dropped": f"'info' has {size} bytes, over the limit of {MAX_INFO_BYTES}"}
    # Only text with many brackets can be deep; most info is not walked at all.
    if text.count("[") + text.count("{") > MAX_INFO_DEPTH and _depth(info) > MAX_INFO_DEPTH:
        return {"dropped": f"'info' is nested more than {MAX_INFO_DEPTH} levels deep"}
    return info


def _surely_within_bounds(info: dict[Any, Any]) -> bool:
    """Whether ``info`` is within the bounds without writing it out: an
    object of ASCII names, finite numbers, ASCII text and flat lists of
    those, whose text cannot reach :data:`MAX_INFO_BYTES` (6 bytes a
    character at most, an escape).  Every move's info is bounded on every
    read of a record, and most is a score and a line of moves: writing each
    out cost a quarter of reading a league.  False sends it to the exact
    measure, which says what is wrong, if anything."""
    budget = MAX_INFO_BYTES - 2
    for key, value in info.items():
        if not (type(key) is str and key.isascii()):
            return False
        budget -= 6 * len(key) + 4
        if type(value) is list:
            budget -= 2
            for item in value:
                budget -= _scalar_bytes(item) + 1
        else:
            budget -= _scalar_bytes(value)
        if budget < 0:
            return False
    return True


def _scalar_bytes(value: Any) -> int:
    """The most bytes ``value`` takes in strict JSON, if it is an ASCII
    string, a finite number or a constant; past the budget otherwise."""
    kind = type(value)
    if kind is str:
        return 6 * len(value) + 2 if value.isascii() else MAX_INFO_BYTES
    if kind is float:
        return 24 if math.isfinite(value) else MAX_INFO_BYTES
    if kind is int:
        return 20 if -10**18 < value < 10**18 else MAX_INFO_BYTES
    return 5 if value is None or kind is bool else MAX_INFO_BYTES


def _depth(value: Any) -> int:
    deepest = 0
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            todo += [(child, depth + 1) for child in item]
    return deepest


def ready_fields(message: dict[str, Any]) -> dict[str, str]:
    """The fields of a ``ready`` message the arena keeps, as short, clean text."""
    return {key: clean_text(message[key], 100) for key in ("name", "version", "author") if isinstance(message.get(key), str)}


def hello(game: str, name: str, options: dict[str, Any]) -> dict[str, Any]:
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "game": game, "name": name, "options": options}


def new_game(
    game_id: str,
    game: str,
    you: str,
    players: dict[str, str],
    time_control: dict[str, int],
    state: dict[str, Any],
    seed: int,
    opening_moves: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    # ``seed`` and ``opening_moves`` extend protocol 1: a bot may seed its
    # randomness with the seed so that a whole tournament replays identically;
    # ``state`` is the position after the opening's moves, which a bot that
    # keeps its own board replays from the start position.
    return {
        "type": "new_game",
        "game_id": game_id,
        "game": game,
        "you": you,
        "players": players,
        "time_control": time_control,
        "state": state,
        "seed": seed,
        "opening_moves": list(opening_moves),
    }


def new_game_lines(
    game_id: str,
    game: str,
    players: dict[str, str],
    time_controls: list[dict[str, int]],
    state_text: str,
    seed: int,
    opening_moves: list[str] | tuple[str, ...] = (),
) -> list[bytes]:
    """``encode(new_game(...))`` for each colour of ``players`` in turn,
    each with its own ``time_controls[seat]`` (they differ under time odds),
    byte for byte, with the state already encoded (``Game.to_json_text``):
    the lines differ only in ``you`` and the clock, so the rest is encoded once."""
    head = f'{{"type":"new_game","game_id":{_dumps(game_id)},"game":{_dumps(game)},"you":'
    middle = f',"players":{_dumps(players)},"time_control":'
    tail = f',"state":{state_text},"seed":{_dumps(seed)},"opening_moves":{_dumps(list(opening_moves))}}}\n'
    return [(head + _dumps(color) + middle + _dumps(control) + tail).encode()
            for color, control in zip(players, time_controls)]


def turn(
    game_id: str,
    ply: int,
    state: dict[str, Any],
    legal_moves: list[str],
    last_move: str | None,
    clock: dict[str, int],
) -> dict[str, Any]:
    return {
        "type": "turn",
        "game_id": game_id,
        "ply": ply,
        "state": state,
        "legal_moves": legal_moves,
        "last_move": last_move,
        "clock": clock,
    }


def compact_turn(game_id: str, ply: int, last_move: str | None, clock: dict[str, int]) -> dict[str, Any]:
    """A ``turn`` for a bot that asked for compact turns (``ready`` with
    ``"compact_turns": true``): no ``state``, no ``legal_moves``."""
    return {"type": "turn", "game_id": game_id, "ply": ply, "last_move": last_move, "clock": clock}


class TurnLines:
    """The ``turn`` lines of one game, byte for byte ``encode(turn(...))`` or
    ``encode(compact_turn(...))``, several times faster: the referee sends
    one every ply.  The game id is encoded once; ``state_text`` and
    ``clock_text`` come already encoded (``Game.to_json_text``,
    ``Clock.to_json_text``).  Moves are the engine's notation (letters,
    digits, one space), which JSON needs no escapes for, so they are joined
    rather than encoded."""

    __slots__ = ("_head",)

    def __init__(self, game_id: str) -> None:
        self._head = '{"type":"turn","game_id":' + _dumps(game_id) + ',"ply":'

    def full(self, ply: int, state_text: str, legal_moves: list[str], last_move: str | None, clock_text: str) -> bytes:
        moves = '","'.join(legal_moves)
        moves = f'["{moves}"]' if legal_moves else "[]"
        last = "null" if last_move is None else f'"{last_move}"'
        return (
            f'{self._head}{ply},"state":{state_text},"legal_moves":{moves},"last_move":{last},"clock":{clock_text}}}\n'
        ).encode()

    def compact(self, ply: int, last_move: str | None, clock_text: str) -> bytes:
        last = "null" if last_move is None else f'"{last_move}"'
        return f'{self._head}{ply},"last_move":{last},"clock":{clock_text}}}\n'.encode()


# The shapes of a move line that the common encoders write (compact, and
# Python's json.dumps default); anything else goes through json.loads.
_PLAIN_MOVE_HEADS = ('{"type":"move","move":"', '{"type": "move", "move": "')


def plain_move(line: str) -> str | None:
    """The move of a line that is exactly ``{"type":"move","move":"..."}``
    (or json.dumps's spaced form of it) with a string that JSON needs no
    unescaping for; None for any other line, which :func:`decode` then
    reads.  For such a line this gives what ``decode(line, "move")["move"]``
    gives, without the JSON parser: the referee reads one every ply."""
    if line.endswith('"}'):
        for head in _PLAIN_MOVE_HEADS:
            if line.startswith(head):
                move = line[len(head) : -2]
                # isprintable() is False for every control character, which
                # strict JSON refuses raw in a string.
                if '"' not in move and "\\" not in move and move.isprintable():
                    return move
                return None
    return None


def game_over(
    game_id: str,
    winner: str | None,
    reason: str,
    moves: list[str],
    scores: dict[str, int] | None,
    opening_moves: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """``moves`` is the whole game from the start position, ``opening_moves`` included."""
    message: dict[str, Any] = {
        "type": "game_over", "game_id": game_id, "winner": winner, "reason": reason, "moves": moves,
        "opening_moves": list(opening_moves),
    }
    if scores is not None:
        message["scores"] = scores
    return message


QUIT: dict[str, Any] = {"type": "quit"}
