"""Hostile: when greeted, sends SIGSTOP (or the signal named by argv[1],
e.g. KILL) to its parent, the arena process that started it (the
pre-flight's, or a worker), and never answers: a parent that waits for it
without a deadline waits for ever."""

import os
import signal
import sys

from _botlib import play


def on_hello(hello):
    name = sys.argv[1] if len(sys.argv) > 1 else "STOP"
    os.kill(os.getppid(), getattr(signal, "SIG" + name))
    return None


play(on_hello=on_hello)
