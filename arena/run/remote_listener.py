"""The listener for remote bots: a WebSocket server (aiohttp) that the
bridges of remote bots (``arena connect``) connect to, and the hub the
workers claim those connections through (:mod:`arena.bot.remote`).

It runs in the arena's process, on a thread of its own with its own event
loop, from the start of ``arena run`` to its end.  Each connection is one
bridge's bot: a text frame is one protocol line, either way.  A bridge
authenticates with its bot's token (``Authorization: Bearer TOKEN``,
checked against the digests of :mod:`arena.run.remote_tokens`) and names
the life of its bot program (:data:`BRIDGE_HEADER`), so that a connection
that drops and comes back is known for the same bot, mid-game.  A bridge
this listener never saw is a new program of its bot (a bridge killed and
started again): it takes over a game of its bot that lost its connection,
if there is one, and the worker greets it and hands it the game from the
position reached.  No other connection takes a game: a second bridge with
the same token is one more connection of the same bot, for its next game.

Everything a client sends is untrusted: a connection without a known token
is refused with a logged line and the run goes on; the number of
connections, the size of a message (the protocol's line limit) and the rate
of messages are bounded (:class:`ListenerLimits`); a close message is
cleaned before it is logged.  Close codes tell the bridge what to do:
:data:`RESTART` (start your bot afresh: its game was given up), 1001 (the
run is over).  The bridge closes with :data:`BOT_EXITED` when its bot's
program ended, which the game takes for a crash.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import re
import secrets
import shutil
import tempfile
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from arena.bot.protocol import MAX_LINE_BYTES
from arena.bot.remote import (
    ACCEPTED, BACK, BOT_LINE, ENDED, HUB_LINE_BYTES, LOST, NEW_PROGRAM, QUIT_LINE, REFUSED, RELEASE_LINE, ROUND_TRIP,
    TOO_LONG,
)
from arena.base.text import clean_text
from arena.run.connection_limits import ConnectionGuard, Limits, listen, quiet_server_logs
from arena.run.listener_process import ListenerError
from arena.run.remote_tokens import token_owner

__all__ = ["ListenerLimits", "RemoteListener", "BRIDGE_HEADER", "RESTART", "BOT_EXITED", "PATH"]

#: The header in which a bridge names the life of its bot program (any
#: random text it keeps until it restarts the program).
BRIDGE_HEADER = "X-Totem-Bridge"
#: The header in which a bridge reports its bot's version (a digest of its files, see arena connect).
VERSION_HEADER = "X-Totem-Version"
#: The listener's one path.
PATH = "/"
#: Close codes of the arena and the bridge (WebSocket's private range).
RESTART, BOT_EXITED = 4001, 4000
#: A dead peer (a network gone, not closed) is noticed within about this long.
HEARTBEAT_S = 5.0
#: How often the round trip of each connection is measured (a WebSocket ping,
#: which every client answers by itself: nothing for a bot's author to do).
PING_EVERY_S = 2.0
#: Round trips a connection's figure is the median of.
_ROUND_TRIPS = 5
#: How long a claim waits for a new connection's first round trip (beyond, its game grants none).
_FIRST_PING_S = 2.0
#: The shape of what a bridge names in a header (its bot's run, its version): nothing else is kept.
_HEADER_WORD = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Lines a session keeps to send again after a reconnection: those since the
#: bot's last line (a game's end, the next game's start, a turn at most).
_UNANSWERED = 16
#: Bridges whose games were given up, remembered so that they restart if they come back;
#: and bridges seen, so that one not seen is known for a new program.
_REMEMBERED = 1000
#: The longest a worker's claim waits for a free connection.
_LONGEST_CLAIM_S = 120.0
#: How long closing a connection waits for the bridge's answer (a dead one never gives it).
_CLOSE_TIMEOUT_S = 1.0
#: Refused connections said in the log each minute; the others are counted.
_REFUSALS_SAID = 20


@dataclass(frozen=True)
class ListenerLimits:
    """What one listener takes at most: bridges in all and per bot, and
    messages per second from one connection (``burst`` at once); and of
    every connection, a token or not, what :mod:`arena.run.connection_limits` bounds."""

    connections: int = 64
    per_bot: int = 8
    messages_per_s: float = 2000.0
    burst: int = 200
    #: An address that only ever sends junk (no token the listener knows) is shed after 32 tries in 10 s.
    network: Limits = Limits(shed_after=32)


@dataclass(eq=False)
class _Session:
    """A worker's claim of one connection for a game: from its ``hello`` to the
    connection given back (or ``quit``, or the worker giving the bot up)."""

    bot: str
    bridge: str
    writer: asyncio.StreamWriter
    link: _Link | None
    unanswered: deque[bytes] = field(default_factory=lambda: deque(maxlen=_UNANSWERED))
    #: Ended by ``quit`` or by the worker giving the connection back: the connection is free again.
    gentle: bool = False


@dataclass(eq=False)
class _Link:
    """One bridge's connection."""

    bot: str
    bridge: str
    peer: str
    ws: web.WebSocketResponse
    session: _Session | None = None
    allowance: float = 0.0
    stamp: float = 0.0
    #: The bridge's words in its close frame (untrusted).
    close_reason: str = ""
    #: The version the bridge reports (untrusted, checked for its shape), or "".
    version: str = ""
    #: The last round trips measured (seconds), and the ping not yet answered: its payload and when it went.
    round_trips: deque[float] = field(default_factory=lambda: deque(maxlen=_ROUND_TRIPS))
    ping: tuple[bytes, float] | None = None

    @property
    def round_trip_ms(self) -> float | None:
        """The median of the last round trips, None before the first."""
        if not self.round_trips:
            return None
        ordered = sorted(self.round_trips)
        return 1000 * ordered[len(ordered) // 2]


def _measured(link: _Link) -> bool:
    """The connection's round trip is known, or its first ping went unanswered for :data:`_FIRST_PING_S`."""
    return link.round_trip_ms is not None or link.ping is None or time.monotonic() >= link.ping[1] + _FIRST_PING_S


def _bearer(header: str) -> str:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class RemoteListener:
    """The listener for the remote bots ``bots`` on ``host:port`` (port 0:
    any free one), taking the tokens whose digests ``digests`` holds.
    ``say`` is told each event in one line (a connection refused, a bot
    connected, lost, back); it is called from the listener's thread.  Use
    as a context manager, or :meth:`start` and :meth:`close`."""

    def __init__(
        self, bots: Collection[str], digests: Mapping[str, str], host: str, port: int, say: Callable[[str], None],
        limits: ListenerLimits = ListenerLimits(),
    ) -> None:
        self.bots = frozenset(bots)
        self.digests = dict(digests)
        self.host = host
        self.port = port
        self.say = say
        self.limits = limits
        self._folder = Path(tempfile.mkdtemp(prefix="totem-remote-"))
        #: The Unix socket workers claim connections through.
        self.hub = str(self._folder / "hub.sock")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="remote-listener", daemon=True)
        self._runner: web.AppRunner | None = None
        self._guard = ConnectionGuard(limits.network)
        self._guard.on_shed = lambda address: self.say(
            f"closing the connections of {clean_text(address, 100)} as they come: {limits.network.shed_after} "
            f"connections without a known token in {limits.network.shed_window_s:g} s")
        self._server: asyncio.AbstractServer | None = None
        self._hub_server: asyncio.AbstractServer | None = None
        self._links: set[_Link] = set()
        self._idle: defaultdict[str, list[_Link]] = defaultdict(list)
        self._lost: dict[tuple[str, str], _Session] = {}
        self._given_up: deque[tuple[str, str]] = deque(maxlen=_REMEMBERED)
        self._seen: deque[tuple[str, str]] = deque(maxlen=_REMEMBERED)
        #: When a connection of each bot last ended (its bridge reconnects at once).
        self._ended: dict[str, float] = {}
        #: Refusals said and not said in the minute since ``_minute``.
        self._minute, self._said, self._unsaid = time.monotonic(), 0, 0

    # --- from the arena's thread ---

    def start(self) -> None:
        """Listen, or raise :class:`ListenerError`."""
        self._thread.start()
        try:
            self._call(self._serve())
        except OSError as exc:
            self.close()
            raise ListenerError(f"cannot listen for remote bots on {self.host}:{self.port}: {exc.strerror or exc}") from None

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}{PATH}"

    def connected(self) -> dict[str, str]:
        """The bots with at least one connection now, each with the version
        its latest connection reports ("" when it reports none)."""
        return {link.bot: link.version for link in list(self._links)}

    def close(self) -> None:
        """Tell every bridge the run is over, stop listening, and remove the hub. Idempotent."""
        if self._thread.is_alive():
            try:
                self._call(self._shut())
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(5)
        if not self._loop.is_running() and not self._loop.is_closed():
            self._loop.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> RemoteListener:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, coroutine: Coroutine[Any, Any, None]) -> None:
        future: concurrent.futures.Future[None] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        future.result(30)

    # --- on the listener's thread ---

    async def _serve(self) -> None:
        quiet_server_logs()
        app = web.Application()
        app.router.add_get(PATH, self._connection)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        assert self._runner.server is not None
        # Every connection counted and clocked from its first byte, a token or not
        # (one that never sends its request, or is refused, is let go): see connection_limits.
        sock = self._guard.listening(listen(self.host, self.port))
        self._server = await asyncio.get_running_loop().create_server(self._guard.factory(self._runner.server), sock=sock)
        self.port = sock.getsockname()[1]
        self._hub_server = await asyncio.start_unix_server(self._claim, path=self.hub, limit=HUB_LINE_BYTES)

    async def _shut(self) -> None:
        if self._hub_server is not None:
            self._hub_server.close()
        if self._server is not None:
            self._server.close()
        for link in list(self._links):
            await link.ws.close(code=WSCloseCode.GOING_AWAY, message=b"the tournament is over")
        if self._runner is not None:
            await self._runner.cleanup()

    async def _connection(self, request: web.Request) -> web.StreamResponse:
        """One bridge: authenticated, then relayed until it closes (its
        connection's clocks stopped meanwhile); a refusal closes it."""
        with self._guard.serving(request):
            response = await self._bridge(request)
        if response.status in (401, 503):
            response.force_close()
        return response

    async def _bridge(self, request: web.Request) -> web.StreamResponse:
        peer = clean_text(request.remote or "?", 100)
        if len(self._links) >= self.limits.connections:
            self._refused(f"refused a connection from {peer}: {len(self._links)} connections already, the most taken")
            return web.Response(status=503, text="too many connections\n")
        token = _bearer(request.headers.get("Authorization", ""))
        bot = token_owner(self.digests, token)
        if bot is None or bot not in self.bots:
            why = ("no token" if not token else "a wrong token" if bot is None
                   else f"the token of {bot!r}, not a remote bot of this tournament")
            self._refused(f"refused a connection from {peer}: {why}")
            self._guard.junk(request.remote or "")
            return web.Response(status=401, text="unknown token\n")
        self._guard.vouch(request.remote or "")
        if sum(link.bot == bot for link in self._links) >= self.limits.per_bot:
            self._refused(f"refused a connection of {bot} from {peer}: it has {self.limits.per_bot} already, the most taken")
            return web.Response(status=503, text="too many connections for this bot\n")
        bridge = request.headers.get(BRIDGE_HEADER, "")
        if not _HEADER_WORD.fullmatch(bridge):
            bridge = secrets.token_hex(8)
        # Pings and pongs come to the relay (autoping off): a pong gives the round trip, a ping counts in the rate.
        ws = web.WebSocketResponse(max_msg_size=MAX_LINE_BYTES, heartbeat=HEARTBEAT_S, timeout=_CLOSE_TIMEOUT_S,
                                   autoping=False)
        await ws.prepare(request)
        version = request.headers.get(VERSION_HEADER, "")
        link = _Link(bot, bridge, peer, ws, allowance=self.limits.burst, stamp=time.monotonic(),
                     version=version if _HEADER_WORD.fullmatch(version) else "")
        self._links.add(link)
        pinger = asyncio.get_running_loop().create_task(self._ping(link))
        try:
            if await self._attach(link):
                await self._relay(link)
        finally:
            pinger.cancel()
            self._links.discard(link)
            if link in self._idle[bot]:
                self._idle[bot].remove(link)
            await self._link_ended(link)
        return ws

    async def _attach(self, link: _Link) -> bool:
        """Back into its game, idle for the next claim, or told to restart; False when closed."""
        key = (link.bot, link.bridge)
        session = self._lost.pop(key, None)
        stale = next((old for old in self._links if old is not link and (old.bot, old.bridge) == key), None)
        if stale is not None:
            # The bridge is back before this side saw its old connection die
            # (a half-dead TCP is found only by the heartbeat): the new one takes over.
            session, stale.session = stale.session, None
            if stale in self._idle[link.bot]:
                self._idle[link.bot].remove(stale)
            await stale.ws.close(code=WSCloseCode.GOING_AWAY, message=b"replaced by a new connection")
            if session is None:
                self._idle[link.bot].append(link)
                return True
        if session is not None:
            session.link, link.session = link, session
            self.say(f"{link.bot} is back from {link.peer}")
            await self._to_worker(session, BACK + b"\n")
            for line in list(session.unanswered):
                await self._to_bot(link, line)
            return True
        if key in self._given_up:
            await link.ws.close(code=RESTART, message=b"the game of this bot was given up: start it afresh")
            return False
        if key not in self._seen:
            self._seen.append(key)
            if await self._renew(link):
                return True
        self._idle[link.bot].append(link)
        self.say(f"{link.bot} connected from {link.peer}")
        return True

    async def _renew(self, link: _Link) -> bool:
        """A new program of its bot takes over the game of the bot's connection
        lost longest ago, if there is one: its lines so far are not sent again
        (the worker greets the new program), and the old program, should it
        come back, starts afresh."""
        old = next((key for key in self._lost if key[0] == link.bot), None)
        if old is None:
            return False
        session = self._lost.pop(old)
        self._given_up.append(old)
        session.unanswered.clear()
        session.bridge, session.link, link.session = link.bridge, link, session
        self.say(f"{link.bot} came back as a new program from {link.peer}")
        await self._to_worker(session, NEW_PROGRAM + b"\n")
        return True

    async def _relay(self, link: _Link) -> None:
        ws = link.ws
        while True:
            message = await ws.receive()
            if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
                link.close_reason = message.extra if isinstance(message.extra, str) else ""
                return
            if message.type == WSMsgType.ERROR:
                if getattr(message.data, "code", None) == WSCloseCode.MESSAGE_TOO_BIG and link.session is not None:
                    await self._to_worker(link.session, TOO_LONG + b"\n")
                return
            if message.type in (WSMsgType.PING, WSMsgType.PONG):
                if not self._within_rate(link):
                    await self._too_many(link)
                    return
                if message.type == WSMsgType.PING:
                    await ws.pong(message.data)
                else:
                    await self._ponged(link, message.data)
                continue
            data = message.data.encode() if message.type == WSMsgType.TEXT else bytes(message.data)
            session = link.session
            if session is None:
                self.say(f"{link.bot} sent a line while no game was on: connection closed, its bridge restarts it")
                await ws.close(code=RESTART, message=b"a line while no game was on")
                return
            session.unanswered.clear()
            # A frame is a line; one with newlines in it is several, as on a pipe, each one
            # message of the rate (a frame of a million newlines would hold the loop for seconds).
            for piece in data.removesuffix(b"\n").split(b"\n"):
                if not self._within_rate(link):
                    await self._too_many(link)
                    return
                await self._to_worker(session, BOT_LINE + piece + b"\n")

    async def _too_many(self, link: _Link) -> None:
        self.say(f"{link.bot} sent over {self.limits.messages_per_s:g} messages a second: connection closed")
        await link.ws.close(code=WSCloseCode.POLICY_VIOLATION, message=b"too many messages")

    async def _ping(self, link: _Link) -> None:
        """Measure the connection's round trip now and every :data:`PING_EVERY_S`.
        The payload is random and only the pong of the ping last sent counts,
        so a bridge cannot answer before it is asked; it can answer late, which
        the cap of an ``auto`` network margin bounds."""
        while not link.ws.closed:
            nonce = secrets.token_bytes(8)
            link.ping = (nonce, time.monotonic())
            try:
                await link.ws.ping(nonce)
            except (ConnectionError, RuntimeError):
                return
            await asyncio.sleep(PING_EVERY_S)

    async def _ponged(self, link: _Link, payload: bytes) -> None:
        if link.ping is None or payload != link.ping[0]:
            return  # an answer to aiohttp's heartbeat, or to nothing asked
        link.round_trips.append(time.monotonic() - link.ping[1])
        link.ping = None
        if link.session is not None and (ms := link.round_trip_ms) is not None:
            await self._to_worker(link.session, ROUND_TRIP + f"{ms:.1f}".encode() + b"\n")

    def _refused(self, line: str) -> None:
        """Say a refusal; past :data:`_REFUSALS_SAID` in a minute, count them
        instead, so that a flood of bad connections cannot flood the log."""
        now = time.monotonic()
        if now >= self._minute + 60:
            if self._unsaid:
                self.say(f"refused {self._unsaid} more connections in the last minute")
            self._minute, self._said, self._unsaid = now, 0, 0
        if self._said < _REFUSALS_SAID:
            self._said += 1
            self.say(line)
        else:
            self._unsaid += 1

    def _within_rate(self, link: _Link) -> bool:
        now = time.monotonic()
        link.allowance = min(self.limits.burst, link.allowance + (now - link.stamp) * self.limits.messages_per_s)
        link.stamp = now
        link.allowance -= 1
        return link.allowance >= 0

    async def _link_ended(self, link: _Link) -> None:
        self._ended[link.bot] = time.monotonic()
        session = link.session
        code = link.ws.close_code
        if session is None:
            self.say(f"{link.bot} from {link.peer} disconnected")
            return
        link.session, session.link = None, None
        if code == BOT_EXITED:
            why = clean_text(link.close_reason, 200) or "no reason given"
            self.say(f"{link.bot}'s program ended in a game: {why}")
            await self._to_worker(session, ENDED + f"its program ended on its machine: {why}".encode() + b"\n")
            return
        self._lost[(link.bot, link.bridge)] = session
        self.say(f"{link.bot} lost its connection in a game; waiting for it to come back")
        await self._to_worker(session, LOST + b"\n")

    async def _claim(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A worker claims a connection of a bot, then relays the bot's lines until it gives it back."""
        try:
            claim = json.loads(await asyncio.wait_for(reader.readline(), 5))
            if not isinstance(claim, dict):
                raise ValueError("a claim is an object")
            bot = claim["bot"] if isinstance(claim.get("bot"), str) else ""
            wait_s = float(claim.get("wait_s", 0))
            wait_s = min(wait_s, _LONGEST_CLAIM_S) if math.isfinite(wait_s) else 0.0
        except (ValueError, TypeError, asyncio.TimeoutError, ConnectionError, asyncio.LimitOverrunError):
            writer.close()
            return
        idle = self._idle[bot]
        end = time.monotonic() + wait_s
        # Busy connections free up as games end, and a bridge whose connection
        # just ended (a network that dropped, a bot restarted) comes back at
        # once; a bot not connected for longer is not waited for.  A connection
        # just made has its first ping out: its round trip is the game's network margin.
        while not (idle and _measured(idle[0])) and time.monotonic() < end and (
                any(link.bot == bot for link in self._links) or time.monotonic() < self._ended.get(bot, 0.0) + wait_s):
            await asyncio.sleep(0.02)
        if not idle:
            held = sum(link.bot == bot for link in self._links)
            why = (f"remote bot {bot} is not connected (its author runs arena connect)" if not held else
                   f"every connection of remote bot {bot} was in a game for {wait_s:g} s ({held}; "
                   "arena connect --connections N opens more)")
            writer.write(REFUSED + why.encode() + b"\n")
            writer.close()
            return
        link = idle.pop(0)
        session = _Session(bot, link.bridge, writer, link)
        link.session = session
        ms = link.round_trip_ms
        writer.write(ACCEPTED + (b"" if ms is None else f"{ms:.1f}".encode()) + b"\n")
        try:
            while (line := await reader.readuntil(b"\n")) != RELEASE_LINE:
                session.unanswered.append(line)
                session.gentle = line == QUIT_LINE
                if session.link is not None:
                    await self._to_bot(session.link, line)
            session.gentle = True
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()
            await self._session_ended(session)

    async def _session_ended(self, session: _Session) -> None:
        """Given back (or after ``quit``) the connection waits for another
        claim; given up (a forfeit that leaves the bot's state unknown), its bot is restarted."""
        key = (session.bot, session.bridge)
        link = session.link
        self._lost.pop(key, None)
        if link is None:
            self._given_up.append(key)
            return
        link.session = None
        if session.gentle:
            self._idle[session.bot].append(link)
            return
        self._given_up.append(key)
        await link.ws.close(code=RESTART, message=b"the game of this bot was given up: start it afresh")

    async def _to_bot(self, link: _Link, line: bytes) -> None:
        try:
            await link.ws.send_str(line.removesuffix(b"\n").decode())
        except (ConnectionError, RuntimeError):
            pass  # the connection is going: its end is handled where it is read

    async def _to_worker(self, session: _Session, data: bytes) -> None:
        try:
            session.writer.write(data)
            await session.writer.drain()
        except ConnectionError:
            pass  # the worker gave the bot up: its end is handled where it is read
