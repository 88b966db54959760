"""``arena serve``: the live view of a results directory, read-only, on aiohttp.

aiohttp gives the HTTP server and the event stream (server-sent events over
a plain ``StreamResponse``) in one well-kept library, with no separate ASGI
server to install or run.

One task (:class:`Hub`) polls the directory every :data:`POLL_S` through
:class:`~arena.live.state.LiveState`, on one thread of its own so that a slow
read never holds up the event loop, and pushes the new state to every open
stream: the status and the games in progress (``state``), and when the
results changed, how the page changed (``page``, :mod:`arena.live.delta`),
never the page itself.  A stream's queue holds a few events: a browser that
reads slowly misses states in between (and fetches the page whole when it
missed a change), never holds up the others (or the run, which never waits
on the server at all).

Safety: the page is the report's, its script and styles served as files under
a Content-Security-Policy that allows no inline script; the only files of the
results directory served are the bots' logs, as plain text, opened without
following a link; a large report's games are served as the report writes
them beside its page (scripts of a few hundred games, each of bounded size,
made from the results when asked for).  Every request needs the access
token the server prints in its address, except one from the server's own
user on loopback (:mod:`arena.live.peers`) naming a loopback host: another
user of a shared machine reads nothing the results directory's permissions
keep from them.  What a client can make the
server hold (connections, time, bytes) is bounded by :mod:`arena.run.connection_limits`:
every answer is written a piece at a time, a log read from its file as it goes.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, Awaitable, Callable

from aiohttp import web

from arena.base import safe_files
from arena.base.stop_signals import check
from arena.base.safe_files import RefusedFile
from arena.base.text import safe
from arena.run.connection_limits import CHUNK_BYTES, ConnectionGuard, Limits, listen, quiet_server_logs, write
from arena.live.peers import peer_uid
from arena.live.sharing import qr_svg, room_urls
from arena.live.state import LiveState
from arena.results.report import GAMES_FILE_NAME
from arena.results.store import LOGS_DIR, StoreError

__all__ = ["CSP", "MAX_LOG_BYTES", "POLL_S", "Hub", "event", "make_app", "serve"]

#: Seconds between two looks at the results directory: a move reaches the page well within a second.
POLL_S = 0.25
#: Least seconds between two announcements that the results changed (each
#: has every page fetched again).
RESULTS_EVERY_S = 2.0
#: The most of one core's time reading the results and building the page
#: may take: the pause after a reading is its cost over this share.  At
#: 5,000 games a reading costs about a second and a half: the page follows
#: the results every 30 s there, every 2 s up to about 300 games.
RESULTS_SHARE = 0.05
#: Seconds between two events on a quiet stream: a browser gone is noticed, and a page that hears
#: nothing for longer knows the server (or the network to it) is gone.
HEARTBEAT_S = 15.0
#: Events waiting for one stream; older ones are dropped for a slow reader.
QUEUE_EVENTS = 4
#: The most of a log file shown (a log is bounded when written; a forged one may not be).
MAX_LOG_BYTES = 4 << 20
TOKEN_PARAM = "token"
TOKEN_COOKIE = "arena_token"

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY", "Cache-Control": "no-store"}

#: The files the page loads, by name: nothing else is served from the package.
_ASSETS = {
    "report.css": ("arena.results.report", "text/css"),
    "viewer.js": ("arena.results.report", "text/javascript"),
    "live.css": ("arena.live", "text/css"),
    "live.js": ("arena.live", "text/javascript"),
}
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


class Hub:
    """Watches the results through ``state`` and hands each change to every stream."""

    def __init__(self, state: LiveState, poll_s: float = POLL_S, share: str | None = None) -> None:
        self.state = state
        self.poll_s = poll_s
        #: The address other machines open (with the token), shown on the page as a QR code; None on loopback.
        self.share = share
        self.streams: set[asyncio.Queue[bytes]] = set()
        #: The state event every new stream starts with.
        self.current = b""
        self._keys: Any = None
        #: When the results were last read.
        self._read_at = 0.0
        # The state is read on one thread, in turn: LiveState is not shared between threads.
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-live-read")

    async def read(self, call: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._reader, call)

    async def run(self) -> None:
        while True:
            try:
                await self.poll()
            except Exception as exc:  # noqa: BLE001 — a bad read must not end the live view
                self._keys = None  # read again at the next poll
                self.broadcast(event("problem", {"error": f"{type(exc).__name__}: {exc}"}))
            await asyncio.sleep(self.poll_s)

    async def poll(self) -> None:
        keys = await self.read(lambda: (self.state.results_key(), self.state.live_key()))
        if self._keys is None or keys[0] != self._keys[0]:
            now = time.monotonic()
            # A run starting or ending is told at once: the page must say so before a server beside the run stops.
            # The cost counts the page too, built after the reading when the open pages fetch it.
            pause = max(RESULTS_EVERY_S, self.state.cost / RESULTS_SHARE)
            if self._keys is not None and now < self._read_at + pause and keys[0][2] == self._keys[0][2]:
                keys = (self._keys[0], keys[1])  # read at the next poll after the pause: reading costs the run CPU
            else:
                await self.read(self.state.refresh)
                self._read_at = now
                if self._keys is not None and self.streams:  # the pages already open change
                    change = await self.read(self.state.page_change)
                    if change is not None:
                        self.broadcast(event("page", change), first=False)
        if keys == self._keys:
            return
        self._keys = keys
        self.broadcast(event("state", await self.snapshot()))

    async def snapshot(self) -> dict[str, Any]:
        """What a state event holds: the state's snapshot, which results it is of, whether there is a QR
        code, and how often the stream speaks at least."""
        snapshot = await self.read(self.state.snapshot)
        return {**snapshot, "results": self.state.generation, "share": self.share is not None, "heartbeat_s": HEARTBEAT_S}

    def broadcast(self, event: bytes, *, first: bool = True) -> None:
        """``event`` to every stream, and with ``first`` to each new one first."""
        if first:
            self.current = event
        for queue in self.streams:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(event)

    def close(self) -> None:
        self._reader.shutdown(wait=False, cancel_futures=True)


#: Put in a stream's queue when the server stops.
_END = b""


def event(name: str, data: Any) -> bytes:
    # ensure_ascii: no line break of any kind inside the one data line.
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'), ensure_ascii=True)}\n\n".encode()


@dataclass
class _Settings:
    hub: Hub
    token: str | None
    limits: Limits
    guard: ConnectionGuard


_SETTINGS = web.AppKey("settings", _Settings)


def make_app(state: LiveState, token: str | None = None, *, poll_s: float = POLL_S,
             limits: Limits = Limits(), share: str | None = None) -> web.Application:
    """The live view's web application over ``state``: a request must bring
    the ``token`` (``?token=``, then the cookie it sets), unless it comes
    from this process's user on loopback (without a token, only they).
    ``share``: the address other machines open, shown as a QR code."""
    app = web.Application(middlewares=[_guard])
    hub = Hub(state, poll_s, share)
    app[_SETTINGS] = _Settings(hub, token, limits, ConnectionGuard(limits))
    app.on_response_prepare.append(_with_headers)
    app.router.add_get("/", _page)
    app.router.add_get("/page", _page)
    app.router.add_get("/api/state", _state)
    app.router.add_get("/events", _events)
    app.router.add_get("/static/{name}", _asset)
    app.router.add_get("/logs/{tail:.*}", _log)
    app.router.add_get("/games/{name}", _games)
    app.router.add_get("/share.svg", _share)
    app.router.add_get("/favicon.ico", _no_icon)

    async def start_hub(app: web.Application) -> Any:
        task = asyncio.create_task(hub.run())
        yield
        task.cancel()
        hub.close()

    async def end_streams(app: web.Application) -> None:
        hub.broadcast(_END)  # each stream ends at once rather than hold the server's exit up

    app.cleanup_ctx.append(start_hub)
    app.on_shutdown.append(end_streams)
    return app


@web.middleware
async def _guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    settings = request.app[_SETTINGS]
    with settings.guard.serving(request):
        response = await _answer(request, handler)
        if isinstance(response, web.Response) and not response.prepared:
            body = b"" if response.body is None else response.body  # None: an answer without a body (204)
            assert isinstance(body, bytes)
            view = memoryview(body)
            streamed = web.StreamResponse(status=response.status, headers=response.headers)
            streamed.cookies.update(response.cookies)
            response = await _send(request, streamed, len(body), lambda offset: view[offset:offset + CHUNK_BYTES])
        return response


async def _answer(request: web.Request,
                  handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    settings = request.app[_SETTINGS]
    try:
        host = request.url.host or ""
    except ValueError:
        return _text("400: the Host header names no host\n", 400)
    if settings.token is not None and request.query.get(TOKEN_PARAM) and _has_token(request, settings.token):
        return _without_token(request, settings.token)
    # The same user's browser on loopback needs no token; a page elsewhere that renamed
    # itself to this machine (DNS rebinding) does, whoever runs the browser.
    if not ((settings.token is not None and _has_token(request, settings.token))
            or (host in _LOOPBACK_NAMES and await _same_user(request))):
        return _text("403: this live view needs the access token printed with its address\n", 403)
    try:
        return await handler(request)
    except web.HTTPException as exc:
        return _text(f"{exc.status}: {exc.reason}\n", exc.status)
    except Exception as exc:  # noqa: BLE001 — one line to the client, never a traceback on the organiser's terminal
        return _text(f"500: the live view could not answer ({type(exc).__name__})\n", 500)


def _has_token(request: web.BaseRequest, token: str) -> bool:
    presented = request.query.get(TOKEN_PARAM) or request.cookies.get(TOKEN_COOKIE) or ""
    return secrets.compare_digest(presented.encode(), token.encode())


async def _same_user(request: web.BaseRequest) -> bool:
    """Whether the client's socket is this process's user's (unknown: no).
    The kernel's table of sockets is read in a thread: anyone on the machine
    can make it long and ask again, and the event loop serves the others."""
    transport = request.transport
    if transport is None:
        return False
    peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
    return await asyncio.to_thread(peer_uid, peer, local) == os.geteuid()


def _without_token(request: web.BaseRequest, token: str) -> web.Response:
    """The token into a cookie, and the same address again without it: the token
    leaves the address bar (and the history, and a projected page) at once.

    The browser goes there by a navigation of the page's own (a refresh), not
    by a redirect: a browser sends a ``SameSite=Strict`` cookie on no request
    of a navigation another site began, its redirects and reloads included,
    so the address followed from a chat's or a course's page would get 403."""
    # One slash at the start: "//host/..." (or "/\\host") would be another site's address.
    there = "/" + str(request.rel_url.without_query_params(TOKEN_PARAM)).lstrip("/\\")
    response = web.Response(text=f'<!doctype html><meta http-equiv="refresh" content="0; url={html.escape(there)}">\n',
                            content_type="text/html", charset="utf-8")
    # No Secure flag: the server speaks plain HTTP, and a browser would not send such a cookie back.
    response.set_cookie(TOKEN_COOKIE, token, path="/", httponly=True, samesite="Strict")
    return response


async def _with_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """Every answer's safety headers."""
    for name, value in _HEADERS.items():
        response.headers.setdefault(name, value)


