"""A server's bounds: connections, timeouts, bytes held for a client (the
live view's, and the listener of remote bots).

The servers run beside a tournament on the organiser's machine, and any
local process (a bot among them), or anyone on the network, can connect.
So what one client can make a server hold is bounded, whatever it does:

- connections: :data:`MAX_CONNECTIONS` in all, :data:`MAX_PER_ADDRESS` from
  one address; beyond, the oldest event stream is closed to make room (a
  browser's stream comes back by itself a second later), or else the new
  connection gets a ready-made 503 without a byte of it parsed;
- time: a request's head must arrive within :data:`HEADER_TIMEOUT_S` of the
  connection (or of the end of the last answer on it, :data:`IDLE_TIMEOUT_S`),
  and every write of an answer must be taken by the client within
  :data:`WRITE_TIMEOUT_S`, else the connection is closed;
- bytes: an answer is written in pieces of :data:`CHUNK_BYTES`, the next
  only once the client has taken all but :data:`SEND_BUFFER_BYTES` of what
  was written before; the socket's own send buffer is that size too;
- junk (a server that asks for it, :attr:`Limits.shed_after`): an address
  none of whose clients the server vouched for (a token it knows), whose
  connections were refused or ended without a request that many times in
  :attr:`Limits.shed_window_s`, has its next connections closed as they are
  accepted (:meth:`ConnectionGuard.listening`), before a byte is read or a
  transport or protocol made for them, until it stops that long: a flood from
  one machine costs the server an accept and a close each.  An address once
  vouched for is never shed; a client behind the address of a flood that
  began before the client first came is kept out with it while it lasts.

:class:`ConnectionGuard` keeps the count and the clocks; it stands between
the listening socket and aiohttp, one small protocol object per connection.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from aiohttp import web

__all__ = ["CHUNK_BYTES", "HEADER_TIMEOUT_S", "IDLE_TIMEOUT_S", "MAX_CONNECTIONS", "MAX_PER_ADDRESS", "SHED_WINDOW_S",
           "SEND_BUFFER_BYTES", "WRITE_TIMEOUT_S", "ConnectionGuard", "Limits", "listen", "quiet_server_logs", "write"]

#: Connections open at once: well under the usual 1,024 descriptors of a process.
MAX_CONNECTIONS = 256
#: Connections from one address: a browser opens six at most, a projector and a few tabs fit.
MAX_PER_ADDRESS = 64
#: Seconds from a connection (or its last answer) to a whole request head: a slowloris client is let go.
HEADER_TIMEOUT_S = 10.0
#: Seconds a kept-alive connection may wait for its next request.
IDLE_TIMEOUT_S = 30.0
#: Seconds a client may take to accept one piece of an answer: a client that stops reading is let go.
WRITE_TIMEOUT_S = 10.0
#: Bytes of an answer waiting for one client (in the server, and as much again in its socket).
SEND_BUFFER_BYTES = 64 << 10
#: Bytes read from a file, or sliced from the page, per write.
CHUNK_BYTES = 64 << 10
#: Seconds a refused connection stays open for its 503 to be read.
_REFUSED_LINGER_S = 1.0
#: Seconds after a connection closes before the freed memory is handed back (once for a crowd leaving).
_TRIM_AFTER_S = 1.0
#: Seconds over which an address's junk connections are counted (:attr:`Limits.shed_after`).
SHED_WINDOW_S = 10.0
#: Addresses whose junk is counted, and addresses vouched for, at once: past it, the oldest are dropped
#: (their clients come back as new ones).
_MOST_COUNTED = 4096
#: Connections of shed addresses closed in one accept: the loop's other work comes between batches.
_SHED_AT_ONCE = 128


def _malloc_trim() -> Callable[[], None]:
    """glibc's ``malloc_trim(0)``, or nothing elsewhere: the pieces of two hundred answers freed
    between other allocations stay in the process until handed back page by page."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    return lambda: trim(0)


_trim = _malloc_trim()


@dataclass(frozen=True)
class Limits:
    """The bounds one server applies (tests give small ones)."""

    connections: int = MAX_CONNECTIONS
    per_address: int = MAX_PER_ADDRESS
    header_timeout_s: float = HEADER_TIMEOUT_S
    idle_timeout_s: float = IDLE_TIMEOUT_S
    write_timeout_s: float = WRITE_TIMEOUT_S
    send_buffer: int = SEND_BUFFER_BYTES
    #: Junk connections from an address (refused, or ended without a request) in ``shed_window_s`` after
    #: which its next ones are closed as they come; None: never (the live view: a browser opens connections
    #: it does not use).
    shed_after: int | None = None
    shed_window_s: float = SHED_WINDOW_S


