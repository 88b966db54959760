"""Who is at the other end of a TCP connection from this machine: the uid
that owns the client's socket, found as identd finds it.

Linux lists every TCP socket of a network namespace in ``/proc/net/tcp``
(IPv4) and ``/proc/net/tcp6`` (IPv6), each row with its local and remote
address and the uid that made it.  The client's socket of a connection to
this server is the row whose local address is the peer's and whose remote
address is the server's; the server's own socket is the row the other way
round.  Anything short of one such row held by a process (the file missing
on another system, the client gone meanwhile, a socket in ``TIME_WAIT``,
which the kernel lists as root's) is no answer, and the caller asks for the
token instead.
"""

from __future__ import annotations

import ipaddress
import struct
from pathlib import Path
from typing import Any

__all__ = ["TABLES", "peer_uid"]

#: The kernel's tables of TCP sockets, by the family of the addresses in them.
TABLES = {4: Path("/proc/net/tcp"), 6: Path("/proc/net/tcp6")}


def peer_uid(peer: Any, local: Any, tables: dict[int, Path] = TABLES) -> int | None:
    """The uid owning the socket at ``peer`` connected to ``local`` (both
    ``(host, port, ...)`` as a socket gives them), when the peer is a
    loopback address; else None."""
    try:
        peer_host, local_host = (ipaddress.ip_address(str(end[0]).split("%")[0]) for end in (peer, local))
        peer_port, local_port = int(peer[1]), int(local[1])
    except (TypeError, ValueError, IndexError):
        return None  # not an IP connection (a Unix socket, a test transport)
    if not _plain(peer_host).is_loopback:
        return None
    wanted = {(_row_address(p, peer_port), _row_address(q, local_port), version)
              for p, q, version in _spellings(peer_host, local_host)}
    uids: set[int] = set()
    for local_field, remote_field, version in wanted:
        uids |= _owners(tables[version], local_field, remote_field)
    return uids.pop() if len(uids) == 1 else None


def _plain(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An IPv4 address mapped into IPv6 (``::ffff:127.0.0.1``, a dual-stack server's peer) as IPv4."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _spellings(peer: ipaddress.IPv4Address | ipaddress.IPv6Address, local: ipaddress.IPv4Address | ipaddress.IPv6Address
               ) -> list[tuple[bytes, bytes, int]]:
    """The packed (peer, local) addresses the client's row may show, with its table: an IPv4
    connection seen by a dual-stack server is an IPv4 socket or an IPv6 one of mapped addresses."""
    peer, local = _plain(peer), _plain(local)
    if peer.version != local.version:
        return []
    if peer.version == 6:
        return [(peer.packed, local.packed, 6)]
    mapped = b"\0" * 10 + b"\xff\xff"
    return [(peer.packed, local.packed, 4), (mapped + peer.packed, mapped + local.packed, 6)]


def _row_address(packed: bytes, port: int) -> str:
    # The kernel prints each 32-bit word of the address as a number in this machine's byte order.
    words = struct.unpack(f"={len(packed) // 4}I", packed)
    return "".join(f"{word:08X}" for word in words) + f":{port:04X}"


def _owners(table: Path, local_field: str, remote_field: str) -> set[int]:
    """The uids of the rows of ``table`` from ``local_field`` to ``remote_field`` held by a process."""
    found: set[int] = set()
    try:
        with table.open(encoding="ascii") as rows:
            next(rows, None)  # the heading
            for row in rows:
                fields = row.split()
                # Field 9, the inode, is 0 for a socket no process holds (TIME_WAIT, orphaned): its uid says nothing.
                if len(fields) > 9 and fields[1] == local_field and fields[2] == remote_field and fields[9] != "0":
                    found.add(int(fields[7]))
    except (OSError, ValueError):
        return set()  # no table (no IPv6, not Linux) or an unreadable one: no row, so no answer
    return found
