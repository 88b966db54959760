"""Plays a random legal move (from the game's seed: the same game, the same
moves) after sleeping ``float(sys.argv[1])`` seconds, 0.05 by default, and
``float(sys.argv[2])`` seconds before a game's first move when given
(a bot that thinks long once, for a clock seen running); writes ``<script>``
to its stderr each turn, for the pages that show it as text."""

import random
import sys
import time

from _botlib import play

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
FIRST_DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else DELAY
rng = random.Random(0)


def on_hello(hello: dict) -> dict:
    return {"type": "ready", "name": "slow-random"}


def on_other(message: dict) -> None:
    if message.get("type") == "new_game":
        rng.seed(message.get("seed"))


def on_turn(turn: dict, count: int) -> dict:
    time.sleep(FIRST_DELAY if turn["ply"] == 0 else DELAY)
    sys.stderr.write("<script>window.pwned = 1</script> thinking\n")
    sys.stderr.flush()
    return {"type": "move", "move": rng.choice(turn["legal_moves"])}


play(on_turn, on_hello, on_other)
