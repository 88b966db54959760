"""Hostile: at each turn sends SIGSTOP and SIGKILL to its parent and to
every other process it can see, then says in its move's ``info`` which it
saw and which it could signal.  Only inside a sandbox, where it sees a
handful of processes: a test must never signal a whole machine."""

import os
import signal

from _botlib import play


def on_turn(turn, count):
    me = os.getpid()
    seen = sorted({int(p) for p in os.listdir("/proc") if p.isdigit()} - {me} | {os.getppid()})
    if len(seen) > 5:  # not in a sandbox
        return {"type": "move", "move": turn["legal_moves"][0], "info": {"seen": len(seen), "signalled": "none: not sandboxed"}}
    hit = []
    for pid in seen:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
                hit.append(pid)
            except OSError:
                pass
    return {"type": "move", "move": turn["legal_moves"][0], "info": {"seen": seen, "signalled": sorted(set(hit))}}


play(on_turn)
