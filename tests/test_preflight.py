"""The pre-flight starts every bot at once, the way games start them."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from arena.game.records import GameSpec
from arena.run.config import load_config, parse_config
from arena.run.preflight import StartupFailed, StartupProblem, preflight, preflight_deadline_s
from arena.run.tournament import start_bots
from builders import BOTS, ROOT, arena, assert_one_line_error, records, spec, tournament_file

STOPPER = BOTS / "stop_parent_on_hello.py"

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

#: Answers hello only once its peer has started too, from the directory and
#: with the environment of its entry: it passes only if both run at once,
#: started as games start bots.
PEER_BOT = """\
import json, os, sys, time
me, peer = sys.argv[1], sys.argv[2]
open(me + ".started", "w").close()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        deadline = time.monotonic() + 20
        while not os.path.exists(peer + ".started") and time.monotonic() < deadline:
            time.sleep(0.01)
        if os.path.exists(peer + ".started") and os.environ.get("PEER_TEST") == "yes":
            print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "quit":
        break
"""


def config_for(tmp_path: Path, startup_timeout: float, failures: str = "stop"):
    (tmp_path / "peer.py").write_text(PEER_BOT)
    text = f"""
name: t
game: oxono
time_control: 5+0.1
startup_timeout: {startup_timeout}
startup_failures: {failures}
bots:
  - {{name: a, cmd: [python, peer.py, a, b], env: {{PEER_TEST: "yes"}}}}
  - {{name: b, cmd: [python, peer.py, b, a], env: {{PEER_TEST: "yes"}}}}
  - {{name: c, cmd: [python, peer.py, c, nobody]}}
"""
    return parse_config(text, base_dir=tmp_path)


def test_bots_start_at_once_in_their_directory_and_environment(tmp_path):
    config = config_for(tmp_path, startup_timeout=15)
    assert preflight(config, ["a", "b"], tmp_path / "logs") == []
    assert {p.name for p in tmp_path.glob("*.started")} == {"a.started", "b.started"}
    assert sorted(str(p.relative_to(tmp_path / "logs")) for p in (tmp_path / "logs").rglob("*.log")) == [
        "a/preflight.log", "b/preflight.log"]


def test_a_bot_that_does_not_answer_is_named_with_its_cause(tmp_path):
    config = config_for(tmp_path, startup_timeout=0.5)
    problems = preflight(config, ["c", "a", "b"])
    assert problems == [StartupProblem("c", "no answer to 'hello' within 0.5 s (startup_timeout, --startup-timeout) "
                                            "— does the bot flush its output after each line?")]
    with pytest.raises(StartupFailed, match=r"^bot 'c' did not start, so no game was played: no answer"):
        start_bots(config, _specs("a", "c"), None)
    forfeiting = config_for(tmp_path, startup_timeout=0.5, failures="forfeit")
    played_with, warnings = start_bots(forfeiting, _specs("a", "c"), None)
    assert warnings == [
        "bot 'c' did not start: no answer to 'hello' within 0.5 s (startup_timeout, --startup-timeout) — does the bot flush its output after each line?; "
        "its games are forfeited (startup_failures: forfeit)"
    ]
    assert played_with is forfeiting  # a bot that is merely slow is tried again in its games


def _specs(*names: str) -> list[GameSpec]:
    return [spec(0, names, game_id="r1-p1-g1", seed=1)]


def test_nothing_to_play_starts_nothing(tmp_path):
    config = config_for(tmp_path, startup_timeout=0.5)
    assert start_bots(config, [], None) == (config, [])
    assert not list(tmp_path.glob("*.started"))


def test_bots_started_at_once_do_not_kill_each_other(tmp_path):
    # While one thread stops its bot (and sweeps up what bots left behind),
    # another is starting one: the newborn bot is no leftover.
    entries = "\n".join(
        f"  - {{name: ok{i}, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n"
        f"  - {{name: bad{i}, cmd: [python, -c, 'import sys; sys.exit(3)']}}"
        for i in range(6)
    )
    config = parse_config(f"name: t\ngame: oxono\ntime_control: 5+0.1\nbots:\n{entries}\n", base_dir=tmp_path)
    for _ in range(3):
        problems = preflight(config, [bot.name for bot in config.bots])
        assert sorted(p.bot for p in problems) == sorted(f"bad{i}" for i in range(6)), problems


# -- a bot that stops or kills the process that starts it ----------------------------


def hostile_config(tmp_path: Path, signal_name: str, failures: str = "stop"):
    """The peers a and b, which pass only if started at once, and s, which
    sends ``signal_name`` to its parent when greeted."""
    (tmp_path / "peer.py").write_text(PEER_BOT)
    text = f"""
name: t
game: oxono
time_control: 5+0.1
startup_timeout: 5
startup_failures: {failures}
bots:
  - {{name: a, cmd: [python, peer.py, a, b], env: {{PEER_TEST: "yes"}}}}
  - {{name: s, cmd: [python, {STOPPER}, {signal_name}]}}
  - {{name: b, cmd: [python, peer.py, b, a], env: {{PEER_TEST: "yes"}}}}
