"""Answers hello with ready, then exits (code 0) when new_game arrives."""

import sys

from _botlib import play


def on_other(message: dict) -> None:
    if message.get("type") == "new_game":
        sys.exit(0)


play(on_other=on_other)
