"""Stop signals as a flag (arena.base.stop_signals): each case in a Python
process of its own, since it installs process-wide signal handlers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from builders import ROOT

PRELUDE = """
import os, select, signal
from arena.base.stop_signals import Stopped, as_flag, check, install, wakeup_fd, woken
install()
def stop(signum=signal.SIGTERM):
    os.kill(os.getpid(), signum)
"""


def run_case(body: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_under_the_flag_a_stop_signal_raises_nothing_where_it_lands_and_wakes_a_wait(signum):
    done = run_case(f"""
        try:
            with as_flag():
                stop(signal.{signum})  # the handler runs here: nothing is raised
                print("the code it landed in went on")
                assert select.select([wakeup_fd()], [], [], 5)[0] == [wakeup_fd()]
                woken()
                print("not stopped at the safe point")
        except Stopped:
            print("stopped at the safe point")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the code it landed in went on\nstopped at the safe point\n"


def test_a_stop_no_loop_saw_is_raised_on_leaving_the_flag():
    done = run_case("""
        try:
            with as_flag():
                stop()
                print("played on to the end")
        except Stopped:
            print("then stopped")
    """)
    assert done.stdout == "played on to the end\nthen stopped\n", done.stderr


def test_another_signal_byte_wakes_the_wait_without_stopping():
    done = run_case("""
        signal.signal(signal.SIGUSR1, lambda *_: None)
        with as_flag():
            stop(signal.SIGUSR1)
            assert select.select([wakeup_fd()], [], [], 5)[0]
            woken()  # no stop: nothing raised, and the pipe is empty again
            assert select.select([wakeup_fd()], [], [], 0)[0] == []
        print("went on")
    """)
    assert done.stdout == "went on\n", done.stderr


def test_outside_the_flag_the_first_stop_is_a_keyboard_interrupt_and_a_second_is_ignored():
    done = run_case("""
        try:
            stop()
            for _ in range(1000):
                pass
        except KeyboardInterrupt as exc:
            print("interrupted", type(exc).__name__)
        stop(signal.SIGINT)  # a second Ctrl-C while the arena stops
        check()  # and outside the flag, the cleanup is not stopped again
        print("cleaned up")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "interrupted KeyboardInterrupt\ncleaned up\n"


def test_a_signal_ignored_when_the_arena_starts_stays_ignored():
    done = run_case("""
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        install()
        with as_flag():
            stop(signal.SIGHUP)
        print("still running")
    """)
    assert done.stdout == "still running\n", done.stderr
