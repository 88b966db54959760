"""The head of a Ray cluster lost mid-run (``ray.cluster_utils.Cluster``: a
head and a worker node on this machine, the head's processes killed): the
run ends within seconds, not when Ray gives up on its head a minute later,
with a line of the arena's own and exit code 1, and leaves no live file.
The driver is a process of its own: Ray ends a driver whose head is gone.
And the watch that tells, against servers that stand for a head."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from arena.run import ray_head
from arena.run.ray_head import HeadWatch
from builders import BOTS, ROOT, records, until
from conftest import _descendants
from raytest import marked_tournament, ray_runtime, wait_until_gone
from test_ray_connect import SETTINGS, server


@pytest.fixture
def quick_watch(monkeypatch):
    monkeypatch.setattr(ray_head, "PROBE_EVERY_S", 0.1)
    monkeypatch.setattr(ray_head, "REFUSED_FOR_S", 0.5)
    monkeypatch.setattr(ray_head, "SILENT_FOR_S", 1.0)


def test_a_head_that_answers_is_there_and_gone_once_its_port_refuses_connections(quick_watch):
    with server(SETTINGS) as port:  # (a GCS's first answer)
        watch = HeadWatch(f"127.0.0.1:{port}")
        time.sleep(1.5)
        assert not watch.gone
    began = time.monotonic()
    until(lambda: watch.gone, 5.0, "the watch to say the head is gone")
    assert time.monotonic() - began >= 0.5  # (refused for REFUSED_FOR_S)
    watch.stop()


def test_a_head_that_takes_connections_and_says_nothing_is_gone_after_the_longer_wait(quick_watch):
    with server(b"") as port:  # (a frozen head: the kernel takes the connection)
        watch = HeadWatch(f"127.0.0.1:{port}")
        time.sleep(0.6)
        assert not watch.gone  # (refused would have been enough by now)
        until(lambda: watch.gone, 5.0, "the watch to say the head is gone")
    watch.stop()


@pytest.fixture
def head_and_worker():
    nodes = {}

    def start(ray):
        from ray.cluster_utils import Cluster

        before = set(_descendants())
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        nodes["head"] = set(_descendants()) - before  # (its GCS, raylet and agents)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        nodes["cluster"] = cluster
        started = set(_descendants()) - before

        def stop():
            cluster.shutdown()
            # Ray's agents of the worker node outlive their head (the actors and bots, started later, must not).
            for pid in started:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

        return stop

    with ray_runtime(start):
        yield nodes


def test_a_lost_head_ends_the_run_in_seconds_with_a_line_of_the_arenas_own(tmp_path, head_and_worker):
    slow = f"[python, {BOTS / 'slow.py'}, '0.05']"
    address = head_and_worker["cluster"].address
    file = marked_tournament(tmp_path, {"a": slow, "b": slow}, rounds=30, extra=f"ray: {{address: '{address}'}}\n")
    driver = subprocess.Popen([sys.executable, "-m", "arena", "run", str(file)], cwd=ROOT, text=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    games = tmp_path / "out-ray" / "games.jsonl"
    deadline = time.monotonic() + 60
    while not (games.exists() and len(games.read_bytes().splitlines()) >= 2):
        assert time.monotonic() < deadline and driver.poll() is None, "no game was played"
        time.sleep(0.1)
    for pid in head_and_worker["head"]:
        os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    _, err = driver.communicate(timeout=90)
    took = time.monotonic() - killed
    stored = len(records(tmp_path / "out-ray"))
    print(f"the driver ended {took:.1f} s after its head")  # (the figure in docs/cluster.md)
    assert driver.returncode == 1 and took < 15, (took, err)
    assert err.splitlines()[-1] == f"error: the cluster's head is gone: {stored} games stored, run again to resume"
    assert 2 <= stored < 120
    assert os.listdir(tmp_path / "out-ray" / "live") == []
    head_and_worker["cluster"].shutdown()  # (the worker node, with the run's actor and its bots)
    assert wait_until_gone(str(tmp_path)) == []
