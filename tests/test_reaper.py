"""The arena-wide reaper: every live bot killed at once, and the process tree
it reads from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from arena.bot.process import BotProcess, ProcessExited
from arena.base.processes import children, proc_stat
from arena.bot.reaper import kill_all
from builders import bot_cmd
from conftest import group_members, soon

pytestmark = [
    pytest.mark.usefixtures("no_leaked_processes"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc"),
]


def test_kill_all_kills_every_live_bot():
    bots = [BotProcess(bot_cmd("hang")) for _ in range(3)]
    for bot in bots:
        bot.start()
    stopped = BotProcess(bot_cmd("echo_bot"))
    stopped.start()
    stopped.stop()
    kill_all()
    for bot in bots:
        assert not bot.alive and bot.returncode == -signal.SIGKILL
        assert group_members(bot.pid) == set()
        # The owner still closes its pipes; reading first reports the death.
        with pytest.raises(ProcessExited):
            bot.read_line(soon())
        bot.kill()
    assert stopped.returncode == 0


def test_children_and_stat_come_from_proc():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in children(os.getpid())
        assert proc_stat(child.pid)[1] == str(os.getpid())  # the fields after the name: state, ppid, ...
    finally:
        child.kill()
        child.wait()
    assert child.pid not in children(os.getpid())
    assert proc_stat(child.pid) is None
