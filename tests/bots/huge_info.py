"""Hostile: sends an ``info`` of almost 1 MiB with every move, just under
the protocol's line limit."""

import json

from _botlib import play

PADDING = "x" * (1024 * 1024 - 200)


def on_turn(turn, count):
    return json.dumps({"type": "move", "move": turn["legal_moves"][0], "info": {"pad": PADDING}})


play(on_turn)
