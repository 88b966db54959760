"""One bot's OS process tree: spawn it (confined: a clean environment,
resource limits, optionally a sandbox, see :mod:`arena.bot.sandbox`), exchange
lines of text with it by a deadline, drain its stderr into a log, and kill
every process of it.  What a bot leaves behind when it detaches itself, and
the bots of a dying arena, are the reaper's (:mod:`arena.bot.reaper`).

Nothing here knows the protocol's messages: a line is a line.  Every wait is
bounded by a ``time.monotonic()`` deadline, so a bot that hangs, floods, stops
reading or forks a child that keeps its pipes open can never stall the arena.

After :class:`WriteTimeout` the bot may have received part of a line, so the
stream is out of step and the process should be stopped.  After
:class:`LineTooLong` the rest of the long line is skipped by the next
:meth:`BotProcess.read_line`, so framing is kept.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import math
import os
import resource
import select
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO

from arena.bot import cgroups, limits as _limits, quota, sandbox as _sandbox
from arena.base import safe_files
from arena.bot.protocol import MAX_LINE_BYTES
from arena.bot.protocol_log import ProtocolLog
from arena.bot.reaper import LIVE, become_subreaper, kill_adopted, set_parent_death_signal
from arena.bot.sandbox import Confinement
from arena.bot.spec import QUIT_GRACE_S, missing_program
from arena.bot.stderr_log import StderrLog
from arena.base.text import clean_tail, clean_text

__all__ = [
    "ArenaWriteError",
    "BotProcessError",
    "StartError",
    "ProcessExited",
    "LineTimeout",
    "LineTooLong",
    "WriteTimeout",
    "BotProcess",
]

#: Longest single wait inside read_line/send_line, so that a leader that exited
#: while a forked child holds the pipes open is noticed promptly.
POLL_SLICE = 0.05
_CHUNK = 1 << 16
#: How long a pipe may stay open after the bot's exit before a process it
#: started is taken to hold it.
EXIT_GRACE_MS = 500
#: How many times ``read_line(spin=True)`` looks for a line before it sleeps
#: in poll(): about 20 us.  An instant bot answers within that, and the
#: arena is spared being woken up, which on a virtual machine costs more
#: than the rest of a ply; a bot that thinks longer costs it 20 us a move.
SPIN_POLLS = 50
#: How much of the end of stderr is kept in memory for error messages.
_TAIL_BYTES = 4096
#: How long to wait, once the bot is gone, for the rest of its stderr.
_DRAIN_JOIN = 0.5


class BotProcessError(Exception):
    """Base of every error raised by a :class:`BotProcess`."""


class StartError(BotProcessError):
    """The bot could not be started; the one-line message names the command and the cause."""


class ArenaWriteError(Exception):
    """The arena could not write what it needs to start a bot (its log file,
    its scratch directory): a full or read-only disk is the arena's failure,
    never the bot's, so this is not a :class:`BotProcessError` and no forfeit
    comes of it.  The one-line message names the path and the cause."""


class ProcessExited(BotProcessError):
    """The bot closed its stdout or exited.

    ``returncode`` is the exit code (negative: killed by that signal) or None
    if the process is still running; ``stderr_tail`` holds the last lines the
    bot wrote on stderr (possibly empty)."""

    def __init__(self, message: str, returncode: int | None, stderr_tail: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class LineTimeout(BotProcessError):
    """The deadline passed before a complete line arrived."""


class LineTooLong(BotProcessError):
    """The bot sent a line longer than ``max_line_bytes``."""


class WriteTimeout(BotProcessError):
    """The bot did not read its stdin and the pipe stayed full until the deadline."""


# --- what the child does before exec ---------------------------------------------

_SIGKILL = int(signal.SIGKILL)


def _child_preexec(
    parent_pid: int, cgroup_fds: list[int], rlimits: list[tuple[int, int, int]], mounts: quota.PrivateMounts | None,
) -> Callable[[], None]:
    """The preexec_fn of a bot: join its cgroup, set its rlimits, mount its
    private scratch directory and /dev/shm, and ask the kernel to SIGKILL it
    when the arena dies, even by ``kill -9``, so that no bot outlives its
    arena.  Only plain system calls: this runs between fork and exec.

    The death signal fires when the *thread* that forked the bot exits, not
    the whole arena process: spawn bots from a long-lived thread (the main
    thread or a worker that lives as long as its bots), never from a
    short-lived one.
    """

    def preexec() -> None:
        for fd in cgroup_fds:
            os.write(fd, b"0")  # "0": the writing process itself
        for which, soft, hard in rlimits:
            resource.setrlimit(which, (soft, hard))
        if mounts is not None:
            mounts.enter()
        set_parent_death_signal(_SIGKILL)
        # The arena may have died between fork and prctl; then no signal comes.
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


def _capped(triples: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Rlimits no higher than the hard limits already in force (raising one
    would fail in the child)."""
    capped = []
    for which, soft, hard in triples:
        current = resource.getrlimit(which)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        capped.append((which, soft, hard))
    return capped


