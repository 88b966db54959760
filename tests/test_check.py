"""arena/check.py: the checklist ``arena check`` walks a bot through."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import needs
from arena.check import DEFAULT_GAMES, REASON_WIDTH, BotCheck, check_bot, check_tournament, render_checks
from arena.game.clock import TimeControl
from arena.cli import app
from arena.run.config import load_config
from builders import BOTS, ROOT


pytestmark = pytest.mark.usefixtures("no_leaked_processes", "in_repo_root")

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
    assert steps[0].detail == "no answer to 'hello' within 0.5 s (startup_timeout, --startup-timeout) — does the bot flush its output after each line?"


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
    needs.bwrap()
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


# -- arena check FILE.yaml: every bot of a tournament file ---------------------------


def arena_cli(*args: object):
    """``arena ARGS`` in-process; never a traceback."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout + result.stderr
    return result


#: A tournament file's second bot (a file needs two).
OTHER = f"  - {{name: other, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n"


def table_rows(text: str) -> dict[str, list[str]]:
    """The table's rows by bot: the columns split on runs of 2+ spaces, a
    reason wrapped over several lines joined again."""
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["bot", "check", "games", "forfeits"], text
    rows: dict[str, list[str]] = {}
    for line in lines[2:]:
        if not line.strip() or line.startswith(("all ", "1 ", "2 ", "3 ", "warnings ")):
            break
        if line.startswith(" "):  # a wrapped reason's next line
            last = rows[next(reversed(rows))]
            last[6] += " " + line.strip()
            continue
        cells = re.split(r"\s{2,}", line.strip(), maxsplit=6)
        rows[cells[0]] = cells
    return rows


@pytest.fixture(scope="module")
def java_bot(tmp_path_factory) -> Path:
    """bots/java/RandomBot.java compiled into a folder of its own: ``java
    RandomBot`` runs only from there (the class path is the working directory)."""
    javac = needs.program("javac", "apt-get install default-jdk-headless (scripts/install-test-deps.sh)")
    folder = tmp_path_factory.mktemp("java")
    shutil.copy(ROOT / "bots" / "java" / "RandomBot.java", folder)
    subprocess.run([javac, "-Xlint:all", "-Werror", "RandomBot.java"], cwd=folder, check=True)
    assert (folder / "RandomBot.class").is_file()
    return folder


def test_the_default_games_catch_a_bot_that_fails_one_game_in_ten():
    """The figure the docs give: a bot forfeiting one game in ten passes the
    default check with probability 0.9**N, under 5 %."""
    assert 0.9 ** DEFAULT_GAMES < 0.05
    assert 0.9 ** DEFAULT_GAMES == pytest.approx(0.042, abs=0.001)  # docs/bots.md: "about 4 %"


def test_a_tournament_file_checks_every_bot_as_it_runs(tmp_path, java_bot):
    """A passing bot, one crashing one game in ten, a Java bot that runs only
    from its cwd, one that cannot start, and a team from a ``bots_from``
    folder: one table, a row each, exit status 1."""
    team = tmp_path / "submissions" / "team-zed"
    team.mkdir(parents=True)
    (team / "bot.py").write_text((ROOT / "bots" / "random_bot.py").read_text())
    (team / "bot.yaml").write_text("cmd: python bot.py\n")
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
game: oxono
time_control: 5+0.1
openings: {{plies: 2, count: 3}}
startup_failures: forfeit
concurrency: 2
bots_from: submissions
bots:
  - {{name: good, cmd: python -m bots.random_bot, cwd: {ROOT}}}
  - {{name: flaky, cmd: python {BOTS / 'crash_one_in_ten.py'}}}
  - {{name: java, cmd: java RandomBot, cwd: {java_bot}}}
  - {{name: java-elsewhere, cmd: java RandomBot, cwd: {tmp_path}}}
  - {{name: missing, cmd: no-such-program-xyz}}
