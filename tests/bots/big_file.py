"""Hostile: at its first turn of each game writes a 100 MB file into its
TMPDIR, then plays on and says in its move's ``info`` how much it wrote and
why it stopped."""

import os

from _botlib import play


def on_turn(turn, count):
    info = {}
    if turn["ply"] < 2:  # its first move of each game
        written, error = 0, None
        try:
            with open(os.path.join(os.environ["TMPDIR"], "big"), "wb", buffering=0) as handle:
                for _ in range(100):
                    written += handle.write(b"\0" * (1 << 20))
        except OSError as exc:
            error = exc.strerror
        info = {"written": written, "error": error}
    return {"type": "move", "move": turn["legal_moves"][0], "info": info}


play(on_turn)
