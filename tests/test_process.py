"""The bot process layer: lines in and out by a deadline, stderr drained and
capped, and no process left behind whatever the bot does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from arena.bot import protocol
from arena.bot.process import (
    BotProcess,
    LineTimeout,
    LineTooLong,
    ProcessExited,
    StartError,
    WriteTimeout,
)
from builders import BOTS, bot_cmd, running
from conftest import SOON, group_members, soon

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc"),
]

MOVES = ["Oa4 a3", "Ob1 b2"]


def script_cmd(source: str) -> list[str]:
    return [sys.executable, "-c", source]


def hello() -> bytes:
    return protocol.encode(protocol.hello("oxono", "test", {}))


def turn(ply: int = 0, remaining_ms: int = 1000) -> bytes:
    return protocol.encode(protocol.turn("g1", ply, {}, MOVES, None, {"remaining_ms": remaining_ms}))


def handshake(bot: BotProcess) -> None:
    bot.send_line(hello(), soon())
    assert protocol.decode(bot.read_line(soon()), "ready")["type"] == "ready"


def wait_until(condition: Callable[[], bool], timeout: float = SOON) -> bool:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


# --- lines ---


def test_round_trip_and_crlf_and_bad_utf8():
    echo = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line.upper()); sys.stdout.flush()"
    with BotProcess(script_cmd(echo)) as bot:
        bot.send_line(b"hello\n", soon())
        assert bot.read_line(soon()) == "HELLO"
        bot.send_line(b"crlf\r\n", soon())
        assert bot.read_line(soon()) == "CRLF"
        bot.send_line("\u00e9t\u00e9\n".encode(), soon())
        assert bot.read_line(soon()) == "\u00c9T\u00c9"
    bad = "import os; os.write(1, b'ab\\xffcd\\n'); import time; time.sleep(60)"
    with BotProcess(script_cmd(bad)) as bot:
        assert bot.read_line(soon()) == "ab\ufffdcd"


def test_several_lines_in_one_chunk_are_kept_for_later_calls():
    source = "import os, time; os.write(1, b'one\\ntwo\\r\\n\\nthree\\nfou'); time.sleep(0.3); os.write(1, b'r\\n'); time.sleep(60)"
    with BotProcess(script_cmd(source)) as bot:
        assert [bot.read_line(soon()) for _ in range(5)] == ["one", "two", "", "three", "four"]


def test_a_received_line_is_returned_even_after_the_deadline():
    with BotProcess(script_cmd("import time; print('x', flush=True); time.sleep(60)")) as bot:
        time.sleep(0.5)  # the line is in the pipe before we look
        assert bot.read_line(time.monotonic() - 1) == "x"


def test_read_line_times_out_on_a_hanging_bot():
    with BotProcess(bot_cmd("hang")) as bot:
        handshake(bot)
        bot.send_line(turn(), soon())
        start = time.monotonic()
        with pytest.raises(LineTimeout):
            bot.read_line(start + 0.3)
        assert time.monotonic() - start >= 0.3
        assert bot.alive


@pytest.mark.parametrize("delay", [0, 0.1])
def test_spinning_for_an_answer_reads_the_same_lines_and_keeps_the_deadline(delay):
    # An answer within the spin and one long after it; two lines in one chunk.
    echo = (
        "import sys, time\nfor line in sys.stdin:\n"
        f"    time.sleep({delay}); sys.stdout.write(line.upper() * (1 + line.startswith('two'))); sys.stdout.flush()"
    )
    with BotProcess(script_cmd(echo)) as bot:
        answers = []
        for word in (b"one\n", b"two\n", b"three\n"):
            bot.send_line(word, soon())
            answers.append(bot.read_line(soon(), spin=True))
        assert answers == ["ONE", "TWO", "TWO"]  # the second TWO was pending: read with no wait
        assert bot.read_line(soon(), spin=True) == "THREE"
    with BotProcess(bot_cmd("hang")) as bot:
        handshake(bot)
        bot.send_line(turn(), soon())
        start = time.monotonic()
        with pytest.raises(LineTimeout):
            bot.read_line(start + 0.3, spin=True)
        assert time.monotonic() - start >= 0.3


def test_a_line_over_the_limit_fails_without_waiting_for_its_end():
    # 1 MiB + 10 bytes and no newline, ever: only the size can end the wait.
    source = "import os, time; os.write(1, b'x' * ((1 << 20) + 10)); time.sleep(60)"
    with BotProcess(script_cmd(source)) as bot:
        with pytest.raises(LineTooLong):
            bot.read_line(time.monotonic() + 60)


def test_huge_line_bot_raises_line_too_long():
    with BotProcess(bot_cmd("huge_line")) as bot:
        handshake(bot)
        bot.send_line(turn(), soon())
        with pytest.raises(LineTooLong):
            bot.read_line(time.monotonic() + 60)


def test_line_limit_is_exact_and_the_rest_of_a_long_line_is_skipped():
    source = "import os, time; os.write(1, b'0123456789\\n0123456789A\\nok\\n'); time.sleep(60)"
    with BotProcess(script_cmd(source), max_line_bytes=10) as bot:
        assert bot.read_line(soon()) == "0123456789"
        with pytest.raises(LineTooLong):
            bot.read_line(soon())
        assert bot.read_line(soon()) == "ok"
    # The same when the long line arrives in pieces and the limit trips first.
    source = "import os, time; os.write(1, b'a' * 30); time.sleep(0.3); os.write(1, b'bbb\\nafter\\n'); time.sleep(60)"
    with BotProcess(script_cmd(source), max_line_bytes=10) as bot:
        with pytest.raises(LineTooLong):
            bot.read_line(soon())
        assert bot.read_line(soon()) == "after"


# --- writing ---


def test_send_line_times_out_when_the_bot_never_reads():
    with BotProcess(bot_cmd("no_read")) as bot:
        start = time.monotonic()
        with pytest.raises(WriteTimeout):
            bot.send_line(b"x" * (8 << 20) + b"\n", start + 0.5)
        assert SOON > time.monotonic() - start >= 0.5


def test_send_line_to_an_exited_bot_raises_process_exited():
    with BotProcess(script_cmd("pass")) as bot:
        assert wait_until(lambda: not bot.alive)
        with pytest.raises(ProcessExited) as error:
            bot.send_line(b"anyone?\n", soon())
        assert error.value.returncode == 0


def test_send_line_requires_a_newline():
    with BotProcess(bot_cmd("no_read")) as bot:
        with pytest.raises(ValueError):
            bot.send_line(b"no newline", soon())


# --- exits ---


def test_eof_raises_process_exited_with_code_and_stderr():
    with BotProcess(bot_cmd("exit_at_start")) as bot:
        with pytest.raises(ProcessExited) as error:
            bot.read_line(soon())
    assert error.value.returncode == 1
    assert "missing configuration" in error.value.stderr_tail
    assert "code 1" in str(error.value) and "missing configuration" in str(error.value)


def test_crash_midgame_exits_with_code_3_at_its_third_turn():
    with BotProcess(bot_cmd("crash_midgame")) as bot:
        handshake(bot)
        for ply in (0, 2):
            bot.send_line(turn(ply), soon())
            assert protocol.decode(bot.read_line(soon()), "move")["move"] == MOVES[0]
        bot.send_line(turn(4), soon())
        with pytest.raises(ProcessExited) as error:
            bot.read_line(soon())
        assert error.value.returncode == 3
        assert bot.returncode == 3 and not bot.alive


def test_fork_child_exit_is_noticed_before_the_deadline_and_kill_ends_the_child():
    bot = BotProcess(bot_cmd("fork_child"))
    bot.start()
    try:
        handshake(bot)
        bot.send_line(turn(), soon())
        start = time.monotonic()
        with pytest.raises(ProcessExited) as error:
            bot.read_line(start + 60)  # EOF never comes: the child holds stdout
        assert time.monotonic() - start < SOON
        assert error.value.returncode == 0
        children = group_members(bot.pid)
        assert len(children) == 1 and bot.pid not in children
    finally:
        bot.kill()
    assert wait_until(lambda: not any(running(pid) for pid in children))
    assert group_members(bot.pid) == set()


def test_bot_runs_in_its_own_session_and_env_and_cwd_are_applied(tmp_path):
    source = "import os; print(os.environ['TOTEM_TEST'], os.environ['PATH'] != '', os.getcwd(), flush=True); input()"
    with BotProcess(script_cmd(source), cwd=tmp_path, env={"TOTEM_TEST": "yes"}) as bot:
        assert os.getpgid(bot.pid) == bot.pid
        assert os.getsid(bot.pid) == bot.pid
        assert bot.read_line(soon()) == f"yes True {tmp_path}"


# --- stderr ---


def test_stderr_flood_is_drained_and_capped_while_the_bot_keeps_playing(tmp_path):
    log = tmp_path / "logs" / "flood.log"
    cap = 200_000
    with BotProcess(bot_cmd("stderr_flood"), log_path=log, max_log_bytes=cap) as bot:
        handshake(bot)
        assert wait_until(lambda: log.exists() and log.stat().st_size > cap)
        # Far more than a pipe holds has been written by now: still answering.
        for ply in range(0, 20, 2):
            bot.send_line(turn(ply), soon())
            assert protocol.decode(bot.read_line(soon()), "move")["move"] == MOVES[0]
    marker = f"\n[log truncated at {cap} bytes]\n".encode()
    content = log.read_bytes()
    assert len(content) == cap + len(marker)
    assert content.endswith(marker)
    assert content.startswith(b"flood flood")


def test_stderr_goes_to_the_log_and_the_cap_holds_across_restarts(tmp_path):
    log = tmp_path / "echo.log"
    bot = BotProcess(bot_cmd("echo_bot"), log_path=log, max_log_bytes=1000)
    for _ in range(2):
        bot.start()
        handshake(bot)
        bot.stop()
    assert log.read_text().count('got: {"type":"hello"') == 2
    bot = BotProcess(script_cmd("import sys; sys.stderr.write('y' * 5000)"), log_path=log, max_log_bytes=1000)
    bot.start()
    assert wait_until(lambda: not bot.alive)
    bot.stop()
    assert len(log.read_bytes()) == 1000 + len(b"\n[log truncated at 1000 bytes]\n")


# --- start errors ---


def test_start_error_for_a_missing_program():
    bot = BotProcess(["no-such-program-totem-xyz", "--flag"])
    with pytest.raises(StartError) as error:
        bot.start()
    message = str(error.value)
    assert "no-such-program-totem-xyz --flag" in message and "\n" not in message
    assert not bot.alive
    bot.kill()  # harmless on a bot that never started


def test_start_error_for_a_program_that_is_not_executable(tmp_path):
    program = tmp_path / "bot.sh"
    program.write_text("#!/bin/sh\necho hi\n")
    program.chmod(0o644)
    with pytest.raises(StartError, match="not executable") as error:
        BotProcess([str(program)]).start()
    assert str(program) in str(error.value)


def test_start_error_for_a_missing_working_directory(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(StartError, match="does not exist") as error:
        BotProcess(bot_cmd("echo_bot"), cwd=missing).start()
    assert "echo_bot.py" in str(error.value) and str(missing) in str(error.value)


def test_a_failed_chdir_is_not_reported_as_a_missing_program(tmp_path):
    # The directory may vanish between the check before the start and the
    # child's chdir; Popen then names the directory, not the program.
    from arena.bot.process import _start_cause

    with pytest.raises(FileNotFoundError) as error:
        subprocess.Popen(["/bin/true"], cwd=tmp_path / "gone")
    assert _start_cause("/bin/true", error.value) == f"no such file or directory {str(tmp_path / 'gone')!r}"
    with pytest.raises(FileNotFoundError) as error:
        subprocess.Popen([str(tmp_path / "nobot")])
    assert _start_cause(str(tmp_path / "nobot"), error.value) == f"no such program {str(tmp_path / 'nobot')!r}"


def test_start_twice_is_refused_but_restart_after_stop_works():
    bot = BotProcess(bot_cmd("echo_bot"))
    bot.start()
    try:
        with pytest.raises(RuntimeError):
            bot.start()
        first = bot.pid
        bot.stop()
        bot.start()
        assert bot.pid != first
        handshake(bot)
    finally:
        bot.kill()


# --- stopping ---


def test_stop_lets_a_bot_that_obeys_eof_exit_by_itself():
    bot = BotProcess(bot_cmd("echo_bot"))
    bot.start()
    handshake(bot)
    bot.stop(grace=SOON)
    assert bot.returncode == 0  # exited on its own, was not killed
    assert not bot.alive


def test_stop_kills_a_bot_that_ignores_eof_after_the_grace():
    bot = BotProcess(bot_cmd("no_read"))
    bot.start()
    start = time.monotonic()
    bot.stop(grace=0.3)
    assert time.monotonic() - start >= 0.3
    assert bot.returncode == -signal.SIGKILL
    assert group_members(bot.pid) == set()


def test_kill_and_stop_are_idempotent_and_reading_after_kill_raises():
    bot = BotProcess(bot_cmd("hang"))
    bot.start()
    bot.kill()
    bot.kill()
    bot.stop()
    assert bot.returncode == -signal.SIGKILL
    with pytest.raises(ProcessExited):
        bot.read_line(soon())
    with pytest.raises(ProcessExited):
        bot.send_line(b"x\n", soon())


def test_a_bot_dies_when_its_arena_is_killed_with_sigkill():
    arena = (
        "import sys, time\n"
        "from arena.bot.process import BotProcess\n"
        f"bot = BotProcess([sys.executable, {str(BOTS / 'no_read.py')!r}])\n"
        "bot.start()\n"
        "print(bot.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", arena], stdout=subprocess.PIPE, text=True)
    try:
        bot_pid = int(parent.stdout.readline())
        assert running(bot_pid)
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
    assert wait_until(lambda: not running(bot_pid))


# --- the zoo of test bots, as seen from the process layer ---


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("echo_bot", '{"type": "move", "move": "Oa4 a3"}'),
        ("non_json", "hello world"),
        ("illegal_move", '{"type": "move", "move": "Zz9 z9"}'),
        ("wrong_type", '{"type": "ready"}'),
        ("bot_error", '{"type": "error", "message": "I give up"}'),
        ("slow", '{"type": "move", "move": "Oa4 a3"}'),
        ("half_time", '{"type": "move", "move": "Oa4 a3"}'),
    ],
)
def test_zoo_bot_answers_a_turn_as_documented(name, answer):
    args = ("0.1",) if name == "slow" else ()
    with BotProcess(bot_cmd(name, *args)) as bot:
        handshake(bot)
        bot.send_line(protocol.encode(protocol.new_game("g1", "oxono", "pink", {}, {"per_move_ms": 200}, {}, 1)), soon())
        bot.send_line(turn(remaining_ms=200), soon())
        assert bot.read_line(soon()) == answer


def test_zoo_bots_that_fail_the_handshake():
    with BotProcess(bot_cmd("garbage_hello")) as bot:
        bot.send_line(hello(), soon())
        assert bot.read_line(soon()) == '{"type": "banana"}'
    with BotProcess(bot_cmd("no_hello")) as bot:
        bot.send_line(hello(), soon())
        with pytest.raises(LineTimeout):
            bot.read_line(time.monotonic() + 0.3)
    with BotProcess(bot_cmd("hello_then_die")) as bot:
        handshake(bot)
        bot.send_line(protocol.encode(protocol.new_game("g1", "oxono", "pink", {}, {"per_move_ms": 200}, {}, 1)), soon())
        with pytest.raises(ProcessExited) as error:
            bot.read_line(soon())
        assert error.value.returncode == 0


def test_slow_and_half_time_bots_take_their_time():
    for cmd, remaining_ms, least in ((bot_cmd("slow", "0.3"), 1000, 0.3), (bot_cmd("half_time"), 800, 0.4)):
        with BotProcess(cmd) as bot:
            handshake(bot)
            bot.send_line(turn(remaining_ms=remaining_ms), soon())
            with pytest.raises(LineTimeout):
                bot.read_line(time.monotonic() + least * 0.5)
            assert protocol.decode(bot.read_line(soon()), "move")["move"] == MOVES[0]


def test_a_bot_whose_output_closes_just_after_it_exits_is_not_said_to_have_left_a_process():
    # As a sandbox's processes close the pipe a moment after the bot's exit:
    # the course's bot with a syntax error was said to have started a process.
    bot = BotProcess(["sh", "-c", "(sleep 0.2) & exit 1"])
    bot.start()
    try:
        with pytest.raises(ProcessExited) as error:
            bot.read_line(soon())
        assert "still holds" not in str(error.value) and error.value.returncode == 1
    finally:
        bot.kill()
