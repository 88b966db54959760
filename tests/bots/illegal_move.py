"""Answers a turn with a well-formed move that is never legal: ``Zz9 z9``."""

from _botlib import play

play(lambda turn, count: {"type": "move", "move": "Zz9 z9"})