"""
    return parse_config(text, base_dir=tmp_path)


SILENT = ("the arena's process starting it was silent for more than 3 s and was killed "
          "(a bot that stops its parent with SIGSTOP does that)")


def test_a_bot_that_stops_its_pre_flight_process_is_named_at_the_deadline(tmp_path):
    config = hostile_config(tmp_path, "STOP")
    started = time.monotonic()
    problems = preflight(config, ["a", "s", "b"], tmp_path / "logs", deadline_s=3)
    assert 3 <= time.monotonic() - started < 3 + 5
    # Only the bot that stopped its process; the others started beside it, at once.
    assert problems == [StartupProblem("s", SILENT, restartable=False)]
    assert (tmp_path / "logs" / "s" / "preflight.log").exists()
    # (no_leaked_processes: the stopped process and its bot are gone)


def test_a_bot_that_kills_its_pre_flight_process_is_named_at_once(tmp_path):
    config = hostile_config(tmp_path, "KILL")
    started = time.monotonic()
    problems = preflight(config, ["a", "s", "b"], deadline_s=60)
    assert time.monotonic() - started < 10
    assert problems == [StartupProblem(
        "s", "the arena's process starting it died (killed by signal 9; a bot that kills its parent does that)",
        restartable=False,
    )]


def test_under_forfeit_a_bot_that_stopped_the_pre_flight_is_never_started_again(tmp_path, monkeypatch):
    config = hostile_config(tmp_path, "STOP", failures="forfeit")
    monkeypatch.setattr("arena.run.preflight.preflight_deadline_s", lambda config: 3)
    played_with, warnings = start_bots(config, _specs("a", "s") + _specs("a", "b"), None)
    assert warnings == [f"bot 's' did not start: {SILENT}; its games are forfeited (startup_failures: forfeit)"]
    # Its games are forfeited at once with that detail, without starting it: it would stop a worker.
    assert played_with.bot("s").problem == SILENT
    assert [bot for bot in played_with.bots if bot.name != "s"] == [bot for bot in config.bots if bot.name != "s"]


def test_arena_run_with_a_bot_that_stops_the_pre_flight_stops_with_one_line_in_time(tmp_path):
    stopper = f"python {STOPPER.relative_to(ROOT)}"
    path = tournament_file(tmp_path, cmds={"gamma": stopper}, extra="startup_timeout: 1\n")
    deadline = preflight_deadline_s(load_config(path))
    started = time.monotonic()
    result = arena("run", path)
    elapsed = time.monotonic() - started
    assert_one_line_error(
        result, f"bot 'gamma' did not start, so no game was played: the arena's process starting it was silent "
                f"for more than {deadline:.0f} s and was killed (a bot that stops its parent with SIGSTOP does that)"
    )
    assert deadline <= elapsed < deadline + 10
    assert (tmp_path / "out" / "games.jsonl").read_bytes() == b""


def test_arena_run_under_forfeit_plays_on_without_a_bot_that_stops_the_pre_flight(tmp_path):
    stopper = f"python {STOPPER.relative_to(ROOT)}"
    path = tournament_file(tmp_path, cmds={"gamma": stopper}, extra="startup_timeout: 1\nstartup_failures: forfeit\n")
    deadline = preflight_deadline_s(load_config(path))
    result = arena("run", path)
    assert result.exit_code == 0, result.err
    detail = (f"the arena's process starting it was silent for more than {deadline:.0f} s and was killed "
              "(a bot that stops its parent with SIGSTOP does that)")
    assert f"warning: bot 'gamma' did not start: {detail}; its games are forfeited (startup_failures: forfeit)" in (
        result.err.splitlines()
    )
    played = records(tmp_path / "out")
    assert len(played) == 12
    ghost = [r for r in played if "gamma" in r["players"].values()]
    assert len(ghost) == 8
    for record in ghost:
        assert record["reason"] == "startup_failure" and record["detail"] == detail
        assert record["players"][record["forfeit_by"]] == "gamma"
    assert all(r["forfeit_by"] is None for r in played if r not in ghost)  # no innocent forfeit
    # Started once, by the pre-flight, and never by a worker.
    gamma = tmp_path / "out" / "logs" / "gamma"
    assert sorted(p.name for p in gamma.iterdir()) == ["games", "preflight.log"]
    # Each forfeited game's log holds the arena's two frame lines and nothing from the bot.
    for record in ghost:
        lines = (gamma / "games" / f"{record['game_id']}.log").read_text().splitlines()
        assert len(lines) == 2 and lines[0].startswith(f"=== game {record['game_id']}: bot gamma, started ")
    assert re.search(r"^\s*\d+\s+gamma\s.*startup_failure 8", result.out, re.M), result.out
