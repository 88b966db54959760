"""Plays the first legal move after ``float(sys.argv[1])`` seconds (0.1 by
default); at its first turn it also forks a child that sleeps 1000 s in the
bot's process group, so a test sees whether the bot's whole group is killed,
not only the bot."""

import os
import sys
import time

from _botlib import first_move, play

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1


def on_turn(turn: dict, count: int) -> dict:
    if count == 1 and os.fork() == 0:
        os.closerange(0, 3)
        time.sleep(1000)
        os._exit(0)
    time.sleep(DELAY)
    return first_move(turn, count)


play(on_turn)
