"""Hostile: at its first turn starts grandchildren that leave its process
group, then plays on.  argv[1] is how: "setsid" (a child in a new session),
"setpgid" (a child in a new process group) or "daemon" (a double fork: the
grandchild is orphaned at once).  argv[2] is a marker the escapees carry in
their command line, so a test can look for them."""

import os
import subprocess
import sys

from _botlib import first_move, play

HOW, MARKER = sys.argv[1], sys.argv[2]
SLEEPER = [sys.executable, "-c", "import time, sys; time.sleep(1000)", MARKER]


def escape():
    if HOW == "setsid":
        subprocess.Popen(SLEEPER, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    elif HOW == "setpgid":
        subprocess.Popen(SLEEPER, process_group=0, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    else:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
                os.execv(sys.executable, SLEEPER)
            os._exit(0)
        os.wait()


def on_turn(turn, count):
    if count == 1:
        escape()
    return first_move(turn, count)


play(on_turn)
