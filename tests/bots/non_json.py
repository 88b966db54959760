"""Answers a turn with the text ``hello world`` instead of a JSON move."""

from _botlib import play

play(lambda turn, count: "hello world")
