"""Hostile: tries to append a forged record to ``games.jsonl``, by path
(``options.results``, from the tournament file) and through its parent's
open files (``/proc/<ppid>/fd``), then says in its move's ``info`` how each
attempt ended."""

import json
import os

from _botlib import play, ready

FORGED = json.dumps({"game_id": "forged", "winner": "pink", "reason": "alignment"}) + "\n"
RESULTS = {}


def on_hello(hello):
    RESULTS["dir"] = hello["options"]["results"]
    return ready(hello)


def attempt(path):
    try:
        with open(path, "a") as handle:
            handle.write(FORGED)
        return "written"
    except OSError as exc:
        return exc.strerror


def on_turn(turn, count):
    info = {}
    if turn["ply"] < 2:  # its first move of each game
        info["by_path"] = attempt(os.path.join(RESULTS["dir"], "games.jsonl"))
        fd_dir = f"/proc/{os.getppid()}/fd"
        try:
            targets = [os.path.join(fd_dir, fd) for fd in os.listdir(fd_dir)
                       if os.readlink(os.path.join(fd_dir, fd)).endswith("games.jsonl")]
            info["by_fd"] = [attempt(path) for path in targets] or "no games.jsonl among its parent's files"
        except OSError as exc:
            info["by_fd"] = exc.strerror
    return {"type": "move", "move": turn["legal_moves"][0], "info": info}


play(on_turn, on_hello)
