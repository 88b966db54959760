"""Equal conditions on every node of a cluster: the bots start at one
niceness wherever they play, and a calibrated cluster records each node's
speed and each game's clock scale (arena/run/node_conditions.py)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time

import pytest

from arena.game.clock import TimeControl
from arena.run.config import load_config
from arena.run.executor import game_deadline_s
from arena.run.node_conditions import Conditions, scaled
from arena.run import ray_executor
from arena.run.ray_executor import RayExecutor
from arena.run.tournament import run_tournament
from builders import BOTS, records
from raytest import QUIET, RANDOM, marked_tournament, niceness_watch, ray_runtime, wait_until_gone


#: The niceness of the head's Ray workers (which may lower it where the tests
#: run with CAP_SYS_NICE), and of the node joined with a plain `ray start`
#: (Ray's default), which may not.
HEAD_NICE, NODE_NICE = 5, 15


@pytest.fixture(scope="module")
def unequal_nodes():
    """A head whose Ray workers run at niceness 5 and a node joined with a
    plain `ray start`, whose workers run at 15 and cannot lower it (it is
    started without CAP_SYS_NICE; an unprivileged user has none anyway)."""
    nodes = {}

    def start(ray):
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "include_dashboard": False, "env_vars": {"RAY_worker_niceness": str(HEAD_NICE)}})
        unprivileged = ["setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"] if os.geteuid() == 0 else []
        node = subprocess.Popen([*unprivileged, sys.executable, "-m", "ray.scripts.scripts", "start", "--block",
                                 f"--address={cluster.address}", "--num-cpus=1", "--disable-usage-stats"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ray.init(address=cluster.address, **QUIET)
        deadline = time.monotonic() + 60
        while sum(1 for n in ray.nodes() if n["Alive"]) < 2:
            assert node.poll() is None and time.monotonic() < deadline, "the second node did not join"
            time.sleep(0.2)
        nodes["head"] = cluster.head_node.node_id

        def stop():
            ray.shutdown()
            node.terminate()
            node.wait(30)
            cluster.shutdown()

        return stop

    with ray_runtime(start) as ray:
        nodes["ray"] = ray
        yield nodes


def test_bots_start_at_the_niceness_every_node_can_reach(tmp_path, unequal_nodes, caplog):
    # Slower bots, so that the second node's actor is up while games are left.
    slow = f"[python, {BOTS / 'slow.py'}, '0.02']"
    config = load_config(marked_tournament(tmp_path, {name: slow for name in RANDOM}, rounds=2))
    niceness, look_at_bots = niceness_watch(str(tmp_path))
    executor = RayExecutor(config, config.output / "logs")
    with caplog.at_level(logging.WARNING, logger="arena"):
        run_tournament(config, executor=executor, on_record=look_at_bots)
    games = records(config.output)
    assert len({r["played_on"]["node_id"] for r in games}) == 2
    # The head's workers could have run them at 5, or at 0 with the privilege: the other node cannot go below 15.
    assert niceness == {NODE_NICE}
    assert {r["played_on"]["nice"] for r in games} == {NODE_NICE}
    said = [r.getMessage() for r in caplog.records if "niceness" in r.getMessage()]
    worker = next(p for p in executor.placements.values() if p.node_id != unequal_nodes["head"])
    driver = os.getpriority(os.PRIO_PROCESS, 0)
    assert said == [f"bots run at niceness {NODE_NICE} on every node, not {driver} as this one's: the Ray workers of "
                    f"{worker.where} at {NODE_NICE} cannot go lower; for {driver}, start Ray there with "
                    f"`RAY_worker_niceness={driver} ray start ...`"], said
    assert wait_until_gone(str(tmp_path)) == []


def test_a_calibrated_run_records_each_nodes_speed_and_each_games_clock_scale(tmp_path, unequal_nodes):
    slow = f"[python, {BOTS / 'slow.py'}, '0.02']"
    file = marked_tournament(tmp_path, {name: slow for name in RANDOM},
                             extra="ray: {calibrate: true, time_scaling: speed}\n")
    config = load_config(file)
    run_tournament(config, executor=RayExecutor(config, config.output / "logs"))
    nodes = json.loads((config.output / "tournament.json").read_text())["cluster"]["nodes"]
    assert len(nodes) == 2 and all(0.2 < node["speed"] < 5 for node in nodes), nodes
    speeds = {node["node_id"]: node["speed"] for node in nodes}
    games = records(config.output)
    assert len({r["played_on"]["node_id"] for r in games}) == 2
    for record in games:
        speed, scale = record["played_on"]["speed"], record["time_scale"]
        assert speed == speeds[record["played_on"]["node_id"]]
        assert abs(scale * speed - 1) <= 0.02, (scale, speed)  # each rounded to 2 decimals
        clock = TimeControl(30_000, 100)  # the file's 30+0.1
        assert record["time_control"] == scaled(config, scale).time_control.to_json()
        assert record["time_control"] == {"initial_ms": round(clock.initial_ms * scale),
                                          "increment_ms": round(clock.increment_ms * scale)}
    assert wait_until_gone(str(tmp_path)) == []


def test_a_node_that_did_not_report_and_cannot_reach_the_niceness_is_said(tmp_path, unequal_nodes, caplog, monkeypatch):
    # As if the node had joined after the survey: the run's niceness is the driver's.
    driver = os.getpriority(os.PRIO_PROCESS, 0)
    monkeypatch.setattr(RayExecutor, "_survey", lambda self: Conditions(driver))
    slow = f"[python, {BOTS / 'slow.py'}, '0.02']"
    config = load_config(marked_tournament(tmp_path, {name: slow for name in RANDOM}, rounds=2))
    executor = RayExecutor(config, config.output / "logs")
    with caplog.at_level(logging.WARNING, logger="arena"):
        run_tournament(config, executor=executor)
    worker = next(p for p in executor.placements.values() if p.node_id != unequal_nodes["head"])
    assert {r["played_on"]["nice"] for r in records(config.output) if r["played_on"]["node_id"] == worker.node_id} \
        == {NODE_NICE}
    said = [r.getMessage() for r in caplog.records if worker.where in r.getMessage()]
    assert said == [f"bots run at niceness {NODE_NICE} on {worker.where}, not {driver} as on the others (it did not "
                    "report before the first game, and its Ray workers cannot go lower): start Ray there with "
                    f"`RAY_worker_niceness={driver} ray start ...`"], said
    assert wait_until_gone(str(tmp_path)) == []


def test_a_node_slower_than_four_fifths_of_the_drivers_machine_is_said(tmp_path, unequal_nodes, caplog, monkeypatch):
    # This machine's figure as if it were far faster than its nodes (a million times theirs).
    monkeypatch.setattr(ray_executor, "benchmark", lambda game, seconds: 1e12)
    config = load_config(marked_tournament(tmp_path, RANDOM, extra="ray: {calibrate: true}\n"))
    with caplog.at_level(logging.WARNING, logger="arena"):
        conditions = RayExecutor(config)._survey()
    assert [conditions.measured(node) for node in conditions.speeds] == [0.01, 0.01]  # the least a record holds
    said = [r.getMessage() for r in caplog.records if "benchmark" in r.getMessage()]
    assert len(said) == 2 and all(line.endswith(" runs the benchmark at 0.01 the speed of this machine: its bots do "
                                                "less in the same time (ray.time_scaling: speed gives its games a "
                                                "longer clock)") for line in said), said


def test_a_node_the_survey_did_not_measure_measures_itself_and_its_games_deadline_follows(tmp_path, unequal_nodes,
                                                                                           monkeypatch):
    # As if both nodes had joined after the survey, which found this machine a million times faster.
    monkeypatch.setattr(RayExecutor, "_survey", lambda self: Conditions(15, reference=1e12, scaling=True))
    config = load_config(marked_tournament(tmp_path, RANDOM, extra="ray: {calibrate: true, time_scaling: speed}\n"))
    executor = RayExecutor(config, config.output / "logs")
    run_tournament(config, executor=executor)
    games = records(config.output)
    assert {(r["played_on"]["speed"], r["time_scale"]) for r in games} == {(0.01, 100.0)}
    assert {r["time_control"]["initial_ms"] for r in games} == {3_000_000}  # 30 s, 100 times
    assert executor.game_deadline >= game_deadline_s(scaled(config, 100.0)) > game_deadline_s(config)
    assert wait_until_gone(str(tmp_path)) == []
