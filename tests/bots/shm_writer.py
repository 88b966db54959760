"""Hostile: at its first turn writes five files of 10 MiB to /dev/shm, their
names starting with argv[1], says on stderr how much it wrote, and exits
without a move (so it forfeits every game, as a crash)."""

import os
import sys

from _botlib import play

MARKER = sys.argv[1]


def on_turn(turn, count):
    written = 0
    for number in range(5):
        try:
            with open(f"/dev/shm/{MARKER}-{os.getpid()}-{number}", "wb") as handle:
                handle.write(b"\1" * (10 << 20))
            written += 10
        except OSError as exc:
            sys.stderr.write(f"/dev/shm: {exc.strerror}\n")
            break
    sys.stderr.write(f"wrote {written} MiB to /dev/shm\n")
    sys.stderr.flush()
    os._exit(0)


play(on_turn)
