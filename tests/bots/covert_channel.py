"""Hostile: two bots signal to each other through what their sandboxes share.

    python covert_channel.py MECHANISM send|receive FILE...

One kernel object per bit: bit i is FILE i (or a name made from i and
``$CHANNEL_TAG``, a number both bots are given, so that runs at once differ).  The
receiver arms itself (inotify must watch before anything happens) and prints
``{"armed": ...}``; the sender reads its secret from ``$SECRET`` (a string of
0s and 1s, as an organiser's ``env`` would hold a key), signals each 1 bit and
prints ``{"sent": ..., "errors": ...}``, then holds what it signals until its
stdin closes, then removes what outlives a process (queues, keys, files); the receiver, given a line on stdin, probes every bit and prints
``{"bits": "0110...", "errors": ...}``.  ``errors`` names each distinct failure
(a refused lock is how a closed channel shows), so a test can tell "no bit
came through" from "nothing was tried".
"""

import ctypes
import errno
import fcntl
import json
import os
import platform
import socket
import struct
import sys

MECHANISM, ROLE, FILES = sys.argv[1], sys.argv[2], sys.argv[3:]
LIBC = ctypes.CDLL(None, use_errno=True)
IN_OPEN = 0x20
IPC_CREAT, IPC_RMID = 0o1000, 0
KEY_SPEC_USER_KEYRING, KEYCTL_UNLINK = -4, 9
TAG = int(os.environ["CHANNEL_TAG"])
#: add_key, request_key and keyctl, which glibc does not wrap.
KEY_CALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[platform.machine()]
errors: set[str] = set()
held: list[object] = []  # what the sender keeps open: its locks, sockets, queues


def failed(what: str, number: int) -> None:
    errors.add(f"{what}: {errno.errorcode.get(number, number)}")


def flock_struct(kind: int) -> bytes:
    # struct flock on 64-bit Linux: l_type, l_whence, l_start, l_len, l_pid (OFD locks want pid 0).
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, 0, 0, 0)


def hold(path: str, take) -> None:
    """Sender: open ``path`` read-only, ``take(fd)`` (a lock), and keep it open."""
    fd = os.open(path, os.O_RDONLY)
    try:
        take(fd)
        held.append(fd)
    except OSError as exc:
        os.close(fd)
        failed(MECHANISM, exc.errno)


def probe(path: str, ask, busy: int | None = None) -> int:
    """Receiver: open ``path`` read-only and ``ask(fd)`` for the bit; failing
    with ``busy`` is a 1, any other failure a 0 (and noted)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return ask(fd)
    except OSError as exc:
        if exc.errno == busy:
            return 1
        failed(MECHANISM, exc.errno)
        return 0
    finally:
        os.close(fd)


def conflicting_lock(get_cmd: int):
    """F_GETLK: would a write lock conflict with someone's?"""
    def ask(fd: int) -> int:
        answer = fcntl.fcntl(fd, get_cmd, flock_struct(fcntl.F_WRLCK))
        return int(struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK)
    return ask


def write_lease(fd: int) -> int:
    """A write lease is granted only while nobody else has the file open: the sender's open is the bit."""
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return 0


def free_flock(fd: int) -> int:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return 0


def abstract_name(index: int) -> bytes:
    return b"\0totem-channel-%d-%d" % (TAG, index)


def send_abstract(index: int) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(abstract_name(index))
    held.append(sock)


def probe_abstract(index: int) -> int:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(abstract_name(index))
            return 0
        except OSError as exc:
            return int(exc.errno == errno.EADDRINUSE)


def sysv_key(index: int) -> int:
    return 0x40000000 + (TAG % (1 << 24)) * 64 + index


def send_sysv(index: int) -> None:
    if LIBC.msgget(sysv_key(index), IPC_CREAT | 0o666) < 0:
        failed("msgget", ctypes.get_errno())


def probe_sysv(index: int) -> int:
    return int(LIBC.msgget(sysv_key(index), 0) >= 0)


def queue_name(index: int) -> bytes:
    return b"/totem-channel-%d-%d" % (TAG, index)


def send_mqueue(index: int) -> None:
    if LIBC.mq_open(queue_name(index), os.O_CREAT | os.O_RDWR, 0o600, None) < 0:
        failed("mq_open", ctypes.get_errno())


def probe_mqueue(index: int) -> int:
    return int(LIBC.mq_open(queue_name(index), os.O_RDONLY) >= 0)


def shm_path(index: int) -> str:
    return f"/dev/shm/totem-channel-{TAG}-{index}"


def send_shm(index: int) -> None:
    try:
        open(shm_path(index), "w").close()
    except OSError as exc:
        failed("shm", exc.errno)


