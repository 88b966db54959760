"""Each game's stderr of each bot, in a file of its own found by the game's id,
framed by the arena's timestamps and bounded."""

import re
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from arena.cli import app

from arena.bot.stderr_log import GAME_HEAD_BYTES, GAME_TAIL_BYTES, StderrLog, arena_time
from arena.results.logs import game_log, game_log_file, log_tail
from arena.run.config import load_config
from arena.run.tournament import run_tournament
from builders import BOTS, ROOT


pytestmark = pytest.mark.usefixtures("no_leaked_processes")

STAMP = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"


def run(tmp_path, entries, concurrency=1):
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\ngame: oxono\ntime_control: 30+1\nconcurrency: {concurrency}\noutput: out\nbots:\n{entries}")
    config = load_config(path)
    summary = run_tournament(config)
    return config.output, summary


def stamps(text):
    head = re.match(rf"=== game (\S+): bot (\S+), started {STAMP} \(arena clock, UTC\) ===\n", text)
    tail = re.search(rf"\n=== game (\S+): ended {STAMP}; (\d+) bytes of stderr, (\d+) kept ===\n\Z", text)
    assert head and tail, text[:200] + " ... " + text[-200:]
    parse = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return head, tail, parse(head.group(3)), parse(tail.group(2))


def test_a_chatty_bots_games_each_keep_their_own_lines_bounded(tmp_path):
    before = datetime.now(timezone.utc) - timedelta(milliseconds=1)
    out, summary = run(tmp_path, f"  - {{name: chatty, cmd: [python, {BOTS / 'chatty.py'}]}}\n"
                                 f"  - {{name: rnd, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n")
    after = datetime.now(timezone.utc) + timedelta(milliseconds=1)
    assert summary.played == summary.total >= 2 and all(r.forfeit_by is None for r in summary.records)
    for record in summary.records:
        text = game_log(out, "chatty", record.game_id)
        assert text is not None
        head, tail, started, ended = stamps(text)
        assert head.group(1) == tail.group(1) == record.game_id and head.group(2) == "chatty"
        assert before <= started <= ended <= after
        # Only this game's lines: every line the bot wrote names its game.
        body = text.splitlines()[1:-1]
        # (but the two the cut runs through: the head ends and the tail starts mid-line).
        cut = next(i for i, line in enumerate(body) if line.startswith("[... "))
        bot_lines = body[:cut - 1] + body[cut + 2:]
        assert len(bot_lines) > 100 and all(line.startswith(record.game_id + " ") for line in bot_lines if line)
        # Bounded: the first and the last of what it wrote, and a line saying how much was dropped.
        seen, kept = int(tail.group(3)), int(tail.group(4))
        assert seen >= 1024 * 1024 and kept == GAME_HEAD_BYTES + GAME_TAIL_BYTES
        dropped = re.findall(r"\[\.\.\. (\d+) bytes of stderr dropped here", text)
        assert [int(d) for d in dropped] == [seen - kept]
        assert body[0] == f"{record.game_id} FIRST move {body[0].split()[-1]}"
        assert body[-1].startswith(f"{record.game_id} LAST move ")
        assert len(text.encode()) < kept + 1000
    # The other bot's logs are found by the same ids, and hold no line of chatty's.
    for record in summary.records:
        text = game_log(out, "rnd", record.game_id)
        assert text is not None and "x" * 80 not in text
        _, tail, _, _ = stamps(text)
    assert game_log(out, "chatty", "no-such-game") is None
    assert game_log_file(out, "../chatty", summary.records[0].game_id) is None
    assert game_log_file(out, "chatty", "../../games") is None


#: Plays the first legal move; at its third turn it raises an error naming the game.
CRASHER = """import json, sys
game = None
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "new_game":
        game = message["game_id"]
        turns = 0
    elif message["type"] == "turn":
        turns += 1
        if turns == 3:
            print("\\x1b]0;owned\\x07\\x1b[2Jred alert", file=sys.stderr)
            raise RuntimeError("gave up in " + game)
        print(json.dumps({"type": "move", "move": message["legal_moves"][0]}), flush=True)
"""


def test_a_bots_crash_is_in_the_log_of_the_game_it_lost(tmp_path):
    (tmp_path / "crasher.py").write_text(CRASHER)
    out, summary = run(tmp_path, f"  - {{name: crash, cmd: [python, {tmp_path / 'crasher.py'}]}}\n"
                                 f"  - {{name: rnd, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n")
    lost = [r for r in summary.records if r.forfeit_by is not None and r.players[r.forfeit_by] == "crash"]
    assert lost
    for record in lost:
        text = game_log(out, "crash", record.game_id)
        assert text is not None
        stamps(text)
        assert f"RuntimeError: gave up in {record.game_id}" in log_tail(text)
        assert "Traceback" in text
    # arena show prints the end of each bot's stderr under the replay, the loser's first, safe for a terminal.
    record = lost[0]
    result = CliRunner().invoke(app, ["show", str(out), record.game_id, "--final"])
    assert result.exit_code == 0, result.output
    after = result.output.split(record.reason, 1)[1]
    crash_part, rnd_part = after.split("stderr of rnd")
    assert f"stderr of crash, last " in crash_part and f"games/{record.game_id}.log" in crash_part
    assert f"  | RuntimeError: gave up in {record.game_id}" in crash_part
    assert "\x1b" not in result.output and "\x07" not in result.output and "red alert" in crash_part
    assert f"  | === game {record.game_id}: ended " in rnd_part
    quiet = CliRunner().invoke(app, ["show", str(out), record.game_id, "--final", "--stderr", "0"])
    assert quiet.exit_code == 0 and "stderr of" not in quiet.output


