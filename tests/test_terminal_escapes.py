"""A bot that writes terminal escape sequences (a window title, a cleared
screen, a clipboard write through OSC 52, C1 controls, a right-to-left
override) to stderr, or in its ``ready`` and ``error`` messages, never gets
one to the organiser's terminal: every command that quotes it (``arena run``
stopped by the pre-flight or forfeiting the bot, ``arena match``, ``arena
check`` with and without the sandbox, ``arena play``) prints it escaped.

The commands run as real processes with their output on pipes, and every
byte they write is checked: no ESC, no other C0 control but the line break,
no DEL, no C1 control, no bidi override."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import needs
from builders import ROOT

BOT = [sys.executable, str(ROOT / "tests" / "bots" / "terminal_escapes.py")]
#: Control characters (C0 but the line break, DEL, C1), bidi overrides and
#: isolates, lone surrogates: none may reach a terminal from a bot.
FORBIDDEN = set(range(0x00, 0x20)) - {0x0A} | set(range(0x7F, 0xA0)) | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process confinement"),
]


def arena(*args: str, stdin: str = "") -> subprocess.CompletedProcess[bytes]:
    """``arena ARGS`` in a process of its own, its output on pipes, no colour forced on."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE")}
    env.update(PYTHONPATH=str(ROOT), TERM="dumb")
    return subprocess.run([sys.executable, "-m", "arena", *args], input=stdin.encode(), capture_output=True,
                          cwd=ROOT, env=env, timeout=100)


def assert_escaped(result: subprocess.CompletedProcess[bytes]) -> str:
    """The output holds the bot's sequences, shown escaped, and no control character at all."""
    for name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
        assert b"\x1b" not in data, f"raw ESC on {name}: {data!r}"
        text = data.decode("utf-8")  # strict: no lone surrogate either
        bad = sorted({f"U+{ord(ch):04X}" for ch in text if ord(ch) in FORBIDDEN})
        assert not bad, f"control characters {bad} on {name}: {text!r}"
    output = (result.stdout + result.stderr).decode()
    assert "\\x1b]0;PWNED" in output and "\\x1b]52;c;" in output, output  # shown, escaped
    assert "Traceback" not in output
    return output


def tournament(tmp_path: Path, mode: str, extra: str = "") -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(
        f"name: t\ngame: oxono\ntime_control: 10+0.1\nconcurrency: 2\nseed: 3\noutput: out\nstartup_timeout: 5\n{extra}"
        f"bots:\n  - {{name: hostile, cmd: {json.dumps([*BOT, mode])}}}\n"
        f"  - {{name: a, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n"
    )
    return path


def test_run_stopped_by_the_pre_flight(tmp_path):
    result = arena("run", tournament(tmp_path, "start"))
    assert result.returncode == 2
    assert "error: bot 'hostile' did not start" in assert_escaped(result)


def test_run_forfeiting_a_bot_that_cannot_start(tmp_path):
    result = arena("run", tournament(tmp_path, "start", "startup_failures: forfeit\n"))
    assert result.returncode == 0, result.stderr
    output = assert_escaped(result)
    assert "warning: bot 'hostile' did not start" in output and "startup_failure 4" in output
    assert "Forfeits (the first of each bot" in output  # the stored detail, quoted under the standings


def test_run_with_a_bot_that_crashes_mid_game(tmp_path):
    result = arena("run", tournament(tmp_path, "midgame"), "-f", "github")
    assert result.returncode == 0, result.stderr
    assert "crash on its 2nd move" in assert_escaped(result)


@pytest.mark.parametrize("mode", ["start", "midgame"])
def test_match(mode):
    result = arena("match", " ".join([*BOT, mode]), "python -m bots.random_bot", "-n", "2", "--seed", "1")
    output = assert_escaped(result)
    if mode == "start":
        assert result.returncode == 2 and "did not start" in output
    else:
        assert result.returncode == 0 and "forfeits by terminal_escapes: crash 2" in output


@pytest.mark.parametrize("mode", ["start", "midgame", "error"])
def test_check(mode):
    result = arena("check", " ".join([*BOT, mode]))
    assert result.returncode == 1
    assert "FAIL" in assert_escaped(result)


def test_check_in_the_sandbox():
    needs.bwrap()
    result = arena("check", " ".join([*BOT, "start"]), "--sandbox", "bwrap")
    assert result.returncode == 1
    assert "FAIL starts and answers 'hello'" in assert_escaped(result)


def test_play_with_a_bot_that_cannot_start():
    result = arena("play", "--bot", " ".join([*BOT, "start"]), stdin="quit\n")
    assert result.returncode == 2
    assert "error: the bot could not start" in assert_escaped(result)


def test_play_with_a_bot_that_gives_up_saying_escapes():
    # The bot moves first and answers with an error message full of escapes;
    # its name (from its ready) holds them too.
    result = arena("play", "--bot", " ".join([*BOT, "error"]), "--color", "black", stdin="quit\n")
    assert result.returncode == 0, result.stderr
    output = assert_escaped(result)
    assert "against evil\\x1b]0;PWNED" in output and "bot_error: gave up: \\x1b]0;PWNED" in output
