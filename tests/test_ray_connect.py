"""Connecting to a Ray cluster is bounded: a server that is not a Ray head,
or one that never answers, is one line of the arena's own within seconds;
SIGTERM while connecting ends the run at once; Ray's own retries print
nothing on the terminal.  Processes of their own: the terminal and the
time to exit are what is tested."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import needs
from builders import ROOT, tournament_file

#: A gRPC server's first frame: an empty SETTINGS frame.
SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


@pytest.fixture(autouse=True)
def _ray_installed():
    needs.module("ray", "pip install -e '.[ray]'")


@contextmanager
def server(answer: bytes) -> Iterator[int]:
    """A server on 127.0.0.1 that answers each connection with ``answer``
    once it said something, then holds it open; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
                held.append(conn)
                conn.settimeout(5)
                conn.recv(100)
                conn.sendall(answer)
            except OSError:
                if listener.fileno() < 0:
                    return

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for conn in held:
            conn.close()


def tournament(tmp_path: Path, port: int, timeout: float) -> Path:
    return tournament_file(tmp_path, ["a", "b"], f"ray: {{address: '127.0.0.1:{port}', connect_timeout: {timeout}}}\n",
                           executor="ray", output="out")


def start(tmp_path: Path, file: Path) -> subprocess.Popen[str]:
    # (TMPDIR: where the file of Ray's messages is made, to find it)
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "HOME": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-m", "arena", "run", str(file)], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_server_that_is_no_ray_head_is_one_line_in_seconds(tmp_path):
    page = b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>no</html>"
    with server(page) as port:
        began = time.monotonic()
        ran = start(tmp_path, tournament(tmp_path, port, 30))
        out, err = ran.communicate(timeout=60)
        took = time.monotonic() - began
    assert ran.returncode == 2 and took < 40, (took, err)
    quoted = next(line for line in (ROOT / "docs" / "cluster.md").read_text().splitlines()
                  if line.startswith("error: cluster.yaml: ray.address:"))  # as docs/cluster.md shows it
    assert [line for line in err.splitlines() if not line.startswith("playing on the Ray cluster")] == [
        quoted.replace("cluster.yaml", str(tmp_path / "tiny.yaml")).replace("10.0.0.5:8265", f"127.0.0.1:{port}")]


def test_a_head_that_never_answers_is_one_line_after_the_connect_timeout(tmp_path):
    with server(SETTINGS) as port:  # (it looks like gRPC, then says nothing more)
        began = time.monotonic()
        ran = start(tmp_path, tournament(tmp_path, port, 3))
        out, err = ran.communicate(timeout=90)
        took = time.monotonic() - began
    assert ran.returncode == 2 and 3 < took < 40, (took, err)
    errors = [line for line in err.splitlines() if not line.startswith("playing on the Ray cluster")]
    assert len(errors) == 1 and errors[0].startswith("error: ") and "no answer within 3 s (ray.connect_timeout)" in errors[0]
    kept = sorted(tmp_path.glob("arena-ray-connect-*.log"))
    assert len(kept) == 1 and errors[0].endswith(f"Ray's own messages go to {kept[0]}")


def test_sigterm_while_connecting_ends_the_run_at_once(tmp_path):
    with server(SETTINGS) as port:
        ran = start(tmp_path, tournament(tmp_path, port, 120))
        assert ran.stderr is not None
        assert ran.stderr.readline().startswith("playing on the Ray cluster")
        deadline = time.monotonic() + 60  # Ray imported, the connection made in its thread
        while not list(tmp_path.glob("arena-ray-connect-*.log")) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)
        ran.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        out, err = ran.communicate(timeout=30)
        took = time.monotonic() - sent
    assert ran.returncode == 130 and took < 5, (took, err)
    assert err.splitlines() == ["error: interrupted; 0 finished games are kept in "
                                f"{tmp_path / 'out'}. Run the same command to resume."]
    assert list(tmp_path.glob("arena-ray-connect-*.log")) == []  # (nothing of Ray's was kept to show)


RAY_TALKS = """
import os, sys
from pathlib import Path
from arena.run.ray_executor import ray_output_to
with ray_output_to(Path(sys.argv[1])):  # (the results' logs folder)
    os.write(2, b"raylet dump: 43 lines\\n")  # what Ray's core writes, to descriptor 2
    print("cluster: the arena's own line", file=sys.stderr)
print("after: the terminal again", file=sys.stderr)
os.write(2, b"after, descriptor 2\\n")
"""


def test_what_ray_writes_while_connected_goes_to_its_log_and_the_arenas_lines_to_the_terminal(tmp_path):
    log = tmp_path / "logs" / "ray.log"
    log.parent.mkdir()
    ran = subprocess.run([sys.executable, "-c", RAY_TALKS, str(log.parent)], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines() == ["cluster: the arena's own line", "after: the terminal again", "after, descriptor 2"]
    assert log.read_text() == "raylet dump: 43 lines\n"
