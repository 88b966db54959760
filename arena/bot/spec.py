"""How to start one bot: its :class:`BotConfig` (command, options, working
directory, environment, limits, sandbox), the command split into words, and
the look-up of its program before it runs, with a hint for the usual slips: a
script in the current directory named without ``./``, or shell syntax in a
command that no shell will read."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bot.limits import Limits

__all__ = ["BotConfig", "RemoteLink", "AUTO_MARGIN_CAP_MS", "DEFAULT_RECONNECT_S", "QUIT_GRACE_S", "STARTUP_TIMEOUT_S", "command_problem", "missing_program", "split_command"]

#: The seconds a bot has to answer ``hello`` unless a tournament (``startup_timeout``) or a command says otherwise.
STARTUP_TIMEOUT_S = 10.0
#: The seconds a bot has to exit by itself after ``quit`` before its process tree is killed.
QUIT_GRACE_S = 2.0

#: The longest command accepted: splitting one is quadratic in its longest word.
MAX_COMMAND_CHARS = 65_536
#: Program names replaced by the arena's own interpreter.
_PYTHONS = ("python", "python3")

#: Words a shell would act on; without a shell they reach the bot as arguments.
_SHELL_WORDS = {"|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>>", "&>", "2>&1", "|&"}
_SHELL_PREFIXES = (">", "<", "2>", "&>", "|", "$(", "`")

#: Seconds a remote bot's connection lost in a game is waited for, on its clock (``reconnect_s``).
DEFAULT_RECONNECT_S = 10.0


@dataclass(frozen=True)
class RemoteLink:
    """How a remote bot is reached (:mod:`arena.bot.remote`): the hub's Unix
    socket (None until the run's listener is up), how long a connection
    lost in a game is waited for, the network margin each of its moves
    is granted (None: the connection's measured round trip, see
    :data:`AUTO_MARGIN_CAP_MS`), and the version its bridge reported when
    the run started (None: not connected then, or a bridge that says none)."""

    hub: str | None = None
    reconnect_s: float = DEFAULT_RECONNECT_S
    network_margin_ms: float | None = None
    reported_version: str | None = None


#: The most a measured round trip grants a remote bot's move (``network_margin_ms: auto``):
#: a bridge that holds back its pongs gains no more than this.
AUTO_MARGIN_CAP_MS = 250.0


@dataclass(frozen=True)
class BotConfig:
    """One bot entry.  ``cmd`` is the argument vector (``python``/``python3``
    already replaced by the arena's interpreter); ``cwd`` is absolute; ``env``
    is all the bot gets of an environment beyond PATH, LANG, HOME and TMPDIR
    (see :mod:`arena.bot.sandbox`).  ``options`` and ``env`` are plain dicts for
    convenience and must never be mutated.  ``limits`` and ``sandbox`` say
    how its processes are confined.  ``version`` is the version the user
    declared (``None``: the arena fingerprints what runs, see
    :mod:`arena.bot.version`); ``source`` the folder the bot was submitted in
    (``bots_from``), all of whose files are part of its version; ``problem``
    why a submission cannot be run at all (a broken manifest), or None;
    ``debug`` whether every line of the protocol is logged
    (:mod:`arena.bot.protocol_log`); ``python_envs`` the installed Python
    environments it imports from when it runs the arena's Python, first
    first (see :mod:`arena.bot.packages`); ``remote`` how a bot that plays
    from another machine is reached (:mod:`arena.bot.remote`; its ``cmd``
    is empty), None for a bot the arena starts."""

    name: str
    cmd: tuple[str, ...]
    options: dict[str, Any]
    cwd: Path
    env: dict[str, str]
    limits: Limits = Limits()
    sandbox: str = "none"
    version: str | None = None
    source: Path | None = None
    problem: str | None = None
    debug: bool = False
    python_envs: tuple[Path, ...] = ()
    remote: RemoteLink | None = None


def split_command(command: str | Sequence[str]) -> tuple[str, ...]:
    """A bot command as an argument vector.  A string is split into words as a
    POSIX shell would (:func:`shlex.split`; no shell runs, so no pipes or
    variables); a sequence is taken word for word.  A program named exactly
    ``python`` or ``python3`` becomes :data:`sys.executable`, so Python bots
    run with the arena's own interpreter and packages.  Raises ``ValueError``
    for an empty command or unbalanced quotes."""
    length = len(command) if isinstance(command, str) else sum(len(word) for word in command)
    if length > MAX_COMMAND_CHARS:
        raise ValueError(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"cannot split {command!r}: {exc}") from None
    else:
        argv = list(command)
    if not argv or not argv[0]:
        raise ValueError("empty command")
    if argv[0] in _PYTHONS:
        argv[0] = sys.executable
    return tuple(argv)


def _shell_syntax(argv: Sequence[str]) -> str | None:
    for word in argv[1:]:
        if word in _SHELL_WORDS or word.startswith(_SHELL_PREFIXES) or word.endswith((";", "|")):
            return word
    return None


def missing_program(program: str, cwd: Path) -> str | None:
    """``./bot not found in submissions/team-x (not built?)`` when ``program``,
    a path relative to the bot's folder ``cwd``, is not there (a compiled
    bot whose build was not run), else None.  The folder is shown relative
    to the current directory when it lies below it, as the organiser typed it."""
    if "/" not in program or os.path.isabs(program) or os.path.lexists(cwd / program):
        return None
    folder = os.path.abspath(cwd)
    here = os.getcwd()
    shown = os.path.relpath(folder, here) if folder.startswith(here.rstrip("/") + "/") else folder
    return f"{program} not found in {shown} (not built?)"


def command_problem(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> str | None:
    """What stops ``argv`` from starting in ``cwd``, in one line with the fix,
    or None.  A program with a slash is looked up relative to ``cwd``, any
    other on the ``PATH`` (``env``'s own, if it sets one)."""
    program = argv[0]
    word = _shell_syntax(argv)
    if word is not None:
        line = " ".join(argv)
        return (
            f"the command holds shell syntax ({word!r}), but bot commands are not run by a shell, so it would "
            f"reach the bot as an argument; to use a shell, write the command as: sh -c {shlex.quote(line)}"
        )
    if "/" in program:
        path = cwd / program
        missing = missing_program(program, cwd)
        if missing is not None:
            return missing
        if not path.is_file():
            return f"no such program {program!r} (looked in {cwd})"
        if not os.access(path, os.X_OK):
            return f"{program!r} is not executable (chmod +x it, or run it through its interpreter)"
        return None
    search = (env or {}).get("PATH", os.environ.get("PATH"))
    if shutil.which(program, path=search) is not None:
        return None
    problem = f"no such program {program!r} on the PATH"
    if (cwd / program).is_file():
        executable = "" if os.access(cwd / program, os.X_OK) else " after chmod +x, or through its interpreter"
        problem += f"; to run the file {program!r} in {cwd}, write './{program}'{executable}"
    return problem
