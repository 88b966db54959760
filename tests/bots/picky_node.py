"""Refuses to start where an entry of its PATH holds ``sys.argv[1]`` (the
Ray tests mark each node of a cluster on one machine so: a node on which
this bot cannot start); elsewhere plays the first legal move."""

import os
import sys

from _botlib import play

if any(sys.argv[1] in entry for entry in os.environ.get("PATH", "").split(os.pathsep)):
    sys.stderr.write(f"picky_node: not on a node marked {sys.argv[1]}\n")
    sys.exit(1)
play()
