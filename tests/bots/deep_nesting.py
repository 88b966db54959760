"""Hostile: sends JSON nested ``LEVELS`` deep (argv[2]) in its ``ready``
(argv[1] == "ready") or in the ``info`` of every move (argv[1] == "info").
About 1000 levels is already too deep for Python's own json; 250 was too
deep for the pickler that carried records between processes."""

import sys

from _botlib import first_move, play, ready

WHERE, LEVELS = sys.argv[1], int(sys.argv[2])
NESTED = "[" * LEVELS + "]" * LEVELS


def on_hello(hello):
    if WHERE == "ready":
        return '{"type":"ready","name":"deep","extra":' + NESTED + "}"
    return ready(hello)


def on_turn(turn, count):
    if WHERE == "info":
        return '{"type":"move","move":"' + turn["legal_moves"][0] + '","info":{"pv":' + NESTED + "}}"
    return first_move(turn, count)


play(on_turn, on_hello)
