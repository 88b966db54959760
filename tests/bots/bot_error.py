"""Answers a turn with ``{"type": "error", "message": "I give up"}``."""

from _botlib import play

play(lambda turn, count: {"type": "error", "message": "I give up"})
