"""arena/run/supervised.py: a child process of the arena that starts bots,
supervised one way (its answer, its deadline, its death with its bots), and
the one formula for its deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bot.process import ArenaWriteError
from arena.check import check_deadline_s
from arena.game.clock import TimeControl
from arena.run.executor import game_deadline_s
from arena.run.preflight import preflight_deadline_s
from arena.run.supervised import Lost, child_deadline_s, reply, start_child, supervise
from builders import ROOT, running, tournament

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc"),
]

#: A "bot" in a session of its own, as the arena runs bots, with a child of
#: its own: it prints that child's pid, then sleeps.
BOT_WITH_A_CHILD = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(120)\n"
)


def _start_a_bot(pids: Path) -> None:
    """In a child: start a bot with a child of its own, and note both pids."""
    bot = subprocess.Popen([sys.executable, "-c", BOT_WITH_A_CHILD], stdout=subprocess.PIPE, start_new_session=True)
    assert bot.stdout is not None
    pids.write_text(f"{bot.pid} {bot.stdout.readline().decode().strip()}")


def _upper(text: str) -> bytes:
    return text.upper().encode()


def _die_after_starting_a_bot(pids: Path, how: str) -> bytes:
    _start_a_bot(pids)
    if how == "SIGKILL":
        os.kill(os.getpid(), signal.SIGKILL)  # no handler runs: the bot is left behind
    os._exit(3)


def _cannot_write() -> bytes:
    raise ArenaWriteError("cannot open log file '/full/disk.log': No space left on device")


def _slow() -> bytes:
    time.sleep(60)
    return b"late"


def _echo(conn) -> None:
    while (message := conn.recv_bytes()) != b"":
        reply(conn, _upper, message.decode())


def test_every_job_gets_its_child_s_answer():
    answers = supervise(_upper, {"a": ("x",), "b": ("y",), "c": ("z",)}, kind="test", doing="testing it",
                        at_once=2, deadline_s=30)
    assert answers == {"a": b"X", "b": b"Y", "c": b"Z"}


def test_a_child_answers_request_after_request_on_its_pipe():
    child = start_child(_echo, (), name="arena-test-echo")
    for word in ("one", "two"):
        assert child.send(word.encode())
        assert child.receive() == word.upper().encode()
    assert child.send(b"")  # quit
    assert child.receive() is None  # its pipe closed: it exited
    assert child.exit_status() == "exit code 0"
    child.end()


def test_a_child_silent_past_its_deadline_is_killed_with_every_bot_it_started(tmp_path):
    """A child that a bot stopped (SIGSTOP) cannot kill its bot: the arena
    kills the child at its deadline, and the bot and the bot's own child,
    which came back to the arena when the child died; a child beside it
    answers all the same."""
    started = time.monotonic()
    answers = supervise(_stop_unless_fine, {"sly": ("sly", tmp_path / "pids"), "fine": ("fine", tmp_path / "none")},
                        kind="test", doing="testing it", at_once=2, deadline_s=2)
    assert 2 <= time.monotonic() - started < 2 + 5
    assert answers == {
        "sly": Lost("the arena's process testing it was silent for more than 2 s and was killed "
                    "(a bot that stops its parent with SIGSTOP does that)"),
        "fine": b"FINE",
    }
    bot, its_child = (int(pid) for pid in (tmp_path / "pids").read_text().split())
    assert not running(bot) and not running(its_child)


def _stop_unless_fine(name: str, pids: Path) -> bytes:
    if name == "fine":
        return _upper(name)
    _start_a_bot(pids)
    os.kill(os.getpid(), signal.SIGSTOP)  # what a bot does to its parent when greeted
    return b"never sent"


@pytest.mark.parametrize(("how", "status", "named"), [
    ("SIGKILL", "exit code -9", "killed by signal 9"),
    ("exit", "exit code 3", "exit code 3"),
])
def test_a_child_that_dies_is_named_at_once_and_its_bots_killed(tmp_path, how, status, named):
    started = time.monotonic()
    plain = supervise(_die_after_starting_a_bot, {"x": (tmp_path / "pids", how)}, kind="test", doing="testing it",
                      at_once=1, deadline_s=60)
    assert time.monotonic() - started < 10  # not the deadline
    assert plain == {"x": Lost(f"the arena's process testing it died ({status}; a bot that kills its parent does that)")}
    bot, its_child = (int(pid) for pid in (tmp_path / "pids").read_text().split())
    assert not running(bot) and not running(its_child)
    signals = supervise(_die_after_starting_a_bot, {"x": (tmp_path / "pids", how)}, kind="test", doing="testing it",
                        at_once=1, deadline_s=60, signal_names=True)
    assert signals["x"] == Lost(f"the arena's process testing it died ({named}; a bot that kills its parent does that)")


def test_the_arena_s_write_error_reaches_the_caller_and_ends_the_other_children():
    started = time.monotonic()
    with pytest.raises(ArenaWriteError, match=r"^cannot open log file '/full/disk\.log': No space left on device$"):
        supervise(lambda name: _cannot_write() if name == "bad" else _slow(), {"slow": ("slow",), "bad": ("bad",)},
                  kind="test", doing="testing it", at_once=2, deadline_s=60)
    assert time.monotonic() - started < 10  # the slow one was ended, not waited for
    # (no_leaked_processes: it is gone)


def test_a_bug_in_a_child_is_its_whole_traceback():
    with pytest.raises(RuntimeError, match=r"(?s)^arena-test-x failed:\nTraceback .*ZeroDivisionError"):
        supervise(lambda: 1 // 0, {"x": ()}, kind="test", doing="testing it", at_once=1, deadline_s=30)


# -- the one deadline -----------------------------------------------------------------


def test_the_deadline_adds_every_term():
    clock = TimeControl(initial_ms=5000, increment_ms=100)
    # 2 starts of 3 s + 2 s quit; 3 games of two 5 s clocks and 40 plies of 0.1 s + 0.05 s; 4 notices of 5 s; 30 s
    assert child_deadline_s(starts=2, startup_timeout_s=3, quit_grace_s=2, games=3, plies=40, time_control=clock,
                            margin_ms=50, notices=4, slack_s=30) == pytest.approx(2 * 5 + 3 * (10 + 40 * 0.15) + 20 + 30)
    per_move = TimeControl(per_move_ms=500)
    # no banked time: 2 games of 10 plies of 0.5 s + 0.05 s
    assert child_deadline_s(starts=1, startup_timeout_s=3, quit_grace_s=2, games=2, plies=10, time_control=per_move,
                            margin_ms=50, notices=0, slack_s=10) == pytest.approx(5 + 2 * 10 * 0.55 + 10)
    assert child_deadline_s(starts=1, startup_timeout_s=3, quit_grace_s=2, games=0, plies=0, time_control=per_move,
                            margin_ms=50, notices=0, slack_s=10) == pytest.approx(15)


def config_with(time_control: str):
    return tournament(ROOT, ("a", "b"), time_control=time_control, startup_timeout=3, time_margin=0.1)


def test_the_workers_the_pre_flight_and_the_check_take_their_terms_of_the_one_deadline():
    clock, per_move = config_with("1+0"), config_with("move 0.5")
    # a game: 2 starts of 3 s and 2 quits of 2 s; OXONO's 32 plies; 4 notices of 5 s; 30 s
    assert game_deadline_s(clock) == pytest.approx(2 * (3 + 2) + 2 * 1 + 32 * 0.1 + 4 * 5 + 30)
    assert game_deadline_s(per_move) == pytest.approx(2 * (3 + 2) + 32 * 0.6 + 4 * 5 + 30)
    # the pre-flight: one start and its quit; 10 s
    assert preflight_deadline_s(clock) == pytest.approx(3 + 2 + 10)
    # a check of 5 games: 4 starts (a restart after each of 3 forfeits); games of 100 moves a player; 30 s
    assert check_deadline_s(clock, 5) == pytest.approx(4 * (3 + 2) + 5 * (2 * 1 + 200 * 0.1) + 30)
    assert check_deadline_s(per_move, 5) == pytest.approx(4 * (3 + 2) + 5 * 200 * 0.6 + 30)
