"""Answers every turn twice: the second line arrives out of turn."""

from _botlib import send, play


def twice(turn, count):
    move = {"type": "move", "move": turn["legal_moves"][0]}
    send(move)
    return move


play(twice)
