"""A run's remote bots: the listener started for them while it lasts
(:mod:`arena.run.remote_listener`, in a process of its own:
:mod:`arena.run.listener_process`), and the log of its events."""

from __future__ import annotations

import datetime
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from arena.base import safe_files
from arena.results.store import LOGS_DIR
from arena.run.config import TournamentConfig
from arena.run.listener_process import ListenerError, ListenerProcess
from arena.run.remote_settings import check_remote
from arena.run.remote_tokens import TokenFileError, read_tokens
from arena.run.yaml_reader import ConfigError

__all__ = ["REMOTE_LOG", "event_log", "serve_remote_bots"]


#: The listener's log in a results directory's ``logs/``.
REMOTE_LOG = "remote.log"


def event_log(results: Path | None, echo: Callable[[str], None] | None = None) -> Callable[[str], None]:
    """A ``say`` for :class:`~arena.run.remote_listener.RemoteListener`: each
    line appended to ``logs/remote.log`` in the results directory
    ``results`` (when there is one) with the UTC time (never through a link:
    the results directory is untrusted), and handed to ``echo``.  A line
    that cannot be written is still echoed: the log is no reason to stop a run."""
    lock = threading.Lock()

    def say(line: str) -> None:
        if results is not None:
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
            with lock:
                _append(results, f"{stamp} {line}\n")
        if echo is not None:
            echo(line)

    return say


def _append(results: Path, text: str) -> None:
    try:
        fd = safe_files.open_file(results, f"{LOGS_DIR}/{REMOTE_LOG}", os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                                  create_dirs=True)
        with os.fdopen(fd, "a") as handle:
            handle.write(text)
    except OSError:
        pass  # the log is no reason to stop a run: the line is still echoed


@contextmanager
def serve_remote_bots(config: TournamentConfig, say: Callable[[str], None]) -> Iterator[TournamentConfig]:
    """With the remote bots of ``config`` (if any): listen for them, wait up
    to ``remote_wait_s`` for each to connect, and yield the config whose
    remote bots are reached through this listener; stop listening at the
    end.  Raises :class:`ConfigError` (one line) when the tournament cannot
    have its remote bots: no port, Ray, no token for one of them, a tokens
    file or a port that cannot be used."""
    names = config.remote_bots
    if not names:
        yield config
        return
    settings = config.remote
    file = str(config.path or "")
    check_remote(settings, list(names), file)
    assert settings.port is not None and settings.tokens is not None
    try:
        digests = read_tokens(settings.tokens)
    except TokenFileError as exc:
        raise ConfigError(str(exc), file="") from None
    tokenless = [name for name in names if name not in digests]
    if tokenless:
        raise ConfigError(f"remote bot {tokenless[0]!r} has no token in {settings.tokens}: make one with "
                          f"arena remote token {tokenless[0]} --tokens {settings.tokens}", file="")
    listener = ListenerProcess(names, digests, settings.host, settings.port, say)
    try:
        listener.start()
    except ListenerError as exc:
        raise ConfigError(str(exc), file="") from None
    try:
        say(f"listening for remote bots on {listener.url}")
        if settings.wait_s > 0 and (missing := set(names) - set(listener.connected())):
            say(f"waiting up to {settings.wait_s:g} s for {', '.join(sorted(missing))} to connect")
            missing = listener.wait_for(names, settings.wait_s)
            if missing:
                say(f"not connected: {', '.join(sorted(missing))}; a game of theirs that starts before they "
                    "connect is a startup_failure")
        link = settings.link(listener.hub)
        reported = listener.connected()
        yield replace(config, bots=tuple(
            replace(bot, remote=replace(link, reported_version=reported.get(bot.name) or None))
            if bot.remote is not None else bot for bot in config.bots))
    finally:
        listener.close()
