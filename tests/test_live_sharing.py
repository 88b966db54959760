"""Sharing the live view in a room: the machine's own addresses (never
0.0.0.0) with the token, and their QR code, in the terminal and on the page."""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ElementTree
from urllib.parse import urlsplit

import pytest
import segno

from arena.live import sharing
from arena.live.sharing import lan_addresses, qr_svg, qr_text, reachable, room_urls
from builders import ROOT, served

TOKEN = "token=abcDEF123_-xyz"


def test_loopback_link_local_unspecified_and_repeated_addresses_are_left_out():
    found = ["127.0.0.1", "10.1.2.3", "0.0.0.0", "169.254.7.7", "fe80::1%eth0", "::1", "10.1.2.3", "fd00::2",
             "not an address", "192.168.0.9"]
    assert reachable(found) == ["10.1.2.3", "fd00::2", "192.168.0.9"]


def test_the_machines_addresses_are_reachable_ones_the_routed_one_first(monkeypatch):
    monkeypatch.setattr(sharing, "_routed", lambda family: ["10.0.0.7"] if family == socket.AF_INET else [])
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, family: [
        (family, socket.SOCK_STREAM, 0, "", (address, 0)) for address in ("127.0.1.1", "192.168.1.20", "10.0.0.7")])
    assert lan_addresses() == ["10.0.0.7", "192.168.1.20"]


def test_this_machines_addresses_reach_it():
    """Each address listed is one a socket of this machine can listen on (it is the machine's)."""
    for address in lan_addresses((socket.AF_INET, socket.AF_INET6)):
        parsed = ipaddress.ip_address(address)
        assert not (parsed.is_loopback or parsed.is_unspecified or parsed.is_link_local)
        with socket.socket(socket.AF_INET6 if parsed.version == 6 else socket.AF_INET) as probe:
            probe.bind((address, 0))


def test_a_server_on_every_address_is_given_by_the_machines_addresses_never_0_0_0_0(monkeypatch):
    monkeypatch.setattr(sharing, "lan_addresses", lambda families: {
        (socket.AF_INET,): ["10.0.0.7", "192.168.1.20"],
        (socket.AF_INET6, socket.AF_INET): ["fd00::2", "10.0.0.7"]}[tuple(families)])
    assert room_urls(f"http://0.0.0.0:8000/?{TOKEN}") == [f"http://10.0.0.7:8000/?{TOKEN}",
                                                         f"http://192.168.1.20:8000/?{TOKEN}"]
    assert room_urls(f"http://[::]:8000/?{TOKEN}") == [f"http://[fd00::2]:8000/?{TOKEN}", f"http://10.0.0.7:8000/?{TOKEN}"]
    # One address named: that one.  Loopback: nobody else reaches it, nothing to share.
    assert room_urls(f"http://10.9.8.7:80/?{TOKEN}") == [f"http://10.9.8.7:80/?{TOKEN}"]
    assert room_urls(f"http://127.0.0.1:8000/?{TOKEN}") == room_urls(f"http://[::1]:8000/?{TOKEN}") == []


def test_the_qr_code_holds_the_address_in_the_terminal_and_as_svg():
    url = f"http://192.168.1.20:8000/?{TOKEN}"
    code = segno.make(url, error="m")
    # Two rows of modules a line, the quiet zone around: the whole symbol, as segno draws it.
    lines = qr_text(url).splitlines()
    width, height = code.symbol_size(border=4)
    assert len(lines) == (height + 1) // 2 and {len(line) for line in lines} == {width}
    assert len(set(qr_text(url))) > 3 and qr_text(url) != qr_text(url + "x")
    svg = ElementTree.fromstring(qr_svg(url))
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and int(svg.get("width")) == 8 * code.symbol_size(border=2)[0]
    assert qr_svg(url) == qr_svg(url) and qr_svg(url) != qr_svg(url + "x")


def test_the_page_gets_the_qr_code_of_the_rooms_address_and_a_loopback_server_has_none(tmp_path):
    for host, shared in (("0.0.0.0", True), ("127.0.0.1", False)):
        with served(tmp_path, host) as url:
            # This user's own browser on loopback: no token needed.
            local = f"http://127.0.0.1:{urlsplit(url).port}/"
            state = urllib.request.urlopen(local + "api/state", timeout=10).read()
            assert (b'"share": true' in state) is shared
            if shared:
                answer = urllib.request.urlopen(local + "share.svg", timeout=10)
                assert answer.headers["Content-Type"] == "image/svg+xml"
                assert answer.read() == qr_svg(room_urls(url)[0])
            else:
                with pytest.raises(urllib.error.HTTPError, match="404"):
                    urllib.request.urlopen(local + "share.svg", timeout=10)


def test_arena_serve_for_a_room_prints_the_machines_addresses_and_a_qr_code(tmp_path):
    """``arena serve DIR --host 0.0.0.0``: the addresses another machine opens, with the token, and
    a QR code of the first; never 0.0.0.0, which reaches nobody."""
    serving = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(tmp_path), "--host", "0.0.0.0", "--port", "0"],
                               cwd=ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert serving.stderr is not None
        first = serving.stderr.readline()
        addresses = lan_addresses()
        lines = [first] + [serving.stderr.readline() for _ in range(len(addresses))]
    finally:
        serving.send_signal(signal.SIGINT)
        try:
            serving.wait(10)
        finally:
            serving.kill()  # (a server deaf to it is no process left to the next test)
            serving.wait()
    printed = [line.split(": ", 1)[1].split()[0] for line in lines[:len(addresses)]]
    assert [urlsplit(url).hostname for url in printed] == addresses and "0.0.0.0" not in "".join(lines)
    assert all(lines[i].startswith(f"live view of {tmp_path}: http://") for i in range(len(addresses)))
    assert lines[len(addresses)] == f"scan to open {printed[0]}:\n"
    assert urlsplit(printed[0]).query.startswith("token=")


def test_ctrl_c_while_the_server_prints_its_addresses_stops_it_every_time(tmp_path):
    # Raised wherever it landed, a Ctrl-C in the middle of the QR code was lost now and then (3 times in 12),
    # and the server ran on, deaf to every later signal but SIGKILL.
    for _ in range(10):
        serving = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(tmp_path), "--host", "0.0.0.0",
                                    "--port", "0"], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert serving.stderr is not None and serving.stderr.readline().startswith("live view of ")
            serving.stderr.readline()  # (the next line: the QR code comes after it)
            serving.send_signal(signal.SIGINT)
            assert serving.wait(10) == 0
        finally:
            if serving.poll() is None:
                serving.kill()
                serving.wait()
