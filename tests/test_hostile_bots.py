"""Hostile bots in whole tournaments: each is stopped or denied, the test says
which, every other game stays intact, games.jsonl stays strict JSON, and no
process is left behind.

Each tournament pits the hostile bot against two well-behaved random bots,
whose games against each other must come out as if nothing happened."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.bot import quota
from arena.bot.cgroups import cgroup_mode
from arena.bot.quota import mounts_mode
from arena.run.config import load_config
from arena.results.live_feed import LIVE_DIR, read_live_games
from arena.run.executor import LocalExecutor
from arena.run.preflight import StartupFailed
from arena.formats.schedule import make_schedule
from arena.run.spec_queue import WorkerStalled
from arena.run.tournament import run_tournament
import needs
from builders import ROOT, hostile_tournament, until
from conftest import running_with

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process confinement"),
]


def strict_records(out: Path) -> list[dict]:
    """games.jsonl read by a strict JSON parser (no NaN, no Infinity)."""

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    return [json.loads(line, parse_constant=refuse) for line in (out / "games.jsonl").read_text().splitlines()]


def play(tmp_path: Path, hostile: list[str], on_start: Callable[[object], None] | None = None, **kwargs: str) -> list[dict]:
    """Run the tournament; check it is complete and the games without the
    hostile bot are intact; return the hostile bot's games."""
    config = load_config(hostile_tournament(tmp_path, hostile, **kwargs))
    summary = run_tournament(config, on_start=on_start)
    assert summary.played == summary.total == 12
    records = strict_records(config.output)
    assert sorted(r["game_id"] for r in records) == sorted({r["game_id"] for r in records}) and len(records) == 12
    others = [r for r in records if "hostile" not in r["players"].values()]
    assert len(others) == 4 and all(r["forfeit_by"] is None and r["reason"] in ("alignment", "exhausted") for r in others)
    return [r for r in records if "hostile" in r["players"].values()]


def hostile_color(record: dict) -> str:
    return next(color for color, name in record["players"].items() if name == "hostile")


def hostile_infos(record: dict) -> list[dict]:
    color = hostile_color(record)
    seat = list(record["players"]).index(color)
    return [m["info"] for m in record["moves"][seat::2] if m.get("info")]


def gone(marker: str, within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while running_with(marker):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


# -- input bounds ----------------------------------------------------------------


def test_info_nested_900_deep_is_dropped_with_a_note_and_the_games_go_on(tmp_path):
    games = play(tmp_path, ["deep_nesting.py", "info", "900"])
    assert all(r["forfeit_by"] is None for r in games)
    infos = [info for r in games for info in hostile_infos(r)]
    assert infos and all(info == {"dropped": "'info' is nested more than 16 levels deep"} for info in infos)


def test_a_line_nested_too_deep_to_parse_is_a_protocol_error(tmp_path):
    games = play(tmp_path, ["deep_nesting.py", "info", "200000"])
    for record in games:
        assert record["forfeit_by"] == hostile_color(record)
        assert record["reason"] == "protocol_error"
        assert record["detail"].startswith("JSON nested too deeply to read: '{\"type\":\"move\"")
        assert len(record["detail"]) < 200


def test_a_deep_ready_is_accepted_when_readable_and_refused_when_not(tmp_path):
    readable = play(tmp_path / "900", ["deep_nesting.py", "ready", "900"])
    assert all(r["forfeit_by"] is None for r in readable)
    # by default the pre-flight stops the run; a competition may let the bot forfeit instead
    with pytest.raises(StartupFailed, match="bot 'hostile' did not start.*JSON nested too deeply to read"):
        run_tournament(load_config(hostile_tournament(tmp_path / "stop", ["deep_nesting.py", "ready", "200000"])))
    unreadable = play(tmp_path / "200000", ["deep_nesting.py", "ready", "200000"], top="startup_failures: forfeit\n")
    for record in unreadable:
        assert record["reason"] == "startup_failure"
        assert "bad answer to 'hello': JSON nested too deeply to read" in record["detail"]


def test_nan_and_infinity_in_info_are_dropped_and_games_jsonl_stays_strict(tmp_path):
    games = play(tmp_path, ["nan_info.py"])  # play() parses games.jsonl strictly
    assert all(r["forfeit_by"] is None for r in games)
    infos = [info for r in games for info in hostile_infos(r)]
    assert infos and all(info == {"dropped": "'info' holds NaN or Infinity, which JSON does not allow"} for info in infos)


def test_an_info_of_almost_one_mib_is_dropped_with_its_size(tmp_path):
    games = play(tmp_path, ["huge_info.py"])
    assert all(r["forfeit_by"] is None for r in games)
    infos = [info for r in games for info in hostile_infos(r)]
    assert infos and all(info["dropped"].endswith("bytes, over the limit of 4096") for info in infos)
    assert (tmp_path / "out" / "games.jsonl").stat().st_size < 200_000


# -- every descendant dies ----------------------------------------------------------


@pytest.mark.parametrize("how", ["setsid", "setpgid", "daemon"])
def test_grandchildren_that_leave_the_process_group_die_with_the_bot(tmp_path, how):
    marker = f"escapee-{how}-{tmp_path.name}"
    games = play(tmp_path, ["escaping_children.py", how, marker])
    assert all(r["forfeit_by"] is None for r in games)  # escaping is allowed; outliving is not
    assert gone(marker), f"left running: {running_with(marker)}"


@pytest.mark.parametrize(
    "signum, sandbox",
    [(signal.SIGINT, "none"), (signal.SIGTERM, "none"), (signal.SIGKILL, "none"), (signal.SIGKILL, "bwrap")],
    ids=["ctrl-c", "sigterm", "kill-9", "kill-9-sandboxed"],
)
def test_escaped_grandchildren_die_when_the_arena_is_stopped(tmp_path, signum, sandbox):
    if sandbox == "bwrap":
        needs.bwrap()
    marker = f"escapee-stop-{tmp_path.name}"
    path = hostile_tournament(tmp_path, ["escaping_children.py", "daemon", marker], top=f"sandbox: {sandbox}\nrounds: 20\n")
    games = tmp_path / "out" / "games.jsonl"
    # Once games are under way: the workers' bots play, not the pre-flight's.
    stop_arena_when(path, signum, lambda: running_with(marker) and games.exists() and b"\n" in games.read_bytes())
    assert gone(marker, 10), f"left running: {running_with(marker)}"


def stop_arena_when(path: Path, signum: int, ready: Callable[[], object]) -> None:
    """Run ``arena run path`` and send it ``signum`` once ``ready()`` holds."""
    arena = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path)], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert arena.poll() is None, arena.communicate()[1]
            assert time.monotonic() < deadline, "the escapee never started"
            time.sleep(0.05)
        os.kill(arena.pid, signum)
        arena.wait(30)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()


