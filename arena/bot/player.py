"""A bot as the referee sees it: a protocol peer that is started on demand,
answers moves by a deadline, and is reused from game to game.

Every way a bot can misbehave surfaces here as a :class:`Forfeit` carrying one
of the protocol's forfeit reasons and a one-line description of what the bot
did.  What fails on the arena's side (its log or the bot's scratch
directory cannot be written) is :class:`arena.bot.process.ArenaWriteError`,
which passes through: no bot is charged with it.  The OS process itself is
:class:`arena.bot.process.BotProcess`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from arena.bot import protocol
from arena.bot.forfeits import Forfeit
from arena.bot.remote import Disconnected, Rejoined, RemoteBotProcess
from arena.bot.sandbox import Confinement
from arena.bot.spec import QUIT_GRACE_S, STARTUP_TIMEOUT_S, BotConfig
from arena.bot.protocol_log import ProtocolLog
from arena.bot.stderr_log import StderrLog
from arena.bot.submission import SubmissionLimits
from arena.bot.version import changed_since
from arena.base.text import clean_text
from arena.bot.process import (
    ArenaWriteError,
    BotProcess,
    LineTimeout,
    LineTooLong,
    ProcessExited,
    StartError,
    WriteTimeout,
)

__all__ = ["BotPlayer", "close_all", "NOTICE_TIMEOUT_S"]

#: Deadline for lines the bot need not answer (new_game, game_over, quit):
#: only a bot that stopped reading its stdin can make a write take this long.
NOTICE_TIMEOUT_S = 5.0


class BotPlayer:
    """One bot playing one game at a time, keeping its process between games.

    The process is started lazily by :meth:`start_game`.  After a forfeit that
    leaves the conversation in an unknown state (a late or garbled answer may
    still be in the pipe), the process is killed and a fresh one is started for
    the next game; after a clean game it is reused.
    """

    def __init__(
        self,
        command: BotConfig,
        game: str,
        *,
        log_path: Path | None = None,
        log_root: Path | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        quit_grace_s: float = QUIT_GRACE_S,
        scratch_dir: Path | None = None,
        hidden: tuple[Path, ...] = (),
        spin: bool = False,
        submission_limits: SubmissionLimits = SubmissionLimits(),
    ) -> None:
        self.command = command
        self.game = game
        self.log_path = log_path
        #: The bot's stderr in this process of the arena: ``log_path`` outside
        #: games, a file per game beside it inside (:meth:`begin_log`), no
        #: link followed beneath ``log_root`` (the folder of every bot's logs).
        self.stderr_log = StderrLog(log_path, 10 * 1024 * 1024, log_root) if log_path is not None else None
        #: With ``debug``, every line sent and received, a file per game beside its stderr's.
        self.protocol_log = (ProtocolLog(log_path.parent, log_root or log_path.parent)
                             if command.debug and log_path is not None else None)
        #: How the bot's processes are confined: its limits and sandbox from
        #: the tournament file, its scratch directory (a temporary one when
        #: None), what a sandbox hides from it (results, tournament file) and,
        #: for a submission, the one folder of the host it may see.
        self.confinement = Confinement(
            limits=command.limits, sandbox=command.sandbox, scratch_dir=scratch_dir, hidden=hidden,
            confined_to=command.cwd if command.source is not None else None, python_envs=command.python_envs,
        )
        self.startup_timeout_s = startup_timeout_s
        #: Look for each move a few microseconds before sleeping (see
        #: ``BotProcess.read_line``): for an executor with a core to spare.
        self.spin = spin
        self.quit_grace_s = quit_grace_s
        self.process: BotProcess | RemoteBotProcess | None = None
        #: The bot's ``ready`` message (name, version, author), once started.
        self.ready: dict[str, Any] = {}
        #: The bot asked for compact turns (``"compact_turns": true`` in ``ready``).
        self.compact_turns = False
        #: Processes started so far (1 when one process played every game).
        self.starts = 0
        #: The version the game about to be played is recorded under
        #: (``GameSpec.versions``), None for any: a process is started for it
        #: only while the bot's files still make that version, fingerprinted
        #: within ``submission_limits`` (:func:`~arena.bot.version.changed_since`).
        self.recorded_version: str | None = None
        self.submission_limits = submission_limits

    @property
    def name(self) -> str:
        return self.command.name

    @property
    def network_margin_ms(self) -> float | None:
        """What each move of this game is granted for the network: a remote bot's; None for a local one."""
        return self.process.network_margin_ms if isinstance(self.process, RemoteBotProcess) else None

    @property
    def latency_ms(self) -> float | None:
        """A remote bot's round trip as last measured (ms); None for a local one."""
        return self.process.round_trip_ms if isinstance(self.process, RemoteBotProcess) else None

    # -- life cycle -------------------------------------------------------

    def _start(self) -> BotProcess | RemoteBotProcess:
        self.starts += 1
        if self.command.problem is not None:  # a submission that cannot run at all (a broken manifest)
            raise Forfeit("startup_failure", self.command.problem)
        self._check_version()  # before the launch: files the record does not name never run
        process: BotProcess | RemoteBotProcess
        if self.command.remote is not None:
            process = RemoteBotProcess(self.name, self.command.remote, self.protocol_log)
        else:
            process = BotProcess(
                self.command.cmd, cwd=self.command.cwd, env=self.command.env, stderr_log=self.stderr_log,
                confinement=self.confinement, transcript=self.protocol_log,
            )
        try:
            if isinstance(process, RemoteBotProcess):
                # Its connections may all be in other workers' games: one is waited for as for a start.
                process.start(self.startup_timeout_s)
            else:
                process.start()
        except StartError as exc:
            raise Forfeit("startup_failure", str(exc)) from None
        deadline = time.monotonic() + self.startup_timeout_s
        try:
            message = self._greet(process, deadline)
        except LineTimeout:
            process.kill()
            raise Forfeit(
                "startup_failure",
                # (the setting named: a bot that starts slowly, a JVM say, needs more)
                f"no answer to 'hello' within {self.startup_timeout_s:g} s (startup_timeout, --startup-timeout)"
                " — does the bot flush its output after each line?",
            ) from None
        except (WriteTimeout, ProcessExited, LineTooLong, Disconnected, protocol.ProtocolError) as exc:
            process.kill()
            raise Forfeit("startup_failure", f"bad answer to 'hello': {_describe(exc)}") from None
        if message.get("type") == "error":
            process.kill()
            raise Forfeit("startup_failure", f"refused to start: {clean_text(message.get('message', ''))}")
        try:
            # Again once it answered: files changed between the check and their reading by the program are caught.
            self._check_version()
        except Forfeit:
            process.kill()
            raise
        self._take_ready(message)
        self.process = process
        return process

    def _check_version(self) -> None:
        """Raise a ``startup_failure`` :class:`Forfeit` if the bot's files are
        no longer the version the game is recorded under (:attr:`recorded_version`)."""
        if self.recorded_version is not None:
            changed = changed_since(self.command, self.recorded_version, self.submission_limits)
            if changed is not None:
                raise Forfeit("startup_failure", changed)

    def _greet(self, process: BotProcess | RemoteBotProcess, deadline: float) -> dict[str, Any]:
        """Send ``hello`` and read the answer (``ready``, or ``error``).  A
        remote bot whose program is new by the time it answers (its bridge
        started again) is greeted again."""
        hello = protocol.encode(protocol.hello(self.game, self.name, dict(self.command.options)))
        while True:
            process.send_line(hello, deadline)
            try:
                return protocol.decode(process.read_line(deadline), "ready")
            except Rejoined:
                continue

    def _take_ready(self, message: dict[str, Any]) -> None:
        self.ready = protocol.ready_fields(message)
        self.compact_turns = message.get("compact_turns") is True

    def ensure_started(self) -> BotProcess | RemoteBotProcess:
        """The live process, started (and greeted) first if there is none."""
        if self.process is not None and self.process.alive:
            return self.process
        if self.process is not None:
            dead, self.process = self.process, None
            dead.kill()
            if dead.scratch_over is not None:  # killed between games for what it wrote: this game is its loss
                raise Forfeit("crash", f"the bot was killed by SIGKILL: {dead.scratch_over}")
        return self._start()

    def discard_process(self) -> None:
        """Kill the process now; the next game starts a new one."""
        if self.process is not None:
            self.process.kill()
            self.process = None

    def close(self) -> None:
        """Send ``quit`` and let the process exit; kill it after the grace period."""
        process, self.process = self.process, None
        if process is not None:
            try:
                process.send_line(protocol.encode(protocol.QUIT), time.monotonic() + 0.5)
            except (ProcessExited, WriteTimeout):
                pass  # it is killed below all the same
            process.stop(self.quit_grace_s)
        if self.stderr_log is not None:
            self.stderr_log.close()
        if self.protocol_log is not None:
            self.protocol_log.close()

    # -- the log of one game ------------------------------------------------

    def begin_log(self, game_id: str) -> None:
        """What the bot writes to stderr from now on is game ``game_id``'s
        (a file of its own, :mod:`arena.bot.stderr_log`), its start included
        when the game starts it; so are the lines it is sent and sends, with
        ``debug`` (:mod:`arena.bot.protocol_log`).  Raises :class:`ArenaWriteError`."""
        try:
            if self.stderr_log is not None:
                self.stderr_log.begin_game(game_id, self.name)
            if self.protocol_log is not None:
                self.protocol_log.begin_game(game_id, self.name)
        except OSError as exc:
            where = str(exc.filename) if exc.filename else f"of game {game_id} of {self.name}"
            raise ArenaWriteError(f"cannot open log file {where!r}: {exc.strerror or exc}") from None

    def end_log(self) -> None:
        """Close the game's logs once what the bot wrote before its last word is in its stderr's."""
        if self.protocol_log is not None:
            self.protocol_log.end_game()
        if self.stderr_log is None:
            return
        if self.process is not None:
            self.process.settle_stderr()
        self.stderr_log.end_game()

    # -- one game ---------------------------------------------------------

    def start_game(self, new_game_line: bytes) -> None:
        """Make sure a ready process exists and send it an encoded ``new_game`` line."""
        process = self.ensure_started()
        try:
            process.send_line(new_game_line, time.monotonic() + NOTICE_TIMEOUT_S)
        except (ProcessExited, WriteTimeout) as exc:
            self.discard_process()
            raise Forfeit("crash", f"could not receive 'new_game': {_describe(exc)}") from None

    def ask_move(self, turn_line: bytes, budget_ms: float,
                 rejoin: Callable[[], tuple[bytes, bytes]]) -> tuple[str, dict[str, Any] | None, float]:
        """Send an encoded ``turn`` line and wait for the ``move``.  Returns the
        move string, the bot's ``info`` (None, or bounded by
        :func:`protocol.bound_info`) and the thinking time in
        milliseconds, measured from the end of writing ``turn`` to the end of
        reading ``move``.  ``rejoin`` gives the ``new_game`` line of the
        position reached and the ``turn`` line again, as the bot asked for
        turns in its ``ready``: for a remote bot that comes back as a new
        program (:meth:`_answer`)."""
        process = self.process
        if process is None:
            raise Forfeit("crash", "the process is gone")
        if process.has_output():
            self._out_of_turn(process)
        # The write gets the same budget: a bot that does not read its input
        # cannot answer either.  Writing is the arena's work, so not charged.
        try:
            process.send_line(turn_line, time.monotonic() + budget_ms / 1000)
        except WriteTimeout:
            self.discard_process()
            raise Forfeit("timeout", "did not read its input (the pipe stayed full)") from None
        except ProcessExited as exc:
            self.discard_process()
            raise Forfeit("crash", _describe(exc)) from None
        started = time.monotonic()
        try:
            line = self._answer(process, started + budget_ms / 1000, rejoin)
        except (LineTimeout, WriteTimeout):
            waited_ms = (time.monotonic() - started) * 1000
            self.discard_process()
            raise Forfeit("timeout", f"no move after {waited_ms:.0f} ms", waited_ms=waited_ms) from None
        except ProcessExited as exc:
            self.discard_process()
            raise Forfeit("crash", _describe(exc)) from None
        except Disconnected as exc:
            self.discard_process()
            raise Forfeit("disconnected", _describe(exc)) from None
        except (LineTooLong, protocol.ProtocolError) as exc:
            self.discard_process()
            raise Forfeit("protocol_error", _describe(exc)) from None
        elapsed_ms = (time.monotonic() - started) * 1000
        move = protocol.plain_move(line)
        if move is not None:
            return move, None, elapsed_ms
        try:
            answer = protocol.decode(line, "move")
        except protocol.ProtocolError as exc:
            self.discard_process()
            raise Forfeit("protocol_error", str(exc)) from None
        if answer["type"] == "error":
            raise Forfeit("bot_error", f"gave up: {clean_text(answer.get('message', ''))}")
        move = answer.get("move")
        if not isinstance(move, str):
            self.discard_process()
            raise Forfeit("protocol_error", f"'move' is not a string: {line[:120]!r}")
        return move, protocol.bound_info(answer.get("info")), elapsed_ms

    def _answer(self, process: BotProcess | RemoteBotProcess, deadline: float,
                rejoin: Callable[[], tuple[bytes, bytes]]) -> str:
        """The bot's answer to the turn sent, by ``deadline``.  A remote bot
        whose bridge was killed and started again meanwhile is a new program
        that knows nothing of the game: it is greeted, then given the game
        from the position reached and the turn again, all on its clock (the
        time it was away stays spent).  Raises what reading, writing and
        decoding ``ready`` raise."""
        while True:
            try:
                return process.read_line(deadline, self.spin)
            except Rejoined:
                message = self._greet(process, deadline)
            if message.get("type") == "error":
                raise Forfeit("bot_error", f"refused to start again: {clean_text(message.get('message', ''))}")
            self._take_ready(message)
            for line in rejoin():
                process.send_line(line, deadline)

    def _out_of_turn(self, process: BotProcess | RemoteBotProcess) -> None:
        """A line that arrived while no answer was due (a second move, a late
        reply, stray output) would be taken as the answer to this turn."""
        try:
            line = process.read_line(time.monotonic())
        except ProcessExited as exc:  # what was pending was the end of its output
            self.discard_process()
            raise Forfeit("crash", _describe(exc)) from None
        except (LineTimeout, LineTooLong, Disconnected):
            line = "(part of a line)"
        self.discard_process()
        raise Forfeit("protocol_error", f"sent a line out of turn: {line[:120]!r}")

    def end_game(self, game_over_line: bytes) -> None:
        """Send an encoded ``game_over`` line; a bot that cannot take it is restarted next game."""
        if self.process is None:
            return
        try:
            self.process.send_line(game_over_line, time.monotonic() + NOTICE_TIMEOUT_S)
        except (ProcessExited, WriteTimeout):
            self.discard_process()
            return
        if isinstance(self.process, RemoteBotProcess):
            # Given back, so that a worker that plays the bot next need not wait for this one's pool.
            self.process.release()
            self.process = None


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text else text


def close_all(players: Iterable[BotPlayer]) -> None:
    for player in players:
        player.close()