def quiet_server_logs() -> None:
    """Keep aiohttp's log of a request it could not parse (a client's junk:
    a head over its bounds, a broken upgrade) out of the organiser's terminal,
    where Python would print each with its traceback."""
    log = logging.getLogger("aiohttp")
    if not any(isinstance(handler, logging.NullHandler) for handler in log.handlers):
        log.addHandler(logging.NullHandler())
    log.propagate = False


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: any free one).  Raises ``OSError``."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


async def write(request: web.BaseRequest, response: web.StreamResponse, data: bytes | memoryview,
                limits: Limits) -> None:
    """``data`` to the client, within the write timeout.  Raises
    ``ConnectionResetError`` (the connection closed) when the client does
    not take it in time or is gone."""
    try:
        await asyncio.wait_for(response.write(data), limits.write_timeout_s)
    except asyncio.TimeoutError:
        transport = request.transport
        if transport is not None:
            transport.abort()  # what it left unread is let go with it
        raise ConnectionResetError("the client took no data for the write timeout") from None


def _refusal() -> bytes:
    body = b"503: this live view has all the connections it serves; try again later\n"
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Content-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s" % (len(body), body))


_REFUSAL = _refusal()


class _Connection(asyncio.Protocol):
    """One accepted connection: aiohttp's protocol behind the guard's accounting and clocks."""

    def __init__(self, guard: ConnectionGuard, make_inner: Callable[[], asyncio.Protocol]) -> None:
        self.guard = guard
        # (made once admitted: a connection closed as it comes costs no protocol of aiohttp's)
        self._make_inner = make_inner
        self.inner: asyncio.Protocol | None = None
        self.requests = 0
        self.transport: asyncio.Transport | None = None
        self.address = ""
        self.busy = 0
        self.stream = False
        self.on_lost: Callable[[], None] | None = None
        self.deadline = 0.0
        self._timer: asyncio.TimerHandle | None = None

    # -- asyncio's side -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) else ""
        if not self.guard.admit(self):
            self.guard.junk(self.address)
            self.guard.refuse(transport)
            return
        self.inner = self._make_inner()
        limits = self.guard.limits
        transport.set_write_buffer_limits(high=limits.send_buffer)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, limits.send_buffer)
        self._arm(limits.header_timeout_s)
        assert self.inner is not None
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.inner is not None:
            self.guard.forget(self)
            if not self.requests:  # connected and went (or was let go) without asking anything
                self.guard.junk(self.address)
            self.inner.connection_lost(exc)
            self.inner = None
        if self.on_lost is not None:
            self.on_lost()

    # -- the clocks ---------------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self.deadline = loop.time() + seconds
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(self.deadline, self._expire)

    def _expire(self) -> None:
        self._timer = None
        if not self.busy and self.transport is not None:
            self.transport.abort()  # no request head in time, or none after the last answer

    def started(self) -> None:
        self.busy += 1
        self.requests += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def ended(self) -> None:
        self.busy -= 1
        if not self.busy and self.transport is not None and not self.transport.is_closing():
            self._arm(self.guard.limits.idle_timeout_s)


class _Shedding(socket.socket):
    """A listening socket whose ``accept`` closes at once what its guard sheds (see :meth:`ConnectionGuard.listening`)."""

    guard: ConnectionGuard

    def accept(self) -> tuple[socket.socket, object]:
        # As socket.socket.accept (this socket is non-blocking: so is the one accepted), with the shed ones
        # closed by their descriptor, no object made for them.
        for _ in range(_SHED_AT_ONCE):
            fd, address = self._accept()  # type: ignore[attr-defined]
            if not self.guard.sheds(str(address[0]) if isinstance(address, tuple) else ""):
                return socket.socket(self.family, self.type, self.proto, fileno=fd), address
            os.close(fd)
        raise BlockingIOError  # (asyncio takes it for "no more now"; the rest at the loop's next turn)