def test_a_kill_9_during_the_pre_flight_leaves_nothing_behind(tmp_path):
    # A bot that, before it answers hello, leaves a grandchild in a session of
    # its own: no parent-death signal reaches that one.  The pre-flight's own
    # process, which the arena's death still reaches, must kill it.
    marker = f"preflight-escapee-{tmp_path.name}"
    bot = tmp_path / "escapes_at_start.py"
    bot.write_text(
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        devnull = os.open(os.devnull, os.O_RDWR)\n"
        "        for fd in (0, 1, 2):\n"
        "            os.dup2(devnull, fd)\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(1000)', {marker!r}])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "time.sleep(60)  # never answers hello\n"
    )
    path = tmp_path / "t.yaml"
    path.write_text(
        # Neither bot answers: one that ended would have the arena sweep up
        # what bots left behind, the escapee too, before the kill.
        f"game: oxono\ntime_control: 10+0.1\nstartup_timeout: 30\noutput: out\nbots:\n"
        f"  - {{name: slow, cmd: {json.dumps([sys.executable, str(bot)])}}}\n"
        f"  - {{name: slower, cmd: {json.dumps([sys.executable, str(bot)])}}}\n"
    )
    stop_arena_when(path, signal.SIGKILL, lambda: running_with(marker))
    assert gone(marker, 10), f"left running: {running_with(marker)}"
    assert not (tmp_path / "out" / "games.jsonl").exists() or not (tmp_path / "out" / "games.jsonl").read_bytes()


# -- resource limits -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["cgroup", "rlimits"])
def test_a_bot_over_its_memory_limit_crashes_saying_so(tmp_path, monkeypatch, mode):
    if mode == "rlimits":
        monkeypatch.setenv("TOTEM_ARENA_CGROUPS", "off")  # the workers inherit it
    elif cgroup_mode() == "rlimits":
        pytest.skip("no writable cgroup on this machine")
    games = play(tmp_path, ["memory_hog.py"], bot="    limits: {memory_mb: 200}\n")
    for record in games:
        assert record["forfeit_by"] == hostile_color(record)
        assert record["reason"] == "crash"
        if mode == "cgroup":
            assert "the bot was killed by SIGKILL: it hit its memory limit (200 MB)" in record["detail"]
        else:  # RLIMIT_DATA: malloc fails, Python raises MemoryError
            assert "it ran out of memory (its limit is 200 MB)" in record["detail"]


