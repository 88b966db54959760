"""``arena connect URL --token T -- ./mybot args``: the bridge a remote
bot's author runs on their own machine.

It starts the bot as a local process when the arena greets it (``hello``),
relays the protocol's lines both ways (a WebSocket text frame is one
line), and keeps the bot running while the network drops: it reconnects
with a growing pause (:data:`FIRST_PAUSE_S` doubling up to
:data:`LONGEST_PAUSE_S`) under the same bridge id, so the arena puts the
connection back into the game and sends again what was not answered.  A
line sent again that the bot already had is not given to it twice: the
answer it gave is sent again instead (the arena's lines never repeat
within one program's life).  A bridge started again (a new id) while
its bot's game waits for it is a new program to the arena, which greets
it and hands it that game from the position reached.  What happens is
said on stderr, a line each (connected, a game started, its result); the
bot's own stderr is the terminal's.

Close codes from the arena (:mod:`arena.run.remote_listener`): ``RESTART``
(the bot's game was given up: the program is killed, and started afresh
at the next ``hello``) and 1001 (the run is over: the bridge waits for the
next).  When the bot's program ends without being told to ``quit``, the
bridge closes with ``BOT_EXITED`` and the arena counts it a crash.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import os
import secrets
import signal
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from arena.bot.protocol import MAX_LINE_BYTES
from arena.bot.reaper import set_parent_death_signal
from arena.bot.spec import BotConfig, command_problem, split_command
from arena.bot.version import fingerprint
from arena.base.text import clean_text
from arena.run.remote_listener import BOT_EXITED, BRIDGE_HEADER, HEARTBEAT_S, RESTART, VERSION_HEADER

__all__ = ["BridgeOptions", "bridge_options", "run_bridge", "FIRST_PAUSE_S", "LONGEST_PAUSE_S"]

FIRST_PAUSE_S = 0.2
LONGEST_PAUSE_S = 10.0
#: Lines of the arena remembered (by digest) to tell one sent again.
_SEEN = 32
_REQUESTS = ('{"type":"hello"', '{"type":"turn"')
_QUIT = '{"type":"quit"}'


@dataclass(frozen=True)
class BridgeOptions:
    """``url`` of the arena's listener, the bot's ``token``, its command and
    folder; ``connections`` bots at once (one per game the arena plays with
    it at a time); ``delay_ms`` added before each line to the arena, to try
    the bot as if the network were slower."""

    url: str
    token: str
    cmd: tuple[str, ...]
    cwd: Path | None = None
    connections: int = 1
    delay_ms: float = 0.0
    #: The bot's version as this bridge reports it to the arena: a digest of
    #: its command and the files it names, as the arena fingerprints a local bot.
    version: str = ""


class _Refused(Exception):
    """The arena does not take this token: retrying would not help."""


class _Slot:
    """One connection and the bot program behind it."""

    def __init__(self, number: int, options: BridgeOptions, say: Callable[[str], None]) -> None:
        self.options = options
        self.tag = f"[{number}] " if options.connections > 1 else ""
        self._say = say
        self.bridge = secrets.token_hex(8)
        self.bot: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task[None] | None = None
        #: Digest of each line given to the bot -> the bot's answer (None: not yet, or a notice).
        self.seen: OrderedDict[bytes, str | None] = OrderedDict()
        self.awaiting: bytes | None = None
        #: The bot's first ``hello`` and its ``ready``: each game's claim greets it again.
        self.greeting: tuple[bytes, str | None] | None = None
        self.quitting = False
        #: Why the bot's program ended uninvited, when the arena is yet to be told.
        self.crashed: str | None = None
        #: The connection while there is one.
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        #: The connection was closed by this side, to report a crash.
        self.told_crash = False
        self.outbox: deque[str] = deque()
        self.ready_to_send = asyncio.Event()
        #: The bot's colour in the game on.
        self.you: object = None

    def say(self, text: str) -> None:
        self._say(f"{datetime.datetime.now():%H:%M:%S.%f}"[:-3] + f" {self.tag}{text}")

    async def run(self) -> None:
        pause = FIRST_PAUSE_S
        headers = {"Authorization": f"Bearer {self.options.token}"}
        async with aiohttp.ClientSession() as http:
            while True:
                try:
                    ws = await http.ws_connect(self.options.url, headers={**headers, BRIDGE_HEADER: self.bridge,
                                                                          VERSION_HEADER: self.options.version},
                                               heartbeat=HEARTBEAT_S, max_msg_size=MAX_LINE_BYTES)
                except aiohttp.WSServerHandshakeError as exc:
                    if exc.status == 401:
                        raise _Refused("the arena refused the token (wrong, or not for a bot of its tournament)") from None
                    self.say(f"the arena answered HTTP {exc.status}; trying again in {pause:g} s")
                except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
                    self.say(f"cannot reach {self.options.url} ({clean_text(str(exc) or type(exc).__name__, 200)}); "
                             f"trying again in {pause:g} s")
                else:
                    pause = FIRST_PAUSE_S
                    code = await self._connected(ws)
                    if code == RESTART:
                        await self.stop_bot()
                        continue
                await asyncio.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE_S)

    async def _connected(self, ws: aiohttp.ClientWebSocketResponse) -> int | None:
        """Relay until the connection ends; its close code."""
        if self.crashed is not None:  # it ended while the connection was down: the game it was in is lost
            await self._report_crash(ws)
            self.told_crash = False
            return None
        self.ws = ws
        self.say(f"connected to {self.options.url}")
        # What the bot said before the connection dropped is said again as
        # the answer to the line the arena sends again, if it does.
        self.outbox.clear()
        sender = asyncio.create_task(self._send(ws))
        try:
            async for message in ws:
                if message.type == aiohttp.WSMsgType.TEXT:
                    await self._from_arena(message.data)
                elif message.type == aiohttp.WSMsgType.BINARY:
                    await self._from_arena(message.data.decode(errors="replace"))
        finally:
            sender.cancel()
            self.ws = None
        code = ws.close_code
        if self.told_crash:  # this side closed it, saying so
            self.told_crash = False
            return None
        if code == RESTART:
            self.say("the arena gave up this bot's game: its program is restarted")
        elif code == aiohttp.WSCloseCode.GOING_AWAY:
            self.say("the arena closed the connection: its run is over; waiting for the next")
            await self.stop_bot()
        else:
            self.say(f"connection lost (code {code}); reconnecting, the bot keeps running")
        return code

    async def _send(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """Send the bot's lines in order; one not sent stays first in the outbox."""
        while True:
            await self.ready_to_send.wait()
            while self.outbox:
                if self.options.delay_ms > 0:
                    await asyncio.sleep(self.options.delay_ms / 1000)
                try:
                    await ws.send_str(self.outbox[0])
                except (ConnectionError, RuntimeError):
                    return  # the connection is going: the receiving loop sees it end
                self.outbox.popleft()
            self.ready_to_send.clear()

    def _queue(self, line: str) -> None:
        self.outbox.append(line)
        self.ready_to_send.set()

    def _sent_again(self, key: bytes) -> bool:
        """Whether the bot already had the line of digest ``key`` (sent again
        after a reconnection, or the ``hello`` of each game's claim): then
        its answer, if it gave one, is sent again, and the bot is not told twice."""
        if self.greeting is not None and self.greeting[0] == key and self.bot is not None:
            answer = self.greeting[1]
        elif key in self.seen:
            answer = self.seen[key]
        else:
            return False
        if answer is not None:
            self._queue(answer)
        return True

    async def _from_arena(self, line: str) -> None:
        key = hashlib.sha1(line.encode()).digest()
        if self._sent_again(key):
            return
        if self.bot is None:
            if not line.startswith('{"type":"hello"'):
                return
            try:
                await self._start_bot()
            except OSError as exc:  # gone since the bridge checked it: its hello goes unanswered, a startup_failure
                self.say(f"cannot start the bot: {exc.strerror or exc}")
                return
        self._announce(line)
        self.seen[key] = None
        while len(self.seen) > _SEEN:
            self.seen.popitem(last=False)
        if line.startswith(_REQUESTS):
            self.awaiting = key
        if line.startswith('{"type":"hello"'):
            self.greeting = (key, None)
        self.quitting = line == _QUIT
        bot = self.bot
        assert bot is not None and bot.stdin is not None
        try:
            bot.stdin.write(line.encode() + b"\n")
            await bot.stdin.drain()
        except (ConnectionError, RuntimeError):
            pass  # it is ending: the reader says so

    def _announce(self, line: str) -> None:
        """A game's start and end, in a line each."""
        if not line.startswith(('{"type":"new_game"', '{"type":"game_over"')):
            return
        try:
            message = json.loads(line)
        except ValueError:
            return
        game = clean_text(message.get("game_id"), 80)
        if message.get("type") == "new_game":
            self.you = message.get("you")
            players = message.get("players") if isinstance(message.get("players"), dict) else {}
            opponents = [clean_text(name, 64) for color, name in players.items() if color != self.you]
            self.say(f"game {game} started: {clean_text(self.you, 20)} against {', '.join(opponents)}")
            return
        winner = message.get("winner")
        result = "a draw" if winner is None else "won" if winner == self.you else "lost"
        self.say(f"game {game} over: {result} ({clean_text(message.get('reason'), 40)})")

    def _forget(self) -> None:
        """What the bridge knows of the lines of a bot program, whose life is over."""
        self.seen.clear()
        self.awaiting = None
        self.greeting = None
        self.quitting = False

    async def _start_bot(self) -> None:
        options = self.options
        self._forget()
        self.bot = await asyncio.create_subprocess_exec(
            *options.cmd, cwd=options.cwd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            limit=MAX_LINE_BYTES + 1, start_new_session=True, preexec_fn=lambda: set_parent_death_signal(signal.SIGKILL),
        )
        self.say(f"started the bot (pid {self.bot.pid})")
        # Held: the event loop keeps only a weak reference to a task.
        self.reader = asyncio.create_task(self._read_bot(self.bot))

    async def _read_bot(self, bot: asyncio.subprocess.Process) -> None:
        assert bot.stdout is not None
        why = ""
        while True:
            try:
                raw = await bot.stdout.readline()
            except ValueError:
                why = f"the bot wrote a line over {MAX_LINE_BYTES} bytes"
                break
            if not raw:
                break
            line = raw.decode(errors="replace").rstrip("\r\n")
            if self.awaiting is not None:
                self.seen[self.awaiting] = line
                if self.greeting is not None and self.greeting == (self.awaiting, None):
                    self.greeting = (self.awaiting, line)
                self.awaiting = None
            self._queue(line)
        if bot is not self.bot:
            return
        code = await _ended(bot)
        self.bot = None
        quitting = self.quitting
        self._forget()
        if quitting:
            self.say("the bot quit")
            return
        self.crashed = why or f"the bot exited with code {code}"
        self.say(self.crashed)
        if self.ws is not None and not self.ws.closed:
            await self._report_crash(self.ws)

    async def _report_crash(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """Tell the arena the bot's program ended (its game is a crash); the next connection is a new bot's."""
        why, self.crashed = self.crashed or "", None
        self.bridge = secrets.token_hex(8)
        self.told_crash = True
        await ws.close(code=BOT_EXITED, message=why.encode()[:120])

    async def stop_bot(self) -> None:
        bot, self.bot = self.bot, None
        self.bridge = secrets.token_hex(8)
        self._forget()
        if bot is not None and bot.returncode is None:
            try:
                os.killpg(bot.pid, signal.SIGKILL)
            except OSError:
                pass
            await bot.wait()


async def _ended(bot: asyncio.subprocess.Process) -> int:
    """The exit code, killing the bot if it closed its output but lingers."""
    try:
        return await asyncio.wait_for(bot.wait(), 2.0)
    except asyncio.TimeoutError:
        try:
            os.killpg(bot.pid, signal.SIGKILL)
        except OSError:
            pass
        return await bot.wait()


async def _bridge(options: BridgeOptions, say: Callable[[str], None]) -> None:
    slots = [_Slot(number, options, say) for number in range(1, options.connections + 1)]
    try:
        await asyncio.gather(*(slot.run() for slot in slots))
    finally:
        for slot in slots:
            await slot.stop_bot()


def run_bridge(options: BridgeOptions, say: Callable[[str], None]) -> int:
    """Run the bridge until interrupted; the exit status (2: the arena refused the token)."""
    try:
        asyncio.run(_bridge(options, say))
    except _Refused as exc:
        say(str(exc))
        return 2
    return 0


def bridge_options(url: str, token: str | None, cmd: Sequence[str], cwd: Path | None, connections: int,
                   delay_ms: float) -> BridgeOptions:
    """The bridge's options from the command line; ValueError (one line) for what cannot be."""
    token = token or os.environ.get("TOTEM_TOKEN", "")
    if not token:
        raise ValueError("no token: pass --token TOKEN or set TOTEM_TOKEN (the organiser gives it)")
    if not url.startswith(("ws://", "wss://")):
        raise ValueError(f"{url!r} is not a WebSocket address (ws://HOST:PORT/ or wss://HOST/...)")
    if not cmd:
        raise ValueError("no bot command: put it after --, e.g. arena connect URL --token T -- ./mybot")
    if connections < 1:
        raise ValueError("--connections must be at least 1")
    argv = split_command(list(cmd))
    problem = command_problem(argv, cwd or Path.cwd())
    if problem is not None:
        raise ValueError(f"the bot cannot start: {problem}")
    folder = (cwd or Path.cwd()).resolve()
    version = fingerprint(BotConfig(name="bridged", cmd=tuple(argv), options={}, cwd=folder, env={})).version
    return BridgeOptions(url, token, argv, cwd, connections, max(0.0, delay_ms), version)
