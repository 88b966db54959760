"""Writes terminal escape sequences to stderr and exits, to take over the
organiser's terminal through the forfeit's quoted stderr: a window title
(OSC 0), a cleared screen, a clipboard write (OSC 52), a bell, C1 controls,
a carriage return that overwrites a line, a right-to-left override, and a
byte that is not UTF-8.  ``start`` (the default): at once, before ``ready``;
``midgame``: after its first move, at its second turn; ``error``: answers its
first turn with an ``error`` message holding the same sequences.

Its ``ready`` (in the other modes) carries escapes in its name too."""

import sys

from _botlib import first_move, play

ESCAPES = "\x1b]0;PWNED\x1b\\ \x1b[2J\x1b]52;c;cHduZWQ=\x07 \x9b31m\x9d0;C1\x9c fake\rok \u202egnp.exe \x08\x08"


def crash() -> None:
    sys.stderr.write(f"terminal_escapes: {ESCAPES}\n")
    sys.stderr.flush()
    sys.stderr.buffer.write(b"raw \x1b[5m\x9b\xff byte\n")
    sys.stderr.flush()
    sys.exit(1)


def on_turn(turn: dict, count: int):
    if MODE == "error":
        return {"type": "error", "message": ESCAPES}
    if count == 2:
        crash()
    return first_move(turn, count)


MODE = sys.argv[1] if len(sys.argv) > 1 else "start"
if MODE == "start":
    crash()
play(on_turn, on_hello=lambda hello: {"type": "ready", "name": f"evil{ESCAPES}", "version": ESCAPES, "author": ESCAPES})
