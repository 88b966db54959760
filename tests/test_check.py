"""arena/check.py: the checklist ``arena check`` walks a bot through."""

from __future__ import annotations

from pathlib import Path

import pytest

import needs
from arena.check import check_bot

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

STEPS = {
    "oxono": [
        "starts and answers 'hello' with 'ready'",
        "plays a whole game as pink against a random bot",
        "plays a whole game as black against a random bot",
        "plays several games in one process",
        "exits on 'quit'",
    ],
    "yoxii": [
        "starts and answers 'hello' with 'ready'",
        "plays a whole game as white against a random bot",
        "plays a whole game as red against a random bot",
        "plays several games in one process",
        "exits on 'quit'",
    ],
}


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_the_random_bot_passes_every_step(game, tmp_path):
    steps = check_bot("python -m bots.random_bot", game, logs_dir=tmp_path)
    assert [s.name for s in steps] == STEPS[game]
    assert all(s.ok for s in steps), steps
    assert steps[0].detail == "name RandomBot, version 1.0, author Totem Arena"
    for step in steps[1:3]:
        assert step.detail.split(" by ")[0] in {"won", "lost", "draw"}
        assert "plies" in step.detail and "ms a move on average" in step.detail
    assert steps[3].detail == "one process played every game"
    assert steps[4].detail == "exit code 0"
    # the candidate's stderr is logged: it played check-1 on seat 0, then check-2 on seat 1
    colors = [name.split()[5] for name in STEPS[game][1:3]]
    log = (tmp_path / "candidate" / "check.log").read_text()
    assert f"new game check-1 as {colors[0]}" in log and f"new game check-2 as {colors[1]}" in log


def test_the_number_of_games_is_a_parameter():
    steps = check_bot("python -m bots.random_bot", "oxono", games=1)
    assert [s.name for s in steps] == [STEPS["oxono"][i] for i in (0, 1, 3, 4)]
    assert all(s.ok for s in steps)


def test_stops_at_the_first_failed_step():
    steps = check_bot(f"python {BOTS / 'illegal_move.py'}", "oxono")
    assert [s.ok for s in steps] == [True, False]
    assert steps[1].name == STEPS["oxono"][1]
    assert steps[1].detail.startswith(
        "illegal_move on its 1st move (ply 1): played 'Zz9 z9', not a legal move: malformed move 'Zz9 z9'"
    )


ILLEGAL_AS_SECOND = """\
import json, sys
you = None
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "new_game":
        you = message["you"]
    elif message["type"] == "turn":
        move = "nonsense" if you in ("black", "red") else message["legal_moves"][0]
        print(json.dumps({"type": "move", "move": move}), flush=True)
    elif message["type"] == "quit":
        break
"""


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_a_bot_that_fails_only_on_the_second_seat(tmp_path, game):
    bot = tmp_path / "second_seat.py"
    bot.write_text(ILLEGAL_AS_SECOND)
    steps = check_bot(f"python {bot}", game)
    assert [s.name for s in steps] == STEPS[game][:3]
    assert [s.ok for s in steps] == [True, True, False]
    assert steps[0].detail.startswith("pid ")  # no name in its ready: the pid instead
    # its first move, after the random bot's
    assert steps[2].detail.startswith("illegal_move on its 1st move (ply 2): played 'nonsense'")


def test_no_ready_in_time():
    steps = check_bot(f"python {BOTS / 'no_hello.py'}", "oxono", startup_timeout_s=0.5)
    assert len(steps) == 1 and not steps[0].ok
    assert steps[0].detail == "no answer to 'hello' within 0.5 s — does the bot flush its output after each line?"


def test_a_program_that_does_not_exist():
    steps = check_bot("no-such-program-xyz --flag", "oxono")
    assert len(steps) == 1 and not steps[0].ok
    assert "no-such-program-xyz" in steps[0].detail


def test_a_crash_mid_game():
    steps = check_bot(f"python {BOTS / 'crash_midgame.py'}", "oxono")
    assert [s.ok for s in steps] == [True, False]
    assert steps[1].detail == "crash on its 3rd move (ply 5): the bot exited with code 3"  # as pink


NO_QUIT = """\
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "stubborn"}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"type": "move", "move": message["legal_moves"][-1]}), flush=True)
while True:
    time.sleep(3600)
"""


def test_a_bot_that_does_not_exit_on_quit_is_killed_and_fails(tmp_path):
    bot = tmp_path / "no_quit.py"
    bot.write_text(NO_QUIT)
    steps = check_bot(f"python {bot}", "oxono", quit_grace_s=0.3)
    assert [s.ok for s in steps] == [True, True, True, True, False]
    assert steps[0].detail == "name stubborn"
    assert steps[4].name == "exits on 'quit'"
    assert steps[4].detail == "still running 0.3 s after 'quit': killed"


def test_an_unknown_game_is_a_value_error():
    with pytest.raises(ValueError, match="chess"):
        check_bot("python -m bots.random_bot", "chess")


def test_under_the_sandbox_the_bot_sees_nothing_a_tournament_would_hide(tmp_path, monkeypatch):
    """A tournament's sandbox hides its file and results from the bots; the
    check does not know which tournament, so it hides every tournament file
    and results directory under the working directory (the bot's)."""
    needs.program("bwrap", "apt-get install bubblewrap")
    (tmp_path / "tournaments").mkdir()
    (tmp_path / "tournaments" / "course.yaml").write_text(
        "game: oxono\ntime_control: 5+0.1\nbots:\n  - {name: a, cmd: x, env: {TOKEN: SECRET-1}}\n"
    )
    (tmp_path / "flow.yml").write_text('{"game": "oxono", "bots_from": "teams", "note": "SECRET-2"}\n')
    results = tmp_path / "results" / "course"
    (results / "logs" / "a").mkdir(parents=True)
    (results / "games.jsonl").write_text('{"detail": "SECRET-3"}\n')
    (results / "logs" / "a" / "w1.log").write_text("SECRET-4\n")
    (tmp_path / "mybot.yaml").write_text("depth: 3  # SECRET-5: the bot's own settings, which it may read\n")
    logs = tmp_path / "checklogs"
    monkeypatch.chdir(tmp_path)
    command = f"python {BOTS / 'read_secrets.py'} tournaments flow.yml results mybot.yaml {logs}"
    (logs / "candidate").mkdir(parents=True)
    (logs / "candidate" / "old.log").write_text("SECRET-6\n")
    plain = check_bot(command, "oxono", games=1, logs_dir=logs)
    assert plain[0].detail == "name found: course.yaml flow.yml games.jsonl w1.log mybot.yaml old.log"  # all there
    boxed = check_bot(command, "oxono", games=1, logs_dir=logs, sandbox="bwrap")
    assert boxed[0].ok and boxed[0].detail == "name found: mybot.yaml"
    assert all(step.ok for step in boxed), boxed
    assert (logs / "candidate" / "check.log").exists()  # the arena still writes the log it hides
