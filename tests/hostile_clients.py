"""Hostile clients of a server the arena runs (the listener for remote bots):
a storm of connections opened and dropped, slowloris connections that
trickle a request head, requests with wrong tokens, and heads far over any
bound.  Each kind runs on a thread of its own until :meth:`Attack.stop`,
counting what it tried; none needs a token.  They come from 127.0.0.2, as
from another machine: the bridges of the tournament are on 127.0.0.1, and
the server bounds connections per address.  Used by tests/test_remote.py
and, as a process of its own (``python tests/hostile_clients.py PORT``,
until SIGTERM), by benchmarks/remote.py."""

from __future__ import annotations

import signal
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable

__all__ = ["Attack", "resident_mb"]

_UPGRADE = (b"GET / HTTP/1.1\r\nHost: arena\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")


class Attack:
    """Every kind of hostile client against ``host:port`` at once, each
    attempt at most ``rate`` a second per kind (a bounded loop: the machine
    running it plays the games too); ``slow`` connections held at a time."""

    def __init__(self, host: str, port: int, rate: float = 500.0, slow: int = 200) -> None:
        self.address = (host, port)
        self.pause = 1.0 / rate
        self.slow = slow
        self.tried: Counter[str] = Counter()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=kind, daemon=True)
                         for kind in (self._storm, self._slowloris, self._wrong_tokens, self._huge_heads)]

    def __enter__(self) -> Attack:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)

    def _connect(self) -> socket.socket | None:
        try:
            return socket.create_connection(self.address, timeout=2, source_address=("127.0.0.2", 0))
        except OSError:
            return None

    def _storm(self) -> None:
        """Connections opened and dropped at once, some with a reset."""
        while not self._stop.wait(self.pause):
            sock = self._connect()
            if sock is not None:
                sock.close()
            self.tried["storm"] += 1

    def _slowloris(self) -> None:
        """Connections that send a request head a byte every second, and never finish it."""
        held: list[socket.socket] = []
        while not self._stop.is_set():
            while len(held) < self.slow and not self._stop.is_set():
                sock = self._connect()
                if sock is None:
                    break
                held.append(sock)
                self.tried["slowloris"] += 1
            kept = []
            for sock in held:
                try:
                    sock.send(b"X")
                    kept.append(sock)
                except OSError:
                    sock.close()  # let go by the server: its header timeout works
            held = kept
            # Every second a byte; sooner while none is held (the server is not up yet, say).
            self._stop.wait(1.0 if held else self.pause)
        for sock in held:
            sock.close()

    def _wrong_tokens(self) -> None:
        """Whole WebSocket upgrades with a wrong token, read to their answer."""
        self._requests("wrong token", lambda number: b"Authorization: Bearer wrong%d\r\n" % number, self.pause)

    def _huge_heads(self) -> None:
        """Request heads of a megabyte, sent as fast as the server takes them."""
        junk = b"X-Junk: " + b"j" * (1 << 20) + b"\r\n"
        self._requests("huge head", lambda number: junk, self.pause * 10)

    def _requests(self, kind: str, header: Callable[[int], bytes], pause: float) -> None:
        """Upgrade requests with ``header(n)`` in the n-th, each read to its answer."""
        number = 0
        while not self._stop.wait(pause):
            sock = self._connect()
            if sock is None:
                continue
            number += 1
            try:
                sock.sendall(_UPGRADE + header(number) + b"\r\n")
                sock.recv(1000)
            except OSError:
                pass
            finally:
                sock.close()
            self.tried[kind] += 1


def resident_mb() -> float:
    """This process's resident memory now, in MB (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    """Attack 127.0.0.1:PORT until SIGTERM; print what was tried."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Attack("127.0.0.1", int(sys.argv[1]), rate=float(sys.argv[2]) if len(sys.argv) > 2 else 200.0) as attack:
        stop.wait()
    print(dict(attack.tried), flush=True)


if __name__ == "__main__":
    main()