""")
    started = time.monotonic()
    result = arena_cli("check", path)
    took = time.monotonic() - started
    assert result.exit_code == 1, result.stdout + result.stderr
    rows = table_rows(result.stdout)
    assert list(rows) == ["good", "flaky", "java", "java-elsewhere", "missing", "team-zed"]
    for name in ("good", "java", "team-zed"):
        assert rows[name][1:4] == ["passed", str(DEFAULT_GAMES), "0"], rows[name]
        assert rows[name][4].endswith(" ms") and rows[name][5].endswith(" MiB") and rows[name][6] == "-"
    # it crashes on the 10th game of each of its processes: games 10, 20 and 30
    assert rows["flaky"][1:4] == ["FAILED", "30", "3"]
    assert rows["flaky"][6].startswith(
        "3 forfeits; first: check-10 as black: crash on its 1st move (ply 2): the bot exited with code 4"
    )
    assert rows["java-elsewhere"][1:4] == ["FAILED", "0", "0"]
    assert "Could not find or load main class RandomBot" in rows["java-elsewhere"][6]
    assert rows["missing"][1:4] == ["FAILED", "0", "0"]
    assert rows["missing"][4:6] == ["-", "-"]
    assert "no-such-program-xyz" in rows["missing"][6]
    assert result.stdout.splitlines()[-1] == "3 of 6 bots failed: flaky, java-elsewhere, missing"
    assert "slowest move (tc 5+0.1)" in result.stdout.splitlines()[0]
    assert took < 60, took


def test_a_check_of_a_few_games_misses_the_flaky_bot(tmp_path):
    """What issue 20 saw: three games pass a bot that forfeits one in ten."""
    path = tmp_path / "t.yaml"
    path.write_text(f"game: yoxii\ntime_control: 5+0.1\nbots:\n  - {{name: flaky, cmd: python {BOTS / 'crash_one_in_ten.py'}}}\n{OTHER}")
    result = arena_cli("check", path, "--games", "3", "--reference", "greedy")
    assert result.exit_code == 0, result.stdout
    assert table_rows(result.stdout)["flaky"][1:4] == ["passed", "3", "0"]
    assert result.stdout.splitlines()[-1] == "all 2 bots passed 3 games each against the greedy bot"


def test_the_course_file_passes():
    result = arena_cli("check", ROOT / "tournaments" / "course.yaml", "--games", "4")
    assert result.exit_code == 0, result.stdout
    assert list(table_rows(result.stdout)) == ["staff-random", "staff-greedy", "team-ann", "team-bob", "team-cy"]


def test_a_bad_file_or_option_is_one_line(tmp_path):
    result = arena_cli("check", tmp_path / "none.yaml")
    assert result.exit_code == 2 and "no such file" in result.stderr and len(result.stderr.splitlines()) == 1
    path = tmp_path / "t.yaml"
    path.write_text("game: oxono\ntime_control: 5+0.1\nbots:\n  - {name: a, cmd: python -m bots.random_bot}\n")
    result = arena_cli("check", path, "--reference", "stockfish")
    assert result.exit_code == 2 and "unknown bot 'stockfish'" in result.stderr
    result = arena_cli("check", path, "--cwd", tmp_path, "--game", "yoxii")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "--game, --cwd: for one bot's command; a tournament file gives each of its bots these settings" in result.stderr


def test_a_file_s_check_shows_its_progress_as_lines_in_a_log(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(f"game: oxono\ntime_control: 5+0.1\nbots:\n  - {{name: a, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n"
                    f"  - {{name: gone, cmd: python -c 'raise SystemExit(1)', cwd: {ROOT}}}\n" + OTHER)
    result = arena_cli("check", path, "--games", "2", "--jobs", "1")
    assert result.exit_code == 1 and "1 of 3 bots failed: gone" in result.stdout
    # stderr is no terminal here: a line each time another tenth of the bots is checked, none of them on stdout.
    lines = result.stderr.splitlines()
    counts = [re.fullmatch(r"\[0:\d\d:\d\d\] checked (\d) of 3 bots: (\d) failed, 0 with warnings", line).groups()
              for line in lines]
    assert counts == [("1", "0"), ("2", "1"), ("3", "1")], lines
    assert "checked" not in result.stdout
    # The line docs/league.md quotes is one of these.
    quoted = re.search(r"`(\[0:\d\d:\d\d\] checked [^`]*)`", (ROOT / "docs" / "league.md").read_text())
    assert quoted and re.fullmatch(r"\[0:\d\d:\d\d\] checked \d+ of \d+ bots: \d+ failed, \d+ with warnings", quoted[1])


def test_every_check_uses_the_tournament_s_settings(tmp_path):
    """Options, environment and time control reach the bot as in the tournament:
    a bot that forfeits unless it gets them passes."""
    bot = tmp_path / "picky.py"
    bot.write_text(PICKY)
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
game: oxono
time_control: 7+0.25
bots:
  - {{name: picky, cmd: python {bot}, options: {{depth: 3}}, env: {{TEAM: zed}}}}
{OTHER}""")
    result = arena_cli("check", path, "--games", "2")
    assert result.exit_code == 0, result.stdout
    assert table_rows(result.stdout)["picky"][1:4] == ["passed", "2", "0"]


