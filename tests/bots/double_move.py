"""Answers every turn twice: the second line arrives out of turn.

Both lines go out in one write, so the arena has the second one before it
asks again, however the machine schedules the bot."""

import json

from _botlib import play


def twice(turn, count):
    line = json.dumps({"type": "move", "move": turn["legal_moves"][0]})
    return f"{line}\n{line}"


play(twice)
