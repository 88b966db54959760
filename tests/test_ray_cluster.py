"""The Ray executor on a two-node cluster (``ray.cluster_utils.Cluster``, both
nodes on this machine, started once for this module): actors on both nodes
play the same games as the local executor, losing a node mid-run loses no
game, and a bot that does not start on a node plays on the other (or, on
neither, stops the run).  Each node's PATH names it
(``/nonexistent/arena-node-head``, ``...-worker``): the bot ``picky_node.py``
refuses to start where it finds a word of its choice there."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime

import pytest

from arena.run.config import load_config
from arena.run.ray_executor import RayExecutor
from arena.formats.schedule import make_schedule
from arena.run.tournament import run_tournament
from arena.run.remote_tokens import make_token
from builders import BOTS, ROOT, arena, records
from raytest import QUIET, RANDOM, marked_tournament, played, ranking, ray_runtime, wait_until_gone


@pytest.fixture(scope="module")
def two_nodes():
    nodes = {}

    def start(ray):
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                                "env_vars": _marked_path("head")})
        nodes["cluster"] = cluster
        nodes["worker"] = cluster.add_node(num_cpus=1, env_vars=_marked_path("worker"))
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, **QUIET)

        def stop():
            ray.shutdown()
            cluster.shutdown()

        return stop

    with ray_runtime(start) as ray:
        nodes["ray"] = ray
        yield nodes


def _marked_path(node: str) -> dict[str, str]:
    """A node's environment: its name on its PATH, which its actors, and so their bots, inherit."""
    return {"PATH": f"/nonexistent/arena-node-{node}{os.pathsep}{os.environ['PATH']}"}


def picky(word: str) -> str:
    """The command of a bot that does not start on a node whose PATH holds ``word``."""
    return f"[python, {BOTS / 'picky_node.py'}, {word}]"


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


def test_a_bot_that_does_not_start_on_one_node_plays_its_games_on_the_other(tmp_path, two_nodes, caplog):
    slow = f"[python, {BOTS / 'slow.py'}, '0.01']"
    bots = {"a": picky("arena-node-worker"), "b": slow, "c": slow}
    config = load_config(marked_tournament(tmp_path, bots, rounds=2))
    executor = RayExecutor(config, config.output / "logs")
    with caplog.at_level(logging.WARNING, logger="arena"):
        summary = run_tournament(config, executor=executor)
    games = records(config.output)
    assert sorted(r["game_id"] for r in games) == sorted(s.game_id for s in make_schedule(config.competition))
    assert not any(record.forfeit_by for record in summary.records)
    head, worker = two_nodes["cluster"].head_node.node_id, two_nodes["worker"].node_id
    assert {r["played_on"]["node_id"] for r in games if "a" in r["players"].values()} == {head}
    on_worker = next(p for p in executor.placements.values() if p.node_id == worker)
    said = [r.getMessage() for r in caplog.records if "did not start" in r.getMessage()]
    assert said == [f"bot 'a' did not start on {on_worker.where}: bad answer to 'hello': the bot exited with code 1; "
                    "stderr ends with: picky_node: not on a node marked arena-node-worker; its games go to the other "
                    "nodes"], said
    assert wait_until_gone(str(tmp_path)) == []