class ConnectionGuard:
    """Counts the connections of a server, by address, and gives each its clocks."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.by_transport: dict[asyncio.BaseTransport, _Connection] = {}
        self.per_address: dict[str, int] = {}
        self._lingering = 0
        self._trimming: asyncio.TimerHandle | None = None
        #: By address not vouched for, when its junk connections came (the last ``shed_after``).
        self._junk: dict[str, deque[float]] = {}
        self._vouched: dict[str, None] = {}
        self._told: dict[str, float] = {}
        #: Told an address whose connections are now closed as they come (once each time it starts).
        self.on_shed: Callable[[str], None] = lambda address: None
        #: Connections closed as they came.
        self.shed = 0

    def factory(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """The protocol factory for ``loop.create_server``: ``inner``'s protocols (aiohttp's), guarded."""
        return lambda: _Connection(self, inner)

    def listening(self, sock: socket.socket) -> socket.socket:
        """``sock`` (listening: ``create_server``'s) as a socket whose ``accept`` closes the connections of a shed
        address as it takes them from the kernel, and hands the others on.  ``sock`` is detached."""
        shedding = _Shedding(sock.family, sock.type, sock.proto, fileno=sock.detach())
        shedding.guard = self
        return shedding

    def vouch(self, address: str) -> None:
        """A client at ``address`` showed the server who it is: its address is never shed."""
        if address not in self._vouched and len(self._vouched) >= _MOST_COUNTED:
            del self._vouched[next(iter(self._vouched))]
        self._vouched[address] = None
        self._junk.pop(address, None)

    def junk(self, address: str) -> None:
        """A connection from ``address`` was refused, or ended without a request."""
        most = self.limits.shed_after
        if most is None or address in self._vouched:
            return
        times = self._junk.get(address)
        if times is None:
            if len(self._junk) >= _MOST_COUNTED:
                del self._junk[next(iter(self._junk))]
            times = self._junk[address] = deque(maxlen=most)
        now = time.monotonic()
        times.append(now)
        window = self.limits.shed_window_s
        if len(times) == most and now - times[0] <= window and now - self._told.get(address, -window) > window:
            if len(self._told) >= _MOST_COUNTED:
                del self._told[next(iter(self._told))]
            self._told[address] = now  # (said once a spell, not once a junk connection past the bound)
            self.on_shed(address)

    def sheds(self, address: str) -> bool:
        """Whether a connection from ``address`` is closed as it comes (see :attr:`Limits.shed_after`)."""
        times = self._junk.get(address)
        most = self.limits.shed_after
        if times is None or most is None or len(times) < most or time.monotonic() - times[0] > self.limits.shed_window_s:
            return False
        self.shed += 1
        return True

    def admit(self, connection: _Connection) -> bool:
        """Whether ``connection`` may be served, once the oldest stream in its way is closed."""
        address = connection.address
        if self.per_address.get(address, 0) >= self.limits.per_address:
            self._close_oldest_stream(address)
        if len(self.by_transport) >= self.limits.connections:
            self._close_oldest_stream(None)
        if (self.per_address.get(address, 0) >= self.limits.per_address
                or len(self.by_transport) >= self.limits.connections):
            return False
        assert connection.transport is not None
        self.by_transport[connection.transport] = connection
        self.per_address[address] = self.per_address.get(address, 0) + 1
        return True

    def forget(self, connection: _Connection) -> None:
        if self.by_transport.pop(connection.transport, None) is None:  # type: ignore[arg-type]
            return
        if self._trimming is None:
            self._trimming = asyncio.get_running_loop().call_later(_TRIM_AFTER_S, self._trim)
        left = self.per_address[connection.address] - 1
        if left:
            self.per_address[connection.address] = left
        else:
            del self.per_address[connection.address]

    def _trim(self) -> None:
        self._trimming = None
        _trim()

    def _close_oldest_stream(self, address: str | None) -> None:
        for connection in self.by_transport.values():  # oldest first: a dict keeps the order of admission
            if connection.stream and (address is None or connection.address == address):
                self.forget(connection)  # counted out now: its close completes later
                assert connection.transport is not None
                connection.transport.abort()
                return

    def refuse(self, transport: asyncio.Transport) -> None:
        """The ready-made 503, then the connection closed: at once when many refused ones linger already."""
        transport.write(_REFUSAL)
        if self._lingering >= self.limits.connections:
            transport.abort()
            return
        # Closed with a request unread, the socket would send a reset that can reach the client before the 503.
        try:
            transport.write_eof()
        except OSError:  # the client is gone already (it reset the connection): nothing to linger for
            transport.abort()
            return
        self._lingering += 1
        loop = asyncio.get_running_loop()

        def end() -> None:
            self._lingering -= 1
            transport.abort()

        loop.call_later(_REFUSED_LINGER_S, end)

    @contextmanager
    def serving(self, request: web.BaseRequest) -> Iterator[None]:
        """Around one request: its connection's header and idle clocks stop meanwhile."""
        connection = self.by_transport.get(request.transport) if request.transport is not None else None
        if connection is None:  # served without the guard (a test server)
            yield
            return
        connection.started()
        try:
            yield
        finally:
            connection.ended()

    def mark_stream(self, request: web.BaseRequest, on_lost: Callable[[], None]) -> None:
        """The connection of ``request`` holds an event stream: the first to close when room is needed;
        ``on_lost`` is called when it closes (the stream's handler need not wait for its next write to learn it)."""
        connection = self.by_transport.get(request.transport) if request.transport is not None else None
        if connection is not None:
            connection.stream = True
            connection.on_lost = on_lost
