"""Plays correctly, except that it exits with code 4 on the first turn of
every 10th game its process plays: it forfeits one game in ten, which a
check of 3 games misses (the flaky submission of issue 20)."""

import sys

from _botlib import first_move, play

games = 0


def on_other(message: dict) -> None:
    global games
    if message.get("type") == "new_game":
        games += 1


def on_turn(turn: dict, count: int) -> dict:
    if games % 10 == 0:
        print(f"game {games} of this process: crashing", file=sys.stderr, flush=True)
        sys.exit(4)
    return first_move(turn, count)


play(on_turn, on_other=on_other)
