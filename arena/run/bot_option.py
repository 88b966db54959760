"""``arena match --bot name=dev,cmd='python my.py',option.depth=3,tc=10+0.1``:
a bot from the command line, in the spirit of fastchess's ``-engine cmd=...
name=... option.X=...``.

Settings are ``key=value`` separated by commas; a value in single or double
quotes may hold commas (the quotes are taken off; a shell has usually taken
them off already, where no comma follows).  The keys:

- ``cmd``: the command (required), split as a tournament file's ``cmd``;
- ``name``: the bot's name (default: from the command, as ``arena match``
  names positional commands);
- ``dir``: its working directory (default: the current one);
- ``tc``: its own time control, for time odds (default: ``--tc``);
- ``debug``: ``true`` logs every line of the protocol (``--debug``);
- ``remote``: ``true`` for a bot that plays from another machine through
  ``arena connect`` (no ``cmd``; it needs a ``name``, and the match
  ``--remote-port`` and ``--tokens``, see docs/remote.md);
- ``option.X``: the option ``X`` sent in ``hello``, its value read as JSON
  when it is JSON (``3``, ``true``, ``0.5``), as text otherwise.

    >>> bot = bot_from_option("name=dev,cmd='python -m bots.alphabeta',option.depth=3,tc=10+0.1")
    >>> bot.name, bot.command, bot.options, str(bot.time_control)
    ('dev', 'python -m bots.alphabeta', {'depth': 3}, '10+0.1')
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.game.clock import TimeControl, parse_time_control
from arena.run.yaml_reader import MAX_JSON_DEPTH, MAX_JSON_INT, ConfigError, unknown_key

__all__ = ["MatchBot", "bot_from_option", "BOT_OPTION_KEYS", "BOT_NAME"]

#: The keys ``--bot`` takes (besides ``option.X``).
BOT_OPTION_KEYS = ("cmd", "name", "dir", "tc", "debug", "remote")
#: A bot's name, as a tournament file's (1 to 64 letters, digits and _.+-).
BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
_USAGE = "name=dev,cmd='python my.py',option.depth=3,tc=10+0.1"
#: The most settings one --bot takes (a bound on what a typo can cost).
_MAX_SETTINGS = 100


@dataclass(frozen=True)
class MatchBot:
    """One bot of ``arena match``: a positional command, or a ``--bot``."""

    command: str
    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    cwd: Path | None = None
    #: Its own time control (time odds); None: the match's.
    time_control: TimeControl | None = None
    #: Every line of the protocol logged.
    debug: bool = False
    #: It plays from another machine (``remote=true``); ``command`` is empty.
    remote: bool = False


def bot_from_option(text: str) -> MatchBot:
    """The bot ``--bot TEXT`` describes; :class:`ConfigError` (one line,
    naming the option and the setting) for anything else."""
    where = f"--bot {text}"
    values: dict[str, str] = {}
    options: dict[str, Any] = {}
    settings = _split(text, where)
    if len(settings) > _MAX_SETTINGS:
        raise ConfigError(f"more than {_MAX_SETTINGS} settings", file=where)
    for part in settings:
        key, equals, value = part.partition("=")
        key, value = key.strip(), _unquoted(value.strip())
        if not equals or not key:
            raise ConfigError(f"bad setting {part.strip()!r}: write {_USAGE}", file=where)
        if key.startswith("option."):
            name = key.removeprefix("option.")
            if not name or name in options:
                raise ConfigError(f"bad setting {part.strip()!r}: {'an option needs a name' if not name else 'given twice'}",
                                  file=where)
            try:
                options[name] = _option_value(value)
            except ValueError as exc:
                raise ConfigError(f"bad setting {part.strip()[:80]!r}: {exc}", file=where[:200]) from None
            continue
        if key not in BOT_OPTION_KEYS:
            problem = unknown_key(key, [*BOT_OPTION_KEYS, "option.NAME"])
            raise ConfigError(f"bad setting {part.strip()!r}: {problem} (an option for the bot: option.{key}={value})",
                              file=where)
        if key in values:
            raise ConfigError(f"bad setting {part.strip()!r}: given twice", file=where)
        values[key] = value
    remote = _flag(values, "remote", where)
    if remote and ("cmd" in values or "name" not in values):
        raise ConfigError("a remote bot has a name and no cmd (its author runs it): write name=team-x,remote=true",
                          file=where)
    if not remote and not values.get("cmd"):
        raise ConfigError(f"needs cmd: write {_USAGE}", file=where)
    name = values.get("name")
    if name is not None and not BOT_NAME.fullmatch(name):
        raise ConfigError(f"bad setting 'name={name}': use 1 to 64 letters, digits and _.+- , starting with a letter or digit",
                          file=where)
    control = None
    if "tc" in values:
        try:
            control = parse_time_control(values["tc"])
        except ValueError as exc:
            raise ConfigError(f"bad setting 'tc={values['tc']}': {exc}", file=where) from None
    debug = _flag(values, "debug", where)
    cwd = None
    if "dir" in values:
        cwd = Path(values["dir"]).expanduser().resolve()
        if not cwd.is_dir():
            raise ConfigError(f"bad setting 'dir={values['dir']}': no such directory: {cwd}", file=where)
    return MatchBot(command=values.get("cmd", ""), name=name, options=options, cwd=cwd, time_control=control,
                    debug=debug, remote=remote)


def _flag(values: dict[str, str], key: str, where: str) -> bool:
    value = values.get(key, "false").lower()
    if value not in ("true", "false"):
        raise ConfigError(f"bad setting '{key}={values[key]}': write {key}=true or {key}=false", file=where)
    return value == "true"


def _split(text: str, where: str) -> list[str]:
    """``text`` cut at each comma outside quotes."""
    parts, current, quote = [], [], ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if quote:
        raise ConfigError(f"a {quote} is not closed: write {_USAGE}", file=where)
    parts.append("".join(current))
    return [part for part in parts if part.strip()]


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _option_value(text: str) -> Any:
    """``3`` is 3, ``true`` True, ``0.5`` 0.5, ``[1, 2]`` a list; anything else
    the text itself.  ``ValueError`` for JSON a bot cannot be sent: nested more
    than :data:`MAX_JSON_DEPTH` deep, a whole number beyond ±:data:`MAX_JSON_INT`."""
    if _depth(text) > MAX_JSON_DEPTH:  # before parsing: 100,000 brackets would exhaust the parser's recursion
        raise ValueError(f"nests lists or mappings more than {MAX_JSON_DEPTH} deep")
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, float) and not math.isfinite(value):  # NaN, Infinity: not strict JSON
        return text
    if _too_big(value):
        raise ValueError("holds a whole number beyond ±2**53, which a bot cannot read exactly from JSON")
    return value


def _depth(text: str) -> int:
    """How deep ``text`` nests brackets and braces outside strings (as JSON would)."""
    depth = deepest = 0
    quoted = escaped = False
    for ch in text:
        if quoted:
            escaped, quoted = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _too_big(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_too_big(v) for v in value.values())
    if isinstance(value, list):
        return any(_too_big(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_JSON_INT
