"""The listener for remote bots in a process of its own.

Everything a remote bot's bridge sends, and anyone else who connects to the
port, is untrusted and arrives at the listener's pace, not the run's: a
storm of connections or a flood of junk requests would take the arena's
interpreter lock from the driver that stores results and hands out games.
So the run starts the listener (:class:`~arena.run.remote_listener.RemoteListener`)
as a child process, which serves the workers' claims on its hub (a Unix
socket, as before) and tells the run, one JSON line at a time on its
standard output, where it listens, which bots are connected and what
happened.  The child ends when the run closes its standard input, or when
the run dies (its standard input reaches end of file).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

__all__ = ["ListenerError", "ListenerProcess"]

#: How often the child looks for bots that connected or left.
_POLL_S = 0.05
#: How long the child may take to listen, or to stop.
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0


class ListenerError(Exception):
    """The listener could not start (its port taken, say); one line."""


class ListenerProcess:
    """A :class:`~arena.run.remote_listener.RemoteListener` for ``bots`` on
    ``host:port`` in a child process, with its methods the run uses:
    :meth:`start` (raises :class:`ListenerError`),
    :attr:`url`, :attr:`hub` (once started), :meth:`connected`, :meth:`wait_for` and
    :meth:`close`.  ``say`` is told each event line, on a thread of this process."""

    def __init__(self, bots: Collection[str], digests: Mapping[str, str], host: str, port: int,
                 say: Callable[[str], None]) -> None:
        self.bots, self.digests, self.host, self.port, self.say = list(bots), dict(digests), host, port, say
        self.hub = ""
        self.url = ""
        self._connected: dict[str, str] = {}
        self._child: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._ready = threading.Event()
        self._problem = ""

    def start(self) -> None:
        # The child imports this very arena, wherever the run found it.
        source = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(filter(None, (source, os.environ.get("PYTHONPATH"))))
        self._child = subprocess.Popen(  # (no shell, fixed arguments)
            [sys.executable, "-m", "arena.run.listener_process"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": path},
        )
        assert self._child.stdin is not None
        settings = {"bots": self.bots, "digests": self.digests, "host": self.host, "port": self.port}
        self._child.stdin.write(json.dumps(settings).encode() + b"\n")
        self._child.stdin.flush()
        self._reader = threading.Thread(target=self._read, name="remote-listener-events", daemon=True)
        self._reader.start()
        if not self._ready.wait(_START_TIMEOUT_S) or self._problem:
            problem = self._problem or f"the listener for remote bots did not start within {_START_TIMEOUT_S:g} s"
            self.close()
            raise ListenerError(problem)

    def connected(self) -> dict[str, str]:
        """The bots with at least one connection now, each with the version its
        bridge reports (as the child last said)."""
        return dict(self._connected)

    def wait_for(self, names: Collection[str], timeout_s: float) -> set[str]:
        """Wait up to ``timeout_s`` for each of ``names`` to connect; those that did not."""
        end = time.monotonic() + timeout_s
        while (missing := set(names) - set(self.connected())) and time.monotonic() < end:
            time.sleep(0.05)
        return missing

    def close(self) -> None:
        """Stop the child (it tells every bridge the run is over). Idempotent."""
        child, self._child = self._child, None
        if child is None:
            return
        try:
            assert child.stdin is not None
            child.stdin.close()
            child.wait(_STOP_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            child.kill()
            child.wait()
        if self._reader is not None:
            self._reader.join(5)

    def __enter__(self) -> ListenerProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self) -> None:
        child = self._child
        assert child is not None and child.stdout is not None
        for line in child.stdout:
            try:
                event: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            if "listening" in event:
                self.port, self.hub, self.url = event["listening"]
                self._ready.set()
            elif "problem" in event:
                self._problem = str(event["problem"])
                self._ready.set()
            elif "connected" in event:
                self._connected = dict(event["connected"])
            elif "say" in event:
                self.say(str(event["say"]))
        if not self._ready.is_set():
            self._problem = "the listener for remote bots ended before it listened"
            self._ready.set()
        elif self._child is not None:  # ended before the run closed it
            self._connected = {}
            self.say(f"the listener for remote bots ended (exit code {child.wait()}): remote bots cannot play")


def _serve() -> None:
    """The child: listen as the first line of standard input says, until it ends."""
    from arena.run.remote_listener import RemoteListener

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle: it closes the listener as it stops
    settings = json.loads(sys.stdin.readline())
    lock = threading.Lock()

    def tell(event: dict[str, Any]) -> None:
        with lock:
            sys.stdout.write(json.dumps(event) + "\n")
            sys.stdout.flush()

    listener = RemoteListener(settings["bots"], settings["digests"], settings["host"], settings["port"],
                              lambda line: tell({"say": line}))
    try:
        listener.start()
    except ListenerError as exc:
        tell({"problem": str(exc)})
        return
    tell({"listening": [listener.port, listener.hub, listener.url]})
    closed = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
    shown: dict[str, str] = {}
    try:
        while not closed.wait(_POLL_S):
            if (now := listener.connected()) != shown:
                shown = now
                tell({"connected": now})
    finally:
        listener.close()


def main() -> None:
    try:
        _serve()
    except BrokenPipeError:
        pass  # the run is gone


if __name__ == "__main__":
    # Through the module by its name: its ListenerError is the one the listener raises, not __main__'s.
    from arena.run import listener_process

    listener_process.main()