# --- stderr drain --------------------------------------------------------------


class _StderrDrain:
    """Reads a bot's stderr until EOF on a daemon thread, so a bot writing a lot
    never blocks on a full pipe, and hands it to the bot's :class:`StderrLog`
    (which bounds what is kept).  ``owned``: the log is this process's alone,
    closed at EOF; else it outlives the process (a player's, see
    :class:`arena.bot.stderr_log.StderrLog`)."""

    def __init__(self, pid: int, stream: IO[bytes], log: StderrLog | None, owned: bool) -> None:
        self.tail = b""
        #: Bytes read so far (``arena check`` warns of a bot that writes a lot).
        self.bytes = 0
        #: A chunk read but not yet handed to the log (see :meth:`BotProcess.settle_stderr`).
        self.in_hand = False
        self._stream = stream
        self._log = log
        self._owned = owned
        self._thread = threading.Thread(target=self._run, name=f"bot-stderr-{pid}", daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def _run(self) -> None:
        log = self._log
        fd = self._stream.fileno()
        ready = select.poll()
        ready.register(fd, select.POLLIN)
        try:
            while True:
                # Marked in hand before the read takes it from the pipe: at any
                # moment a chunk is in the pipe or in hand until it is logged,
                # so settle_stderr needs one look, not a wait for this thread.
                try:
                    ready.poll()
                except OSError:
                    break
                self.in_hand = True
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                # A new bytes object each time: readers on other threads see
                # either the old tail or the new one, never a torn one.
                self.tail = (self.tail + chunk)[-_TAIL_BYTES:]
                self.bytes += len(chunk)
                if log is not None:
                    log.write(chunk)
                self.in_hand = False
        finally:
            self.in_hand = False
            self._stream.close()
            if log is not None and self._owned:
                log.close()


# --- the process ---------------------------------------------------------------


class BotProcess:
    """One OS process of a bot, talking lines of text over stdin/stdout.

    The bot runs in its own session and process group (and cgroup, where
    there is one), so :meth:`kill` also kills whatever it started.  Its
    environment is scrubbed: a few variables of the arena's
    (:data:`arena.bot.sandbox.INHERITED_ENV`), HOME and TMPDIR in its scratch
    directory, then ``env``.  It inherits no file descriptor but its three
    pipes.  ``confinement`` sets its limits, sandbox and scratch directory.
    ``log_path`` receives the bot's stderr (appended, at most
    ``max_log_bytes`` in all); with None it is read and discarded.
    ``stderr_log`` instead: a log that outlives the process (a player's,
    with a file per game; see :mod:`arena.bot.stderr_log`).  ``transcript``:
    where every line sent and received is logged, as it went (``debug``).
    Use as a context manager to start it and kill it at the end.
    """

    def __init__(
        self,
        cmd: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        log_path: str | Path | None = None,
        max_log_bytes: int = 10 * 1024 * 1024,
        max_line_bytes: int = MAX_LINE_BYTES,
        confinement: Confinement = Confinement(),
        stderr_log: StderrLog | None = None,
        transcript: ProtocolLog | None = None,
    ) -> None:
        self.cmd = list(cmd)
        self.transcript = transcript
        self.confinement = confinement
        self._cgroup: cgroups.BotCgroup | None = None
        self._temp_scratch: Path | None = None
        self._scratch: Path | None = None
        self._mounts: quota.PrivateMounts | None = None
        self._watch: quota.ScratchWatch | None = None
        #: Why the scratch watch had the bot killed (it went over its quota), or None.
        self.scratch_over: str | None = None
        self.cwd = Path(cwd) if cwd is not None else None
        self.env = dict(env) if env else {}
        self.log_path = Path(log_path) if log_path is not None else None
        self.max_log_bytes = max_log_bytes
        self.stderr_log = stderr_log
        self.max_line_bytes = max_line_bytes
        # Guards start and the kill sequence; re-entrant for kill_all in a
        # signal handler on the thread that holds it.
        self._lock = threading.RLock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._drain: _StderrDrain | None = None
        self._lines = LineBuffer(max_line_bytes, transcript)
        self._exit_seen = False
        self._returncode: int | None = None
        self._killed = False
        self._writable = self._readable = select.poll()

    # --- life cycle ---

    def start(self) -> None:
        """Spawn the bot.  May be called again after :meth:`stop`/:meth:`kill`
        to restart it.  Raises :class:`StartError`."""
        with self._lock:
            if self._proc is not None and not self._killed:
                raise RuntimeError("bot process already started; stop() it before starting it again")
            if not self.cmd:
                raise StartError("cannot start a bot: empty command")
            command = shlex.join(self.cmd)
            if self.cwd is not None and not self.cwd.is_dir():
                why = "is not a directory" if self.cwd.exists() else "does not exist"
                raise StartError(f"cannot start {command}: working directory {str(self.cwd)!r} {why}")
            # Said before bubblewrap is started: its own words would be "execvp ./bot: No such file".
            missing = missing_program(self.cmd[0], self.cwd if self.cwd is not None else Path.cwd())
            if missing is not None:
                raise StartError(missing)
            become_subreaper()
            log = self._open_log()
            try:
                scratch = self._make_scratch()
                proc = self._spawn(scratch)
            except (OSError, subprocess.SubprocessError, _sandbox.SandboxUnavailable) as exc:
                if log is not None and self.stderr_log is None:
                    log.close()
                self._release()
                raise StartError(f"cannot start {command}: {_start_cause(self.cmd[0], exc)}") from None
            except ArenaWriteError:
                if log is not None and self.stderr_log is None:
                    log.close()
                raise
            assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
            os.set_blocking(proc.stdin.fileno(), False)
            os.set_blocking(proc.stdout.fileno(), False)
            # Made once: send_line and read_line run every ply.
            self._writable = select.poll()
            self._writable.register(proc.stdin.fileno(), select.POLLOUT)
            self._readable = select.poll()
            self._readable.register(proc.stdout.fileno(), select.POLLIN)
            self._proc = proc
            self._drain = _StderrDrain(proc.pid, proc.stderr, log, owned=self.stderr_log is None)
            self._lines = LineBuffer(self.max_line_bytes, self.transcript)
            self._exit_seen = False
            self._returncode = None
            self._killed = False
            self.scratch_over = None
            max_bytes, max_files = quota.watched_quota(self.confinement.limits, self._mounts)
            if max_bytes is not None or max_files is not None:
                self._watch = quota.ScratchWatch(scratch, self.confinement.limits, max_bytes, max_files,
                                                 functools.partial(self._over_quota, proc))
                self._watch.start()

    def _make_scratch(self) -> Path:
        """The bot's scratch directory, made if need be.  Failing to make it
        is the arena's failure (:class:`ArenaWriteError`), not the bot's."""
        scratch = self.confinement.scratch_dir
        try:
            if scratch is None:
                scratch = self._temp_scratch = Path(tempfile.mkdtemp(prefix="totem-bot-"))
            else:
                # Its folder (a results directory's scratch/) is the arena's;
                # the bot's own directory is never followed through a link.
                safe_files.make_dirs(scratch.parent, scratch.name, mode=0o700)
        except OSError as exc:
            where = scratch if scratch is not None else Path(tempfile.gettempdir())
            raise ArenaWriteError(f"cannot make the scratch directory {str(where)!r}: {exc.strerror or exc}") from None
        self._scratch = scratch
        return scratch

    def _over_quota(self, proc: subprocess.Popen[bytes], why: str) -> None:
        """The scratch watch found the bot over its quota: kill it, so that
        its next read or write says why (see :meth:`_limit_hit`)."""
        with self._lock:
            if self._proc is proc and not self._killed:
                self.scratch_over = why
                self.kill_processes_now()

    def _spawn(self, scratch: Path) -> subprocess.Popen[bytes]:
        """Start the confined process and register it as live, under the
        registry's lock so that :func:`arena.bot.reaper.kill_adopted` never
        mistakes a bot being born for an orphan."""
        confinement = self.confinement
        self._mounts = quota.private_mounts(confinement.limits, scratch)
        sandboxed = confinement.sandbox == "bwrap"
        env = _sandbox.bot_environment(self.env, scratch)
        cwd = self.cwd if self.cwd is not None else Path.cwd()
        if sandboxed:
            _sandbox.check_sandbox("bwrap")
        else:
            python_path = _sandbox.python_path(self.cmd, cwd, env, confinement)
            if python_path is not None:
                env["PYTHONPATH"] = python_path
        for attempt in (1, 2):
            self._cgroup = cgroups.new_cgroup(confinement.limits)
            cgroup_fds = self._cgroup.join_fds() if self._cgroup is not None else []
            rlimits = _capped(_limits.rlimits(confinement.limits, self._cgroup))
            try:
                # A filter for each attempt: bubblewrap reads its pipe to the end.
                with _sandbox.filter_descriptor() if sandboxed else contextlib.nullcontext() as seccomp_fd:
                    argv = self.cmd if not sandboxed else _sandbox.bwrap_command(
                        self.cmd, cwd, env, replace(confinement, scratch_dir=scratch), seccomp_fd)
                    with LIVE.lock:
                        proc = subprocess.Popen(
                            argv,
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            cwd=cwd,
                            env=env,
                            bufsize=0,
                            start_new_session=True,
                            pass_fds=() if seccomp_fd is None else (seccomp_fd,),
                            preexec_fn=_child_preexec(os.getpid(), cgroup_fds, rlimits, self._mounts),
                        )
                        # Its pid must be known before it counts as live: kill_adopted on
                        # another thread (the pre-flight starts bots at once) takes a live
                        # bot without a pid for a leftover and kills it.
                        self._proc = proc
                        LIVE.add(self)
            except OSError:
                # Another arena process sweeping stale cgroups (pids are reused) can
                # remove this one before the child joins it; Popen then reports the
                # failed join like a failed exec.  A fresh cgroup settles it.
                if attempt == 1 and self._cgroup is not None and self._cgroup.vanished():
                    self._cgroup.remove()
                    continue
                raise
            break
        if self._cgroup is not None:
            self._cgroup.close_fds()
        return proc

    def _release(self) -> None:
        """Remove what a start made for the process: its cgroup, its scratch
        watch, its temporary scratch directory, and what its scratch
        directory holds if it went over its quota (the next process starts
        with it empty, and the disk does not stay full)."""
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if self._watch is not None:
            self._watch.stop()
            self._watch = None
        if self.scratch_over is not None and self._scratch is not None:
            quota.empty_directory(self._scratch)
        if self._temp_scratch is not None:
            quota.remove_directory(self._temp_scratch)
            self._temp_scratch = None

    def _open_log(self) -> StderrLog | None:
        """The bot's log, opened to append (the player's, or one of this
        process's own).  Failing to open it is the arena's failure
        (:class:`ArenaWriteError`), not the bot's."""
        log = self.stderr_log
        if log is None and self.log_path is not None:
            log = StderrLog(self.log_path, self.max_log_bytes)
        if log is None:
            return None
        try:
            log.open()
        except OSError as exc:
            raise ArenaWriteError(f"cannot open log file {str(log.default_path)!r}: {exc.strerror or exc}") from None
        return log

    @property
    def stderr_bytes(self) -> int:
        """The bytes this process has written to stderr so far (read by the drain)."""
        return self._drain.bytes if self._drain is not None else 0

    def settle_stderr(self, timeout: float = 0.05) -> None:
        """Wait (at most ``timeout`` seconds) until what the bot has written to
        stderr so far is in its log: the stderr it wrote before its last move
        belongs to the game that move ended, not to the next."""
        drain, proc = self._drain, self._proc
        if drain is None or proc is None or proc.stderr is None:
            return
        poll = select.poll()
        try:
            poll.register(proc.stderr.fileno(), select.POLLIN)
        except (ValueError, OSError):
            return  # closed: the drain has read it all
        end = time.monotonic() + timeout
        while not drain.done and time.monotonic() < end:
            # The pipe first, then the drain: a chunk leaves the pipe only once
            # the drain holds it (see _StderrDrain._run), so both empty is settled.
            # This runs at the end of every game, instant ones too: no sleep when quiet.
            try:
                pending = any(ev & select.POLLIN for _, ev in poll.poll(0))
            except OSError:
                return
            if not pending and not drain.in_hand:
                return
            time.sleep(0.001)

    def stop(self, grace: float = QUIT_GRACE_S) -> None:
        """Close the bot's stdin, give it ``grace`` seconds to exit by itself,
        then kill its whole process group (which also ends anything it left
        running) and reap it.  Idempotent."""
        with self._lock:
            proc = self._proc
            if proc is None or self._killed:
                self.kill()
                return
            _close(proc.stdin)
        end = time.monotonic() + grace
        while not self._exited() and time.monotonic() < end:
            time.sleep(0.01)
        self.kill()

    def kill(self) -> None:
        """SIGKILL every process of the bot now, reap them and close its
        pipes.  Idempotent."""
        with self._lock:
            self.kill_processes()
            if self._proc is not None:
                _close(self._proc.stdin)
                _close(self._proc.stdout)
            drain = self._drain
        if drain is not None:
            drain.join(_DRAIN_JOIN)  # so the log is complete when kill returns

    def kill_processes(self) -> None:
        """SIGKILL every process of the bot and reap them, but leave its
        pipes to their owner, whose next read or write reports the death:
        how :func:`arena.bot.reaper.kill_all` ends a bot that another thread
        may be using.  Idempotent."""
        with self._lock:
            proc = self._proc
            if proc is None or self._killed:
                return
            # The leader is not reaped yet (only peeked at), so its pid, which
            # is the group id, cannot have been reused by another process.
            self.kill_processes_now()
            proc.wait()
            if self._returncode is None:
                self._returncode = proc.returncode
            self._exit_seen = True
            self._killed = True
            LIVE.discard(self)
            kill_adopted()
            self._release()

    def kill_processes_now(self) -> None:
        """SIGKILL every process of the bot (its process group and its
        cgroup) at once, taking no lock and reaping nothing: safe in a
        signal handler, whatever the interrupted thread holds.  Nothing
        once the bot is reaped: its pid may be another process's by then."""
        proc, cgroup = self._proc, self._cgroup
        if proc is not None and not self._killed:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        if cgroup is not None:
            cgroup.kill_all()

    def __enter__(self) -> BotProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()

    # --- state ---

    @property
    def pid(self) -> int | None:
        """The bot's pid, which is also its process group and session id."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """Started and not exited."""
        return self._proc is not None and not self._exited()

    @property
    def returncode(self) -> int | None:
        """Exit code once the bot has exited (negative: killed by that signal)."""
        self._exited()
        return self._returncode

    @property
    def stderr_tail(self) -> str:
        """The last few lines the bot wrote on stderr, each cleaned
        (:func:`~arena.base.text.clean_text`): what a bot wrote is quoted to
        the organiser, and its escape sequences must not reach a terminal."""
        return "\n".join(clean_text(line, None) for line in self._tail_lines())

    def _tail_lines(self) -> list[str]:
        """The last few lines the bot wrote on stderr, as it wrote them."""
        if self._drain is None:
            return []
        return self._drain.tail.decode("utf-8", errors="replace").splitlines()[-5:]

    def _exited(self) -> bool:
        """Whether the leader has exited, without reaping it (see kill_processes)."""
        if self._exit_seen:
            return True
        proc = self._proc
        if proc is None:
            return False
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped by someone else
            self._exit_seen = True
            return True
        if info is None:
            return False
        self._returncode = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        self._exit_seen = True
        return True

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            raise RuntimeError("bot process not started")
        return self._proc

    def _exit_error(self, note: str = "") -> ProcessExited:
        # Give a dying bot a moment, so the error carries its exit code and
        # the last words it wrote on stderr.
        end = time.monotonic() + 0.2
        while not self._exited() and time.monotonic() < end:
            time.sleep(0.01)
        if self._exited() and self._drain is not None:
            self._drain.join(0.2)
        rc = self._returncode
        lines = self._tail_lines()
        tail = "\n".join(lines)
        signum = self._signal_of(rc)
        if rc is None:
            message = "the bot closed its output but is still running"
        elif signum:
            message = f"the bot was killed by {_signal_name(signum)}"
        else:
            message = f"the bot exited with code {rc}"
        limit = self._limit_hit(rc, signum, tail)
        if limit:
            message += f": {limit}"
        if note and rc is None:
            # A bot that exited closed its input by exiting: said only of a
            # running bot, the message does not depend on which came first.
            message += f" ({note})"
        if lines:
            message += f"; stderr ends with: {clean_tail(' | '.join(lines), 300)}"
        return ProcessExited(message, rc, self.stderr_tail)

    def _signal_of(self, rc: int | None) -> int:
        """The signal that ended the bot, or 0.  Bubblewrap reports a signal
        that killed the bot inside as exit code 128 + signal."""
        if rc is None:
            return 0
        if rc < 0:
            return -rc
        if rc > 128 and self.confinement.sandbox == "bwrap":
            return rc - 128
        return 0

    def _limit_hit(self, rc: int | None, signum: int, tail: str) -> str:
        """Which resource limit, if any, explains how the bot ended."""
        limits = self.confinement.limits
        if self.scratch_over is not None:
            return self.scratch_over
        if rc is None or rc == 0:
            return ""
        if self._mounts is not None and self._mounts.bounds_scratch and "No space left on device" in tail:
            # Its scratch directory and /dev/shm are tmpfs of its own: the space it ran out of is its quota's.
            shm = f"memory_mb: {limits.memory_mb}" if limits.memory_mb is not None else "no limit"
            return f"it ran out of space in its scratch directory ({quota.quota_text(limits)}) or its /dev/shm ({shm})"
        if signum == signal.SIGXCPU:
            return f"it used up its CPU time limit ({limits.cpu_s:g} s)"
        if signum == signal.SIGXFSZ or "File too large" in tail:
            return f"it wrote past its file size limit ({limits.file_mb} MB)"
        if limits.memory_mb is None:
            return ""
        if self._cgroup is not None and self._cgroup.hit_memory_limit():
            return f"it hit its memory limit ({limits.memory_mb} MB)"
        if any(sign in tail for sign in ("MemoryError", "out of memory", "bad_alloc", "Cannot allocate memory")):
            return f"it ran out of memory (its limit is {limits.memory_mb} MB)"
        return ""

    # --- lines ---

    def send_line(self, data: bytes, deadline: float) -> None:
        """Write ``data`` (one line, ending in ``\\n``) to the bot's stdin, by
        ``deadline`` (a ``time.monotonic()`` value).  Raises
        :class:`ProcessExited` if the bot closed its stdin or exited and
        :class:`WriteTimeout` if the pipe stayed full until the deadline."""
        if not data.endswith(b"\n"):
            raise ValueError("a line must end with a newline")
        stdin = self._started().stdin
        if stdin is None or stdin.closed:
            raise self._exit_error("its input is already closed")
        if self.transcript is not None:
            self.transcript.sent(data)
        fd = stdin.fileno()
        # One write takes the whole line whenever the pipe has room, which is
        # every ply for a bot that reads its input: that case goes first.
        try:
            sent = os.write(fd, data)
        except BlockingIOError:
            sent = 0
        except BrokenPipeError:
            raise self._exit_error("it closed its input") from None
        if sent == len(data):
            return
        view = memoryview(data)
        poller = self._writable
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WriteTimeout(f"the bot did not read its input: {sent} of {len(data)} bytes written by the deadline")
            if not poller.poll(_poll_ms(remaining)) and self._exited():
                raise self._exit_error()
            try:
                sent += os.write(fd, view[sent:])
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise self._exit_error("it closed its input") from None
            if sent == len(data):
                return

    def has_output(self) -> bool:
        """Whether the bot has written anything not read yet (without waiting)."""
        return self._lines.pending > 0 or bool(self._readable.poll(0))

    def read_line(self, deadline: float, spin: bool = False) -> str:
        """The next line from the bot's stdout, decoded as UTF-8 (bad bytes
        replaced), without its ``\\n`` or ``\\r\\n``.  With ``spin``, first
        look for it :data:`SPIN_POLLS` times without sleeping: worth it only
        while a core is free for the bot to answer on.

        A line already received is returned even if ``deadline`` has passed.
        Raises :class:`LineTimeout` when ``deadline`` (a ``time.monotonic()``
        value) passes first, :class:`LineTooLong` as soon as more than
        ``max_line_bytes`` arrive without a newline, and
        :class:`ProcessExited` on EOF or when the bot exited."""
        stdout = self._started().stdout
        if stdout is None or stdout.closed:
            raise self._exit_error("its output is already closed")
        fd = stdout.fileno()
        poller = self._readable
        lines = self._lines
        # Whether the pipe is known to hold something: found by the spin.
        ready = False
        if spin and not lines.pending:
            poll = poller.poll
            for _ in range(SPIN_POLLS):
                if poll(0):
                    ready = True
                    break
        looked = False
        while True:
            line = lines.take()
            if line is not None:
                return line
            remaining = deadline - time.monotonic()
            if looked and remaining <= 0:
                raise LineTimeout(f"no complete line from the bot by the deadline ({lines.pending} bytes pending)")
            looked = True
            if ready or poller.poll(_poll_ms(remaining)):
                ready = False
                chunk = self._read_chunk(fd)
                if chunk is None:
                    continue
                if not chunk:
                    raise self._exit_error()
            elif self._exited():
                chunk = self._read_chunk(fd)
                if chunk is None and poller.poll(EXIT_GRACE_MS):
                    # A sandbox's own processes close the pipe a moment after the bot's exit.
                    chunk = self._read_chunk(fd)
                if chunk == b"":
                    raise self._exit_error()
                if chunk is None:
                    # Whatever it wrote just before exiting was still ours to read;
                    # now a child it forked holds the pipe and EOF may never come.
                    raise self._exit_error("a process it started still holds its output")
            else:
                continue
            line = lines.add(chunk)
            if line is not None:
                return line

    @staticmethod
    def _read_chunk(fd: int) -> bytes | None:
        """What the pipe holds (empty on EOF), or None if nothing is there yet."""
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno in (errno.EBADF, errno.EIO):
                return b""
            raise


class LineBuffer:
    """Cuts what a bot writes into lines of at most ``max_bytes`` (without the
    newline), whatever the chunks it arrives in.  A line over the limit
    raises :class:`LineTooLong` as soon as it is known to be one, and the
    rest of it is skipped, so the next line is read whole."""

    __slots__ = ("max_bytes", "transcript", "_buffer", "_scanned", "_skipping")

    def __init__(self, max_bytes: int, transcript: ProtocolLog | None = None) -> None:
        self.max_bytes = max_bytes
        #: Where each line is logged as it came, bytes and all (``debug``).
        self.transcript = transcript
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already known to hold no newline
        self._skipping = False  # inside the rest of a line that was too long

    @property
    def pending(self) -> int:
        """Bytes received and not yet taken as a line."""
        return len(self._buffer)

    def add(self, chunk: bytes) -> str | None:
        """Take in ``chunk``.  The common case, one whole line in one read
        with nothing before it, is returned at once without the buffer (the
        same checks as :meth:`take`); otherwise None, and :meth:`take` has it."""
        if not self._buffer and not self._skipping and chunk.find(b"\n") == len(chunk) - 1 <= self.max_bytes:
            if self.transcript is not None:
                self.transcript.received(chunk[:-1])
            return _text(chunk[:-1])
        self._buffer += chunk
        return None

    def take(self) -> str | None:
        """The next whole line, or None until its newline arrives."""
        buffer = self._buffer
        if self._skipping:
            end = buffer.find(b"\n")
            if end < 0:
                buffer.clear()
                return None
            del buffer[: end + 1]
            self._skipping = False
            self._scanned = 0
        end = buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(buffer)
            if len(buffer) > self.max_bytes:
                buffer.clear()
                self._scanned = 0
                self._skipping = True
                raise self._too_long(f"the bot sent a line longer than {self.max_bytes} bytes")
            return None
        self._scanned = 0
        if end > self.max_bytes:
            del buffer[: end + 1]
            raise self._too_long(f"the bot sent a line of {end} bytes, over the limit of {self.max_bytes}")
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        if self.transcript is not None:
            self.transcript.received(line)
        return _text(line)

    def _too_long(self, why: str) -> LineTooLong:
        """The error for a line over the limit, noted in the transcript in place of the line."""
        if self.transcript is not None:
            self.transcript.note(f"{why}: not kept")
        return LineTooLong(why)


def _text(line: bytes) -> str:
    """A line without its newline as text: a ``\\r`` before the newline goes, bad UTF-8 is replaced."""
    if line.endswith(b"\r"):
        line = line[:-1]
    return line.decode("utf-8", errors="replace")


def _poll_ms(remaining: float) -> int:
    """A poll timeout in ms: at most one slice, at least 0."""
    return max(0, math.ceil(min(remaining, POLL_SLICE) * 1000))


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass


def _start_cause(program: str, exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        # Not always the program: Popen names the working directory when the
        # child's chdir failed (it vanished after the check before the start).
        if exc.filename is not None and os.fspath(exc.filename) != program:
            return f"no such file or directory {os.fspath(exc.filename)!r}"
        return f"no such program {program!r}"
    if isinstance(exc, PermissionError):
        return f"{program!r} is not executable (permission denied)"
    if isinstance(exc, OSError):
        return f"{program!r}: {exc.strerror or exc}"
    return str(exc).replace("\n", " ")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
