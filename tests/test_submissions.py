"""A team's submission folder (``bots_from``) is hostile input: each attack
of the security hunt (issue 31) as it was run, and what holds now.  What the
arena reads of a folder is bounded and never outside it; a sandboxed
submission sees its folder and nothing of another team's; one bad
submission never stops the others."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

import arena.bot.version as version
import needs
from arena.bot import quota
from arena.bot.player import BotPlayer
from arena.bot.process import BotProcess
from arena.bot.sandbox import bwrap_command
from arena.bot.spec import BotConfig
from arena.bot.submission import SubmissionLimits
from arena.bot.version import Fingerprint, describe_change, fingerprint
from arena.check import check_one
from arena.run.config import ConfigError, check_programs, load_config
from arena.run.results_dir import RunPlan
from builders import RANDOM_SCRIPT, ROOT, arena, assert_one_line_error
#: Another team's bot in the repository's own course example.
COURSE_BOT = ROOT / "tournaments" / "course" / "submissions" / "team-bob" / "bot.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux file system and sandbox")


@pytest.fixture(autouse=True)
def _no_deep_tree_left(tmp_path: Path):
    """pytest's own clean-up of old temporary folders recurses: the deep ones go here."""
    yield
    quota.empty_directory(tmp_path)


def team(subs: Path, name: str, manifest: str = "cmd: python bot.py\n") -> Path:
    """A submission: a copy of the random bot and its manifest."""
    folder = subs / name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(RANDOM_SCRIPT, folder / "bot.py")
    (folder / "bot.yaml").write_text(manifest)
    return folder


def league(tmp_path: Path, extra: str = "startup_failures: forfeit\n") -> Path:
    path = tmp_path / "course.yaml"
    path.write_text("name: course\ngame: oxono\ntime_control: 10+0.1\nconcurrency: 2\nseed: 5\noutput: out\n"
                    f"bots_from: subs\n{extra}")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A stand-in for the organiser's home: an SSH key and a grade sheet."""
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY----- SECRET\n")
    (tmp_path / "home" / "grades.csv").write_text("team-ok,A\n")
    return tmp_path / "home"


def loaded_within(path: Path, seconds: float = 10.0):
    """The tournament file loaded in a thread: a load that hangs fails the test instead of hanging it."""
    done: dict = {}
    thread = threading.Thread(target=lambda: done.update(config=load_config(path)), daemon=True)
    began = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert "config" in done, f"loading the league took more than {seconds:g} s"
    return done["config"], time.monotonic() - began


# -- 1. a command names another directory ----------------------------------------------


def test_a_command_naming_files_outside_its_folder_is_refused_at_load_in_one_line(tmp_path, home):
    subs = tmp_path / "subs"
    team(subs, "team-ok")
    team(subs, "team-key", f"cmd: [python, bot.py, {home / '.ssh' / 'id_rsa'}]\n")
    team(subs, "team-peek", "cmd: [python, ../team-ok/bot.py]\n")
    team(subs, "team-grades", "cmd: python bot.py --sheet=~/../home/grades.csv\n")
    team(subs, "team-root", "cmd: [python, bot.py, /root]\n")
    config = load_config(league(tmp_path))
    problems = {bot.name: bot.problem for bot in config.bots}
    assert problems["team-ok"] is None
    for name in ("team-key", "team-peek", "team-grades", "team-root"):
        assert problems[name] is not None and "\n" not in problems[name], name
        assert f"{name}/bot.yaml:1: cmd: names '" in problems[name]
        assert "outside the submission's folder" in problems[name]
    # Under startup_failures: stop the run is refused before anything starts, in one line.
    stopped = arena("run", league(tmp_path, extra=""))
    assert_one_line_error(stopped, "bot 'team-", "outside the submission's folder")
    # arena check names why and never shows the key.
    checked = arena("check", league(tmp_path), "--games", "1")
    assert "SECRET" not in checked.out + checked.err
    # The table wraps long reasons: read it with its lines joined.
    assert " ".join(checked.out.split()).count("outside the submission's folder") == 4


