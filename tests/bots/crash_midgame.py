"""Plays correctly, then exits with code 3 at the 3rd turn its process sees."""

import sys

from _botlib import first_move, play


def on_turn(turn: dict, count: int) -> dict:
    if count == 3:
        sys.exit(3)
    return first_move(turn, count)


play(on_turn)
