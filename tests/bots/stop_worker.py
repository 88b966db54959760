"""Hostile: at its first turn sends SIGSTOP to its parent (the arena's
worker) and then waits for its next message, which cannot come.  Only the
first process to find no file ``stopped`` in the folder argv[1] does it (and
creates the file), so the game can be played again; with argv[1] ==
"always", every process does.  (A folder: a file the command names is one
of the bot's files, whose change would be a new version of it.)"""

import os
import signal
import sys
import time

from _botlib import first_move, play


def on_turn(turn, count):
    if sys.argv[1] != "always":
        try:
            os.close(os.open(os.path.join(sys.argv[1], "stopped"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return first_move(turn, count)
    time.sleep(0.3)  # the worker has shown the game in progress by then (its live file)
    os.kill(os.getppid(), signal.SIGSTOP)
    return None


play(on_turn)