def test_a_remote_bot_plays_on_the_drivers_node_where_its_listener_is(tmp_path, two_nodes, caplog):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Slower bots, so that the other node's actor is up while games are left.
    slow = f"[python, {BOTS / 'slow.py'}, '0.02']"
    file = marked_tournament(tmp_path, {"a": slow, "b": slow, "c": slow, "r": "unused"}, rounds=1,
                             extra=f"remote_listen: 127.0.0.1:{port}\nremote_wait_s: 30\n")
    file.write_text(re.sub(r"  - \{name: r, .*\n", "  - {name: r, remote: true}\n", file.read_text()))
    token = make_token(tmp_path / "ray.tokens", "r")
    bridge = subprocess.Popen([sys.executable, "-m", "arena", "connect", f"ws://127.0.0.1:{port}/", "--token", token,
                               "--connections", "2", "--", sys.executable, "-m", "bots.random_bot"],
                              cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        config = load_config(file)
        with caplog.at_level(logging.WARNING, logger="arena"):
            summary = run_tournament(config)  # (its executor made by the run: given the listener's hub)
    finally:
        bridge.kill()
        bridge.wait()
    games = records(config.output)
    assert sorted(r["game_id"] for r in games) == sorted(s.game_id for s in make_schedule(config.competition))
    assert not any(record.forfeit_by for record in summary.records), [r.detail for r in summary.records if r.forfeit_by]
    home = two_nodes["ray"].get_runtime_context().get_node_id()
    assert {r["played_on"]["node_id"] for r in games if "r" in r["players"].values()} == {home}
    assert {r["played_on"]["node_id"] for r in games} > {home}  # the other node played the others' games
    said = [m for r in caplog.records if "did not start" in (m := r.getMessage())]
    assert len(said) == 1 and re.fullmatch(r"bot 'r' did not start on .+: a remote bot plays on the driver's node, "
                                           r"where the run listens for it; its games go to the other nodes", said[0]), said
    assert wait_until_gone(str(tmp_path)) == []


def test_a_bot_that_starts_on_no_node_stops_the_run_with_one_line(tmp_path, two_nodes):
    # It starts on this machine (the driver's pre-flight), on neither node.
    file = marked_tournament(tmp_path, {"a": picky("arena-node-"), "b": RANDOM["b"]}, rounds=2)
    ran = arena("run", file)
    assert ran.exit_code == 2 and ran.out == "", ran.err
    *said, error = ran.err.splitlines()
    # The first node's failure as it came (the other actor still starting), then one error naming both, the detail once.
    warned = [line for line in said if line.startswith("warning: bot 'a' did not start on node ")]
    assert len(warned) <= 1 and warned == said[len(said) - len(warned):], ran.err
    nodes = [f"node {socket.gethostname()} ({node.node_id[:8]})" for node in (two_nodes["cluster"].head_node, two_nodes["worker"])]
    detail = "bad answer to 'hello': the bot exited with code 1; stderr ends with: picky_node: not on a node marked arena-node-"
    assert error in [f"error: bot 'a' did not start on any node of the Ray cluster (every finished game is kept): on {first} "
                     f"and {second}: {detail}" for first, second in (nodes, nodes[::-1])], error
    assert not (tmp_path / "out-ray" / "games.jsonl").exists() or records(tmp_path / "out-ray") == []
    assert wait_until_gone(str(tmp_path)) == []


def test_under_forfeit_a_bot_that_starts_on_no_node_forfeits_its_games_and_the_run_says_so(tmp_path, two_nodes, caplog):
    file = marked_tournament(tmp_path, {"a": picky("arena-node-"), "b": RANDOM["b"], "c": RANDOM["c"]},
                             extra="startup_failures: forfeit\n")
    config = load_config(file)
    with caplog.at_level(logging.WARNING, logger="arena"):
        summary = run_tournament(config)
    said = [r.getMessage() for r in caplog.records if "did not start on any node" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("bot 'a' did not start on any node of the Ray cluster (on node ")
    assert said[0].endswith("its games are forfeited (startup_failures: forfeit)")
    games = {record.game_id: record for record in summary.records}
    assert sorted(games) == sorted(s.game_id for s in make_schedule(config.competition))
    assert {(r.players.get(r.forfeit_by), r.reason) for r in games.values() if "a" in r.players.values()} == {
        ("a", "startup_failure")}  # (forfeit_by: a colour)
    assert not any(r.forfeit_by for r in games.values() if "a" not in r.players.values())
    assert wait_until_gone(str(tmp_path)) == []


def test_a_resumed_run_removes_the_live_files_an_ended_driver_left(tmp_path, two_nodes):
    """A driver that Ray ended (its head gone) or ``kill -9`` left its
    actors' live files: the next run removes them before its first game."""
    config = load_config(marked_tournament(tmp_path, RANDOM))
    live = config.output / "live"
    live.mkdir(parents=True)
    (live / "ray7.json").write_text("{}")  # (an actor's file: ray<N>.json)
    (live / "notes.txt").write_text("not a live file of Ray's")
    seen = []
    summary = run_tournament(config, on_record=lambda record, summary: seen.append(sorted(os.listdir(live))))
    assert summary.played == len(make_schedule(config.competition))
    assert seen and all("ray7.json" not in names for names in seen)
    assert os.listdir(live) == ["notes.txt"]
    assert wait_until_gone(str(tmp_path)) == []


class _PlayedThere(Exception):
    """The node that joined played a game: the test has seen what it waits for."""


@pytest.mark.parametrize("concurrency", [None, 3])  # (as many actors as the CPUs hold, or one waiting for a place)
def test_a_node_that_joins_mid_run_gets_an_actor_within_seconds(tmp_path, two_nodes, concurrency):
    slow = f"[python, {BOTS / 'slow.py'}, '0.15']"  # (games of about a second, more than the test waits for)
    config = load_config(marked_tournament(tmp_path, {"a": slow, "b": slow}, rounds=20, concurrency=concurrency))
    executor = RayExecutor(config, config.output / "logs")
    joined = {}

    def add_a_node_and_wait_for_its_game(record, summary):
        if not joined:
            joined["node"] = two_nodes["cluster"].add_node(num_cpus=1, env_vars=_marked_path("late"))
            joined["at"] = time.time()
        elif record.played_on and record.played_on["node_id"] == joined["node"].node_id:
            raise _PlayedThere

    try:
        with pytest.raises(_PlayedThere):
            run_tournament(config, executor=executor, on_record=add_a_node_and_wait_for_its_game)
    finally:
        if joined:
            two_nodes["cluster"].remove_node(joined["node"])
    on_it = [r for r in records(config.output) if r["played_on"]["node_id"] == joined["node"].node_id]
    began = min(datetime.fromisoformat(r["started_at"]).timestamp() for r in on_it) - joined["at"]
    print(f"the node that joined began its first game {began:.1f} s after it joined")  # (the figure in docs/cluster.md)
    assert began < 15
    assert wait_until_gone(str(tmp_path)) == []


def test_losing_a_node_mid_run_loses_no_game(tmp_path, two_nodes):
    slow = f"[python, {BOTS / 'slow.py'}, '0.02']"
    config = load_config(marked_tournament(tmp_path, {"a": slow, "b": slow}, rounds=8))
    executor = RayExecutor(config, config.output / "logs")
    worker_node_id = two_nodes["worker"].node_id

    def lose_the_worker_node(record, summary):
        # While its actor holds a game and half the games are left: its stream fails, or, when its records
        # had all reached the driver already, the next games sent to it do.  (A node lost idle, or after
        # the other actor took every game left, loses none, and the loss is never seen.)
        if ("worker" in two_nodes and summary.played <= summary.total // 2
                and worker_node_id in executor.busy_nodes()):
            two_nodes["cluster"].remove_node(two_nodes.pop("worker"), allow_graceful=False)

    summary = run_tournament(config, executor=executor, on_record=lose_the_worker_node)
    assert "worker" not in two_nodes, "the worker node never had an actor"
    assert executor.lost >= 1
    ids = [r["game_id"] for r in records(config.output)]
    assert sorted(ids) == sorted(s.game_id for s in make_schedule(config.competition))
    assert not any(r.reason == "crash" for r in summary.records)
    assert wait_until_gone(str(tmp_path)) == []


def test_a_frozen_nodes_game_is_played_elsewhere_within_its_deadline(tmp_path, two_nodes):
    from arena.base.processes import descendants

    slow = f"[python, {BOTS / 'slow.py'}, '0.03']"
    config = load_config(marked_tournament(tmp_path, {"a": slow, "b": slow}, rounds=3, concurrency=3))
    deadline = 5.0
    executor = RayExecutor(config, config.output / "logs", game_deadline=deadline)
    node = two_nodes["cluster"].add_node(num_cpus=1, env_vars=_marked_path("frozen"))
    two_nodes["cluster"].wait_for_nodes()
    frozen: dict = {}

    def freeze_it(record, summary):
        # The node as SIGSTOP leaves it (a machine swapping to death, a VM paused): its raylet, actor and bots.
        if not frozen and node.node_id in executor.busy_nodes():
            raylet = node.all_processes["raylet"][0].process.pid
            frozen.update(at=time.monotonic(), pids=descendants([raylet]))
            for pid in frozen["pids"]:
                os.kill(pid, signal.SIGSTOP)

    try:
        summary = run_tournament(config, executor=executor, on_record=freeze_it)
        ended = time.monotonic()
    finally:
        for pid in frozen.get("pids", []):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
        two_nodes["cluster"].remove_node(node, allow_graceful=False)
    assert frozen, "the node never had an actor"
    ids = [r["game_id"] for r in records(config.output)]
    assert sorted(ids) == sorted(s.game_id for s in make_schedule(config.competition))
    assert not any(r.forfeit_by for r in summary.records) and executor.lost >= 1
    print(f"the run ended {ended - frozen['at']:.1f} s after the node froze")  # (the figure in docs/cluster.md)
    assert ended - frozen["at"] < deadline + 15
    assert wait_until_gone(str(tmp_path)) == []
