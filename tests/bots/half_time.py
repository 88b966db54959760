"""Well behaved but slow: before each move sleeps half of the turn's
``clock.remaining_ms``, then plays the first legal move."""

import time

from _botlib import first_move, play


def on_turn(turn: dict, count: int) -> dict:
    time.sleep(turn["clock"]["remaining_ms"] / 2000)
    return first_move(turn, count)


play(on_turn)
