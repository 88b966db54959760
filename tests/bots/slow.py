"""Plays the first legal move, but sleeps before each move:
``float(sys.argv[1])`` seconds, 2 by default."""

import sys
import time

from _botlib import first_move, play

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0


def on_turn(turn: dict, count: int) -> dict:
    time.sleep(DELAY)
    return first_move(turn, count)


play(on_turn)