PEEK = """
import json, os, sys
def read(path):
    try:
        with open(path) as handle:
            return handle.read()[:40]
    except OSError as exc:
        return exc.strerror
print(json.dumps({path: read(path) for path in sys.argv[1:]}), flush=True)
input()
"""


def test_a_sandboxed_submission_sees_its_own_folder_and_nothing_of_another_teams(tmp_path, home):
    needs.bwrap()
    subs = tmp_path / "subs"
    team(subs, "team-ok")
    evil = team(subs, "team-evil")
    (evil / "peek.py").write_text(PEEK)
    key = str(home / ".ssh" / "id_rsa")
    # The hunt's command, as if the manifest had been let through: its files are named to be bound.
    cmd = (sys.executable, "peek.py", "../team-ok/bot.py", key, str(COURSE_BOT), str(evil / "bot.py"))
    bot = BotConfig(name="team-evil", cmd=cmd, options={}, cwd=evil, env={}, sandbox="bwrap", source=evil)
    player = BotPlayer(bot, "oxono", scratch_dir=tmp_path / "scratch" / "team-evil")
    process = BotProcess(bot.cmd, cwd=bot.cwd, env=bot.env, confinement=player.confinement)
    with process:
        seen = json.loads(process.read_line(time.monotonic() + 30))
    assert seen["../team-ok/bot.py"] == "No such file or directory"
    assert seen[key] == "No such file or directory"
    assert seen[str(COURSE_BOT)] == "No such file or directory"  # a team of the arena's own checkout
    assert seen[str(evil / "bot.py")].startswith('"""The smallest')  # its own folder


def test_a_path_in_a_submissions_env_shows_it_no_directory(tmp_path, home):
    needs.bwrap()
    (home / "bin").mkdir()
    (home / "bin" / "tool").write_text("#!/bin/sh\n")
    (home / "bin" / "tool").chmod(0o755)
    team(tmp_path / "subs", "team-ok")
    evil = team(tmp_path / "subs", "team-evil", f"cmd: tool\nenv: {{PATH: '{home / 'bin'}'}}\n")
    bot = load_config(league(tmp_path)).bot("team-evil")
    player = BotPlayer(bot, "oxono", scratch_dir=tmp_path / "scratch")
    argv = bwrap_command(bot.cmd, bot.cwd, bot.env, replace(player.confinement, scratch_dir=tmp_path / "scratch"))
    assert str(evil) in argv and not [word for word in argv if word.startswith(str(home))]


# -- 4. one submission must not stop the league --------------------------------------------


def _fifo(folder: Path, home: Path) -> None:
    os.mkfifo(folder / "pipe")


def _socket(folder: Path, home: Path) -> None:
    here = os.getcwd()
    os.chdir(folder)  # a socket's path is at most 108 bytes
    try:
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind("sock")
    finally:
        os.chdir(here)


def _manifest_fifo(folder: Path, home: Path) -> None:
    (folder / "bot.yaml").unlink()
    os.mkfifo(folder / "bot.yaml")


def _manifest_zero(folder: Path, home: Path) -> None:
    (folder / "bot.yaml").unlink()
    (folder / "bot.yaml").symlink_to("/dev/zero")


def _link_out(folder: Path, home: Path) -> None:
    (folder / "notes").symlink_to(home / ".ssh" / "id_rsa")


def _pagemap(folder: Path, home: Path) -> None:
    (folder / "bot.yaml").write_text("cmd: [python, bot.py, /proc/self/pagemap]\n")


def _deep_manifest(folder: Path, home: Path) -> None:
    (folder / "bot.yaml").write_text("cmd: python bot.py\noptions: {deep: " + "[" * 5000 + "]" * 5000 + "}\n")


def _big_manifest(folder: Path, home: Path) -> None:
    (folder / "bot.yaml").write_text("cmd: python bot.py\n" + "# padding\n" * 10_000)


