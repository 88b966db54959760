"""Answers with a well-formed OXONO move that no start position allows: ``Xa1 a2``."""

from _botlib import play

play(lambda turn, count: {"type": "move", "move": "Xa1 a2"})