def key_name(index: int) -> bytes:
    return b"totem-channel-%d-%d" % (TAG, index)


def send_key(index: int) -> None:
    if LIBC.syscall(KEY_CALLS[0], b"user", key_name(index), b"1", 1, KEY_SPEC_USER_KEYRING) < 0:
        failed("add_key", ctypes.get_errno())


def probe_key(index: int) -> int:
    return int(find_key(index) >= 0)


def find_key(index: int) -> int:
    return LIBC.syscall(KEY_CALLS[1], b"user", key_name(index), None, 0)


def remove(index: int) -> None:
    """What the sender made that would outlive it: a queue, a key, a file in /dev/shm."""
    if MECHANISM == "sysv" and (queue := LIBC.msgget(sysv_key(index), 0)) >= 0:
        LIBC.msgctl(queue, IPC_RMID, None)
    elif MECHANISM == "mqueue":
        LIBC.mq_unlink(queue_name(index))
    elif MECHANISM == "keyring" and (key := find_key(index)) >= 0:
        LIBC.syscall(KEY_CALLS[2], KEYCTL_UNLINK, key, KEY_SPEC_USER_KEYRING)
    elif MECHANISM == "shm" and os.path.exists(shm_path(index)):
        os.unlink(shm_path(index))


SENDERS = {
    "flock": lambda i: hold(FILES[i], lambda fd: fcntl.flock(fd, fcntl.LOCK_EX)),
    # Read locks: allowed on a read-only descriptor.
    "posix": lambda i: hold(FILES[i], lambda fd: fcntl.fcntl(fd, fcntl.F_SETLK, flock_struct(fcntl.F_RDLCK))),
    "ofd": lambda i: hold(FILES[i], lambda fd: fcntl.fcntl(fd, fcntl.F_OFD_SETLK, flock_struct(fcntl.F_RDLCK))),
    "lease": lambda i: held.append(os.open(FILES[i], os.O_RDONLY)),
    "inotify": lambda i: os.close(os.open(FILES[i], os.O_RDONLY)),
    "abstract": send_abstract,
    "sysv": send_sysv,
    "mqueue": send_mqueue,
    "shm": send_shm,
    "keyring": send_key,
}
PROBES = {
    "flock": lambda i: probe(FILES[i], free_flock, busy=errno.EWOULDBLOCK),
    "posix": lambda i: probe(FILES[i], conflicting_lock(fcntl.F_GETLK)),
    "ofd": lambda i: probe(FILES[i], conflicting_lock(fcntl.F_OFD_GETLK)),
    "lease": lambda i: probe(FILES[i], write_lease, busy=errno.EAGAIN),
    "abstract": probe_abstract,
    "sysv": probe_sysv,
    "mqueue": probe_mqueue,
    "shm": lambda i: int(os.path.exists(shm_path(i))),
    "keyring": probe_key,
}


def arm_inotify() -> dict[int, int]:
    """Watch each file for an open; the watch descriptor says which bit."""
    fd = LIBC.inotify_init1(os.O_NONBLOCK)
    if fd < 0:
        failed("inotify", ctypes.get_errno())
        return {}
    watches = {}
    for index, path in enumerate(FILES):
        wd = LIBC.inotify_add_watch(fd, path.encode(), IN_OPEN)
        if wd < 0:
            failed("inotify_add_watch", ctypes.get_errno())
        watches[wd] = index
    held.append(fd)
    return watches


def read_inotify(watches: dict[int, int]) -> str:
    bits = ["0"] * len(FILES)
    try:
        events = os.read(held[0], 65536) if held else b""
    except BlockingIOError:
        events = b""
    offset = 0
    while offset < len(events):
        wd, _mask, _cookie, length = struct.unpack_from("iIII", events, offset)
        if wd in watches:
            bits[watches[wd]] = "1"
        offset += 16 + length
    return "".join(bits)


def say(message: dict) -> None:
    print(json.dumps({**message, "errors": sorted(errors)}), flush=True)


if ROLE == "send":
    secret = os.environ["SECRET"]
    for index, bit in enumerate(secret):
        if bit == "1":
            SENDERS[MECHANISM](index)
    say({"sent": secret})
    sys.stdin.read()  # hold every lock and name until the test is done
    for index in range(len(secret)):
        remove(index)
else:
    watches = arm_inotify() if MECHANISM == "inotify" else {}
    say({"armed": MECHANISM})
    sys.stdin.readline()
    if MECHANISM == "inotify":
        say({"bits": read_inotify(watches)})
    else:
        say({"bits": "".join(str(PROBES[MECHANISM](i)) for i in range(len(FILES)))})
    sys.stdin.read()
