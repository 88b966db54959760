"""Hostile: at its first turn touches 2 GiB of memory and keeps it, then
plays on (if it still can)."""

from _botlib import first_move, play

HOARD = []


def on_turn(turn, count):
    if count == 1:
        for _ in range(2048):
            HOARD.append(bytearray(1 << 20))  # zero-filled: every page is touched
    return first_move(turn, count)


play(on_turn)