async def _send(request: web.BaseRequest, response: web.StreamResponse, size: int,
                piece: Callable[[int], bytes | memoryview]) -> web.StreamResponse:
    """``response`` with a body of ``size`` bytes, ``piece(offset)`` at a
    time: what waits for one client is a piece, whatever the body's size."""
    response.content_length = size
    settings = request.app[_SETTINGS]
    try:
        await response.prepare(request)
        offset = 0
        while offset < size and request.method != "HEAD":
            data = piece(offset)
            if not data:  # a file cut shorter meanwhile: the client must not wait for the bytes announced
                raise ConnectionResetError("the file is shorter than announced")
            await write(request, response, data, settings.limits)
            offset += len(data)
        await response.write_eof()
    except OSError:  # the client gone or too slow, or the file unreadable midway: the answer cannot be whole
        if request.transport is not None:
            request.transport.abort()
    return response


def _text(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/plain", headers=_HEADERS)


async def _page(request: web.Request) -> web.Response:
    hub = request.app[_SETTINGS].hub
    try:
        page, generation = await hub.read(lambda: (hub.state.page(), hub.state.generation))
        if request.path == "/":
            # The page a browser loads says which results it shows, for its script to tell whether the
            # stream's first state is newer; the page the script fetches is the text the changes apply to.
            page = page.replace(b"<head>\n", b'<head>\n<meta name="arena-results" content="%d">\n' % generation, 1)
        # Which results the page shows: the page changes the stream tells apply to this one.
        return web.Response(body=page, content_type="text/html", charset="utf-8",
                            headers={"X-Arena-Results": str(generation)})
    except ValueError as exc:  # records that contradict themselves
        return _text(f"500: cannot build the page of {hub.state.directory}: {safe(str(exc))}\n", 500)


async def _state(request: web.Request) -> web.Response:
    return web.json_response(await request.app[_SETTINGS].hub.snapshot())


async def _share(request: web.Request) -> web.Response:
    """The QR code of the address other machines open: the room scans it off the big screen."""
    share = request.app[_SETTINGS].hub.share
    if share is None:
        return _text("404: this live view listens on loopback only: no other machine reaches it\n", 404)
    return web.Response(body=qr_svg(share), content_type="image/svg+xml")


async def _events(request: web.Request) -> web.StreamResponse:
    settings = request.app[_SETTINGS]
    hub = settings.hub
    response = web.StreamResponse(headers={**_HEADERS, "Content-Type": "text/event-stream"})
    await response.prepare(request)
    queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUE_EVENTS)

    def lost() -> None:
        if queue.full():
            queue.get_nowait()
        queue.put_nowait(_END)

    settings.guard.mark_stream(request, lost)
    hub.streams.add(queue)
    try:
        await write(request, response, b"retry: 1000\n\n" + hub.current, settings.limits)
        while True:
            try:
                data = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
            except asyncio.TimeoutError:
                data = event("alive", {})  # an event, not a comment: the page hears it, and a silence past it means gone
            if data == _END:
                break
            await write(request, response, data, settings.limits)
    except (ConnectionError, RuntimeError):
        pass  # the browser went away (RuntimeError: aiohttp's transport already closed)
    finally:
        hub.streams.discard(queue)
    return response


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)  # a browser asks; a 404 would be an error in its console