def _deep_folders(folder: Path, home: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(1200):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def _sparse(folder: Path, home: Path) -> None:
    with open(folder / "weights.bin", "wb") as handle:
        handle.truncate(5 << 30)


def _many_files(folder: Path, home: Path) -> None:
    for number in range(301):  # the hunt's 200,000, over a bound the file sets at 300
        (folder / f"f{number}").touch()


HOSTILE = {
    "fifo": (_fifo, "'pipe' is a FIFO"),
    "socket": (_socket, "'sock' is a socket"),
    "manifest-fifo": (_manifest_fifo, "bot.yaml: it cannot be read: not a file but a FIFO"),
    "manifest-zero": (_manifest_zero, "bot.yaml: it cannot be read: a link"),
    "link-out": (_link_out, "'notes' is a link out of its folder"),
    "pagemap": (_pagemap, "cmd: names '/proc/self/pagemap', outside the submission's folder"),
    "deep-manifest": (_deep_manifest, "bad YAML: lists or mappings nested too deeply to read"),
    "big-manifest": (_big_manifest, "a manifest may hold at most 64 KB (manifest_kb)"),
    "deep-folders": (_deep_folders, "its folders nest more than 32 deep (folder_depth)"),
    "sparse-5gb": (_sparse, "its files hold more than 100 MB (folder_mb)"),
    "many-files": (_many_files, "it holds more than 300 files and folders (folder_files)"),
}


@pytest.mark.parametrize("attack", HOSTILE)
def test_a_hostile_folder_is_a_bot_that_cannot_start_saying_why_in_one_line(tmp_path, home, attack):
    make, why = HOSTILE[attack]
    subs = tmp_path / "subs"
    team(subs, "team-ok")
    team(subs, "team-ok-2")
    make(team(subs, "team-x"), home)
    path = league(tmp_path, extra="startup_failures: forfeit\nsubmission_limits: {folder_files: 300}\n")
    config, seconds = loaded_within(path)
    assert seconds < 5
    problem = config.bot("team-x").problem
    assert problem is not None and why in problem and "\n" not in problem, problem
    assert config.bot("team-ok").problem is None and config.bot("team-ok-2").problem is None
    plan = RunPlan(config, tmp_path / "out")  # fingerprints every bot, within its bounds
    assert plan.fingerprints["team-x"].files == {}
    with pytest.raises(ConfigError) as stopped:  # under startup_failures: stop, one line before anything runs
        check_programs(replace(config, startup_failures="stop"))
    assert "bot 'team-x'" in str(stopped.value) and why in str(stopped.value) and "\n" not in str(stopped.value)


def test_fingerprinting_reads_no_more_of_a_file_than_it_holds(tmp_path):
    # A bot of the tournament file naming /proc/self/pagemap (which reads on for terabytes).
    (tmp_path / "bot.py").write_text("print()\n")
    bot = BotConfig(name="b", cmd=(sys.executable, "bot.py", "/proc/self/pagemap"), options={}, cwd=tmp_path, env={})
    done: dict = {}
    thread = threading.Thread(target=lambda: done.update(fp=fingerprint(bot)), daemon=True)
    thread.start()
    thread.join(10)
    assert "fp" in done, "fingerprinting a file of /proc did not end"
    pagemap = next(name for name in done["fp"].files if name.endswith("/pagemap"))  # /proc/<pid>/pagemap
    assert done["fp"].files[pagemap] == hashlib.sha256(b"").hexdigest()  # what its size says: nothing


def test_one_hostile_submission_does_not_stop_the_league(tmp_path, home):
    subs = tmp_path / "subs"
    team(subs, "team-a")
    team(subs, "team-b")
    _fifo(team(subs, "team-fifo"), home)
    _manifest_fifo(team(subs, "team-pipe-manifest"), home)
    _deep_folders(team(subs, "team-deep"), home)
    result = arena("run", league(tmp_path))
    assert result.exit_code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("warning: ")]
    for name, why in (("team-fifo", "is a FIFO"), ("team-pipe-manifest", "not a file but a FIFO"),
                      ("team-deep", "nest more than 32 deep")):
        assert any(f"bot '{name}' did not start" in line and why in line for line in warnings), (name, warnings)
    records = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert len(records) == 10 * 4
    real = [r for r in records if set(r["players"].values()) == {"team-a", "team-b"}]
    assert len(real) == 4 and all(r["forfeit_by"] is None for r in real)
    assert all(r["reason"] == "startup_failure" for r in records if r not in real)


