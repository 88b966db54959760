"""The disk the results live on: a bot's scratch quota, a /dev/shm of its
own, the arena's own writes that fail (never a bot's forfeit), and old
scratch cleaned when a run starts.

The hostile bots in whole tournaments are in test_hostile_bots.py; here
are the pieces, and a real full disk: a small tmpfs in a mount namespace
of the test's own (as root, or through a user namespace)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.bot import quota
from arena.bot.limits import Limits
from arena.bot.player import BotPlayer
from arena.bot.process import ArenaWriteError, BotProcess
from arena.bot.sandbox import Confinement
from arena.game.clock import TimeControl
from arena.game.referee import play_game
from arena.results.store import ResultsStore, StoreError
from arena.run.config import load_config
from arena.run.executor import LocalExecutor
from arena.run.preflight import preflight
from arena.formats.schedule import make_schedule
from arena.run.tournament import run_tournament
import needs
from builders import BOTS, ROOT, arena, assert_one_line_error, bot_player, hostile_tournament, records, spec

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts and namespaces"),
]

def random_player(tmp_path: Path, **kwargs: object) -> BotPlayer:
    return bot_player("r", (sys.executable, "-m", "bots.random_bot"), **kwargs)


# -- the arena's own writes ------------------------------------------------------------


def test_a_log_or_scratch_directory_the_arena_cannot_make_is_its_error_not_a_forfeit(tmp_path):
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("")
    for kwargs, words in (
        ({"log_path": in_the_way / "r.log"}, f"cannot open log file '{in_the_way}/r.log': "),
        ({"scratch_dir": in_the_way / "r.w1"}, f"cannot make the scratch directory '{in_the_way}/r.w1': "),
    ):
        player = random_player(tmp_path, **kwargs)
        with pytest.raises(ArenaWriteError) as caught:  # not a Forfeit: no bot is charged with it
            player.ensure_started()
        assert str(caught.value).startswith(words) and str(caught.value).endswith(("File exists", "Not a directory"))
        player.close()


@pytest.mark.usefixtures("in_repo_root")
@pytest.mark.parametrize("command", ["check", "play"])
def test_arena_check_and_play_without_room_for_a_scratch_directory_say_so_in_one_line(tmp_path, monkeypatch, command):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "a-file"))  # where their bots' scratch directories go
    args = ["check", "python -m bots.random_bot"] if command == "check" else ["play", "--bot", "python -m bots.random_bot"]
    assert_one_line_error(arena(*args), f"error: cannot make the scratch directory '{tmp_path}/a-file': Not a directory")


def test_a_worker_or_the_pre_flight_that_cannot_write_a_log_stops_the_run_in_one_line(tmp_path):
    config = load_config(hostile_tournament(tmp_path, ["echo_bot.py"]))
    (tmp_path / "a-file").write_text("")
    logs = tmp_path / "a-file" / "logs"
    with pytest.raises(ArenaWriteError, match="^cannot open log file .*: (File exists|Not a directory)$"):
        preflight(config, ["a", "b"], logs)
    with pytest.raises(ArenaWriteError, match="^cannot open log file .*: (File exists|Not a directory)$"):
        list(LocalExecutor(config, logs, concurrency=2).run(make_schedule(config.competition)))


def test_a_worker_that_cannot_make_a_bots_scratch_directory_stops_the_run_and_no_bot_forfeits(tmp_path):
    config = load_config(hostile_tournament(tmp_path, ["echo_bot.py"]))

    def block_the_workers(summary: object) -> None:  # after the pre-flight, before the first game
        (config.output / "scratch").mkdir()
        for number in range(1, 5):
            (config.output / "scratch" / f"b.w{number}").write_text("in the way")

    with pytest.raises(StoreError) as caught:
        run_tournament(config, on_start=block_the_workers)
    assert re.fullmatch(rf"cannot make the scratch directory '{config.output}/scratch/b\.w\d': File exists", str(caught.value))
    assert all(r["forfeit_by"] is None for r in records(config.output))  # every game kept is a real one


# -- the scratch quota, measured ---------------------------------------------------------


def test_measuring_stops_past_the_quota_and_counts_what_a_bot_hid(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    for number in range(30):
        (tmp_path / "d" / "e" / f"f{number}").write_bytes(b"x" * 5000)
    (tmp_path / "link").symlink_to("/usr")  # counted, never followed
    usage = quota.measure(tmp_path)
    assert usage.files == 33 and usage.bytes >= 30 * 5000
    assert quota.measure(tmp_path, max_files=5).files == 6  # one past the limit is enough to know
    os.chmod(tmp_path / "d", 0)  # a bot's way to hide its files from a walk (root reads it all the same)
    assert quota.measure(tmp_path).files == 33


def nest(directory: Path, depth: int, name: str = "d") -> int:
    """``depth`` folders, each in the last (made through descriptors: no path
    can name the deepest); returns a descriptor on the deepest."""
    fd = os.open(directory, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    return fd


def test_a_scratch_of_folders_nested_past_any_path_is_measured_emptied_and_removed(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bottom = nest(scratch, 3000)  # 6 KB of path: past PATH_MAX
    for number in range(20):
        os.close(os.open(f"hidden-{number}", os.O_CREAT | os.O_WRONLY, dir_fd=bottom))
    os.close(bottom)
    os.chmod(scratch / "d", 0)  # the bot's modes do not stop the arena
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep").write_text("mine")
    (scratch / "link").symlink_to(outside)
    assert quota.measure(scratch).files == 3000 + 20 + 1  # the files at the bottom are counted too
    assert quota.measure(scratch, max_files=50).files == 51
    quota.empty_directory(scratch)
    assert list(scratch.iterdir()) == [] and (outside / "keep").read_text() == "mine"
    bottom = nest(scratch, 1500)
    os.close(bottom)
    quota.remove_directory(scratch)
    assert not scratch.exists()


def test_a_bots_temporary_scratch_of_1500_nested_folders_is_removed_when_it_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("TOTEM_ARENA_MOUNTS", "off")  # on disk: what the arena removes itself
    make = ("import os\nfd = os.open(os.environ['HOME'], os.O_RDONLY)\nfor _ in range(1500):\n"
            "    os.mkdir('d', dir_fd=fd); fd = os.open('d', os.O_RDONLY, dir_fd=fd)\n"
            "print(os.environ['HOME'], flush=True)\ninput()\n")
    bot = BotProcess([sys.executable, "-c", make], cwd=tmp_path)  # the pre-flight's way: a temporary scratch
    with bot:
        home = Path(bot.read_line(time.monotonic() + 30))
        assert (home / "d" / "d").is_dir()
    assert not home.exists()


def test_a_bot_over_its_quota_between_games_forfeits_the_next_one(tmp_path, monkeypatch):
    monkeypatch.setenv("TOTEM_ARENA_MOUNTS", "off")
    cmd = (sys.executable, str(BOTS / "fill_scratch.py"), "bytes", "4", "game_over")
    scratch = tmp_path / "scratch" / "hog"
    hog = bot_player("hog", cmd, limits=Limits(scratch_mb=2), scratch_dir=scratch)
    other = random_player(tmp_path)
    try:
        game = spec(1, ("hog", "r"))
        first = play_game(game, [hog, other], TimeControl(per_move_ms=1000))
        assert first.forfeit_by is None
        time.sleep(1)  # it writes 4 MB once the game is over; the watch looks every 0.2 s
        second = play_game(game, [hog, other], TimeControl(per_move_ms=1000))
        assert (second.name_of(second.forfeit_by), second.reason) == ("hog", "crash")
        assert second.detail == ("the bot was killed by SIGKILL: it went over its scratch quota (scratch_mb: 2, "
                                 "scratch_files: 10000): its scratch directory held more than 2 MB")
        assert list(scratch.iterdir()) == []  # emptied: the next process starts clean
    finally:
        hog.close()
        other.close()


AS_A_USER = """
import json, sys, time
from pathlib import Path
from arena.bot import quota
from arena.bot.limits import Limits
from arena.bot.process import BotProcess, ProcessExited
from arena.bot.sandbox import Confinement
bot = "import os; print(os.getuid(), flush=True); open(os.environ['HOME'] + '/big', 'wb').write(bytes(3 << 20))"
confinement = Confinement(limits=Limits(scratch_mb=2), sandbox=sys.argv[2], scratch_dir=Path(sys.argv[1]))
with BotProcess([sys.executable, "-c", bot], cwd="/", confinement=confinement) as process:
    uid = process.read_line(time.monotonic() + 30)
    try:
        process.read_line(time.monotonic() + 30)
    except ProcessExited as exc:
        print(json.dumps({"mode": quota.mounts_mode(), "uid": uid, "ended": str(exc)}))