async def _asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in _ASSETS:
        return _text("404: no such file\n", 404)
    package, kind = _ASSETS[name]
    return web.Response(text=resources.files(package).joinpath(name).read_text(encoding="utf-8"), content_type=kind)


async def _log(request: web.Request) -> web.StreamResponse:
    """A bot's log, as plain text: only under the logs folder, every part a plain name, no link followed;
    read from its file a piece at a time as the client takes it."""
    hub = request.app[_SETTINGS].hub
    tail = request.match_info["tail"]
    parts = PurePosixPath(tail).parts
    if (not parts or tail.startswith("/") or any(p in (".", "..") or p.startswith(".") or "\\" in p or "\0" in p
                                                  for p in parts) or tail != "/".join(parts)):
        return _text("403: only the files of the logs folder are served\n", 403)
    if hub.state.bot is not None and parts[0] != hub.state.bot:
        return _text("403: this live view shows one team's logs only\n", 403)
    relative = Path(LOGS_DIR, *parts)
    try:
        fd = safe_files.open_file(hub.state.directory, relative, os.O_RDONLY)
    except RefusedFile as exc:
        return _text(f"403: refused: {exc.what} is in the way; the live view follows no link\n", 403)
    except (FileNotFoundError, NotADirectoryError):
        return _text("404: no such log\n", 404)
    except OSError:
        return _text("404: this log cannot be read\n", 404)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_LOG_BYTES:
            return _text(f"403: too big to show ({size / (1 << 20):.1f} MiB); it is in {relative.as_posix()}\n", 403)
        # The bytes there when asked: a log still growing is shown as it was then.
        return await _send(request, web.StreamResponse(headers={"Content-Type": "text/plain; charset=utf-8"}), size,
                           lambda offset: os.pread(fd, min(CHUNK_BYTES, size - offset), offset))
    finally:
        os.close(fd)


