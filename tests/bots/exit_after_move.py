"""Plays its first move, then exits while the opponent is thinking."""

import sys

from _botlib import send, play


def move_then_exit(turn, count):
    send({"type": "move", "move": turn["legal_moves"][0]})
    sys.exit(0)


play(move_then_exit)
