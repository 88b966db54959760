"""The protocol log (``debug``): every line a bot was sent and sent back, in
order, with times, in ``logs/<bot>/games/<game id>.protocol.log``, sandboxed
or not; shown by ``arena show --protocol``; bounded; off by default."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import needs
from arena.bot import protocol_log
from arena.bot.protocol_log import ProtocolLog, protocol_log_path
from arena.base.safe_files import RefusedFile
from arena.cli import app
from arena.results.logs import game_log, protocol_log as read_protocol_log
from arena.run.bot_option import bot_from_option
from arena.run.config import ConfigError, load_config, with_debug
from arena.run.tournament import run_tournament
from builders import BOTS, ROOT

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

LINE = re.compile(rb" *(\d+\.\d) ([<>!]) (.*)")
HEAD = re.compile(rb"=== game (\S+): bot (\S+), started \S+ \(arena clock, UTC\); ms since then, > to the bot, < from it ===")
END = re.compile(rb"=== game (\S+): ended \S+; (\d+) lines sent, (\d+) received; (\d+) bytes, (\d+) kept ===")


def run(tmp_path: Path, bot: str, forfeits: bool = False) -> tuple[Path, list]:
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\ngame: oxono\ntime_control: 30+1\nconcurrency: 1\noutput: out\n"
                    f"bots:\n  - {bot}\n  - {{name: rnd, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n")
    config = load_config(path)
    summary = run_tournament(config)
    assert summary.played == summary.total >= 2
    assert all((r.forfeit_by is not None) == forfeits for r in summary.records)
    return config.output, summary.records


def entries(data: bytes) -> list[tuple[float, bytes, bytes]]:
    """(ms, direction, line) of each line of a protocol log between its frame lines, checked framed."""
    lines = data.split(b"\n")
    assert HEAD.fullmatch(lines[0]) and END.fullmatch(lines[-2]) and lines[-1] == b"", data[:300]
    found = []
    for line in lines[1:-2]:
        match = LINE.fullmatch(line)
        assert match, line[:200]
        found.append((float(match[1]), match[2], match[3]))
    return found


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_every_line_of_a_game_is_logged_in_order_sandboxed_or_not(tmp_path, sandbox):
    if sandbox == "bwrap":
        needs.bwrap()
    # echo_bot writes each line it receives to its stderr: what the bot saw, to compare the log with.
    out, records = run(tmp_path, f"{{name: echo, cmd: [python, {BOTS / 'echo_bot.py'}], sandbox: {sandbox}, debug: true}}")
    hellos = 0
    for record in records:
        data = read_protocol_log(out, "echo", record.game_id)
        assert data is not None
        logged = entries(data)
        times = [ms for ms, _, _ in logged]
        assert times == sorted(times) and times[0] >= 0
        sent = [line for _, way, line in logged if way == b">"]
        received = [json.loads(line) for _, way, line in logged if way == b"<"]
        # What the bot received, as it says on its stderr, is what the log says it was sent, line for line
        # (but for game_over, which it may write after the game's stderr log is closed: then it is in the next's).
        seen = [line.removeprefix("got: ") for line in game_log(out, "echo", record.game_id).splitlines()
                if line.startswith("got: ")]
        seen = [line for line in seen if json.loads(line).get("game_id", record.game_id) == record.game_id]
        assert [line.decode() for line in sent] in (seen, seen + [sent[-1].decode()])
        messages = [json.loads(line) for line in sent]
        kinds = [m["type"] for m in messages]
        # The first game starts the bot (hello, ready); the process is kept for the others.
        hello = kinds[0] == "hello"
        hellos += hello
        assert kinds == ["hello"] * hello + ["new_game"] + ["turn"] * (len(kinds) - 2 - hello) + ["game_over"]
        seat = list(record.players.values()).index("echo")
        plies = list(range(len(record.moves)))[seat::2]
        assert [m["ply"] for m in messages if m["type"] == "turn"] == plies
        assert [m["move"] for m in received if m["type"] == "move"] == [m.move for m in record.moves][seat::2]
        assert messages[-1]["moves"] == [m.move for m in record.moves]
        # Sent and received alternate as the game went: each turn answered before the next is sent.
        ways = b"".join(way for _, way, _ in logged if way != b"!")
        assert re.fullmatch(rb"(><)?>(><)*>", ways), ways
        end = END.fullmatch(data.split(b"\n")[-2])
        assert int(end[2]) == len(sent) and int(end[3]) == len(received) and end[4] == end[5]
        # Off by default: the other bot has no protocol log.
        assert not protocol_log_path(out / "logs" / "rnd", record.game_id).exists()
        assert game_log(out, "rnd", record.game_id) is not None
    assert hellos == 1


def test_a_bots_lines_are_kept_as_received_and_shown_safe(tmp_path):
    out, records = run(tmp_path, f"{{name: raw, cmd: [python, {BOTS / 'raw_bytes.py'}], debug: true}}", forfeits=True)
    record = min(records, key=lambda r: r.game_id)
    game_id = record.game_id
    assert record.players[record.forfeit_by] == "raw" and record.reason == "protocol_error"
    data = read_protocol_log(out, "raw", game_id)
    received = [line for _, way, line in entries(data) if way == b"<"]
    # Byte for byte, the line that lost the game last: the byte that is not UTF-8, the escape, the \r.
    assert received[0] == b'{"type":"ready","name":"caf\xc3\xa9 \xff"}\r'
    assert received[-1].startswith(b'\x1b[2J{"type":"move","move":"') and received[-1].endswith(b'"}\r')
    shown = CliRunner().invoke(app, ["show", str(out), game_id, "--protocol"])
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\r" not in shown.output
    assert 'name":"café ' in shown.output and f"protocol of raw ({out}/logs/raw/games/{game_id}.protocol.log):" in shown.output
    assert "protocol of rnd" not in shown.output


def test_show_protocol_says_when_there_is_no_log(tmp_path):
    out, records = run(tmp_path, f"{{name: plain, cmd: python -m bots.greedy, cwd: {ROOT}}}")
    shown = CliRunner().invoke(app, ["show", str(out), records[0].game_id, "--protocol"])
    assert shown.exit_code == 2
    assert shown.output.strip().splitlines()[-1] == (
        f"error: no protocol log of this game in {out}: play it with 'debug: true' on the bot (or --debug BOT)")
    assert not list((out / "logs" / "plain" / "games").glob("*.protocol.log"))


def test_a_game_keeps_its_first_and_last_bytes_and_says_where_it_was_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol_log, "HEAD_BYTES", 1000)
    monkeypatch.setattr(protocol_log, "TAIL_BYTES", 500)
    log = ProtocolLog(tmp_path / "logs" / "a", tmp_path / "logs")
    log.begin_game("g1", "a")
    log.sent(b'{"type":"turn"}\n')
    for i in range(1000):
        log.received(b"line %d " % i + b"x" * 100)
    log.end_game()
    log.close()
    data = (tmp_path / "logs" / "a" / "games" / "g1.protocol.log").read_bytes()
    end = END.fullmatch(data.split(b"\n")[-2])
    assert end and (int(end[2]), int(end[3])) == (1, 1000) and int(end[5]) == 1500 < int(end[4])
    dropped = int(end[4]) - 1500
    assert f"\n[... {dropped} bytes of protocol dropped here: a game's log keeps its first 1000 and last 500 bytes ...]\n".encode() in data
    assert b' > {"type":"turn"}\n' in data and data.split(b"\n")[-3].endswith(b"line 999 " + b"x" * 100)


def test_a_link_planted_at_the_log_is_not_written_through(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    games = tmp_path / "logs" / "a" / "games"
    games.mkdir(parents=True)
    (games / "g1.protocol.log").symlink_to(target)
    log = ProtocolLog(tmp_path / "logs" / "a", tmp_path / "logs")
    with pytest.raises(RefusedFile, match="a symbolic link is in its place"):
        log.begin_game("g1", "a")
    log.sent(b"{}\n")  # no game: nothing written anywhere
    log.close()
    assert target.read_text() == "keep me\n"


def test_debug_is_asked_for_in_the_file_on_the_command_line_or_in_a_bot_option(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(f"game: oxono\ntime_control: 1+0\nbots:\n  - {{name: a, cmd: python -m bots.greedy, cwd: {ROOT}}}\n"
                    f"  - {{name: b, cmd: python -m bots.greedy, cwd: {ROOT}, debug: true}}\n")
    config = load_config(path)
    assert [bot.debug for bot in config.bots] == [False, True]
    assert [bot.debug for bot in with_debug(config, ["a"]).bots] == [True, True]
    with pytest.raises(ConfigError, match=r"^--debug: no bot named 'c'; bots: a, b$"):
        with_debug(config, ["a,c"])
    path.write_text(path.read_text().replace("debug: true", "debug: 3"))
    with pytest.raises(ConfigError, match="bots\\[1\\].debug: must be true or false, got integer '3'"):
        load_config(path)
    assert bot_from_option("cmd=./x,debug=true").debug and not bot_from_option("cmd=./x").debug
    with pytest.raises(ConfigError, match="bad setting 'debug=yes': write debug=true or debug=false"):
        bot_from_option("cmd=./x,debug=yes")
