"""Hostile: at its first turn of each game tries to connect to a TCP port on
the host's loopback (``options.port``) and to a public address, then says in
its move's ``info`` how each attempt ended."""

import socket

from _botlib import play, ready

PORT = {}


def on_hello(hello):
    PORT["port"] = hello["options"]["port"]
    return ready(hello)


def connect(host, port):
    try:
        with socket.create_connection((host, port), timeout=1):
            return "connected"
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def on_turn(turn, count):
    info = {}
    if turn["ply"] < 2:  # its first move of each game
        info = {"loopback": connect("127.0.0.1", PORT["port"]), "internet": connect("1.1.1.1", 53)}
    return {"type": "move", "move": turn["legal_moves"][0], "info": info}


play(on_turn, on_hello)
