"""A remote bot as a process of the arena sees it: the same lines, by the
same deadlines, as :class:`~arena.bot.process.BotProcess`, but carried to
a bot on another machine.

The bot runs on its author's machine behind ``arena connect``, which holds
a WebSocket to the arena's listener (:mod:`arena.run.remote_listener`).  The
listener runs in the arena's own process; the worker that plays a game
reaches it over a Unix socket, its *hub*, and claims one of the bot's
connections for each game (:meth:`RemoteBotProcess.release` gives it back,
its bot running on), so that any worker may play the bot next.
The referee and its clock are unchanged: a move's time runs from the
``turn`` line handed to the hub to the move line read back, so the network's
round trip is the remote bot's.

The hub speaks tagged lines to the worker (:data:`BOT_LINE` and the others
below); the worker writes the protocol's lines to the hub as they are.  The
listener measures each connection's round trip with pings: the claim's
answer carries it, and each new figure follows during the game; a move of
the bot is granted a network margin from it (or the one the tournament
file sets), fixed for the game.  A
connection lost in a game is waited for ``reconnect_s`` (on the bot's clock
when it is the bot's turn): back in time, the hub sends the lines not yet
answered again and the game goes on; not back, :class:`Disconnected`.  A
bridge killed and started again in that time is a new program on the same
connection, which knows nothing of the game: :class:`Rejoined` tells the
player to greet it and hand it the game from the position reached.
"""

from __future__ import annotations

import json
import math
import select
import socket
import time
from collections import deque

from arena.bot.process import (
    BotProcessError, LineBuffer, LineTimeout, LineTooLong, ProcessExited, StartError, WriteTimeout,
)
from arena.bot.protocol import MAX_LINE_BYTES
from arena.bot.protocol_log import ProtocolLog
from arena.bot.spec import AUTO_MARGIN_CAP_MS, QUIT_GRACE_S, RemoteLink

__all__ = [
    "RemoteBotProcess", "Disconnected", "Rejoined", "BOT_LINE", "LOST", "BACK", "NEW_PROGRAM", "ENDED", "TOO_LONG",
    "ACCEPTED", "REFUSED", "ROUND_TRIP", "HUB_LINE_BYTES", "QUIT_LINE", "RELEASE_LINE",
]

#: Tags of the hub's lines to a worker: a line the bot sent; its connection
#: was lost; it is back; it is back as a new program (its bridge restarted:
#: the lines before are not sent again); the bot's side ended (its program
#: exited); it sent a line over the limit; the claim of a connection accepted
#: (with the connection's round trip in ms, when measured) or refused (with
#: why); the round trip measured again (ms).
BOT_LINE, LOST, BACK, NEW_PROGRAM, ENDED, TOO_LONG, ACCEPTED, REFUSED, ROUND_TRIP = (
    b"L", b"D", b"C", b"S", b"X", b"T", b"O", b"N", b"P")
#: The longest line between hub and worker: a protocol line and its tag.
HUB_LINE_BYTES = MAX_LINE_BYTES + 16
#: The line that ends a bot's session gently (``quit``): the bridge's bot
#: exits by itself and the connection stays, ready for another ``hello``.
QUIT_LINE = b'{"type":"quit"}\n'
#: The worker's line that gives the connection back after a game, its bot
#: running on for the next claim (which greets it again; the bridge answers
#: that ``hello`` with the bot's first ``ready``).  Not JSON: the arena's own
#: lines all are, so it is never a protocol line.
RELEASE_LINE = b"R\n"
#: How long the hub may take to answer a claim, beyond the wait asked for.
_CLAIM_TIMEOUT_S = 5.0
_POLL_SLICE_S = 0.05
#: Bot lines kept unread: one is already a line out of turn.
_INBOX_LINES = 4


class Disconnected(BotProcessError):
    """The remote bot's connection was lost and did not come back in time."""


class Rejoined(BotProcessError):
    """The remote bot's connection came back as a new program (its bridge
    was started again), which knows nothing of the game: it is to be greeted
    (``hello``) and given the game from the position reached.  Raised by
    :meth:`RemoteBotProcess.read_line` once for each new program, when no
    line is unread (the old program's lines are dropped)."""


