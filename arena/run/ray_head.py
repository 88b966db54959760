"""Whether a Ray cluster's head answers: before connecting (a wrong address
is one line, not Ray's endless retries) and while a run plays (a head that
is gone ends the run in seconds, not when Ray gives up on it a minute
later, with no line of the arena's own).

The head is asked as a gRPC client asks any server: its GCS answers
HTTP/2's preface with a SETTINGS frame.  No Ray call is made, so the
question is answered even when Ray's own calls would wait on the head.
"""

from __future__ import annotations

import socket
import threading
import time

__all__ = ["HeadWatch", "check_head", "PROBE_EVERY_S", "REFUSED_FOR_S", "SILENT_FOR_S"]

#: What a gRPC client says first (HTTP/2's preface and an empty SETTINGS
#: frame): a Ray head's GCS, a gRPC server, answers with a SETTINGS frame of
#: its own; a web server or anything else does not.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])

#: How often a run asks the head whether it is there.
PROBE_EVERY_S = 1.0
#: A head whose port refuses connections this long is gone: its process
#: died (the machine answers for it), and does not come back by itself.
REFUSED_FOR_S = 2.0
#: A head that takes no connection, or says nothing on one, this long is
#: gone: its machine is off or unreachable, or it is frozen.  Longer, since
#: a head on a loaded machine may be slow to answer; Ray gives up at 60 s.
SILENT_FOR_S = 20.0


def check_head(address: str, timeout: float = 10.0) -> None:
    """Raise ``OSError`` unless ``host:port`` (or ``ray://host:port``) takes
    a TCP connection and answers as a gRPC server does: Ray retries an
    unreachable address for ever, and waits for ever on a server of another
    kind, printing warnings."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not (host and port.isdigit()):
        return
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(_HTTP2_HELLO)
        answer = b""
        try:
            while len(answer) < 9 and (piece := sock.recv(9 - len(answer))):
                answer += piece
        except TimeoutError:
            raise OSError(f"it takes connections but says nothing within {timeout:g} s, as no Ray head does") from None
    if len(answer) < 9 or answer[3] != 4:  # (the frame's type: SETTINGS)
        what = "a web server" if answer.startswith((b"HTTP/", b"<")) else "a server of another kind"
        raise OSError(f"it answers as {what}, not as a Ray head: is the port the head's? "
                      "(`ray start --head` prints it; 6379 by default)")


class HeadWatch:
    """A thread that asks the head at ``address`` (its GCS) every
    :data:`PROBE_EVERY_S` whether it answers, until :meth:`stop`; once it
    has refused connections for :data:`REFUSED_FOR_S`, or not answered for
    :data:`SILENT_FOR_S`, :attr:`gone` is true for good."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._gone = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="arena-ray-head", daemon=True)
        self._thread.start()

    @property
    def gone(self) -> bool:
        return self._gone.is_set()

    def _watch(self) -> None:
        refused_since: float | None = None
        silent_since: float | None = None
        while not self._stop.wait(PROBE_EVERY_S):
            now = time.monotonic()
            try:
                check_head(self.address, timeout=PROBE_EVERY_S)
            except (ConnectionRefusedError, ConnectionResetError):
                refused_since = now if refused_since is None else refused_since
            except OSError:  # no connection within the time, or no answer on it
                silent_since = now if silent_since is None else silent_since
            else:
                refused_since = silent_since = None
            if (refused_since is not None and now - refused_since >= REFUSED_FOR_S
                    or silent_since is not None and now - silent_since >= SILENT_FOR_S):
                self._gone.set()
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
