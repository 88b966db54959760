"""Hostile: at its first turn of each game forks 300 children that sleep, then
plays on and says in its move's ``info`` how many it got and why it stopped."""

import os
import time

from _botlib import play


def on_turn(turn, count):
    info = {}
    if turn["ply"] < 2:  # its first move of each game
        forked, error = 0, None
        for _ in range(300):
            try:
                pid = os.fork()
            except OSError as exc:
                error = exc.strerror
                break
            if pid == 0:
                time.sleep(1000)
                os._exit(0)
            forked += 1
        info = {"forked": forked, "error": error}
    return {"type": "move", "move": turn["legal_moves"][0], "info": info}


play(on_turn)
