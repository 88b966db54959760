"""Well behaved (a control): plays the first legal move and logs every line
it receives to stderr, as ``got: <line>``."""

import sys

from _botlib import play


def log(line: str) -> None:
    sys.stderr.write("got: " + line)
    sys.stderr.flush()


play(on_line=log)
