"""The Ray executor on a local Ray (``ray.init(num_cpus=2)``, started once for
this module): the same games and standings as the local executor, a killed
actor, a crash forfeit, Ctrl-C of the driver, bots shipped with
``working_dir``, and the one-line error without Ray."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import needs
from arena.results.live_feed import read_live_games
from arena.run.config import ConfigError, load_config
from arena.run.ray_executor import LOCAL_RAY
from arena.formats.schedule import make_schedule
from arena.run.tournament import run_tournament
from builders import BOTS, RANDOM_SCRIPT, ROOT, arena, assert_one_line_error, league_file, records
from raytest import MARK, QUIET, RANDOM, marked, marked_tournament, niceness_watch, played, ranking, ray_runtime, wait_until_gone


@pytest.fixture(scope="module")
def local_ray():
    def start(ray):
        ray.init(num_cpus=2, **LOCAL_RAY, **QUIET)
        return ray.shutdown

    with ray_runtime(start) as ray:
        yield ray


def test_same_games_moves_and_standings_as_the_local_executor(tmp_path, local_ray):
    configs = {e: load_config(marked_tournament(tmp_path, RANDOM, rounds=2, executor=e)) for e in ("local", "ray")}
    niceness, look_at_bots = niceness_watch(str(tmp_path))
    summaries = {e: run_tournament(config, on_record=look_at_bots) for e, config in configs.items()}
    games = {e: records(config.output) for e, config in configs.items()}
    ids = [spec.game_id for spec in make_schedule(configs["ray"].competition)]
    assert sorted(r["game_id"] for r in games["ray"]) == sorted(ids)  # every game, each once
    assert played(games["ray"]) == played(games["local"])
    assert ranking(summaries["ray"].records) == ranking(summaries["local"].records)
    # Each actor kept its bots from game to game: one log per bot and actor
    # (beside the pre-flight's, from this machine).
    logs = [p for p in (configs["ray"].output / "logs").glob("*/ray*.log")]
    assert 0 < len(logs) <= 2 * len(RANDOM)
    # A local Ray as the executor starts it: bots at the driver's priority, as locally, not at Ray's niceness 15.
    assert niceness == {os.getpriority(os.PRIO_PROCESS, 0)}
    assert wait_until_gone(str(tmp_path)) == []


def test_actors_publish_their_games_in_progress_for_the_live_view(tmp_path, local_ray, monkeypatch):
    """The moves reach the driver as messages, and the driver writes the live
    files: a node that does not see the results directory shows its games too."""
    from arena.results.live_feed import LiveFeed

    slow = f"[python, {BOTS / 'slow_random.py'}, '0.03']"
    config = load_config(marked_tournament(tmp_path, {"a": slow, "b": slow}))
    seen: dict[str, int] = {}
    done = threading.Event()
    published: set[tuple[str, int]] = set()  # (game, moves) written by this process, the driver
    shown: set[tuple[str, int]] = set()
    publish = LiveFeed.publish

    def recorded_publish(feed, data):
        if data is not None:
            game = json.loads(data)
            published.add((game["id"], len(game["moves"])))
        publish(feed, data)

    monkeypatch.setattr(LiveFeed, "publish", recorded_publish)

    def watch() -> None:
        while not done.is_set():
            for game in read_live_games(config.output):
                seen[game.game_id] = max(seen.get(game.game_id, 0), len(game.moves))
                shown.add((game.game_id, len(game.moves)))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        summary = run_tournament(config)
    finally:
        done.set()
        watcher.join()
    assert summary.played == 4
    assert max(seen.values()) >= 3, seen  # boards moving on the actors, not just games starting
    assert set(seen) <= {r.game_id for r in summary.records}
    assert shown <= published  # every board shown came through the driver
    assert list((config.output / "live").iterdir()) == []  # each file gone with its game
    assert wait_until_gone(str(tmp_path)) == []


def test_a_killed_actor_loses_only_its_game_and_takes_its_bots(tmp_path, local_ray):
    from arena.run.ray_executor import RayExecutor

    # Bots that fork a child: a SIGKILL'ed actor runs no handler, yet its bots' children must die too.
    slow = f"[python, {BOTS / 'slow_forker.py'}, '0.02']"
    config = load_config(marked_tournament(tmp_path, {"a": slow, "b": slow}, rounds=4))
    executor = RayExecutor(config, config.output / "logs")
    victim: dict[str, object] = {}

    def kill_one(record, summary):
        if victim:
            return
        number, placement = sorted(executor.placements.items())[0]
        time.sleep(1)  # the actor's guardian looks at its bots four times a second
        sessions = {pid for pid in marked(str(tmp_path)) if _parent(pid) == placement.pid}
        bots = [pid for pid in marked(str(tmp_path)) if _session(pid) in sessions]
        assert len(bots) > len(sessions) > 0, "the actor has no bots with children to lose"
        os.kill(placement.pid, signal.SIGKILL)
        victim.update(number=number, alive=_alive_after(str(tmp_path), bots, 10.0))

    summary = run_tournament(config, executor=executor, on_record=kill_one)
    assert executor.lost == 1
    ids = [r["game_id"] for r in records(config.output)]
    assert sorted(ids) == sorted(spec.game_id for spec in make_schedule(config.competition))  # once each, none lost
    assert summary.played == len(ids)
    assert not any(r.reason == "crash" for r in summary.records)  # the lost game was replayed, not forfeited
    assert victim["alive"] == []  # its bots died with it, while the run went on
    assert wait_until_gone(str(tmp_path)) == []


def test_an_actor_stopped_by_its_bot_is_killed_and_its_game_played_again(tmp_path, local_ray):
    from arena.run.ray_executor import RayExecutor

    flag = tmp_path / "stopped"  # the first bot process to stop its actor leaves this
    bots = {"hostile": f"[python, {BOTS / 'stop_worker.py'}, '{tmp_path}']", "steady": "python -m bots.random_bot"}
    config = load_config(marked_tournament(tmp_path, bots))
    executor = RayExecutor(config, config.output / "logs", game_deadline=5)
    summary = run_tournament(config, executor=executor)
    assert flag.exists() and executor.lost == 1
    assert sorted(r["game_id"] for r in records(config.output)) == sorted(s.game_id for s in make_schedule(config.competition))
    assert all(r.forfeit_by is None for r in summary.records)
    assert wait_until_gone(str(tmp_path)) == []


def _alive_after(mark: str, pids: list[int], timeout: float) -> list[int]:
    end = time.monotonic() + timeout
    while (alive := sorted(set(pids) & set(marked(mark)))) and time.monotonic() < end:
        time.sleep(0.05)
    return alive


def _parent(pid: int) -> int:
    return _stat_field(pid, 1)


def _session(pid: int) -> int:
    return _stat_field(pid, 3)


def _stat_field(pid: int, index: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[index])
    except OSError:
        return 0


def test_a_bot_crash_is_a_crash_forfeit_as_locally(tmp_path, local_ray):
    bots = {"crasher": f"python {BOTS / 'crash_midgame.py'}", "steady": "python -m bots.random_bot"}
    configs = {e: load_config(marked_tournament(tmp_path, bots, executor=e)) for e in ("local", "ray")}
    records = {e: {r.game_id: r for r in run_tournament(c).records} for e, c in configs.items()}
    crashes = [r for r in records["ray"].values() if r.reason == "crash"]
    assert crashes and all(r.players[r.forfeit_by] == "crasher" for r in crashes)
    assert all("exited with code 3" in r.detail for r in crashes)
    assert {i: (r.reason, r.detail) for i, r in records["ray"].items()} == {
        i: (r.reason, r.detail) for i, r in records["local"].items()
    }


def test_an_actor_that_cannot_make_a_bots_scratch_directory_stops_the_run_as_locally(tmp_path, local_ray):
    from arena.results.store import StoreError

    config = load_config(marked_tournament(tmp_path, RANDOM))

    def block_the_actors(summary):  # after the pre-flight, before the first game
        (config.output / "scratch").mkdir()
        for number in range(1, 5):
            (config.output / "scratch" / f"b.ray{number}").write_text("in the way")

    with pytest.raises(StoreError, match=r"^cannot make the scratch directory '.*/scratch/b\.ray\d': File exists$"):
        run_tournament(config, on_start=block_the_actors)
    assert all(r["forfeit_by"] is None for r in records(config.output))  # no bot is charged with the arena's disk


def test_ctrl_c_of_the_driver_leaves_no_bot_process(tmp_path, local_ray):
    bots = {name: f"[python, {BOTS / 'slow_forker.py'}, '0.05']" for name in ("a", "b")}
    path = marked_tournament(tmp_path, bots, rounds=20)
    address = local_ray.get_runtime_context().gcs_address
    driver = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(path), "--ray-address", address],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    games = tmp_path / "out-ray" / "games.jsonl"
    try:
        end = time.monotonic() + 60
        while not (games.exists() and games.read_text().count("\n") >= 1) and time.monotonic() < end:
            assert driver.poll() is None, driver.communicate()
            time.sleep(0.1)
        found = marked(str(tmp_path))
        assert len(found) >= 4, found  # two actors, each with two bots and their children
        driver.send_signal(signal.SIGINT)
        _, stderr = driver.communicate(timeout=60)
    finally:
        driver.kill()
    assert driver.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1].startswith("error: interrupted; "), stderr
    assert wait_until_gone(str(tmp_path)) == []
    kept = games.read_text().splitlines()
    assert 1 <= len(kept) < 80 and len({json.loads(line)["game_id"] for line in kept}) == len(kept), kept


def test_bots_shipped_with_working_dir_run_from_the_copy(tmp_path, local_ray):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "where_bot.py").write_text(
        "import os, sys\nprint('cwd', os.getcwd(), file=sys.stderr, flush=True)\n"
        f"sys.argv[0] = {str(RANDOM_SCRIPT)!r}\n"
        f"exec(open(sys.argv[0]).read())\n"
    )
    bots = {"a": "python where_bot.py", "b": "python where_bot.py"}
    text = marked_tournament(tmp_path, bots, extra="ray: {working_dir: shipped}\n").read_text()
    path = tmp_path / "shipped.yaml"
    path.write_text(text.replace(f"cwd: {ROOT}", "cwd: shipped"))
    config = load_config(path)
    # Ray ships a directory for a whole driver only: a driver of its own, as a user runs it.
    address = local_ray.get_runtime_context().gcs_address
    result = subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(path), "--ray-address", address],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    games = records(config.output)
    assert len(games) == 4 and not any(r["forfeit_by"] for r in games)
    # The actors' logs: the pre-flight's (``a/preflight.log``) ran on this machine, in the original.
    # A bot started by a game writes its start-up to that game's log.
    actors = [*(config.output / "logs").glob("*/ray*.log"), *(config.output / "logs").glob("*/games/*.log")]
    seen = {line.split(" ", 1)[1] for log in actors for line in log.read_text().splitlines() if line.startswith("cwd ")}
    assert seen and str(shipped) not in seen  # not the driver's directory: Ray's copy of it
    assert all(Path(where, "where_bot.py").read_text() == (shipped / "where_bot.py").read_text() for where in seen)


def test_without_ray_the_run_stops_before_any_game_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails as if it were not installed
    config = load_config(marked_tournament(tmp_path, RANDOM))
    with pytest.raises(ConfigError, match=r"ray\.yaml: executor: the ray executor needs the Python package 'ray': pip install"):
        run_tournament(config)
    assert not config.output.exists()


def test_the_command_line_says_in_one_line_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    path = marked_tournament(tmp_path, RANDOM, executor="local")
    assert_one_line_error(arena("run", path, "--executor", "ray"), "needs the Python package 'ray'", "pip install")
    assert_one_line_error(arena("run", path, "--ray-address", "auto"), "needs the Python package 'ray'")
    assert_one_line_error(arena("run", path, "--executor", "dask"), "--executor: unknown value 'dask'; use one of: local, ray")
    assert not (tmp_path / "out-local").exists()


def test_on_each_node_python_is_that_nodes_and_shipped_bots_run_from_the_copy(tmp_path, monkeypatch):
    from arena.run.ray_executor import on_this_node

    shipped, copy = tmp_path / "bots", tmp_path / "unpacked"
    (shipped / "deep").mkdir(parents=True)
    path = marked_tournament(tmp_path, {"py": "python x.py", "bin": f"{shipped / 'deep' / 'bot'}", "there": "python y.py"},
                            executor="ray")
    text = path.read_text().replace(f"cwd: {ROOT}, env: {{{MARK}: '{tmp_path}'}}}}\n  - {{name: bin",
                                    f"cwd: {shipped / 'deep'}}}\n  - {{name: bin")
    (shipped / "deep" / "bot").write_text("#!/bin/sh\n")
    (shipped / "deep" / "bot").chmod(0o755)
    path.write_text(text)
    config = load_config(path)
    moved = {bot.name: bot for bot in on_this_node(config, sys.executable, shipped, copy).bots}
    assert moved["py"].cwd == copy / "deep" and moved["py"].cmd == (sys.executable, "x.py")
    assert moved["bin"].cmd == (str(copy / "deep" / "bot"),) and moved["bin"].cwd == ROOT
    assert moved["there"] == config.bot("there")  # outside the shipped directory: as it is
    driver_python = sys.executable
    monkeypatch.setattr(sys, "executable", "/node/venv/bin/python")  # as on a node where Python lives elsewhere
    there = on_this_node(config, driver_python, None, copy)
    assert there.bot("py").cmd == ("/node/venv/bin/python", "x.py") and there.bot("py").cwd == shipped / "deep"
    assert there.bot("bin") == config.bot("bin")  # nothing shipped: the same paths on every node


def test_an_unreachable_cluster_is_one_line_not_a_wait_for_ever(tmp_path):
    needs.module("ray", "pip install -e '.[ray]'")
    path = marked_tournament(tmp_path, RANDOM)
    # A process of its own: this one may be connected to the module's Ray already.
    result = subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(path), "--ray-address", "127.0.0.1:1"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1].endswith(
        "ray.yaml: ray.address: cannot connect to the Ray cluster at '127.0.0.1:1': [Errno 111] Connection refused"
    )


def test_an_sprt_on_ray_gives_the_verdict_and_llr_a_local_run_gives_and_drops_the_pairs_queued(tmp_path, local_ray,
                                                                                               monkeypatch):
    """``arena match --sprt ... --ray-address``: game pairs are the unit, one
    queued on each actor behind the one it plays; the verdict is the first
    crossing in schedule order, so a local run of the same games (same seed,
    deterministic bots) gives the same verdict, LLR and pairs, and reading
    either directory back does too; at the verdict the pairs still queued
    are dropped.  The Ray driver is a process of its own."""
    from test_cli import arena

    monkeypatch.chdir(ROOT)  # the bots' commands are the repository's
    slow = f"python {BOTS / 'slow.py'} 0.02"  # the first legal move, a little slowly: games last a moment
    command = ["match", "python -m bots.greedy", slow, "--sprt", "elo0=0,elo1=100", "--openings", "plies=4,count=50",
               "--seed", "5", "--tc", "30+0.1"]
    address = local_ray.get_runtime_context().gcs_address
    on_ray = subprocess.run([sys.executable, "-m", "arena.cli", *command, "-o", str(tmp_path / "ray"), "-j", "2",
                             "--ray-address", address], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert on_ray.returncode == 0, on_ray.stderr
    local = arena(*command, "-o", tmp_path / "local")
    assert local.exit_code == 0, local.err

    def verdict(out: str) -> str:
        line = next(line for line in out.splitlines() if line.startswith("  SPRT "))
        return line.split(" (+")[0]  # the pairs after the verdict differ: how many were in flight

    assert verdict(on_ray.stdout) == verdict(local.out)
    assert "H1 accepted after" in verdict(local.out)
    tests = {where: json.loads(arena("standings", tmp_path / where, "-f", "json").out)["sprt"] for where in ("ray", "local")}
    for key in ("llr", "pairs", "verdict", "nelo", "nelo_margin", "model"):
        assert tests["ray"][key] == tests["local"][key], key
    pairs = tests["local"]["pairs"]
    games = {where: played([r for r in map(json.loads, (tmp_path / where / "games.jsonl").read_text().splitlines())
                            if r["pair"] < pairs]) for where in ("ray", "local")}
    assert games["ray"] == games["local"] and len(games["local"]) == 2 * pairs  # the pairs the test counted, alike
    dropped = re.search(r"^  (\d+) games? queued on the Ray actors (were|was) dropped unplayed at the verdict$",
                        on_ray.stdout, re.M)
    assert dropped and int(dropped[1]) >= 1, on_ray.stdout
    ray_games = len((tmp_path / "ray" / "games.jsonl").read_text().splitlines())
    # Past the verdict, at most the pair in play and the one queued behind it on each of the 2 actors (the
    # queued one may start before a loaded driver reads the verdict): never the rest of the 50 pairs.
    assert ray_games <= 2 * pairs + 2 * 2 * 2


def test_an_sprt_with_one_actor_frozen_stops_within_two_pairs_an_actor_of_the_local_runs_count(tmp_path, local_ray):
    """An actor frozen (SIGSTOP of it and its bots: a process swapped out,
    a machine paused) near an SPRT's verdict holds a pair it needs: the
    other actor plays on, but no further than two pairs an actor past the
    first pair not yet complete, and the frozen pair is played again at the
    game deadline.  Same verdict, LLR and pairs as a local run; stored, at
    most the local run's pairs and 2 x concurrency pairs more."""
    from arena.base.processes import descendants
    from arena.run.ray_executor import RayExecutor

    bots = {"greedy": "python -m bots.greedy", "slow": f"[python, {BOTS / 'slow.py'}, '0.02']"}
    extra = "sprt: {elo0: 0, elo1: 100}\nopenings: {plies: 4, count: 50}\n"
    configs = {e: load_config(marked_tournament(tmp_path, bots, rounds=50, executor=e, extra=extra))
               for e in ("local", "ray")}
    local = run_tournament(configs["local"])
    deadline = 5.0
    executor = RayExecutor(configs["ray"], configs["ray"].output / "logs", game_deadline=deadline)
    frozen: dict = {}

    def freeze_its_actor(record, summary):
        # Near the verdict, where the most games could be played past it.
        if not frozen and record.pair >= local.sprt.pairs - 3:
            actor = record.played_on["actor"]  # (busy: its pair's other game, or the pair queued behind)
            frozen.update(actor=actor, at=time.monotonic(), pids=descendants([executor.placements[actor].pid]))
            for pid in frozen["pids"]:
                os.kill(pid, signal.SIGSTOP)

    try:
        on_ray = run_tournament(configs["ray"], executor=executor, on_record=freeze_its_actor)
        ended = time.monotonic()
    finally:
        for pid in frozen.get("pids", []):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
    assert executor.lost >= 1
    assert local.sprt is not None and on_ray.sprt is not None and local.sprt.decided
    for key in ("verdict", "llr", "pairs"):
        assert getattr(on_ray.sprt, key) == getattr(local.sprt, key), key
    stored = {e: len(records(config.output)) for e, config in configs.items()}
    pairs, concurrency = local.sprt.pairs, 2
    print(f"verdict after {pairs} pairs; games stored: {stored['local']} locally, {stored['ray']} on Ray with an actor "
          f"frozen (the run ended {ended - frozen['at']:.1f} s after the freeze)")  # (the figures in docs/cluster.md)
    assert stored["ray"] <= 2 * (pairs + 2 * concurrency)
    assert wait_until_gone(str(tmp_path)) == []


