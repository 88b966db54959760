"""The cgroup of each bot process tree: where the arena can make them, and a
handle to limit, watch and kill all of one bot's processes.

A bot gets a cgroup of its own where the arena can make one (cgroup v2 with
the ``memory`` and ``pids`` controllers delegated, or the v1 ``memory`` and
``pids`` hierarchies): memory and the number of processes are then counted
for the bot's whole tree, and every process in it can be found and killed,
however it detached itself.  Where no cgroup can be made, those limits fall
back to rlimits (:func:`arena.bot.limits.rlimits`); the table in
``docs/security.md`` says which limit is enforced how.

Each arena process keeps its bots' cgroups under one of its own
(``totem-arena-<pid>``), removes it at exit, and sweeps those that arenas
killed with -9 left behind.
"""

from __future__ import annotations

import atexit
import errno
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from arena.bot.limits import Limits, MB

__all__ = ["BotCgroup", "new_cgroup", "kill_cgroups_of", "remove_own_cgroups", "cgroup_mode"]

#: Name prefix of the cgroup the arena makes per OS process; the pid follows.
_PREFIX = "totem-arena-"


# --- finding a place for our cgroups ------------------------------------------


@dataclass(frozen=True)
class _Hierarchy:
    """Where this process may create bot cgroups: one directory per hierarchy
    (one for v2; one for memory and one for pids on v1)."""

    version: int
    memory: Path | None
    pids: Path | None


def _own_cgroups() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path."""
    found = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _mounts() -> dict[str, Path]:
    """"cgroup2" or a v1 controller name -> its mount point."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields, _, rest = line.partition(" - ")
        fstype, _source, options = (rest.split() + ["", "", ""])[:3]
        mount_point = Path(fields.split()[4])
        if fstype == "cgroup2":
            found.setdefault("cgroup2", mount_point)
        elif fstype == "cgroup":
            for option in options.split(","):
                if option in ("memory", "pids"):
                    found.setdefault(option, mount_point)
    return found


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _cgroups_off() -> bool:
    return os.environ.get("TOTEM_ARENA_CGROUPS", "").lower() in ("0", "no", "off", "false")


def _detect() -> _Hierarchy | None:
    own = _own_cgroups()
    mounts = _mounts()
    # cgroup v2, where memory and pids can be enabled for our children.
    if "cgroup2" in mounts and "" in own:
        base = mounts["cgroup2"] / own[""].lstrip("/")
        try:
            available = (base / "cgroup.controllers").read_text().split()
        except OSError:
            available = []
        if {"memory", "pids"} <= set(available) and _writable_dir(base) and _enable_v2(base):
            return _Hierarchy(2, base, base)
    # cgroup v1 (or hybrid): a hierarchy per controller.
    memory = pids = None
    if "memory" in mounts and "memory" in own:
        candidate = mounts["memory"] / own["memory"].lstrip("/")
        memory = candidate if _writable_dir(candidate) else None
    if "pids" in mounts and "pids" in own:
        candidate = mounts["pids"] / own["pids"].lstrip("/")
        pids = candidate if _writable_dir(candidate) else None
    if memory is None and pids is None:
        return None
    return _Hierarchy(1, memory, pids)


def _enable_v2(base: Path) -> bool:
    """Enable memory and pids for the children of ``base``.  cgroup v2 lets
    no process live in a cgroup that hands controllers to its children, so
    when the arena lives in ``base`` (a delegated scope, a service) it first
    moves itself into a leaf of its own there."""
    control = base / "cgroup.subtree_control"
    if {"memory", "pids"} <= set(control.read_text().split()):
        return True
    try:
        control.write_text("+memory +pids")
        return True
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            return False
    try:
        leaf = base / f"{_PREFIX}self-{os.getpid()}"
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text("0")
        control.write_text("+memory +pids")
        return True
    except OSError:  # other processes live there too: no cgroups for bots
        return False


_HIERARCHY: _Hierarchy | None = None
#: Detection is inherited by forked workers (which live in the cgroup the
#: arena may have moved to); each process cleans up its own bot cgroups.
_DETECTED = False
_CLEANUP_IN: int | None = None
#: next() on a count is atomic: the pre-flight makes cgroups from several threads at once.
_bot_numbers = itertools.count(1)


def _hierarchy() -> _Hierarchy | None:
    global _HIERARCHY, _DETECTED, _CLEANUP_IN
    if _cgroups_off():
        return None
    if not _DETECTED:
        _HIERARCHY = _detect()
        _DETECTED = True
        if _HIERARCHY is not None:
            _sweep_stale(_HIERARCHY)
    if _HIERARCHY is not None and _CLEANUP_IN != os.getpid():
        _CLEANUP_IN = os.getpid()
        atexit.register(remove_own_cgroups)
    return _HIERARCHY


def cgroup_mode() -> str:
    """How this process confines bots: ``cgroup v2``, ``cgroup v1`` or ``rlimits``."""
    found = _hierarchy()
    return f"cgroup v{found.version}" if found is not None else "rlimits"


def _roots(found: _Hierarchy) -> list[Path]:
    return sorted({p for p in (found.memory, found.pids) if p is not None})


