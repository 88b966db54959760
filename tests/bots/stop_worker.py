"""Hostile: at its first turn sends SIGSTOP to its parent (the arena's
worker) and then waits for its next message, which cannot come.  Only the
first process to find no file at argv[1] does it (and creates the file), so
the game can be played again; with argv[1] == "always", every process does."""

import os
import signal
import sys
import time

from _botlib import first_move, play


def on_turn(turn, count):
    if sys.argv[1] != "always":
        try:
            os.close(os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return first_move(turn, count)
    time.sleep(0.3)  # the worker has shown the game in progress by then (its live file)
    os.kill(os.getppid(), signal.SIGSTOP)
    return None


play(on_turn)
