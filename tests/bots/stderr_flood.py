"""Plays the first legal move normally while a thread writes to stderr as
fast as it can, forever."""

import os
import threading

from _botlib import play


def flood() -> None:
    chunk = b"flood flood flood flood flood flood flood flood flood flood\n" * 1024
    while True:
        # os.write, not sys.stderr: a daemon thread inside a buffered stream's
        # lock can abort the interpreter at exit.
        os.write(2, chunk)


threading.Thread(target=flood, daemon=True).start()
play()
