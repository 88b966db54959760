"""At its first turn writes a 2 MiB line (a move message padded with a huge
``info``, newline included), then sleeps forever."""

import json
import sys
import time
from typing import NoReturn

from _botlib import play


def on_turn(turn: dict, count: int) -> NoReturn:
    line = json.dumps({"type": "move", "move": turn["legal_moves"][0], "info": {"pad": "x" * (2 << 20)}})
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    while True:
        time.sleep(3600)


play(on_turn)