class RemoteBotProcess:
    """One claimed connection of remote bot ``name``, with the methods of
    :class:`~arena.bot.process.BotProcess` a player uses.  ``transcript``
    logs every line as ``debug`` asks (the arena's side of the wire)."""

    def __init__(self, name: str, link: RemoteLink, transcript: ProtocolLog | None = None) -> None:
        self.name = name
        self.link = link
        self.transcript = transcript
        #: Never over a quota: the bot's files are on its own machine.
        self.scratch_over: str | None = None
        self._sock: socket.socket | None = None
        self._poll = select.poll()
        self._lines = LineBuffer(HUB_LINE_BYTES)
        self._inbox: deque[bytes | None] = deque()  # None: a line that was too long
        self._ended: str | None = None
        self._lost_at: float | None = None
        #: A new program took the connection, not greeted yet.
        self._renewed = False
        #: The connection's round trip as the listener last measured it (ms), None before it did.
        self.round_trip_ms: float | None = None
        #: What each move of this game is granted beyond the clock and the arena's margin (ms).
        self.network_margin_ms = 0.0

    # --- life cycle ---

    def start(self, wait_s: float = 0.0) -> None:
        """Claim one of the bot's connections, waiting up to ``wait_s`` for
        one to be free (another worker's game may hold each).  Raises
        :class:`StartError` when the run has no listener, the bot is not
        connected, or no connection was free in time."""
        if self.link.hub is None:
            raise StartError(f"{self.name} is a remote bot, and this command runs no listener for remote bots "
                             "(remote bots play in arena run)")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(wait_s + _CLAIM_TIMEOUT_S)
            sock.connect(self.link.hub)
            sock.sendall(json.dumps({"bot": self.name, "wait_s": wait_s}).encode() + b"\n")
            answer, after = _answer(sock)
        except OSError as exc:
            sock.close()
            raise StartError(f"cannot reach the listener for remote bots: {exc.strerror or exc}") from None
        if not answer.startswith(ACCEPTED):
            sock.close()
            why = answer[1:].decode(errors="replace").strip() or "the listener closed the claim"
            raise StartError(why)
        sock.setblocking(False)
        self._sock = sock
        self._poll = select.poll()
        self._poll.register(sock.fileno(), select.POLLIN)
        self._lines = LineBuffer(HUB_LINE_BYTES)
        self._inbox.clear()
        self._ended = None
        self._lost_at = None
        self._renewed = False
        self.round_trip_ms = _milliseconds(answer[1:])
        self.network_margin_ms = self.link.network_margin_ms if self.link.network_margin_ms is not None else min(
            AUTO_MARGIN_CAP_MS, self.round_trip_ms or 0.0)
        self._take(after)  # (what the hub sent right after accepting: a line of the game already)

    def kill(self) -> None:
        """Give the connection back; without ``quit`` first, the bridge restarts its bot.  Idempotent."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def release(self) -> None:
        """Give the connection back after a game, its bot running on for the next."""
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.setblocking(True)
                sock.settimeout(1.0)
                sock.sendall(RELEASE_LINE)
            except OSError:
                pass  # the hub is gone: so is the connection
            sock.close()

    def stop(self, grace: float = QUIT_GRACE_S) -> None:
        """After ``quit``: the bridge's bot exits by itself (within its own grace)."""
        self.kill()

    def settle_stderr(self, timeout: float = 0.05) -> None:
        """Nothing to settle: a remote bot's stderr stays on its machine."""

    @property
    def alive(self) -> bool:
        """Claimed, its bot not ended and its connection not lost for longer than ``reconnect_s``."""
        if self._sock is None:
            return False
        self._pump(0)
        return self._ended is None and not self._given_up(time.monotonic())

    def _given_up(self, now: float) -> bool:
        return self._lost_at is not None and now >= self._lost_at + self.link.reconnect_s

    # --- lines ---

    def send_line(self, data: bytes, deadline: float) -> None:
        """Hand ``data`` to the hub, which relays it (or keeps it while the
        connection is lost, to send when it is back).  Raises
        :class:`ProcessExited` when the bot's side has ended."""
        sock = self._claimed()
        if self.transcript is not None:
            self.transcript.sent(data)
        view = memoryview(data)
        sent = 0
        while sent < len(data):
            try:
                sent += sock.send(view[sent:])
                continue
            except BlockingIOError:
                pass
            except OSError:
                raise self._exit_error("the listener for remote bots closed the connection") from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WriteTimeout("the listener for remote bots did not take the line by the deadline")
            select.select([], [sock], [], min(remaining, _POLL_SLICE_S))

    def has_output(self) -> bool:
        """Whether the bot sent a line not read yet (or its side ended)."""
        self._pump(0)
        return bool(self._inbox) or self._ended is not None

    def read_line(self, deadline: float, spin: bool = False) -> str:
        """The bot's next line, as :meth:`BotProcess.read_line
        <arena.bot.process.BotProcess.read_line>` gives it.  While the
        connection is lost the wait goes on, until ``deadline`` or the end
        of ``reconnect_s``, whichever comes first: then :class:`Disconnected`;
        when it comes back as a new program, :class:`Rejoined`.
        ``spin`` is taken and ignored: an answer over the network never comes
        within the microseconds a spin looks for."""
        self._claimed()
        looked = False
        while True:
            if self._inbox:
                line = self._inbox.popleft()
                if line is None:
                    raise LineTooLong(f"the bot sent a line over the limit of {MAX_LINE_BYTES} bytes")
                if self.transcript is not None:
                    self.transcript.received(line)
                return line.decode("utf-8", errors="replace")
            if self._ended is not None:
                raise self._exit_error(self._ended)
            if self._renewed:
                self._renewed = False
                raise Rejoined("its bridge was started again: a new program, which knows nothing of the game")
            now = time.monotonic()
            if self._given_up(now):
                raise self._disconnected(now)
            if looked and now >= deadline:
                if self._lost_at is not None:
                    raise self._disconnected(now, "its time ran out")
                raise LineTimeout("no complete line from the bot by the deadline")
            looked = True
            end = deadline if self._lost_at is None else min(deadline, self._lost_at + self.link.reconnect_s)
            self._pump(max(0.0, min(end - now, _POLL_SLICE_S)))

    def _disconnected(self, now: float, why: str = "") -> Disconnected:
        assert self._lost_at is not None
        gone = now - self._lost_at
        return Disconnected(f"lost its connection and was not back after {gone:.1f} s"
                            + (f" ({why})" if why else f" (reconnect_s: {self.link.reconnect_s:g})"))

    def _claimed(self) -> socket.socket:
        if self._sock is None:
            raise self._exit_error("its connection is given back")
        return self._sock

    def _exit_error(self, why: str) -> ProcessExited:
        return ProcessExited(f"the remote bot's side ended: {why}", None, "")

    def _pump(self, wait_s: float) -> None:
        """Take in what the hub sent, waiting up to ``wait_s`` for something."""
        sock = self._sock
        if sock is None or self._ended is not None:
            return
        if not self._poll.poll(math.ceil(wait_s * 1000)):
            return
        try:
            chunk = sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:  # reset: as good as closed
            chunk = b""
        if not chunk:
            self._ended = "the listener for remote bots closed the connection"
            return
        self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        line = self._lines.add(chunk) if chunk else None
        while line is not None or (line := self._lines.take()) is not None:
            self._tagged(line.encode())
            line = None

    def _tagged(self, line: bytes) -> None:
        tag, rest = line[:1], line[1:]
        if tag == BOT_LINE or tag == TOO_LONG:
            # (a new program's lines before its hello answer nothing: dropped, as the old program's are)
            if len(self._inbox) < _INBOX_LINES and not self._renewed:
                self._inbox.append(rest if tag == BOT_LINE else None)
        elif tag == LOST:
            self._lost_at = time.monotonic()
        elif tag == BACK:
            self._lost_at = None
        elif tag == NEW_PROGRAM:
            self._lost_at = None
            self._renewed = True
            self._inbox.clear()  # the old program's: nothing a new one is asked can be answered by them
        elif tag == ENDED:
            self._ended = rest.decode(errors="replace") or "the bot's program ended"
        elif tag == ROUND_TRIP and (measured := _milliseconds(rest)) is not None:
            self.round_trip_ms = measured


def _milliseconds(text: bytes) -> float | None:
    """The hub's figure of a round trip, None when it has none."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _answer(sock: socket.socket) -> tuple[bytes, bytes]:
    """The hub's answer to a claim (its first line), and the bytes that came
    after it in the same reads (a buffered reader would have kept them)."""
    data = b""
    while b"\n" not in data and len(data) < 1000:
        chunk = sock.recv(1000)
        if not chunk:
            break
        data += chunk
    line, newline, after = data.partition(b"\n")
    return line + newline, after
