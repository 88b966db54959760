"""Hostile: at its first turn writes into its scratch directory ($HOME):
``bytes N`` writes N MiB in files of 1 MiB, ``files N`` makes N empty files,
``disk`` both, as much as the disk holds, ``nested N`` N folders each in
the last.  A write that fails ends it with
the error on stderr (a crash); otherwise it waits 1.5 s before it answers,
time enough for the arena to look at its scratch directory.  With
``game_over`` as a third word it writes when a game ends instead, between
games."""

import os
import sys
import time

from _botlib import first_move, play

WHAT = sys.argv[1]
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 30
BETWEEN_GAMES = sys.argv[3:] == ["game_over"]


def fill():
    home = os.environ["HOME"]
    if WHAT in ("bytes", "disk"):
        for number in range(COUNT):
            try:
                with open(os.path.join(home, f"big-{number}"), "wb") as handle:
                    handle.write(b"\1" * (1 << 20))
            except OSError:
                if WHAT == "bytes":
                    raise
                break  # the disk is full of bytes: now its inodes
    if WHAT in ("files", "disk"):
        for number in range(COUNT):
            open(os.path.join(home, f"empty-{number}"), "wb").close()
    if WHAT == "nested":
        fd = os.open(home, os.O_RDONLY)
        for depth in range(COUNT):
            name = "d" if depth else f"nest-{time.time_ns()}"
            os.mkdir(name, dir_fd=fd)
            fd = os.open(name, os.O_RDONLY, dir_fd=fd)


def on_turn(turn, count):
    if count == 1 and not BETWEEN_GAMES:
        fill()
        time.sleep(1.5)
    return first_move(turn, count)


def on_other(message):
    if message["type"] == "game_over" and BETWEEN_GAMES:
        fill()


play(on_turn, on_other=on_other)