def test_a_match_without_ray_installed_is_one_line(monkeypatch):
    from test_cli import arena, assert_one_line_error

    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(sys.modules, "ray", None)
    assert_one_line_error(arena("match", "python -m bots.greedy", "python -m bots.random_bot", "--executor", "ray"),
                          "needs the Python package 'ray'")
    assert_one_line_error(arena("match", "python -m bots.greedy", "python -m bots.random_bot", "--executor", "dask"),
                          "--executor: unknown value 'dask'; use one of: local, ray")


def test_a_ray_head_passes_the_arenas_look_at_its_port(local_ray):
    from arena.run.ray_head import check_head

    check_head(local_ray.get_runtime_context().gcs_address)  # a GCS answers as gRPC does: no error


def test_every_record_names_its_node_and_actor_and_the_run_says_its_cluster(tmp_path, local_ray):
    """The start line and tournament.json name the cluster's nodes; each
    record the node (host, Ray node id) and actor that played it; the
    standings by node count them."""
    import csv
    import io
    import platform
    import socket

    ran = arena("run", marked_tournament(tmp_path, RANDOM), "-j", "2")
    assert ran.exit_code == 0, ran.err
    host, node = socket.gethostname(), local_ray.get_runtime_context().get_node_id()
    assert f"cluster: 1 node, 2 CPUs ({host} 2); Python {platform.python_version()}, Ray {local_ray.__version__}" \
        in ran.err.splitlines()
    out = tmp_path / "out-ray"
    assert json.loads((out / "tournament.json").read_text())["cluster"] == {
        "python": platform.python_version(), "ray": local_ray.__version__,
        "nodes": [{"host": host, "node_id": node, "cpus": 2.0}]}
    games = records(out)
    assert {(r["played_on"]["host"], r["played_on"]["node_id"]) for r in games} == {(host, node)}
    actors = {r["played_on"]["actor"] for r in games}
    assert actors and actors <= {1, 2, 3, 4}  # (two, and spares for actors lost)
    table = arena("standings", out, "--table", "nodes", "-f", "csv")
    assert table.exit_code == 0, table.err
    rows = list(csv.DictReader(io.StringIO(table.out)))
    assert [(r["node"], r["node id"], r["workers"], r["games"]) for r in rows] == [(host, node, str(len(actors)), str(len(games)))]
    assert float(rows[0]["ms/move"]) > 0