def test_arena_check_fails_a_submission_holding_a_fifo(tmp_path, home):
    subs = tmp_path / "subs"
    team(subs, "team-a")
    _fifo(team(subs, "team-fifo"), home)
    config = load_config(league(tmp_path))
    row = check_one(config, "team-fifo", games=2)
    assert not row.passed and "'pipe' is a FIFO" in row.reason and row.games == 0


def test_fingerprinting_a_folder_is_bounded_in_time_and_a_slow_one_cannot_start(tmp_path):
    subs = tmp_path / "subs"
    team(subs, "team-a")
    slow = team(subs, "team-slow")
    (slow / "weights.bin").write_bytes(os.urandom(1 << 20) * 40)
    config = load_config(league(tmp_path))
    config = replace(config, submission_limits=replace(config.submission_limits, fingerprint_s=1e-4))
    plan = RunPlan(config, tmp_path / "out")
    assert "took more than 0.0001 s (fingerprint_s)" in plan.config.bot("team-slow").problem
    assert plan.fingerprints["team-slow"].files == {}
    with pytest.raises(ConfigError, match="bot 'team-[a-z]+': .*fingerprint_s"):  # team-a too, on a loaded machine
        RunPlan(replace(config, startup_failures="stop"), tmp_path / "out")


def test_unchanged_files_are_not_read_again_and_a_changed_file_always_is(tmp_path, monkeypatch):
    folder = team(tmp_path / "subs", "team-a")
    (folder / "helper.py").write_text("X = 1\n")
    long_ago = time.time_ns() - 3600 * 10**9
    for name in ("bot.py", "bot.yaml", "helper.py"):
        os.utime(folder / name, ns=(long_ago, long_ago))
    monkeypatch.setattr("arena.bot.digest_cache.RACY_NS", 200_000_000)  # a file changed 0.2 s ago is not trusted to the cache
    time.sleep(0.3)  # setting the times was a change (of the change time)
    bot = BotConfig(name="team-a", cmd=(sys.executable, "bot.py"), options={}, cwd=folder, env={}, source=folder)
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(version.os, "read", lambda fd, n: reads.append(fd) or real_read(fd, n))

    def counted() -> tuple[Fingerprint, int]:
        reads.clear()
        return fingerprint(bot), len(reads)

    first, read = counted()
    assert read == 3
    second, read = counted()
    assert read == 0 and second == first
    # Rewritten to its old size and given its old time back: its change time tells.
    stamp = (folder / "helper.py").stat()
    (folder / "helper.py").write_text("X = 2\n")
    os.utime(folder / "helper.py", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    third, read = counted()
    assert read == 1 and third.version != first.version and describe_change(first, third) == "helper.py changed"
    # The same version on both sides (games of a third one differ): never "changed from X to X".
    assert describe_change(third, third) == f"its version is now {third.version}"
    # Changed just now: not trusted to the cache (a change in the same tick keeps every time stamp).
    fourth, read = counted()
    assert read == 1 and fourth == third


# -- 8. code in hidden files ----------------------------------------------------------------


def test_code_in_hidden_files_is_part_of_the_version_and_caches_are_not(tmp_path):
    folder = team(tmp_path / "subs", "team-a")
    (folder / ".lib").mkdir()
    (folder / ".lib" / "helper.py").write_text("def move(moves):\n    return moves[0]\n")
    (folder / ".config.json").write_text("{}")
    bot = BotConfig(name="team-a", cmd=(sys.executable, "bot.py"), options={}, cwd=folder, env={}, source=folder)
    before = fingerprint(bot)
    assert {".lib/helper.py", ".config.json"} <= set(before.files)
    (folder / ".lib" / "helper.py").write_text("def move(moves):\n    return moves[-1]\n")
    after = fingerprint(bot)
    assert after.version != before.version and describe_change(before, after) == ".lib/helper.py changed"
    # Byte-code Python writes when the bot runs, and git's history, are no part of it.
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\0" * 16)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert fingerprint(bot) == after


# -- 9. digests of host files ---------------------------------------------------------------


def test_only_files_inside_a_submission_are_fingerprinted_and_recorded(tmp_path, home):
    subs = tmp_path / "subs"
    with open(team(subs, "team-ok") / "bot.py", "a") as handle:
        handle.write("# team-ok's own\n")
    evil = team(subs, "team-evil")
    key = home / ".ssh" / "id_rsa"
    cmd = (sys.executable, "bot.py", str(key), "../team-ok/bot.py")
    bot = BotConfig(name="team-evil", cmd=cmd, options={}, cwd=evil, env={}, source=evil)
    published = json.dumps(fingerprint(bot).to_json())
    assert hashlib.sha256(key.read_bytes()).hexdigest() not in published
    assert hashlib.sha256((subs / "team-ok" / "bot.py").read_bytes()).hexdigest() not in published
    assert set(fingerprint(bot).files) == {"bot.py", "bot.yaml"}


# -- 10. names that would split a line ------------------------------------------------------


def test_a_newline_in_a_file_name_cannot_split_the_bot_changed_error(tmp_path):
    subs = tmp_path / "subs"
    team(subs, "team-a")
    team(subs, "team-b")
    path = league(tmp_path, extra="")
    assert arena("run", path).exit_code == 0
    (subs / "team-b" / "evil\nerror: forged line.py").write_text("")
    line = assert_one_line_error(arena("run", path), "bot 'team-b' (", "--replay team-b")
    assert "evil\\nerror: forged line.py added" in line


def test_a_newline_in_a_special_files_name_stays_on_one_line(tmp_path, home):
    subs = tmp_path / "subs"
    team(subs, "team-a")
    os.mkfifo(team(subs, "team-b") / "x\ny")
    problem = load_config(league(tmp_path)).bot("team-b").problem
    assert "'x\\ny' is a FIFO" in problem and "\n" not in problem


def test_submission_limits_are_read_like_limits(tmp_path):
    subs = tmp_path / "subs"
    team(subs, "team-a")
    team(subs, "team-b")
    config = load_config(league(tmp_path, extra="submission_limits: {folder_mb: 5, folder_files: null, fingerprint_s: 2.5}\n"))
    assert (config.submission_limits.folder_mb, config.submission_limits.folder_files) == (5, None)
    assert config.submission_limits.fingerprint_s == 2.5 and config.submission_limits.folder_depth == 32
    for bad, why in (("{folder_mb: -1}", "submission_limits.folder_mb: must be a positive integer or null"),
                     ("{folder_file: 3}", "unknown key 'folder_file' (did you mean 'folder_files'?)"),
                     ("3", "submission_limits: must be a mapping")):
        with pytest.raises(ConfigError, match=why.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
            load_config(league(tmp_path, extra=f"submission_limits: {bad}\n"))


def test_a_start_checks_a_submission_against_its_recorded_version_within_its_limits(tmp_path):
    """arena.bot.version.changed_since, what a worker asks before it starts a
    bot: None while the folder is the version recorded; one line naming
    both versions once it changed, or the limit once it outgrew one; a
    declared version is taken at its word."""
    folder = team(tmp_path / "subs", "team-x")
    bot = BotConfig(name="team-x", cmd=(sys.executable, "bot.py"), options={}, cwd=folder, env={}, source=folder)
    limits = SubmissionLimits(folder_files=5)
    recorded = fingerprint(bot, limits).version
    assert version.changed_since(bot, recorded, limits) is None
    (folder / "notes.txt").write_text("a file the bot wrote into its folder\n")
    now = fingerprint(bot, limits).version
    assert version.changed_since(bot, recorded, limits) == (
        f"its files changed since the run started (version {recorded} recorded, now {now}): "
        "the next run plays this game as the new version")
    for number in range(5):
        (folder / f"more{number}.txt").write_text("x\n")
    assert version.changed_since(bot, recorded, limits) == (
        f"its files can no longer be read since the run started (version {recorded} recorded): "
        "it holds more than 5 files and folders (folder_files)")
    assert version.changed_since(replace(bot, version="2"), "2", limits) is None