async def _games(request: web.Request) -> web.Response:
    """A file of the games of the page (their moves), as the page's script loads it."""
    hub = request.app[_SETTINGS].hub
    name = request.match_info["name"]
    if GAMES_FILE_NAME.fullmatch(name) is None:
        return _text("404: no such file\n", 404)
    try:
        script = await hub.read(lambda: hub.state.games_file(name))
    except (ValueError, StoreError) as exc:  # records that contradict themselves, a log rewritten meanwhile
        return _text(f"500: cannot read the games of {hub.state.directory}: {safe(str(exc))}\n", 500)
    if script is None:
        return _text("404: no such file of games (the results changed since the page was built: reload it)\n", 404)
    return web.Response(body=script, content_type="text/javascript", charset="utf-8")


def serve(state: LiveState, host: str, port: int, *, on_ready: Callable[[str], None], token: str | None = None,
          stop: threading.Event | None = None, sock: socket.socket | None = None, limits: Limits = Limits()) -> None:
    """Serve ``state`` at ``host:port`` until interrupted (or ``stop`` is set);
    ``on_ready`` gets the address to open, with the access ``token`` (a
    random one unless given): a browser of another user, or one where the
    client's user cannot be told (another system than Linux), needs it.  ``sock``: already listening there
    (``arena run --serve`` binds it, to say a taken port before any address).
    Raises ``OSError`` when the port cannot be bound."""
    token = token or secrets.token_urlsafe(18)
    listening = sock if sock is not None else listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{listening.getsockname()[1]}/?{TOKEN_PARAM}={token}"  # port 0: the one the system chose
    shared = room_urls(url)
    app = make_app(state, token, limits=limits, share=shared[0] if shared else None)
    quiet_server_logs()

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0,
                               keepalive_timeout=limits.idle_timeout_s)
        await runner.setup()
        assert runner.server is not None
        server = await asyncio.get_running_loop().create_server(app[_SETTINGS].guard.factory(runner.server),
                                                                sock=listening)
        try:
            on_ready(url)
            while stop is None or not stop.is_set():
                check()  # a stop signal (under its flag: raised here, not wherever it landed)
                await asyncio.sleep(0.2)
        finally:
            server.close()
            await runner.cleanup()

    try:
        asyncio.run(main())
    finally:
        listening.close()
