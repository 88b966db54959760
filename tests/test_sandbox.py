"""How a bot process is confined: its environment, file descriptors, scratch
directory, limits, and what it sees under ``sandbox: bwrap``."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

import pytest

import arena.bot.sandbox as sandbox
import needs
from arena.bot.limits import Limits, rlimits
from arena.bot.process import BotProcess
from arena.bot.quota import mounts_mode
from arena.bot.sandbox import Confinement, SandboxUnavailable, check_sandbox
from arena.run.config import ConfigError, check_programs, load_config, parse_config
from arena.run.executor import game_deadline_s
from arena.run.tournament import run_tournament
from builders import ROOT


pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process confinement"),
]

#: Prints what the bot can see of its surroundings as one JSON line, then waits.
LOOK_AROUND = """
import json, os, sys
def attempt(path):
    try:
        with open(path, "a") as handle:
            handle.write("x")
        return "written"
    except OSError as exc:
        return exc.strerror
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return exc.strerror
def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as exc:
        return exc.strerror
fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
print(json.dumps({
    "env": dict(os.environ), "fds": fds, "cwd": os.getcwd(), "uid": os.getuid(),
    "write_cwd": attempt("written-by-bot"), "write_home": attempt(os.path.join(os.environ["HOME"], "note")),
    "write_tmp": attempt("/tmp/note"), "results": listing(sys.argv[1]), "tournament": read(sys.argv[2]),
    "shadow": read("/etc/shadow")[:20],
}), flush=True)
input()
"""


def look_around(tmp_path: Path, mode: str, env: dict[str, str] | None = None) -> dict:
    results = tmp_path / "results"
    (results / "logs").mkdir(parents=True)
    (results / "logs" / "other.log").write_text("SECRET")
    tournament = tmp_path / "t.yaml"
    tournament.write_text("SECRET: 1\n")
    scratch = results / "scratch" / "me"
    confinement = Confinement(sandbox=mode, scratch_dir=scratch, hidden=(results, tournament))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    bot = BotProcess([sys.executable, "-c", LOOK_AROUND, str(results), str(tournament)], cwd=cwd, env=env,
                     confinement=confinement)
    with bot:
        seen = json.loads(bot.read_line(time.monotonic() + 30))
    seen["scratch"] = str(scratch)
    return seen


def test_a_bot_gets_a_clean_environment_its_three_pipes_and_a_scratch_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_OWN_SECRET", "do-not-pass")
    seen = look_around(tmp_path, "none", env={"BOT_SETTING": "7", "LANG": "C"})
    env = seen["env"]
    assert "ARENA_OWN_SECRET" not in env
    assert env["HOME"] == env["TMPDIR"] == seen["scratch"]
    assert env["BOT_SETTING"] == "7" and env["LANG"] == "C"  # the tournament file's env wins
    assert env["PATH"] == os.environ["PATH"]
    # PYTHONPATH: the arena's Python finds engine and bots as it would in the sandbox.
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "HOME", "TMPDIR", "BOT_SETTING", "PYTHONPATH"}
    assert env["PYTHONPATH"] == str(ROOT)
    assert seen["fds"][:3] == [0, 1, 2] and len(seen["fds"]) == 4  # the 4th lists /proc/self/fd
    assert seen["cwd"] == str(tmp_path / "cwd")  # the working directory is the configured one
    assert seen["write_home"] == "written"


def test_the_sandbox_shows_a_read_only_world_and_hides_results_tournament_and_secrets(tmp_path):
    needs.bwrap()
    seen = look_around(tmp_path, "bwrap", env={"BOT_SETTING": "7"})
    assert seen["uid"] == sandbox.SANDBOX_UID
    assert seen["env"]["HOME"] == seen["scratch"] and seen["env"]["BOT_SETTING"] == "7"
    assert seen["fds"][:3] == [0, 1, 2] and len(seen["fds"]) == 4
    assert seen["cwd"] == str(tmp_path / "cwd")
    assert seen["write_cwd"] == "Read-only file system"
    assert seen["write_home"] == "written" and seen["write_tmp"] == "written"
    assert seen["results"] == ["scratch"]  # only the way to its own scratch directory
    assert seen["tournament"] == "Permission denied"  # covered by /dev/null, in a namespace without devices
    assert seen["shadow"] == "Permission denied"
    # A tmpfs of its own where the arena can mount one: what it writes never reaches the disk.
    note = Path(seen["scratch"]) / "note"
    assert note.read_text() == "x" if mounts_mode() is None else not note.exists()
    assert not (tmp_path / "cwd" / "written-by-bot").exists()


def test_sandboxed_and_plain_bots_play_the_same_moves(tmp_path):
    needs.bwrap()
    moves = {}
    for mode in ("none", "bwrap"):
        path = tmp_path / f"{mode}.yaml"
        path.write_text(
            f"game: oxono\ntime_control: 10+0.1\nseed: 11\nconcurrency: 2\noutput: out-{mode}\nsandbox: {mode}\n"
            f"bots:\n  - {{name: r, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n"
            f"  - {{name: g, cmd: python -m bots.greedy, cwd: {ROOT}}}\n"
        )
        records = run_tournament(load_config(path)).records
        moves[mode] = {r.game_id: [m.move for m in r.moves] for r in records}
    assert moves["none"] == moves["bwrap"] and len(moves["none"]) == 4


def test_a_missing_bwrap_is_one_line_before_any_game(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "_bwrap", lambda: None)
    check_sandbox.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
            check_sandbox("bwrap")
        path = tmp_path / "t.yaml"
        path.write_text(
            "game: oxono\ntime_control: 1+0\nsandbox: bwrap\n"
            "bots:\n  - {name: a, cmd: python -m bots.random_bot}\n  - {name: b, cmd: python -m bots.random_bot}\n"
        )
        with pytest.raises(ConfigError) as caught:
            check_programs(load_config(path))
        assert str(caught.value).startswith(f"{path}: bots[0].sandbox: bot 'a': sandbox 'bwrap' needs the program 'bwrap'")
        assert "\n" not in str(caught.value)
    finally:
        check_sandbox.cache_clear()


# -- configuration ------------------------------------------------------------------


def config_with(text: str):
    return parse_config(
        "name: t\ngame: oxono\ntime_control: 1+0\n" + text, base_dir=ROOT,
    )


def test_limits_default_on_and_merge_global_then_per_bot():
    config = config_with(
        "limits: {memory_mb: 512, cpu_s: 30}\nsandbox: bwrap\nbots:\n"
        "  - {name: a, cmd: x, limits: {processes: 8, memory_mb: null}, sandbox: none}\n"
        "  - {name: b, cmd: x}\n"
    )
    a, b = config.bots
    assert Limits() == Limits(memory_mb=1024, processes=64, file_mb=64, cpu_s=None)
    assert a.limits == Limits(memory_mb=None, processes=8, file_mb=64, cpu_s=30)
    assert b.limits == Limits(memory_mb=512, processes=64, file_mb=64, cpu_s=30)
    assert (a.sandbox, b.sandbox) == ("none", "bwrap")
    default = config_with("bots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n")
    assert default.bots[0].limits == Limits() and default.bots[0].sandbox == "none"


@pytest.mark.parametrize(
    "text, message",
    [
        ("limits: {memory: 5}\n", "limits.memory: unknown key 'memory' (did you mean 'memory_mb'?)"),
        ("limits: {memory_mb: -1}\n", "limits.memory_mb: must be a positive integer or null (no limit), got integer '-1'"),
        ("limits: {processes: 2.5}\n", "limits.processes: must be a positive integer or null (no limit), got number '2.5'"),
        ("limits: {cpu_s: yes}\n", "limits.cpu_s: must be a positive number of seconds or null (no limit), got boolean 'yes'"),
        ("limits: 5\n", "limits: must be a mapping with some of: memory_mb, processes, file_mb, cpu_s, scratch_mb, scratch_files"),
        ("sandbox: docker\n", "sandbox: unknown sandbox 'docker'; known: none, bwrap"),
    ],
)
def test_bad_limits_and_sandbox_are_refused_naming_the_key(text, message):
    with pytest.raises(ConfigError) as caught:
        config_with(text + "bots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n")
    assert str(caught.value).endswith(message)


# -- limits without a cgroup ------------------------------------------------------


def test_rlimit_fallback_limits_data_not_address_space():
    pairs = {which: (soft, hard) for which, soft, hard in rlimits(Limits(memory_mb=100, processes=10, file_mb=2, cpu_s=1.5), None)}
    assert pairs[resource.RLIMIT_DATA] == (100 << 20, 100 << 20)  # RLIMIT_AS would break Go, Node and the JVM
    assert resource.RLIMIT_AS not in pairs
    assert pairs[resource.RLIMIT_FSIZE] == (2 << 20, 2 << 20)
    assert pairs[resource.RLIMIT_CPU] == (2, 3)  # SIGXCPU first, SIGKILL a second later
    if os.geteuid() == 0:
        assert resource.RLIMIT_NPROC not in pairs  # root ignores it
    else:
        assert pairs[resource.RLIMIT_NPROC][0] > 10  # the user's own processes count too
    assert rlimits(Limits(memory_mb=None, processes=None, file_mb=None, cpu_s=None), None) == []


def test_cpu_limit_kills_a_spinning_bot_and_says_so():
    spin = "print('ready', flush=True)\nwhile True: pass"
    bot = BotProcess([sys.executable, "-c", spin], confinement=Confinement(limits=Limits(cpu_s=1)))
    with bot:
        assert bot.read_line(time.monotonic() + 30) == "ready"
        with pytest.raises(Exception) as caught:
            bot.read_line(time.monotonic() + 30)
    assert str(caught.value) == "the bot was killed by SIGXCPU: it used up its CPU time limit (1 s)"


# -- the executor's deadline ------------------------------------------------------


def test_game_deadline_adds_up_every_timeout_a_game_can_meet():
    clock = config_with("startup_timeout: 3\ntime_margin: 0.1\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n")
    # 2 starts of 3 s; two 1 s clocks; OXONO's 32 plies of 0 s increment + 0.1 s margin; 4 notices of 5 s; 2 quits of 2 s; 30 s slack
    assert game_deadline_s(clock) == pytest.approx(2 * 3 + 2 * 1 + 32 * 0.1 + 4 * 5 + 2 * 2 + 30)
    per_move = parse_config(
        "name: t\ngame: oxono\ntime_control: move 0.5\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n", base_dir=ROOT
    )
    assert game_deadline_s(per_move) == pytest.approx(2 * 10 + 32 * (0.5 + 0.05) + 4 * 5 + 2 * 2 + 30)


# -- arena check --sandbox -----------------------------------------------------------

WHOAMI_BOT = """import json, os, sys
sys.stdin.readline()
print(json.dumps({"type": "ready", "name": f"uid {os.getuid()}"}), flush=True)
"""


def check_cli(*args: str):
    from typer.testing import CliRunner

    from arena.cli import app

    result = CliRunner().invoke(app, ["check", *args])
    assert "Traceback" not in result.stdout + result.stderr
    return result


def test_arena_check_runs_the_bot_in_the_sandbox(tmp_path):
    needs.bwrap()
    bot = tmp_path / "whoami.py"
    bot.write_text(WHOAMI_BOT)
    plain = check_cli(f"python {bot}")
    sandboxed = check_cli(f"python {bot}", "--sandbox", "bwrap")
    assert plain.stdout.splitlines()[0] == f"ok   starts and answers 'hello' with 'ready': name uid {os.getuid()}"
    assert sandboxed.stdout.splitlines()[0] == f"ok   starts and answers 'hello' with 'ready': name uid {sandbox.SANDBOX_UID}"


def test_arena_check_with_an_unknown_or_missing_sandbox_is_one_line(monkeypatch):
    unknown = check_cli("python -m bots.random_bot", "--sandbox", "docker")
    assert unknown.exit_code == 2 and unknown.stderr == "error: unknown sandbox 'docker'; use one of none, bwrap\n"
    monkeypatch.setattr(sandbox, "_bwrap", lambda: None)
    check_sandbox.cache_clear()
    try:
        missing = check_cli("python -m bots.random_bot", "--sandbox", "bwrap")
    finally:
        check_sandbox.cache_clear()
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: sandbox 'bwrap' needs the program 'bwrap', which is not installed; install")
    assert missing.stderr.count("\n") == 1
