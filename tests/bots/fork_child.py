"""At its first turn forks a child that inherits stdin/stdout/stderr and
sleeps 1000 s; the parent then exits (code 0) without answering, so the
pipes stay open though the bot is gone."""

import os
import time
from typing import NoReturn

from _botlib import play


def on_turn(turn: dict, count: int) -> NoReturn:
    if os.fork() == 0:
        time.sleep(1000)
    os._exit(0)


play(on_turn)