PICKY = """\
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        ok = m["options"] == {"depth": 3} and os.environ.get("TEAM") == "zed"
        print(json.dumps({"type": "ready"} if ok else {"type": "error", "message": "not as in the tournament"}), flush=True)
    elif m["type"] == "new_game":
        assert m["time_control"] == {"initial_ms": 7000, "increment_ms": 250}
    elif m["type"] == "turn":
        print(json.dumps({"type": "move", "move": m["legal_moves"][0]}), flush=True)
    elif m["type"] == "quit":
        break
"""


def test_peak_memory_is_the_tree_s_high_water_mark(tmp_path):
    """A bot that touches 60 MiB once shows at least that, though it freed it."""
    bot = tmp_path / "hungry.py"
    bot.write_text(HUNGRY)
    path = tmp_path / "t.yaml"
    path.write_text(f"game: oxono\ntime_control: 5+0.1\nbots:\n  - {{name: hungry, cmd: python {bot}}}\n{OTHER}")
    result = arena_cli("check", path, "--games", "1")
    assert result.exit_code == 0, result.stdout
    mib = int(table_rows(result.stdout)["hungry"][5].removesuffix(" MiB"))
    assert 60 <= mib < 200, mib


HUNGRY = """\
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        block = bytearray(60 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        del block
        print(json.dumps({"type": "ready"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"type": "move", "move": m["legal_moves"][0]}), flush=True)
    elif m["type"] == "quit":
        break
"""


# -- one bot: --cwd, and the Java bot --------------------------------------------


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_the_java_bot_passes_the_check_in_its_cwd(java_bot, game):
    result = arena_cli("check", "java RandomBot", "--cwd", java_bot, "--game", game, "--games", "4")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "name JavaRandomBot, version 1.0, author Totem Arena" in result.stdout
    assert result.stdout.splitlines()[-1] == "all checks passed"


def test_without_its_cwd_the_java_bot_fails_to_start(java_bot):
    result = arena_cli("check", "java RandomBot")
    assert result.exit_code == 1
    assert "Could not find or load main class RandomBot" in result.stdout


def test_a_cwd_that_is_not_a_directory_is_one_line(tmp_path):
    result = arena_cli("check", "python bot.py", "--cwd", tmp_path / "nowhere")
    assert result.exit_code == 2 and "--cwd: no such directory" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_cwd_is_where_a_relative_program_is_looked_up(tmp_path):
    (tmp_path / "bot.py").write_text((ROOT / "bots" / "random_bot.py").read_text())
    steps = check_bot("python bot.py", "oxono", games=1, cwd=tmp_path)
    assert all(step.ok for step in steps), steps
    missing = check_bot("./bot", "oxono", cwd=tmp_path)
    assert missing[0].detail == f"./bot not found in {tmp_path} (not built?)"


SNOOP = """\
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        try:
            seen = "SECRET" in open(sys.argv[1]).read()
        except OSError:
            seen = False
        print(json.dumps({"type": "error", "message": "I can read the tournament file"} if seen else {"type": "ready"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"type": "move", "move": m["legal_moves"][0]}), flush=True)
    elif m["type"] == "quit":
        break
"""


def test_a_bot_is_checked_in_the_sandbox_the_file_gives_it(tmp_path):
    """Under the file's sandbox the bot cannot see the tournament file, as in
    the tournament; the same bot without a sandbox can, and says so."""
    needs.bwrap()
    bot = tmp_path / "snoop.py"
    bot.write_text(SNOOP)
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
# SECRET: what a tournament hides from a sandboxed bot
game: oxono
time_control: 5+0.1
bots:
  - {{name: boxed, cmd: python {bot} {path}, sandbox: bwrap}}
  - {{name: bare, cmd: python {bot} {path}}}
""")
    result = arena_cli("check", path, "--games", "2")
    assert result.exit_code == 1
    rows = table_rows(result.stdout)
    assert rows["boxed"][1:4] == ["passed", "2", "0"]
    assert rows["bare"][1] == "FAILED" and rows["bare"][6] == "did not start: refused to start: I can read the tournament file"


@pytest.mark.parametrize("signal_name", ["STOP", "KILL"])
def test_a_bot_that_stops_or_kills_its_checker_is_a_row_not_a_hang(tmp_path, signal_name):
    """The bot stops (or kills) the arena's process checking it: that process
    is killed with the bot at the deadline (at once when it died), the row
    says why, and the other bots are checked all the same."""
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
game: oxono
time_control: 5+0.1
bots:
  - {{name: sly, cmd: python {BOTS / 'stop_parent_on_hello.py'} {signal_name}}}
{OTHER}""")
    started = time.monotonic()
    rows = check_tournament(load_config(path), games=2, deadline_s=3)
    assert time.monotonic() - started < 15
    sly, other = rows
    assert not sly.passed and sly.games == 0
    if signal_name == "STOP":
        assert sly.reason == ("the arena's process checking it was silent for more than 3 s and was killed "
                              "(a bot that stops its parent with SIGSTOP does that)")
    else:
        assert sly.reason == ("the arena's process checking it died (exit code -9; a bot that kills its parent does that)")
    assert other.passed and other.games == 2