"""


#: A Python the user may run, and start again from itself (as a bot is).
PYTHON_FOR_A_USER = "import subprocess, sys; assert sys.version_info >= (3, 11); subprocess.run([sys.executable, '-c', ''], check=True)"


def as_nobody(sandbox: str) -> dict:
    """Run AS_A_USER as an ordinary user: ourselves, or nobody when we are root."""
    prefix: list[str] = []
    python = sys.executable
    if os.geteuid() == 0:
        prefix = [needs.program("setpriv", "apt-get install util-linux"), "--reuid=65534", "--regid=65534", "--clear-groups"]
        usable = [p for p in (sys.executable, "/usr/bin/python3") if subprocess.run(
            [*prefix, p, "-c", PYTHON_FOR_A_USER], capture_output=True).returncode == 0]
        if not usable:
            pytest.skip("no Python 3.11+ that the user nobody may run")
        python = usable[0]
    with tempfile.TemporaryDirectory(prefix="totem-user-") as directory:  # pytest's own is root's alone
        os.chmod(directory, 0o777)
        scratch = Path(directory) / "scratch"
        done = subprocess.run([*prefix, python, "-c", AS_A_USER, str(scratch), sandbox], capture_output=True,
                              text=True, timeout=60, env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        seen["on disk"] = sorted(os.listdir(scratch))
    return seen


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_an_ordinary_user_gets_the_tmpfs_quota_through_a_user_namespace(sandbox):
    if sandbox == "bwrap":
        needs.bwrap()
    seen = as_nobody(sandbox)
    if seen["mode"] is None:
        pytest.skip("user namespaces are not allowed here: the quota is measured (docs/security.md)")
    assert seen["mode"] == "user namespace"
    assert seen["uid"] == ("65534" if os.geteuid() == 0 or sandbox == "bwrap" else str(os.geteuid()))  # its own uid
    assert "it ran out of space in its scratch directory (scratch_mb: 2, scratch_files: 10000)" in seen["ended"]
    assert seen["on disk"] == []  # its tmpfs, not the disk


# -- /dev/shm ------------------------------------------------------------------------------

WRITE_SHM = """
import json, os
written, error = 0, None
try:
    with open("/dev/shm/" + os.environ["NAME"], "wb") as handle:
        for _ in range(40):
            handle.write(b"\\1" * (1 << 20))
            written += 1
