"""Answers hello with ``{"type": "banana"}`` instead of ready."""

from _botlib import play

play(on_hello=lambda hello: {"type": "banana"})