def test_a_fork_bomb_is_held_to_the_process_limit(tmp_path):
    if cgroup_mode() == "rlimits" and os.geteuid() == 0:
        pytest.skip("without a pids cgroup the process limit is RLIMIT_NPROC, which root ignores")
    marker_before = set(running_with("fork_bomb.py"))
    games = play(tmp_path, ["fork_bomb.py"], top="limits: {processes: 32}\n")
    for record in games:
        assert record["forfeit_by"] is None
        first = hostile_infos(record)[0]
        assert first["forked"] < 32 and first["error"] == "Resource temporarily unavailable"
    assert gone("fork_bomb.py") or set(running_with("fork_bomb.py")) <= marker_before


def test_a_file_past_the_size_limit_cannot_be_written(tmp_path):
    games = play(tmp_path, ["big_file.py"], bot="    limits: {file_mb: 1}\n")
    for record in games:
        assert record["forfeit_by"] is None
        first = hostile_infos(record)[0]
        assert first == {"written": 1 << 20, "error": "File too large"}


# -- the disk and /dev/shm ------------------------------------------------------------

QUOTA = "    limits: {scratch_mb: 2, scratch_files: 50}\n"


@pytest.mark.parametrize("what, amount", [("bytes", "8"), ("files", "200")])
@pytest.mark.parametrize("mode", ["mounted", "watched", "sandboxed", "sandboxed-watched"])
def test_a_bot_over_its_scratch_quota_forfeits_saying_so_and_leaves_nothing_on_disk(tmp_path, monkeypatch, mode, what, amount):
    if mode.startswith("sandboxed"):
        needs.bwrap()
    if mode.endswith("watched"):
        monkeypatch.setenv("TOTEM_ARENA_MOUNTS", "off")  # the workers inherit it
    elif mounts_mode() is None:
        pytest.skip("neither root nor user namespaces: the scratch quota is measured (the 'watched' cases)")
    sandbox = "bwrap" if mode.startswith("sandboxed") else "none"
    games = play(tmp_path, ["fill_scratch.py", what, amount], top=f"sandbox: {sandbox}\n", bot=QUOTA)
    for record in games:
        assert record["forfeit_by"] == hostile_color(record)
        assert record["reason"] == "crash"
        if mode.endswith("watched"):  # measured on disk: killed once over
            assert record["detail"].startswith(
                "the bot was killed by SIGKILL: it went over its scratch quota (scratch_mb: 2, scratch_files: 50): "
                f"its scratch directory held more than {'2 MB' if what == 'bytes' else '50 files'}"
            ), record["detail"]
        else:  # a tmpfs of the quota: the write fails, the bot dies of it
            assert record["detail"].startswith(
                "the bot exited with code 1: it ran out of space in its scratch directory "
                "(scratch_mb: 2, scratch_files: 50) or its /dev/shm (memory_mb: 1024); stderr ends with: "
            ), record["detail"]
            assert "No space left on device" in record["detail"]
    # A tmpfs never reached the disk; a watched directory is emptied when its bot is killed.
    assert [p for p in (tmp_path / "out" / "scratch").rglob("*") if not p.is_dir()] == []


def test_1500_nested_folders_in_a_scratch_on_disk_are_over_the_quota_or_cleaned_by_the_next_run(tmp_path, monkeypatch):
    monkeypatch.setenv("TOTEM_ARENA_MOUNTS", "off")  # the scratch directories on disk, measured

    def emptied(out: Path) -> bool:
        return all(not any(bot.iterdir()) for bot in (out / "scratch").iterdir())

    nested = ["fill_scratch.py", "nested", "1500"]
    for record in play(tmp_path / "quota", nested, bot=QUOTA):  # folders count as files do
        assert record["forfeit_by"] == hostile_color(record) and record["reason"] == "crash"
        assert "its scratch directory held more than 50 files" in record["detail"], record["detail"]
    assert emptied(tmp_path / "quota" / "out")
    # Within its quota the folders stay until the next run, which empties them and plays on.
    play(tmp_path / "free", nested, bot="    limits: {scratch_files: null}\n")
    assert not emptied(tmp_path / "free" / "out")
    again = run_tournament(load_config(tmp_path / "free" / "t.yaml"))
    assert again.played == 0 and again.resumed == 12 and emptied(tmp_path / "free" / "out")
    quota.empty_directory(tmp_path)  # what pytest's own (recursive) clean-up could not remove


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_what_a_bot_writes_to_dev_shm_goes_with_it(tmp_path, sandbox):
    if sandbox == "bwrap":
        needs.bwrap()
    elif mounts_mode() is None:
        pytest.skip("neither root nor user namespaces: /dev/shm is the machine's (docs/security.md)")
    marker = f"totem-shm-{os.getpid()}-{tmp_path.name}"
    games = play(tmp_path, ["shm_writer.py", marker], top=f"sandbox: {sandbox}\n", bot="    limits: {memory_mb: 100}\n")
    for record in games:
        assert record["forfeit_by"] == hostile_color(record) and record["reason"] == "crash"
        assert record["detail"].endswith("stderr ends with: wrote 50 MiB to /dev/shm"), record["detail"]
    assert [name for name in os.listdir("/dev/shm") if name.startswith(marker)] == []


