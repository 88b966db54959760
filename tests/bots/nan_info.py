"""Hostile: puts NaN, Infinity and a number too large for a double in the
``info`` of every move (Python's json writes and reads these, strict JSON
parsers refuse them)."""

from _botlib import play


def on_turn(turn, count):
    return '{"type":"move","move":"' + turn["legal_moves"][0] + '","info":{"score":NaN,"bound":-Infinity,"big":1e999}}'


play(on_turn)