def _sweep_stale(found: _Hierarchy) -> None:
    """Remove the empty cgroups an arena killed with -9 left behind."""
    for root in _roots(found):
        try:
            entries = list(root.glob(_PREFIX + "*"))
        except OSError:
            continue
        for parent in entries:
            pid = parent.name.rsplit("-", 1)[1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                _kill_tree_and_remove(parent)


def remove_own_cgroups() -> None:
    """Kill what is left in this process's bot cgroups and remove them (at exit)."""
    found = _HIERARCHY
    if found is None or _CLEANUP_IN != os.getpid():
        return
    for root in _roots(found):
        _kill_tree_and_remove(root / f"{_PREFIX}{os.getpid()}")


def kill_cgroups_of(pid: int) -> None:
    """Kill every bot process left in the cgroups of arena process ``pid``
    (a worker that was killed, so could not clean up) and remove them."""
    found = _hierarchy()
    if found is None:
        return
    for root in _roots(found):
        _kill_tree_and_remove(root / f"{_PREFIX}{pid}")


def _kill_tree_and_remove(directory: Path) -> None:
    if not directory.is_dir():
        return
    try:
        children = sorted(directory.rglob("*/"), key=lambda p: len(p.parts), reverse=True)
    except OSError:  # removed meanwhile: arena processes starting at once sweep the same stale cgroups
        return
    for child in children:
        if (child / "cgroup.procs").exists():
            _kill_members(child)
            _rmdir(child)
    _kill_members(directory)
    _rmdir(directory)


def _members(directory: Path) -> list[int]:
    try:
        return [int(pid) for pid in (directory / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_members(directory: Path) -> None:
    """SIGKILL everything in a cgroup until nothing new appears (a fork bomb
    is bounded by pids.max, so this converges)."""
    kill_file = directory / "cgroup.kill"
    if kill_file.exists():
        try:
            kill_file.write_text("1")
            return
        except OSError:
            pass
    killed: set[int] = set()
    for _ in range(200):
        fresh = [pid for pid in _members(directory) if pid not in killed]
        if not fresh:
            return
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            killed.add(pid)


def _rmdir(directory: Path) -> bool:
    # An exited process leaves its cgroup a moment later (or when reaped).
    for attempt in range(50):
        try:
            directory.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return False
            time.sleep(0.002 * (attempt + 1))
    return False


# --- one bot's cgroup ------------------------------------------------------------


class BotCgroup:
    """The cgroup(s) of one bot process tree.  :meth:`join_fds` are opened
    here, in the arena, so that the child joins them before exec with a
    plain ``write`` (the bot never runs a single instruction outside).
    ``counts_memory`` and ``counts_processes`` say whether its memory and
    its number of processes are limited here (on cgroup v1 a hierarchy may
    be missing), so that :func:`arena.bot.limits.rlimits` knows what is
    left to it."""

    def __init__(self, directories: list[Path], version: int, *, counts_memory: bool, counts_processes: bool) -> None:
        self.directories = directories
        self.version = version
        self.counts_memory = counts_memory
        self.counts_processes = counts_processes
        self._fds: list[int] = []
        self._oom_before = self._oom_kills()

    def join_fds(self) -> list[int]:
        if not self._fds:
            self._fds = [os.open(d / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for d in self.directories]
        return self._fds

    def close_fds(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []

    def _oom_kills(self) -> int:
        total = 0
        for directory in self.directories:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    text = (directory / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        total += int(value)
        if total == 0 and self.version == 1:
            # Older v1 kernels count no oom_kill; hitting the limit shows in failcnt.
            for directory in self.directories:
                try:
                    total += int((directory / "memory.failcnt").read_text())
                except (OSError, ValueError):
                    pass
        return total

    def hit_memory_limit(self) -> bool:
        return self._oom_kills() > self._oom_before

    def kill_all(self) -> None:
        """SIGKILL every process of the bot's tree, wherever it moved in the process tree."""
        for directory in self.directories:
            _kill_members(directory)

    def vanished(self) -> bool:
        """Whether one of its directories is gone (removed by another process)."""
        return any(not directory.is_dir() for directory in self.directories)

    def remove(self) -> None:
        self.close_fds()
        for directory in self.directories:
            _kill_members(directory)
            _rmdir(directory)


def new_cgroup(limits: Limits) -> BotCgroup | None:
    """A fresh cgroup for one bot with ``limits`` applied, or None where this
    process cannot make one (then :func:`arena.bot.limits.rlimits` does what it can)."""
    found = _hierarchy()
    if found is None:
        return None
    name = f"bot-{next(_bot_numbers)}"
    directories: list[Path] = []
    try:
        for root in _roots(found):
            parent = root / f"{_PREFIX}{os.getpid()}"
            parent.mkdir(exist_ok=True)
            if found.version == 2:
                _write(parent / "cgroup.subtree_control", "+memory +pids", required=False)
            directory = parent / name
            directory.mkdir()
            directories.append(directory)
            if root == found.memory and limits.memory_mb is not None:
                size = str(limits.memory_mb * MB)
                if found.version == 2:
                    _write(directory / "memory.max", size)
                    _write(directory / "memory.swap.max", "0", required=False)
                else:
                    _write(directory / "memory.limit_in_bytes", size)
                    _write(directory / "memory.memsw.limit_in_bytes", size, required=False)
                    _write(directory / "memory.swappiness", "0", required=False)
            if root == found.pids and limits.processes is not None:
                _write(directory / "pids.max", str(limits.processes))
    except OSError:
        for directory in directories:
            _rmdir(directory)
        return None
    return BotCgroup(
        directories, found.version, counts_memory=found.memory is not None, counts_processes=found.pids is not None
    )


def _write(path: Path, text: str, required: bool = True) -> None:
    try:
        path.write_text(text)
    except OSError:
        if required:
            raise
