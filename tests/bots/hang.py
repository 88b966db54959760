"""Answers hello, then at its first turn never answers: sleeps forever."""

import time
from typing import NoReturn

from _botlib import play


def on_turn(turn: dict, count: int) -> NoReturn:
    while True:
        time.sleep(3600)


play(on_turn)
