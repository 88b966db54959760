"""The seccomp filter of ``sandbox: bwrap``: no file lock or file watch
reaches from one sandbox to another.

Every sandbox sees the same files read-only (the system, the interpreter, a
shared working directory, ``/dev/null``), and a lock or a watch on a file
belongs to its inode, which bind mounts share: ``flock`` and ``fcntl`` locks
work on a read-only descriptor, a write lease is refused while another
process has the file open, and inotify reports another sandbox's ``open``.
Two bots could pass a secret one bit per file.  Private copies would cost a
copy of every file a bot may open, and ``/dev`` would stay shared; so
instead every process of the sandbox runs under this filter:

- ``flock`` and ``fcntl``'s lock commands (``F_SETLK``, ``F_SETLKW``,
  ``F_OFD_SETLK``, ``F_OFD_SETLKW``) succeed and do nothing: no sandboxed
  process ever holds a lock, so none can be seen, while programs that lock
  their own files (SQLite, the JVM's performance data) run as before, where
  an error would stop them.  ``F_GETLK`` still asks the kernel: it can only
  find locks of processes outside every sandbox;
- ``F_SETLEASE`` fails with ``ENOLCK`` (a lease is granted only while no one
  else has the file open: an answer that would be a bit);
- ``inotify_init``, ``inotify_init1``, ``fanotify_init`` and ``fcntl``'s
  ``F_NOTIFY`` fail with ``ENOSYS``, as on a kernel without them; libraries
  that watch files fall back to looking.

The program is classic BPF, assembled here for the machine's own system-call
ABI and its 32-bit one (x86_64 and i386, aarch64 and arm), which a bot could
otherwise switch to.  x32 calls fail with ``ENOSYS`` (as on most kernels,
which leave x32 out), and a call of any other ABI kills the process: its
numbers are not checked.
"""

from __future__ import annotations

import errno
import platform
import struct
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["channel_filter"]

# <linux/filter.h>, <linux/seccomp.h>, <linux/audit.h>
_LD_ABS_W = 0x20
_JEQ = 0x15
_JGE = 0x35
_RET = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
# Offsets into struct seccomp_data: nr, arch, then args[6] of 64 bits (the low half first: both ABIs are little-endian).
_NR, _ARCH, _ARG1_LOW = 0, 4, 24
_X32_BIT = 0x40000000

#: fcntl commands that take a record lock: F_SETLK, F_SETLKW, their 32-bit
#: ``64`` forms, F_OFD_SETLK, F_OFD_SETLKW.
LOCK_COMMANDS = (6, 7, 13, 14, 37, 38)
#: fcntl's F_SETLEASE (a lease, granted only while no one else has the file open).
F_SETLEASE = 1024
#: fcntl's F_NOTIFY (dnotify: a signal when a file in a directory is read).
F_NOTIFY = 1026


@dataclass(frozen=True)
class _Abi:
    """One system-call ABI: its audit arch and the numbers of the calls the filter looks at."""

    arch: int
    flock: int
    fcntl: tuple[int, ...]
    watch: tuple[int, ...]  # inotify_init (where it exists), inotify_init1, fanotify_init
    x32: bool = False  # numbers with the x32 bit set are another ABI under the same arch


_X86_64 = _Abi(0xC000003E, flock=73, fcntl=(72,), watch=(253, 294, 300), x32=True)
_I386 = _Abi(0x40000003, flock=143, fcntl=(55, 221), watch=(291, 332, 338))
_AARCH64 = _Abi(0xC00000B7, flock=32, fcntl=(25,), watch=(26, 262))
_ARM = _Abi(0x40000028, flock=143, fcntl=(55, 221), watch=(316, 360, 367))
#: The ABIs a process may use on each machine (``platform.machine()``).
ABIS = {"x86_64": (_X86_64, _I386), "aarch64": (_AARCH64, _ARM)}


def channel_filter(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (this one by default) as bubblewrap's
    ``--seccomp`` reads it, or None on a machine it has no numbers for."""
    abis = ABIS.get(machine or platform.machine())
    return None if abis is None else _assemble(_program(abis))


#: ("ld", offset), ("ret", value), ("jeq" or "jge", value, label), ("label", name).
_Line = tuple[str | int, ...]


def _program(abis: Sequence[_Abi]) -> list[_Line]:
    lines: list[_Line] = [("ld", _ARCH)]
    lines += [("jeq", abi.arch, f"abi{n}") for n, abi in enumerate(abis)]
    lines.append(("ret", _RET_KILL_PROCESS))
    for n, abi in enumerate(abis):
        lines += [("label", f"abi{n}"), ("ld", _NR)]
        if abi.x32:
            lines.append(("jge", _X32_BIT, "no_call"))
        lines.append(("jeq", abi.flock, "granted"))
        lines += [("jeq", number, "fcntl") for number in abi.fcntl]
        lines += [("jeq", number, "no_call") for number in abi.watch]
        lines.append(("ret", _RET_ALLOW))
    lines += [("label", "fcntl"), ("ld", _ARG1_LOW)]
    lines += [("jeq", command, "granted") for command in LOCK_COMMANDS]
    lines += [("jeq", F_SETLEASE, "no_lease"), ("jeq", F_NOTIFY, "no_call"), ("ret", _RET_ALLOW)]
    lines += [("label", "granted"), ("ret", _RET_ERRNO | 0)]  # errno 0: the call returns 0, having done nothing
    lines += [("label", "no_lease"), ("ret", _RET_ERRNO | errno.ENOLCK)]
    lines += [("label", "no_call"), ("ret", _RET_ERRNO | errno.ENOSYS)]
    return lines


def _assemble(lines: list[_Line]) -> bytes:
    """``struct sock_filter`` after ``struct sock_filter``; a jump goes
    forward to its label if the accumulator equals (``jeq``) or is at least
    (``jge``) its value, else to the next instruction."""
    where: dict[str, int] = {}
    code: list[_Line] = []
    for line in lines:
        if line[0] == "label":
            where[str(line[1])] = len(code)
        else:
            code.append(line)
    out = bytearray()
    for index, line in enumerate(code):
        kind, value = line[0], int(line[1])
        if kind in ("ld", "ret"):
            out += struct.pack("=HBBI", _LD_ABS_W if kind == "ld" else _RET, 0, 0, value)
        else:
            offset = where[str(line[2])] - index - 1
            assert 0 <= offset < 256, "classic BPF jumps forward by at most 255"
            out += struct.pack("=HBBI", _JEQ if kind == "jeq" else _JGE, offset, 0, value)
    return bytes(out)
