"""Answers a turn with a message of the wrong type: ``{"type": "ready"}``."""

from _botlib import play

play(lambda turn, count: {"type": "ready"})
