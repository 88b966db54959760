"""The tournament file's keys for remote bots: a bot entry
``{name: team-x, remote: true}`` and the listener's settings
(``remote_listen``, ``remote_tokens``, ``reconnect_s``, ``remote_wait_s``,
``network_margin_ms``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.bot.spec import DEFAULT_RECONNECT_S, RemoteLink
from arena.run.yaml_reader import ConfigError, YamlMapping

__all__ = ["RemoteSettings", "REMOTE_KEYS", "REMOTE_BOT_KEYS", "remote_settings", "remote_link", "listen_address",
           "check_remote", "DEFAULT_HOST", "DEFAULT_RECONNECT_S", "DEFAULT_WAIT_S"]

#: The tournament's keys for its listener.
REMOTE_KEYS = ("remote_listen", "remote_tokens", "reconnect_s", "remote_wait_s", "network_margin_ms")
#: What a remote bot's entry may hold: nothing about how to start it, which is its author's business.
REMOTE_BOT_KEYS = ("name", "remote", "options", "version", "time_control", "debug")
DEFAULT_WAIT_S = 30.0
#: Where the listener listens unless ``remote_listen`` names a host: this machine only.
DEFAULT_HOST = "127.0.0.1"


@dataclass(frozen=True)
class RemoteSettings:
    """Where the listener for remote bots listens (no port: the file names
    none, ``--remote-port`` must), the tokens file it trusts, how long a
    lost connection is waited for in a game, and how long the run waits
    for every remote bot to connect before its first game; and the
    network margin granted to each move of a remote bot (None: ``auto``,
    its connection's measured round trip, at most ``AUTO_MARGIN_CAP_MS``)."""

    host: str = DEFAULT_HOST
    port: int | None = None
    tokens: Path | None = None
    reconnect_s: float = DEFAULT_RECONNECT_S
    wait_s: float = DEFAULT_WAIT_S
    network_margin_ms: float | None = None

    def link(self, hub: str | None = None) -> RemoteLink:
        """How a remote bot is reached under these settings, through ``hub``."""
        return RemoteLink(hub, self.reconnect_s, self.network_margin_ms)


def listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or a port alone, on 127.0.0.1) as a pair; ValueError with the reason."""
    host, colon, port = text.strip().rpartition(":")
    if not colon:
        host, port = DEFAULT_HOST, text.strip()
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT with a port from 0 to 65535")
    return host, int(port)


def remote_settings(fields: YamlMapping, path: Path | None, base_dir: Path) -> RemoteSettings:
    """The listener's settings; the tokens file is by default beside the
    tournament file, named after it (``cup.yaml``: ``cup.tokens``)."""
    host, port = DEFAULT_HOST, None
    if "remote_listen" in fields:
        value = fields["remote_listen"]
        try:
            host, port = listen_address(str(value.scalar()))
        except ValueError as exc:
            raise value.error(str(exc)) from None
    default_tokens = (path.parent / f"{path.stem}.tokens") if path is not None else base_dir / "remote.tokens"
    tokens = (base_dir / fields.path("remote_tokens")).resolve() if "remote_tokens" in fields else default_tokens
    return RemoteSettings(
        host=host, port=port, tokens=tokens,
        reconnect_s=fields.number("reconnect_s", DEFAULT_RECONNECT_S, unit="a number of seconds", must_be="positive"),
        wait_s=fields.number("remote_wait_s", DEFAULT_WAIT_S, unit="a number of seconds", must_be="not negative"),
        network_margin_ms=_network_margin(fields),
    )


def _network_margin(fields: YamlMapping) -> float | None:
    """``network_margin_ms``: ``auto`` (the default: None) or milliseconds, not negative."""
    if "network_margin_ms" not in fields or fields["network_margin_ms"].scalar() == "auto":
        return None
    return fields.number("network_margin_ms", unit="auto or a number of milliseconds", must_be="not negative")


def remote_link(fields: YamlMapping) -> RemoteLink | None:
    """A bot entry's ``remote: true`` as the (not yet connected) link, or None;
    a remote entry that says how to start the bot is refused."""
    if not fields.boolean("remote", False):
        return None
    started = [key for key in fields if key not in REMOTE_BOT_KEYS]
    if started:
        raise fields.error(f"a remote bot runs on its author's machine (arena connect): {started[0]} does not apply to it",
                           started[0])
    return RemoteLink()


def check_remote(settings: RemoteSettings, names: list[str], file: str) -> None:
    """A tournament with remote bots names a port for them, and a tokens file."""
    if names and settings.port is None:
        raise ConfigError(f"remote bots ({', '.join(names)}) need a port to connect to: remote_listen: {DEFAULT_HOST}:PORT "
                          "in the file, or --remote-port PORT", file=file)
    if names and settings.tokens is None:
        raise ConfigError(f"remote bots ({', '.join(names)}) need a tokens file: --tokens FILE "
                          "(made by arena remote token)", file=file)
