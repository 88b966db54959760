"""Hostile: when greeted, reads every file named on its command line and
every file under every folder named there, and says in its ``ready``'s
name which ones hold the word SECRET (``found: t.yaml a.log``, or
``found: nothing``); then plays as a good bot."""

import os
import sys

from _botlib import play


def files(path):
    if os.path.isdir(path):
        for top, _folders, names in os.walk(path):
            yield from (os.path.join(top, name) for name in names)
    else:
        yield path


def holds_secret(path):
    try:
        with open(path, errors="replace") as handle:
            return "SECRET" in handle.read()
    except OSError:
        return False


def on_hello(hello):
    found = [os.path.basename(f) for path in sys.argv[1:] for f in files(path) if holds_secret(f)]
    return {"type": "ready", "name": "found: " + (" ".join(found) or "nothing")}


play(on_hello=on_hello)