def test_the_plain_table_wraps_a_long_reason_and_md_keeps_it_on_one_row():
    reason = "did not start: " + " ".join(f"word{i}" for i in range(80))
    rows = [BotCheck("long", False, reason, 0, 0, None, None), BotCheck("good", True, "", 30, 0, 1.5, 2**20)]
    plain = render_checks(rows, TimeControl(5000, 100))
    assert max(len(line) for line in plain.splitlines()) < 80 + REASON_WIDTH + 20
    assert table_rows(plain)["long"][6] == reason
    md = render_checks(rows, TimeControl(5000, 100), "md").splitlines()
    assert len(md) == 4 and md[0].startswith("| bot ") and md[0].split("|")[-2].strip() == "warnings" and reason in md[2]


CHATTY_AND_WRITER = """\
game: oxono
time_control: 5+0.1
bots_from: submissions
bots:
  - {{name: good, cmd: python -m bots.random_bot, cwd: {root}}}
  - {{name: chatty, cmd: python {bots}/chatty.py}}
"""


def test_check_warns_of_a_chatty_bot_and_one_writing_into_its_folder_in_every_format(tmp_path):
    team = tmp_path / "submissions" / "team-w"
    team.mkdir(parents=True)
    shutil.copy(ROOT / "bots" / "random_bot.py", team / "random_bot.py")
    (team / "bot.py").write_text("open('state.txt', 'a').write('x')\nimport runpy\nrunpy.run_path('random_bot.py', run_name='__main__')\n")
    (team / "bot.yaml").write_text("cmd: python bot.py\n")
    path = tmp_path / "t.yaml"
    path.write_text(CHATTY_AND_WRITER.format(root=ROOT, bots=BOTS))
    plain = arena_cli("check", path, "-n", "1")
    assert plain.exit_code == 0, plain.stdout + plain.stderr
    rows = table_rows(plain.stdout)
    assert rows["good"][6] == "-" and re.fullmatch(r"warning: wrote \d+ KiB to stderr in one game \(over 64 KiB: .*", rows["chatty"][6])
    assert rows["team-w"][6].startswith("warning: wrote into its own folder (state.txt added): a new version of it as it plays, "
                                       "so a run forfeits its later starts")
    assert plain.stdout.splitlines()[-2:] == ["warnings for 2 of 3 bots: chatty, team-w",
                                               "all 3 bots passed 1 games each against the random bot"]
    (team / "state.txt").unlink()
    found = json.loads(arena_cli("check", path, "-n", "1", "-f", "json").stdout)
    assert [(row["bot"], row["passed"], len(row["warnings"])) for row in found] == [("good", True, 0), ("chatty", True, 1), ("team-w", True, 1)]
    (team / "state.txt").unlink()
    table = list(csv.DictReader(io.StringIO(arena_cli("check", path, "-n", "1", "-f", "csv").stdout)))
    assert [row["bot"] for row in table] == ["good", "chatty", "team-w"]
    assert table[2]["warnings"].startswith("wrote into its own folder") and int(table[0]["peak_memory_bytes"]) > 0
    md = arena_cli("check", path, "-n", "1", "-f", "md")
    assert md.stdout.startswith("| bot ") and "| team-w " in md.stdout
    assert arena_cli("check", "python bot.py", "-f", "csv").exit_code == 2


def test_one_bot_s_check_warns_of_a_write_into_its_team_folder(tmp_path):
    shutil.copy(ROOT / "bots" / "random_bot.py", tmp_path / "random_bot.py")
    (tmp_path / "bot.py").write_text("open('state.txt', 'a').write('x')\nimport runpy\nrunpy.run_path('random_bot.py', run_name='__main__')\n")
    (tmp_path / "bot.yaml").write_text("cmd: python bot.py\n")
    steps = check_bot("python bot.py", "oxono", games=1, cwd=tmp_path)
    assert [(s.name, s.ok, s.warning) for s in steps[-1:]] == [("leaves its own folder as it is", True, True)]
    assert steps[-1].detail.startswith("wrote into its own folder (state.txt added)")
    shown = arena_cli("check", f"python {BOTS / 'chatty.py'}", "-n", "1")
    assert shown.exit_code == 0 and "warn writes at most 64 KiB to stderr a game: wrote " in shown.stdout, shown.stdout
