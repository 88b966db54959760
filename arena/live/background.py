"""``arena run --serve`` and ``arena match --serve``: the live view beside the run.

The server is a process of its own (``arena serve``), not a thread of the
arena: it builds pages on its own core and its own interpreter lock, and
whatever happens to it (a port in use, a crash) the run goes on.  It reads
the results directory as ``arena serve`` from another terminal would, on a
socket the run binds before it starts the server: a taken port is said at
once, before any address is printed.  It
stops when its stdin closes: a moment after the run ends (once the page has
shown how the run ended), or when the arena dies, however it dies.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

from arena.run.connection_limits import listen
from arena.live.server import POLL_S, TOKEN_PARAM

__all__ = ["TOKEN_ENV", "LiveServer"]

#: The access token the arena hands its server: not in its command line, where ``ps`` shows it.
TOKEN_ENV = "ARENA_LIVE_TOKEN"

class LiveServer:
    """``arena serve directory`` as a child process, for the length of a ``with`` block."""

    def __init__(self, directory: Path, port: int, host: str) -> None:
        self.directory = directory
        self.port = port
        self.host = host
        self.token = secrets.token_urlsafe(18)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/?{TOKEN_PARAM}={self.token}"

    def __enter__(self) -> LiveServer:
        """Raises ``OSError`` when the port cannot be bound (nothing started)."""
        env = {**os.environ, TOKEN_ENV: self.token}
        sock = listen(self.host, self.port)
        with sock:  # the server holds its own copy
            # Its own process group: Ctrl-C stops the run, which then stops the server.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "arena", "serve", str(self.directory), "--host", self.host, "--port",
                 str(self.port), "--beside-run", "--listen-fd", str(sock.fileno())],
                env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, process_group=0, pass_fds=(sock.fileno(),),
            )
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        time.sleep(5 * POLL_S)  # the page learns that the run ended, or stopped
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def until_stdin_closes() -> threading.Event:
    """An event set when this process's stdin ends: the server beside a run stops with it."""
    closed = threading.Event()

    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        closed.set()

    threading.Thread(target=watch, name="arena-live-stdin", daemon=True).start()
    return closed
