"""Well behaved but for its bytes: its ``ready`` names it with a byte that
is not UTF-8 and its lines end in ``\\r\\n`` (the arena takes both); in each
game its first move comes after an escape sequence, which loses the game."""

import sys

from _botlib import play

READY = b'{"type":"ready","name":"caf\xc3\xa9 \xff"}\r\n'


def raw(line: bytes) -> None:
    sys.stdout.buffer.write(line)
    sys.stdout.flush()


def move(turn: dict, count: int) -> None:
    junk = b"\x1b[2J" if turn["ply"] < 2 else b""
    raw(junk + b'{"type":"move","move":"%s"}\r\n' % turn["legal_moves"][0].encode())


play(on_hello=lambda hello: raw(READY), on_turn=move)