def test_the_tournament_bound_keeps_only_a_tail(tmp_path, monkeypatch):
    from arena.bot import stderr_log
    monkeypatch.setattr(stderr_log, "BOT_BUDGET_BYTES", 10)
    (tmp_path / "logs").mkdir()
    log = StderrLog(tmp_path / "logs" / "w1.log", 1000)
    log.open()
    log.write(b"outside a game\n" * 2)  # the folder now holds more than the budget
    log.begin_game("g1", "bot")
    log.write(b"".join(b"line %d\n" % i for i in range(5000)))
    log.end_game()
    log.write(b"after\n")
    log.close()
    text = (tmp_path / "logs" / "games" / "g1.log").read_text()
    assert "this game keeps only the last 4096 bytes" in text
    assert "line 4999\n" in text and "line 0\n" not in text
    assert len(text.encode()) < 4096 + 600
    assert (tmp_path / "logs" / "w1.log").read_text() == "outside a game\n" * 2 + "after\n"


def test_a_games_folder_removed_during_a_run_is_made_again(tmp_path):
    """The folder of game files is opened once and kept: one removed (an
    organiser tidying up mid-run) is made again for the next game."""
    import shutil
    logs = tmp_path / "logs"
    log = StderrLog(logs / "w1.log", 1000, logs)
    log.begin_game("g1", "bot")
    log.write(b"first\n")
    log.end_game()
    shutil.rmtree(logs / "games")
    log.begin_game("g2", "bot")
    log.write(b"second\n")
    log.end_game()
    log.close()
    assert "second\n" in (logs / "games" / "g2.log").read_text()
    assert not (logs / "games" / "g1.log").exists()


def test_a_games_file_costs_no_truncation_when_new_and_no_empty_write(tmp_path, monkeypatch):
    """A new game's file is not truncated (on ext4 a truncation to 0 makes
    its close write it to disk: more than the rest of a game's logging), and
    a quiet bot's end costs no write of nothing; a game played again still
    starts its file from empty."""
    import os
    truncated: list[int] = []
    real_ftruncate = os.ftruncate
    monkeypatch.setattr(os, "ftruncate", lambda fd, size: (truncated.append(size), real_ftruncate(fd, size))[1])
    written: list[bytes] = []
    logs = tmp_path / "logs"
    log = StderrLog(logs / "w1.log", 1000, logs)
    log.begin_game("g1", "bot")
    handle = log._game.handle  # the file as the game writes it, its writes seen
    real_write = handle.write
    monkeypatch.setattr(handle, "write", lambda data: (written.append(bytes(data)), real_write(data))[1], raising=False)
    log.write(b"a line\n")
    log.end_game()
    assert truncated == [] and b"" not in written
    log.begin_game("g1", "bot")  # played again: its old file is emptied
    log.end_game()
    log.close()
    assert truncated == [0]
    text = (logs / "games" / "g1.log").read_text()
    assert text.count("=== game g1: bot bot, started") == 1 and "a line" not in text


def test_a_folder_of_many_games_is_measured_less_often(tmp_path, monkeypatch):
    """Measuring a bot's folder stats every file in it: with a file per game,
    every 50 games would cost a long run more each game (at a million games,
    20,000 stats a game).  It is measured every twentieth of its files."""
    from arena.bot import stderr_log
    logs = tmp_path / "logs"
    (logs / "games").mkdir(parents=True)
    for number in range(2000):  # a long run's games so far
        (logs / "games" / f"old{number}.log").write_text("=== a game ===\n")
    measures: list[tuple[int, int]] = []
    real = stderr_log._folder_bytes
    monkeypatch.setattr(stderr_log, "_folder_bytes", lambda root, d: measures.append(real(root, d)) or measures[-1])
    log = StderrLog(logs / "w1.log", 1000, logs)
    for number in range(100):
        log.begin_game(f"g{number}", "bot")
        log.end_game()
    log.close()
    assert measures == [(2000 * len("=== a game ===\n"), 2000)]


def test_arena_time_is_utc_with_milliseconds():
    assert arena_time(datetime(2026, 11, 23, 17, 0, 0, 123456, tzinfo=timezone.utc)) == "2026-11-23T17:00:00.123Z"
