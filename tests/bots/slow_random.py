"""Plays a random legal move (from the game's seed: the same game, the same
moves) after sleeping ``float(sys.argv[1])`` seconds, 0.05 by default, and
``float(sys.argv[2])`` seconds before a game's first move when given
(a bot that thinks long once, for a clock seen running); writes ``<script>``
to its stderr each turn, for the pages that show it as text.

``sys.argv[3]``, a folder, and ``sys.argv[4]``, a game id's start
(``r3-``): in the games whose ids start so, from the game's fifth ply the
bot waits before it moves, its game held in progress, until the folder
holds a file named as the game, or one named ``all``; meanwhile a file
``<game id>.held`` there says it waits.  A test holds the games so until it
has seen what it looks for, however quickly the games before were played."""

import random
import sys
import time
from pathlib import Path

from _botlib import play

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
FIRST_DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else DELAY
GATES, HELD = (Path(sys.argv[3]), sys.argv[4]) if len(sys.argv) > 4 else (None, None)
HELD_FROM = 4
rng = random.Random(0)
#: The game in progress while it is to be held, else None.
held: str | None = None


def on_hello(hello: dict) -> dict:
    return {"type": "ready", "name": "slow-random"}


def on_other(message: dict) -> None:
    global held
    if message.get("type") == "new_game":
        rng.seed(message.get("seed"))
        game_id = str(message.get("game_id", ""))
        held = game_id if HELD is not None and game_id.startswith(HELD) else None


def wait_for_release(game_id: str) -> None:
    (GATES / f"{game_id}.held").touch()
    while not (GATES / game_id).exists() and not (GATES / "all").exists():
        time.sleep(0.02)


def on_turn(turn: dict, count: int) -> dict:
    time.sleep(FIRST_DELAY if turn["ply"] == 0 else DELAY)
    global held
    if held is not None and turn["ply"] >= HELD_FROM:
        wait_for_release(held)
        held = None
    sys.stderr.write("<script>window.pwned = 1</script> thinking\n")
    sys.stderr.flush()
    return {"type": "move", "move": rng.choice(turn["legal_moves"])}


play(on_turn, on_hello, on_other)
