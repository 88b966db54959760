"""Keeps its own board with the project's engine and, with ``compact`` as its
first argument, asks for compact turns.  The second argument is what it does
on its turns: ``first`` plays the first legal move; ``illegal`` plays an
occupied square on its third turn; ``garbage`` a malformed move;
``slow`` answers its second turn too late.  Logs every turn line to stderr as
``turn keys: <sorted keys>``."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import engine  # noqa: E402
from _botlib import play, send  # noqa: E402

compact = sys.argv[1] == "compact"
mode = sys.argv[2]
game = None
state = None


def on_hello(hello):
    global game
    game = engine.get_game(hello["game"])
    return {"type": "ready", "name": "compact-test-bot", "compact_turns": compact}


def on_other(message):
    global state
    if message["type"] == "new_game":
        state = game.from_json(message["state"])


def on_turn(turn, count):
    global state
    sys.stderr.write(f"turn keys: {sorted(turn)}\n")
    sys.stderr.flush()
    if turn["last_move"] is not None:
        state = game.apply(state, turn["last_move"])
    assert turn["ply"] == game.ply(state)
    legal = game.legal_moves(state)
    move = legal[0]
    if mode == "illegal" and count == 3:
        # a square that is taken: the placement of the opponent's last move
        move = move.split()[0] + " " + turn["last_move"].split()[1]
    elif mode == "garbage":
        move = "Xz9 q"
    elif mode == "slow" and count == 2:
        time.sleep(1.0)
    state = game.apply(state, move) if move in legal else state
    return {"type": "move", "move": move}


play(on_turn=on_turn, on_hello=on_hello, on_other=on_other)
