"""Shared loop of the test bots: speaks protocol 1 correctly until a hook
misbehaves.  Stdlib only; a bot script imports it from its own directory.

A hook returns what to write: a dict (sent as one JSON line), a str (written
as it is, plus a newline) or None (nothing).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Union

Reply = Union[dict[str, Any], str, None]


def send(reply: Reply) -> None:
    if reply is None:
        return
    text = reply if isinstance(reply, str) else json.dumps(reply)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def ready(hello: dict[str, Any]) -> Reply:
    return {"type": "ready", "name": "test-bot"}


def first_move(turn: dict[str, Any], count: int) -> Reply:
    return {"type": "move", "move": turn["legal_moves"][0]}


def play(
    on_turn: Callable[[dict[str, Any], int], Reply] = first_move,
    on_hello: Callable[[dict[str, Any]], Reply] = ready,
    on_other: Callable[[dict[str, Any]], None] | None = None,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """Answer messages until ``quit`` or EOF.  ``on_turn`` also gets how many
    turns this process has seen, counting from 1; ``on_other`` sees
    ``new_game`` and ``game_over``; ``on_line`` sees every raw line first."""
    turns = 0
    for line in iter(sys.stdin.readline, ""):
        if on_line is not None:
            on_line(line)
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send(on_hello(message))
        elif kind == "turn":
            turns += 1
            send(on_turn(message, turns))
        elif kind == "quit":
            return
        elif on_other is not None:
            on_other(message)
