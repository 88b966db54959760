"""Message shapes of the bot protocol (version 1), arena side.

Builders return dicts; :func:`encode` turns one into a wire line and
:func:`decode` checks a bot's line.  Nothing here touches a process.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_LINE_BYTES",
    "FORFEIT_REASONS",
    "ProtocolError",
    "encode",
    "decode",
    "hello",
    "new_game",
    "turn",
    "encode_turn",
    "game_over",
    "QUIT",
]

PROTOCOL_VERSION = 1
#: A line longer than this (without its newline) is a protocol error.
MAX_LINE_BYTES = 1 << 20

#: Why a bot can lose a game other than by the rules, as recorded in game records.
FORFEIT_REASONS = ("timeout", "illegal_move", "protocol_error", "crash", "startup_failure", "bot_error")


class ProtocolError(Exception):
    """A bot's line that is not a valid message; the text says what is wrong."""


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode(message: dict[str, Any]) -> bytes:
    """One message as one wire line (compact JSON, UTF-8, ending in a newline)."""
    return (_dumps(message) + "\n").encode()


def decode(line: str, expected: str) -> dict[str, Any]:
    """Parse a bot's line and check it is a JSON object.  A message of type
    ``error`` is returned as it is (the caller turns it into ``bot_error``);
    any other type than ``expected`` is a :class:`ProtocolError`."""
    try:
        message = json.loads(line)
    except ValueError:
        raise ProtocolError(f"not JSON: {_excerpt(line)}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"not a JSON object: {_excerpt(line)}")
    kind = message.get("type")
    if kind == "error" or kind == expected:
        return message
    raise ProtocolError(f"expected a {expected!r} message, got type {kind!r}: {_excerpt(line)}")


def _excerpt(line: str, limit: int = 120) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "...")


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


def encode_turn(
    game_id: str,
    ply: int,
    state_text: str,
    legal_moves: list[str],
    last_move: str | None,
    clock: dict[str, int],
) -> bytes:
    """``encode(turn(...))``, byte for byte, several times faster; the referee
    sends one every ply.  ``state_text`` is the state object already encoded
    (``Game.to_json_text``).  Moves are the engine's notation (letters,
    digits, one space), which JSON needs no escapes for, so they are joined
    rather than encoded."""
    moves = '["' + '","'.join(legal_moves) + '"]' if legal_moves else "[]"
    last = "null" if last_move is None else '"' + last_move + '"'
    return (
        '{"type":"turn","game_id":' + _dumps(game_id) + ',"ply":' + str(ply) + ',"state":' + state_text
        + ',"legal_moves":' + moves + ',"last_move":' + last + ',"clock":' + _dumps(clock) + "}\n"
    ).encode()


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