# -- the arena never waits forever ----------------------------------------------------


def test_a_worker_stopped_by_its_bot_is_killed_and_its_game_played_again(tmp_path):
    flag = tmp_path / "stopped"
    config = load_config(hostile_tournament(tmp_path, ["stop_worker.py", str(tmp_path)]))
    summary = run_tournament(config, executor=LocalExecutor(config, concurrency=2, game_deadline=3))
    assert flag.exists()  # it did stop its worker
    assert summary.played == 12
    records = strict_records(config.output)
    assert len({r["game_id"] for r in records}) == 12
    assert all(r["forfeit_by"] is None for r in records), [(r["game_id"], r["reason"], r.get("detail")) for r in records if r["forfeit_by"]]


def test_a_game_that_stalls_twice_is_given_up_after_every_other_game(tmp_path):
    config = load_config(hostile_tournament(tmp_path, ["stop_worker.py", "always"]))
    schedule = make_schedule(config.competition)
    stalling = next(s for s in schedule if "hostile" in s.players)
    fine = next(s for s in schedule if "hostile" not in s.players)
    executor = LocalExecutor(config, concurrency=2, game_deadline=1.5, live_dir=tmp_path / LIVE_DIR)
    records = []
    with pytest.raises(WorkerStalled) as caught:
        for record in executor.run([stalling, fine]):
            records.append(record)
            shown = until(lambda: read_live_games(tmp_path), 5, "the stalled game's card")
            assert [g.game_id for g in shown] == [stalling.game_id]
    assert [r.game_id for r in records] == [fine.game_id]
    assert read_live_games(tmp_path) == []  # a killed worker's game is no longer shown in progress
    assert str(caught.value) == (
        f"no result for game {stalling.game_id}: its worker went silent for more than 2 s, twice "
        "(a bot may have stopped it); every other game is kept"
    )


# -- under the sandbox ----------------------------------------------------------------


def test_sandboxed_bot_cannot_append_to_games_jsonl(tmp_path):
    needs.bwrap()
    results = tmp_path / "out"
    games = play(tmp_path, ["forge_results.py"], top="sandbox: bwrap\n", bot=f"    options: {{results: '{results}'}}\n")
    for record in games:
        first = hostile_infos(record)[0]
        assert first["by_path"] == "Read-only file system"  # the results directory is an empty, read-only tmpfs
        assert first["by_fd"] == "no games.jsonl among its parent's files"  # its parent is the sandbox's init
    assert "forged" not in (results / "games.jsonl").read_text()


def test_sandboxed_bot_sees_no_other_environment_scratch_log_or_tournament_file(tmp_path):
    needs.bwrap()
    results = tmp_path / "out"

    def note(summary: object) -> None:  # once the run has emptied the old scratch directories
        (results / "scratch" / "a.w1").mkdir(parents=True, exist_ok=True)
        (results / "scratch" / "a.w1" / "note").write_text("SECRET-a-1234")

    games = play(tmp_path, ["snoop.py"], note, top="sandbox: bwrap\n", bot=f"    options: {{results: '{tmp_path}'}}\n")
    for record in games:
        assert hostile_infos(record)[0] == {"environ": [], "files": [], "results_visible": True}
    assert "SECRET-a-1234" not in (results / "games.jsonl").read_text()


def test_sandboxed_bot_cannot_signal_its_worker_or_its_opponent(tmp_path):
    needs.bwrap()
    games = play(tmp_path, ["signal_everyone.py"], top="sandbox: bwrap\n")
    for record in games:
        assert record["forfeit_by"] is None  # nobody crashed: the opponent was untouched
        for info in hostile_infos(record):
            assert info["seen"] == [1]  # only its sandbox's own init, which ignores signals from inside


def test_sandboxed_bot_has_no_network(tmp_path):
    needs.bwrap()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        games = play(tmp_path, ["network.py"], top="sandbox: bwrap\n", bot=f"    options: {{port: {port}}}\n")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected
    for record in games:
        assert hostile_infos(record)[0] == {"loopback": "Connection refused", "internet": "Network is unreachable"}
