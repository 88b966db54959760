"""The Ray executor on a two-node cluster (``ray.cluster_utils.Cluster``, both
nodes on this machine, started once for this module): actors on both nodes
play the same games as the local executor, and losing a node mid-run loses
no game."""

from __future__ import annotations

import pytest

from arena.run.config import load_config
from arena.run.ray_executor import RayExecutor
from arena.formats.schedule import make_schedule
from arena.run.tournament import run_tournament
from builders import BOTS, records
from raytest import QUIET, RANDOM, marked_tournament, played, ranking, ray_runtime, wait_until_gone


@pytest.fixture(scope="module")
def two_nodes():
    nodes = {}

    def start(ray):
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        nodes["cluster"] = cluster
        nodes["worker"] = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, **QUIET)

        def stop():
            ray.shutdown()
            cluster.shutdown()

        return stop

    with ray_runtime(start) as ray:
        nodes["ray"] = ray
        yield nodes


def test_actors_on_two_nodes_play_the_same_games_as_the_local_executor(tmp_path, two_nodes):
    # One slower bot, so that the games last until the second node's actor is up.
    bots = {**RANDOM, "a": f"[python, {BOTS / 'slow.py'}, '0.04']"}
    configs = {e: load_config(marked_tournament(tmp_path, bots, rounds=2, executor=e)) for e in ("local", "ray")}
    executor = RayExecutor(configs["ray"], configs["ray"].output / "logs")
    summaries = {"local": run_tournament(configs["local"]), "ray": run_tournament(configs["ray"], executor=executor)}
    assert len({placement.node_id for placement in executor.placements.values()}) == 2
    games = {e: records(config.output) for e, config in configs.items()}
    assert sorted(r["game_id"] for r in games["ray"]) == sorted(s.game_id for s in make_schedule(configs["ray"].competition))
    assert played(games["ray"]) == played(games["local"])
    assert ranking(summaries["ray"].records, bots) == ranking(summaries["local"].records, bots)
    assert wait_until_gone(str(tmp_path)) == []


def test_losing_a_node_mid_run_loses_no_game(tmp_path, two_nodes):
    slow = f"[python, {BOTS / 'slow.py'}, '0.02']"
    config = load_config(marked_tournament(tmp_path, {"a": slow, "b": slow}, rounds=3))
    executor = RayExecutor(config, config.output / "logs")
    worker_node_id = two_nodes["worker"].node_id

    def lose_the_worker_node(record, summary):
        # (while games are left for its actor to be playing: a node lost after the last one is lost by no game)
        if ("worker" in two_nodes and summary.played <= summary.total - 4
                and any(p.node_id == worker_node_id for p in executor.placements.values())):
            two_nodes["cluster"].remove_node(two_nodes.pop("worker"), allow_graceful=False)

    summary = run_tournament(config, executor=executor, on_record=lose_the_worker_node)
    assert "worker" not in two_nodes, "the worker node never had an actor"
    assert executor.lost >= 1
    ids = [r["game_id"] for r in records(config.output)]
    assert sorted(ids) == sorted(s.game_id for s in make_schedule(config.competition))
    assert not any(r.reason == "crash" for r in summary.records)
    assert wait_until_gone(str(tmp_path)) == []
