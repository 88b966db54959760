"""How a bot process is confined: its environment, and ``sandbox: bwrap``.

:class:`Confinement` is everything :class:`arena.bot.process.BotProcess` needs
beyond the command: the limits, the sandbox, the scratch directory (the bot's
HOME and TMPDIR) and the paths a sandboxed bot must never see (the results
directory, the tournament file).  It belongs to the bot-process layer so that
every way of starting a bot (the local executor, a cluster executor, a
pre-flight check, ``arena check``) confines it the same way.

With ``sandbox: bwrap`` the bot runs under bubblewrap in its own user, PID,
network, IPC, UTS and cgroup namespaces, as an unprivileged user with no
capabilities, and sees a read-only system, its working directory and its
program's directory read-only (a submission from ``bots_from``: its own
folder and its interpreter, nothing else), for the arena's own Python the
arena's ``engine`` and ``bots`` packages at :data:`PACKAGES_MOUNT` and its
Python environments (:mod:`arena.bot.packages`) at :data:`SITE_MOUNT`, and
nothing writable but its scratch directory, a private ``/tmp`` as big as its
scratch quota and a private ``/dev/shm`` as big as its memory limit.  A
seccomp filter (:mod:`arena.bot.seccomp`) keeps the files all sandboxes see
from carrying locks or watches from one bot to another.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.bot.limits import Limits, MB
from arena.bot.seccomp import channel_filter

__all__ = ["SANDBOXES", "Confinement", "SandboxUnavailable", "bot_environment", "bwrap_command", "check_sandbox",
           "filter_descriptor", "python_path", "unclosed_channel"]

#: The values of the ``sandbox`` key.
SANDBOXES = ("none", "bwrap")
#: Variables a bot inherits from the arena's environment; everything else is
#: left out, so no secret of the arena's (or of another bot's) reaches a bot.
INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
#: The unprivileged user a sandboxed bot runs as (``nobody``).
SANDBOX_UID = 65534
#: System directories a sandboxed bot sees, read-only, when they exist.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix")
#: Secrets under the system directories, hidden from a sandboxed bot.  It
#: matters when the arena runs as root: the bot is then root's user outside
#: its namespace, the owner of these files.
SECRET_PATHS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssh", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d")
#: The arena's packages a Python bot may import (the rules, the bundled bots).
IMPORTABLE = ("engine", "bots")
#: Where the sandbox shows them, on the bot's ``PYTHONPATH``: each package's
#: own directory, wherever and however it is installed (an editable install
#: loads them from a checkout whose other folders, its tournaments and
#: submissions among them, stay hidden).
PACKAGES_MOUNT = "/arena-packages"
#: Where the sandbox shows a bot's Python environments, read-only: ``/arena-site/1``, ...
SITE_MOUNT = "/arena-site"
#: What the seccomp filter closes, named where a machine cannot load it.
LOCK_CHANNEL = "file locks and file watches reach from one sandboxed bot to another"
INSTALL_HINT = "install bubblewrap: sudo apt-get install bubblewrap (Debian/Ubuntu), sudo dnf install bubblewrap (Fedora)"


class SandboxUnavailable(Exception):
    """The sandbox asked for cannot run on this machine; the text says how to fix it."""


@dataclass(frozen=True)
class Confinement:
    """How to confine one bot process (see the module's docstring)."""

    limits: Limits = Limits()
    sandbox: str = "none"
    #: The bot's HOME and TMPDIR; a fresh temporary directory when None.
    scratch_dir: Path | None = None
    #: Paths a sandboxed bot must not see, e.g. the results directory.
    hidden: tuple[Path, ...] = field(default_factory=tuple)
    #: A submission's folder (``bots_from``): the only directory of the host
    #: it sees besides the system's and its interpreter's, whatever its
    #: command or environment name.  None: a bot of the tournament file,
    #: which also sees the directories of the files its command names.
    confined_to: Path | None = None
    #: The Python environments a bot running the arena's Python imports
    #: from, first first (a team's own, then the tournament's).
    python_envs: tuple[Path, ...] = ()


def bot_environment(extra: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """The whole environment of a bot: a few harmless variables of the
    arena's, HOME and TMPDIR in its scratch directory, then the bot's own
    ``env`` from the tournament file (which wins)."""
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = env["TMPDIR"] = str(scratch)
    env.update(extra)
    return env


@functools.lru_cache(maxsize=1)
def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def check_sandbox(sandbox: str = "bwrap") -> None:
    """Make sure ``sandbox`` works here, before any game: bubblewrap is
    installed and can create its namespaces as the user bots run as.
    Raises :class:`SandboxUnavailable` with one line saying what to do."""
    if sandbox == "none":
        return
    if _bwrap() is None:
        raise SandboxUnavailable(f"sandbox 'bwrap' needs the program 'bwrap', which is not installed; {INSTALL_HINT}")
    if _filter_problem() is None:
        return  # bubblewrap ran, filter and all
    why = _probe(with_filter=False)
    if why is not None:
        raise SandboxUnavailable(
            f"sandbox 'bwrap' cannot create its namespaces here ({why}); unprivileged user namespaces must be "
            "allowed (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu an AppArmor profile for bwrap)"
        )


def unclosed_channel() -> str | None:
    """None when sandboxed bots run here under the seccomp filter; else one
    line saying that the channel it closes stays open, and why.  Sandboxes
    still run without it: the rest of their walls stand.
    ``TOTEM_ARENA_SECCOMP=off`` leaves it out (for a bot it breaks, or to
    measure what it costs)."""
    if os.environ.get("TOTEM_ARENA_SECCOMP", "").lower() in ("0", "no", "off", "false"):
        return f"{LOCK_CHANNEL}: the arena's seccomp filter is turned off (TOTEM_ARENA_SECCOMP=off)"
    return _filter_problem()


@functools.lru_cache(maxsize=1)
def _filter_problem() -> str | None:
    """Why this machine cannot load the seccomp filter, or None when it can."""
    if channel_filter() is None:
        return f"{LOCK_CHANNEL} on this machine: the arena has no seccomp filter for its architecture ({platform.machine()})"
    why = _probe(with_filter=True)
    return None if why is None else f"{LOCK_CHANNEL} on this machine: bubblewrap does not load the arena's seccomp filter ({why})"


def _probe(*, with_filter: bool) -> str | None:
    """Run ``true`` in the sandbox's namespaces: None when it works, else why not."""
    program = _bwrap()
    if program is None:
        return "bwrap is not installed"
    with _pipe_holding(channel_filter() if with_filter else None) as fd:
        argv = [program, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--proc", "/proc",
                "--dev", "/dev", "--cap-drop", "ALL", *_seccomp_options(fd), "--", "true"]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=30, env={"PATH": os.defpath},
                                  pass_fds=() if fd is None else (fd,))
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
    if done.returncode != 0:
        return " ".join(done.stderr.decode(errors="replace").split())[:300] or f"exit code {done.returncode}"
    return None


def filter_descriptor() -> contextlib.AbstractContextManager[int | None]:
    """The seccomp filter for one bot's start (bubblewrap reads it to the
    end), as a descriptor to pass to bubblewrap; None where this machine
    does not load it (:func:`unclosed_channel`)."""
    return _pipe_holding(channel_filter() if unclosed_channel() is None else None)


@contextlib.contextmanager
def _pipe_holding(program: bytes | None) -> Iterator[int | None]:
    """The reading end of a pipe holding ``program``, closed on leaving."""
    if program is None:
        yield None
        return
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as pipe:  # a few hundred bytes: far below what a pipe holds
            pipe.write(program)
        yield read
    finally:
        os.close(read)


def _seccomp_options(fd: int | None) -> list[str]:
    return [] if fd is None else ["--seccomp", str(fd)]


def bwrap_command(
    cmd: Sequence[str], cwd: Path, env: Mapping[str, str], confinement: Confinement, seccomp_fd: int | None = None,
) -> list[str]:
    """The command line that runs ``cmd`` inside bubblewrap, under the
    seccomp filter read from ``seccomp_fd`` (see :func:`filter_descriptor`).

    Mounts are applied in order, so the hidden paths (the results directory,
    which holds every bot's scratch directory and log, and the tournament
    file, which may hold other bots' secrets) are covered after the working
    directory and the program's directory, and the bot's own scratch
    directory is bound again, writable, last."""
    program = _bwrap()
    if program is None:
        raise SandboxUnavailable(f"sandbox 'bwrap' needs the program 'bwrap', which is not installed; {INSTALL_HINT}")
    scratch = confinement.scratch_dir
    assert scratch is not None
    argv = [
        program,
        "--unshare-all",  # user, PID, network, IPC, UTS and cgroup namespaces
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into a terminal
        "--hostname", "bot",
    ]
    for system in SYSTEM_DIRS:
        if os.path.isdir(system):
            argv += ["--ro-bind", system, system] if not os.path.islink(system) else ["--symlink", os.readlink(system), system]
    for secret in SECRET_PATHS:
        if os.path.isdir(secret):
            argv += ["--tmpfs", secret]
        elif os.path.exists(secret):
            argv += ["--ro-bind", "/dev/null", secret]
    # /tmp and /dev/shm are its own and bounded: the scratch quota, the memory limit.
    limits = confinement.limits
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += _sized_tmpfs("/tmp", limits.scratch_mb) + _sized_tmpfs("/dev/shm", limits.memory_mb)
    visible = _visible_dirs(cmd, cwd, env, confinement.confined_to)
    for directory in visible:
        argv += ["--ro-bind", directory, directory]
    if _runs_arenas_python(cmd, cwd, env, confinement.confined_to):
        paths: list[str] = []
        for number, site in enumerate(confinement.python_envs, start=1):
            argv += ["--ro-bind", str(site), f"{SITE_MOUNT}/{number}"]
            paths.append(f"{SITE_MOUNT}/{number}")
        for name, directory in _importable_dirs().items():
            if any(Path(directory).is_relative_to(v) for v in visible):
                # Already in view where it is (a bot run from "/" sees it all, and "/" is read-only then).
                place = str(Path(directory).parent)
            else:
                argv += ["--ro-bind", directory, f"{PACKAGES_MOUNT}/{name}"]
                place = PACKAGES_MOUNT
            paths += [] if place in paths else [place]
        argv += ["--setenv", "PYTHONPATH", ":".join(filter(None, (*paths, env.get("PYTHONPATH"))))]
    # A hidden path inside another (the logs in the results directory) is hidden with it.
    hidden = [p for p in confinement.hidden if not any(o != p and o in p.parents for o in confinement.hidden)]
    for path in hidden:
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        elif path.exists():
            argv += ["--ro-bind", "/dev/null", str(path)]
    argv += ["--bind", str(scratch), str(scratch)]
    for path in hidden:
        if path.is_dir():  # read-only once the scratch directory is mounted in it
            argv += ["--remount-ro", str(path)]
    argv += ["--chdir", str(cwd), *_seccomp_options(seccomp_fd)]
    return argv + ["--", *cmd]


def python_path(cmd: Sequence[str], cwd: Path, env: Mapping[str, str], confinement: Confinement) -> str | None:
    """The ``PYTHONPATH`` of a bot outside the sandbox, as the sandbox sets
    it (:func:`bwrap_command`): for the arena's own Python, its environments
    then the arena's ``engine`` and ``bots`` where they are installed, then
    the bot's own ``PYTHONPATH``; None for any other program.  So a bot
    that imports them (or runs the interpreter the arena's resolves to)
    runs alike in the sandbox and out of it."""
    if not _runs_arenas_python(cmd, cwd, env, confinement.confined_to):
        return None
    places = dict.fromkeys(str(Path(directory).parent) for directory in _importable_dirs().values())
    return ":".join(filter(None, (*map(str, confinement.python_envs), *places, env.get("PYTHONPATH"))))


def _sized_tmpfs(path: str, megabytes: int | None) -> list[str]:
    """A tmpfs on ``path`` of at most ``megabytes`` (None: the kernel's default, half the memory)."""
    return (["--size", str(megabytes * MB)] if megabytes is not None else []) + ["--tmpfs", path]


@functools.lru_cache(maxsize=1)
def _importable_dirs() -> dict[str, str]:
    """The directory of each of :data:`IMPORTABLE`: beside the arena's own
    package, where every install (a checkout, a wheel, an editable one) puts
    them.  Not looked up on ``sys.path``, where a folder of the caller's named
    ``bots`` (a course's, or the tests') would stand in for the real one."""
    installed = Path(__file__).resolve().parents[2]
    return {name: str(installed / name) for name in IMPORTABLE if (installed / name / "__init__.py").is_file()}


def _program(cmd: Sequence[str], cwd: Path, env: Mapping[str, str], confined_to: Path | None) -> Path | None:
    """The bot's program as it will be run: relative to ``cwd`` when it
    holds a slash, else on the ``PATH`` (a submission's: the arena's own)."""
    program = cmd[0]
    search = env.get("PATH") if confined_to is None else os.environ.get("PATH", os.defpath)
    located = cwd / program if "/" in program else shutil.which(program, path=search)
    return Path(located) if located is not None else None


def _is_arenas_python(path: Path) -> bool:
    return path.resolve() == Path(sys.executable).resolve() or str(path) == sys.executable


def _runs_arenas_python(cmd: Sequence[str], cwd: Path, env: Mapping[str, str], confined_to: Path | None) -> bool:
    path = _program(cmd, cwd, env, confined_to)
    return path is not None and _is_arenas_python(path)


def _visible_dirs(cmd: Sequence[str], cwd: Path, env: Mapping[str, str], confined_to: Path | None = None) -> list[str]:
    """Directories the bot needs to see, read-only: its working directory,
    its program's (as named and with links resolved), the directory of any
    file named on its command line (``python bot.py``, ``java -jar b.jar``),
    and for the arena's own Python its installation (a virtualenv).

    A submission (``confined_to`` its folder) sees of these only what lies
    in its folder, its program as the arena's own ``PATH`` finds it (the
    interpreter, not a program its ``env`` points to) and the arena's
    Python: a command naming ``../other-team/bot.py`` or a file in the
    organiser's home shows it nothing."""
    found: list[str] = [str(cwd)]
    trusted: list[str] = []
    path = _program(cmd, cwd, env, confined_to)
    if path is not None:
        arenas_python = _is_arenas_python(path)
        (trusted if "/" not in cmd[0] or arenas_python else found).extend(
            [str(path.absolute().parent), str(path.resolve().parent)])
        if arenas_python:
            # The interpreter's installation; the arena's packages are shown apart (PACKAGES_MOUNT).
            trusted += [sys.prefix, sys.base_prefix, sys.exec_prefix]
    for arg in cmd[1:]:
        if "/" in arg or arg.endswith((".py", ".js", ".jar", ".rb", ".pl", ".lua")):
            path = cwd / arg
            try:
                if path.is_file():
                    found.append(str(path.resolve().parent))
            except OSError:  # not a path after all (e.g. "python -c <source>")
                pass
    if confined_to is not None:
        root = os.path.realpath(confined_to)
        found = [d for d in found if os.path.realpath(d) == root or os.path.realpath(d).startswith(root + "/")]
    unique: list[str] = []
    for directory in found + trusted:
        if directory not in unique and os.path.isdir(directory) and not any(
            directory == s or directory.startswith(s + "/") for s in SYSTEM_DIRS
        ):
            unique.append(directory)
    return unique
