"""Plays the first legal move, and before each move writes a megabyte to
stderr, every line naming the game (from ``new_game``) and the move, with a
first and a last line marked so a test can see what a bounded log kept."""

import sys

from _botlib import first_move, play

game = {"id": "none"}


def on_other(message: dict) -> None:
    if message.get("type") == "new_game":
        game["id"] = message["game_id"]


def on_turn(turn: dict, count: int):
    gid = game["id"]
    line = f"{gid} move {count} " + "x" * 80 + "\n"
    sys.stderr.write(f"{gid} FIRST move {count}\n")
    sys.stderr.write(line * (1024 * 1024 // len(line)))
    sys.stderr.write(f"{gid} LAST move {count}\n")
    sys.stderr.flush()
    return first_move(turn, count)


play(on_turn, on_other=on_other)
