"""The pre-flight starts every bot at once, the way games start them."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.game.records import GameSpec
from arena.run.config import parse_config
from arena.run.preflight import StartupFailed, StartupProblem, preflight
from arena.run.tournament import start_bots

ROOT = Path(__file__).resolve().parent.parent

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
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["a.log", "b.log"]


def test_a_bot_that_does_not_answer_is_named_with_its_cause(tmp_path):
    config = config_for(tmp_path, startup_timeout=0.5)
    problems = preflight(config, ["c", "a", "b"])
    assert problems == [StartupProblem("c", "no answer to 'hello' within 0.5 s "
                                            "— does the bot flush its output after each line?")]
    with pytest.raises(StartupFailed, match=r"^bot 'c' did not start, so no game was played: no answer"):
        start_bots(config, _specs("a", "c"), None)
    forfeiting = config_for(tmp_path, startup_timeout=0.5, failures="forfeit")
    assert start_bots(forfeiting, _specs("a", "c"), None) == [
        "bot 'c' did not start: no answer to 'hello' within 0.5 s — does the bot flush its output after each line?; "
        "its games are forfeited (startup_failures: forfeit)"
    ]


def _specs(*names: str) -> list[GameSpec]:
    return [GameSpec(index=0, game_id="r1-p1-g1", game="oxono", round=1, players=names, opening=0, seed=1)]


def test_nothing_to_play_starts_nothing(tmp_path):
    config = config_for(tmp_path, startup_timeout=0.5)
    assert start_bots(config, [], None) == []
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
