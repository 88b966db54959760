"""A relay of connections between two addresses, for the tests of remote
bots (tests/test_remote.py): to the arena's port, from a port whose
connections a test cuts or holds back (a network that fails, a long line);
and the one way out of a network namespace that a bridge runs in, through
a Unix socket (a file: every namespace sees it, while the namespace has
no network but its own loopback).

``python tests/relay.py SOCKET -- CMD ...``, inside the namespace: relays
a free port of its loopback to ``SOCKET`` and runs ``CMD``, ``{port}`` in
it replaced by that port, until it ends (killed with it)."""

from __future__ import annotations

import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Union

from arena.bot.reaper import set_parent_death_signal

__all__ = ["Proxy", "Address"]

#: A port of 127.0.0.1, or a Unix socket's path.
Address = Union[int, str]


def _connect(address: Address) -> socket.socket:
    if isinstance(address, int):
        return socket.create_connection(("127.0.0.1", address))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
    except OSError:
        sock.close()
        raise
    return sock


def _unix_server(path: str) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen()
    return server


class Proxy:
    """A relay to ``target`` (a port of 127.0.0.1, or a Unix socket's path)
    from a free port of 127.0.0.1 (:attr:`port`), or from the Unix socket
    ``listen`` names, whose connections :meth:`cut` drops, as a network
    that fails; ``delay_s`` holds back every chunk each way, as a long line does."""

    def __init__(self, target: Address, delay_s: float = 0.0, listen: str | None = None) -> None:
        self.target = target
        self.delay_s = delay_s
        self.server = socket.create_server(("127.0.0.1", 0)) if listen is None else _unix_server(listen)
        self.port = self.server.getsockname()[1] if listen is None else 0
        self.sockets: list[socket.socket] = []
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = _connect(self.target)
            except OSError:  # the run is over: its listener is gone, the bridge knocks on
                client.close()
                continue
            self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        if self.delay_s:  # each chunk is due delay_s after it came, whatever came before it (a line, not a queue)
            chunks: queue.Queue[tuple[float, bytes]] = queue.Queue()
            threading.Thread(target=self._deliver, args=(chunks, sink), daemon=True).start()
        try:
            while data := source.recv(65536):
                if self.delay_s:
                    chunks.put((time.monotonic() + self.delay_s, data))
                else:
                    sink.sendall(data)
        except OSError:
            pass

    @staticmethod
    def _deliver(chunks: queue.Queue[tuple[float, bytes]], sink: socket.socket) -> None:
        try:
            while True:
                due, data = chunks.get()
                time.sleep(max(0.0, due - time.monotonic()))
                sink.sendall(data)
        except OSError:
            pass

    def cut(self) -> None:
        sockets, self.sockets = self.sockets, []
        for sock in sockets:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, not a goodbye
            try:
                sock.shutdown(socket.SHUT_RDWR)  # a pump thread blocked in recv holds the socket open past close
            except OSError:
                pass
            sock.close()
        self.cuts += 1

    def close(self) -> None:
        self.server.close()
        self.cut()


def main(argv: list[str]) -> int:
    path, dashes, *cmd = argv
    if dashes != "--" or not cmd:
        print("usage: relay.py SOCKET -- CMD ...", file=sys.stderr)
        return 2
    proxy = Proxy(path)
    child = subprocess.Popen([part.replace("{port}", str(proxy.port)) for part in cmd],
                             preexec_fn=lambda: set_parent_death_signal(signal.SIGKILL))
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