except OSError as exc:
    error = exc.strerror
print(json.dumps({"mb": written, "error": error}), flush=True)
input()
"""


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_dev_shm_is_the_bots_own_as_big_as_its_memory_limit_and_goes_with_it(tmp_path, monkeypatch, sandbox):
    if sandbox == "bwrap":
        needs.bwrap()
    elif quota.mounts_mode() is None:
        pytest.skip("neither root nor user namespaces: /dev/shm is the machine's (docs/security.md)")
    monkeypatch.setenv("TOTEM_ARENA_CGROUPS", "off")  # only the tmpfs bounds it, not a memory cgroup
    name = f"totem-test-{os.getpid()}-{tmp_path.name}"
    confinement = Confinement(limits=Limits(memory_mb=20), sandbox=sandbox, scratch_dir=tmp_path / "scratch")
    with BotProcess([sys.executable, "-c", WRITE_SHM], cwd=tmp_path, env={"NAME": name}, confinement=confinement) as bot:
        seen = json.loads(bot.read_line(time.monotonic() + 30))
        assert not os.path.exists(f"/dev/shm/{name}")  # not even while it runs
    assert seen["error"] == "No space left on device" and seen["mb"] == 20


# -- old scratch, and a real full disk ---------------------------------------------------------


def test_a_run_starts_with_the_scratch_directories_of_the_last_one_empty(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep").write_text("mine")
    scratch = tmp_path / "out" / "scratch"
    (scratch / "hog.w1" / "deep").mkdir(parents=True)
    (scratch / "hog.w1" / "deep" / "big").write_bytes(b"x" * 100_000)
    (scratch / "hog.w2").symlink_to(outside)  # a bot without the sandbox may leave a link: removed, not followed
    os.chmod(scratch / "hog.w1" / "deep", 0o500)
    store = ResultsStore(tmp_path / "out")
    with store:
        store.open_for_run("oxono")
        assert list(scratch.iterdir()) == []
    assert (outside / "keep").read_text() == "mine"


def small_disk_runs(tmp_path: Path, script: str) -> None:
    """Run ``script`` (sh) with DISK a tmpfs of 8 MB and 300 inodes, in a
    mount namespace of its own: as root, or as root of a user namespace."""
    needs.program("unshare", "apt-get install util-linux")
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = f"mount -t tmpfs -o size=8m,nr_inodes=300 none {disk} || exit 97\n"
    as_root = [] if os.geteuid() == 0 else ["--map-root-user"]
    done = subprocess.run(["unshare", "--mount", *as_root, "sh", "-c", mount + script.replace("DISK", str(disk))],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode == 97 or (done.returncode != 0 and "unshare" in done.stderr):
        pytest.skip(f"no mount namespace for the test here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr


def test_a_bot_that_fills_the_disk_stops_the_run_in_one_line_naming_it_and_the_next_run_plays_on(tmp_path):
    def tournament(name: str, limits: str) -> Path:
        path = hostile_tournament(tmp_path / name, ["fill_scratch.py", "disk"], bot=f"    limits: {limits}\n")
        path.write_text(path.read_text().replace("output: out", f"output: {tmp_path / 'disk' / 'out'}"))
        return path

    # Its quota lifted and measured, the bot fills the disk before anything can stop it; then
    # with its quota in a tmpfs of its own (the default where the arena can mount), it cannot.
    first = tournament("first", "{scratch_mb: null, scratch_files: null}")
    second = tournament("second", "{scratch_mb: 2, scratch_files: 50}")
    arena = f"{sys.executable} -m arena.cli run"
    small_disk_runs(tmp_path, f"""
        TOTEM_ARENA_MOUNTS=off {arena} {first} > {tmp_path}/first.out 2> {tmp_path}/first.err; echo $? > {tmp_path}/first.rc
        cp DISK/out/games.jsonl {tmp_path}/first.jsonl
        {arena} {second} > {tmp_path}/second.out 2> {tmp_path}/second.err; echo $? > {tmp_path}/second.rc
        cp DISK/out/games.jsonl {tmp_path}/second.jsonl
        find DISK/out/scratch -type f | wc -l > {tmp_path}/second.scratch
    """)
    err = (tmp_path / "first.err").read_text()
    assert (tmp_path / "first.rc").read_text().strip() == "2", err
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: cannot ") and "No space left on device; the disk of " in line, line
    assert "is full; the most " in line and ": scratch/hostile.w" in line, line  # the bot that used the space
    first_records = [json.loads(r) for r in (tmp_path / "first.jsonl").read_text().splitlines()]
    innocent = [r for r in first_records if r["forfeit_by"] and r["players"][r["forfeit_by"]] != "hostile"]
    assert innocent == []  # the arena's full disk is charged to no bot
    if first_records:
        assert f"{len(first_records)} finished games are kept in" in line

    # The next run empties the old scratch at its start and plays every game left.
    assert (tmp_path / "second.rc").read_text().strip() == "0", (tmp_path / "second.err").read_text()
    second_lines = (tmp_path / "second.jsonl").read_text().splitlines()
    assert (tmp_path / "first.jsonl").read_text().splitlines() == second_lines[:len(first_records)]
    records = [json.loads(r) for r in second_lines]
    assert len({r["game_id"] for r in records}) == len(records) == 12
    for record in records[len(first_records):]:
        names = record["players"]
        if "hostile" in names.values():
            assert names[record["forfeit_by"]] == "hostile" and record["reason"] == "crash"
            assert "ran out of space in its scratch directory (scratch_mb: 2, scratch_files: 50)" in record["detail"]
        else:
            assert record["forfeit_by"] is None
    assert (tmp_path / "second.scratch").read_text().strip() == "0"
