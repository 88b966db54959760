"""What a node reports before the first game, the niceness the bots then
start at, and a calibrated cluster's clock scaling (arena/run/node_conditions.py;
tests/test_ray_conditions.py plays them on a cluster)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.game.clock import TimeControl
from arena.game.records import GameRecord
from arena.results.meta import MetaCluster, MetaError, MetaNode, TournamentMeta
from arena.run.config import load_config
from arena.run.node_conditions import Conditions, benchmark, common_niceness, scaled, time_scale
from builders import ROOT, tournament_file
from test_records import record

HERE = str(Path(__file__).resolve().parent.parent)


def test_the_bots_niceness_is_the_drivers_unless_a_node_cannot_go_that_low():
    assert common_niceness(0, []) == 0
    assert common_niceness(0, [0, 0]) == 0
    assert common_niceness(0, [0, 15, 5]) == 15
    assert common_niceness(10, [0, 4]) == 10  # a node may always raise its niceness


def test_a_node_reports_its_niceness_and_the_lowest_it_can_take_and_keeps_its_own():
    # A Ray worker of a plain `ray start`, at 5 here: it may lower it with CAP_SYS_NICE (root), or a nice rlimit.
    status = Path("/proc/self/status").read_text()
    cap_sys_nice = int(next(l.split()[1] for l in status.splitlines() if l.startswith("CapEff")), 16) >> 23 & 1
    may_lower = cap_sys_nice or resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20
    code = ("import os; from arena.run.node_conditions import report_here; r = report_here(0, None); "
            "print(r.nice, r.floor, r.speed, os.getpriority(os.PRIO_PROCESS, 0))")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=HERE,
                         preexec_fn=lambda: os.setpriority(os.PRIO_PROCESS, 0, 5),
                         env={**os.environ, "PYTHONPATH": HERE})
    assert ran.stdout.split() == ["5", "0" if may_lower else "5", "None", "5"]


def test_the_benchmark_measures_plies_per_second():
    assert 100 < benchmark("oxono", seconds=0.05) < 100_000_000


def test_a_slower_nodes_clocks_are_scaled_by_its_slowness(tmp_path):
    # The driver's machine 50,000 plies/s, the node 40,000: 1.25 times the time.
    assert time_scale(50_000, 40_000) == 1.25
    assert time_scale(30_000, 70_000) == 0.43  # a faster node: 0.428571... to 2 decimals
    assert (time_scale(1e9, 1.0), time_scale(1.0, 1e9)) == (100.0, 0.01)  # bounded: a record holds it
    config = replace(load_config(tournament_file(tmp_path, ["a", "b"], time_control="10+0.1")),
                     time_odds={"b": TimeControl(per_move_ms=500)})  # bot b's own clock
    longer = scaled(config, 1.25)
    assert longer.time_control == TimeControl(12_500, 125)
    assert longer.time_odds == {"b": TimeControl(per_move_ms=625)}
    assert scaled(config, 0.43).time_control == TimeControl(4_300, 43)
    # Every scaled clock is one a clock may hold: a millisecond at least, some 24 days at most.
    tiny = replace(config, time_control=TimeControl(per_move_ms=30), time_odds={"b": TimeControl(40, 0)})
    assert (scaled(tiny, 0.01).time_control, scaled(tiny, 0.01).time_odds) == (
        TimeControl(per_move_ms=1), {"b": TimeControl(1, 0)})  # 0.3 and 0.4 ms, kept at 1
    huge = replace(config, time_control=TimeControl(2**31 - 1000, 0))
    assert scaled(huge, 100.0).time_control == TimeControl(2**31 - 1, 0)


def test_each_actor_takes_its_nodes_speed_and_scale_from_the_survey():
    conditions = Conditions(0, reference=50_000.0, speeds={"n1": 40_000.0}, scaling=True)
    assert conditions.speed("n1", "oxono") == (0.8, 1.25)
    assert conditions.measured("n1") == 0.8 and conditions.measured("n2") is None
    assert replace(conditions, scaling=False).speed("n1", "oxono") == (0.8, None)
    assert Conditions(0).speed("n1", "oxono") == (None, None)  # uncalibrated: nothing measured
    joined, scale = replace(conditions, reference=benchmark("oxono", 0.05)).speed("n2", "oxono")  # measured there
    assert joined is not None and scale is not None and abs(joined * scale - 1) < 0.05


def test_a_records_clock_scale_and_nodes_speed_round_trip_and_bad_ones_are_refused():
    game = record()
    game.time_scale, game.played_on = 1.25, {"host": "node-a", "nice": 15, "speed": 0.8}
    line = game.to_line()
    assert line.endswith(b',"time_scale":1.25}\n')
    back = GameRecord.from_line(line)
    assert (back.time_scale, back.played_on) == (1.25, game.played_on)
    for bad in (0, -1.0, 1e9, True):
        data = {**json.loads(line), "time_scale": bad}
        with pytest.raises(ValueError, match="time_scale"):
            GameRecord.from_json(data)
        data = {**json.loads(line), "played_on": {"host": "node-a", "speed": bad}}
        with pytest.raises(ValueError, match="played_on"):
            GameRecord.from_json(data)


def test_a_nodes_speed_in_the_meta_round_trips_and_a_bad_one_is_refused():
    node = MetaNode("node-a", "a" * 56, 4.0, 0.8)
    meta = {"name": "m", "game": "oxono", "cluster": MetaCluster("3.12.3", "2.60.0", (node,)).to_json()}
    assert TournamentMeta.from_json(meta).cluster.nodes == (node,)
    assert "speed" not in MetaNode("node-a", "a" * 56, 4.0).to_json()
    for speed, told in (("fast", "Expected `float | null`, got `str`"), (True, "Expected `float | null`, got `bool`"),
                        (0, "Expected `float` > 0.0"), (1000, "Expected `float` <= 100.0")):
        meta["cluster"]["nodes"][0]["speed"] = speed
        with pytest.raises(MetaError) as refused:
            TournamentMeta.from_json(meta)
        assert str(refused.value) == f"cluster.nodes[0].speed: {told}"


def test_the_runs_first_line_gives_each_nodes_speed_as_the_docs_show_it():
    nodes = (MetaNode("head", "a" * 56, 4.0, 1.0), MetaNode("worker-1", "b" * 56, 4.0, 0.8))
    line = MetaCluster("3.12.3", "2.60.0", nodes).line()
    assert line == "cluster: 2 nodes, 8 CPUs (head 4 at speed 1.00, worker-1 4 at speed 0.80); Python 3.12.3, Ray 2.60.0"
    assert f"`{line.split('; Python')[0]}; ...`" in " ".join((ROOT / "docs" / "cluster.md").read_text().split())