def test_a_match_on_ray_says_its_cluster_and_keeps_it(tmp_path, local_ray, monkeypatch):
    import platform
    import socket

    monkeypatch.chdir(ROOT)
    out = tmp_path / "match"
    ran = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "--games", "2", "--executor", "ray",
                "-j", "1", "--tc", "5+0.1", "--output", out)
    assert ran.exit_code == 0, ran.err
    line = f"cluster: 1 node, 2 CPUs ({socket.gethostname()} 2); Python {platform.python_version()}, Ray {local_ray.__version__}"
    assert line in ran.err.splitlines()
    assert json.loads((out / "tournament.json").read_text())["cluster"]["nodes"][0]["host"] == socket.gethostname()


def test_a_swiss_connects_once_and_plays_the_games_the_local_executor_plays(tmp_path, local_ray):
    """The rounds of a Swiss share one connection (LocalExecutor.session's
    Ray counterpart), closed at the end, and pair and play as locally.  The
    run is a driver of its own, on this module's Ray: Ray does not go back to
    the state it was in before a first ray.init, so only a fresh process can
    count its connections (and forks of this one follow it)."""
    body = "format: swiss\nrounds: 3\nconcurrency: 2\n"
    bots = [f"bot{i}" for i in range(1, 6)]
    local = league_file(tmp_path / "local", bots, body, name="field", concurrency=None, seed=5)
    address = local_ray.get_runtime_context().gcs_address
    on_ray = league_file(tmp_path / "ray", bots, body + f"executor: ray\nray: {{address: '{address}'}}\n",
                         name="field", concurrency=None, seed=5)
    ran = arena("run", local)
    assert ran.exit_code == 0, ran.err
    script = (
        "import json, sys, ray\n"
        "from arena.run.config import load_config\n"
        "from arena.run.tournament import run_tournament\n"
        "connects, init = [], ray.init\n"
        "ray.init = lambda *a, **k: connects.append(1) or init(*a, **k)\n"
        "summary = run_tournament(load_config(sys.argv[1]))\n"
        "print(json.dumps({'played': summary.played, 'connects': len(connects), 'after': ray.is_initialized()}))\n"
    )
    # (the token of this module's Ray is in os.environ while it runs: see raytest.ray_runtime)
    result = subprocess.run([sys.executable, "-c", script, str(on_ray)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    # One connection for the three rounds, closed at the end.
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"played": 12, "connects": 1, "after": False}
    meta = {side: json.loads((tmp_path / side / "out" / "tournament.json").read_text()) for side in ("local", "ray")}
    assert meta["ray"]["pairings"] == meta["local"]["pairings"]
    assert played(records(tmp_path / "ray" / "out")) == played(records(tmp_path / "local" / "out"))
