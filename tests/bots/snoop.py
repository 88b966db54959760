"""Hostile: looks for secrets: every process's environment it can read
(``/proc/*/environ``), the other bots' scratch directories and logs (under
``options.results``), then puts whatever it found in its move's ``info``."""

import os

from _botlib import play, ready

RESULTS = {}


def on_hello(hello):
    RESULTS["dir"] = hello["options"]["results"]
    return ready(hello)


def environments():
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    found += [v.decode() for v in handle.read().split(b"\0") if b"SECRET" in v]
            except OSError:
                pass
    return found


def files():
    found = []
    for root, _dirs, names in os.walk(RESULTS["dir"]):
        for name in names:
            try:
                with open(os.path.join(root, name), errors="replace") as handle:
                    if "SECRET" in handle.read():
                        found.append(os.path.join(root, name))
            except OSError:
                pass
    return found


def on_turn(turn, count):
    info = {}
    if turn["ply"] < 2:  # its first move of each game
        info = {"environ": environments(), "files": files(), "results_visible": os.path.isdir(RESULTS["dir"])}
    return {"type": "move", "move": turn["legal_moves"][0], "info": info}


play(on_turn, on_hello)
