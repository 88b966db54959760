"""Sharing the live view in a room: the addresses other machines reach it
at, and a QR code of one of them.

A server listening on every address (``--host 0.0.0.0`` or ``::``) is
reached at the machine's own addresses, never at ``0.0.0.0``: those of the
network interfaces that route off the machine, found without sending a
packet (a UDP socket "connected" to an outside address says which local
address the system would send from) and from the machine's name.  Loopback
and link-local addresses reach nobody else and are left out.

segno draws the QR code: a well-kept library in pure Python, with no
dependencies of its own, that writes both the terminal's blocks and SVG.
"""

from __future__ import annotations

import io
import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

import segno

__all__ = ["lan_addresses", "qr_svg", "qr_text", "reachable", "room_urls"]

#: Addresses outside any local network (TEST-NET-2 and the IPv6 documentation block): a UDP
#: socket connected to one tells the local address that routes there; nothing is sent.
_PROBES = {socket.AF_INET: "198.51.100.1", socket.AF_INET6: "2001:db8::1"}
#: A host that means every address of the machine, and the families of addresses it then listens on.
_EVERY_ADDRESS = {"0.0.0.0": (socket.AF_INET,), "::": (socket.AF_INET6, socket.AF_INET)}


def lan_addresses(families: Iterable[socket.AddressFamily] = (socket.AF_INET,)) -> list[str]:
    """This machine's addresses that another machine can reach, of ``families``, the routed one first."""
    found: list[str] = []
    for family in families:
        found += _routed(family)
        try:
            found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, family)]
        except OSError:
            pass  # a machine whose name does not resolve: the routed address is enough
    return reachable(found)


def reachable(addresses: Iterable[str]) -> list[str]:
    """``addresses`` without duplicates, loopback, link-local or unspecified ones (which reach no other machine)."""
    kept: list[str] = []
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.partition("%")[0])
        except ValueError:
            continue
        if not (address.is_loopback or address.is_link_local or address.is_unspecified) and str(address) not in kept:
            kept.append(str(address))
    return kept


def qr_text(url: str) -> str:
    """A QR code of ``url`` in the terminal's block characters, two rows of modules a line."""
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True)
    return out.getvalue()


def qr_svg(url: str) -> bytes:
    """A QR code of ``url`` as an SVG image: black on white, whatever the page's theme (a phone must read it)."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=8, border=2, dark="#000", light="#fff", xmldecl=False,
                                    svgns=True, title="the live view's address")
    return out.getvalue()


def _routed(family: socket.AddressFamily) -> list[str]:
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((_PROBES[family], 9))
            return [probe.getsockname()[0]]
    except OSError:  # no route of that family (no network, no IPv6)
        return []


def room_urls(url: str) -> list[str]:
    """The addresses of a server printed as ``url`` that other machines
    open (none when it listens on loopback alone: nobody else reaches it)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host in ("localhost", "") or _is_loopback(host):
        return []
    families = _EVERY_ADDRESS.get(host)
    hosts = lan_addresses(families) if families is not None else [host]
    return [urlunsplit(parts._replace(netloc=f"{f'[{h}]' if ':' in h else h}:{parts.port}")) for h in hosts]


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
